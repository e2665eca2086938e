"scikit-learn API checks for the part-A estimators (MODLEncoder's are in the MODL tests)."
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from xai_geometry.naive_bayes.classifier import WeightedNaiveBayes
from xai_geometry.naive_bayes.neighbors import SupervisedKNeighborsClassifier

EXPECTED_FAILED = {}

@parametrize_with_checks([WeightedNaiveBayes(), SupervisedKNeighborsClassifier()],
                         expected_failed_checks=lambda est: EXPECTED_FAILED.get(type(est).__name__, {}))
def test_sklearn_api(estimator, check):
    check(estimator)
