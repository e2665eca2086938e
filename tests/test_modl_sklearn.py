"scikit-learn API checks for the MODL transformers."
from sklearn.utils.estimator_checks import parametrize_with_checks

from xai_geometry.naive_bayes.modl import MODLDiscretizer, MODLEncoder, MODLGrouper

EXPECTED_FAILED = {
    "MODLGrouper": {
        "check_dtype_object": "a grouper reads every value as text (Khiops' convention), so an object "
                              "column holding a dict is grouped like any other value instead of raising",
    },
}


def _expected(est):
    return EXPECTED_FAILED.get(type(est).__name__, {})


@parametrize_with_checks([MODLDiscretizer(), MODLGrouper(), MODLEncoder(),
                          MODLDiscretizer(criterion="modl2006"), MODLGrouper(criterion="modl2006")],
                         expected_failed_checks=_expected)
def test_sklearn_api(estimator, check):
    check(estimator)
