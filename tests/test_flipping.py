"Feature flipping of part B: in-painter properties, AUFC properties (hypothesis), bad input."
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.svm import SVC

from xai_geometry.neuralized import aufc as aufc_reexported, flipping_curve as flipping_curve_reexported
from xai_geometry.neuralized.flipping import ConditionalKDEInpainter, aufc, flipping_curve, flipping_step

X, y = make_classification(200, 6, n_informative=4, n_redundant=0, random_state=0)
SVM = SVC(gamma=0.5).fit(X[:150], y[:150])
KDE = ConditionalKDEInpainter().fit(X[:150])


def test_reexports():
    assert aufc_reexported is aufc and flipping_curve_reexported is flipping_curve


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n_draws=st.integers(1, 30))
def test_kept_features_are_kept_exactly(seed, n_draws):
    rng = np.random.default_rng(seed)
    Xq = rng.normal(size=(4, 6))
    M = rng.random((4, 6)) < 0.5
    D = KDE.sample_batch(Xq, M, n_draws, random_state=seed)
    assert D.shape == (4, n_draws, 6) and np.all(np.isfinite(D))
    np.testing.assert_array_equal(D[np.broadcast_to(M[:, None, :], D.shape)],
                                  np.broadcast_to(Xq[:, None, :], D.shape)[np.broadcast_to(M[:, None, :], D.shape)])
    np.testing.assert_array_equal(D, KDE.sample_batch(Xq, M, n_draws, random_state=seed))  # deterministic
    np.testing.assert_array_equal(KDE.sample(Xq[0], np.ones(6, bool), n_draws), np.tile(Xq[0], (n_draws, 1)))


def test_none_kept_moments():
    N = 30_000
    D = KDE.sample(np.zeros(6), np.zeros(6, bool), N, random_state=0)
    U = KDE.X_train_
    C = np.cov(U.T, bias=True) + np.eye(6) / (2 * KDE.scale_)
    z = (D.mean(0) - U.mean(0)) / np.sqrt(np.diag(C) / N)
    assert np.abs(z).max() < 4
    se = np.sqrt((np.outer(np.diag(C), np.diag(C)) + C ** 2) / N)
    assert np.abs((np.cov(D.T, bias=True) - C) / se).max() < 5


def test_bandwidth_is_loo_optimum():
    s = KDE.scale_
    ll = KDE.loo_log_likelihood_
    assert ll >= KDE.grid_log_likelihood_.max() - 1e-12
    assert KDE.loo_log_likelihood(0.95 * s) <= ll + 1e-12 and KDE.loo_log_likelihood(1.05 * s) <= ll + 1e-12
    grid_only = ConditionalKDEInpainter(refine=False, scales=[0.1, 1.0, 10.0]).fit(X[:150])
    assert grid_only.scale_ in (0.1, 1.0, 10.0)


def test_inpainter_bad_input():
    with pytest.raises(ValueError, match="not fitted"):
        ConditionalKDEInpainter().sample(np.zeros(6), np.ones(6, bool))
    with pytest.raises(ValueError, match="at least 2 rows"):
        ConditionalKDEInpainter().fit(X[:1])
    with pytest.raises(ValueError, match="all rows equal"):
        ConditionalKDEInpainter().fit(np.ones((5, 3)))
    with pytest.raises(ValueError, match="X_train contains NaN in column 0"):
        ConditionalKDEInpainter().fit(np.r_[X[:5], [[np.nan] * 6]])
    with pytest.raises(ValueError, match="'max_iter' parameter of ConditionalKDEInpainter"):
        ConditionalKDEInpainter(max_iter=0).fit(X)
    with pytest.raises(ValueError, match="scales"):
        ConditionalKDEInpainter(scales=[-1.0]).fit(X)
    with pytest.raises(ValueError, match="n_draws"):
        KDE.sample(np.zeros(6), np.ones(6, bool), 0)
    with pytest.raises(TypeError, match="boolean"):
        KDE.sample(np.zeros(6), np.ones(6), 3)
    with pytest.raises(ValueError, match="kept_mask"):
        KDE.sample(np.zeros(6), np.ones(5, bool), 3)
    with pytest.raises(ValueError, match="X has 5 features, but ConditionalKDEInpainter is expecting 6"):
        KDE.sample_batch(np.zeros((2, 5)), np.ones((2, 5), bool), 3)


@settings(max_examples=50, deadline=None)
@given(c=st.floats(-1e3, 1e3).filter(lambda v: abs(v) > 1e-6),
       gaps=st.lists(st.floats(0.01, 10), min_size=1, max_size=12))
def test_aufc_constant_curve_is_one(c, gaps):
    r = np.r_[0.0, np.cumsum(gaps)]
    assert aufc(np.full((2, len(r)), c), r) == pytest.approx(1.0, rel=1e-12)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(2, 20), scale=st.floats(0.1, 10))
