"""Bad and extreme input for part C: zero variance, |rho| -> 1, tiny classes, NaN, one feature, d = 1000."""
import time

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
    W = conditional_mutual_information(X, y, dep, random_state=0)
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
    W_big = conditional_mutual_information(X[y == 0], y[y == 0], dep, random_state=0)
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
    t0 = time.perf_counter()
    m = GeneralizedNaiveBayes(dependence=dep).fit(X, y)
    P = m.predict_proba(X)
    assert time.perf_counter() - t0 < 60
    assert len(m.structure_.edges) == d - 1 and np.allclose(P.sum(1), 1)
    assert {(i, i + 1) for i in range(0, d, 2)} <= set(m.structure_.edges)


def test_parameter_errors_name_the_argument():
    X, y = _data()
    for kw, word in [(dict(dependence="kde"), "dependence"), (dict(k=2), "k must"), (dict(n_edges=-1), "n_edges"),
                     (dict(reduction="auc"), "reduction"), (dict(isolated="x"), "isolated"),
                     (dict(validation_fraction=1.5), "validation_fraction"),
                     (dict(k=4, dependence="nonparametric"), "k >= 4")]:
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


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_nonparametric_weights_invariant_under_monotone_maps(seed):
    rng = np.random.default_rng(seed)
    X, y = _data(n=80, d=3, seed=seed)
    T = np.column_stack([np.exp(X[:, 0]), X[:, 1] ** 3 + X[:, 1], np.arctan(X[:, 2])])
    np.testing.assert_array_equal(conditional_mutual_information(X, y, "nonparametric", random_state=0),
                                  conditional_mutual_information(T, y, "nonparametric", random_state=0))


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
