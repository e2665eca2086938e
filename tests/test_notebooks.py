"""Run every notebook of nbs/ through nbdev's own runner (`nbdev.test.test_nb`).

nbdev's directives are honoured: `#| eval: false` cells never run, and cells flagged with one of the
`tst_flags` of settings.ini (e.g. `#| slow`) run only when the flag is passed: `pytest --nb-flags slow`.
A failing cell fails its notebook's test with the cell's traceback.
"""
import contextlib
import io
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(p for p in (ROOT / "nbs").glob("*.ipynb") if not p.name.startswith("_"))


def _ids(p): return p.stem


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=_ids)
def test_notebook(nb, request):
    only = request.config.getoption("--nb")
    if only and only not in nb.name: pytest.skip(f"--nb {only!r} given")
    nbdev_test = pytest.importorskip("nbdev.test", reason="nbdev (the dev extra) runs the notebooks")
    from nbdev.config import get_config
    cfg_flags = set(get_config(path=ROOT).tst_flags.split())
    run_flags = set(request.config.getoption("--nb-flags").split())
    err = io.StringIO()
    cwd = os.getcwd()
    try:
        with contextlib.redirect_stderr(err):
            ok, secs = nbdev_test.test_nb(nb, skip_flags=sorted(cfg_flags - run_flags), force_flags=sorted(run_flags))
    finally:
        os.chdir(cwd)
    assert ok, f"notebook {nb.name} failed:\n{err.getvalue()[-6000:]}"