def test_aufc_scale_invariant_and_bounded(seed, k, scale):
    C = np.random.default_rng(seed).uniform(-1, 1, size=(3, k))
    C[:, 0] = 1.0
    a = aufc(C, reduce=None)
    np.testing.assert_allclose(aufc(scale * C, reduce=None), a)
    assert np.all(a >= -1 - 1e-12) and np.all(a <= 1 + 1e-12)
    assert aufc(C) == pytest.approx(a.mean())


def test_aufc_bad_input():
    with pytest.raises(ValueError, match="starts at 0"):
        aufc(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="k >= 2"):
        aufc(np.ones((2, 1)))
    with pytest.raises(ValueError, match="NaN"):
        aufc(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="increasing"):
        aufc(np.ones(3), [0, 2, 1])
    with pytest.raises(ValueError, match="reduce"):
        aufc(np.ones(3), reduce="median")


@pytest.mark.parametrize("d, expected", [(5, list(range(6))), (30, list(range(0, 31, 2))),
                                         (53, list(range(0, 51, 5)) + [53])])
def test_recorded_steps(d, expected):
    rng = np.random.default_rng(0)
    U = rng.normal(size=(40, d))
    f = lambda Z: Z[:, 0] + 0.1  # a callable model
    r, C = flipping_curve(f, U[:3], rng.normal(size=(3, d)), background=U, n_draws=2)
    assert list(r) == expected and C.shape == (3, len(expected))
    assert flipping_step(d) == (1 if d <= 10 else 2 if d <= 50 else 5)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_curve_values(seed):
    R = np.random.default_rng(seed).normal(size=(8, 6))
    r, C = flipping_curve(SVM, X[150:158], R, inpainter=KDE, n_draws=5, random_state=seed)
    np.testing.assert_array_equal(C[:, 0], 1.0)
    assert np.all(np.abs(C) <= 1)
    assert np.all(np.round(C * 5) == C * 5)  # means of 5 values +-1
    r2, C2 = flipping_curve(SVM, X[150:158], R, inpainter=KDE, n_draws=5, random_state=seed)
    np.testing.assert_array_equal(C, C2)


def test_exact_linear_relevance_beats_random_and_reversed():
    rng = np.random.default_rng(1)
    Xl = rng.normal(size=(700, 7))
    w = np.array([3.0, -2.0, 1.5, 1.0, -0.5, 0.3, 0.1])
    yl = (Xl @ w + rng.logistic(size=700) > 0).astype(int)
    lin = LogisticRegression().fit(Xl[:600], yl[:600])
    Xe = Xl[600:680]
    exact = lin.coef_ * (Xe - Xl[:600].mean(0))
    kde = ConditionalKDEInpainter().fit(Xl[:600])
    a = [aufc(*flipping_curve(lin, Xe, R, inpainter=kde, random_state=0)[::-1])
         for R in (exact, rng.normal(size=Xe.shape), -exact)]
    assert a[0] < a[1] < a[2]


def test_flipping_bad_input():
    R = np.zeros((4, 6))
    with pytest.raises(ValueError, match="relevance has 5 features"):
        flipping_curve(SVM, X[:4], R[:, :5], inpainter=KDE)
    with pytest.raises(ValueError, match="relevance has 3 rows"):
        flipping_curve(SVM, X[:4], R[:3], inpainter=KDE)
    with pytest.raises(ValueError, match="X contains NaN in column 0"):
        flipping_curve(SVM, np.full((4, 6), np.nan), R, inpainter=KDE)
    with pytest.raises(ValueError, match="relevance contains infinity"):
        flipping_curve(SVM, X[:4], np.full((4, 6), np.inf), inpainter=KDE)
    with pytest.raises(ValueError, match="n_draws"):
        flipping_curve(SVM, X[:4], R, inpainter=KDE, n_draws=0)
    with pytest.raises(ValueError, match="step"):
        flipping_curve(SVM, X[:4], R, inpainter=KDE, step=0)
    with pytest.raises(ValueError, match="output"):
        flipping_curve(SVM, X[:4], R, inpainter=KDE, output="proba")
    with pytest.raises(ValueError, match="background="):
        flipping_curve(SVM, X[:4], R)
    with pytest.raises(ValueError, match="fitted on 6 features"):
        flipping_curve(lambda Z: Z[:, 0], X[:4, :5], R[:, :5], inpainter=KDE)
    with pytest.raises(TypeError, match="fitted scikit-learn"):
        flipping_curve("svm", X[:4], R, inpainter=KDE)
    with pytest.raises(ValueError, match="binary"):
        flipping_curve(SVC().fit(X, np.arange(200) % 3), X[:4], R, inpainter=KDE)


def test_explanation_as_relevance():
    from xai_geometry.neuralized import explain
    exp = explain(SVM, X[:4])
    n1, c1 = flipping_curve(SVM, X[:4], exp, inpainter=KDE, n_draws=5)
    n2, c2 = flipping_curve(SVM, X[:4], exp.values, inpainter=KDE, n_draws=5)
    np.testing.assert_array_equal(c1, c2)
    with pytest.raises(ValueError, match="select_output"):
        flipping_curve(SVM, X[:4], explain(SVC(gamma=0.3).fit(X, np.arange(200) % 3), X[:4]), inpainter=KDE)


