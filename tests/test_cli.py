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
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_version():
    from xai_geometry import __version__
    r = run("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"xai-geometry {__version__}"


MISTAKES = [
    (["reproduce", "part-a", "--quick", "--datasets", "nosuch"], "unknown data set(s) 'nosuch' for reproduce part-a"),
    (["reproduce", "part-b", "--quick", "--datasets", "nosuch"], "unknown data set(s) 'nosuch' for reproduce part-b"),
    (["reproduce", "part-c", "--quick", "--datasets", "nosuch"], "unknown data set(s) 'nosuch' for reproduce part-c"),
    (["reproduce", "part-c", "--quick", "--datasets", "adult"], "exist but are not used by reproduce part-c"),
    (["reproduce", "part-a", "--quick", "--backend", "nosuch"], "unknown backend 'nosuch'"),
    (["reproduce", "part-c", "--quick", "--backend", "khiops"], "part-c has no --backend option"),
    (["reproduce", "part-a", "--n-jobs", "0"], "--n-jobs 0 runs nothing"),
    (["reproduce", "part-a", "--n-jobs", "two"], "--n-jobs takes an integer"),
    (["bench", "part-a", "--repeats", "0"], "expected a positive integer"),
    (["datasets", "--part", "D"], "invalid choice: 'D'"),
    (["demo", "--parts", "D"], "invalid choice: 'D'"),
    (["nosuch"], "invalid choice: 'nosuch'"),
]


@pytest.mark.parametrize("argv,says", MISTAKES, ids=[" ".join(a) for a, _ in MISTAKES])
def test_a_mistake_is_one_line_and_status_2(argv, says, tmp_path):
    r = run(*argv, "--no-progress", cwd=tmp_path) if argv[0] in ("reproduce", "bench", "demo") else run(*argv, cwd=tmp_path)
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    assert says in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr


def test_part_b_takes_the_registry_names(monkeypatch):
    from xai_geometry.experiments import part_b
    from xai_geometry.runner import select_datasets
    names = [reg for _, reg in part_b.TABLE2_DATASETS.values()]
    assert {"ocm", "early_stage_diabetes", "wine_quality_red"} <= set(names)
    assert select_datasets(["ocm"], names, "reproduce part-b") == ["ocm"]


def test_missing_data_is_a_usage_error_and_debug_shows_the_traceback(tmp_path):
    code = ("import sys; from pathlib import Path; import xai_geometry.datasets as ds; "
            f"ds.PACKAGE_DATA = Path({str(tmp_path)!r}); from xai_geometry.cli import main; sys.exit(main(sys.argv[1:]))")
    argv = ["reproduce", "part-a", "--quick", "--no-progress", "--datasets", "heart", "--out", str(tmp_path / "o"),
            "--cache", str(tmp_path / "c")]
    r = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "'heart'" in r.stderr and "reinstall" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    r = subprocess.run([sys.executable, "-c", code, *argv, "--debug"], capture_output=True, text=True, timeout=300)
    assert r.returncode != 0 and "Traceback" in r.stderr and "DatasetNotFoundError" in r.stderr


def test_datasets_says_where_each_set_was_found():
    r = run("datasets")
    assert r.returncode == 0
    lines = {l.split()[0]: l for l in r.stdout.splitlines()[1:]}
    assert lines["adult"].rstrip().endswith("package")
    assert lines["digits"].rstrip().endswith("scikit-learn")
    assert "NOT FOUND" not in r.stdout


def test_missing_part_says_so_and_exits_nonzero(monkeypatch, capsys):
    monkeypatch.setitem(cli.REPRODUCE, "part-a", "xai_geometry.naive_bayes.not_written_yet:reproduce")
    status = cli.main(["reproduce", "part-a", "--quick", "--no-progress"])
    assert status == cli.NOT_IMPLEMENTED
    assert "missing from this installation" in capsys.readouterr().err


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


@pytest.mark.heavy   # a second run of the demo (test_demo_writes_figures runs it in the default run)
def test_demo_writes_to_the_scratch_folder_by_default(tmp_path):
    r = run("demo", "--parts", "C", "--no-progress", cwd=tmp_path, env={**__import__("os").environ, "XAI_GEOMETRY_OUT": str(tmp_path / "scratch")},
            timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert any((tmp_path / "scratch" / "demo").glob("demo_C_*.png"))


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
