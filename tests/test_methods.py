"""The method classes of the registry: a class registered from outside the package is what `explain` and `Explainer`
run; every class states what it explains and its base, and the additive ones add up; `kernel_shap` is shap's
KernelSHAP; linear models and tree ensembles are explained exactly; any fitted pipeline by a model-agnostic method."""
import importlib.util
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.datasets import load_iris, make_classification, make_regression
from sklearn.decomposition import PCA
from sklearn.ensemble import (ExtraTreesRegressor, GradientBoostingClassifier, HistGradientBoostingClassifier,
                              RandomForestClassifier, RandomForestRegressor)
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge, SGDClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import KBinsDiscretizer, OneHotEncoder, StandardScaler
from sklearn.svm import SVC, SVR, LinearSVC, NuSVC

import xai_geometry as xg
import xai_geometry.methods  # noqa: F401  (the exact classes, registered)
from xai_geometry.explainers import REGISTRY, Method, register
from xai_geometry.explanation import Explanation

X, y = make_classification(240, 6, n_informative=4, n_redundant=0, random_state=0)
XR, YR = make_regression(240, 6, noise=3.0, random_state=0)
HAS_SHAP = importlib.util.find_spec("shap") is not None


# ---- a method from outside the package -------------------------------------------------------------------
class Quadratic:
    "A model outside scikit-learn: f(x) = Σ_j c_j x_j², fitted."
    def __init__(self, c): self.c = np.asarray(c, float); self.n_features_in_ = len(self.c)
    def value(self, A): return (np.asarray(A, float) ** 2) @ self.c


class QuadraticShapley(Method):
    "Exact: f is a sum of per-feature terms, so φ_j = c_j (x_j² − mean_B x_j²), base = mean_B f."
    name, label, colour, exact, additive = "quadratic_shapley", "Quadratic", "tab:pink", True, True
    explains, base, models = "Σ_j c_j x_j²", "mean over the background of f", "Quadratic"

    @classmethod
    def refusal(cls, model): return None if isinstance(model, Quadratic) else "not a Quadratic"

    @classmethod
    def prepare(cls, model, *, background=None, output=None, random_state=0, **options):
        B = np.asarray(background, float); m = (B ** 2).mean(0)
        return lambda A: Explanation(model.c * (np.asarray(A, float) ** 2 - m), base_values=float(model.value(B).mean()),
                                     method=cls.label)


@pytest.fixture
def quadratic():
    register(QuadraticShapley)
    yield Quadratic([1.0, -2.0, 0.5])
    del REGISTRY["quadratic_shapley"]


def test_a_class_registered_outside_is_what_explain_and_explainer_run(quadratic):
    A, B = X[:5, :3], X[50:90, :3]
    for e in (xg.explain(quadratic, A, background=B), xg.Explainer(quadratic, background=B)(A),
              xg.explain(quadratic, A, method="quadratic_shapley", background=B)):
        np.testing.assert_allclose(e.values, [1.0, -2.0, 0.5] * (A ** 2 - (B ** 2).mean(0)), rtol=0, atol=1e-12)
        e.check_additivity(quadratic.value(A), rtol=0, atol=1e-12)
    assert xg.Explainer(quadratic, background=B).method == "quadratic_shapley"
    assert xg.explainers.for_model(quadratic) == ["quadratic_shapley"]
    with pytest.raises(TypeError, match="does not apply to SVC"): xg.explain(SVC().fit(X, y), X[:2], method="quadratic_shapley")


def test_the_door_names_no_method():
    "The modules of the door hold no method's name and no 'which family' test: the classes do."
    src = (Path(xg.__file__).parent / "door.py").read_text(encoding="utf-8")
    code = src.split("def evaluate", 1)[0]           # `evaluate` (feature flipping) is not the method choice
    for name in REGISTRY:
        assert not re.search(rf"[\"']{name}[\"']", code), name
    for family in ("GaussianNB", "KNeighbors", "SVC", "GeneralizedNaiveBayes", "Pipeline"):
        assert family not in code, family


# ---- every class: what it explains, its base, its law ----------------------------------------------------
FAST = {"lime": dict(n_samples=300), "shap_kernel": dict(nsamples=80), "lime_tabular": dict(num_samples=200),
        "shapley_sampling": dict(n_permutations=5)}


