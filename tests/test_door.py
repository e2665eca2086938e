"""The door (`xai_geometry.explain`, `Explainer`, `evaluate`) and the registry: equality with the parts' doors,
pipelines on raw columns, any model by a registered method, the bad inputs it must name."""
import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.datasets import load_iris, make_classification
from sklearn.decomposition import PCA
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier, RandomForestRegressor
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, PolynomialFeatures, StandardScaler
from sklearn.svm import SVC

import xai_geometry as xg
from xai_geometry.explainers import ExplainerSpec, REGISTRY, register

X, y = make_classification(200, 4, n_informative=3, n_redundant=0, random_state=1)
IRIS_X, IRIS_Y = load_iris(return_X_y=True, as_frame=True)


def _mixed(n=240, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.normal(size=n), "colour": rng.choice(["red", "green", "blue"], n),
                       "size": rng.choice(["S", "M", "L"], n), "z": rng.normal(size=n)})
    df.loc[rng.random(n) < 0.1, "z"] = np.nan
    yy = ((df.x + (df.colour == "red") - 0.5 * (df["size"] == "S") + rng.normal(scale=0.3, size=n)) > 0.5).astype(int)
    return df, yy


def _ct():
    return make_column_transformer((StandardScaler(), ["x"]), (OneHotEncoder(handle_unknown="ignore"), ["colour"]),
                                   (OrdinalEncoder(), ["size"]), (make_pipeline(SimpleImputer(add_indicator=True), StandardScaler()), ["z"]),
                                   sparse_threshold=0)


@pytest.mark.parametrize("final", [SVC(gamma=0.5), KNeighborsClassifier(5), GaussianNB()], ids=type)
def test_one_hot_pipeline_on_raw_columns(final):
    df, yy = _mixed()
    pipe = make_pipeline(_ct(), final).fit(df, yy)
    e = xg.explain(pipe, df.iloc[:15])
    assert e.feature_names == ("x", "colour", "size", "z") and e.values.shape == (15, 4)
    pd.testing.assert_frame_equal(e.data, df.iloc[:15])          # the raw rows, categories and missing values as given
    inner = xg.explain(pipe[-1], pipe[:-1].transform(df.iloc[:15]))
    np.testing.assert_allclose(e.total, inner.total, rtol=1e-12, atol=1e-9)   # conservation kept by the sum
    # the one-hot columns of "colour" (3) and the imputed value + indicator of "z" (2) sum into one value each
    assert np.allclose(e.values[:, 1], inner.values[:, 1:4].sum(1)) and np.allclose(e.values[:, 3], inner.values[:, 5:7].sum(1))
    assert "pipeline" in e.info and xg.Explainer(pipe).columns_ is not None


