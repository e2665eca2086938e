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
    tree = table.method == "tree_shap"
    assert (table.conservation_err[~tree] <= 1e-9).all()    # the forest's is shap's TreeExplainer's own (the page)
    assert np.isfinite(table.conservation_err[tree]).all()
    same = table.max_abs_diff_shap.notna()
    assert set(table.method[same]) == {"linear", "tree_shap"}
    assert (table.max_abs_diff_shap[same] <= 1e-6).all()
    assert np.isfinite(table[["door_ms_per_row", "shap_ms_per_row", "speedup"]].to_numpy()).all()
    assert (table.rows == 2).all() and (table.background == 8).all()
