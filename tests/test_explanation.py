"""`Explanation` with shap's own plots, and the record's invariants over random shapes (hypothesis)."""
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from xai_geometry import Explanation


def _linear(n=30, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    w = np.array([1.0, -2.0, 0.5])
    return Explanation((X - X.mean()).to_numpy() * w, X.mean().to_numpy() @ w, data=X, output="f", method="linear"), X @ w


def test_shap_plots_draw_it():
    shap = pytest.importorskip("shap", reason="shap (the compare extra) is not installed")
    exp, f = _linear()
    se = exp.to_shap()
    shap.plots.waterfall(se[0], show=False); plt.close("all")
    shap.plots.beeswarm(se, show=False); plt.close("all")
    shap.plots.bar(se, show=False); plt.close("all")
    np.testing.assert_allclose(se.values.sum(1) + se.base_values, f, atol=1e-12)


def test_shap_takes_a_multi_output_explanation_with_categorical_data():
    shap = pytest.importorskip("shap", reason="shap (the compare extra) is not installed")
    data = pd.DataFrame({"colour": pd.Categorical(["red", "blue"]), "size": [1.0, 2.0]})
    e = Explanation(np.ones((2, 2, 3)), base_values=[0.0, 1.0, 2.0], data=data, output_names=["a", "b", "c"])
    se = e.to_shap()
    assert se.values.shape == (2, 2, 3) and se.base_values.shape == (2, 3)
    shap.plots.waterfall(se[0, :, 1], show=False); plt.close("all")


def test_plot_returns_axes():
    exp, _ = _linear()
    assert exp.plot(row=3).get_title()
    assert exp.plot().get_xlabel().startswith("mean |contribution|")
    plt.close("all")


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 6), M=st.integers(1, 5), K=st.one_of(st.none(), st.integers(1, 4)), seed=st.integers(0, 10**6))
def test_total_and_selection_invariants(n, M, K, seed):
    rng = np.random.default_rng(seed)
    V = rng.normal(size=(n, M) if K is None else (n, M, K))
    B = rng.normal(size=(n,) if K is None else (n, K))
    e = Explanation(V, B)
    np.testing.assert_allclose(e.total, V.sum(1) + B)
    sub = e[np.arange(n) % 2 == 0]
    np.testing.assert_allclose(sub.total, (V.sum(1) + B)[::2])
    if K is not None:
        for k in range(K): np.testing.assert_allclose(e.select_output(k).total, V[:, :, k].sum(1) + B[:, k])
    assert e.to_frame().shape == (n, M * (K or 1))
