"Part A: bad input, property tests and cross-checks against Khiops for the weighted naive Bayes."
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from xai_geometry.naive_bayes.classifier import WeightedNaiveBayes, random_model, random_parts
from xai_geometry.naive_bayes.geometry import pairwise_distances, embedding
from xai_geometry.naive_bayes.neighbors import SupervisedKNeighborsClassifier
from xai_geometry.naive_bayes.shapley import shapley_values, one_vs_rest_log_odds, expected_log_odds
from xai_geometry.khiops import khiops_available, run_khiops


def _frame(n=300, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = pd.DataFrame({
        "num": y + rng.normal(0, 0.7, n),
        "cat": pd.Series(np.where(rng.random(n) < 0.7, np.array(["a", "b", "c"])[y], "d"), dtype=object),
        "noise": rng.normal(size=n),
    })
    X.loc[rng.random(n) < 0.05, "num"] = np.nan
    X.loc[rng.random(n) < 0.05, "cat"] = None
    return X, pd.Series(np.array(["u", "v", "w"])[y], name="class")


@pytest.fixture(scope="module")
def fitted():
    X, y = _frame()
    return X, y, WeightedNaiveBayes().fit(X, y)


def test_unseen_categories_and_all_missing_columns(fitted):
    X, y, nb = fitted
    Z = X.head(20).copy()
    Z["cat"] = "never-seen"
    Z["num"] = np.nan
    p = nb.predict_proba(Z)
    assert p.shape == (20, 3) and np.isfinite(p).all()
    np.testing.assert_allclose(p.sum(axis=1), 1)
    assert (nb.part_indices(Z) >= 0).all()
    phi = shapley_values(nb, Z)
    assert np.isfinite(phi).all()


def test_columns_reordered_and_missing(fitted):
    X, y, nb = fitted
    np.testing.assert_allclose(nb.predict_proba(X[X.columns[::-1]]), nb.predict_proba(X))
    with pytest.raises(ValueError, match="cat"):
        nb.predict_proba(X.drop(columns="cat"))
    knn = SupervisedKNeighborsClassifier().fit(X, y)
    np.testing.assert_array_equal(knn.predict(X[X.columns[::-1]].head(30)), knn.predict(X.head(30)))
    with pytest.raises(ValueError, match="noise"):
        knn.predict(X.drop(columns="noise"))


def test_one_class_in_training():
    X, y = _frame(50)
    y1 = pd.Series(["only"] * len(y))
    nb = WeightedNaiveBayes().fit(X, y1)
    np.testing.assert_array_equal(nb.predict(X), "only")
    np.testing.assert_allclose(nb.predict_proba(X), 1.0)
    assert np.all(shapley_values(nb, X) == 0)
    knn = SupervisedKNeighborsClassifier().fit(X, y1)
    np.testing.assert_array_equal(knn.predict(X), "only")


def test_class_absent_from_fold(fitted):
    X, y, _ = fitted
    keep = (y != "w").to_numpy()
    nb = WeightedNaiveBayes().fit(X[keep], y[keep])
    assert list(nb.classes_) == ["u", "v"]
    assert nb.predict_proba(X).shape == (len(X), 2)
    with pytest.raises(ValueError, match="weights"):
        WeightedNaiveBayes(weights=[2.0, 0, 0]).fit(X, y)


def test_bad_arguments(fitted):
    X, y, nb = fitted
    with pytest.raises(ValueError, match="kind"):
        pairwise_distances(nb, X.head(3), kind="euclid")
    with pytest.raises(ValueError, match="complement"):
        shapley_values(nb, X.head(3), complement="rest")
    with pytest.raises(ValueError, match="ties"):
        SupervisedKNeighborsClassifier(ties="random").fit(X, y)
    with pytest.raises(ValueError, match="y"):
        WeightedNaiveBayes().fit(X, y.head(10))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), J=st.integers(2, 10), M=st.integers(1, 30))