def _model_for(name):
    "A model each method supports and the output its values add up to."
    if name == "shapley":
        from sklearn.naive_bayes import GaussianNB
        m = GaussianNB().fit(X, y); lp = m.predict_log_proba(X[:6]); return m, lp[:, 1] - lp[:, 0], {}
    if name == "lrp":
        m = SVC(gamma=0.3).fit(X, y); return m, None, {}
    if name == "tree_shap":
        m = RandomForestRegressor(10, max_depth=4, random_state=0).fit(XR, YR); return m, m.predict(XR[:6]), {"background": XR[:30]}
    if name in ("linear", "gradient_x_input", "integrated_gradients"):
        m = LogisticRegression().fit(X, y); return m, m.decision_function(X[:6]), {"background": X[:40]} if name == "linear" else {}
    m = SVC(gamma=0.3).fit(X, y); return m, m.decision_function(X[:6]), {"background": X[:40]}


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_each_method_states_its_quantity_and_base_and_adds_up(name):
    cls = REGISTRY[name]
    assert cls.explains and cls.base and cls.label and cls.models, name
    if not cls.available()[0]: pytest.skip(f"{cls.requires} not installed")
    m, expected, kw = _model_for(name)
    Xe = XR[:6] if name == "tree_shap" else X[:6]
    e = xg.explain(m, Xe, method=name, **kw, **FAST.get(name, {}))
    assert e.values.shape == (6, 6) and np.isfinite(e.values).all()
    if name == "lrp":       # conservation of the network's output g
        e.check_additivity(xg.neuralized.neuralize(m).decision_function(Xe), rtol=1e-9, atol=1e-9); return
    if cls.additive: e.check_additivity(expected, rtol=0, atol=1e-8)
    if name == "linear" or name == "gradient_x_input": e.check_additivity(expected, rtol=0, atol=1e-9)


# ---- kernel_shap is shap's KernelSHAP ---------------------------------------------------------------------
@pytest.mark.skipif(not HAS_SHAP, reason="shap is not installed (pip install 'xai-geometry[compare]'): the comparison needs it")
@pytest.mark.parametrize("model", [SVC(gamma=0.3), RandomForestClassifier(20, random_state=0)], ids=type)
def test_kernel_shap_equals_shaps_kernel_explainer(model):
    import shap
    m = model.fit(X, y)
    bg = X[100:130]
    e = xg.explain(m, X[:5], method="kernel_shap", background=bg)
    f = xg.explainers.baselines.explained_model(m)
    ex = shap.KernelExplainer(f, bg)
    ref = ex.shap_values(X[:5], silent=True)
    np.testing.assert_allclose(e.base_values, ex.expected_value, rtol=0, atol=1e-8)
    np.testing.assert_allclose(e.values, np.asarray(ref).reshape(5, 6), rtol=0, atol=1e-6)


# ---- linear models, exact ---------------------------------------------------------------------------------
LINEAR = [(LogisticRegression(), "c"), (LinearSVC(), "c"), (SVC(kernel="linear"), "c"), (NuSVC(kernel="linear"), "c"),
          (SGDClassifier(random_state=0), "c"), (Ridge(), "r"), (LinearRegression(), "r"), (SVR(kernel="linear"), "r"),
          (KernelRidge(kernel="linear"), "r")]


@pytest.mark.parametrize("model, kind", LINEAR, ids=[type(m).__name__ for m, _ in LINEAR])
def test_linear_models_are_explained_exactly_by_auto(model, kind):
    A, t = (X, y) if kind == "c" else (XR, YR)
    m = model.fit(A, t)
    ex = xg.Explainer(m, background=A[120:])
    assert ex.method == "linear"
    e = ex(A[:20])
    w = np.ravel(m.coef_) if hasattr(m, "coef_") else m.dual_coef_ @ m.X_fit_
    np.testing.assert_allclose(e.values, w * (A[:20] - A[120:].mean(0)), rtol=0, atol=1e-10)
    f = m.decision_function(A[:20]) if kind == "c" else m.predict(A[:20])
    # libsvm sums its kernel over the support vectors, not w·x: its output agrees with w·x + b to about 1e-9 relative
    tol = 1e-8 * np.abs(f).max() if type(m).__name__ in ("SVC", "NuSVC", "SVR") else 1e-10
    e.check_additivity(f, rtol=0, atol=tol)
    np.testing.assert_allclose(e.base_values, (m.decision_function(A[120:]) if kind == "c" else m.predict(A[120:])).mean(), rtol=0, atol=tol)


def test_linear_through_scaler_and_one_hot_on_raw_columns():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"income": rng.lognormal(10, 1, 300), "city": rng.choice(["a", "b", "c"], 300), "age": rng.integers(18, 80, 300)})
    t = ((df.income > 22000) ^ (df.city == "a")).astype(int)
    pipe = make_pipeline(make_column_transformer((StandardScaler(), ["income", "age"]), (OneHotEncoder(), ["city"])),
                         LogisticRegression()).fit(df, t)
    e = xg.explain(pipe, df.iloc[:15], background=df)
    assert xg.Explainer(pipe, background=df).method == "linear" and e.feature_names == ("income", "city", "age")
    e.check_additivity(pipe.decision_function(df.iloc[:15]), rtol=0, atol=1e-10)
    Z, ZB = pipe[:-1].transform(df.iloc[:15]), pipe[:-1].transform(df)
    phi = pipe[-1].coef_[0] * (Z - ZB.mean(0))
    np.testing.assert_allclose(e.values[:, 1], phi[:, 2:].sum(1), rtol=0, atol=1e-10)   # city = its three one-hot columns


