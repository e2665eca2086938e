"""Explanations and reproductions on a Dask cluster (`xai_geometry.cluster`, the command line's `--scheduler`).

The default run starts clusters of threads only (seconds); the checks that start worker processes on
127.0.0.1 (a LocalCluster, a `dask worker` with other code, the command line against a running scheduler)
are heavy. Without dask, the package must import and explain as before, and asking for a scheduler must
name the extra to install.
"""
import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent


def _cli(*argv, cwd, env=None, timeout=1200):
    return subprocess.run([sys.executable, "-m", "xai_geometry.cli", *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)


def test_without_dask_the_package_works_and_the_scheduler_names_the_extra(tmp_path):
    "A fresh interpreter where dask cannot be imported: the parts explain in memory; --scheduler is one line, status 2."
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('dask', 'distributed'): raise ImportError(f'No module named {name!r}')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import numpy as np\n"
        "from sklearn.naive_bayes import GaussianNB\n"
        "from sklearn.svm import SVC\n"
        "import xai_geometry, xai_geometry.cluster\n"
        "from xai_geometry import naive_bayes, neuralized\n"
        "X = np.random.default_rng(0).normal(size=(40, 3)); y = (X[:, 0] > 0).astype(int)\n"
        "assert len(naive_bayes.explain(GaussianNB().fit(X, y), X)) == 40\n"
        "assert len(neuralized.explain(SVC().fit(X, y), X)) == 40\n"
        "assert not xai_geometry.cluster.is_dask_collection(X)\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')]\n"
        "from xai_geometry.cli import main\n"
        "sys.exit(main(['reproduce', 'part-a', '--quick', '--scheduler', 'local:2']))\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 2, r.stderr[-3000:]
    assert r.stderr.strip().count("\n") == 0 and 'pip install "xai_geometry[cluster]"' in r.stderr, r.stderr


distributed = pytest.importorskip("distributed", reason="dask[distributed] is not installed (the cluster extra)")
dd = pytest.importorskip("dask.dataframe", reason="dask.dataframe is not installed (the cluster extra)")

import dask  # noqa: E402

from xai_geometry import cluster  # noqa: E402
from xai_geometry.cli import main  # noqa: E402


def _main(*argv):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(list(argv))
    return status, err.getvalue().strip()


def test_scheduler_mistakes_are_one_line():
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        for argv, says in [(["reproduce", "part-c", "--scheduler", "tcp://127.0.0.1:9"], "cannot reach the Dask scheduler"),
                           (["reproduce", "part-c", "--scheduler", "local:-1"], "positive number"),
                           (["bench", "modl", "--scheduler", "local:1"], "--scheduler applies to bench cluster")]:
            status, err = _main(*argv)
            assert status == 2 and says in err and len(err.splitlines()) == 1, err


def _models():
    from sklearn.naive_bayes import GaussianNB
    from xai_geometry.datasets import load
    X, y = load("waveform")
    X, y = X.iloc[:800], y.iloc[:800]
    return X, GaussianNB().fit(X, y)


def test_explain_four_partitions_on_a_cluster_of_threads():
    "The default run's cluster check: threads, seconds; the same numbers as in memory, the law on every partition."
    from xai_geometry import naive_bayes
    from xai_geometry.naive_bayes.shapley import explained_output
    X, model = _models()
    memory = naive_bayes.explain(model, X)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address="127.0.0.1:0",
                                  worker_dashboard_address=None) as lc, distributed.Client(lc) as client, \
            distributed.get_task_stream(client) as ts:
        lazy = cluster.explain(naive_bayes.explain, model, dd.from_pandas(X, npartitions=4)).check_additivity(explained_output)
        frame = lazy.to_frame(include_base=True).compute()
        got = lazy.compute()
    assert len(ts.data) > 0
    np.testing.assert_array_equal(got.values, memory.values)
    np.testing.assert_array_equal(got.base_values, memory.base_values)
    pd.testing.assert_frame_equal(frame, memory.to_frame(include_base=True).set_axis(X.index, axis=0))


