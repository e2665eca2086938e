"""Part B (neuralized models): bad input, model immutability, sparse/pandas input, and property tests.

The derivations and the large random sweeps live in nbs/20_lrp … 24_multiclass; this file holds
what is about the API's behaviour at its edges."""
from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from sklearn.datasets import make_classification, make_regression
from sklearn.exceptions import NotFittedError
from sklearn.kernel_ridge import KernelRidge
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import SVC, SVR, NuSVC

from xai_geometry.neuralized import (NeuralizedSVM, NeuralizedKNN, NeuralizedKernelRegression,
                                     NeuralizedMulticlassSVM)
from xai_geometry.neuralized.lrp import (TwoPools, relevance, heuristic_eta_svm, heuristic_beta_svm,
                                         heuristic_kappa_knn, heuristic_eta_knn)


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(120, 4, n_informative=3, n_redundant=0, random_state=0)
    return X, y


# ---------------------------------------------------------------- bad models
@pytest.mark.parametrize("cls", [NeuralizedSVM, NeuralizedMulticlassSVM])
def test_svm_unfitted(cls):
    with pytest.raises(NotFittedError):
        cls(SVC())


@pytest.mark.parametrize("kernel", ["linear", "poly", "sigmoid", lambda A, B: A @ B.T])
@pytest.mark.parametrize("cls", [NeuralizedSVM, NeuralizedMulticlassSVM])
def test_svm_non_rbf(data, kernel, cls):
    X, y = data
    with pytest.raises(ValueError, match="'rbf'"):
        cls(SVC(kernel=kernel).fit(X, y))


@pytest.mark.parametrize("cls", [NeuralizedSVM, NeuralizedMulticlassSVM])
def test_svm_precomputed(data, cls):
    X, y = data
    with pytest.raises(ValueError, match="precomputed"):
        cls(SVC(kernel="precomputed").fit(X @ X.T, y))


def test_svm_wrong_type_and_multiclass(data):
    X, y = data
    with pytest.raises(TypeError, match="SVC"):
        NeuralizedSVM(KNeighborsClassifier(3).fit(X, y))
    with pytest.raises(ValueError, match="NeuralizedMulticlassSVM"):
        NeuralizedSVM(SVC().fit(X, np.arange(len(y)) % 3))


def test_knn_bad_models(data):
    X, y = data
    with pytest.raises(NotFittedError):
        NeuralizedKNN(KNeighborsClassifier(3))
    for k in (2, 4, 10):
        with pytest.raises(ValueError, match="odd"):
            NeuralizedKNN(KNeighborsClassifier(k).fit(X, y))
    with pytest.raises(ValueError, match="uniform"):
        NeuralizedKNN(KNeighborsClassifier(3, weights="distance").fit(X, y))
    for kw in (dict(metric="manhattan"), dict(p=1), dict(p=3), dict(metric="cosine"), dict(metric="chebyshev")):
        with pytest.raises(ValueError, match="euclidean"):
            NeuralizedKNN(KNeighborsClassifier(3, **kw).fit(X, y))
    with pytest.raises(ValueError, match="binary"):
        NeuralizedKNN(KNeighborsClassifier(3).fit(X, np.arange(len(y)) % 3))
    with pytest.raises(TypeError, match="KNeighborsClassifier"):
        NeuralizedKNN(SVC().fit(X, y))
    # euclidean spelled three ways is accepted
    for kw in (dict(), dict(metric="euclidean"), dict(metric="minkowski", p=2), dict(algorithm="kd_tree")):
        NeuralizedKNN(KNeighborsClassifier(3, **kw).fit(X, y))


