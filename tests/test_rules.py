"""The LRP rules (`neuralized.rules`): each against an equation-literal reference over seeds, through the networks that
use it, with its constraints and its Table-1 defaults; the Manhattan k-NN and the default level of regressions."""
import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn.datasets import make_classification
from sklearn.kernel_ridge import KernelRidge
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import SVC, SVR

from xai_geometry.neuralized import (BandRule, EtaRule, L1BandRule, NETWORKS, NeuralizedKNN, NeuralizedKernelRegression,
                                     NeuralizedManhattanKNN, NeuralizedSVM, Rule, explain, network_class, neuralize)
from xai_geometry.neuralized.lrp import heuristic_beta_svm, heuristic_eta_knn, heuristic_eta_svm, heuristic_kappa_knn


# ---------------------------------------------------------------- equation-literal references
def eta_reference(svc, x, eta, beta):
    "E_η(x) of eq. (6) pair by pair, p_i ∝ α_i^(β/γ) exp(−β‖x − u_i‖²) in each pool (eq. 3), the intercept a member at x."
    gamma = svc._gamma; coef = svc.dual_coef_.ravel(); U = svc.support_vectors_; theta = svc.intercept_[0]
    pos = [(U[l], coef[l]) for l in range(len(coef)) if coef[l] > 0] + ([(x, theta)] if theta > 0 else [])
    neg = [(U[l], -coef[l]) for l in range(len(coef)) if coef[l] < 0] + ([(x, -theta)] if theta < 0 else [])
    def probs(pool):
        lg = np.array([np.log(a) * beta / gamma - beta * ((x - u) ** 2).sum() for u, a in pool])
        return np.exp(lg - logsumexp(lg))
    p, q = probs(pos), probs(neg)
    E = np.zeros_like(x)
    for (ui, _), pi in zip(pos, p):
        for (uj, _), pj in zip(neg, q):
            E += (x - eta * (ui + uj) / 2) * 2 * (ui - uj) * pi * pj
    return E


def band_reference(Xtr, ytr, x, k, eta, kappa):
    "E_η(x) of eq. (6) with uniform probabilities on the ranks q − κ … q + κ of each class (eq. 4), ties by index."
    q = (k + 1) // 2; d2 = ((Xtr - x) ** 2).sum(1)
    order = lambda idx: idx[np.lexsort((idx, d2[idx]))]
    P = order(np.flatnonzero(ytr == 1))[q - kappa - 1:q + kappa]; N = order(np.flatnonzero(ytr == 0))[q - kappa - 1:q + kappa]
    E = np.zeros_like(x)
    for i in P:
        for j in N: E += (x - eta * (Xtr[i] + Xtr[j]) / 2) * 2 * (Xtr[i] - Xtr[j]) / (len(P) * len(N))
    return E


def l1_reference(Xtr, ytr, x, k, kappa):
    "R_c(x) = Σ_ij p_i p_j (|x_c − u_jc| − |x_c − u_ic|) on the bands of ranks q − κ … q + κ of each class (ℓ1)."
    q = (k + 1) // 2; d = np.abs(Xtr - x).sum(1)
    order = lambda idx: idx[np.lexsort((idx, d[idx]))]
    P = order(np.flatnonzero(ytr == 1))[q - kappa - 1:q + kappa]; N = order(np.flatnonzero(ytr == 0))[q - kappa - 1:q + kappa]
    R = np.zeros_like(x)
    for i in P:
        for j in N: R += (np.abs(x - Xtr[j]) - np.abs(x - Xtr[i])) / (len(P) * len(N))
    return R


def _data(seed, n=90, d=3):
    X, y = make_classification(n, d, n_informative=d, n_redundant=0, weights=[0.6], random_state=seed)
    return X + 2.0, y


# ---------------------------------------------------------------- each rule against its reference, over seeds
@pytest.mark.parametrize("seed", range(6))
def test_eta_rule_is_eq6_at_its_beta(seed):
    rng = np.random.default_rng(seed)
    X, y = _data(seed)
    svc = SVC(gamma=10 ** rng.uniform(-1, 0.5), C=10 ** rng.uniform(-1, 1)).fit(X, y)
    rule = EtaRule(eta=rng.uniform(), beta=svc._gamma * 10 ** rng.uniform(-1, 1))
    Xq = X[:5] + rng.normal(size=(5, X.shape[1]))
    E = NeuralizedSVM(svc).relevance(Xq, rule)
    R = np.array([eta_reference(svc, x, rule.eta, rule.beta) for x in Xq])
    np.testing.assert_allclose(E, R, rtol=1e-9, atol=1e-9 * np.abs(R).max())