def test_the_three_explain_functions_take_dask_rows():
    "Each part's public explain: in memory as before, lazy on dask rows, the same values."
    from sklearn.svm import SVC
    from xai_geometry import gnb, naive_bayes, neuralized
    X, model = _models()
    assert naive_bayes.explain.__wrapped__.__name__ == "explain"
    svm = SVC().fit(X, (X.iloc[:, 0] > 0).astype(int))
    G = gnb.GeneralizedNaiveBayes().fit(X.iloc[:, :6], (X.iloc[:, 0] > 0).astype(int))
    B = gnb.background_sample(X.iloc[:, :6], 20)
    with dask.config.set(scheduler="synchronous"):
        for fn, m, rows, opts in [(naive_bayes.explain, model, X, {}), (neuralized.explain, svm, X, {}),
                                  (gnb.explain, G, X.iloc[:, :6], {"background": B})]:
            memory = fn(m, rows, **opts)
            assert not isinstance(memory, cluster.DaskExplanation)
            lazy = fn(m, dd.from_pandas(rows, npartitions=3), **opts)
            assert isinstance(lazy, cluster.DaskExplanation) and lazy.npartitions == 3
            got = lazy.compute()
            # part B's matrix products round a row differently with other rows beside it (in memory too): 1e-12 relative
            tol = 1e-12 if fn is neuralized.explain else 0.0
            np.testing.assert_allclose(got.values, memory.values, rtol=tol, atol=tol * np.abs(memory.values).max())


# ---- heavy: worker processes on 127.0.0.1 --------------------------------------------------------------

@pytest.fixture(scope="module")
def process_cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address="127.0.0.1:0", worker_dashboard_address=None) as lc, \
            distributed.Client(lc) as client:
        yield lc, client


def _tables(folder: Path) -> dict:
    "The CSV tables of a run, wall-time columns dropped (they differ between runs; nothing else may)."
    out = {}
    for p in sorted(folder.rglob("*.csv")):
        t = pd.read_csv(p)
        out[p.name] = t.drop(columns=[c for c in t.columns if "second" in c or "time" in c or c.endswith("_s")])
    return out


@pytest.mark.heavy
@pytest.mark.timeout(1800)
def test_reproduce_part_a_quick_on_a_scheduler_equals_the_run_in_process(process_cluster, tmp_path):
    lc, client = process_cluster
    with distributed.get_task_stream(client) as ts:
        remote = _cli("reproduce", "part-a", "--quick", "--no-progress", "--scheduler", lc.scheduler_address,
                      "--out", str(tmp_path / "remote"), "--cache", str(tmp_path / "cache-remote"), cwd=tmp_path)
    assert remote.returncode == 0, remote.stderr[-3000:]
    assert len(ts.data) > 0                                                # the folds ran on the cluster's workers
    local = _cli("reproduce", "part-a", "--quick", "--no-progress", "--out", str(tmp_path / "local"),
                 "--cache", str(tmp_path / "cache-local"), cwd=tmp_path)
    assert local.returncode == 0, local.stderr[-3000:]
    A, B = _tables(tmp_path / "local"), _tables(tmp_path / "remote")
    assert A and A.keys() == B.keys()
    for name in A: pd.testing.assert_frame_equal(A[name], B[name], obj=name)
    assert any((tmp_path / "cache-remote").rglob("*.joblib"))             # the cache the client wrote: resumable


