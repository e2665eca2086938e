"""Run every notebook of nbs/ through nbdev's own runner (`nbdev.test.test_nb`).

nbdev's directives are honoured: `#| eval: false` cells never run, and cells flagged with one of the
`tst_flags` of settings.ini run only when their flag is on:

- `#| slow`: heavy cells, on with `pytest --nb-flags slow` (continuous integration sets it);
- `#| khiops`: checks against Khiops, on whenever the Khiops environment is installed;
- `#| compare`: checks against shap, lime or pgmpy, on whenever the `compare` extra is installed;
- `#| cluster`: cells that start or use a Dask cluster, on whenever the `cluster` extra is installed.

A flag that is off because its tool is missing is named, with the reason, in a warning of the notebook's
item (pytest's warnings summary), so that an absent reference is visible, never silent; the rest of the
notebook still runs.

The tutorials and the notebooks with widgets are not run here: tests/test_kernel_notebooks.py runs them in a real
Jupyter kernel, as a student runs them (`kernel_client.kernel_notebooks` names them), so that none runs twice.

The notebooks of `HEAVY_NOTEBOOKS` run only with `pytest --heavy` (continuous integration's heavy step runs them): each
takes 12 to 30 s of one core, and together they would take the default run past five minutes on two cores.

The notebooks run in a copy of the checkout (settings.ini, .gitignore, README.md, nbs/, figures/) in a temporary folder, so
that the figures and tables they write never touch tracked files: `git status` stays clean after
`pytest`. They read the committed results from the copy of figures/.
"""
import contextlib
import io
import json
import os
import shutil
import warnings
from pathlib import Path

import pytest

from kernel_client import directives, kernel_notebooks

ROOT = Path(__file__).resolve().parent.parent
IN_A_KERNEL = set(kernel_notebooks(ROOT / "nbs"))
_KERNEL = pytest.mark.skip(reason="runs in a real Jupyter kernel in tests/test_kernel_notebooks.py")
#: the slowest notebooks, run with --heavy only: stem -> what takes the time (one run in a kernel, 2 cores, 2026-12-02)
HEAVY_NOTEBOOKS = {
    "12_shapley": "1,000 random models through each law and through the enumeration of coalitions, and Khiops' "
                  "own runs on two data sets (28 s)",
    "13_geometry": "Shapley's formula enumerated over all coalitions, and Δ1 between all pairs of rows (24 s)",
    "31_structure": "the invariance of the tree under monotone transforms on the twelve experiment data sets (19 s)",
    "40_shapley_knn_relevance": "the ℓ1 k-NN in Shapley space fitted on adult (13 s)",
    "42_scale": "the supervised k-NN and its explanations on 10,000 to 10⁶ rows (12 to 26 s)",
    "44_on_a_cluster": "a local Dask cluster started, and a quick reproduction run on it (20 s)",
}


def _param(p: Path):
    if p in IN_A_KERNEL: return pytest.param(p, marks=_KERNEL)
    if p.stem in HEAVY_NOTEBOOKS: return pytest.param(p, marks=pytest.mark.heavy)
    return p


NOTEBOOKS = [_param(p) for p in sorted(p for p in (ROOT / "nbs").glob("*.ipynb") if not p.name.startswith("_"))]


def _tool_flags() -> dict:
    "Flags whose cells need an optional tool: flag -> reason it is off (None when the tool is there)."
    import importlib.util
    from xai_geometry.khiops import khiops_available
    ok, why = khiops_available()
    missing = [m for m in ("shap", "lime", "pgmpy") if importlib.util.find_spec(m) is None]
    no_dask = [m for m in ("dask", "distributed") if importlib.util.find_spec(m) is None]
    return {"khiops": None if ok else why,
            "compare": f"{', '.join(missing)} not installed (pip install -e '.[compare]')" if missing else None,
            "cluster": f"{', '.join(no_dask)} not installed (pip install -e '.[cluster]')" if no_dask else None}


def _flags_in(nb: Path) -> set:
    "The test flags used by the cells of a notebook (their `#|` directives, read as `kernel_client.directives` reads them)."
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    return {name for c in cells if c["cell_type"] == "code"
            for name in directives("".join(c["source"]) if isinstance(c["source"], list) else c["source"])}


@pytest.fixture(scope="session")
def checkout_copy(tmp_path_factory):
    "A copy of the checkout's settings.ini, nbs/ and figures/, where the notebooks run."
    dst = tmp_path_factory.mktemp("checkout")
    for f in ("settings.ini", ".gitignore", "README.md"):
        if (ROOT / f).is_file(): shutil.copy2(ROOT / f, dst / f)
    shutil.copytree(ROOT / "nbs", dst / "nbs", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    if (ROOT / "figures").is_dir(): shutil.copytree(ROOT / "figures", dst / "figures")
    return dst


def _forget_the_previous_shell():
    """nbdev's runner gives each notebook a new IPython shell in this process; pyplot still records the display hook
    it registered with the previous notebook's shell, and `plt.ioff()` (which shap's plots call) would then unregister
    a hook the new shell never had (ValueError). A notebook starts with no hook recorded, as in a fresh kernel."""
    import matplotlib.pyplot as plt
    plt._REPL_DISPLAYHOOK = plt._ReplDisplayHook.NONE


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook(nb, request, checkout_copy, monkeypatch):
    only = request.config.getoption("--nb")
    if only and only not in nb.name: pytest.skip(f"--nb {only!r} given")
    nbdev_test = pytest.importorskip("nbdev.test", reason="nbdev (the dev extra) runs the notebooks")
    from nbdev.config import get_config
    from xai_geometry.khiops import khiops_python
    cfg_flags = set(get_config(path=ROOT).tst_flags.split())
    run_flags = set(request.config.getoption("--nb-flags").split())
    run_flags |= {f for f, why in _tool_flags().items() if why is None}
    kp = khiops_python()  # found from the real checkout; the copy has no .venv-khiops
    if kp is not None: monkeypatch.setenv("XAI_GEOMETRY_KHIOPS_PYTHON", str(kp))
    monkeypatch.setenv("XAI_GEOMETRY_CACHE", str(checkout_copy / ".cache"))
    off = {f: why for f, why in _tool_flags().items() if why is not None and f in _flags_in(nb)}
    for flag, why in off.items():
        warnings.warn(f"{nb.name}: the cells flagged '{flag}' did not run: {why}", UserWarning)
    err = io.StringIO()
    cwd = os.getcwd()
    _forget_the_previous_shell()
    try:
        with contextlib.redirect_stderr(err):
            ok, secs = nbdev_test.test_nb(checkout_copy / "nbs" / nb.name, skip_flags=sorted(cfg_flags - run_flags),
                                          force_flags=sorted(run_flags))
    finally:
        os.chdir(cwd)
    assert ok, f"notebook {nb.name} failed:\n{err.getvalue()[-6000:]}"

