"""xai_geometry.stats: property tests against scipy and bad input."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats as sps

from xai_geometry.stats import corrected_ttest, friedman_nemenyi, holm


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 25), st.integers(3, 7), st.integers(0, 10_000))
def test_friedman_matches_scipy_without_ties(N, k, seed):
    S = np.random.default_rng(seed).random((N, k))
    r = friedman_nemenyi(S)
    sp = sps.friedmanchisquare(*S.T)
    assert r.statistic == pytest.approx(sp.statistic, rel=1e-9, abs=1e-9)
    assert r.pvalue == pytest.approx(sp.pvalue, rel=1e-9, abs=1e-12)
    assert np.allclose(r.ranks.sum(axis=1), k * (k + 1) / 2)
    assert r.cd > 0 and 0 <= r.f_pvalue <= 1


def test_friedman_rank_direction_and_dataframe_names():
    df = pd.DataFrame({"a": [0.9, 0.8, 0.7], "b": [0.5, 0.4, 0.3], "c": [0.1, 0.2, 0.0]})
    r = friedman_nemenyi(df)
    assert list(r.mean_ranks.index) == ["a", "b", "c"]
    assert r.mean_ranks.tolist() == [1.0, 2.0, 3.0]
    r2 = friedman_nemenyi(df, higher_is_better=False)
    assert list(r2.mean_ranks.index) == ["c", "b", "a"]
    assert r.different().loc["a", "c"] == (2.0 >= r.cd)


@pytest.mark.parametrize("bad, match", [(np.ones((1, 3)), "scores must be"), ([[1.0, np.nan], [2, 3]], "NaN")])
def test_friedman_bad_input(bad, match):
    with pytest.raises(ValueError, match=match): friedman_nemenyi(bad)


@settings(max_examples=25, deadline=None)
@given(arrays(float, st.integers(1, 15), elements=st.floats(0, 1)), st.sampled_from([0.01, 0.05, 0.1]))
def test_holm_properties(p, alpha):
    adj, rej = holm(p, alpha)
    assert (adj >= p - 1e-15).all() and (adj <= 1).all()
    o = np.argsort(p, kind="stable")
    assert (np.diff(adj[o]) >= -1e-15).all()             # monotone in the raw order
    # step-down loop
    m = len(p); expect = np.zeros(m, bool)
    for i, j in enumerate(o):
        if p[j] > alpha / (m - i): break
        expect[j] = True
    assert (rej == expect).all()


def test_holm_hand_example():
    adj, rej = holm([0.01, 0.04, 0.03, 0.005])
    assert np.allclose(adj, [0.03, 0.06, 0.06, 0.02]) and rej.tolist() == [True, False, False, True]
    with pytest.raises(ValueError, match=r"\[0, 1\]"): holm([0.2, -0.1])


def test_corrected_ttest_limit_is_paired_ttest():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=10), rng.normal(size=10)
    t, p = corrected_ttest(a, b, 1e12, 1e-6)
    sp = sps.ttest_rel(a, b)
    assert t == pytest.approx(sp.statistic, rel=1e-6) and p == pytest.approx(sp.pvalue, rel=1e-6)
    t9, p9 = corrected_ttest(a, b, 9, 1)
    assert abs(t9) < abs(t) and p9 > p
    assert corrected_ttest([1, 1, 1], [1, 1, 1], 9, 1) == (0.0, 1.0)
    with pytest.raises(ValueError, match="same length"): corrected_ttest([1, 2], [1], 9, 1)
    with pytest.raises(ValueError, match="positive"): corrected_ttest([1, 2], [1, 3], 0, 1)
