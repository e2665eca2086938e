"""The one-class SVM network and NEON for k-means (nbs/23a_one_class_svm, nbs/23b_kmeans): conservation, equality with
equation-literal references, the models' own outputs, input validation and clear errors on bad input."""
import numpy as np
import pandas as pd
import pytest
from sklearn.cluster import KMeans, MiniBatchKMeans, BisectingKMeans
from sklearn.svm import OneClassSVM, SVC

from xai_geometry.explanation import Explanation
from xai_geometry.neuralized.kmeans import NeuralizedKMeans, heuristic_beta_kmeans
from xai_geometry.neuralized.one_class import NeuralizedOneClassSVM


def one_class_reference(U, alpha, gamma, X, beta):
    "o(x) and R_d by the equations of nbs/23a, loop by loop."
    m, D = U.shape; abar = alpha / alpha.sum()
    O, R = np.zeros(len(X)), np.zeros(X.shape)
    for n, x in enumerate(X):
        dist = [float(((x - U[i]) ** 2).sum()) for i in range(m)]
        h = [dist[i] - np.log(abar[i]) / gamma for i in range(m)]
        lo = min(h)
        O[n] = lo - np.log(sum(np.exp(-gamma * (hi - lo)) for hi in h)) / gamma
        Z = sum(np.exp(-beta * (hi - lo)) for hi in h)
        for i in range(m):
            Ri = np.exp(-beta * (h[i] - lo)) / Z * O[n]
            for d in range(D):
                R[n, d] += ((x[d] - U[i, d]) ** 2 / dist[i] if dist[i] > 0 else 1 / D) * Ri
    return O, R


def neon_reference(mu, X, beta):
    "f_c(x) of the own cluster and R_d by the equations of nbs/23b, loop by loop."
    K, D = mu.shape
    F, R = np.zeros(len(X)), np.zeros(X.shape)
    for n, x in enumerate(X):
        c = int(np.argmin([((x - mu[k]) ** 2).sum() for k in range(K)]))
        rivals = [k for k in range(K) if k != c]
        h = {k: 2 * (mu[c] - mu[k]) @ x + mu[k] @ mu[k] - mu[c] @ mu[c] for k in rivals}
        F[n] = min(h.values()); Z = sum(np.exp(-beta * (h[k] - F[n])) for k in rivals)
        for k in rivals:
            Rk = np.exp(-beta * (h[k] - F[n])) / Z * F[n]; w = 2 * (mu[c] - mu[k]); m = (mu[c] + mu[k]) / 2
            if F[n] > 0: R[n] += (x - m) * w / h[k] * Rk
    return F, R


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(60, 4)), rng.normal(size=(60, 4)) + 4])
    return X, rng.normal(size=(25, 4)) * 2 + 1


