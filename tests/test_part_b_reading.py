"""Part B's reading of Table 2: the verdict on LRP by one rule for both models (`verdict_table`), on hand-made
tables whose answers are known, and on the committed per-point AUFCs against the committed tables."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from xai_geometry.experiments import part_b as E
from xai_geometry.neuralized.lrp import heuristic_eta_svm

FIGURES = Path(__file__).resolve().parents[1] / "figures"
COLUMNS = ["rank", "wins", "ties", "losses", *E.VERDICT_RULES]


def _rows(name, model, shifts, seed=0, n=40, noise=0.02):
    "n points of one (data set, model, split): method m = a shared base + shifts[m] + noise (none when noise = 0)."
    r = np.random.default_rng([seed, len(name)])
    base = r.uniform(0.2, 0.6, n)
    return pd.DataFrame(dict(dataset=name, model=model, seed=seed, point=np.arange(n),
                             **{m: base + s + noise * r.normal(size=n) for m, s in shifts.items()}))


def _verdict(P):
    return E.verdict_table(P).set_index(["dataset", "split"])


def test_significant_cases_both_models():
    "Clearly best, second with one method significantly ahead, third behind two: the same answers for SVM and k-NN."
    for model, extra in (("knn", "shapley_sampling"), ("svm", "integrated_gradients")):
        P = pd.concat([_rows("best", model, dict(lrp=-0.2, occlusion=0, kernel_shap=0, lime=0, **{extra: 0})),
                       _rows("second", model, dict(lrp=0, occlusion=-0.1, kernel_shap=0.1, lime=0.1, **{extra: 0.2})),
                       _rows("third", model, dict(lrp=0, occlusion=-0.1, kernel_shap=-0.1, lime=0.1, **{extra: 0.1}))])
        V = _verdict(P).xs("0", level="split")
        assert V.loc["best", COLUMNS].tolist() == [1, 4, 0, 0, True, True, True], model
        assert V.loc["second", COLUMNS].tolist() == [2, 3, 0, 1, True, True, True], model
        assert V.loc["third", COLUMNS].tolist() == [3, 2, 0, 2, False, False, False], model
        assert (V.n_methods == 5).all() and (V.n_points == 40).all()


def test_a_tie_is_top_two_by_rank_but_not_significant():
    "Every method equal to LRP: rank 1 by convention (a tie shares the better rank), no win, not refuted."
    for model in ("svm", "knn"):
        P = _rows("tie", model, dict(lrp=0, occlusion=0, kernel_shap=0, lime=0), noise=0.0)
        v = _verdict(P).loc[("tie", "0")]
        assert [v[c] for c in COLUMNS] == [1, 0, 3, 0, True, False, True]


def test_noise_without_effect_is_a_tie_not_a_win():
    "A small mean advantage far from significance counts by rank, not by the tests."
    P = _rows("small", "knn", dict(lrp=-0.002, occlusion=0, kernel_shap=0, lime=0), noise=0.1, n=30)
    v = _verdict(P).loc[("small", "0")]
    assert v["wins"] == 0 and not v["significantly_top2"] and v["beaten_by_at_most_one"]


def test_pooling_and_counts():
    "Pooled over splits = one paired sample of all points; a set with one split pools to it; counts per model and split."
    P = pd.concat([_rows("a", "svm", dict(lrp=-0.05, occlusion=0, lime=0), seed=s, noise=0.2) for s in (0, 1, 2)]
                  + [_rows("img", "svm", dict(lrp=-0.3, occlusion=0, lime=0))])
    V = _verdict(P)
    assert V.loc[("a", "pooled"), "n_points"] == 120 and V.loc[("img", "pooled"), "n_points"] == 40
    one = V.loc[("img", "0")].drop("split", errors="ignore")
    assert V.loc[("img", "pooled"), COLUMNS].tolist() == one[COLUMNS].tolist()
    D = E.paired_differences(P, "lrp", by=("dataset", "model"))
    assert V.loc[("a", "pooled"), "wins"] == int((D[D.dataset == "a"].outcome == "win").sum())
    C = E.verdict_counts(E.verdict_table(P)).set_index(["model", "split"])
    assert C.loc[("svm", "pooled"), "n_sets"] == 2 and C.loc[("svm", "1"), "n_sets"] == 1
    assert C.loc[("svm", "pooled"), "top2"] == 2


def test_the_svm_statement_and_the_verdict_share_the_rule():
    "claim_counts' SVM counts are verdict_table's top2 and significantly_top2 (no lenient count for one model only)."
    P = pd.concat([_rows("second", "svm", dict(lrp=0, occlusion=-0.1, kernel_shap=0.1, lime=0.1, sensitivity=0.2)),
                   _rows("tie", "svm", dict(lrp=0, occlusion=0, kernel_shap=0, lime=0, sensitivity=0), noise=0.0)])
    C = E.claim_counts(P).set_index("claim").loc["svm_lrp_top2"]
    assert (C.raw, C.significant, C.sets_significant) == (2, 1, "second")


@pytest.fixture(scope="module")
def committed():
    P = pd.read_csv(FIGURES / "part_b_table2_points.csv.gz")
    return P, E.verdict_table(P)


def test_the_committed_verdicts_are_this_function_of_the_committed_points(committed):
    P, V = committed
    rec = pd.read_csv(FIGURES / "part_b_table2_verdicts.csv", dtype={"split": str})
    pd.testing.assert_frame_equal(rec, V, check_exact=False, rtol=1e-4)
    # the paired tests behind the verdicts are the committed pairs' outcomes
    D = pd.read_csv(FIGURES / "part_b_table2_pairs.csv", dtype={"seeds": str})
    D = D[D.method.isin(E.SVM_METHODS + E.KNN_METHODS) & (D.method != "lrp")]
    D = D[[m in E.RANKED[mo] for m, mo in zip(D.method, D.model)]]
    n = D.groupby(["dataset", "model", "seeds"]).outcome.value_counts().unstack(fill_value=0)
    Vi = V.set_index(["dataset", "model", "split"])
    for key, row in n.iterrows():
        assert Vi.loc[key, ["wins", "ties", "losses"]].tolist() == [row.get("win", 0), row.get("tie", 0), row.get("loss", 0)], key
    # the ranks are Table 2's
    T = pd.read_csv(FIGURES / "part_b_table2.csv")
    t = T[(T.method == "lrp")].assign(split=lambda d: d.seed.astype(str)).set_index(["dataset", "model", "split"])["rank"]
    assert (Vi.loc[t.index, "rank"] == t.astype(int)).all()


def test_the_committed_claims_table_is_rederived(committed):
    "part_b_table2_claims.csv is what reproduce writes from the committed per-point AUFCs."
    P, _ = committed
    rec = pd.read_csv(FIGURES / "part_b_table2_claims.csv", dtype={"seeds": str})
    new = E._claims_all(P[P.dataset.isin(E.PAPER_SETS)])
    for c in ("raw", "significant", "n_sets", "paper"):
        assert rec[c].tolist() == new[c].tolist(), c
    assert rec.sets_significant.fillna("").tolist() == new.sets_significant.tolist()


def _rederived(name, df, **kw):
    "The committed table `name` equals `df` (an empty list of data sets is an empty field, read back as NaN)."
    rec = pd.read_csv(FIGURES / name, **kw)
    for c in df.columns:
        if df[c].dtype == object or pd.api.types.is_string_dtype(df[c]): rec[c] = rec[c].fillna("").astype(str); df[c] = df[c].astype(str)
    pd.testing.assert_frame_equal(rec, df, check_exact=False, rtol=1e-9, check_dtype=False)
    return rec


def test_the_counts_on_the_committed_tables(committed):
    """The counts the notebook reports, over the eleven sets: the verdict's counts, the baseline settings' "as in Table 2"
    rows and the η settings' Table-1 rows are one computation; the committed settings tables are rederived."""
    P, V = committed
    C = E.verdict_counts(V[V.dataset.isin(E.PAPER_SETS)]).set_index(["model", "split"])
    assert set(C.n_sets) == {9, 11} and "wine_quality_red" not in " ".join(C.sets_beaten_by_at_most_one)
    BS = _rederived("part_b_baseline_settings.csv", E.baseline_settings(P), dtype={"split": str})
    ES = _rederived("part_b_eta_settings.csv", E.eta_settings(P), dtype={"split": str})
    for Q in (BS[BS.setting == "as in Table 2"], ES[ES.setting == ES.setting.iloc[0]]):
        Q = Q.set_index(["model", "split"])
        for rule in E.VERDICT_RULES:
            assert (Q[rule].sort_index() == C[rule].sort_index()).all(), rule
    PK = pd.read_csv(FIGURES / "part_b_knn_sweep_points.csv.gz")
    _rederived("part_b_knn_sweep_counts.csv", E.knn_sweep_counts(PK, P), dtype={"k": str, "split": str})


