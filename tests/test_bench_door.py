"""`xai-geometry bench door --quick` into a temporary folder: the table's rows, the methods method="auto" picks, the
conservation law of each, the agreement with shap where both are exact; no wall time is asserted."""
import warnings

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("shap")


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    from xai_geometry.experiments.bench_door import bench
    out = tmp_path_factory.mktemp("bench_door")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = bench(out, quick=True, progress=False)
    back = pd.read_csv(out / "bench_door.csv")
    assert list(back.columns) == list(t.columns) and len(back) == len(t)
    return t.set_index("family")


def test_every_family_by_its_exact_method(table):
    methods = {"naive Bayes (scikit-learn)": "shapley", "generalized naive Bayes": "shapley", "RBF SVC (LRP)": "lrp",
               "k-NN (LRP)": "lrp", "KernelRidge (LRP)": "lrp", "OneClassSVM (LRP)": "lrp", "KMeans (NEON)": "lrp",
               "linear model (LogisticRegression)": "linear", "tree ensemble (RandomForest)": "tree_shap"}
    assert table.method.to_dict() == methods
    assert (table.exact & table.additive).all()
    assert table.loc["OneClassSVM (LRP)", "output"] == "outlier_score"
    assert table.loc["KMeans (NEON)", "output"] == "cluster_logit"
    assert table.peer.str.startswith("shap.KernelExplainer").sum() == 7


def test_conservation_and_agreement_with_shap(table):
    assert (table.conservation_err <= 1e-9).all()           # the forest's too: the package's own exact algorithm
    linear = table.method == "linear"
    assert (table.max_abs_diff_shap[linear] <= 1e-6).all()
    # shap's interventional TreeExplainer is not always the game's Shapley values (the page): its difference to the
    # door's, which equal the enumeration of the game (tests/test_tree_shapley.py), is recorded, not bounded
    tree = table.method == "tree_shap"
    assert tree.sum() == 1 and (table.max_abs_diff_shap[tree].isna() | (table.max_abs_diff_shap[tree] >= 0)).all()
    assert np.isfinite(table[["door_ms_per_row", "shap_ms_per_row", "speedup"]].to_numpy()).all()
    assert (table.rows == 2).all() and (table.background == 8).all()


def test_the_forest_against_shap_record(table, tmp_path_factory):
    forest = pd.read_csv(next(tmp_path_factory.getbasetemp().rglob("bench_door_forest.csv")))
    assert list(forest.case[:2]) == ["rows", "one row"] and forest.door_over_shap[:2].notna().all()
    assert (forest.door_conservation_err <= 1e-12).all()
