"""Shared pytest configuration: notebook flags, the `heavy` marker, the Hypothesis profiles, a non-interactive matplotlib.

`pytest` (the README's command) runs every notebook and every test that fits in a few minutes on
two cores. Checks that take longer are marked `@pytest.mark.heavy` and run with `pytest --heavy`
(or `XAI_GEOMETRY_HEAVY=1`), which continuous integration sets.

The default run is deterministic: the property tests (Hypothesis) draw the same examples every run
(profile "deterministic": `derandomize=True`, no example database, no deadline and no health check
that measures time, which a busy machine would fail at random). `--hypothesis-profile random` draws
new examples each run; continuous integration's heavy step runs the property tests that way
(`pytest --heavy -m "heavy or hypothesis" --hypothesis-profile random`).

A run leaves the system's temporary folder as it found it: each pytest process (the main one and every
pytest-xdist worker) points `tempfile` and `TMPDIR` at a folder of its own, made inside the temporary folder it
was given, and removes it when it ends. scikit-learn's estimator checks make `sklearn_testing_*` folders that
they only remove at interpreter exit, which xdist's workers do not reach; pytest's own `tmp_path` folders would
otherwise stay in `pytest-of-<user>/` too.
"""
import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, settings

os.environ.setdefault("MPLBACKEND", "Agg")

_NO_TIMING = dict(database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("deterministic", derandomize=True, **_NO_TIMING)
settings.register_profile("random", derandomize=False, print_blob=True, **_NO_TIMING)
settings.load_profile("deterministic")  # `--hypothesis-profile random` (Hypothesis' own option) loads the other


def pytest_addoption(parser):
    parser.addoption("--nb-flags", default="",
                     help="space-separated nbdev test flags to run (e.g. 'slow'); cells with other flags are skipped")
    parser.addoption("--nb", default="", help="only run notebooks whose file name contains this string")
    parser.addoption("--heavy", action="store_true", default=False,
                     help="also run the checks marked heavy (continuous integration sets this)")


_TEMP = {}   # this process's own temporary folder, and what tempfile and TMPDIR were before it


def pytest_configure(config):
    config.addinivalue_line("markers", "heavy: a check too long for the default run; runs with --heavy")
    if _TEMP: return
    own = tempfile.mkdtemp(prefix="xai_geometry_tests_")
    _TEMP.update(own=own, tempdir=tempfile.tempdir, env=os.environ.get("TMPDIR"))
    tempfile.tempdir = own
    os.environ["TMPDIR"] = own   # child processes (notebook kernels, xdist's workers) write there too


def pytest_unconfigure(config):
    if not _TEMP: return
    tempfile.tempdir = _TEMP["tempdir"]
    if _TEMP["env"] is None: os.environ.pop("TMPDIR", None)
    else: os.environ["TMPDIR"] = _TEMP["env"]
    shutil.rmtree(_TEMP["own"], ignore_errors=True)
    _TEMP.clear()


def pytest_collection_modifyitems(config, items):
    if config.getoption("--heavy") or os.environ.get("XAI_GEOMETRY_HEAVY") == "1": return
    skip = pytest.mark.skip(reason="heavy check: run with --heavy (continuous integration does)")
    for item in items:
        if "heavy" in item.keywords: item.add_marker(skip)
