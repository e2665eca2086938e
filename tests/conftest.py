"""Shared pytest configuration: notebook flags and a non-interactive matplotlib."""
import os

os.environ.setdefault("MPLBACKEND", "Agg")


def pytest_addoption(parser):
    parser.addoption("--nb-flags", default="",
                     help="space-separated nbdev test flags to run (e.g. 'slow'); cells with other flags are skipped")
    parser.addoption("--nb", default="", help="only run notebooks whose file name contains this string")
