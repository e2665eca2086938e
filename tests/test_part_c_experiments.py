"""Part C §6 experiment pieces: the methods, the folds (the comparison models are tested in test_gnb_baselines.py)."""
import pandas as pd
import pytest

from xai_geometry.experiments.part_c import METHODS, make_method, run_fold


def test_run_fold_same_split_for_every_method():
    r = run_fold("iris", 1, n_folds=3, curve=True)
    df = pd.DataFrame(r["rows"])
    assert list(df.method) == list(METHODS)
    assert df[["accuracy", "f1", "auc"]].apply(lambda s: s.between(0, 1)).all().all()
    assert set(pd.DataFrame(r["curve"]).method) == {"gnb_gaussian", "gnb_copula"}


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown method"): make_method("nope")


def test_the_comparison_models_are_importable_from_here_too():
    "The baselines live in `xai_geometry.gnb.baselines`; this module's former names are the same objects."
    import xai_geometry.experiments.part_c as part_c
    from xai_geometry.gnb import baselines
    for name in baselines.__all__: assert getattr(part_c, name) is getattr(baselines, name), name


def test_the_shared_nonparametric_fit_changes_no_result():
    "run_fold fits the nonparametric GNB once for gnb_nonparametric and gnb_nonparametric_f1: each method alone gives the same scores."
    from xai_geometry.gnb.classifier import GeneralizedNaiveBayes
    f1 = make_method("gnb_nonparametric_f1")
    assert make_method("gnb_nonparametric").get_params() == \
        GeneralizedNaiveBayes(dependence=f1.dependence, random_state=f1.random_state).get_params()
    cols = ["method", "accuracy", "f1", "auc", "n_edges"]
    both = pd.DataFrame(run_fold("glass", 2, n_folds=5, methods=["gnb_nonparametric", "gnb_nonparametric_f1"])["rows"])[cols]
    alone = pd.DataFrame(run_fold("glass", 2, n_folds=5, methods=["gnb_nonparametric_f1"])["rows"])[cols]
    pd.testing.assert_frame_equal(both.iloc[[1]].reset_index(drop=True), alone)