def test_regression_bad_models(data):
    X, y = data
    yr = X[:, 0] + X[:, 1] ** 2
    with pytest.raises(NotFittedError):
        NeuralizedKernelRegression(KernelRidge(kernel="rbf"))
    with pytest.raises(ValueError, match="'rbf'"):
        NeuralizedKernelRegression(KernelRidge(kernel="laplacian").fit(X, yr))
    with pytest.raises(ValueError, match="'rbf'"):
        NeuralizedKernelRegression(SVR(kernel="linear").fit(X, yr))
    with pytest.raises(ValueError, match="precomputed"):
        NeuralizedKernelRegression(KernelRidge(kernel="precomputed").fit(X @ X.T, yr))
    with pytest.raises(ValueError, match="method"):
        NeuralizedKernelRegression(SVR().fit(X, yr), method="other")
    with pytest.raises(ValueError, match="KernelRidge"):
        NeuralizedKernelRegression(SVR().fit(X, yr), method="recentre")
    # a level above every prediction of a model with only positive coefficients leaves no negative pool... and
    # a level with an empty side is refused with the reason
    pos_only = KernelRidge(kernel="rbf", alpha=10.0).fit(X, np.abs(yr) + 5)
    if np.all(pos_only.dual_coef_ > 0):
        with pytest.raises(ValueError, match="pool"):
            NeuralizedKernelRegression(pos_only, level=-1.0)


# ---------------------------------------------------------------- bad points and hyperparameters
def test_bad_points(data):
    X, y = data
    net = NeuralizedSVM(SVC().fit(X, y))
    with pytest.raises(ValueError, match="features"):
        net.explain(X[:, :3])
    with pytest.raises(ValueError):
        net.explain(np.where(np.eye(len(X), X.shape[1]) > 0, np.nan, X))
    with pytest.raises(ValueError, match="eta"):
        net.explain(X, eta=-0.1)
    with pytest.raises(ValueError, match="beta"):
        net.explain(X, beta=0)
    knn = NeuralizedKNN(KNeighborsClassifier(5).fit(X, y))
    with pytest.raises(ValueError, match="kappa"):
        knn.explain(X, kappa=3)
    with pytest.raises(ValueError, match="eta"):
        knn.explain(X, eta=1.5)


@pytest.mark.parametrize("make", [lambda X, y: NeuralizedSVM(SVC().fit(X, y)),
                                  lambda X, y: NeuralizedKNN(KNeighborsClassifier(3).fit(X, y)),
                                  lambda X, y: NeuralizedMulticlassSVM(SVC().fit(X, y)),
                                  lambda X, y: NeuralizedKernelRegression(SVR().fit(X, y.astype(float)), level=0.5)])
def test_sparse_points_refused(data, make):
    X, y = data
    net = make(X, y)
    with pytest.raises(TypeError, match="Sparse data was passed for X"):
        net.explain(sp.csr_matrix(X))
    with pytest.raises(TypeError, match="Sparse data was passed for X"):
        net.decision_function(sp.csr_matrix(X))


def test_models_fitted_on_sparse_data_work(data):
    X, y = data
    Xs = sp.csr_matrix(X)
    svc = SVC().fit(Xs, y)
    np.testing.assert_array_equal(np.sign(NeuralizedSVM(svc).decision_function(X)), np.sign(svc.decision_function(Xs)))
    knn = KNeighborsClassifier(5).fit(Xs, y)
    np.testing.assert_array_equal(NeuralizedKNN(knn).predict(X), knn.predict(Xs))


def test_pandas_feature_names(data):
    X, y = data
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    svc = SVC().fit(df, y)
    net = NeuralizedSVM(svc)
    np.testing.assert_allclose(net.explain(df), net.explain(X))
    np.testing.assert_array_equal(net.explain(df[df.columns[::-1]]), net.explain(df))     # matched by name
    assert list(net.feature_names_in_) == list(df.columns)
    with pytest.raises(ValueError, match=r"lacks the column\(s\) \['f0'\]"):
        net.explain(df.drop(columns="f0"))
    with pytest.raises(ValueError, match=r"column\(s\) \['zz'\] not seen in fit"):
        net.explain(df.assign(zz=1.0))
    assert not hasattr(NeuralizedSVM(SVC().fit(X, y)), "feature_names_in_")


