"""Bad and extreme input for part C: zero variance, |rho| -> 1, tiny classes, NaN, one feature, d = 1000."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from xai_geometry.gnb import GeneralizedNaiveBayes, GNBStructure
from xai_geometry.gnb.information import conditional_mutual_information, class_mutual_information
from xai_geometry.gnb.structure import learn_structure, maximum_spanning_tree

DEPS = ["gaussian", "gaussian_copula", "nonparametric"]


def _data(n=120, d=4, seed=0, K=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) @ rng.normal(size=(d, d))
    y = rng.integers(0, K, n)
    return X, y


@pytest.mark.parametrize("dep", DEPS)
def test_zero_variance_feature(dep):
    X, y = _data()
    X[:, 2] = 3.0  # constant everywhere
    X[y == 0, 1] = -1.0  # constant within one class only
    m = GeneralizedNaiveBayes(dependence=dep, random_state=0).fit(X, y)
    P = m.predict_proba(X)
    assert np.isfinite(P).all() and np.allclose(P.sum(1), 1)
    assert np.isfinite(m.edge_weights_).all() and np.isfinite(m.weight_)
    m.structure_.check_model()


@pytest.mark.parametrize("dep", DEPS)
def test_perfect_correlation_is_regularized(dep):
    X, y = _data()
    X[:, 1] = 2 * X[:, 0] + 1  # rho = 1 in every class
    X[:, 3] = -X[:, 0]  # rho = -1
    W = conditional_mutual_information(X, y, dependence=dep, random_state=0)
    assert np.isfinite(W).all()
    if dep != "nonparametric":  # -1/2 log(1 - rho_max^2) with rho_max = 1 - 1e-6
        assert W[0, 1] == pytest.approx(-0.5 * np.log(1 - (1 - 1e-6) ** 2), rel=1e-6)
    m = GeneralizedNaiveBayes(dependence=dep, random_state=0).fit(X, y)
    assert np.isfinite(m.predict_log_proba(X)).all()
    assert (0, 1) in m.structure_.edges  # the strongest dependence is in the tree


@pytest.mark.parametrize("dep", DEPS)
@pytest.mark.parametrize("size", [1, 2])
def test_classes_with_fewer_than_three_rows(dep, size):
    X, y = _data(n=60)
    y[:] = 0
    y[:size] = 1
    m = GeneralizedNaiveBayes(dependence=dep, random_state=0).fit(X, y)
    P = m.predict_proba(X)
    assert np.isfinite(P).all() and np.allclose(P.sum(1), 1)
    # a tiny class contributes no within-class dependence: weights are the big class's, scaled by its prior
    W_big = conditional_mutual_information(X[y == 0], y[y == 0], dependence=dep, random_state=0)
    if dep != "nonparametric":
        np.testing.assert_allclose(m.edge_weights_, (y == 0).mean() * W_big, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_is_a_clear_error(bad):
    X, y = _data()
    X[5, 2] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        GeneralizedNaiveBayes().fit(X, y)
    m = GeneralizedNaiveBayes().fit(*_data())
    with pytest.raises(ValueError, match="NaN|infinity"):
        m.predict(X)
    with pytest.raises(ValueError, match=r"column\(s\) \[2\]"):
        conditional_mutual_information(X, y)


def test_nan_in_dataframe_names_input():
    X, y = _data()
    df = pd.DataFrame(X, columns=list("abcd"))
    df.iloc[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        GeneralizedNaiveBayes().fit(df, y)


@pytest.mark.parametrize("dep", DEPS)
def test_single_feature_is_naive_bayes(dep):
    X, y = _data(d=1)
    m = GeneralizedNaiveBayes(dependence=dep, random_state=0, reduction="f1").fit(X, y)
    assert m.structure_.edges == [] and m.structure_.clusters == [(0,)]
    m.structure_.check_model()
    assert np.allclose(m.predict_proba(X).sum(1), 1)


def test_single_feature_matches_gaussian_nb():
    from sklearn.naive_bayes import GaussianNB
    X, y = _data(d=1)
    np.testing.assert_allclose(GeneralizedNaiveBayes().fit(X, y).predict_proba(X),
                               GaussianNB().fit(X, y).predict_proba(X), atol=1e-10)


@pytest.mark.parametrize("dep", ["gaussian", "gaussian_copula"])
def test_d_1000_still_works(dep):
    rng = np.random.default_rng(0)
    n, d = 300, 1000
    X = rng.normal(size=(n, d)); X[:, 1::2] += X[:, ::2]  # neighbouring pairs correlated
    y = rng.integers(0, 2, n)
    m = GeneralizedNaiveBayes(dependence=dep).fit(X, y)
    P = m.predict_proba(X)
    assert len(m.structure_.edges) == d - 1 and np.allclose(P.sum(1), 1)
    assert {(i, i + 1) for i in range(0, d, 2)} <= set(m.structure_.edges)


@pytest.mark.parametrize("kw, word", [
    (dict(dependence="kde"), "dependence"), (dict(dependence=3), "dependence"), (dict(k=2), "'k'"), (dict(k=3.5), "'k'"),
    (dict(n_edges=-1), "n_edges"), (dict(n_edges=1.5), "n_edges"), (dict(reduction="auc"), "reduction"),
    (dict(isolated="x"), "isolated"), (dict(validation_fraction=1.5), "validation_fraction"),
    (dict(validation_fraction=0.0), "validation_fraction"), (dict(var_smoothing=0.0), "var_smoothing"),
    (dict(var_smoothing=-1e-9), "var_smoothing"), (dict(var_smoothing=np.nan), "var_smoothing"),
    (dict(max_abs_correlation=1.0), "max_abs_correlation"), (dict(max_abs_correlation=0), "max_abs_correlation"),
    (dict(n_neighbors=0), "n_neighbors"), (dict(random_state="seed"), "random_state"), (dict(n_jobs=1.5), "n_jobs"),
    (dict(k=4, dependence="nonparametric"), "k = 4")])
def test_parameter_errors_name_the_argument(kw, word):
    X, y = _data()
    with pytest.raises(ValueError, match=word):
        GeneralizedNaiveBayes(**kw).fit(X, y)


def test_string_labels_and_dataframe_names():
    X, y = _data(K=3)
    df = pd.DataFrame(X, columns=["w", "x", "y", "z"])
    labels = np.array(["a", "b", "c"])[y]
    m = GeneralizedNaiveBayes(dependence="gaussian_copula").fit(df, labels)
    assert list(m.feature_names_in_) == ["w", "x", "y", "z"]
    assert set(m.predict(df)) <= set("abc")


def test_reduction_with_validation_split_is_deterministic():
    X, y = _data(n=200, d=6)
    a = GeneralizedNaiveBayes(reduction="f1", validation_fraction=0.3, random_state=1).fit(X, y)
    b = GeneralizedNaiveBayes(reduction="f1", validation_fraction=0.3, random_state=1).fit(X, y)
    assert a.structure_.edges == b.structure_.edges and a.reduction_scores_ == b.reduction_scores_


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 9), st.integers(0, 10_000), st.booleans())
def test_kruskal_is_a_maximum_spanning_tree(d, seed, zeros):
    """Property: the csgraph tree weighs at least as much as any tree obtained by swapping one edge."""
    rng = np.random.default_rng(seed)
    W = rng.exponential(size=(d, d)); W = W + W.T
    if zeros:
        W[rng.random((d, d)) < 0.6] = 0; W = np.minimum(W, W.T)
    np.fill_diagonal(W, 0)
    S = learn_structure(W)
    S.check_model()
    assert len(S.edges) == d - 1
    w = S.weight(W)
    # cycle property: for every non-tree edge, it is no heavier than every tree edge on the cycle it closes
    E = set(S.edges)
    for i in range(d):
        for j in range(i + 1, d):
            if (i, j) in E: continue
            for e in list(E):
                T = (E - {e}) | {(i, j)}
                G = GNBStructure.from_edges(d, T)
                try:
                    G.check_model()
                except ValueError:
                    continue
                assert sum(W[a, b] for a, b in T) <= w + 1e-12


def test_tree_matches_networkx_maximum_spanning_tree():
    """Cross-check Kruskal (scipy.sparse.csgraph with positive offset costs) against networkx."""
    nx = pytest.importorskip("networkx", reason="networkx (comes with pgmpy) is the reference")
    for seed in range(20):
        rng = np.random.default_rng(seed)
        d = int(rng.integers(2, 30))
        W = rng.exponential(size=(d, d)); W = W + W.T
        W[rng.random((d, d)) < 0.3] = 0; W = np.minimum(W, W.T); np.fill_diagonal(W, 0)
        G = nx.Graph()
        G.add_weighted_edges_from((i, j, W[i, j]) for i in range(d) for j in range(i + 1, d))
        T = nx.maximum_spanning_tree(G)
        ours = sum(W[i, j] for i, j in maximum_spanning_tree(W))
        assert len(maximum_spanning_tree(W)) == d - 1
        assert ours == pytest.approx(T.size(weight="weight"), rel=1e-12, abs=1e-12)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(DEPS), st.integers(1, 5), st.integers(2, 4))
def test_posteriors_are_normalized(seed, dep, d, K):
    X, y = _data(n=60, d=d, seed=seed, K=K)
    m = GeneralizedNaiveBayes(dependence=dep, random_state=0).fit(X, y)
    rng = np.random.default_rng(seed)
    Xt = rng.normal(scale=5, size=(10, d))  # also far from the data
    P = m.predict_proba(Xt)
    assert np.isfinite(P).all() and np.allclose(P.sum(1), 1)
    assert (m.predict(Xt) == m.classes_[P.argmax(1)]).all()


@pytest.mark.parametrize("dep", DEPS)
@pytest.mark.parametrize("seed", range(6))
def test_validation_split_keeps_every_class(dep, seed):
    """A one-row class may fall in the validation part: it is moved back, no NaN, no warning."""
    import warnings
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3)); y = np.r_[np.zeros(39, int), [1]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = GeneralizedNaiveBayes(dependence=dep, reduction="f1", validation_fraction=0.3, random_state=seed).fit(X, y)
    assert np.isfinite(m.predict_proba(X)).all()


# ---- scale: huge and tiny features are computed in a power-of-two unit scale, never NaN ----------------------------

@pytest.mark.parametrize("dep", DEPS)
@pytest.mark.parametrize("scale", [1e155, 1e300, 1e-300, 2.0 ** -1060])
def test_extreme_scales_give_the_same_classifier(dep, scale):
    X, y = _data(n=150, d=4, seed=4, K=3)
    ref = GeneralizedNaiveBayes(dependence=dep, random_state=0).fit(X, y)
    m = GeneralizedNaiveBayes(dependence=dep, random_state=0).fit(X * scale, y)
    P = m.predict_proba(X * scale)
    assert np.isfinite(P).all() and np.allclose(P.sum(1), 1)
    assert m.structure_.edges == ref.structure_.edges
    atol = 1e-6 if scale > 1e-305 else 1e-2  # subnormal features (2^-1060) keep only ~ 12 bits
    np.testing.assert_allclose(P, ref.predict_proba(X), atol=atol)
    assert np.isfinite(m.predict_joint_log_proba(X * scale)).all()


@pytest.mark.parametrize("factor", [1e100, 1e200])
def test_one_huge_column_among_ordinary_ones(factor):
    X, y = _data(n=150, d=4, seed=5)
    Xh = X.copy(); Xh[:, 1] *= factor
    for dep in DEPS:
        if dep == "gaussian" and factor > 1e150:  # GaussianNB's var_smoothing would be 1e391 x the others' variances
            with pytest.raises(ValueError, match=r"columns \[0, 2, 3\].*var_smoothing"):
                GeneralizedNaiveBayes(dependence=dep).fit(Xh, y)
            continue
        P = GeneralizedNaiveBayes(dependence=dep, random_state=0).fit(Xh, y).predict_proba(Xh)
        assert np.isfinite(P).all() and np.allclose(P.sum(1), 1)


def test_columns_too_far_apart_for_var_smoothing_are_refused():
    X, y = _data(n=60, d=3)
    X[:, 0] *= 1e200; X[:, 2] *= 1e-200  # var_smoothing x the largest variance would be 1e400 times column 2's
    with pytest.raises(ValueError, match=r"columns \[1, 2\].*var_smoothing"):
        GeneralizedNaiveBayes().fit(X, y)


def test_prediction_far_beyond_the_training_range_is_refused():
    X, y = _data()
    m = GeneralizedNaiveBayes().fit(X, y)
    Xt = X[:3].copy(); Xt[0, 2] = 1e200
    with pytest.raises(ValueError, match=r"column\(s\) \[2\]"):
        m.predict_proba(Xt)


@pytest.mark.parametrize("dep", ["gaussian", "gaussian_copula"])
def test_informations_are_scale_free(dep):
    X, y = _data(n=100, d=4, seed=6)
    for scale in (1e155, 1e-300):
        np.testing.assert_allclose(conditional_mutual_information(X * scale, y, dependence=dep), conditional_mutual_information(X, y, dependence=dep),
                                   rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(class_mutual_information(X * scale, y, dependence=dep), class_mutual_information(X, y, dependence=dep),
                                   rtol=1e-6, atol=1e-9)


# ---- infinity, NaN, shapes, labels, DataFrames -----------------------------------------------------------------------

@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_infinity_in_a_dataframe_names_the_column(bad):
    X, y = _data()
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    df.iloc[2, 2] = bad
    with pytest.raises(ValueError, match="infinity in column 'c'"):
        GeneralizedNaiveBayes().fit(df, y)
    m = GeneralizedNaiveBayes().fit(pd.DataFrame(X, columns=["a", "b", "c", "d"]), y)
    with pytest.raises(ValueError, match="infinity in column 'c'"):
        m.predict(df)


def test_dataframe_columns_are_matched_by_name():
    X, y = _data()
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    m = GeneralizedNaiveBayes(dependence="gaussian_copula").fit(df, y)
    np.testing.assert_array_equal(m.predict_proba(df[["d", "b", "a", "c"]]), m.predict_proba(df))
    with pytest.raises(ValueError, match=r"lacks the column\(s\) \['c'\]"): m.predict(df[["a", "b", "d"]])
    with pytest.raises(ValueError, match=r"column\(s\) \['e'\] not seen"): m.predict(df.assign(e=1.0))
    with pytest.raises(ValueError, match="duplicate column names"): m.predict(df.set_axis(["a", "b", "c", "c"], axis=1))
    with pytest.raises(ValueError, match="expecting 4 features"): m.predict(X[:, :3])


@pytest.mark.parametrize("y_bad, word", [("short", "y has"), ("nan", "y"), ("none", "y")])
def test_bad_labels_name_y(y_bad, word):
    X, y = _data()
    y = {"short": y[:-1], "nan": np.where(np.arange(len(y)) == 3, np.nan, y.astype(float)),
         "none": None}[y_bad]
    with pytest.raises(ValueError, match=word):
        GeneralizedNaiveBayes().fit(X, y)


@pytest.mark.parametrize("X_bad", ["strings", "empty_rows", "empty_cols", "3d"])
def test_bad_feature_arrays(X_bad):
    X, y = _data()
    Xb = {"strings": np.array([["a", "b"]] * len(y)), "empty_rows": X[:0], "empty_cols": X[:, :0],
          "3d": X[:, :, None]}[X_bad]
    with pytest.raises(ValueError):
        GeneralizedNaiveBayes().fit(Xb, y if X_bad != "empty_rows" else y[:0])


@pytest.mark.parametrize("dep", DEPS)
def test_one_row_per_class(dep):
    X = np.random.default_rng(0).normal(size=(3, 2))
    m = GeneralizedNaiveBayes(dependence=dep, random_state=0).fit(X, [0, 1, 2])
    P = m.predict_proba(X)
    assert P.shape == (3, 3) and np.isfinite(P).all() and np.allclose(P.sum(1), 1)


def test_unfitted_model_raises_not_fitted():
    from sklearn.exceptions import NotFittedError
    for f in ("predict", "predict_proba", "predict_log_proba", "predict_joint_log_proba"):
        with pytest.raises(NotFittedError):
            getattr(GeneralizedNaiveBayes(), f)(np.zeros((2, 2)))


# ---- public helpers --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, exc, word", [
    (lambda X, y: conditional_mutual_information(X, y[:-2]), ValueError, "y has"),
    (lambda X, y: class_mutual_information(X, y[:-2]), ValueError, "y has"),
    (lambda X, y: conditional_mutual_information(X, y, dependence="kde"), ValueError, "dependence"),
    (lambda X, y: conditional_mutual_information(X, y, n_neighbors=0), ValueError, "n_neighbors"),
    (lambda X, y: conditional_mutual_information(X, y, max_abs_correlation=2.0), ValueError, "max_abs_correlation"),
    (lambda X, y: conditional_mutual_information(X, y, dependence="nonparametric", n_jobs="two"), ValueError, "n_jobs"),
    (lambda X, y: conditional_mutual_information(X[:, 0], y), ValueError, "2-D"),
    (lambda X, y: conditional_mutual_information(np.where(X > 1, np.inf, X), y), ValueError, "infinity"),
    (lambda X, y: class_mutual_information(X, y, dependence="nonparametric", n_neighbors=-1), ValueError, "n_neighbors"),
    (lambda X, y: maximum_spanning_tree(np.triu(np.ones((4, 4)), 1)), ValueError, "symmetric"),
    (lambda X, y: maximum_spanning_tree(np.ones((3, 4))), ValueError, "square"),
    (lambda X, y: maximum_spanning_tree(np.full((3, 3), np.nan)), ValueError, "NaN"),
    (lambda X, y: learn_structure(np.ones((3, 3)), n_edges=-1), ValueError, "n_edges"),
    (lambda X, y: GNBStructure.from_edges(3, [(0, 1)], isolated="keep"), ValueError, "isolated"),
])
def test_helpers_check_their_inputs(call, exc, word):
    X, y = _data()
    with pytest.raises(exc, match=word):
        call(X, y)


# ---- Shapley values and explanations ---------------------------------------------------------------------------------

def _fitted():
    X, y = _data(n=80, d=3)
    return GeneralizedNaiveBayes().fit(X, y), X, y


@pytest.mark.parametrize("case, exc, word", [
    ("unfitted", "NotFittedError", ""), ("foreign", "TypeError", "model must be a fitted GeneralizedNaiveBayes"),
    ("nan_background", "ValueError", "background contains NaN"), ("inf_background", "ValueError", "background contains infinity"),
    ("narrow_background", "ValueError", "background has 2 features"), ("no_background", "ValueError", "background is required"),
    ("nan_X", "ValueError", "X contains NaN"), ("bad_output", "ValueError", "output"),
])
def test_shapley_values_bad_input(case, exc, word):
    from sklearn.exceptions import NotFittedError
    from sklearn.naive_bayes import GaussianNB
    from xai_geometry.gnb import shapley_values
    m, X, y = _fitted()
    B = X[:10].copy()
    kw = dict(background=B)
    if case == "unfitted": m = GeneralizedNaiveBayes()
    if case == "foreign": m = GaussianNB().fit(X, y)
    if case == "nan_background": B[2, 1] = np.nan
    if case == "inf_background": B[2, 1] = np.inf
    if case == "narrow_background": kw = dict(background=B[:, :2])
    if case == "no_background": kw = {}; del m.background_     # a model fitted before background_ was kept
    if case == "nan_X": X = X.copy(); X[0, 0] = np.nan
    if case == "bad_output": kw["output"] = "odds"
    with pytest.raises({"NotFittedError": NotFittedError, "TypeError": TypeError, "ValueError": ValueError}[exc], match=word):
        shapley_values(m, X[:4], **kw)


@pytest.mark.parametrize("case", ["nan", "narrow", "foreign"])
def test_expected_value_bad_background(case):
    from sklearn.naive_bayes import GaussianNB
    from xai_geometry.gnb import expected_value
    m, X, y = _fitted()
    B = X[:10].copy(); B[0, 0] = np.nan if case == "nan" else B[0, 0]
    if case == "narrow": B = B[:, :2]
    if case == "foreign":
        with pytest.raises(TypeError, match="model"): expected_value(GaussianNB().fit(X, y), B)
        return
    with pytest.raises(ValueError, match="background"):
        expected_value(m, B)


@pytest.mark.parametrize("n_background", [0, -3, 2.5, True])
def test_background_sample_checks_n_background(n_background):
    from xai_geometry.gnb import background_sample
    with pytest.raises(ValueError, match="n_background"):
        background_sample(np.zeros((5, 2)), n_background)


def test_explain_is_additive_and_named():
    from xai_geometry import Explanation
    from xai_geometry.gnb import explain
    X, y = _data(n=90, d=3, K=3)
    df = pd.DataFrame(X, columns=["p", "q", "r"])
    m = GeneralizedNaiveBayes(dependence="gaussian_copula").fit(df, y)
    e = explain(m, df.iloc[:7], background=df.iloc[:20], output="centred_log_likelihood")
    assert isinstance(e, Explanation) and e.values.shape == (7, 3, 3) and e.feature_names == ("p", "q", "r")
    J = m.predict_joint_log_proba(df.iloc[:7])
    e.check_additivity(J - J.mean(1, keepdims=True), rtol=0, atol=1e-9)
    # the defaults work on a valid model: the background kept at fit, the complement that exists (the mixture)
    d = explain(m, df.iloc[:2])
    np.testing.assert_array_equal(d.values, explain(m, df.iloc[:2], background=m.background_, complement="mixture").values)
    assert d.info["complement"] == "mixture" and "kept at fit" in d.info["background"]
    with pytest.raises(ValueError, match="complement='pooled' with 3 classes needs dependence='gaussian'"):
        explain(m, df.iloc[:2], background=df.iloc[:20], complement="pooled")


# ---- the part-C baselines --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("make, word", [
    (lambda: __import__("xai_geometry.experiments.part_c", fromlist=["x"]).KernelDensityNaiveBayes(min_bandwidth=0), "min_bandwidth"),
    (lambda: __import__("xai_geometry.experiments.part_c", fromlist=["x"]).KernelDensityNaiveBayes(chunk_size=0), "chunk_size"),
    (lambda: __import__("xai_geometry.experiments.part_c", fromlist=["x"]).TreeAugmentedNaiveBayes(n_bins=1), "n_bins"),
    (lambda: __import__("xai_geometry.experiments.part_c", fromlist=["x"]).TreeAugmentedNaiveBayes(alpha=0), "alpha"),
])
def test_baseline_parameters_name_themselves(make, word):
    X, y = _data()
    with pytest.raises(ValueError, match=word):
        make().fit(X, y)


@pytest.mark.parametrize("scale", [1e155, 1e-300])
def test_kde_naive_bayes_is_scale_safe(scale):
    from xai_geometry.experiments.part_c import KernelDensityNaiveBayes, TreeAugmentedNaiveBayes
    X, y = _data(n=100, d=3)
    for M in (KernelDensityNaiveBayes, TreeAugmentedNaiveBayes):
        ref = M().fit(X, y).predict_proba(X)
        P = M().fit(X * scale, y).predict_proba(X * scale)
        assert np.isfinite(P).all()
        np.testing.assert_allclose(P, ref, atol=1e-6)
