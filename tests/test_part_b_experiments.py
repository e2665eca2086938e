"""Part B experiments: bad input, the preprocessing, the paired statistics, the reference baselines,
a tiny end-to-end Table-2 cell group, and the quick reproduction writing only where it is told to."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from xai_geometry.experiments import part_b as E
from xai_geometry.experiments import part_b_data as PD
from xai_geometry.runner import UsageError
from xai_geometry.neuralized.lrp import heuristic_eta_svm


def test_bad_keys_kinds_and_methods():
    with pytest.raises(ValueError, match="key must be one of"):
        PD.binarized("nope")
    with pytest.raises(ValueError, match="kind must be"):
        PD.select_model("tree", np.zeros((10, 2)), np.r_[np.zeros(5), np.ones(5)])
    with pytest.raises(ValueError, match="method must be"):
        E.relevance("saliency", None, np.zeros((1, 2)), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="setting must be one of"):
        E.relevance("kernel_shap:nope", None, np.zeros((1, 2)), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="setting must be one of"):
        E.relevance("lime:nope", None, np.zeros((1, 2)), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="η must be a number"):
        E.relevance("lrp_eta=high", None, np.zeros((1, 2)), np.zeros((3, 2)))


def test_unknown_data_set_is_a_usage_error():
    with pytest.raises(UsageError, match=r"unknown data set\(s\) 'nope' for reproduce part-b"):
        E.reproduce("/tmp/never_written", datasets=["nope"], progress=False)


def test_the_command_line_names_stay_importable_from_part_b():
    assert E.TABLE2_DATASETS is PD.TABLE2_DATASETS and callable(E.reproduce)


def test_the_columns_and_the_verdicts_stay_importable_from_part_b():
    "The method dispatch and the verdicts live in their own modules; part_b re-imports the same objects."
    from xai_geometry.experiments import part_b_methods as PM, part_b_plots, part_b_verdicts as PV
    for name in ("relevance", "method_eta", "lrp", "ETA_SCHEDULES", "SVM_METHODS", "METHOD_LABELS", "KNN_SWEEP_METHODS"):
        assert getattr(E, name) is getattr(PM, name) and name in E.__all__, name
    for name in ("table2_points", "table2_summary", "verdict_table", "baseline_settings", "RANKED", "PAPER_CLAIMS", "_params"):
        assert getattr(E, name) is getattr(PV, name), name
    assert part_b_plots.METHOD_LABELS is PM.METHOD_LABELS


def test_the_labels_of_the_registry_rows_are_the_registry_s():
    from xai_geometry import explainers
    L = explainers.labels()
    assert all(E.METHOD_LABELS[m] == L[m] for m in E.SVM_METHODS + E.KNN_METHODS)
    assert E.METHOD_LABELS["kernel_shap:n100_label"] == L["kernel_shap"] + ", 100 coalitions, label"
    assert E.METHOD_LABELS["lrp_eta=0"] == L["lrp"] + " η=0" and E.METHOD_LABELS["shapley_mean"] == L["shapley"] + " (mean)"


def toy_baseline(model, X, *, background, random_state, **options):
    "A baseline for the registry test: the same relevance for every feature, with the call recorded."
    toy_baseline.calls.append(dict(model=model, X=X, background=background, random_state=random_state, options=options))
    return np.full(np.shape(X), options.get("value", 1.0))


toy_baseline.calls = []


def test_a_baseline_added_to_the_registry_is_a_column_of_part_b():
    "One class of the registry: `relevance` calls the class's function with the training split as background."
    from xai_geometry.explainers import REGISTRY, register
    from xai_geometry.explainers.agnostic import ModelAgnostic
    from xai_geometry.experiments.part_b_methods import column_label

    class Toy(ModelAgnostic):
        name, label, colour, cost, reference = "toy", "Toy", "tab:red", "one call", "none"
        function = staticmethod(toy_baseline)

    register(Toy)
    try:
        X, X_train = np.arange(6.0).reshape(3, 2), np.ones((5, 2))
        toy_baseline.calls.clear()
        R = E.relevance("toy", "a model", X, X_train, random_state=7, value=2.5)
        np.testing.assert_array_equal(R, np.full((3, 2), 2.5))
        (call,) = toy_baseline.calls
        assert call["model"] == "a model" and call["X"] is X and call["background"] is X_train
        assert call["random_state"] == 7 and call["options"] == {"value": 2.5}
        assert column_label("toy") == "Toy"
    finally:
        del REGISTRY["toy"]
    with pytest.raises(ValueError, match="method must be"):
        E.relevance("toy", "a model", X, X_train)


def test_ordinal_codes_follow_the_given_order():
    X = pd.DataFrame({"safety": pd.Categorical(["low", "high", "med"]), "n": [1, 2, 3]})
    out = PD._ordinal(X, {"safety": ["low", "med", "high"]})
    np.testing.assert_array_equal(out["safety"], [0, 2, 1])
    with pytest.raises(ValueError, match="outside the order"):
        PD._ordinal(X, {"safety": ["low", "med"]})


def test_split_scale_unit_median_distance_and_bad_input():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(300, 5)) * [1, 10, 100, 1, 1], rng.integers(0, 2, 300)
    Xtr, Xte, ytr, yte = PD.split_scale(X, y, max_rows=250)
    assert len(Xtr) == 200 and len(Xte) == 50
    from scipy.spatial.distance import pdist
    np.testing.assert_allclose(np.median(pdist(Xtr)), 1.0, rtol=1e-12)
    with pytest.raises(ValueError, match="X has 300 rows but y has 299"):
        PD.split_scale(X, y[:-1])
    with pytest.raises(ValueError, match="test_size"):
        PD.split_scale(X, y, test_size=1.5)


def test_budget_follows_the_paper_on_tabular_sets():
    assert E.budget(11, 320, seed=0)["n_explain"] == 300 and E.budget(11, 320, seed=2)["n_explain"] == 100
    assert E.budget(16, 104)["n_explain"] == 104 and E.budget(16, 104)["n_draws"] == 50
    assert E.budget(784, 300)["n_explain"] == 100
    q = E.budget(16, 104, quick=True)  # the quick run: the first block of the same run
    assert q["n_explain"] == E.BLOCK and {k: v for k, v in q.items() if k != "n_explain"} == \
        {k: v for k, v in E.budget(16, 104).items() if k != "n_explain"}


def test_explained_points_of_a_short_run_are_the_first_of_a_long_one():
    long, short = E._explained_points(104, 104, 3), E._explained_points(104, 10, 3)
    assert sorted(long.tolist()) == list(range(104)) and short.tolist() == long[:10].tolist()
    assert E.block_seed(0, 1) != E.block_seed(1, 0) and E.block_seed(2, 5) == E.block_seed(2, 5)


def test_a_block_does_not_depend_on_the_points_after_it():
    "AUFCs of the first block are the same whether 10 or 20 points are explained (per-block random streams)."
    r10 = E.table2_task("real_estate", "knn", params={"n_neighbors": 5}, n_explain=10, methods=("lrp", "occlusion", "lrp_eta=0"))
    r20 = E.table2_task("real_estate", "knn", params={"n_neighbors": 5}, n_explain=20, methods=("lrp", "occlusion", "lrp_eta=0"))
    assert r20["points"][:10].tolist() == r10["points"].tolist()
    for m in r10["aufc"]:
        np.testing.assert_array_equal(r10["aufc"][m], r20["aufc"][m][:10])
    # an η column equal to another shares its relevance and its curves
    r = E.table2_task("real_estate", "svm", params={"gamma": 1.0, "C": 1.0}, n_explain=10, methods=("lrp", "lrp@code"))
    assert heuristic_eta_svm(1.0) == E.eta_public_code(1.0) == 0.4
    np.testing.assert_array_equal(r["aufc"]["lrp"], r["aufc"]["lrp@code"])


def test_eta_schedules_differ_where_the_public_code_clips():
    assert [E.eta_public_code(g) for g in (0.01, 0.1, 0.3, 1, 10, 100)] == [0.0, 0.0, 0.0, 0.4, 0.8, 1.0]
    np.testing.assert_allclose([heuristic_eta_svm(g) for g in (0.01, 0.1, 0.3, 1, 10, 100)],
                               [0.0, 0.0, 0.4 * np.log10(0.3) + 0.4, 0.4, 0.8, 1.0])
    with pytest.raises(ValueError, match="schedule must be one of"):
        E.method_eta("lrp@other", __import__("sklearn.svm", fromlist=["SVC"]).SVC(gamma=1.0))


def test_paired_differences_is_the_paired_t_test():
    rng = np.random.default_rng(1)
    a = rng.uniform(size=80); b = a + rng.normal(0.03, 0.05, 80)
    P = pd.DataFrame(dict(dataset="x", model="knn", seed=0, point=np.arange(80), lrp=a, occlusion=b))
    D = E.paired_differences(P, "lrp", ("occlusion",))
    ref = stats.ttest_rel(a, b)
    np.testing.assert_allclose([D.t.iloc[0], D.p.iloc[0]], [ref.statistic, ref.pvalue], rtol=1e-10)
    assert D.outcome.iloc[0] == "win" and D.ci_high.iloc[0] < 0
    P["lrp_eta=0"] = np.nan  # a column the group does not have: no comparison, no error
    assert E.paired_differences(P, "lrp_eta=0", ("occlusion",)).empty


def test_claim_counts_raw_and_significant():
    rng = np.random.default_rng(2)

    def one(name, shift):
        base = rng.uniform(0.3, 0.6, 60)
        return pd.DataFrame(dict(dataset=name, model="knn", seed=0, point=np.arange(60), lrp=base + shift,
                                 occlusion=base, lime=base, kernel_shap=base, shapley_sampling=base))
    e = rng.normal(0, 0.1, 30)
    P = pd.concat([one("a", -0.2), one("b", np.r_[e, -e] - 0.002), one("c", 0.1)])
    C = E.claim_counts(P)
    assert (C.raw.iloc[0], C.significant.iloc[0]) == (2, 1)
    assert C.sets_significant.iloc[0] == "a"


def test_tiny_table2_cell_group():
    r = E.table2_task("real_estate", "svm", quick=True, max_rows=200, cv_rows=100, grid={"gamma": (1, 3), "C": (1, 100)},
                      methods=("lrp", "gradient_x_input", "gradient_x_input_g"))
    T = E.table2_frame([r])
    assert set(T.method) == {"lrp", "gradient_x_input", "gradient_x_input_g"}
    assert T.loc[T.method == "gradient_x_input_g", "rank"].isna().all()
    assert np.all((T.aufc >= -1) & (T.aufc <= 1))
    P = E.table2_points([r])
    assert len(P) == r["n_explained"] and P.point.is_unique
    np.testing.assert_allclose(P.groupby("model").lrp.mean().iloc[0], T[T.method == "lrp"].aufc.iloc[0])
    S = E.table2_summary(T)
    assert S.lrp_rank.iloc[0] in (1, 2)


def _svm(d, seed=0):
    from sklearn.datasets import make_classification
    from sklearn.svm import SVC
    X, y = make_classification(200, d, n_informative=min(d, 4), n_redundant=0, random_state=seed)
    return X, SVC(gamma=0.3, C=3).fit(X, y)


def test_kernel_shap_reference_with_the_mean_equals_our_exact_shapley_values():
    pytest.importorskip("shap", reason="shap (the compare extra) is the reference")
    X, m = _svm(6)
    ref = E.kernel_shap_reference(m, X[:4], X, background="mean")
    np.testing.assert_allclose(ref, E.shapley_mean_reference(m, X[:4], X), rtol=1e-7, atol=1e-9)
    km = E.kernel_shap_reference(m, X[:4], X)  # 10 k-means centres: efficiency against their weighted mean output
    assert km.shape == (4, 6) and np.all(np.isfinite(km))
    with pytest.raises(ValueError, match="background must be"):
        E.kernel_shap_reference(m, X[:1], X, background="zeros")


def test_lime_reference_keeps_every_feature_and_is_reproducible():
    pytest.importorskip("lime", reason="lime (the compare extra) is the reference")
    X, m = _svm(12, seed=3)
    R1 = E.lime_reference(m, X[:3], X, random_state=5)
    R2 = E.lime_reference(m, X[:3], X, random_state=5)
    assert R1.shape == (3, 12) and np.all(R1 != 0)
    np.testing.assert_array_equal(R1, R2)


@pytest.mark.heavy   # minutes: the quick run of part B (the heavy step also runs it through the command line against the record)
def test_quick_reproduction_writes_only_into_out_dir(tmp_path):
    pytest.importorskip("shap"); pytest.importorskip("lime")
    paths = E.reproduce(tmp_path / "out", quick=True, datasets=["real_estate"], cache_dir=tmp_path / "cache", progress=False)
    names = {p.name for p in paths}
    assert {"part_b_table2_quick.csv", "part_b_table2_claims_quick.csv", "part_b_knn_sweep_quick.csv",
            "part_b_use_case_wine_verdicts_quick.csv", "part_b_use_case_dipoles_mae_quick.csv"} <= names
    assert all(p.parent == tmp_path / "out" and p.is_file() for p in paths)
    T = pd.read_csv(tmp_path / "out" / "part_b_table2_quick.csv")
    assert set(T.dataset) == {"real_estate"} and set(T.model) == {"svm", "knn"}
    assert {"kernel_shap", "lime", "shapley_mean"} <= set(T.method)
    M = pd.read_csv(tmp_path / "out" / "part_b_use_case_dipoles_mae_quick.csv")
    assert set(M.source) == {"qm9_subset"}


def test_kernel_shap_decision_and_label_in_one_pass_equal_two_passes():
    pytest.importorskip("shap", reason="shap (the compare extra) is the reference")
    for d in (6, 12):  # every coalition enumerated; coalitions sampled
        X, m = _svm(d, seed=d)
        both = E.kernel_shap_reference(m, X[:3], X, output="both", random_state=2)
        np.testing.assert_allclose(both[0], E.kernel_shap_reference(m, X[:3], X, random_state=2), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(both[1], E.kernel_shap_reference(m, X[:3], X, output="label", random_state=2), rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="output must be"):
        E.kernel_shap_reference(m, X[:1], X, output="proba")


def test_the_verdict_under_another_baseline_setting():
    "Replacing Table 2's KernelSHAP column by a weaker setting moves LRP from third to second; the other settings leave it third."
    rng = np.random.default_rng(0)
    base = rng.uniform(0.2, 0.6, 40)
    noise = lambda: rng.normal(0, 0.005, 40)
    cols = dict(lrp=base, occlusion=base + 0.3 + noise(), shapley_sampling=base - 0.1 + noise(),
                kernel_shap=base - 0.2 + noise(), lime=base + 0.2 + noise())
    cols.update({m: cols["kernel_shap"] for m in E.AXIS_METHODS if m.startswith("kernel_shap:")})
    cols["kernel_shap:mean_label"] = base + 0.4 + noise()
    cols["lime:n100"] = cols["lime"]
    cols.update({m + E.LOCAL: cols[m] for m in E.KNN_METHODS})  # local in-painting: the same AUFCs, the same verdict
    P = pd.DataFrame(dict(dataset="diabetes", model="knn", seed=0, point=np.arange(40), **cols))
    S = E.baseline_settings(P, sets=("diabetes",))
    got = S[S.split == "0"].set_index("setting").top2
    assert got["Kernel SHAP, mean reference, label"] == 1
    assert got.drop("Kernel SHAP, mean reference, label").eq(0).all()
    assert set(S.setting) == set(E.BASELINE_SETTINGS)
    assert got["local in-painting (every column)"] == got["as in Table 2"]
    # points without the local columns: that setting is left out, the others stay
    S2 = E.baseline_settings(P.drop(columns=[m + E.LOCAL for m in E.KNN_METHODS]), sets=("diabetes",))
    assert set(S2.setting) == set(E.BASELINE_SETTINGS) - {"local in-painting (every column)"}