# ---------------------------------------------------------------- the fitted model is never modified
@pytest.mark.parametrize("fit", [lambda X, y: SVC(gamma="scale").fit(X, y),
                                 lambda X, y: NuSVC().fit(X, y),
                                 lambda X, y: SVC().fit(X, np.arange(len(y)) % 3),
                                 lambda X, y: KNeighborsClassifier(5).fit(X, y),
                                 lambda X, y: KernelRidge(kernel="rbf").fit(X, y.astype(float)),
                                 lambda X, y: SVR().fit(X, y.astype(float))])
def test_model_not_modified(data, fit):
    X, y = data
    model = fit(X, y)
    before = pickle.dumps(model)
    if isinstance(model, KNeighborsClassifier): net = NeuralizedKNN(model)
    elif isinstance(model, (KernelRidge, SVR)):
        net = NeuralizedKernelRegression(model, level=0.5, method="recentre" if isinstance(model, KernelRidge) else "bias")
    elif len(model.classes_) > 2: net = NeuralizedMulticlassSVM(model)
    else: net = NeuralizedSVM(model)
    net.explain(X); net.decision_function(X); net.predict(X)
    assert pickle.dumps(model) == before


# ---------------------------------------------------------------- Table 1
def test_heuristics():
    assert heuristic_eta_svm(1) == pytest.approx(0.4) and heuristic_eta_svm(1e-5) == 0 and heuristic_eta_svm(1e5) == 1
    assert heuristic_beta_svm(0.3) == 0.3 and heuristic_kappa_knn(27) == 13 and heuristic_eta_knn() == 0.8
    with pytest.raises(ValueError):
        heuristic_kappa_knn(8)


# ---------------------------------------------------------------- property tests
def _pairwise(x, Up, Un, pp, pn, eta):
    E = np.zeros_like(x)
    for ui, pi in zip(Up, pp):
        for uj, pj in zip(Un, pn):
            E += (x - eta * (ui + uj) / 2) * 2 * (ui - uj) * pi * pj
    return E


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5), st.integers(1, 6), st.integers(1, 6), st.floats(0, 1), st.integers(0, 2 ** 31 - 1))
def test_linear_time_equals_pairwise(d, mp, mn, eta, seed):
    rng = np.random.default_rng(seed)
    Up, Un, x = rng.normal(size=(mp, d)) * 3, rng.normal(size=(mn, d)) * 3, rng.normal(size=(1, d)) * 3
    pp, pn = rng.dirichlet(np.ones(mp)), rng.dirichlet(np.ones(mn))
    E = relevance(TwoPools(Up, Un), x, np.r_[pp, -pn][None], eta)[0]
    R = _pairwise(x[0], Up, Un, pp, pn, eta)
    assert np.abs(E - R).max() <= 1e-10 * max(np.abs(R).max(), 1e-300) + 1e-13


@settings(max_examples=25, deadline=None)
@given(st.floats(-2, 2), st.floats(-2, 2), st.integers(0, 10 ** 6), st.sampled_from([None, "zero"]))
def test_svm_sign_property(log_gamma, log_C, seed, intercept):
    import copy
    X, y = make_classification(60, 3, n_informative=2, n_redundant=0, weights=[0.75], random_state=seed)
    svc = SVC(gamma=10 ** log_gamma, C=10 ** log_C).fit(X, y)
    if intercept == "zero":
        svc = copy.deepcopy(svc); svc.intercept_[:] = 0; svc._intercept_[:] = 0
    P = np.random.default_rng(seed).uniform(X.min(0) - 0.3, X.max(0) + 0.3, size=(3000, 3))
    f = svc.decision_function(P); g = NeuralizedSVM(svc).decision_function(P)
    ok = f != 0
    np.testing.assert_array_equal(np.sign(g[ok]), np.sign(f[ok]))


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(list(range(1, 28, 2))), st.integers(0, 10 ** 6))
def test_knn_grid_ties(k, seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(80, 2)).astype(float); y = rng.integers(0, 2, 80)
    if len(np.unique(y)) < 2: return
    Q = rng.integers(-1, 9, size=(200, 2)) / 2.0
    knn = KNeighborsClassifier(k).fit(X, y)
    net = NeuralizedKNN(knn)
    np.testing.assert_array_equal(net.predict(Q), knn.predict(Q))
    g = net.decision_function(Q)
    decided = g != 0   # g = 0: a tie of the two classes' k-th distances (every point of the grid when k = 1 can tie)
    if decided.any():
        np.testing.assert_array_equal(knn.classes_[(g[decided] > 0).astype(int)], knn.predict(Q[decided]))


