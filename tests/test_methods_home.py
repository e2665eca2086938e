"""One home for the methods, and a registry that protects itself: the registry is complete however it is imported
(checked in fresh processes), no import circle even counting the imports inside functions, a class named like a
built-in is refused without `replace=True`, a faulty class registered from outside stops no other model, `Explainer`
checks what a method's `prepare` returns, a model of another library is explained by a method registered for it, and
method="auto" says why each exact method declined."""
import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import SVC

import xai_geometry as xg
from xai_geometry.explainers import REGISTRY, Method, register
from xai_geometry.explanation import Explanation

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "xai_geometry"


def _fresh(code: str) -> str:
    "Run `code` in a fresh Python process with this checkout first on the path; its stdout."
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg"}
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.strip()


FIT_NB = """
import numpy as np
from sklearn.naive_bayes import GaussianNB
X = np.random.default_rng(0).normal(size=(40, 3)); y = (X[:, 0] > 0).astype(int)
model = GaussianNB().fit(X, y)
"""


@pytest.mark.parametrize("first", [
    "from xai_geometry.explainers import resolve",
    "import xai_geometry.explainers.baselines; from xai_geometry.methods.contract import resolve",
    "from xai_geometry.methods.lrp import LRP; from xai_geometry.methods import resolve",
    "import xai_geometry.neuralized; from xai_geometry.explainers.method import resolve",
])
def test_the_registry_is_complete_however_it_is_imported(first):
    out = _fresh(first + "\n" + FIT_NB + "print(resolve(model).name)")
    assert out == "shapley"


def _graph(module_level_only: bool) -> dict:
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from test_floors import MODULES, _imports, _name
    finally: sys.path.pop(0)
    mods = {_name(p) for p in MODULES}
    def targets(p):          # `from xai_geometry.x import y` imports the submodule x.y when there is one, else x
        for _, t, names in _imports(p, module_level_only=module_level_only):
            if t == "xai_geometry" and set(names) <= {"__version__"}: continue   # the package root: its files, its version
            subs = [f"{t}.{n}" for n in names if f"{t}.{n}" in mods]
            yield from subs
            if len(subs) < len(names) or not names: yield t
    return {_name(p): {t for t in targets(p) if t in mods and t != _name(p)} for p in MODULES}


def _cycle(graph: dict):
    state, stack = {}, []
    def visit(m):
        state[m] = 1; stack.append(m)
        for t in sorted(graph.get(m, ())):
            if state.get(t) == 1: return stack[stack.index(t):] + [t]
            if t not in state and (c := visit(t)): return c
        state[m] = 2; stack.pop()
    for m in sorted(graph):
        if m not in state and (c := visit(m)): return c
    return None


def test_no_import_circle_counting_the_imports_inside_functions():
    graph = _graph(module_level_only=False)
    assert _cycle(graph) is None, _cycle(graph)
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]       # the check can fail


def test_every_method_class_lives_in_the_methods_home():
    for cls in REGISTRY.values():
        if cls.__module__.startswith("xai_geometry."):
            assert cls.__module__.startswith("xai_geometry.methods."), (cls.name, cls.__module__)
    defined = {n.name for p in (PKG / "explainers").glob("*.py") for n in ast.walk(ast.parse(p.read_text()))
               if isinstance(n, ast.ClassDef)}
    assert not defined & {c.__name__ for c in REGISTRY.values()}


def test_a_user_class_named_like_a_built_in_is_refused_without_replace():
    out = _fresh("""
        import xai_geometry as xg
        from xai_geometry.explainers import Method, register, REGISTRY
        builtin = REGISTRY["lrp"]
        class LRP(Method):
            name, label = "lrp", "my LRP"
        try: register(LRP); print("accepted")
        except ValueError as e: print("refused" if "already registered" in str(e) and "replace=True" in str(e) else e)
        class Occlusion(Method):
            name, label = "occlusion", "mine"
        try: register(Occlusion); print("accepted")
        except ValueError as e: print("refused")
        assert REGISTRY["lrp"] is builtin
        register(LRP, replace=True); print(REGISTRY["lrp"] is LRP)
    """)
    assert out.split() == ["refused", "refused", "True"]


