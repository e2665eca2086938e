"""scikit-learn API checks for GeneralizedNaiveBayes (part C)."""
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from xai_geometry.gnb import GeneralizedNaiveBayes

# Checks that cannot apply, with the reason: none — every check runs and passes. (The array-API check
# is skipped by scikit-learn itself unless the environment sets SCIPY_ARRAY_API=1.)
EXPECTED_FAILED_CHECKS: dict[str, str] = {}


@parametrize_with_checks(
    [GeneralizedNaiveBayes(),
     GeneralizedNaiveBayes(dependence="gaussian_copula"),
     GeneralizedNaiveBayes(dependence="nonparametric", random_state=0),
     GeneralizedNaiveBayes(k=4, reduction="f1")],
    expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS,
)
def test_sklearn_api(estimator, check):
    check(estimator)
