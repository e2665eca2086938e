"""Part A §5 experiments: the quick run end to end, the fused metrics against the public k-NN API, bad input."""
import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import StratifiedKFold

from xai_geometry.datasets import load
from xai_geometry.naive_bayes.classifier import WeightedNaiveBayes, random_model, random_parts
from xai_geometry.experiments.part_a import DISTANCES, PAPER_TABLE2, fold_task, neighbourhood_metrics, reproduce
from xai_geometry.naive_bayes.neighbors import SupervisedKNeighborsClassifier, local_agreement, local_delta, local_margin


@pytest.mark.parametrize("seed", range(12))
def test_fused_metrics_equal_public_api_on_random_models(seed):
    rng = np.random.default_rng(seed)
    J = int(rng.integers(2, 5))
    model = random_model(rng, n_classes=J, n_features=int(rng.integers(1, 4)), max_parts=3)
    P_tr = random_parts(rng, model, 60); y_tr = rng.integers(0, J, 60); y_tr[:J] = np.arange(J)
    P_te = random_parts(rng, model, 15); y_te = rng.integers(0, J, 15)
    for kind in DISTANCES:
        r = neighbourhood_metrics(model, P_tr, y_tr, P_te, y_te, kind, ks=(1, 2, 5, 11))
        for q, k in enumerate((1, 2, 5, 11)):
            knn = SupervisedKNeighborsClassifier(kind=kind, n_neighbors=k, model=model, prefit=True).fit(P_tr, y_tr)
            assert r["agree"][q] == pytest.approx(local_agreement(knn, P_te), abs=1e-12)
            assert r["delta"][q] == pytest.approx(local_delta(knn, P_te), rel=1e-9)
            if k == 1:
                assert (r["pred_index"] == np.searchsorted(knn.classes_, knn.predict(P_te))).all()
                np.testing.assert_allclose(r["margin"], local_margin(knn, P_te, y_te, per_row=True), atol=1e-12)


def test_fold_task_runs_and_matches_paper_layout():
    r = fold_task("heart", 0, n_splits=3)
    m = pd.DataFrame(r["metrics"])
    assert set(m.distance) == {"model", *DISTANCES}
    assert m[m.distance != "model"].acc.between(0.5, 1).all()
    assert set(PAPER_TABLE2.index) >= {"heart", "sickeuthyroid"}


def test_quick_reproduce_writes_tables(tmp_path):
    paths = reproduce(tmp_path / "out", quick=True, datasets=["heart", "pima"], cache_dir=tmp_path / "cache", progress=False)
    names = {p.name for p in paths}
    assert {"part_a_table2_quick.csv", "part_a_table3_quick.csv", "part_a_cd_auc_quick.png"} <= names
    t2 = pd.read_csv(tmp_path / "out" / "part_a_table2_quick.csv")
    assert {"dataset", "distance", "acc", "auc", "acc_paper", "auc_paper"} <= set(t2.columns)
    assert len(list((tmp_path / "cache").rglob("*.joblib"))) == 20      # cached per (data set, fold): every fold of the full run


@pytest.mark.parametrize("kw, match", [(dict(datasets=["iris"]), r"unknown data set\(s\) .iris. for reproduce part-a"), (dict(backend="sklearn"), "backend")])
def test_bad_arguments(tmp_path, kw, match):
    with pytest.raises(ValueError, match=match):
        reproduce(tmp_path, quick=True, progress=False, **{"datasets": ["heart"], **kw})