class _Broken(Method):
    name, label, exact = "broken_for_test", "Broken", True
    @classmethod
    def refusal(cls, model): raise RuntimeError("cannot read this model")


@pytest.fixture
def broken():
    register(_Broken)
    yield _Broken
    REGISTRY.pop(_Broken.name, None)


def _svc():
    X = np.random.default_rng(0).normal(size=(60, 3)); y = (X[:, 0] > 0).astype(int)
    return SVC().fit(X, y), X


def test_a_registered_class_that_raises_does_not_stop_explain(broken):
    svc, X = _svc()
    with pytest.warns(RuntimeWarning, match="broken_for_test.*_Broken.*cannot read this model"):
        ex = xg.Explainer(svc)
    assert ex.method == "lrp" and isinstance(ex(X[:3]), Explanation)
    with pytest.raises(TypeError, match="method='broken_for_test'.*_Broken raised RuntimeError: cannot read this model"):
        xg.explain(svc, X[:3], method="broken_for_test")


class _Sum(Method):
    name, label, exact, additive = "sum_for_test", "Sum", True, True
    explains, base, models = "x₀ + x₁", "0", "_Duck"
    result = "explanation"
    @classmethod
    def refusal(cls, model): return None if isinstance(model, _Duck) else "not a duck"
    @classmethod
    def prepare(cls, model, *, background=None, output=None, random_state=0, **options):
        if cls.result == "not callable": return 42
        if cls.result == "array": return lambda X: np.asarray(X, float)
        return lambda X: Explanation(np.asarray(X, float) * model.w_, base_values=0.0, method=cls.label)


class _Duck:
    "A model of another library: its own fit, no scikit-learn base."
    def fit(self, X, y=None): self.w_ = np.ones(np.shape(X)[1]); return self
    def predict(self, X): return np.asarray(X) @ self.w_


@pytest.fixture
def summed():
    register(_Sum)
    yield _Sum
    _Sum.result = "explanation"
    REGISTRY.pop(_Sum.name, None)


