"""The k-NN's search over distinct training patterns returns exactly what the plain search over all rows returns.

Plain search: the distances of a test row to every training row (scikit-learn's manhattan kernel on the same
embedding, so every pair's float distance is the same as in the pattern search), sorted; tie groups chain sorted
distances closer than 1e-9·(1 + d); `ties="index"`: the first k rows in (tie group, training index) order;
`ties="vote"`: every row within 1e-9·(1 + d_k) of the k-th smallest distance votes.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.neighbors import NearestNeighbors

from xai_geometry.naive_bayes.classifier import random_model, random_parts
from xai_geometry.naive_bayes.neighbors import SupervisedKNeighborsClassifier

TOL = 1e-9


def plain_search(knn, P_train, y_train, P_test):
    "(dist, ind) of the index rule, (n, J) probabilities of the fitted rule: brute force over all training rows."
    n, k, J = len(P_train), knn.n_neighbors, len(knn.classes_)
    nn = NearestNeighbors(metric="manhattan", algorithm="brute").fit(knn._embed(P_train))
    d, i = nn.kneighbors(knn._embed(P_test), n_neighbors=n)          # every row, sorted by distance
    grp = np.zeros(d.shape, dtype=np.int64)
    for a in range(len(d)):                                          # obvious loop: chain groups
        for b in range(1, n):
            grp[a, b] = grp[a, b - 1] + (d[a, b] - d[a, b - 1] > TOL * (1 + d[a, b]))
    o = np.lexsort((i, grp), axis=1)[:, :k]                          # (group, training index)
    dist, ind = np.take_along_axis(d, o, 1), np.take_along_axis(i, o, 1)
    yi = np.searchsorted(knn.classes_, y_train)
    proba = np.zeros((len(d), J))
    for a in range(len(d)):
        nb = ind[a] if knn.ties == "index" else i[a][d[a] <= d[a, k - 1] + TOL * (1 + d[a, k - 1])]
        np.add.at(proba[a], yi[nb], 1); proba[a] /= len(nb)
    return dist, ind, proba


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.sampled_from([1, 3, 5]), ties=st.sampled_from(["index", "vote"]),
       kind=st.sampled_from(["nb", "snb", "global", "odds", "shap"]), n=st.integers(5, 120))
def test_pattern_search_equals_plain_search(seed, k, ties, kind, n):
    rng = np.random.default_rng(seed)
    J = int(rng.integers(2, 4))
    model = random_model(rng, n_classes=J, n_features=int(rng.integers(1, 4)), max_parts=3)
    Ptr = random_parts(rng, model, n); Pte = random_parts(rng, model, 12)   # few patterns: many duplicates and ties
    ytr = rng.integers(0, J, n); ytr[:J] = np.arange(J)
    knn = SupervisedKNeighborsClassifier(kind=kind, n_neighbors=k, ties=ties, model=model, prefit=True).fit(Ptr, ytr)
    dist, ind, proba = plain_search(knn, Ptr, ytr, Pte)
    d2, i2 = knn.kneighbors(Pte)
    np.testing.assert_array_equal(i2, ind)
    np.testing.assert_array_equal(d2, dist)
    np.testing.assert_array_equal(knn.predict_proba(Pte), proba)
    np.testing.assert_array_equal(knn.predict(Pte), knn.classes_[np.argmax(proba, axis=1)])


class _LineKNN(SupervisedKNeighborsClassifier):
    "Patterns embedded at chosen points of a line (to build tie chains longer than the first search)."
    VALUES = np.concatenate([[0.0], 1 + 1.5e-9 * np.arange(12), 10 + np.arange(20.0)])

    def _embed(self, P):
        return self.VALUES[np.asarray(P)[:, 0]][:, None]


@pytest.mark.parametrize("ties", ["index", "vote"])
def test_tie_chain_longer_than_the_first_search(ties):
    from xai_geometry.naive_bayes.classifier import WeightedNaiveBayes
    model = WeightedNaiveBayes.from_counts([np.ones((len(_LineKNN.VALUES), 2), dtype=int)], np.ones(1))
    P = np.r_[12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 13 + np.arange(20)][:, None]   # chain patterns 1..12, the farthest first
    y = np.r_[[1], np.zeros(31, int)]
    knn = _LineKNN(n_neighbors=1, ties=ties, model=model, prefit=True).fit(P, y)
    assert knn.n_unique_ == 32                                       # the first search retrieves k + 8 = 9 < 12 patterns
    d, i = knn.kneighbors(np.array([[0]]))
    assert i[0, 0] == 0 and d[0, 0] == _LineKNN.VALUES[12]          # the chain is one tie group: lowest index wins
    # vote: only the rows within 1e-9 (1 + 1) of d_1 = 1 vote (patterns 1 and 2), all of class 0
    np.testing.assert_array_equal(knn.predict_proba(np.array([[0]])), [[0.0, 1.0]] if ties == "index" else [[1.0, 0.0]])
    dist, ind, proba = plain_search(knn, P, y, np.array([[0]]))
    np.testing.assert_array_equal(i, ind); np.testing.assert_array_equal(knn.predict_proba(np.array([[0]])), proba)


@pytest.mark.parametrize("k,ties", [(1, "index"), (3, "vote")])
def test_pattern_search_on_continuous_data(k, ties):
    "Continuous data recoded by MODL (many patterns, few duplicates): the pattern search is still the plain search."
    from xai_geometry.experiments.bench_modl import continuous_like
    from xai_geometry.naive_bayes.classifier import WeightedNaiveBayes
    X, y = continuous_like(1500, 0); Xq, _ = continuous_like(40, 1)
    model = WeightedNaiveBayes().fit(X, y)
    P, Pq = model.part_indices(X), model.part_indices(Xq)
    knn = SupervisedKNeighborsClassifier(kind="shap", n_neighbors=k, ties=ties, model=model, prefit=True).fit(X, y)
    assert knn.n_unique_ > 0.3 * len(P)
    dist, ind, proba = plain_search(knn, P, y.to_numpy(), Pq)
    d2, i2 = knn.kneighbors(Xq)
    np.testing.assert_array_equal(i2, ind)
    np.testing.assert_array_equal(d2, dist)
    np.testing.assert_array_equal(knn.predict_proba(Xq), proba)