def test_the_public_code_eta_column(committed):
    """LRP-SVM at η = 0, β = γ is γ⁻¹ × gradient × input on g (the same flipping order). The column `lrp@code` (the η of
    the authors' public code) equals `lrp` (the caption's) on every row where the two schedules give the same η."""
    from sklearn.svm import SVC
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 4)); y = (X[:, 0] - X[:, 2] > 0).astype(int)
    for g in (0.12, 0.3):
        svc = SVC(gamma=g, C=10.0).fit(X, y)
        np.testing.assert_allclose(E.gradient_x_input_g(svc, X[:10]), g * E.lrp(svc, X[:10], eta=0.0), rtol=1e-12)
        assert np.array_equal(np.argsort(-E.gradient_x_input_g(svc, X[:10]), 1), np.argsort(-E.lrp(svc, X[:10], eta=0.0), 1))
    P, _ = committed
    T = pd.read_csv(FIGURES / "part_b_table2.csv")
    t = T[(T.model == "svm") & (T.method == "lrp")]
    gam = dict(zip(zip(t.dataset, t.seed), t.params.str.extract(r"gamma=([\d.e+-]+)")[0].astype(float)))
    S = P[P.model == "svm"]
    same = np.array([heuristic_eta_svm(gam[(d, s)]) == E.eta_public_code(gam[(d, s)]) for d, s in zip(S.dataset, S.seed)])
    assert same.any()
    np.testing.assert_array_equal(S["lrp@code"].to_numpy()[same], S["lrp"].to_numpy()[same])