def test_properties_random_models(seed, J, M):
    rng = np.random.default_rng(seed)
    model = random_model(rng, n_classes=J, n_features=M)
    P = random_parts(rng, model, 5)
    for comp in ("pooled", "mixture"):
        phi = shapley_values(model, P, complement=comp)
        np.testing.assert_allclose(phi.sum(axis=1), one_vs_rest_log_odds(model, P, complement=comp) - expected_log_odds(model, complement=comp),
                                   rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(pairwise_distances(model, P, kind="shap", complement=comp),
                                   pairwise_distances(model, P, kind="odds", complement=comp), rtol=1e-9, atol=1e-12)
    lp = model.predict_log_proba(P)
    delta = np.abs(lp[:, None] - lp[None]).sum(-1)
    assert np.all(delta <= pairwise_distances(model, P, kind="global") * (1 + 1e-9) + 1e-9)


def test_from_khiops_matches_khiops():
    ok, why = khiops_available()
    if not ok: pytest.skip(why)
    X, y = _frame(600, seed=1)
    Xt, _ = _frame(200, seed=2)
    Xt.loc[:20, "cat"] = "unseen"
    with tempfile.TemporaryDirectory() as tmp:
        ref = run_khiops(X, y, Xt, workdir=tmp)
        km = WeightedNaiveBayes.from_khiops(Path(tmp) / "AnalysisResults.model.kdic")
    assert list(km.classes_) == ref["classes"]
    p = np.asarray(ref["test"]["probabilities"])
    N, J = km.n_total_, len(km.classes_)
    raw = p * (1 + 0.5 / (N + 1)) - 0.5 / (J * (N + 1))
    np.testing.assert_allclose(km.predict_proba(Xt), raw, atol=1e-9)
    names = ref["test"]["shapley"]["variables"]
    cols = [list(km.feature_names_in_).index(v) for v in names]
    theirs = np.asarray(ref["test"]["shapley"]["values"]).transpose(0, 2, 1)
    np.testing.assert_allclose(shapley_values(km, Xt)[:, cols], theirs, atol=1e-8)


def test_from_khiops_prior_only_model():
    ok, why = khiops_available()
    if not ok: pytest.skip(why)
    rng = np.random.default_rng(5)
    X = pd.DataFrame({"a": rng.normal(size=150), "b": rng.choice(["x", "y"], 150)})
    y = pd.Series(rng.choice(["p", "q"], 150, p=[0.6, 0.4]))
    with tempfile.TemporaryDirectory() as tmp:
        ref = run_khiops(X, y, workdir=tmp)
        km = WeightedNaiveBayes.from_khiops(Path(tmp) / "AnalysisResults.model.kdic")
    np.testing.assert_array_equal(km.weights_, 0)
    p = np.asarray(ref["test"]["probabilities"])
    N, J = km.n_total_, 2
    np.testing.assert_allclose(km.predict_proba(X), p * (1 + 0.5 / (N + 1)) - 0.5 / (J * (N + 1)), atol=1e-9)
    assert np.all(shapley_values(km, X) == 0)


def _reference_knn(D, y, k, ties, J):
    out = np.zeros((len(D), J))
    for a, row in enumerate(D):
        order = sorted(range(len(row)), key=lambda b: (row[b], b))
        if ties == "index": nb = order[:k]
        else:
            dk = row[order[k - 1]]; nb = [b for b in order if row[b] <= dk + 1e-9 * (1 + dk)]
        for b in nb: out[a, y[b]] += 1
        out[a] /= len(nb)
    return out


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.sampled_from([1, 2, 4]), ties=st.sampled_from(["index", "vote"]),
       kind=st.sampled_from(["nb", "snb", "global", "odds", "shap"]))
def test_knn_tie_rules_match_reference(seed, k, ties, kind):
    rng = np.random.default_rng(seed)
    J = int(rng.integers(2, 4))
    model = random_model(rng, n_classes=J, n_features=int(rng.integers(1, 4)), max_parts=3)
    Ptr, Pte = random_parts(rng, model, 40), random_parts(rng, model, 10)
    ytr = rng.integers(0, J, 40); ytr[:J] = np.arange(J)
    knn = SupervisedKNeighborsClassifier(kind=kind, n_neighbors=k, ties=ties, model=model, prefit=True).fit(Ptr, ytr)
    ref = _reference_knn(pairwise_distances(model, Pte, Ptr, kind=kind), ytr, k, ties, J)
    np.testing.assert_allclose(knn.predict_proba(Pte), ref, atol=1e-12)
    if ties == "index":
        d, ind = knn.kneighbors(Pte)
        D = pairwise_distances(model, Pte, Ptr, kind=kind)
        np.testing.assert_allclose(np.take_along_axis(D, ind, 1), d, rtol=1e-9, atol=1e-12)


