"""Checks too long for the default run (`pytest --heavy`, which continuous integration sets).

Every quick reproduction and every quick benchmark runs end to end through the command line, as a user
runs them, from an empty cache, and writes only where it is told.
"""
import subprocess
import sys

import pytest

pytestmark = pytest.mark.heavy


def _cli(*argv, cwd, timeout=1200):
    return subprocess.run([sys.executable, "-m", "xai_geometry.cli", *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.timeout(1500)
@pytest.mark.parametrize("part", ["part-a", "part-b", "part-c"])
def test_quick_reproduction_from_an_empty_cache(part, tmp_path):
    out, cache = tmp_path / "out", tmp_path / "cache"
    r = _cli("reproduce", part, "--quick", "--no-progress", "--out", str(out), "--cache", str(cache), cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    written = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.suffix == ".csv" for p in written) and any(p.suffix == ".png" for p in written), written
    assert {p.parent for p in written} <= {out} | {q for q in out.rglob("*") if q.is_dir()}


@pytest.mark.timeout(1500)
@pytest.mark.parametrize("part", ["modl", "part-a", "part-b", "part-c"])
def test_quick_benchmark(part, tmp_path):
    r = _cli("bench", part, "--quick", "--no-progress", "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert any((tmp_path / "out").glob("*.csv")), list((tmp_path / "out").iterdir())
