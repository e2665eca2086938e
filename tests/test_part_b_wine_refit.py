"""Part B's wine readings over repeated cross-fits: the combiner `wine_refit` on made-up per-fit
statistics with a known answer (the median rule of repeated cross-fitting, the three verdicts), its bad
input, and the per-fit task's determinism under the repetition seed."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from xai_geometry.experiments import part_b_wine as W

Z = stats.norm.ppf(0.975)


def _fits(quad, quad_se, slope_hi, slope_hi_se, acid_sweet, acid_sweet_se, slope_sweet, acid_dry, acid_dry_se, slope_dry,
          vertex=8.0):
    """Rows shaped as `wine_refit_task` returns them, one repetition per entry of the list arguments; the
    statistics not given are fixed (every per-fit interval is ± 1.96 standard errors)."""
    rows = []
    for r in range(len(quad)):
        def stat(name, v, se): return {name if name != "acidic" else "acidic_mean": v, f"{name}_se": se,
                                       f"{name}_low": v - Z * se, f"{name}_high": v + Z * se}
        common = dict(gamma=0.2, scaling="median", splits="authors", repetition=r, C=1.0, accuracy=0.8)
        rows += [
            dict(common, reading="sugar by chlorides", group="chlorides <= 0.1", split=0.1, n=1000, vertex=vertex,
                 range_low=1.0, range_high=15.0, **stat("quad", quad[r], quad_se), **stat("slope", 0.0, 1.0)),
            dict(common, reading="sugar by chlorides", group="chlorides > 0.1", split=0.1, n=100, vertex=np.nan,
                 range_low=1.0, range_high=15.0, **stat("quad", 0.0, 1.0), **stat("slope", slope_hi[r], slope_hi_se)),
            dict(common, reading="pH by sugar", group="sugar <= 10", split=10.0, n=900,
                 **stat("acidic", acid_dry[r], acid_dry_se), **stat("slope", slope_dry[r], 0.1)),
            dict(common, reading="pH by sugar", group="sugar > 10", split=10.0, n=300,
                 **stat("acidic", acid_sweet[r], acid_sweet_se), **stat("slope", slope_sweet[r], 0.1)),
        ]
    return pd.DataFrame(rows)


def test_wine_refit_median_rule_and_verdicts():
    F = _fits(quad=[-3.0, -2.0, -1.0], quad_se=0.1,            # spread between fits, tight within: sign
              slope_hi=[-3.0, -2.0, -1.0], slope_hi_se=0.6,     # the same spread, wider within: trend
              acid_sweet=[-2.0, -2.1, -1.9], acid_sweet_se=0.1, slope_sweet=[-1.0, -1.0, -1.0],  # sign opposite, trend right
              acid_dry=[1.0, 1.0, 1.0], acid_dry_se=0.1, slope_dry=[-1.0, -1.0, -1.0])          # both against the paper
    T = W.wine_refit(F).set_index("reading")
    assert len(T) == 4 and (T.repetitions == 3).all()
    p, s, sw, d = T.loc["parabola"], T.loc["sugar_lowers"], T.loc["acid_sweet"], T.loc["acid_dry"]
    # θ̂ = median θ_r = -2; σ̂² = median(σ² + (θ_r - θ̂)²) = median(1.01, 0.01, 1.01) = 1.01 (quad), 1.36 (slope)
    assert p.sign_estimate == -2.0 and np.isclose(p.sign_se, np.sqrt(1.01)) and np.isclose(s.sign_se, np.sqrt(1.36))
    assert np.isclose(p.sign_high, -2 + Z * np.sqrt(1.01)) and p.sign_high < 0 < s.sign_high
    assert np.isclose(p.sign_within_se, 0.1) and np.isclose(p.sign_between_sd, 1.0)
    assert p.sign_fits_in_direction == 3 and p.sign_fits_significant == 3 and s.sign_fits_significant == 2  # -1 ± 1.18 includes 0
    assert p.vertex_fits_inside == 3 and np.isnan(s.vertex_fits_inside)
    assert (p.verdict, s.verdict, sw.verdict, d.verdict) == ("sign", "trend", "trend", "not reproduced")
    assert np.isclose(sw.sign_estimate, -2.0) and sw.sign_fits_in_direction == 0 and sw.trend_fits_in_direction == 3
    # the vertex by the median rule: one fit outside the sugar range leaves the sign, two of three take it away
    lowc = F.group == "chlorides <= 0.1"
    F1 = F.copy(); F1.loc[lowc & (F1.repetition == 1), "vertex"] = 40.0
    P1 = W.wine_refit(F1).set_index("reading").loc["parabola"]
    assert P1.vertex_fits_inside == 2 and P1.vertex == 8.0 and P1.verdict == "sign"
    F2 = F1.copy(); F2.loc[lowc & (F2.repetition == 2), "vertex"] = 30.0
    P2 = W.wine_refit(F2).set_index("reading").loc["parabola"]
    assert P2.vertex_fits_inside == 1 and P2.vertex == 30.0 and P2.verdict == "trend"


def test_wine_refit_one_repetition_is_the_one_fit_interval():
    F = _fits([-2.0], 0.5, [-1.0], 1.0, [0.3], 0.1, [-1.0], [-1.0], 0.1, [1.0])
    T = W.wine_refit(F).set_index("reading")
    assert np.isclose(T.loc["parabola", "sign_low"], -2 - Z * 0.5) and T.loc["parabola", "sign_between_sd"] == 0
    assert T.verdict.tolist() == ["sign", "trend", "sign", "sign"]


def test_wine_refit_bad_input():
    F = _fits([-2.0, -1.0], 0.5, [-1.0, -1.0], 1.0, [0.3, 0.3], 0.1, [-1.0, -1.0], [-1.0, -1.0], 0.1, [1.0, 1.0])
    with pytest.raises(ValueError, match="lacks the columns.*repetition"):
        W.wine_refit(F.drop(columns="repetition"))
    with pytest.raises(ValueError, match="one row per repetition"):
        W.wine_refit(F.drop(index=0))
    with pytest.raises(ValueError, match="level must lie"):
        W.wine_refit(F, level=95)


def test_wine_refit_task_deterministic_under_the_repetition_seed():
    a = W.wine_refit_task(0.2, repetition=1, quick=True)
    pd.testing.assert_frame_equal(a, W.wine_refit_task(0.2, repetition=1, quick=True))
    b = W.wine_refit_task(0.2, repetition=2, quick=True)
    assert not np.allclose(a.slope.to_numpy(), b.slope.to_numpy())  # another shuffle of the folds, other models
    assert sorted(a.splits.unique()) == ["authors", "median"] and len(a) == 8 and (a.repetition == 1).all()
    # repetition 0 is the one-fit run
    one = W.wine_interactions(W.wine_use_case(0.2, quick=True, seed=0))
    z = W.wine_refit_task(0.2, repetition=0, quick=True)
    pd.testing.assert_frame_equal(z[z.splits == "authors"][one.columns].reset_index(drop=True), one)
    T = W.wine_refit(pd.concat([a, b, z], ignore_index=True))
    assert len(T) == 8 and (T.repetitions == 3).all() and set(T.verdict) <= {"sign", "trend", "not reproduced"}
