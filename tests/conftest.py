"""Shared pytest configuration: notebook flags, the `heavy` marker, the Hypothesis profiles, a non-interactive matplotlib.

`pytest` (the README's command) runs every notebook and every test that fits in a few minutes on
two cores. Checks that take longer are marked `@pytest.mark.heavy` and run with `pytest --heavy`
(or `XAI_GEOMETRY_HEAVY=1`), which continuous integration sets.

The default run is deterministic: the property tests (Hypothesis) draw the same examples every run
(profile "deterministic": `derandomize=True`, no example database, no deadline and no health check
that measures time, which a busy machine would fail at random). `--hypothesis-profile random` draws
new examples each run; continuous integration's heavy step runs the property tests that way
(`pytest --heavy -m "heavy or hypothesis" --hypothesis-profile random`).
"""
import os

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


def pytest_configure(config):
    config.addinivalue_line("markers", "heavy: a check too long for the default run; runs with --heavy")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--heavy") or os.environ.get("XAI_GEOMETRY_HEAVY") == "1": return
    skip = pytest.mark.skip(reason="heavy check: run with --heavy (continuous integration does)")
    for item in items:
        if "heavy" in item.keywords: item.add_marker(skip)
