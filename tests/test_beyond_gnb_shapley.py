"""Closed-form Shapley values of generalized naive Bayes (nbs/41): enumeration, efficiency, geometry, bad input."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from xai_geometry.gnb import GeneralizedNaiveBayes
from xai_geometry.experiments.beyond_gnb_shapley import knn_geometry_fold
from xai_geometry import background_sample
from xai_geometry.gnb.shapley import base_values, embedding, exact_shapley_values, explained_output, shapley_values


def _problem(seed, d, K, n=80):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n); y[:K] = np.arange(K)
    X = rng.normal(size=(n, d)) @ rng.normal(size=(d, d)) + y[:, None] * rng.normal(size=d)
    return X, y


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), d=st.integers(2, 4), K=st.integers(2, 3),
       dep=st.sampled_from(["gaussian", "gaussian_copula"]))
def test_closed_form_equals_enumeration(seed, d, K, dep):
    X, y = _problem(seed, d, K)
    model = GeneralizedNaiveBayes(dependence=dep).fit(X, y)
    B = background_sample(X, n_samples=5, random_state=seed)
    for output, complement in (("joint_log_likelihood", "pooled"), ("centred_log_likelihood", "pooled"),
                               ("log_odds", "mixture"), ("log_odds", "pooled")):
        if output == "log_odds" and complement == "pooled" and K > 2 and dep != "gaussian": continue   # refused
        kw = dict(output=output, complement=complement)
        phi = shapley_values(model, X[:4], background=B, **kw)
        np.testing.assert_allclose(phi, exact_shapley_values(model, X[:4], background=B, **kw), atol=1e-10, rtol=0)
        F = explained_output(model, X[:4], **kw)
        if output != "log_odds":
            J = model.predict_joint_log_proba(X[:4])
            np.testing.assert_allclose(F, J if output == "joint_log_likelihood" else J - J.mean(1, keepdims=True), atol=1e-10)
        np.testing.assert_allclose(phi.sum(1), F - base_values(model, background=B, **kw), atol=1e-10)


def test_binary_centred_is_half_log_odds():
    X, y = _problem(1, 5, 2)
    model = GeneralizedNaiveBayes().fit(X, y)
    B = background_sample(X, n_samples=30, random_state=0)
    phi = shapley_values(model, X[:20], background=B, output="centred_log_likelihood")
    np.testing.assert_allclose(phi[:, :, 0], -phi[:, :, 1], atol=1e-12)
    lo = model.predict_log_proba(X[:20]) @ np.array([-1.0, 1.0])
    diff = 2 * phi[:, :, 1].sum(1) - lo
    np.testing.assert_allclose(diff, diff[0], atol=1e-9)
    np.testing.assert_allclose(shapley_values(model, X[:20], background=B), 2 * phi, atol=1e-12)   # log_odds: the logit itself
    assert embedding(model, X[:3], kind="shap", background=X[:30]).shape == (3, 10)
    assert embedding(model, X[:3], kind="loglik").shape[0] == 3


def test_background_sample_is_deterministic():
    X = np.arange(500.0).reshape(250, 2)
    np.testing.assert_array_equal(background_sample(X, n_samples=10, random_state=3), background_sample(X, n_samples=10, random_state=3))
    assert len(background_sample(X, n_samples=1000)) == 250


def test_fold_protocol_runs():
    X, y = _problem(2, 4, 3, n=120)
    rows = knn_geometry_fold(X[:100], y[:100], X[100:], y[100:], n_background=20)
    assert {r["geometry"] for r in rows} == {"raw", "loglik", "shap"}
    assert all(0 <= r["acc"] <= 1 and 0 <= r["locagree_10"] <= 1 for r in rows)


def test_bad_input():
    X, y = _problem(3, 3, 2)
    model = GeneralizedNaiveBayes().fit(X, y)
    np.testing.assert_array_equal(shapley_values(model, X[:2]), shapley_values(model, X[:2], background=model.background_))
    del model.background_                                   # a model fitted before the default background was kept
    with pytest.raises(ValueError, match="background is required"): shapley_values(model, X[:2])
    with pytest.raises(ValueError, match="output"): shapley_values(model, X[:2], background=X[:5], output="odds")
    with pytest.raises(ValueError, match="at most two features"):
        shapley_values(GeneralizedNaiveBayes(k=4).fit(X, y), X[:2], background=X[:5])
    with pytest.raises(ValueError, match="kind"): embedding(model, X[:2], kind="odds")
    with pytest.raises(ValueError, match="n_samples"): background_sample(X, n_samples=0)
    with pytest.raises(ValueError, match="background has 2 features"): shapley_values(model, X[:2], background=X[:5, :2])
    with pytest.raises(TypeError, match="positional"): shapley_values(model, X[:2], X[:5])  # background is keyword-only


def test_two_colouring_needs_a_forest():
    from xai_geometry.gnb.shapley import _two_colouring
    c = _two_colouring(5, [(0, 1), (1, 2), (3, 4)])
    assert c[0] != c[1] and c[1] != c[2] and c[3] != c[4]
    with pytest.raises(ValueError, match="forest"): _two_colouring(3, [(0, 1), (1, 2), (0, 2)])
