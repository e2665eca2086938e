"""ℓ1 neuralized k-NN (nbs/40): conservation, the vote of part A's k-NN, agreement with the row-level reference, bad input."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.exceptions import NotFittedError

from xai_geometry.datasets import load
from xai_geometry.naive_bayes import SupervisedKNeighborsClassifier, WeightedNaiveBayes
from xai_geometry.neuralized.l1_knn import NeuralizedL1KNN


@pytest.fixture(scope="module")
def heart():
    X, y = load("heart")
    te = np.arange(1, 270, 3); tr = np.setdiff1d(np.arange(270), te)
    nb = WeightedNaiveBayes().fit(X.iloc[tr], y.iloc[tr])
    return X.iloc[tr], y.iloc[tr], X.iloc[te], nb


def _knn(heart, **kw):
    Xtr, ytr, _, nb = heart
    return SupervisedKNeighborsClassifier(model=nb, prefit=True, **kw).fit(Xtr, ytr)


def _reference(net, Xtr, ytr, x, k, kappa):
    "Relevance per coordinate and g over training rows ordered by (distance, pattern order, row index)."
    P = net.model_.model_.part_indices(Xtr)
    pattern = np.unique(P, axis=0, return_inverse=True)[1].ravel()
    E = net.embed(Xtr); yi = np.searchsorted(net.classes_, np.asarray(ytr))
    q = (k + 1) // 2; d = np.abs(x - E).sum(1); band = {}
    for c in (0, 1):
        idx = np.flatnonzero(yi == c); idx = idx[np.lexsort((idx, pattern[idx], d[idx]))]
        band[c] = idx[q - kappa - 1:q + kappa]
    R = np.abs(x - E[band[0]]).mean(0) - np.abs(x - E[band[1]]).mean(0)
    return R, d[band[0][kappa]] - d[band[1][kappa]]


@settings(max_examples=12, deadline=None)
@given(kind=st.sampled_from(["shap", "nb", "snb", "global", "odds"]), k=st.sampled_from([1, 3, 5, 9]),
       kappa_frac=st.floats(0, 1), rows=st.integers(0, 80))
def test_conservation_reference_and_vote(heart, kind, k, kappa_frac, rows):
    Xtr, ytr, Xte, _ = heart
    net = NeuralizedL1KNN(_knn(heart, kind=kind, n_neighbors=k))
    kappa = int(kappa_frac * ((k - 1) // 2))
    Xq = Xte.iloc[rows:rows + 10]
    t = net.explain_terms(Xq, kappa=kappa)
    np.testing.assert_allclose(t.relevance.sum(1) + t.root + t.gap, t.output, atol=1e-12)     # conservation
    if kappa == 0: np.testing.assert_allclose(t.gap, 0, atol=1e-12)
    Rc = net.explain_coordinates(Xq, kappa=kappa); Eq = net.embed(Xq)
    for r in range(len(Xq)):
        R, g = _reference(net, Xtr, ytr, Eq[r], k, kappa)
        np.testing.assert_allclose(Rc[r], R, atol=1e-12); assert abs(t.output[r] - g) < 1e-12
    assert (net.predict(Xq) == net.model_.predict(Xq)).all()


def test_variables_sum_coordinates(heart):
    net = NeuralizedL1KNN(_knn(heart, n_neighbors=3))
    Xte = heart[2]
    Rc, Rv = net.explain_coordinates(Xte, kappa=1), net.relevance(Xte, kappa=1)
    J = len(net.classes_)
    np.testing.assert_allclose(Rv, Rc.reshape(len(Xte), -1, J).sum(2), atol=1e-12)
    assert list(net.variable_names_) == list(Xte.columns) and Rv.shape == (len(Xte), Xte.shape[1])
    w = net.pooling_weights(Xte, kappa=1)
    np.testing.assert_allclose(w.positive.sum(1), 1); np.testing.assert_allclose(w.negative.sum(1), 1)
    assert (w.bias_positive == 0).all() and (w.bias_negative == 0).all()


def test_reordered_columns(heart):
    net = NeuralizedL1KNN(_knn(heart, n_neighbors=3))
    Xte = heart[2]
    np.testing.assert_array_equal(net.relevance(Xte[Xte.columns[::-1]]), net.relevance(Xte))


def test_bad_input(heart):
    Xtr, ytr, Xte, nb = heart
    with pytest.raises(NotFittedError):
        NeuralizedL1KNN(SupervisedKNeighborsClassifier())
    with pytest.raises(TypeError, match="SupervisedKNeighborsClassifier"):
        NeuralizedL1KNN(nb)
    with pytest.raises(ValueError, match="odd"):
        NeuralizedL1KNN(_knn(heart, n_neighbors=2))
    m = _knn(heart, n_neighbors=3); m.n_neighbors = True
    with pytest.raises(ValueError, match=r"n_neighbors must be a positive odd integer \(k = 2q − 1\), got True"):
        NeuralizedL1KNN(m)
    with pytest.raises(ValueError, match="ties"):
        NeuralizedL1KNN(_knn(heart, ties="vote"))
    with pytest.raises(ValueError, match="'chunk_size' parameter"):
        NeuralizedL1KNN(_knn(heart), chunk_size=0)
    net = NeuralizedL1KNN(_knn(heart, n_neighbors=3))
    for bad in (-1, 2, True, 0.5):
        with pytest.raises(ValueError, match="'kappa' parameter"):
            net.relevance(Xte, kappa=bad)
    y3 = pd.Series(np.arange(len(Xtr)) % 3, index=Xtr.index).astype(str)
    with pytest.raises(ValueError, match="binary"):
        NeuralizedL1KNN(SupervisedKNeighborsClassifier().fit(Xtr, y3))
    few = ytr.copy(); few[:] = few.iloc[0]; few.iloc[:2] = [v for v in ytr.unique() if v != ytr.iloc[0]][0]
    with pytest.raises(ValueError, match="fewer than q"):
        NeuralizedL1KNN(SupervisedKNeighborsClassifier(n_neighbors=7).fit(Xtr, few))


def test_explain_record(heart):
    from xai_geometry.neuralized import explain
    Xte = heart[2]
    exp = explain(_knn(heart, n_neighbors=3), Xte[Xte.columns[::-1]], kappa=1)
    assert list(exp.data.columns) == list(Xte.columns) == list(exp.feature_names)      # the model's column order
    np.testing.assert_array_equal(exp.values, explain(_knn(heart, n_neighbors=3), Xte, kappa=1).values)
    net = NeuralizedL1KNN(_knn(heart, n_neighbors=3))
    exp.check_additivity(net.decision_function(Xte), rtol=1e-12, atol=1e-12)
    glob = explain(_knn(heart, kind="global", n_neighbors=3), Xte)                       # one more variable: log p_w(D)
    assert glob.values.shape == (len(Xte), Xte.shape[1] + 1) and glob.data is None
    assert glob.feature_names[-1] == "log p_w(D)"
