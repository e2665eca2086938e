"""`Explanation` with shap's own plots, and the record's invariants over random shapes (hypothesis)."""
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from xai_geometry import Explanation
from xai_geometry.explanation import BASE_KINDS, BaseValueWarning


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


# ---- every kind of explanation the package returns, drawn by shap's plots -------------------------------------------
import warnings as _warnings

_KINDS = {}


def _kind(name):
    def register(fn): _KINDS[name] = fn; return fn
    return register


def _frame(n=60, d=4, K=2, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    X = pd.DataFrame(rng.normal(size=(n, d)) + 0.8 * y[:, None] * rng.normal(size=d), columns=[f"f{j}" for j in range(d)],
                     index=np.arange(n) + 1000)
    return X, y


@_kind("A WeightedNaiveBayes, binary, categorical data")
def _a_wnb2():
    from xai_geometry.datasets import load
    from xai_geometry.naive_bayes import WeightedNaiveBayes, explain
    X, y = load("adult"); X, y = X.iloc[:300], y.iloc[:300]
    return explain(WeightedNaiveBayes().fit(X, y), X.iloc[:30])

@_kind("A WeightedNaiveBayes, 3 classes")
def _a_wnb3():
    from xai_geometry.datasets import load
    from xai_geometry.naive_bayes import WeightedNaiveBayes, explain
    X, y = load("iris")
    return explain(WeightedNaiveBayes().fit(X, y), X.iloc[::5])

@_kind("A GaussianNB, binary")
def _a_gnb2():
    from sklearn.naive_bayes import GaussianNB
    from xai_geometry.naive_bayes import explain
    X, y = _frame(); return explain(GaussianNB().fit(X, y), X.iloc[:30])

@_kind("A CategoricalNB, 3 classes, pipeline with an OrdinalEncoder")
def _a_pipe3():
    from sklearn.naive_bayes import CategoricalNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import KBinsDiscretizer
    from xai_geometry.naive_bayes import explain
    X, y = _frame(K=3)
    pipe = make_pipeline(KBinsDiscretizer(n_bins=4, encode="ordinal", quantile_method="averaged_inverted_cdf"), CategoricalNB()).fit(X, y)
    return explain(pipe, X.iloc[:30])

@_kind("B SVC pipeline, binary")
def _b_svm():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC
    from xai_geometry.neuralized import explain
    X, y = _frame(); return explain(make_pipeline(StandardScaler(), SVC()).fit(X, y), X.iloc[:30])

@_kind("B k-NN, binary")
def _b_knn():
    from sklearn.neighbors import KNeighborsClassifier
    from xai_geometry.neuralized import explain
    X, y = _frame(); return explain(KNeighborsClassifier(5).fit(X, y), X.iloc[:30])

@_kind("B kernel ridge")
def _b_krr():
    from sklearn.kernel_ridge import KernelRidge
    from xai_geometry.neuralized import explain
    X, y = _frame(); return explain(KernelRidge(kernel="rbf", gamma=0.3).fit(X, y.astype(float)), X.iloc[:30], level=0.5)

@_kind("B SVC, 3 classes")
def _b_svm3():
    from sklearn.svm import SVC
    from xai_geometry.neuralized import explain
    X, y = _frame(K=3); return explain(SVC().fit(X, y), X.iloc[:30])

@_kind("B part A's l1 k-NN")
def _b_l1knn():
    from xai_geometry.datasets import load
    from xai_geometry.naive_bayes import SupervisedKNeighborsClassifier
    from xai_geometry.neuralized import explain
    X, y = load("heart")
    return explain(SupervisedKNeighborsClassifier(n_neighbors=3).fit(X.iloc[::2], y.iloc[::2]), X.iloc[1::9])

@_kind("C GNB, binary")
def _c_gnb2():
    from xai_geometry import background_sample
    from xai_geometry.gnb import GeneralizedNaiveBayes, explain
    X, y = _frame(); return explain(GeneralizedNaiveBayes().fit(X, y), X.iloc[:30], background=background_sample(X, n_samples=20))

@_kind("C GNB, 3 classes")
def _c_gnb3():
    from xai_geometry import background_sample
    from xai_geometry.gnb import GeneralizedNaiveBayes, explain
    X, y = _frame(K=3); return explain(GeneralizedNaiveBayes().fit(X, y), X.iloc[:30], background=background_sample(X, n_samples=20))


def _draw_all(shap, se, feature):
    "shap's five plots of one (n, M) shap record."
    shap.plots.waterfall(se[0], show=False); plt.close("all")
    shap.plots.beeswarm(se, show=False); plt.close("all")
    shap.plots.bar(se, show=False); plt.close("all")
    shap.plots.heatmap(se, show=False); plt.close("all")
    shap.plots.scatter(se[:, feature], show=False); plt.close("all")


@pytest.mark.parametrize("kind", list(_KINDS))
def test_shap_draws_every_kind_of_explanation(kind):
    shap = pytest.importorskip("shap", reason="shap (the compare extra) is not installed")
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore", PendingDeprecationWarning)     # matplotlib about shap's colour maps
        _warnings.simplefilter("ignore", BaseValueWarning)              # LRP's root + gap under shap's E[f(X)]: tested below
        e = _KINDS[kind]()
        feature = e.feature_names[0]
        if e.values.ndim == 2:                                          # a single output: every binary classifier's
            se = e.to_shap()
            np.testing.assert_allclose(se.values.sum(1) + se.base_values, e.total, rtol=0, atol=1e-9)
            _draw_all(shap, se, feature)
            return
        se = e.to_shap()                                                # several outputs: shap's multi-output record
        assert se.values.shape == e.values.shape and list(se.output_names) == list(e.output_names)
        for k, name in enumerate(e.output_names):
            for one in (e.to_shap(output=name), e[..., k].to_shap(), se[..., k]):
                np.testing.assert_allclose(one.values, e.values[:, :, k], rtol=0, atol=0)
            _draw_all(shap, e.to_shap(output=k), feature)
        # shap refuses several outputs at once, by design: what to_shap's docstring says
        with pytest.raises(ValueError, match="can currently only plot a single explanation"): shap.plots.waterfall(se[0], show=False)
        with pytest.raises(ValueError, match="more than one dimension"): shap.plots.beeswarm(se, show=False)
        with pytest.raises(Exception, match="2D arrays"): shap.plots.heatmap(se, show=False)
        with pytest.raises(Exception, match="single feature column"): shap.plots.scatter(se[:, feature], show=False)
        with pytest.raises(Exception): shap.plots.bar(se, show=False)
        plt.close("all")
        with pytest.raises(ValueError, match="no output named 'nope'"): e.to_shap(output="nope")


def test_to_shap_keeps_the_cause_of_an_import_error(monkeypatch):
    import sys
    exp, _ = _linear()
    monkeypatch.setitem(sys.modules, "shap", None)          # `import shap` raises ImportError
    with pytest.raises(ImportError, match="to_shap needs shap") as err:
        exp.to_shap()
    assert isinstance(err.value.__cause__, ImportError)


def test_shap_users_selections():
    exp, f = _linear()
    assert exp[:, "a"].shape == (30, 1) and exp[:, ["c", "a"]].feature_names == ("c", "a")
    np.testing.assert_allclose(exp[3:5, "b"].values[:, 0], exp.values[3:5, 1])
    np.testing.assert_allclose(exp.abs.values, np.abs(exp.values))
    np.testing.assert_allclose(exp.mean(0).total, [np.mean(f)], atol=1e-12)        # the mean row adds up to the mean output
    with pytest.raises(ValueError, match="single output"): exp.plot(output=1)
    with pytest.raises(ValueError, match="axis=0"): exp.mean(1)
    data = pd.DataFrame(np.ones((30, 3)), columns=["b", "a", "c"])
    with pytest.raises(ValueError, match="same names"):
        Explanation(exp.values, data=data.set_axis(["b", "a", "z"], axis=1), feature_names=["a", "b", "c"])
    e2 = Explanation(exp.values, data=data.assign(a=2.0), feature_names=["a", "b", "c"])
    assert (e2.data["a"] == 2.0).all()                                             # matched by name, not relabelled


# ---- what the base value is: plots and shap's record say it ------------------------------------------------------------


def _tick_texts(ax):
    ax.figure.canvas.draw()
    return [t.get_text() for a in ax.figure.axes for t in a.get_xticklabels()]


@pytest.mark.parametrize("kind", list(_KINDS))
def test_every_kind_of_explanation_says_what_its_base_is(kind):
    "Part B's LRP: root + gap (per row), in the plot's title; parts A and C: an expectation over the background."
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore", PendingDeprecationWarning)
        e = _KINDS[kind]()
    expected = "root" if kind.startswith("B") else "expectation"
    assert e.base_kind == expected and e.base_kind in BASE_KINDS
    title = e.plot(row=0).get_title(); plt.close("all")
    assert f"base ({BASE_KINDS[expected]})" in title
    if expected == "root": assert "E[f(X)]" not in title


def test_lrp_to_shap_warns_and_its_waterfall_names_root_plus_gap():
    shap = pytest.importorskip("shap", reason="shap (the compare extra) is not installed")
    e = _KINDS["B SVC pipeline, binary"]()
    assert not np.allclose(e.base_values, e.base_values[0])                     # one base per row: no expectation
    with pytest.warns(BaseValueWarning, match=r"base is root \+ gap: the network's output at the row's root point"):
        se = e.to_shap()
    np.testing.assert_allclose(se.base_values, e.base_values, rtol=0, atol=0)   # the numbers are not changed, only named
    with _warnings.catch_warnings():
        _warnings.simplefilter("error", BaseValueWarning)                       # the waterfall names it: no warning
        _warnings.simplefilter("ignore", PendingDeprecationWarning)
        texts = _tick_texts(e.waterfall(2))
    assert any("root + gap" in t for t in texts) and not any("E[f(X)]" in t for t in texts), texts
    plt.close("all")
    with pytest.warns(BaseValueWarning): shap.plots.waterfall(e.to_shap()[2], show=False)   # shap's own, warned
    plt.close("all")


def test_shapley_values_go_to_shap_without_a_warning_and_keep_its_label():
    pytest.importorskip("shap", reason="shap (the compare extra) is not installed")
    e = _KINDS["A GaussianNB, binary"]()
    with _warnings.catch_warnings():
        _warnings.simplefilter("error", BaseValueWarning)
        _warnings.simplefilter("ignore", PendingDeprecationWarning)
        e.to_shap()
        texts = _tick_texts(e.waterfall(0))
    assert any("E[f(X)]" in t for t in texts); plt.close("all")
    e3 = _KINDS["C GNB, 3 classes"]()
    with pytest.raises(ValueError, match="single output"): _KINDS["A GaussianNB, binary"]().waterfall(0, output=1)
    assert "E[f(X)]" in " ".join(_tick_texts(e3.waterfall(1, output=2))); plt.close("all")
    with pytest.raises(IndexError, match="out of range"): e.waterfall(30)


def test_a_baseline_of_the_door_says_its_base():
    "The door's baselines: their registry row states the base in words, read as a reference point or an expectation."
    import xai_geometry as xg
    from sklearn.svm import SVC
    X, y = _frame()
    svc = SVC().fit(X, y)
    e = xg.explain(svc, X.iloc[:5], method="occlusion", background=X.iloc[:20])
    assert e.base_kind == "reference" and "base (f(background mean))" in e.plot(row=0).get_title(); plt.close("all")
    assert xg.explain(svc, X.iloc[:5], method="gradient_x_input").base_kind == "reference"
    with pytest.warns(BaseValueWarning, match="the model's output at one reference point"):
        pytest.importorskip("shap").Explanation  # shap present: to_shap warns
        e.to_shap()


def test_the_base_kind_a_maker_sets_wins_and_a_wrong_one_is_refused():
    v = np.ones((2, 3))
    assert Explanation(v, info={"base_kind": "reference", "network": "x"}).base_kind == "reference"
    assert Explanation(v).base_kind is None and "\nbase 0 → total 3" in Explanation(v).plot(row=0).get_title()
    plt.close("all")
    with pytest.raises(ValueError, match=r"info\['base_kind'\] must be one of \['expectation', 'reference', 'root'\]"):
        Explanation(v, info={"base_kind": "E"})
    e = Explanation(v, base_values=[3.0, 4.0], info={"network": "NeuralizedSVM"})
    for sub in (e[:1], e[:, [0]], e.mean(0), e.abs): assert sub.base_kind == "root"       # kept through selections
