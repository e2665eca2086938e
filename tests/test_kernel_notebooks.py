"""The tutorials, and every notebook with widgets, run as a student runs them: in a real Jupyter kernel.

nbdev's runner (tests/test_notebooks.py) executes a notebook in an IPython shell of the test process, not in a
kernel, so the branch of a slider cell that only a live kernel takes (`interact`, guarded by
`isinstance(get_ipython(), ZMQInteractiveShell)`) never ran there. Here each of those notebooks runs in a fresh
`python3` kernel through `tests/kernel_client.py` (nbclient, with the fix for the stall it describes), its working
folder nbs/, each cell bounded by `CELL_TIMEOUT` seconds; pytest-xdist runs several at once (`-n auto` in
pytest.ini). A failure names the notebook and the cell. tests/test_notebooks.py leaves these notebooks to this file.

The same client is checked on small made-up notebooks: an error and a timeout name their cell and leave no kernel
running, skipped cells are skipped as nbdev skips them, and an Output widget's outputs reach the kernel.
"""
import os
import subprocess
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="nbformat (the dev extra) reads the notebooks")
pytest.importorskip("nbclient", reason="nbclient (the dev extra) runs the notebooks in a kernel")

from kernel_client import NotebookRunError, kernel_notebooks, run_notebook, skipped, uses_widgets   # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NBS = ROOT / "nbs"
CELL_TIMEOUT = 180   # seconds per cell: a bound against a hung kernel, not a measurement
KERNEL_NOTEBOOKS = kernel_notebooks(NBS)
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _untracked() -> str:
    "What git sees as new or changed in nbs/ (ignored files included): a run must leave it as it found it."
    return subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all", "--", "nbs"],
                          cwd=ROOT, capture_output=True, text=True).stdout


def _has_figure(cell) -> bool:
    return cell.cell_type == "code" and any("image/png" in o.get("data", {}) for o in cell.get("outputs", []))


def _widget_outputs(nb) -> list[dict]:
    "The outputs that the Output widgets of an executed notebook hold (nbclient keeps the widgets' state)."
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    return [o for m in state.values() if m.get("model_name") == "OutputModel"
            for o in m.get("state", {}).get("outputs", [])]


def test_the_kernel_notebooks_are_the_tutorials_and_the_widget_notebooks():
    from xai_geometry.course import TUTORIALS
    names = {p.stem for p in KERNEL_NOTEBOOKS}
    assert set(TUTORIALS) <= names, sorted(set(TUTORIALS) - names)
    with_widgets = {p.stem for p in NBS.glob("*.ipynb") if uses_widgets(p)}
    assert with_widgets <= names and len(with_widgets) >= 3, sorted(with_widgets)


