"""Part B experiments: bad input, the preprocessing, the paired statistics, the reference baselines,
a tiny end-to-end Table-2 cell group, and the quick reproduction writing only where it is told to."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from xai_geometry.experiments import part_b as E
from xai_geometry.experiments import part_b_data as PD
from xai_geometry.runner import UsageError


def test_bad_keys_kinds_and_methods():
    with pytest.raises(ValueError, match="key must be one of"):
        PD.binarized("nope")
    with pytest.raises(ValueError, match="kind must be"):
        PD.select_model("tree", np.zeros((10, 2)), np.r_[np.zeros(5), np.ones(5)])
    with pytest.raises(ValueError, match="method must be"):
        E.relevance("saliency", None, np.zeros((1, 2)), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="variant must be one of"):
        E.relevance("kernel_shap:nope", None, np.zeros((1, 2)), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="η must be a number"):
        E.relevance("lrp_eta=high", None, np.zeros((1, 2)), np.zeros((3, 2)))


def test_unknown_data_set_is_a_usage_error():
    with pytest.raises(UsageError, match=r"unknown data set\(s\) 'nope' for reproduce part-b"):
        E.reproduce("/tmp/never_written", datasets=["nope"], progress=False)


def test_the_command_line_names_stay_importable_from_part_b():
    assert E.TABLE2_DATASETS is PD.TABLE2_DATASETS and callable(E.reproduce)


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
    r = E.table2_task("real_estate", "svm", quick=True, max_rows=200, cv_rows=100,
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