def test_one_hot_naive_bayes_adds_up_to_its_log_odds():
    df, yy = _mixed()
    pipe = make_pipeline(_ct(), GaussianNB(var_smoothing=1e-3)).fit(df, yy)
    lp = pipe.predict_log_proba(df.iloc[:20])
    xg.explain(pipe, df.iloc[:20]).check_additivity(lp[:, 1] - lp[:, 0], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("step", [PCA(2), PolynomialFeatures(2)], ids=type)
def test_a_step_that_mixes_columns_is_refused_by_name(step):
    m = make_pipeline(step, SVC()).fit(X, y)
    with pytest.raises(ValueError, match=rf"'{type(step).__name__.lower()}' \({type(step).__name__}\)"):
        xg.explain(m, X[:3])


def test_scaled_pipeline_equals_the_part():
    m = make_pipeline(StandardScaler(), SVC()).fit(X, y)
    ex = xg.Explainer(m)
    assert ex.columns_ is not None and ex.columns_.affine   # the one pipeline adapter carries the scalers' arithmetic
    np.testing.assert_array_equal(ex(X[:5]).values, xg.neuralized.explain(m, X[:5]).values)
    np.testing.assert_array_equal(ex(X[:5]).base_values, xg.neuralized.explain(m, X[:5]).base_values)


def test_explainer_equals_explain_and_is_reusable():
    m = GaussianNB().fit(IRIS_X, IRIS_Y)
    ex = xg.Explainer(m)
    a, b = ex(IRIS_X.iloc[:9]), xg.explain(m, IRIS_X.iloc[:9])
    np.testing.assert_array_equal(a.values, b.values)
    np.testing.assert_array_equal(ex(IRIS_X.iloc[3:5]).values, a.values[3:5])
    assert repr(ex) == "Explainer(GaussianNB, method='shapley')"


def test_auto_names_the_choices_in_one_line():
    poly = SVC(kernel="poly").fit(X, y)
    with pytest.raises(TypeError) as err: xg.explain(poly, X[:2])
    msg = str(err.value)
    assert "\n" not in msg and "SVC" in msg and "'kernel_shap'" in msg and "'lime'" in msg


def test_knn_the_networks_do_not_cover_is_refused_naming_method():
    knn = KNeighborsClassifier(5, weights="distance").fit(X, y)
    with pytest.raises(TypeError, match="method= one of") as err: xg.explain(knn, X[:2])
    assert "'kernel_shap'" in str(err.value)


def test_forest_by_kernel_shap_is_seeded_and_additive():
    rf = RandomForestRegressor(20, random_state=0).fit(X, X @ [1.0, -2.0, 0.5, 0.0])
    a = xg.explain(rf, X[:6], method="kernel_shap", background=X[:50], random_state=3)
    b = xg.explain(rf, X[:6], method="kernel_shap", background=X[:50], random_state=3)
    np.testing.assert_array_equal(a.values, b.values)
    a.check_additivity(rf.predict(X[:6]), rtol=0, atol=1e-9)     # every coalition for d = 4: exact, base E_B f
    np.testing.assert_allclose(a.base_values, rf.predict(X[:50]).mean(), rtol=0, atol=1e-12)
    assert a.info["additive"] and a.info["background"] == "50 given rows"
    m = xg.explain(rf, X[:6], method="kernel_shap_mean", background=X[:50])
    m.check_additivity(rf.predict(X[:6]), rtol=0, atol=1e-9)     # the game against the background mean, base f(mean)
    np.testing.assert_allclose(m.base_values, rf.predict(X[:50].mean(0, keepdims=True))[0], rtol=0, atol=1e-12)


def test_multiclass_model_agnostic_one_output_per_class():
    gb = GradientBoostingClassifier(n_estimators=10, random_state=0).fit(IRIS_X, IRIS_Y)
    e = xg.explain(gb, IRIS_X.iloc[:4], method="shapley_sampling", background=IRIS_X, n_permutations=6)
    assert e.values.shape == (4, 4, 3) and e.output_names == ("0", "1", "2")
    e.check_additivity(gb.decision_function(IRIS_X.iloc[:4]), rtol=0, atol=1e-9)


def test_gradient_method_on_a_linear_model_is_exact():
    lr = LogisticRegression().fit(X, y)
    e = xg.explain(lr, X[:5], method="gradient_x_input")
    e.check_additivity(lr.decision_function(X[:5]), rtol=0, atol=1e-9)   # x·w + f(0) = f(x) for a linear f


def test_multiclass_knn_is_explained_class_by_class():
    from xai_geometry.neuralized import explain as explain_b
    for Xd, yd in (load_iris(return_X_y=True), (np.repeat(X, 2, axis=0)[:300], np.arange(300) % 4)):
        m = KNeighborsClassifier(5).fit(Xd, yd)
        e = xg.explain(m, Xd[:10])
        assert e.values.shape == (10, Xd.shape[1], len(np.unique(yd)))
        np.testing.assert_array_equal(e.values, explain_b(m, Xd[:10]).values)
        e.check_additivity(xg.neuralized.neuralize(m).decision_function(Xd[:10]), rtol=1e-9, atol=1e-9)


def test_gnb_defaults_work_on_every_dependence():
    from xai_geometry.gnb import GeneralizedNaiveBayes
    for dep in ("gaussian", "gaussian_copula", "nonparametric"):
        m = GeneralizedNaiveBayes(dependence=dep).fit(IRIS_X, IRIS_Y)
        e = xg.explain(m, IRIS_X.iloc[:5])
        assert e.values.shape == (5, 4, 3) and e.info["complement"] == ("pooled" if dep == "gaussian" else "mixture")


@pytest.mark.parametrize("kw, word", [
    (dict(method="nope"), "one of"), (dict(method=3), "method must be"), (dict(method="lrp"), "does not apply to GaussianNB"),
    (dict(method="kernel_shap"), "needs background="), (dict(method="occlusion", output="log_odds"), "output= does not apply"),
    (dict(background=np.zeros((3, 4)), method="lrp_typo"), "one of"),
])
def test_bad_options_are_named(kw, word):
    m = GaussianNB().fit(X, y)
    with pytest.raises((ValueError, TypeError), match=word): xg.explain(m, X[:2], **kw)


def test_unfitted_and_class_are_refused():
    from sklearn.exceptions import NotFittedError
    with pytest.raises(NotFittedError): xg.explain(SVC(), X[:2])
    with pytest.raises(TypeError, match="class SVC"): xg.explain(SVC, X[:2])


def test_evaluate_scores_any_explanation():
    svm = SVC(gamma=0.5).fit(X, y)
    e = xg.explain(svm, X[:12])
    r = xg.evaluate(svm, e, background=X[12:], n_draws=5)
    assert r["aufc"].shape == (12,) and np.isclose(r["mean"], r["aufc"].mean()) and r["curves"].shape[0] == 12
    again = xg.evaluate(svm, e.values, X=X[:12], background=X[12:], n_draws=5)
    np.testing.assert_array_equal(again["aufc"], r["aufc"])
    with pytest.raises(ValueError, match="outputs"):
        xg.evaluate(svm, xg.explain(GaussianNB().fit(IRIS_X, IRIS_Y), IRIS_X.iloc[:3]), background=IRIS_X)
    with pytest.raises(ValueError, match="X is required"): xg.evaluate(svm, e.values, background=X)


def test_a_former_registry_row_still_registers_with_a_warning():
    with pytest.warns(FutureWarning, match="ExplainerSpec is deprecated"):
        spec = ExplainerSpec("toy_baseline", "test_door:toy_baseline", "any", "any model", "Toy", "k", "d", "none")
    register(spec)
    try:
        e = xg.explain(RandomForestClassifier(5, random_state=0).fit(X, y), X[:3], method="toy_baseline", background=X)
        np.testing.assert_array_equal(e.values, np.tile(np.arange(4.0), (3, 1)))
        assert "toy_baseline" in xg.explainers.for_model(SVC().fit(X, y))
    finally:
        del REGISTRY["toy_baseline"]


def toy_baseline(model, X, *, background=None, random_state=0):
    return np.tile(np.arange(float(np.shape(X)[1])), (len(X), 1))


def test_registry_rows_are_complete():
    import xai_geometry.methods  # noqa: F401  (the exact classes, registered)
    t = xg.explainers.table()
    assert {"shapley", "lrp", "linear", "tree_shap", "kernel_shap", "kernel_shap_mean", "lime", "occlusion",
            "shapley_sampling", "gradient_x_input", "integrated_gradients"} <= set(t.index)
    assert t.notna().all().all() and (t.label != "").all() and (t.explains != "").all() and (t.base != "").all()
    for name in t.index:
        cls = xg.explainers[name]
        assert issubclass(cls, xg.explainers.Method) and callable(cls.prepare) and callable(cls.supports), name


@pytest.mark.parametrize("method", ["shap_kernel", "lime_tabular"])
def test_the_reference_packages_through_the_door(method):
    pytest.importorskip("shap" if method == "shap_kernel" else "lime")
    svm = SVC(gamma=0.5).fit(X, y)
    opts = dict(nsamples=100) if method == "shap_kernel" else dict(num_samples=200)
    e = xg.explain(svm, X[:3], method=method, background=X, **opts)
    assert e.values.shape == (3, 4) and np.isfinite(e.values).all()
    if method == "shap_kernel": e.check_additivity(svm.decision_function(X[:3]), rtol=0, atol=1e-6)   # shap's efficiency