@pytest.mark.parametrize("nb", KERNEL_NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_in_a_kernel(nb, request):
    only = request.config.getoption("--nb")
    if only and only not in nb.name: pytest.skip(f"--nb {only!r} given")
    from test_notebooks import _tool_flags
    from nbdev.config import get_config
    run = set(request.config.getoption("--nb-flags").split()) | {f for f, why in _tool_flags().items() if why is None}
    before = _untracked()
    out = run_notebook(nb, timeout=CELL_TIMEOUT, skip_flags=sorted(set(get_config(path=ROOT).tst_flags.split()) - run))
    drawn = [i for i, c in enumerate(nbformat.read(nb, as_version=4).cells) if _has_figure(c)]
    missing = [i for i in drawn if not _has_figure(out.cells[i])]
    assert not missing, f"{nb.name}: cells {missing} drew no figure in the kernel"
    sliders = [i for i, c in enumerate(out.cells) if c.cell_type == "code" and "interact(" in c.source]
    for i in sliders:   # the live branch ran: the sliders are shown, and the function drew into their Output widget
        assert any(WIDGET_VIEW in o.get("data", {}) for o in out.cells[i].outputs), f"{nb.name} cell {i}: no sliders shown"
    if sliders:
        assert any("image/png" in o.get("data", {}) for o in _widget_outputs(out)), f"{nb.name}: the sliders drew no figure"
    assert _untracked() == before, f"{nb.name} left files in nbs/:\n{_untracked()}"


def _notebook(tmp_path, *sources) -> Path:
    v4 = nbformat.v4
    nb = v4.new_notebook(cells=[v4.new_code_cell(s) for s in sources],
                         metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    path = tmp_path / "made_up.ipynb"
    nbformat.write(nb, path)
    return path


def _gone(pid: int, wait: float = 10.0) -> bool:
    "Whether process `pid` has ended (or is a zombie) within `wait` seconds."
    end = time.monotonic() + wait
    while time.monotonic() < end:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(") ", 1)[1].startswith("Z"): return True
        except FileNotFoundError:
            return True
        except OSError:
            try: os.kill(pid, 0)
            except ProcessLookupError: return True
        time.sleep(0.1)
    return False


def test_an_error_names_the_notebook_and_the_cell_and_the_kernel_is_shut_down(tmp_path):
    path = _notebook(tmp_path, "x = 1", "# the second cell\nraise ValueError('broken on purpose')", "y = 2")
    with pytest.raises(NotebookRunError) as err:
        run_notebook(path, timeout=60)
    msg = str(err.value)
    assert msg.startswith("made_up.ipynb, cell 1 ('# the second cell')") and "ValueError: broken on purpose" in msg, msg
    assert err.value.kernel_pid and _gone(err.value.kernel_pid), "the kernel still runs"


def test_a_timeout_names_the_cell_and_the_kernel_is_shut_down(tmp_path):
    path = _notebook(tmp_path, "import time", "time.sleep(600)")
    with pytest.raises(NotebookRunError) as err:
        run_notebook(path, timeout=2)
    assert err.value.cell == 1 and "2 s cell timeout" in str(err.value), str(err.value)
    assert err.value.kernel_pid and _gone(err.value.kernel_pid), "the kernel still runs"


def test_cells_are_skipped_as_nbdev_skips_them(tmp_path):
    v4 = nbformat.v4
    flags = {"#| eval: false\nraise SystemExit": True, "#| slow\nraise SystemExit": True, "#|slow\n1": True,
             "#| export\nx = 1": False, "#| khiops\n1": False, "x = 1  # slow": False, "nbdev_export" "()": True}
    for src, skip in flags.items(): assert skipped(v4.new_code_cell(src)) == skip, src
    assert skipped(v4.new_code_cell("#| khiops\n1"), skip_flags=("slow", "khiops"))
    path = _notebook(tmp_path, "#| eval: false\nraise RuntimeError('never run')", "#| slow\nimport time; time.sleep(600)",
                     "print('ran')")
    out = run_notebook(path, timeout=60)
    assert out.cells[0].source.startswith("#| eval: false") and out.cells[0].outputs == []
    assert out.cells[2].outputs[0]["text"] == "ran\n"


def test_an_output_widget_cell_reaches_the_kernel(tmp_path):
    """Many short cells that print into an ipywidgets Output, the cells whose reply plain nbclient could miss (see
    tests/kernel_client.py): every print is in the widget, and the widget's state, which the client sends back over
    the shell channel at each output, reached the kernel."""
    pytest.importorskip("ipywidgets", reason="ipywidgets (the dev extra) draws the sliders")
    cells = ["from ipywidgets import Output\nfrom IPython.display import display\nout = Output()\ndisplay(out)"]
    cells += [f"with out:\n    print({i})" for i in range(100)]
    cells += ["print(len(out.outputs), repr(out.outputs[-1]['text'][-8:]))"]
    out = run_notebook(_notebook(tmp_path, *cells), timeout=CELL_TIMEOUT)
    text = "".join(f"{i}\n" for i in range(100))
    assert [o["text"] for o in _widget_outputs(out)] == [text]
    assert out.cells[-1].outputs[0]["text"] == f"1 {text[-8:]!r}\n"
