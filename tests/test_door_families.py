"""The door on the distance family's unsupervised models: `xai_geometry.explain` on a Gaussian `OneClassSVM` and on
`KMeans` / `MiniBatchKMeans` (method="auto" → LRP of their networks) conserves the explained output, which is monotone
in the model's own decision function / the hard cluster margin, on standardized withheld rows and through a scaler
pipeline on raw columns."""
import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr
from sklearn.cluster import KMeans, MiniBatchKMeans
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import OneClassSVM

import xai_geometry as xg
from xai_geometry.datasets import load
from xai_geometry.neuralized import NeuralizedKMeans, NeuralizedOneClassSVM


def _split(name):
    X, _ = load(name)
    X_tr, X_te = train_test_split(X, test_size=0.3, random_state=0)
    sc = StandardScaler().fit(X_tr)
    return X_tr, X_te, sc.transform(X_tr), sc.transform(X_te)


def _margin(model, Z):
    "The hard cluster margin d²₍₂₎ − d²₍₁₎ of each row, from the model's own distances to its centres."
    D2 = np.sort(model.transform(Z) ** 2, axis=1)
    return D2[:, 1] - D2[:, 0]


@pytest.fixture(scope="module", params=["wine", "breast_cancer_wisconsin_diagnostic"])
def data(request):
    return _split(request.param)


def test_one_class_svm_conserves_its_outlier_score(data):
    _, _, Z_tr, Z_te = data
    model = OneClassSVM(nu=0.1, gamma="scale").fit(Z_tr)
    ex = xg.Explainer(model)
    assert ex.method == "lrp"
    e = ex(Z_te)
    o = NeuralizedOneClassSVM(model).output(Z_te)
    np.testing.assert_allclose(e.values.sum(1) + e.base_values, o, rtol=1e-9, atol=0)
    assert e.info["output"] == "outlier_score" and np.all(e.base_values == 0) and np.all(e.values >= 0)
    dec = model.decision_function(Z_te)
    assert spearmanr(o, -dec).statistic >= 0.99            # larger outlier score = smaller decision function
    # the exact link: decision_function = Σα exp(−γ o) − ρ
    a, g, rho = e.info["alpha_sum"], e.info["gamma"], e.info["rho"]
    np.testing.assert_allclose(a * np.exp(-g * e.total) - rho, dec, rtol=0, atol=1e-9 * a)


@pytest.mark.parametrize("cls", [KMeans, MiniBatchKMeans])
def test_kmeans_conserves_its_cluster_logit(data, cls):
    _, _, Z_tr, Z_te = data
    model = cls(n_clusters=3, n_init=3, random_state=0).fit(Z_tr)
    ex = xg.Explainer(model)
    assert ex.method == "lrp"
    e = ex(Z_te)
    f = NeuralizedKMeans(model).output(Z_te)
    np.testing.assert_allclose(e.values.sum(1) + e.base_values, f, rtol=1e-9, atol=1e-9 * np.abs(Z_te).max() ** 2)
    assert e.info["output"] == "cluster_logit" and np.all(e.base_values == 0)
    np.testing.assert_array_equal(e.info["clusters"], model.predict(Z_te))
    m = _margin(model, Z_te)
    assert spearmanr(e.total, m).statistic >= 0.99
    np.testing.assert_allclose(e.total, m, rtol=1e-9, atol=1e-9 * np.abs(Z_te).max() ** 2)


@pytest.mark.parametrize("make", [lambda: OneClassSVM(nu=0.1, gamma="scale"),
                                  lambda: KMeans(n_clusters=3, n_init=3, random_state=0)], ids=["one_class", "kmeans"])
def test_through_a_scaler_pipeline_on_raw_columns(data, make):
    X_tr, X_te, Z_tr, Z_te = data
    pipe = make_pipeline(StandardScaler(), make()).fit(X_tr)
    e = xg.explain(pipe, X_te)
    assert list(e.data.columns) == list(X_te.columns) and e.data.index.equals(X_te.index)
    np.testing.assert_allclose(e.data.to_numpy(), X_te.to_numpy(dtype=float))         # the raw rows, as given
    bare = xg.explain(pipe[-1], pipe[:-1].transform(X_te))
    scale = np.abs(bare.values).sum(1).max()
    np.testing.assert_allclose(e.values, bare.values, rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(e.total, bare.total, rtol=1e-9, atol=1e-12 * scale)
    final = pipe[-1]
    ref = -pipe.decision_function(X_te) if isinstance(final, OneClassSVM) else _margin(final, pipe[:-1].transform(X_te))
    assert spearmanr(e.total, ref).statistic >= 0.99
    assert e.info["output"] in ("outlier_score", "cluster_logit") and "summed per raw column" in e.method


def test_refusals_name_the_reason():
    X = np.random.default_rng(0).normal(size=(60, 3))
    with pytest.raises(TypeError, match=r"does not apply to OneClassSVM: model.kernel must be 'rbf' \(Gaussian\) to be neuralized, got 'linear'"):
        xg.explain(OneClassSVM(kernel="linear").fit(X), X[:3], method="lrp")
    with pytest.raises((TypeError, ValueError), match="beta"):
        xg.explain(OneClassSVM().fit(X), X[:3], method="lrp", beta=-1.0)
    with pytest.raises(ValueError, match="eta does not apply"):
        xg.explain(KMeans(n_clusters=2, n_init=2, random_state=0).fit(X), X[:3], eta=0.5)
