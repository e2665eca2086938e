"""The nonparametric (KSG on ranks) weights: threads and chunks do not change the values; a long computation announces
its projected time (the all-pairs function against the single-pair estimator is checked in nbs/30_information.ipynb)."""
import warnings

import numpy as np
import pytest

from xai_geometry.gnb import information as info


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
