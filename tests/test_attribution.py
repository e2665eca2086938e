"Attribution baselines of part B: bad input, axioms on random models (hypothesis), determinism."
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.datasets import make_classification
from sklearn.exceptions import NotFittedError
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR

from xai_geometry.methods import ModelAgnostic, get
from xai_geometry.methods.agnostic import _Gradient
from xai_geometry.neuralized.attribution import (
    explained_model, explained_output, integrated_gradients,
    kernel_shap, kernel_shap_mean, occlusion, output_gradient, shapley_sampling, gradient_x_input)

#: Table 2's baselines as the registry holds them: the model-agnostic classes of the library (the reference packages apart)
TABLE2_METHODS = ("gradient_x_input", "sensitivity", "integrated_gradients", "occlusion", "shapley_sampling", "kernel_shap",
                  "kernel_shap_mean", "lime")
GRADIENT_METHODS = tuple(m for m in TABLE2_METHODS if issubclass(get(m), _Gradient))


def explain(model, X, *, method, background=None, random_state=0, **options):
    "The relevance array of the registry's class `method` (its baseline function, on the model as given)."
    return get(method).function(model, X, background=background, random_state=random_state, **options)


X, y = make_classification(120, 5, n_informative=3, n_redundant=0, random_state=0)
FAST = dict(lime={"n_samples": 300}, kernel_shap={"n_samples": 64})


@pytest.fixture(scope="module")
def models():
    return {
        "svc": SVC(gamma=0.5).fit(X, y),
        "svr": SVR(gamma=0.3).fit(X, X[:, 0]),
        "krr": KernelRidge(kernel="rbf", gamma=0.4, alpha=0.1).fit(X, y),
        "knn": KNeighborsClassifier(5).fit(X, y),
        "logreg": LogisticRegression().fit(X, y),
    }


@pytest.mark.parametrize("method", list(TABLE2_METHODS))
@pytest.mark.parametrize("kind", ["svc", "svr", "krr", "knn", "logreg"])
def test_shapes_and_determinism(models, method, kind):
    m = models[kind]
    if kind == "knn" and method in GRADIENT_METHODS:
        with pytest.raises(TypeError, match="piecewise constant"):
            explain(m, X[:3], method=method, background=X)
        return
    R1 = explain(m, X[:4], method=method, background=X, random_state=3, **FAST.get(method, {}))
    R2 = explain(m, X[:4], method=method, background=X, random_state=3, **FAST.get(method, {}))
    assert R1.shape == (4, 5) and np.all(np.isfinite(R1))
    np.testing.assert_array_equal(R1, R2)


@pytest.mark.parametrize("method", list(TABLE2_METHODS))
def test_dataframe_input(models, method):
    df = pd.DataFrame(X, columns=list("abcde"))
    R = explain(models["svc"], df.iloc[:3], method=method, background=df, **FAST.get(method, {}))
    np.testing.assert_allclose(R, explain(models["svc"], X[:3], method=method, background=X, **FAST.get(method, {})))


@pytest.mark.parametrize("method", list(TABLE2_METHODS))
def test_bad_input(models, method):
    m = models["svc"]
    opts = FAST.get(method, {})
    with pytest.raises(ValueError, match="X has 4 features, but SVC is expecting 5"):
        explain(m, X[:3, :4], method=method, background=X, **opts)
    with pytest.raises(ValueError, match="X: Expected 2D array"):
        explain(m, X[0], method=method, background=X, **opts)
    for bad in (np.nan, np.inf):
        Xb = X[:3].copy(); Xb[1, 2] = bad
        with pytest.raises(ValueError, match="(NaN|infinity) in column 2"):
            explain(m, Xb, method=method, background=X, **opts)
    with pytest.raises(TypeError, match="fitted scikit-learn"):
        explain("not a model", X[:3], method=method, background=X, **opts)
    with pytest.raises(TypeError, match="fitted scikit-learn"):
        explain(StandardScaler().fit(X), X[:3], method=method, background=X, **opts)
    with pytest.raises(NotFittedError):
        explain(SVC(), X[:3], method=method, background=X, **opts)
    with pytest.raises(ValueError, match="binary"):
        explain(SVC().fit(X, np.arange(120) % 3), X[:3], method=method, background=X, **opts)
    if method not in GRADIENT_METHODS:
        with pytest.raises(ValueError, match="background"):
            explain(m, X[:3], method=method, background=None, **opts)
        with pytest.raises(ValueError, match="background has 4 features"):
            explain(m, X[:3], method=method, background=X[:, :4], **opts)


def test_the_registry_holds_the_baselines():
    assert GRADIENT_METHODS == ("gradient_x_input", "sensitivity", "integrated_gradients")
    for m in TABLE2_METHODS:
        assert issubclass(get(m), ModelAgnostic) and get(m).function is not None, m
    import xai_geometry.neuralized.attribution as A
    for gone in ("BASELINES", "GRADIENT_BASELINES", "explain"):       # one registry: the method classes
        assert not hasattr(A, gone), gone