def test_the_committed_claims_list():
    """figures/part_b_claims.csv is `part_b_claims` of the committed tables: at least 38 claims, each with one of the
    rule's three statuses, its section, evidence and the tables it reads, all of which are committed."""
    from xai_geometry.experiments.part_b_claims import CLAIMS, STATUSES, part_b_claims
    rec = pd.read_csv(FIGURES / "part_b_claims.csv")
    new = part_b_claims(FIGURES)
    pd.testing.assert_frame_equal(rec.fillna(""), new.fillna(""))
    assert len(rec) >= 38 and rec.key.is_unique and set(rec.status) <= set(STATUSES)
    assert (rec.evidence.str.len() > 20).all() and rec.section.str.len().gt(0).all()
    for c in CLAIMS.values():
        assert all((FIGURES / t).is_file() for t in c.tables), c.key
    assert set(rec.source) == {"paper", "package"}


def test_a_claim_reads_only_what_is_there(tmp_path):
    "A claim whose table is missing names it; the registry refuses a second claim under one key."
    from xai_geometry.experiments.part_b_claims import CLAIMS, Tables, claim
    with pytest.raises(FileNotFoundError, match="part_b_runtime.csv"):
        CLAIMS["runtime_knn_30s"].read(Tables(tmp_path))
    with pytest.raises(ValueError, match="registered twice"):
        claim("fig4_informative", "§6.4", "again", ("x.csv",))(lambda t: None)


def test_the_pooling_sweep_is_table_2_at_table_1s_setting():
    "At β = γ and κ = (k − 1)/2 the pooling sweep's per-point AUFC is Table 2's LRP column, on the same points."
    from xai_geometry.experiments.part_b_pooling import pooling_task
    P = pd.read_csv(FIGURES / "part_b_table2_points.csv.gz").query("seed == 0 and dataset == 'real_estate'")
    for model in ("svm", "knn"):
        W = pooling_task("real_estate", model, n_explain=10)
        mine = W[W.table1].set_index("point").aufc
        ref = P[P.model == model].set_index("point").lrp
        np.testing.assert_allclose(mine, ref.loc[mine.index], rtol=1e-4)
        assert W.value.nunique() >= 2 and len(W) == 10 * W.value.nunique()


def test_the_size_series_reading():
    "The linear-cost claim reads the committed size series' slopes against the declared reading, and says which sizes."
    from xai_geometry.experiments.bench_part_b import cost_slope
    from xai_geometry.experiments.claims import WORDS
    from xai_geometry.experiments.part_b_claims import CLAIMS, Tables
    S = pd.read_csv(FIGURES / "part_b_cost_series.csv")
    j = CLAIMS["runtime_linear_cost"].read(Tables(FIGURES))
    assert (j.status == "reproduced") == bool((abs(cost_slope(S) - 1) <= WORDS["linear_cost"].value).all())
    assert "[linear_cost]" in j.evidence and "support vectors" in j.evidence
