"""The `xai-geometry` command: entry points, exit statuses, and the demo a new user runs first."""
import subprocess
import sys

import pytest

from xai_geometry import cli


def run(*args, **kw):
    return subprocess.run([sys.executable, "-m", "xai_geometry.cli", *args], capture_output=True, text=True, **kw)


def test_module_and_help():
    r = run("--help")
    assert r.returncode == 0
    for sub in ("demo", "reproduce", "bench", "docs", "datasets"): assert sub in r.stdout


def test_console_script_is_declared():
    from importlib.metadata import entry_points
    eps = [e for e in entry_points(group="console_scripts") if e.name == "xai-geometry"]
    assert eps and eps[0].value == "xai_geometry.cli:main"


def test_unknown_part_is_a_usage_error():
    r = run("reproduce", "part-z")
    assert r.returncode == 2 and "invalid choice" in r.stderr


def test_missing_part_says_so_and_exits_nonzero(monkeypatch, capsys):
    monkeypatch.setitem(cli.REPRODUCE, "part-a", "xai_geometry.naive_bayes.not_written_yet:reproduce")
    status = cli.main(["reproduce", "part-a", "--quick", "--no-progress"])
    assert status == cli.NOT_IMPLEMENTED
    assert "not implemented yet" in capsys.readouterr().err


def test_missing_dependency_is_not_hidden(monkeypatch, tmp_path):
    # a part whose module exists but fails to import for another reason must raise, not say "not yet"
    mod = tmp_path / "xg_broken_part.py"
    mod.write_text("import a_package_that_does_not_exist\ndef demo(out_dir, progress=True): return []\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError):
        cli.resolve("xg_broken_part:demo")


def test_every_registered_entry_exists():
    for table in (cli.DEMOS, cli.REPRODUCE, cli.BENCH):
        for entry in table.values():
            try: fn = cli.resolve(entry)
            except cli.PartNotAvailable: continue  # a part still to come: the command says so
            assert callable(fn)


def test_demo_writes_figures(tmp_path):
    r = run("demo", "--out", str(tmp_path), "--no-progress", timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    pngs = sorted(p.name for p in tmp_path.glob("demo_*.png"))
    for part in "ABC":
        try: cli.resolve(cli.DEMOS[part])
        except cli.PartNotAvailable: continue
        assert any(n.startswith(f"demo_{part}_") for n in pngs), (part, pngs)
    assert (tmp_path / "demo_datasets.csv").is_file()


def test_backend_only_where_a_part_has_one():
    r = run("reproduce", "part-c", "--backend", "khiops", "--quick")
    assert r.returncode == 2 and "no --backend option" in r.stderr
