"Cross-checks of our KernelSHAP and LIME against the reference packages (skipped when absent)."
from __future__ import annotations

import importlib

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.svm import SVC

from xai_geometry.neuralized.attribution import explained_model, kernel_shap, kernel_shap_mean, lime


def _need(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        pytest.skip(f"{name} is not installed (pip install shap lime): reference comparison skipped")


@pytest.mark.parametrize("d", [3, 5, 7])
def test_kernel_shap_equals_shap_kernel_explainer(d):
    shap = _need("shap")
    X, y = make_classification(150, d, n_informative=2, n_redundant=0, random_state=d)
    m = SVC(gamma=0.5, C=10).fit(X, y)
    bg = X[:7]
    ref = shap.KernelExplainer(explained_model(m), bg).shap_values(X[:5], silent=True)
    ours = kernel_shap(m, X[:5], background=bg)  # shap's game (the background rows); all 2^d - 2 coalitions fit the default budget
    np.testing.assert_allclose(ours, ref, rtol=1e-7, atol=1e-9)


def test_kernel_shap_mean_reference_equals_shap_with_one_row():
    shap = _need("shap")
    X, y = make_classification(150, 4, n_informative=2, n_redundant=0, random_state=1)
    m = SVC(gamma=0.5).fit(X, y)
    ref = shap.KernelExplainer(explained_model(m), X.mean(0, keepdims=True)).shap_values(X[:5], silent=True)
    np.testing.assert_allclose(kernel_shap_mean(m, X[:5], background=X), ref, rtol=1e-7, atol=1e-9)


def test_lime_matches_lime_tabular_in_distribution():
    _need("lime")
    lime_tabular = importlib.import_module("lime.lime_tabular")
    X, y = make_classification(300, 4, n_informative=3, n_redundant=0, random_state=5)
    m = SVC(gamma=0.3, C=1).fit(X, y)
    f = explained_model(m)
    explainer = lime_tabular.LimeTabularExplainer(X, mode="regression", random_state=0)
    runs = 10

    def lime_ref(x, seed):
        explainer.random_state = np.random.RandomState(seed)
        e = explainer.explain_instance(x, f, num_features=4, num_samples=2000)
        r = np.zeros(4)
        for j, v in e.as_map()[1]:
            r[j] = v
        return r

    pts = X[:3]
    ref = np.array([[lime_ref(x, s) for s in range(runs)] for x in pts])
    ours = np.stack([lime(m, pts, background=X, random_state=s, n_samples=2000) for s in range(runs)], 1)
    z = (ours.mean(1) - ref.mean(1)) / np.sqrt((ours.var(1, ddof=1) + ref.var(1, ddof=1)) / runs)
    assert np.abs(z).max() < 4.5 and np.abs(z).mean() < 1.5, z
    assert np.corrcoef(ours.mean(1).ravel(), ref.mean(1).ravel())[0, 1] > 0.98
