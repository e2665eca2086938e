"""The serving paths give the explanations of the general ones: a prepared naive Bayes explainer
(`naive_bayes.shapley.Prepared`, which the door's `Explainer` keeps) equals `naive_bayes.explain` on every input,
its binary GaussianNB path gives the floats of `shapley_values`, its fallbacks name the bad column as the general
path does; a neuralized pipeline scales rows with the same floats as its scikit-learn steps, and the door's LRP
equals the network's relevance. Timings are `xai-geometry bench serve`'s, never asserted here."""
import numpy as np
import pandas as pd
import pytest
from sklearn.naive_bayes import BernoulliNB, GaussianNB, MultinomialNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, RobustScaler, StandardScaler
from sklearn.svm import SVC

import xai_geometry as xg
from xai_geometry.naive_bayes import explain as nb_explain
from xai_geometry.naive_bayes.shapley import Prepared, shapley_values
from xai_geometry.neuralized import neuralize


def _data(seed=0, n=400, d=6):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, d)) * np.arange(1, d + 1) + np.arange(d), columns=[f"f{j}" for j in range(d)])
    y = (X.f0 + X.f1 * 0.3 + rng.normal(size=n) > 1).astype(int)
    return X, y


def _same(a, b):
    np.testing.assert_array_equal(a.values, b.values)
    np.testing.assert_array_equal(a.base_values, b.base_values)
    assert tuple(a.feature_names) == tuple(b.feature_names) and a.output == b.output and a.method == b.method
    assert a.info == b.info
    pd.testing.assert_frame_equal(a.data.reset_index(drop=True), b.data.reset_index(drop=True), check_dtype=False)


@pytest.mark.parametrize("seed", range(3))
def test_binary_gaussian_path_is_shapley_values(seed):
    X, y = _data(seed)
    nb = GaussianNB().fit(X, y)
    P = Prepared(nb)
    e = P(X)
    np.testing.assert_array_equal(e.values, shapley_values(nb, X)[:, :, 1])      # the same floats
    np.testing.assert_allclose(e.total, nb.predict_joint_log_proba(X) @ [-1, 1], rtol=1e-12, atol=1e-9)
    _same(e, nb_explain(nb, X))
    _same(xg.Explainer(nb)(X), nb_explain(nb, X))
    _same(P(X.iloc[[3]]), nb_explain(nb, X.iloc[[3]]))                              # one row
    Xa = X.to_numpy()
    nb_a = GaussianNB().fit(Xa, y)
    _same(Prepared(nb_a)(Xa), nb_explain(nb_a, Xa))                                 # an array, no names


def test_gaussian_fallbacks_equal_the_general_path():
    X, y = _data(1)
    nb = GaussianNB().fit(X, y)
    P = Prepared(nb)
    shuffled = X[list(reversed(X.columns))]                                         # matched by name
    _same(P(shuffled), nb_explain(nb, shuffled))
    ints = X.round().astype(int)
    _same(P(ints), nb_explain(nb, ints))
    bad = X.copy(); bad.iloc[2, 3] = np.nan
    with pytest.raises(ValueError, match="f3"): P(bad)
    with pytest.raises(ValueError, match="f3"): nb_explain(nb, bad)
    text = X.copy(); text["f1"] = text["f1"].astype(object); text.loc[0, "f1"] = "a"
    with pytest.raises(ValueError, match="f1"): P(text)
    with pytest.raises(ValueError): P(X.iloc[:, :4])


@pytest.mark.parametrize("make", [lambda: GaussianNB(), lambda: BernoulliNB(binarize=0.0), lambda: MultinomialNB()])
@pytest.mark.parametrize("output", ["log_odds", "joint_log_likelihood", "centred_log_likelihood"])
def test_prepared_equals_explain_for_the_family(make, output):
    X, y = _data(2)
    y3 = np.digitize(X.f0, [0.0, 1.0])                                              # three classes
    if isinstance(make(), MultinomialNB): X = X.abs()
    for target in (y, y3):
        nb = make().fit(X, target)
        bg = X.iloc[:50]
        _same(Prepared(nb, output=output)(X), nb_explain(nb, X, output=output))
        _same(Prepared(nb, output=output, background=bg)(X), nb_explain(nb, X, output=output, background=bg))
        _same(xg.Explainer(nb, output=output)(X), nb_explain(nb, X, output=output))


@pytest.mark.parametrize("steps", [(StandardScaler(),), (MinMaxScaler(),), (MaxAbsScaler(),), (RobustScaler(),),
                                   (StandardScaler(with_mean=False),), (RobustScaler(with_centering=False), MinMaxScaler()),
                                   (StandardScaler(with_std=False),)], ids=lambda s: "+".join(type(t).__name__ for t in s))
def test_pipeline_scaling_is_the_steps_floats(steps):
    X, y = _data(3)
    pipe = make_pipeline(*steps, SVC(gamma=0.2)).fit(X, y)
    net = neuralize(pipe)
    Z = X
    for s in pipe[:-1]: Z = s.transform(Z)
    np.testing.assert_array_equal(net.transform(X), np.asarray(Z))
    e = xg.Explainer(pipe)(X.iloc[:40])
    np.testing.assert_array_equal(e.values, net.relevance(X.iloc[:40]))
    np.testing.assert_allclose(e.total, net.decision_function(X.iloc[:40]), rtol=1e-9, atol=1e-9)
    _same(e, xg.explain(pipe, X.iloc[:40]))
    one = xg.Explainer(pipe)(X.iloc[[7]])
    np.testing.assert_allclose(one.values, e.values[[7]], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dependence", ["gaussian", "gaussian_copula", "nonparametric"])
def test_gnb_explainer_is_part_c_explain(dependence):
    "The door keeps part C's prepared explainer: the values and the record of `gnb.explain`, batched and one DataFrame row."
    from xai_geometry.gnb import GeneralizedNaiveBayes, explain as gnb_explain
    from xai_geometry.gnb.shapley import Prepared as GNBPrepared
    X, y = _data(4, n=150, d=4)
    gnb = GeneralizedNaiveBayes(dependence=dependence).fit(X, y)
    B = X.iloc[:30]
    E = xg.Explainer(gnb, background=B)
    assert isinstance(E.prepared_.prepared, GNBPrepared)         # set up once, by part C
    _same(E(X.iloc[40:90]), gnb_explain(gnb, X.iloc[40:90], background=B))
    _same(E(X.iloc[[7]]), gnb_explain(gnb, X.iloc[[7]], background=B))
    _same(xg.Explainer(gnb)(X.iloc[:5]), gnb_explain(gnb, X.iloc[:5]))              # the model's own background_