def test_model_forms_agree():
    "A fitted SVC, an object exposing only decision_function, and a plain callable give the same curves."
    class DecisionOnly:
        def decision_function(self, Z):
            return SVM.decision_function(Z)
    R = np.random.default_rng(0).normal(size=(5, 6))
    curves = [flipping_curve(m, X[150:155], R, inpainter=KDE, n_draws=4, random_state=1)[1]
              for m in (SVM, DecisionOnly(), SVM.decision_function)]
    np.testing.assert_allclose(curves[0], curves[1]); np.testing.assert_allclose(curves[0], curves[2])


# -- ties are flipped in no privileged order -------------------------------------------------------
_RNG = np.random.default_rng(11)
_Z = _RNG.normal(size=(1100, 5))
_YZ = (_Z[:, 0] > 0).astype(int)


def _all_tied_aufc(columns):
    "Per-point AUFCs of an all-zero relevance for an SVC that looks at the (moved) first column only."
    Zc = _Z[:, columns]
    m = SVC().fit(Zc[:800], _YZ[:800])
    r, C = flipping_curve(m, Zc[800:], np.zeros((300, 5)), inpainter=ConditionalKDEInpainter().fit(Zc[:800]), random_state=0)
    return aufc(C, r, reduce=None)


def test_all_tied_relevance_ignores_the_column_order():
    first, last = _all_tied_aufc([0, 1, 2, 3, 4]), _all_tied_aufc([4, 3, 2, 1, 0])
    se = np.hypot(first.std(ddof=1) / np.sqrt(len(first)), last.std(ddof=1) / np.sqrt(len(last)))
    assert abs(first.mean() - last.mean()) < 3 * se, (first.mean(), last.mean(), se)
    # a stable sort would have given the two ends of the range: the decisive column removed first or last
    assert 0.3 < first.mean() < 0.7 and 0.3 < last.mean() < 0.7


@pytest.mark.parametrize("noise", [1e-18, 1e-16, 1e-12])
def test_rounding_noise_is_a_tie(noise):
    R0 = np.tile([0.0, 0.0, 1.0, 0.5, 0.5, 0.0], (20, 1))
    noisy = R0 + np.random.default_rng(3).normal(scale=noise, size=R0.shape)
    a = flipping_curve(SVM, X[150:170], R0, inpainter=KDE, random_state=5)[1]
    b = flipping_curve(SVM, X[150:170], noisy, inpainter=KDE, random_state=5)[1]
    np.testing.assert_array_equal(a, b)


def test_tie_free_points_keep_the_stable_order_and_draws():
    R = np.random.default_rng(4).normal(size=(20, 6))  # no ties
    a = flipping_curve(SVM, X[150:170], R, inpainter=KDE, random_state=8)[1]
    b = flipping_curve(SVM, X[150:170], R, inpainter=KDE, random_state=8, tie_rtol=0.0)[1]
    np.testing.assert_array_equal(a, b)
    # a relevance tied only on some points changes only those points' curves
    Rt = R.copy(); Rt[:5] = 0.0
    c = flipping_curve(SVM, X[150:170], Rt, inpainter=KDE, random_state=8)[1]
    np.testing.assert_array_equal(c[5:], a[5:])


def test_tie_orders_are_seeded():
    Z = np.zeros((20, 6))
    a = flipping_curve(SVM, X[150:170], Z, inpainter=KDE, random_state=1)[1]
    np.testing.assert_array_equal(a, flipping_curve(SVM, X[150:170], Z, inpainter=KDE, random_state=1)[1])


def test_local_inpainting():
    R = np.random.default_rng(4).normal(size=(20, 6))
    g = flipping_curve(SVM, X[150:170], R, inpainter=KDE, random_state=8)[1]
    l0 = flipping_curve(SVM, X[150:170], R, inpainter=KDE, random_state=8, local_gamma=0.0)[1]
    np.testing.assert_array_equal(g, l0)  # local_gamma = 0 is the global in-painter, draw for draw
    far = KDE.sample_batch(X[150:151], np.zeros((1, 6), bool), 2000, random_state=0, local_gamma=1e6)[0]
    nearest = KDE.X_train_[np.argmin(((KDE.X_train_ - X[150]) ** 2).sum(1))]
    assert np.all(np.abs(far.mean(0) - nearest) < 5 * KDE.noise_std_ / np.sqrt(2000))


@pytest.mark.parametrize("kw, match", [(dict(tie_rtol=-1e-3), "tie_rtol"), (dict(tie_rtol=np.nan), "tie_rtol"),
                                       (dict(local_gamma=-1.0), "local_gamma")])
def test_tie_and_local_bad_input(kw, match):
    with pytest.raises(ValueError, match=match):
        flipping_curve(SVM, X[150:155], np.zeros((5, 6)), inpainter=KDE, **kw)