@pytest.mark.parametrize("seed", range(6))
def test_band_rule_is_eq6_on_the_band(seed):
    rng = np.random.default_rng(seed)
    X, y = _data(seed)
    k = int(2 * rng.integers(1, 5) - 1); q = (k + 1) // 2
    net = NeuralizedKNN(KNeighborsClassifier(k).fit(X, y))
    Xq = X[:5] + rng.normal(size=(5, X.shape[1])) * 0.5
    for kappa in range(q):
        rule = BandRule(eta=rng.uniform(), kappa=kappa)
        E = net.relevance(Xq, rule)
        R = np.array([band_reference(X, y, x, k, rule.eta, kappa) for x in Xq])
        np.testing.assert_allclose(E, R, rtol=1e-9, atol=1e-9 * np.abs(R).max())


@pytest.mark.parametrize("seed", range(6))
def test_l1_band_rule_is_the_l1_double_sum(seed):
    rng = np.random.default_rng(seed)
    X, y = _data(seed)
    k = int(2 * rng.integers(1, 5) - 1); q = (k + 1) // 2
    net = NeuralizedManhattanKNN(KNeighborsClassifier(k, metric="manhattan").fit(X, y))
    Xq = X[:5] + rng.normal(size=(5, X.shape[1])) * 0.5
    for kappa in range(q):
        R = net.relevance(Xq, L1BandRule(kappa=kappa))
        np.testing.assert_allclose(R, [l1_reference(X, y, x, k, kappa) for x in Xq], rtol=0, atol=1e-12)
        t = net.explain_terms(Xq, kappa=kappa)
        np.testing.assert_allclose(t.relevance.sum(1) + t.root + t.gap, t.output, rtol=0, atol=1e-12)


# ---------------------------------------------------------------- constraints and defaults
class _Net:                                  # the attributes the rules read from a network
    gamma_, n_neighbors, q_ = 0.05, 9, 5


def test_table1_defaults():
    assert EtaRule().resolve(_Net()) == EtaRule(eta=heuristic_eta_svm(0.05), beta=heuristic_beta_svm(0.05))
    assert BandRule().resolve(_Net()) == BandRule(eta=heuristic_eta_knn(9), kappa=heuristic_kappa_knn(9))
    assert L1BandRule().resolve(_Net()) == L1BandRule(kappa=0)
    assert EtaRule(eta=0.5).resolve(_Net()).options() == {"eta": 0.5, "beta": 0.05}
    assert type(BandRule(eta=1, kappa=np.int64(2)).resolve(_Net()).kappa) is int


@pytest.mark.parametrize("rule,name,bad", [
    (EtaRule, "eta", [-0.1, 1.5, np.nan, np.inf, True, "a"]), (EtaRule, "beta", [0, -1.0, np.inf, np.nan, False]),
    (BandRule, "eta", [-1e-9, 2, np.nan]), (BandRule, "kappa", [-1, 1.5, True, "1", np.nan]),
    (L1BandRule, "kappa", [-1, 0.5, True])])
def test_constraints_name_the_parameter(rule, name, bad):
    for v in bad:
        with pytest.raises(ValueError, match=f"'{name}' parameter of {rule.__name__}"):
            rule(**{name: v})


def test_network_dependent_range():
    with pytest.raises(ValueError, match=r"'kappa' parameter of BandRule for _Net must be an int in the range \[0, 4\]"):
        BandRule(kappa=5).resolve(_Net())
    with pytest.raises(ValueError, match="'kappa' parameter of L1BandRule for _Net"):
        L1BandRule(kappa=5).resolve(_Net())
    assert BandRule(kappa=4).resolve(_Net()).kappa == 4


def test_a_network_takes_a_rule_or_its_parameters():
    X, y = _data(0)
    net = NeuralizedSVM(SVC(gamma=0.3).fit(X, y))
    np.testing.assert_array_equal(net.relevance(X[:7], EtaRule(eta=0.2, beta=0.6)), net.relevance(X[:7], eta=0.2, beta=0.6))
    np.testing.assert_array_equal(net.relevance(X[:7]), net.relevance(X[:7], net.rule()))
    with pytest.raises(TypeError, match="kappa"): net.relevance(X[:7], kappa=1)
    with pytest.raises(TypeError, match="EtaRule"): net.relevance(X[:7], BandRule())
    with pytest.raises(TypeError, match="not both"): net.relevance(X[:7], EtaRule(), eta=0.3)
    output, method = net.describe(EtaRule(eta=0.25))
    assert "γ⁻¹ log(A⁺/A⁻)" in output and method == "LRP (Bley et al.), η = 0.25, β = γ = 0.3"