@pytest.mark.parametrize("seed", range(4))
def test_one_class_equals_reference_and_conserves(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(50, 3))
    model = OneClassSVM(gamma=10 ** rng.uniform(-1, 0.3), nu=rng.uniform(0.1, 0.5)).fit(X)
    net = NeuralizedOneClassSVM(model)
    Q = np.vstack([rng.normal(size=(8, 3)) * 2, model.support_vectors_[:2]])   # at support vectors too
    for beta in (None, 4 * net.gamma_):
        O, R_ref = one_class_reference(model.support_vectors_, model.dual_coef_.ravel(), net.gamma_, Q,
                                       net.gamma_ if beta is None else beta)
        R = net.relevance(Q, beta=beta)
        np.testing.assert_allclose(R, R_ref, rtol=1e-9, atol=1e-10 * O.max())
        np.testing.assert_allclose(R.sum(1), net.output(Q), rtol=1e-10)
        assert (R >= 0).all()
    np.testing.assert_allclose(net.decision_function(Q), model.decision_function(Q), rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(net.output(Q) > net.threshold_, model.predict(Q) == -1)


def test_one_class_explain_record(data):
    X, Q = data
    cols = ["a", "b", "c", "d"]
    model = OneClassSVM(nu=0.2).fit(pd.DataFrame(X, columns=cols))
    net = NeuralizedOneClassSVM(model)
    e = net.explain(pd.DataFrame(Q, columns=cols)[cols[::-1]])   # the columns in another order, matched by name
    assert isinstance(e, Explanation) and e.values.shape == Q.shape and list(e.feature_names) == cols
    np.testing.assert_allclose(e.total, net.output(pd.DataFrame(Q, columns=cols)), rtol=1e-10)
    np.testing.assert_allclose(e.values, net.relevance(pd.DataFrame(Q, columns=cols)), rtol=1e-12)
    assert e.info["network"] == "NeuralizedOneClassSVM" and e.info["beta"] == net.gamma_
    with pytest.raises(ValueError, match="'c'"): net.relevance(pd.DataFrame(Q, columns=cols).drop(columns="c"))


def test_one_class_bad_input(data):
    X, _ = data
    with pytest.raises(Exception, match="not fitted"): NeuralizedOneClassSVM(OneClassSVM())
    with pytest.raises(ValueError, match="kernel"): NeuralizedOneClassSVM(OneClassSVM(kernel="poly").fit(X))
    with pytest.raises(TypeError, match="model must be"): NeuralizedOneClassSVM(SVC().fit(X, X[:, 0] > 2))
    net = NeuralizedOneClassSVM(OneClassSVM().fit(X))
    with pytest.raises(ValueError, match="beta"): net.relevance(X, beta=0.0)
    with pytest.raises(ValueError, match="X"): net.relevance(X[:, :3])
    bad = X[:3].copy(); bad[0, 1] = np.nan
    with pytest.raises(ValueError, match="X"): net.relevance(bad)
    with pytest.raises(ValueError, match="chunk_size"): NeuralizedOneClassSVM(OneClassSVM().fit(X), chunk_size=0)


@pytest.mark.parametrize("Model", [KMeans, MiniBatchKMeans])
@pytest.mark.parametrize("seed", range(3))
def test_kmeans_equals_reference_and_conserves(Model, seed):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(4, 3)) * 3
    X = centres[rng.integers(4, size=200)] + rng.normal(size=(200, 3))
    model = Model(n_clusters=4, n_init=2, random_state=seed).fit(X)
    Q = np.vstack([rng.normal(size=(10, 3)) * 3, model.cluster_centers_[:1]])
    for beta in (None, 0.05, 5.0):
        net = NeuralizedKMeans(model, beta=beta)
        F, R_ref = neon_reference(model.cluster_centers_, Q, net.beta_)
        R = net.relevance(Q)
        np.testing.assert_allclose(R, R_ref, rtol=1e-9, atol=1e-10 * (1 + F.max()))
        np.testing.assert_allclose(R.sum(1), net.output(Q), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(net.predict(Q), model.predict(Q))
    D2 = np.sort(model.transform(Q) ** 2, axis=1)
    np.testing.assert_allclose(net.output(Q), D2[:, 1] - D2[:, 0], rtol=1e-9, atol=1e-9)


def test_kmeans_explain_record_and_default_beta(data):
    X, Q = data
    cols = ["a", "b", "c", "d"]
    model = KMeans(n_clusters=2, n_init=2, random_state=0).fit(pd.DataFrame(X, columns=cols))
    net = NeuralizedKMeans(model)
    mu = model.cluster_centers_
    assert net.beta_ == pytest.approx(1 / ((mu[0] - mu[1]) ** 2).sum()) == heuristic_beta_kmeans(mu)
    e = net.explain(pd.DataFrame(Q, columns=cols)[cols[::-1]])
    np.testing.assert_allclose(e.total, net.output(pd.DataFrame(Q, columns=cols)), rtol=1e-10)
    assert list(e.feature_names) == cols and e.info["beta"] == net.beta_
    np.testing.assert_array_equal(e.info["clusters"], model.predict(pd.DataFrame(Q, columns=cols)))
    with pytest.raises(ValueError, match="'b'"): net.relevance(pd.DataFrame(Q, columns=cols).drop(columns="b"))


def test_kmeans_bad_input(data):
    X, _ = data
    with pytest.raises(Exception, match="not fitted"): NeuralizedKMeans(KMeans(2))
    with pytest.raises(TypeError, match="model must be"): NeuralizedKMeans(BisectingKMeans(2, random_state=0).fit(X))
    with pytest.raises(ValueError, match="single cluster"): NeuralizedKMeans(KMeans(1, n_init=1).fit(X))
    with pytest.raises(ValueError, match="beta"): NeuralizedKMeans(KMeans(2, n_init=1).fit(X), beta=-1.0)
    with pytest.raises(ValueError, match="X"): NeuralizedKMeans(KMeans(2, n_init=1).fit(X)).relevance(X[:, :2])


def test_far_rows_still_add_up(data):
    "Rows far from the training data (squared distances ~1e8 against logits ~1): the explanations still add up."
    X, _ = data
    rng = np.random.default_rng(1)
    far = rng.normal(size=(5, 4)) * 1e4
    km = NeuralizedKMeans(KMeans(n_clusters=3, n_init=2, random_state=0).fit(X))
    e = km.explain(far)
    np.testing.assert_allclose(e.total, km.output(far), rtol=1e-9)
    oc = NeuralizedOneClassSVM(OneClassSVM(gamma=1e-9).fit(X))
    e = oc.explain(far)
    np.testing.assert_allclose(e.total, oc.output(far), rtol=1e-9)
    assert (e.values >= 0).all()