def test_multiclass_predict_and_regression_recentre():
    X, y = make_classification(200, 4, n_informative=4, n_redundant=0, n_classes=4, n_clusters_per_class=1, random_state=1)
    svc = SVC(gamma=0.7).fit(X, y)
    P = np.random.default_rng(0).normal(size=(3000, 4)) * 2
    np.testing.assert_array_equal(NeuralizedMulticlassSVM(svc).predict(P), svc.predict(P))
    Xr, yr = make_regression(80, 3, noise=5, random_state=0)
    krr = KernelRidge(kernel="rbf", gamma=0.2, alpha=0.5).fit(Xr, yr)
    c = float(np.median(yr))
    rec = NeuralizedKernelRegression(krr, level=c, method="recentre")
    refit = KernelRidge(kernel="rbf", gamma=0.2, alpha=0.5).fit(Xr, yr - c)
    np.testing.assert_allclose(rec.coef_, refit.dual_coef_, rtol=1e-7, atol=1e-9 * np.abs(refit.dual_coef_).max())
    bias = NeuralizedKernelRegression(krr, level=c)
    f = krr.predict(P[:, :3]) - c
    np.testing.assert_array_equal(np.sign(bias.decision_function(P[:, :3])), np.sign(f))


@pytest.mark.parametrize("model", [SVC(gamma="scale"), SVC(gamma="auto", C=5), NuSVC(nu=0.3),
                                   SVC(class_weight="balanced", gamma=2.0)])
def test_svm_variants_sign(model):
    X, y = make_classification(150, 5, n_informative=3, n_redundant=0, weights=[0.8], random_state=3)
    y = np.where(y == 1, "yes", "no")                                 # string labels: classes_[1] = "yes"
    model.fit(X, y)
    net = NeuralizedSVM(model)
    P = np.random.default_rng(0).normal(size=(5000, 5)) * 2
    np.testing.assert_array_equal(np.sign(net.decision_function(P)), np.sign(model.decision_function(P)))
    np.testing.assert_array_equal(net.predict(P), model.predict(P))
    assert net.gamma_ == pytest.approx(model._gamma)


def test_nusvr_and_svr_levels():
    from sklearn.svm import NuSVR
    Xr, yr = make_regression(100, 3, noise=3, random_state=2)
    P = np.random.default_rng(1).normal(size=(4000, 3)) * 1.5
    for model in (NuSVR(gamma=0.3, C=50).fit(Xr, yr), SVR(gamma=0.3, C=50).fit(Xr, yr)):
        for c in np.quantile(model.predict(Xr), [0.2, 0.5, 0.8]):
            g = NeuralizedKernelRegression(model, level=c).decision_function(P)
            np.testing.assert_array_equal(np.sign(g), np.sign(model.predict(P) - c))


@pytest.mark.parametrize("algorithm", ["brute", "kd_tree", "ball_tree"])
def test_knn_search_algorithms(algorithm):
    X, y = make_classification(300, 4, n_informative=3, n_redundant=0, random_state=5)
    P = np.random.default_rng(2).normal(size=(2000, 4)) * 1.5
    for k in (1, 7, 15):
        knn = KNeighborsClassifier(k, algorithm=algorithm).fit(X, y)
        np.testing.assert_array_equal(NeuralizedKNN(knn).predict(P), knn.predict(P))