@pytest.mark.heavy
@pytest.mark.timeout(900)
def test_explain_four_parquet_partitions_on_worker_processes(process_cluster, tmp_path):
    from sklearn.svm import SVC
    from xai_geometry import naive_bayes, neuralized
    from xai_geometry.datasets import load
    from xai_geometry.naive_bayes import WeightedNaiveBayes
    lc, client = process_cluster
    X, y = load("adult")
    X, y = X.iloc[:4000], y.iloc[:4000]
    for k in range(4): X.iloc[1000 * k: 1000 * (k + 1)].to_parquet(tmp_path / f"part-{k}.parquet")
    rows = dd.read_parquet(tmp_path)
    assert rows.npartitions == 4
    wnb = WeightedNaiveBayes().fit(X, y)
    with distributed.get_task_stream(client) as ts:
        got = cluster.explain(naive_bayes.explain, wnb, rows).compute()
    assert len({t["worker"] for t in ts.data}) >= 1
    memory = naive_bayes.explain(wnb, X)
    np.testing.assert_array_equal(got.values, memory.values)
    np.testing.assert_array_equal(got.base_values, memory.base_values)
    Xb, yb = load("breast_cancer")
    svm = SVC(gamma="scale").fit(Xb, yb)
    frame = cluster.explain(neuralized.explain, svm, dd.from_pandas(Xb, npartitions=4)).to_frame().compute()
    ref = neuralized.explain(svm, Xb).to_frame().to_numpy()                 # part B: to rounding (see above)
    np.testing.assert_allclose(frame.to_numpy(), ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())


def _explain_or_die(model, X, *, marker=None):
    "naive_bayes.explain, except that the worker process exits the first time it meets row 2,000."
    from xai_geometry import naive_bayes
    if 2000 in X.index and not Path(marker).exists():
        Path(marker).touch(); os._exit(1)
    return naive_bayes.explain(model, X)


@pytest.mark.heavy
@pytest.mark.timeout(900)
def test_a_worker_that_dies_is_replaced_and_its_partition_recomputed(process_cluster, tmp_path):
    from xai_geometry import naive_bayes
    lc, client = process_cluster
    X, model = _models()
    X = pd.concat([X] * 4, ignore_index=True)
    before = set(client.scheduler_info()["workers"])
    got = cluster.explain(_explain_or_die, model, dd.from_pandas(X, npartitions=4), marker=str(tmp_path / "died")).compute()
    client.wait_for_workers(2, timeout=600)
    assert (tmp_path / "died").exists() and len(before - set(client.scheduler_info()["workers"])) == 1
    np.testing.assert_array_equal(got.values, naive_bayes.explain(model, X).values)


@pytest.mark.heavy
@pytest.mark.timeout(900)
def test_a_worker_with_other_code_is_refused(tmp_path):
    "A `dask worker` whose `xai_geometry` has this version number but other code: connecting fails with one line."
    from xai_geometry import __version__
    fake = tmp_path / "other" / "xai_geometry"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(f'__version__ = "{__version__}"\n# another commit\n')
    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp://", host="127.0.0.1",
                                  dashboard_address="127.0.0.1:0") as lc:
        env = dict(os.environ, PYTHONPATH=str(fake.parent))
        worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", lc.scheduler_address,
                                   "--nthreads", "1", "--no-dashboard", "--no-nanny"], env=env, cwd=tmp_path,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            with distributed.Client(lc) as c: c.wait_for_workers(1, timeout=300)
            status, err = _main("reproduce", "part-a", "--quick", "--scheduler", lc.scheduler_address)
            assert status == 2 and "with other source code" in err and len(err.splitlines()) == 1, err
        finally:
            worker.terminate(); worker.wait(60)


@pytest.mark.heavy
@pytest.mark.timeout(1800)
def test_bench_cluster_quick(tmp_path):
    r = _cli("bench", "cluster", "--quick", "--no-progress", "--out", str(tmp_path / "out"), cwd=tmp_path,
             env=dict(os.environ, XAI_GEOMETRY_OUT=str(tmp_path / "scratch")))
    assert r.returncode == 0, r.stderr[-3000:]
    t = pd.read_csv(tmp_path / "out" / "bench_cluster.csv").set_index("mode")
    assert t.loc["Dask cluster", "max_abs_diff"] == 0 and t.loc["Dask cluster", "max_abs_diff_alone"] == 0
    assert t.loc["Dask cluster", "peak_rss_mib"] < t.loc["Dask cluster", "memory_limit_mib"]
    assert not any((tmp_path / "scratch").rglob("*.parquet"))            # the scratch rows are deleted