def test_a_model_of_another_library_is_explained_by_its_registered_method(summed):
    import warnings
    X = np.array([[1.0, 2.0], [3.0, -1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)          # the package's own classes answer for it, none raises
        e = xg.explain(_Duck().fit(X), X)
    e.check_additivity(_Duck().fit(X).predict(X))
    assert xg.Explainer(_Duck().fit(X)).method == "sum_for_test"
    with pytest.raises(Exception, match="not fitted"):
        xg.explain(_Duck(), X)


def test_the_explainer_checks_what_prepare_returns(summed):
    X = np.array([[1.0, 2.0]])
    summed.result = "not callable"
    with pytest.raises(TypeError, match=r"_Sum.prepare returned int, not a callable"):
        xg.Explainer(_Duck().fit(X))
    summed.result = "array"
    with pytest.raises(TypeError, match=r"gave ndarray for the rows, not an Explanation"):
        xg.explain(_Duck().fit(X), X)


@pytest.mark.parametrize("knn, word", [(KNeighborsClassifier(4, metric="manhattan"), "even"),
                                       (KNeighborsClassifier(5, weights="distance"), "distance")])
def test_autos_refusal_says_why_each_exact_method_declined(knn, word):
    X = np.random.default_rng(0).normal(size=(60, 3)); y = (X[:, 0] > 0).astype(int)
    knn.fit(X, y)
    with pytest.raises(TypeError) as info:
        xg.explain(knn, X[:2])
    msg = str(info.value)
    assert word in msg and "lrp:" in msg and "shapley:" in msg and "kernel_shap" in msg, msg


# ---- one reading of a model: the entries agree on what they are given

def test_evaluate_ranks_lrp_ahead_of_random_on_the_readmes_adult_pipeline():
    "ColumnTransformer(StandardScaler, OneHotEncoder) -> SVC: the one-hot output is sparse, the SVM keeps sparse support vectors."
    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler
    from xai_geometry.datasets import load
    X, y = load("adult")
    X, y = X.iloc[:1500], y.iloc[:1500]
    num = X.select_dtypes("number").columns; cat = X.columns.difference(num)
    svm = make_pipeline(make_column_transformer((StandardScaler(), num), (OneHotEncoder(handle_unknown="ignore"), cat)),
                        SVC()).fit(X, y)
    e = xg.explain(svm, X.iloc[:50])
    lrp = xg.evaluate(svm, e, background=X.iloc[1000:1300], n_draws=10)
    rnd = xg.evaluate(svm, np.random.default_rng(0).normal(size=e.values.shape), X=X.iloc[:50],
                      background=X.iloc[1000:1300], n_draws=10)
    d = rnd["aufc"] - lrp["aufc"]                               # paired by row: random minus LRP (lower AUFC is better)
    assert d.mean() >= 2 * d.std(ddof=1) / np.sqrt(len(d)), (lrp["mean"], rnd["mean"])


def test_a_scaled_manhattan_knn_is_explained_with_the_votes_sign():
    from sklearn.datasets import make_classification
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    X, y = make_classification(300, 5, random_state=0)
    X = X * [1, 10, 100, 0.1, 1]                                # unequal units: the scaler matters
    m = make_pipeline(StandardScaler(), KNeighborsClassifier(5, metric="manhattan")).fit(X, y)
    e = xg.explain(m, X[:200])
    vote = m.predict_proba(X[:200])[:, 1] - 0.5
    assert np.mean(np.sign(e.values.sum(1) + e.base_values) == np.sign(vote)) >= 0.95
    np.testing.assert_array_equal(xg.neuralized.explain(m, X[:20]).values, e.values[:20])   # part B's own door agrees


def test_evaluate_refuses_an_output_that_contradicts_the_explanation_and_an_unfitted_pipeline():
    from sklearn.datasets import load_iris
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    X, y = load_iris(return_X_y=True)
    m = SVC().fit(X, y)
    e = xg.explain(m, X[:20])
    with pytest.raises(ValueError, match="output=2 contradicts the explanation, which explains class '0'"):
        xg.evaluate(m, e[..., 0], background=X, output=2, n_draws=5)
    assert xg.evaluate(m, e[..., 0], background=X, output=0, n_draws=5)["class"] == 0
    with pytest.raises(Exception, match="not fitted"):
        xg.evaluate(make_pipeline(StandardScaler(), SVC()), e[..., 0], background=X, n_draws=5)


# ---- part B's Table 2 reads the registry

def test_part_b_columns_are_the_registrys_classes_and_the_second_tables_are_gone():
    import xai_geometry.experiments.part_b_methods as P
    from xai_geometry.explainers import baselines, reference
    for gone in ("BASELINES", "eta_caption", "_rbf_gamma"):
        assert not hasattr(P, gone), gone
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4)); y = (X[:, 0] - X[:, 1] > 0).astype(int)
    svc = SVC(gamma=0.5).fit(X[:80], y[:80])
    for m, direct in [("occlusion", lambda: baselines.occlusion(svc, X[80:84], background=X[:80], random_state=1)),
                      ("shapley_mean", lambda: baselines.kernel_shap_mean(svc, X[80:84], background=X[:80], random_state=1))]:
        np.testing.assert_array_equal(P.relevance(m, svc, X[80:84], X[:80], random_state=1), direct())
    pytest.importorskip("shap")
    np.testing.assert_array_equal(P.relevance("kernel_shap:mean", svc, X[80:82], X[:80], random_state=1, nsamples=40),
                                  reference.kernel_shap_reference(svc, X[80:82], X[:80], random_state=1, nsamples=40, background="mean"))
