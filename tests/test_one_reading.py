"""Every entry reads a model's output f and its pipeline steps through `xai_geometry.reading`: the entries agree, and
the places where the former copies disagreed now follow the one rule."""
import numpy as np
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler
from sklearn.svm import SVC

from xai_geometry.explainers.baselines import explained_model
from xai_geometry.methods.agnostic import _outputs
from xai_geometry.neuralized.models import neuralize
from xai_geometry.reading import model_output, read_model, step_kind
from xai_geometry.validation import check_per_feature_step

rng = np.random.default_rng(0)
X = rng.normal(size=(80, 3))
y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)
y3 = np.digitize(X[:, 1], [-0.5, 0.5])


@pytest.mark.parametrize("model", [SVC().fit(X, y), KNeighborsClassifier(5).fit(X, y), LogisticRegression().fit(X, y),
                                   LinearRegression().fit(X, X[:, 0])], ids=lambda m: type(m).__name__)
def test_the_baselines_and_the_model_agnostic_methods_explain_the_one_output(model):
    what, f = model_output(model)
    em = explained_model(model)
    assert what in em.description
    np.testing.assert_allclose(em.output(X), f(X), rtol=1e-9, atol=1e-9)
    (only,) = _outputs(model)
    np.testing.assert_allclose(only.output(X), f(X), rtol=1e-9, atol=1e-9)


def test_a_classifier_of_three_classes_is_read_one_column_per_class_by_every_entry():
    model = LogisticRegression().fit(X, y3)
    what, f = model_output(model)
    outs = _outputs(model)
    assert what == "decision_function" and len(outs) == 3
    np.testing.assert_allclose(np.column_stack([o.output(X) for o in outs]), f(X))


class _RegressorWithADecision(LinearRegression):
    "A regressor that also has a decision_function (the former evaluate copy read it, the others read predict)."
    def decision_function(self, X): return -self.predict(X)


def test_a_regressor_is_read_by_predict_even_with_a_decision_function():
    model = _RegressorWithADecision().fit(X, X[:, 0])
    what, f = model_output(model)
    assert what == "predict"
    np.testing.assert_allclose(f(X), model.predict(X))


def test_the_identity_function_transformer_is_passthrough_for_every_reader():
    # the former copies disagreed: the pipeline adapter read it as passthrough, validation and the LRP pipeline refused it
    ident = FunctionTransformer()
    assert step_kind(ident) == "passthrough"
    check_per_feature_step("identity", ident)                       # no error
    pipe = make_pipeline(ident, StandardScaler(), SVC()).fit(X, y)
    net = neuralize(pipe)                                           # through the one pipeline adapter
    assert np.array_equal(np.sign(net.decision_function(X)), np.sign(pipe.decision_function(X)))
    assert read_model(pipe).affine


def test_a_one_vs_one_decision_function_is_not_read_as_per_class_scores():
    # the former linear copy read the pairwise columns of a one-vs-one SVC as if they were the classes' outputs
    model = SVC(kernel="linear", decision_function_shape="ovo").fit(X, y3)
    with pytest.raises(TypeError, match="one-vs-rest"):
        model_output(model)
    from xai_geometry import explain
    with pytest.raises(TypeError, match="one-vs-rest"):
        explain(model, X[:3], method="linear", background=X)


def test_read_model_says_unfitted_and_mixing():
    r = read_model(make_pipeline(StandardScaler(), FunctionTransformer(np.log1p), SVC()))
    assert not r.fitted and r.f is None and r.kinds == ["affine", "mixing"] and not r.traceable


def test_evaluate_draws_the_indicator_columns_of_one_hot_bins_as_categories_like_a_one_hot_encoders():
    # the former evaluate vocabulary read KBinsDiscretizer(encode="onehot") indicators as numeric columns
    from sklearn.preprocessing import KBinsDiscretizer, OneHotEncoder
    from xai_geometry.explainers.evaluation import _kinds
    kb = KBinsDiscretizer(n_bins=3, encode="onehot-dense", strategy="uniform").fit(X)
    oh = OneHotEncoder(sparse_output=False).fit(np.digitize(X, [-0.5, 0.5]))
    assert step_kind(kb) == step_kind(oh) == "one-hot"
    assert set(_kinds(kb, 3)) == set(_kinds(oh, 3)) == {"category"}


def test_the_model_agnostic_methods_decline_a_classifier_without_a_real_valued_output_and_say_why():
    # the former refusal accepted any predict, and the explanation then failed inside the baseline
    from sklearn.base import BaseEstimator, ClassifierMixin
    from xai_geometry.methods.agnostic import ModelAgnostic

    class OnlyPredicts(ClassifierMixin, BaseEstimator):
        def fit(self, X, y): self.classes_ = np.unique(y); self.n_features_in_ = X.shape[1]; return self
        def predict(self, X): return self.classes_[(np.asarray(X)[:, 0] > 0).astype(int)]

    why = ModelAgnostic.refusal(OnlyPredicts().fit(X, y))
    assert why is not None and "neither decision_function nor predict_proba" in why
    assert ModelAgnostic.refusal(SVC().fit(X, y)) is None


def test_the_dask_path_refuses_an_unfitted_model_before_the_rows_are_distributed():
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd
    from sklearn.exceptions import NotFittedError
    from xai_geometry import explain
    from xai_geometry.cluster import explain as dask_explain
    rows = dd.from_pandas(pd.DataFrame(X, columns=["a", "b", "c"]), npartitions=2)
    with pytest.raises(NotFittedError, match="not fitted"):
        dask_explain(explain, make_pipeline(StandardScaler(), SVC()), rows)


# ---- no private reader: the floors that explain any model call a model's output only through `reading`

_OUTPUT_METHODS = {"decision_function", "predict_proba", "predict", "predict_log_proba"}


def _output_calls(source: str) -> list:
    "The lines of `source` that call a model's output method directly (`x.decision_function(...)`, ...)."
    import ast
    return [n.lineno for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _OUTPUT_METHODS]


def test_the_output_scan_can_fail():
    assert _output_calls("f = lambda A: model.decision_function(A)\ng = m.predict_proba(X)[:, 1]\n") == [1, 2]
    assert _output_calls("what, f = model_output(model)\n") == []


def test_no_private_reader_of_the_output_on_the_explainers_floor_or_in_the_methods():
    from pathlib import Path
    import xai_geometry
    root = Path(xai_geometry.__file__).parent
    files = [*(root / "explainers").glob("*.py"), *(root / "methods").glob("*.py"), root / "door.py"]
    others = {"pipelines.py", "lrp.py"}           # the pipeline adapter and the LRP method: the networks' modules, checked apart
    found = {str(p.relative_to(root)): _output_calls(p.read_text()) for p in files if p.name not in others}
    assert not {k: v for k, v in found.items() if v}, found
