"""Shared pytest configuration: notebook flags, the `heavy` marker, a non-interactive matplotlib.

`pytest` (the README's command) runs every notebook and every test that fits in a few minutes on
two cores. Checks that take longer are marked `@pytest.mark.heavy` and run with `pytest --heavy`
(or `XAI_GEOMETRY_HEAVY=1`), which continuous integration sets.
"""
import os

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")


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