def test_all_missing_column_in_training():
    X, y = _frame(200)
    X["empty"] = np.nan
    X["empty_cat"] = pd.Series([None] * len(X), dtype=object)
    nb = WeightedNaiveBayes().fit(X, y)
    m = list(nb.feature_names_in_).index("empty")
    assert nb.n_parts_[m] == 1 and nb.weights_[m] == 0
    assert np.isfinite(nb.predict_proba(X)).all()
    assert np.all(shapley_values(nb, X)[:, m] == 0)


def test_from_khiops_maps_integer_labels_back():
    # Khiops reads the target as text ("10" sorts before "2"); `classes=` restores the labels and their order
    ok, why = khiops_available()
    if not ok: pytest.skip(why)
    rng = np.random.default_rng(7)
    X = pd.DataFrame({"a": rng.normal(size=400), "b": rng.choice(["x", "y", "z"], 400)})
    y = pd.Series(np.where(X["a"] > 0.3, 10, np.where(X["b"] == "x", 2, 1)))
    with tempfile.TemporaryDirectory() as tmp:
        ref = run_khiops(X, y, workdir=tmp)
        km_text = WeightedNaiveBayes.from_khiops(Path(tmp) / "AnalysisResults.model.kdic")
        km = WeightedNaiveBayes.from_khiops(Path(tmp) / "AnalysisResults.model.kdic", classes=np.unique(y))
        with pytest.raises(ValueError, match="do not match"):
            WeightedNaiveBayes.from_khiops(Path(tmp) / "AnalysisResults.model.kdic", classes=[1, 2, 3])
    assert list(km_text.classes_) == ref["classes"] == ["1", "10", "2"]
    np.testing.assert_array_equal(km.classes_, [1, 2, 10])
    order = [ref["classes"].index(str(c)) for c in km.classes_]
    np.testing.assert_allclose(km.predict_proba(X), km_text.predict_proba(X)[:, order], atol=1e-12)
    np.testing.assert_allclose(shapley_values(km, X), shapley_values(km_text, X)[:, :, order], atol=1e-12)
    assert set(km.predict(X)) <= {1, 2, 10}


def test_joint_log_likelihood_is_a_deprecated_alias(fitted):
    X, y, nb = fitted
    with pytest.warns(FutureWarning, match="predict_joint_log_proba"):
        old = nb.joint_log_likelihood(X)
    np.testing.assert_array_equal(old, nb.predict_joint_log_proba(X))
    np.testing.assert_array_equal(nb.predict_joint_log_proba(X), nb.joint_log_proba_from_parts(nb.part_indices(X)))
    np.testing.assert_array_equal(nb.predict_log_proba(X), nb.log_proba_from_parts(nb.part_indices(X)))


@pytest.mark.parametrize("output", ["log_odds", "joint_log_likelihood"])
@pytest.mark.parametrize("complement", ["pooled", "mixture"])
def test_explain_conserves_the_explained_output(fitted, output, complement):
    from xai_geometry import Explanation
    from xai_geometry.naive_bayes import explain
    from xai_geometry.naive_bayes.shapley import explained_output
    X, y, nb = fitted
    e = explain(nb, X, output=output, complement=complement)
    assert isinstance(e, Explanation) and e.values.shape == (len(X), 3, 3) and e.output_names == ("u", "v", "w")
    assert e.feature_names == ("num", "cat", "noise") and list(e.data.columns) == ["num", "cat", "noise"]
    e.check_additivity(explained_output(nb, X, output=output, complement=complement), rtol=1e-10, atol=1e-10)
    if output == "joint_log_likelihood": e.check_additivity(nb.predict_joint_log_proba(X), rtol=1e-10, atol=1e-10)
    else: e.check_additivity(one_vs_rest_log_odds(nb, X, complement=complement), rtol=1e-10, atol=1e-10)