def test_linear_needs_a_background_named():
    with pytest.raises(ValueError, match="needs background="): xg.explain(LogisticRegression().fit(X, y), X[:2])
    with pytest.raises(ValueError, match="background has 5 features"):
        xg.explain(LogisticRegression().fit(X, y), X[:2], background=X[:, :5])


# ---- tree ensembles through shap ----------------------------------------------------------------------------
TREES = [RandomForestClassifier(20, max_depth=5, random_state=0), ExtraTreesRegressor(20, max_depth=5, random_state=0),
         GradientBoostingClassifier(n_estimators=20, random_state=0), HistGradientBoostingClassifier(max_iter=20, random_state=0)]


@pytest.mark.skipif(not HAS_SHAP, reason="shap is not installed (pip install 'xai-geometry[compare]'): the comparison needs it")
@pytest.mark.parametrize("model", TREES, ids=type)
def test_trees_by_auto_equal_shaps_tree_explainer(model):
    import shap
    reg = "Regressor" in type(model).__name__
    A, t = (XR, YR) if reg else (X, y)
    m = model.fit(A, t)
    ex = xg.Explainer(m, background=A[150:200])
    assert ex.method == "tree_shap"
    e = ex(A[:10])
    ref = shap.TreeExplainer(m, data=A[150:200], feature_perturbation="interventional")
    V = np.asarray(ref.shap_values(A[:10]))                   # shap with its own additivity check
    base = np.atleast_1d(ref.expected_value)
    if V.ndim == 3: V, base = V[..., 1], base[1:]
    np.testing.assert_allclose(e.values, V, rtol=0, atol=1e-6)
    np.testing.assert_allclose(e.base_values, base[-1], rtol=0, atol=1e-6)
    if isinstance(m, RandomForestClassifier): e.check_additivity(m.predict_proba(A[:10])[:, 1], rtol=0, atol=1e-6)
    if isinstance(m, GradientBoostingClassifier): e.check_additivity(m.decision_function(A[:10]), rtol=0, atol=1e-6)
    path = xg.explain(m, A[:3])                           # no background: path-dependent
    assert path.info["feature_perturbation"] == "tree_path_dependent"


def test_trees_need_no_extra():
    "The package's own tree algorithm: no optional package (the process without shap is in tests/test_tree_shapley.py)."
    assert REGISTRY["tree_shap"].requires == () and REGISTRY["tree_shap"].available()[0]


# ---- any fitted pipeline, on its raw columns, by a model-agnostic method ---------------------------------
@pytest.mark.parametrize("step", [PCA(3), KBinsDiscretizer(4, encode="ordinal"), KBinsDiscretizer(3, encode="onehot-dense")], ids=str)
@pytest.mark.parametrize("method", ["kernel_shap", "occlusion"])
def test_mixing_or_binning_pipeline_by_a_model_agnostic_method(step, method):
    pipe = make_pipeline(StandardScaler(), step, SVC(gamma=0.3)).fit(X, y)
    e = xg.explain(pipe, X[:6], method=method, background=X[:25])
    assert e.values.shape == (6, 6) and e.feature_names == tuple(f"x{j}" for j in range(6))
    if method == "kernel_shap": e.check_additivity(pipe.decision_function(X[:6]), rtol=0, atol=1e-9)
    elif isinstance(step, PCA):      # the pipeline is the model: occlusion of raw column 0 at its background mean
        np.testing.assert_allclose(e.values[:, 0], pipe.decision_function(X[:6]) - pipe.decision_function(
            np.column_stack([np.full(6, X[:25, 0].mean()), X[:6, 1:]])), rtol=0, atol=1e-12)
    if isinstance(step, PCA):
        with pytest.raises(ValueError, match=r"'pca' \(PCA\).*method= one of"): xg.explain(pipe, X[:2])


@pytest.mark.parametrize("name", ["occlusion", "kernel_shap", "kernel_shap_mean", "shap_kernel"])
def test_a_model_agnostic_class_still_loads_its_function(name):
    "The former rows' `load()` (part B's harness calls it): the function, on raw rows and a raw background."
    cls = REGISTRY[name]
    if not cls.available()[0]: pytest.skip(f"{cls.requires} not installed")
    m = SVC(gamma=0.3).fit(X, y)
    R = cls.load()(m, X[:2], background=X[:20], random_state=0, **({"nsamples": 40} if name == "shap_kernel" else {}))
    assert cls.applies_to == "any" and np.asarray(R).shape == (2, 6)


def test_registry_of_a_fresh_interpreter_lists_the_exact_methods():
    "xg.explainers, read first thing in a new process, holds the exact classes too (the package imports them with it)."
    import subprocess, sys
    code = "import xai_geometry as xg; print(','.join(xg.explainers.table().index))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip().split(",")
    assert {"shapley", "lrp", "linear", "tree_shap"} <= set(out), out
    assert {"kernel_shap", "occlusion"} <= set(out), out
