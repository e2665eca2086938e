"""`run_tasks` (and so every `reproduce`) runs unchanged on a Dask cluster through `joblib.parallel_config(backend="dask")`."""
import joblib
import pytest

from xai_geometry.runner import run_tasks

distributed = pytest.importorskip("dask.distributed", reason="dask[distributed] is not installed (optional extra)")


def _square_plus(x, y=0):
    return {"x": x, "value": x * x + y}


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


def test_run_tasks_on_dask(client, tmp_path):
    tasks = [dict(x=i, y=i % 3) for i in range(12)]
    local = run_tasks(_square_plus, tasks, progress=False)
    with distributed.get_task_stream(client) as ts, joblib.parallel_config(backend="dask"):
        remote = run_tasks(_square_plus, tasks, n_jobs=-1, progress=False)
        cached = run_tasks(_square_plus, tasks, n_jobs=-1, cache_dir=tmp_path, progress=False)
    assert remote == local == cached
    assert len(ts.data) > 0                                           # the work ran on the cluster's workers


@pytest.mark.heavy   # part A's quick run twice, here and on the cluster
def test_reproduce_part_a_quick_on_dask(client, tmp_path):
    import pandas as pd
    from xai_geometry.experiments.part_a import reproduce
    local = reproduce(tmp_path / "local", quick=True, progress=False)
    with distributed.get_task_stream(client) as ts, joblib.parallel_config(backend="dask"):
        remote = reproduce(tmp_path / "dask", quick=True, n_jobs=-1, progress=False)
    assert len(ts.data) > 0
    assert [p.name for p in local] == [p.name for p in remote]
    n_csv = 0
    for a, b in zip(local, remote):
        if a.suffix == ".csv":
            A, B = pd.read_csv(a), pd.read_csv(b)
            timing = [c for c in A.columns if "second" in c or "time" in c]   # wall times differ, nothing else may
            pd.testing.assert_frame_equal(A.drop(columns=timing), B.drop(columns=timing))
            n_csv += 1
    assert n_csv > 0
