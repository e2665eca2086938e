"""ℓ1 neuralized k-NN (nbs/40): conservation, the lowest-index vote, agreement with part A's k-NN, bad input."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.spatial.distance import cdist

from xai_geometry.neuralized.l1_knn import NeuralizedL1KNN


def _vote(U, y, x, k):
    d = np.abs(x[None, :] - U).sum(axis=1)
    o = np.lexsort((np.arange(len(U)), d))[:k]
    return int(y[o].sum() * 2 > k)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.sampled_from([1, 3, 5]), grid=st.booleans())
def test_conservation_and_vote(seed, k, grid):
    rng = np.random.default_rng(seed)
    m, D = int(rng.integers(12, 30)), int(rng.integers(1, 6))
    U = rng.integers(0, 3, (m, D)).astype(float) if grid else rng.normal(size=(m, D))
    y = rng.integers(0, 2, m); y[:6] = [0, 1, 0, 1, 0, 1]
    Xq = rng.integers(0, 3, (8, D)).astype(float) if grid else rng.normal(size=(8, D))
    net = NeuralizedL1KNN(n_neighbors=k).fit(U, y)
    g = net.decision_function(Xq)
    np.testing.assert_allclose(net.explain(Xq).sum(1), g, atol=1e-12)             # κ = 0: Σ R = g exactly
    for kappa in range((k + 1) // 2):
        Pp, Pn = net.pooling_weights(Xq, kappa)
        dist = cdist(Xq, U, "cityblock")
        np.testing.assert_allclose(net.explain(Xq, kappa).sum(1), ((Pn - Pp) * dist).sum(1), atol=1e-12)
    assert list(net.predict(Xq)) == [_vote(U, y, x, k) for x in Xq]


def test_groups_sum_coordinates():
    rng = np.random.default_rng(0)
    U = rng.normal(size=(30, 6)); y = np.arange(30) % 2
    net = NeuralizedL1KNN(n_neighbors=3).fit(U, y, groups=[0, 0, 1, 1, 2, 2], group_names=["a", "b", "c"])
    X = rng.normal(size=(5, 6))
    np.testing.assert_allclose(net.explain_groups(X), net.explain(X).reshape(5, 3, 2).sum(2), atol=1e-12)


def test_agrees_with_supervised_knn():
    from xai_geometry.datasets import load
    from xai_geometry.naive_bayes import SupervisedKNeighborsClassifier, WeightedNaiveBayes
    X, y = load("heart")
    tr, te = np.arange(0, 270, 3) % 270, np.arange(1, 270, 3)
    tr = np.setdiff1d(np.arange(270), te)
    nb = WeightedNaiveBayes().fit(X.iloc[tr], y.iloc[tr])
    for k in (1, 3):
        knn = SupervisedKNeighborsClassifier(kind="shap", n_neighbors=k, model=nb, prefit=True).fit(X.iloc[tr], y.iloc[tr])
        net = NeuralizedL1KNN.from_supervised_knn(knn, X.iloc[tr], y.iloc[tr])
        E = net.transform(X.iloc[te])
        assert (net.predict(E) == knn.predict(X.iloc[te])).all()
        np.testing.assert_allclose(net.explain_groups(E).sum(1), net.decision_function(E), atol=1e-9)


def test_bad_input():
    U = np.random.default_rng(0).normal(size=(10, 3)); y = np.arange(10) % 2
    with pytest.raises(ValueError, match="odd"): NeuralizedL1KNN(n_neighbors=2).fit(U, y)
    with pytest.raises(ValueError, match="kappa"): NeuralizedL1KNN(n_neighbors=3, kappa=2).fit(U, y)
    with pytest.raises(ValueError, match="two classes"): NeuralizedL1KNN().fit(U, np.arange(10) % 3)
    with pytest.raises(ValueError, match="NaN"): NeuralizedL1KNN().fit(np.full((4, 2), np.nan), [0, 1, 0, 1])
    net = NeuralizedL1KNN().fit(U, y)
    with pytest.raises(ValueError, match="embedded points"): net.explain(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="from_supervised_knn"): net.transform(U)
    with pytest.raises(ValueError, match="groups"): NeuralizedL1KNN().fit(U, y, groups=[0, 1])
