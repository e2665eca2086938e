"""Part A for scikit-learn's naive Bayes: exact Shapley values (= enumeration of coalitions through the model's
own `predict_joint_log_proba`), efficiency, d_shap = d_odds, the k-NN, and shap's KernelExplainer at convergence."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.base import clone
from sklearn.naive_bayes import BernoulliNB, CategoricalNB, ComplementNB, GaussianNB, MultinomialNB
from sklearn.utils.estimator_checks import parametrize_with_checks

from xai_geometry import Explanation
from xai_geometry.naive_bayes import (SupervisedKNeighborsClassifier, embedding, exact_shapley_values, explain,
                                      pairwise_distances, shapley_values)
from xai_geometry.naive_bayes.shapley import base_values, explained_output

MODELS = [GaussianNB(), CategoricalNB(), BernoulliNB(), BernoulliNB(binarize=None), MultinomialNB(alpha=0.3),
          ComplementNB(), ComplementNB(norm=True)]


def _data(model, n, M, K, seed):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    X = rng.normal(size=(n, M)) + y[:, None] * rng.normal(size=M)
    if isinstance(model, CategoricalNB): X = np.digitize(X, [-1, 0, 1]).astype(float)
    elif isinstance(model, BernoulliNB) and model.binarize is None: X = (X > 0).astype(float)
    elif isinstance(model, (MultinomialNB, ComplementNB)): X = np.round(np.abs(X) * 2)
    return X, y


@settings(max_examples=40, deadline=None)
@given(i=st.integers(0, len(MODELS) - 1), K=st.integers(2, 4), M=st.integers(2, 5), seed=st.integers(0, 2**16),
       output=st.sampled_from(["log_odds", "joint_log_likelihood", "centred_log_likelihood"]),
       complement=st.sampled_from(["pooled", "mixture"]))
def test_shapley_values_equal_enumeration_and_add_up(i, K, M, seed, output, complement):
    proto = MODELS[i]
    if output == "log_odds" and K > 2 and isinstance(proto, ComplementNB): return
    X, y = _data(proto, 60, M, K, seed)
    model = clone(proto).fit(X, y)
    gaussian_mixture = isinstance(model, GaussianNB) and complement == "mixture" and K > 2 and output == "log_odds"
    B = X if gaussian_mixture else None      # no closed form there: the training rows as background
    phi = shapley_values(model, X[:3], output=output, complement=complement, background=B)
    ref = exact_shapley_values(model, X[:3], output=output, complement=complement, background=X)
    np.testing.assert_allclose(phi, ref, rtol=1e-10, atol=1e-10)
    e = explain(model, X, output=output, complement=complement, background=B)
    one = (lambda a: a[..., 1]) if K == 2 else (lambda a: a)      # shap's convention: a binary model's record is of classes_[1]
    assert isinstance(e, Explanation) and e.values.shape == one(np.zeros((len(X), M, K))).shape
    e.check_additivity(one(explained_output(model, X, output=output, complement=complement)), rtol=1e-10, atol=1e-10)
    jll = model.predict_joint_log_proba(X)
    if output == "joint_log_likelihood":
        e.check_additivity(one(jll), rtol=1e-10, atol=1e-10)
    elif output == "centred_log_likelihood":
        e.check_additivity(one(jll - jll.mean(axis=1, keepdims=True)), rtol=1e-10, atol=1e-10)
    elif K == 2:
        lp = model.predict_log_proba(X)
        np.testing.assert_allclose(e.total, lp[:, 1] - lp[:, 0], rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("proto", MODELS, ids=lambda m: repr(m))
def test_dataframes_are_matched_by_name(proto):
    X, y = _data(proto, 50, 3, 2, 0)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    model = clone(proto).fit(df, y)
    np.testing.assert_allclose(shapley_values(model, df[["c", "a", "b"]]), shapley_values(model, df), rtol=0, atol=0)
    with pytest.raises(ValueError, match="'b'"): explain(model, df.drop(columns="b"))
    assert explain(model, df).feature_names == ("a", "b", "c")


@pytest.mark.parametrize("proto", MODELS, ids=lambda m: repr(m))
def test_geometry_and_knn(proto):
    X, y = _data(proto, 80, 4, 3, 1)
    model = clone(proto).fit(X, y)
    S = X[:20]
    lp = model.predict_log_proba(S); delta = np.abs(lp[:, None] - lp[None]).sum(-1)
    assert np.all(delta <= pairwise_distances(model, S, kind="global") * (1 + 1e-9) + 1e-9)   # bound (4)
    if not isinstance(model, ComplementNB):
        np.testing.assert_allclose(pairwise_distances(model, S, kind="shap"), pairwise_distances(model, S, kind="odds"),
                                   rtol=1e-9, atol=1e-9)
        E = embedding(model, S, kind="shap")
        np.testing.assert_allclose(E.reshape(20, 4, 3), shapley_values(model, S), rtol=0, atol=0)
    knn = SupervisedKNeighborsClassifier(kind="nb", n_neighbors=3, model=model, prefit=True).fit(X[:60], y[:60])
    pred = knn.predict(X[60:])
    assert pred.shape == (20,) and set(pred) <= set(model.classes_)
    D = pairwise_distances(knn.model_, X[60:], X[:60], kind="nb")
    d, ind = knn.kneighbors(X[60:])
    np.testing.assert_allclose(np.take_along_axis(D, ind, 1), d, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(np.sort(D, axis=1)[:, :3], d, rtol=1e-9, atol=1e-9)


def test_training_marginals_are_exact_with_sample_weights():
    X, y = _data(GaussianNB(), 120, 3, 3, 2)
    w = np.random.default_rng(0).uniform(0.1, 2.0, len(y))
    model = GaussianNB().fit(X, y, sample_weight=w)
    phi = shapley_values(model, X, output="joint_log_likelihood")
    # the base value is the weighted mean of the joint log-likelihood over the training rows
    np.testing.assert_allclose(base_values(model, output="joint_log_likelihood"),
                               np.average(model.predict_joint_log_proba(X), axis=0, weights=w), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(np.average(phi, axis=0, weights=w), 0, atol=1e-10)


def test_sparse_counts():
    sp = pytest.importorskip("scipy.sparse")
    X, y = _data(MultinomialNB(), 50, 6, 2, 3)
    model = MultinomialNB().fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(shapley_values(model, sp.csr_matrix(X)), shapley_values(model, X), rtol=0, atol=0)


def test_kernel_explainer_at_convergence():
    shap = pytest.importorskip("shap", reason="shap (the compare extra) is the reference here")
    X, y = _data(GaussianNB(), 100, 5, 2, 4)
    model = GaussianNB().fit(X, y)
    B = X[:15]
    ke = shap.KernelExplainer(lambda Z: explained_output(model, Z)[:, 1], B)
    sv = np.asarray(ke.shap_values(X[20:23], nsamples=2 ** 5, l1_reg=False, silent=True))
    np.testing.assert_allclose(sv, shapley_values(model, X[20:23], background=B)[:, :, 1], rtol=1e-10, atol=1e-10)


@parametrize_with_checks([SupervisedKNeighborsClassifier(model=GaussianNB())])
def test_sklearn_api_knn_with_gaussian_nb(estimator, check):
    check(estimator)


# ---- one view per call, one interface for every naive Bayes ----------------------------------------------------------
def test_every_naive_bayes_is_read_through_one_interface():
    "part A's weighted naive Bayes and scikit-learn's models give the same view interface; the functions take either."
    from xai_geometry.naive_bayes.classifier import random_model, random_parts
    from xai_geometry.naive_bayes.shapley import WeightedNaiveBayesView, naive_bayes_view
    from xai_geometry.naive_bayes.sklearn_models import NaiveBayesView
    rng = np.random.default_rng(0)
    wnb = random_model(rng, n_classes=3, n_features=4); P = random_parts(rng, wnb, 5)
    X = rng.normal(size=(40, 4)); y = np.arange(40) % 3
    for model, rows in ((wnb, P), (GaussianNB().fit(X, y), X[:5])):
        view = naive_bayes_view(model)
        assert isinstance(view, (WeightedNaiveBayesView, NaiveBayesView))
        A = view.check(rows)
        for out in ("log_odds", "joint_log_likelihood", "centred_log_likelihood"):
            terms, const = view.terms(out)
            phi = view.evaluate(terms, A) - view.expected(terms)
            np.testing.assert_allclose(phi.sum(axis=1) + const + view.expected(terms).sum(axis=0), view.explained(A, out),
                                       rtol=1e-10, atol=1e-10)
            np.testing.assert_array_equal(phi, shapley_values(model, rows, output=out))     # the functions read the same view
        assert (view.n_features, view.n_classes, len(view.feature_names)) == (4, 3, 4)


@pytest.mark.parametrize("pipeline", [False, True])
def test_a_call_builds_the_view_and_its_terms_once(monkeypatch, pipeline):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from xai_geometry.naive_bayes import shapley as S
    from xai_geometry.naive_bayes import sklearn_models as sm
    built = {"view": 0, "terms": 0}
    init, terms = sm.NaiveBayesView.__init__, sm.NaiveBayesView.terms
    def counted_init(self, *a, **k): built["view"] += 1; return init(self, *a, **k)
    def counted_terms(self, *a, **k): built["terms"] += 1; return terms(self, *a, **k)
    monkeypatch.setattr(sm.NaiveBayesView, "__init__", counted_init)
    monkeypatch.setattr(sm.NaiveBayesView, "terms", counted_terms)
    rng = np.random.default_rng(1); X = rng.normal(size=(60, 3)); y = np.arange(60) % 3
    model = (make_pipeline(StandardScaler(), GaussianNB()) if pipeline else GaussianNB()).fit(X, y)
    for call in (lambda: S.explain(model, X[:5], background=X[:20]), lambda: S.shapley_values(model, X[:5]),
                 lambda: S.base_values(model, X[:5]), lambda: S.Prepared(model, background=X[:20])):
        built.update(view=0, terms=0); call()
        assert built == {"view": 1, "terms": 1}, built
    prepared = S.Prepared(model); built.update(view=0, terms=0)
    prepared(X[:5]); prepared(X[5:9])
    assert built == {"view": 0, "terms": 0}                                        # set up once: a call builds nothing
