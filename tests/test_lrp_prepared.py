"""Part B's LRP set up once: a prepared explainer's call runs only the rows' check and the two passes (a bounded,
deterministic number of module changes; no network built, no parameter checked); pipelines through the one pipeline
adapter; the one-class SVM and k-means as `Network`s whose β is a rule parameter honoured by every entry."""
import numpy as np
import pandas as pd
import pytest
from sklearn.cluster import KMeans
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, OneClassSVM

import xai_geometry as xg
from xai_geometry import neuralized, validation
from xai_geometry.explanation import LazyRows
from xai_geometry.experiments.bench_serve import module_changes
from xai_geometry.neuralized import models, network
from xai_geometry.neuralized.kmeans import NeuralizedKMeans
from xai_geometry.neuralized.one_class import NeuralizedOneClassSVM

RNG = np.random.default_rng(0)
X = pd.DataFrame(RNG.normal(size=(300, 5)) * [1, 10, 100, 0.1, 3], columns=list("abcde"))
y = ((X.a + X.b / 10) * (X.c / 100 - X.d * 10) > 0).astype(int)


@pytest.fixture(scope="module")
def svc():
    return make_pipeline(StandardScaler(), SVC(gamma=0.1)).fit(X, y)


def test_a_prepared_scaler_svc_changes_module_at_most_12_times_per_call(svc):
    E = xg.Explainer(svc, method="lrp")
    E(X.iloc[[5]])
    n, changes = module_changes(lambda: E(X.iloc[[5]]))
    assert n <= 12, changes
    called = {c[2] for c in changes}
    assert not called & {"neuralize", "check_params", "rule", "describe", "resolve", "_adapter", "__init__"}, changes


def test_the_call_builds_nothing(svc, monkeypatch):
    E = xg.Explainer(svc)
    before = E(X.iloc[:3])
    def refuse(*a, **k): raise AssertionError("set-up repeated in a call")
    for mod, name in ((models, "neuralize"), (models, "_final_network"), (network, "check_params"), (validation, "check_params")):
        monkeypatch.setattr(mod, name, refuse)
    after = E(X.iloc[:3])
    np.testing.assert_array_equal(after.values, before.values)
    assert isinstance(after.__dict__["_data"], LazyRows)              # the rows' frame: built when read
    pd.testing.assert_frame_equal(after.data, X.iloc[:3])


def test_the_door_and_neuralized_explain_agree_through_the_adapter(svc):
    a, b = xg.explain(svc, X.iloc[:40]), neuralized.explain(svc, X.iloc[:40])
    np.testing.assert_array_equal(a.values, b.values)
    assert a.method == b.method and a.method.endswith("summed per raw column")
    assert xg.Explainer(svc).columns_ is not None and xg.Explainer(svc).final_ is svc[-1]
    # the same numbers as the final network on the pipeline's own transform
    np.testing.assert_array_equal(a.values, neuralized.neuralize(svc[-1]).relevance(svc[0].transform(X.iloc[:40])))


def test_scaled_manhattan_knn_has_the_votes_sign_on_95_per_cent_of_rows():
    Xt = pd.DataFrame(np.random.default_rng(1).normal(size=(600, 4)) * [1, 50, 0.2, 7], columns=list("pqrs"))
    yt = ((Xt.p > 0) ^ (Xt.q * Xt.s > 0)).astype(int)
    knn = make_pipeline(StandardScaler(), KNeighborsClassifier(5, metric="manhattan")).fit(Xt, yt)
    e = xg.explain(knn, Xt)
    vote = knn.predict_proba(Xt)[:, 1] - 0.5
    assert np.mean(np.sign(e.total) == np.sign(vote)) >= 0.95


def test_one_class_and_kmeans_are_networks_whose_beta_every_entry_honours():
    Z = np.random.default_rng(2).normal(size=(80, 3))
    oc, km = OneClassSVM(gamma=0.5, nu=0.2).fit(Z), KMeans(3, n_init=2, random_state=0).fit(Z)
    for model, cls in ((oc, NeuralizedOneClassSVM), (km, NeuralizedKMeans)):
        net = neuralized.neuralize(model)
        assert isinstance(net, cls) and isinstance(net, network.Network) and net.rule_type.params == ("beta",)
        ref = net.relevance(Z[:10], beta=0.7)
        for e in (xg.explain(model, Z[:10], beta=0.7), xg.Explainer(model, beta=0.7)(Z[:10]),
                  neuralized.explain(model, Z[:10], beta=0.7), net.explain(Z[:10], beta=0.7),
                  xg.explain(make_pipeline(StandardScaler(with_mean=False, with_std=False), model).fit(Z), Z[:10], beta=0.7)):
            np.testing.assert_allclose(e.values, ref, rtol=1e-12, atol=1e-14)
            assert e.info["beta"] == 0.7
        with pytest.raises(ValueError, match="eta does not apply"):
            xg.explain(model, Z[:3], eta=0.5)


def test_kmeans_with_identical_or_nearly_identical_centres():
    Z = np.random.default_rng(3).normal(size=(60, 2))
    km = KMeans(3, n_init=1, random_state=0).fit(Z)
    km.cluster_centers_[1] = km.cluster_centers_[0]
    with pytest.raises(ValueError, match="identical cluster centres: no default beta; pass beta="):
        xg.explain(km, Z[:5])
    for entry in (lambda: xg.explain(km, Z[:5], beta=1.0), lambda: neuralized.explain(km, Z[:5], beta=1.0),
                  lambda: xg.Explainer(km, beta=1.0)(Z[:5]), lambda: NeuralizedKMeans(km, beta=1.0).explain(Z[:5])):
        e = entry()
        assert np.isfinite(e.values).all() and e.info["beta"] == 1.0
    for shift, eps in ((0.0, 1e-12), (1e4, 1e-9)):                 # equal up to rounding, near or far from the origin
        near = KMeans(3, n_init=1, random_state=0).fit(Z + shift)
        near.cluster_centers_[1] = near.cluster_centers_[0] + eps
        e = xg.explain(near, Z[:20] + shift)
        np.testing.assert_allclose(e.total, NeuralizedKMeans(near).output(Z[:20] + shift), rtol=1e-9, atol=1e-9)


def test_neuralize_pipeline_is_the_adapter_bound_to_its_network():
    # neuralize(pipeline) is the one pipeline adapter bound to the final network: explain's own path, bit for bit
    Xn, yn = X.to_numpy(float), y
    pipe = make_pipeline(StandardScaler(), SVC()).fit(Xn, yn)
    net = neuralized.neuralize(pipe)
    assert isinstance(net, neuralized.Prepared) and neuralized.neuralize(net) is net and neuralized.supports(net)
    Z = pipe[:-1].transform(Xn[:40])
    np.testing.assert_array_equal(net.transform(Xn[:40]), Z)
    np.testing.assert_array_equal(net.relevance(Xn[:40]), neuralized.neuralize(pipe[-1]).relevance(Z))
    np.testing.assert_array_equal(net.decision_function(Xn[:40]), neuralized.neuralize(pipe[-1]).decision_function(Z))
    np.testing.assert_array_equal(neuralized.explain(net, Xn[:40]).values, neuralized.explain(pipe, Xn[:40]).values)