def test_a_new_rule_is_one_class():
    class HalfRule(EtaRule):                               # the η-rule at η = ½ by default
        def default(self, name, network): return 0.5 if name == "eta" else super().default(name, network)
    X, y = _data(1)
    net = NeuralizedSVM(SVC(gamma=0.3).fit(X, y))
    np.testing.assert_array_equal(net.relevance(X[:5], HalfRule()), net.relevance(X[:5], eta=0.5))
    assert isinstance(HalfRule(), Rule)


# ---------------------------------------------------------------- the table, the Manhattan k-NN, the default level
def test_neuralize_is_a_table_others_extend():
    class MySVC(SVC): pass
    X, y = _data(2)
    assert network_class(MySVC(gamma=0.2).fit(X, y)) is NeuralizedSVM                   # found along the class hierarchy
    class Fake: pass
    NETWORKS[Fake] = NeuralizedSVM
    try: assert network_class(Fake()) is NeuralizedSVM
    finally: del NETWORKS[Fake]
    with pytest.raises(TypeError, match="got Fake"): network_class(Fake())


def test_manhattan_knn_sign_matches_its_prediction():
    from xai_geometry.datasets import load
    X, y = load("breast_cancer")
    Z = ((X - X.iloc[:350].mean()) / X.iloc[:350].std()).to_numpy()
    model = KNeighborsClassifier(5, metric="manhattan").fit(Z[:350], y.iloc[:350])
    e = explain(model, Z[350:])
    pred = model.predict(Z[350:])
    agree = np.mean(np.where(e.total > 0, model.classes_[1], model.classes_[0]) == pred)
    assert agree >= 0.95, agree
    assert e.info["network"] == "NeuralizedManhattanKNN" and e.info["kappa"] == 0


def test_multiclass_manhattan_knn_conserves_each_class():
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    model = KNeighborsClassifier(5, metric="manhattan").fit(X, y)
    e = explain(model, X + 0.05)
    assert e.values.shape == (150, 4, 3) and e.info["network"] == "NeuralizedMulticlassKNN" and e.info["eta"] is None
    G = neuralize(model).decision_function(X + 0.05)
    np.testing.assert_allclose(e.total, G, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="eta does not apply"):
        explain(model, X, eta=0.5)


@pytest.mark.parametrize("model", [KNeighborsClassifier(5, weights="distance"), KNeighborsClassifier(5, metric="chebyshev"),
                                   KNeighborsClassifier(5, metric="minkowski", p=3)])
def test_uncovered_knn_names_method(model):
    X, y = _data(3)
    with pytest.raises(ValueError, match="method='kernel_shap'"):
        explain(model.fit(X, y), X[:3])


@pytest.mark.parametrize("make", [lambda: KernelRidge(kernel="rbf", gamma=0.3, alpha=0.1), lambda: SVR(gamma=0.3, C=10)])
def test_regression_default_level(make):
    X, _ = _data(4); yr = 5.0 + X[:, 0] ** 2                                     # a target always positive
    model = make().fit(X[:60], yr[:60])
    kept = getattr(model, "X_fit_", None) if hasattr(model, "X_fit_") else model.support_vectors_
    e = explain(model, X[60:])
    assert e.info["level"] == pytest.approx(model.predict(kept).mean(), rel=1e-12)
    assert e.info["level_from"].startswith("the mean prediction over the model's")
    B = X[60:75]
    eb = explain(model, X[60:], background=B)
    assert eb.info["level"] == pytest.approx(model.predict(B).mean(), rel=1e-12)
    assert eb.info["level_from"] == "the mean prediction over the 15 background rows"
    np.testing.assert_array_equal(np.sign(eb.total), np.sign(model.predict(X[60:]) - eb.info["level"]))
    # the network built first (as the door does), the background given at explanation time: the same explanation
    eb2 = explain(neuralize(model), X[60:], background=B)
    np.testing.assert_array_equal(eb2.values, eb.values)
    e0 = explain(model, X[60:], level=0.0)                                       # an explicit level is kept
    assert e0.info["level"] == 0.0 and e0.info["level_from"] == "given" and (e0.total > 0).all()
    with pytest.raises(ValueError, match="level and background"):
        explain(model, X[60:], level=1.0, background=B)
    with pytest.raises(ValueError, match="this network's level was given"):
        explain(neuralize(model, level=1.0), X[60:], background=B)
    np.testing.assert_array_equal(NeuralizedKernelRegression(model).decision_function(X[60:]),
                                  neuralize(model, level=0.0).decision_function(X[60:]))   # the class keeps level 0


def test_background_still_refused_for_classifiers():
    X, y = _data(5)
    with pytest.raises(ValueError, match="background does not apply to neuralized.explain"):
        explain(SVC().fit(X, y), X[:3], background=X)