def test_other_bad_options(models):
    m = models["svc"]
    with pytest.raises(ValueError, match="n_permutations"):
        shapley_sampling(m, X[:2], X, n_permutations=0)
    with pytest.raises(ValueError, match="refused"):
        shapley_sampling(SVC().fit(np.random.default_rng(0).normal(size=(40, 9)), np.arange(40) % 2),
                         np.zeros((1, 9)), np.zeros((2, 9)), n_permutations="all")
    with pytest.raises(ValueError, match="n_steps"):
        integrated_gradients(m, X[:2], n_steps=0)
    with pytest.raises(ValueError, match="rule"):
        integrated_gradients(m, X[:2], rule="simpson")
    with pytest.raises(ValueError, match="n_samples"):
        kernel_shap(m, X[:2], X, n_samples=1)
    with pytest.raises(ValueError, match="reference"):
        kernel_shap(m, X[:2], X, reference="median")
    with pytest.raises(TypeError, match="no analytic gradient"):
        output_gradient(SVC(kernel="poly").fit(X, y), X[:2])
    with pytest.raises(ValueError, match="single-output"):
        explained_model(KernelRidge(kernel="rbf").fit(X, np.c_[y, y]))


def test_knn_output_is_signed_vote(models):
    knn = models["knn"]
    f = explained_output(knn, X)
    votes = knn.classes_[knn._y[knn.kneighbors(X, return_distance=False)]]
    np.testing.assert_allclose(f, ((votes == 1).sum(1) - (votes == 0).sum(1)) / 10)
    np.testing.assert_array_equal(np.where(f > 0, 1, 0), knn.predict(X))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), d=st.integers(1, 8), zero=st.integers(0, 7))
def test_additive_model_axioms(seed, d, zero):
    "On a linear model every Shapley method, occlusion and IG from the mean equal w * (x - mean) (dummy: 0 for w_j = 0)."
    rng = np.random.default_rng(seed)
    Xr = rng.normal(size=(40, d))
    w = rng.normal(size=d)
    w[zero % d] = 0.0
    lin = LinearRegression().fit(Xr, Xr @ w + 0.3)
    lin.coef_ = w  # exact coefficients (the fit is exact anyway)
    mean = Xr.mean(0)
    expected = w * (Xr[:5] - mean)
    for R in (shapley_sampling(lin, Xr[:5], Xr, n_permutations=3, random_state=seed),
              kernel_shap(lin, Xr[:5], Xr, n_samples=200, random_state=seed),  # sampled coalitions for d = 8
              occlusion(lin, Xr[:5], Xr),
              integrated_gradients(lin, Xr[:5], baseline=mean, n_steps=1 + seed % 5)):
        np.testing.assert_allclose(R, expected, atol=1e-9)
    np.testing.assert_allclose(gradient_x_input(lin, Xr[:5]), w * Xr[:5], atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), gamma=st.floats(0.05, 3.0))
def test_rbf_gradient_matches_finite_differences(seed, gamma):
    rng = np.random.default_rng(seed)
    Xr = rng.normal(size=(60, 4))
    yr = (Xr[:, 0] + 0.5 * rng.normal(size=60) > 0).astype(int)
    if yr.min() == yr.max():
        yr[0] = 1 - yr[0]
    for m in (SVC(gamma=gamma, C=3).fit(Xr, yr), KernelRidge(kernel="rbf", gamma=gamma, alpha=0.3).fit(Xr, yr)):
        f = explained_model(m)
        Xq = rng.normal(size=(10, 4))
        G = output_gradient(m, Xq)
        h = 1e-5
        G_fd = np.stack([(f(Xq + h * e) - f(Xq - h * e)) / (2 * h) for e in np.eye(4)], 1)
        np.testing.assert_allclose(G, G_fd, rtol=1e-6, atol=1e-7 * max(1.0, np.abs(G_fd).max()))


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), n_perm=st.integers(1, 12))
def test_shapley_sampling_efficiency(models, seed, n_perm):
    m = models["svc"]
    R = shapley_sampling(m, X[:6], X, n_permutations=n_perm, random_state=seed)
    np.testing.assert_allclose(R.sum(1), explained_output(m, X[:6]) - explained_output(m, X.mean(0, keepdims=True)), atol=1e-10)


def test_linear_kernel_models_have_constant_gradient():
    from sklearn.kernel_ridge import KernelRidge as KR
    for m in (KR(kernel="linear", alpha=0.5).fit(X, y), SVC(kernel="linear").fit(X, y)):
        f = explained_model(m)
        assert f.kind == "linear"
        G = output_gradient(m, X[:4])
        h = 1e-5
        G_fd = np.stack([(f(X[:4] + h * e) - f(X[:4] - h * e)) / (2 * h) for e in np.eye(5)], 1)
        np.testing.assert_allclose(G, G_fd, rtol=1e-6, atol=1e-8)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), n_samples=st.integers(4, 40))
def test_kernel_shap_efficiency_with_sampled_coalitions(seed, n_samples):
    rng = np.random.default_rng(seed)
    Xr = rng.normal(size=(80, 9))  # 2^9 - 2 = 510 coalitions > n_samples: sampled
    m = SVC(gamma=0.2).fit(Xr, (Xr[:, 0] + Xr[:, 1] > 0).astype(int))
    R = kernel_shap(m, Xr[:4], background=Xr[:20], n_samples=n_samples, random_state=seed)      # shap's game: base E_B f
    np.testing.assert_allclose(R.sum(1), explained_output(m, Xr[:4]) - explained_output(m, Xr[:20]).mean(), atol=1e-9)
    R = kernel_shap_mean(m, Xr[:4], background=Xr, n_samples=n_samples, random_state=seed)      # the mean's game: base f(mean)
    np.testing.assert_allclose(R.sum(1), explained_output(m, Xr[:4]) - explained_output(m, Xr.mean(0, keepdims=True)), atol=1e-9)
