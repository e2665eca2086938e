"""The nonparametric (KSG on ranks) weights: the all-pairs function equals the single-pair estimator bit for bit,
whatever the threads and chunks; a long computation announces its projected time."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from xai_geometry.gnb import information as info


def _pair_loop(X, y, random_state, n_neighbors=4):
    "The straightforward code path: one ksg_mutual_information call per (class, pair)."
    classes, codes, priors = info.encode_classes(y)
    R = info.within_class_ranks(X, codes, len(classes), random_state)
    d = X.shape[1]; W = np.zeros((d, d)); iu, ju = np.triu_indices(d, 1)
    for k in range(len(classes)):
        Rk = R[codes == k]
        if len(Rk) < info.MIN_CLASS_SIZE: continue
        W[iu, ju] += priors[k] * np.array([info.ksg_mutual_information(Rk[:, i], Rk[:, j], n_neighbors) for i, j in zip(iu, ju)])
    return W + W.T


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(3, 400), d=st.integers(2, 7), K=st.integers(1, 3),
       k=st.integers(1, 6), decimals=st.sampled_from([0, 1, 8]), n_jobs=st.sampled_from([None, 1, 2]))
def test_all_pairs_equal_the_pair_loop(seed, n, d, K, k, decimals, n_jobs):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, d)) @ rng.normal(size=(d, d)), decimals)  # rounding makes ties
    y = rng.integers(0, K, n)
    W = info.conditional_mutual_information(X, y, dependence="nonparametric", n_neighbors=k, random_state=seed, n_jobs=n_jobs)
    np.testing.assert_array_equal(W, _pair_loop(X, y, seed, k))


def test_chunking_and_threads_do_not_change_values():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 12)); X[:, 1::2] += X[:, ::2]
    R = info.within_class_ranks(X, np.zeros(300, int), 1, 0)
    ref = info.ksg_all_pairs(R, n_jobs=1, chunk_size=1000)
    for n_jobs, chunk in [(2, 1), (2, 7), (-1, 64), (1, 5)]:
        np.testing.assert_array_equal(info.ksg_all_pairs(R, n_jobs=n_jobs, chunk_size=chunk), ref)


def test_long_computations_announce_their_time(monkeypatch):
    monkeypatch.setattr(info, "NONPARAMETRIC_WARN_SECONDS", 0.0)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 14)); y = rng.integers(0, 2, 200)
    with pytest.warns(UserWarning, match=r"91 feature pairs x 2 classes on 200 rows will take about .* s"):
        info.conditional_mutual_information(X, y, dependence="nonparametric", random_state=0)


def test_short_computations_are_silent():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(100, 4)); y = rng.integers(0, 2, 100)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        info.conditional_mutual_information(X, y, dependence="nonparametric", random_state=0)
