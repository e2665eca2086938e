"""The comparison models of part C (`xai_geometry.gnb.baselines`): the sklearn API, TAN against pgmpy, the tuned
baselines, the subsampled reduction (the density and CMI checks are in nbs/34_comparison_models.ipynb)."""
import numpy as np
import pandas as pd
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from xai_geometry.datasets import load
from xai_geometry.gnb import (GeneralizedNaiveBayes, InnerCVClassifier, KernelDensityNaiveBayes, SubsampledReducedGNB,
                              TreeAugmentedNaiveBayes, bin_codes, prefix_accuracies)


@parametrize_with_checks([KernelDensityNaiveBayes(), TreeAugmentedNaiveBayes()])
def test_sklearn_api(estimator, check):
    check(estimator)


def test_tan_tree_matches_pgmpy():
    pytest.importorskip("pgmpy")
    from pgmpy.estimators import TreeSearch
    X, y = load("wine")
    tan = TreeAugmentedNaiveBayes(n_bins=5).fit(X, y)
    B = bin_codes(X.to_numpy(float), tan.cuts_)
    D = pd.DataFrame(B, columns=[f"x{j}" for j in range(B.shape[1])]); D["y"] = y.to_numpy()
    dag = TreeSearch(D, root_node="x0", n_jobs=1).estimate(estimator_type="tan", class_node="y", show_progress=False)
    theirs = {tuple(sorted((int(a[1:]), int(b[1:])))) for a, b in dag.edges() if "y" not in (a, b)}
    assert theirs == set(tan.edges_)


@pytest.mark.parametrize("name", ["iris", "wine"])
def test_subsampled_reduction_equals_gnb_reduction_on_small_sets(name):
    X, y = load(name)
    a = SubsampledReducedGNB(dependence="nonparametric", isolated="drop", max_rows=10_000, random_state=0).fit(X, y)
    b = GeneralizedNaiveBayes(dependence="nonparametric", reduction="f1", isolated="drop", random_state=0).fit(X, y)
    assert a.structure_.edges == b.structure_.edges
    np.testing.assert_allclose(list(a.reduction_scores_.values()), list(b.reduction_scores_.values()), rtol=1e-12)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=1e-9, atol=1e-12)


def test_prefix_accuracies_ends():
    X, y = load("wine")
    g = GeneralizedNaiveBayes(dependence="gaussian").fit(X, y)
    acc = prefix_accuracies(g, X, y)
    assert len(acc) == X.shape[1]
    assert acc[-1] == pytest.approx((g.predict(X) == y).mean())
    g0 = GeneralizedNaiveBayes(dependence="gaussian", n_edges=0).fit(X, y)
    assert acc[0] == pytest.approx((g0.predict(X) == y).mean())


def test_bad_arguments():
    with pytest.raises(ValueError, match="kind"): InnerCVClassifier(kind="tree").fit(np.zeros((6, 2)), [0, 1] * 3)
    with pytest.raises(ValueError, match="n_bins"): TreeAugmentedNaiveBayes(n_bins=1).fit(np.zeros((6, 2)), [0, 1] * 3)
    with pytest.raises(ValueError, match="alpha"): TreeAugmentedNaiveBayes(alpha=0).fit(np.zeros((6, 2)), [0, 1] * 3)


def test_tan_predictions_match_pgmpy_network():
    "pgmpy's TAN (TreeSearch + DiscreteBayesianNetwork, K2 prior = Laplace 1) on our bins predicts the same labels."
    pytest.importorskip("pgmpy")
    from pgmpy.estimators import BayesianEstimator, TreeSearch
    try:
        from pgmpy.models import DiscreteBayesianNetwork as BN
    except ImportError:
        pytest.skip("pgmpy without DiscreteBayesianNetwork")
    X, y = load("iris"); X = X.to_numpy(float); y = y.to_numpy()
    tr = np.arange(len(X)) % 3 != 0; te = ~tr
    tan = TreeAugmentedNaiveBayes(n_bins=4).fit(X[tr], y[tr])
    cols = [f"x{j}" for j in range(X.shape[1])]
    Dtr = pd.DataFrame(bin_codes(X[tr], tan.cuts_), columns=cols); Dtr["y"] = y[tr]
    states = {c: list(range(len(tan.cuts_[j]) + 1)) for j, c in enumerate(cols)}; states["y"] = sorted(set(y[tr]))
    dag = TreeSearch(Dtr, root_node="x0", n_jobs=1).estimate(estimator_type="tan", class_node="y", show_progress=False)
    bn = BN(dag.edges()); bn.add_cpds(*BayesianEstimator(bn, Dtr, state_names=states).get_parameters(prior_type="K2"))
    theirs = bn.predict(pd.DataFrame(bin_codes(X[te], tan.cuts_), columns=cols), n_jobs=1)["y"].to_numpy()
    np.testing.assert_array_equal(theirs, tan.predict(X[te]))
