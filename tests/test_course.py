"""The course as a class uses it: `xai-geometry course` builds it into a temporary folder; every student notebook runs
unanswered in a real Jupyter kernel and fails only at its graded checks, each with an `AssertionError` whose
message is the hint; every teacher notebook runs answered without an error; the slides build (their reveal.js and
MathJax are copied next to them; tests/test_course_grading.py opens them in Chromium without network).

The eight notebooks run two at a time (a thread pool of kernels, tests/kernel_client.py), once for the whole module.
"""
import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from xai_geometry.course import BEGIN, END, GRADED_UNITS, HIDDEN_BEGIN, STUB, TEXT_STUB, TUTORIALS, UNITS, build_course, exercises

ROOT = Path(__file__).resolve().parent.parent
nbformat = pytest.importorskip("nbformat", reason="nbformat (the dev extra) reads the notebooks")
pytest.importorskip("nbclient", reason="nbclient (the dev extra) runs the notebooks in a kernel")
from kernel_client import errors, run_notebook   # noqa: E402
CELL_TIMEOUT = 300  # seconds per cell: a bound against a hung kernel, not a measurement


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    out = tmp_path_factory.mktemp("course")
    status = subprocess.run([sys.executable, "-m", "xai_geometry.cli", "course", "--out", str(out)], cwd=ROOT,
                            capture_output=True, text=True)
    if status.returncode == 2 and "npm" in status.stderr:      # no npm for the slides' assets: the notebooks only
        status = subprocess.run([sys.executable, "-m", "xai_geometry.cli", "course", "--out", str(out), "--no-slides"],
                                cwd=ROOT, capture_output=True, text=True)
    assert status.returncode == 0, status.stderr
    return out


def _run(path: Path):
    """Execute a notebook in a fresh kernel, in its own folder, errors recorded in the outputs rather than raised
    (tests/kernel_client.py: the client the tutorials run in, without nbclient's stall)."""
    return run_notebook(path, timeout=CELL_TIMEOUT, allow_errors=True)


_errors = errors


def test_the_course_has_seven_graded_notebooks_and_twenty_graded_exercises(course):
    names = {p.stem for p in (course / "student").glob("*.ipynb")}
    assert names == {p.stem for p in (course / "teacher").glob("*.ipynb")} == set(GRADED_UNITS)
    counts = {s: len(exercises(json.loads((course / "teacher" / f"{s}.ipynb").read_text(encoding="utf-8"))))
              for s in GRADED_UNITS}
    assert len(counts) >= 4 and sum(counts.values()) >= 20 and min(counts.values()) >= 3, counts
    readme = (course / "README.md").read_text(encoding="utf-8")
    assert "graded exercises" in readme


@pytest.mark.parametrize("stem", GRADED_UNITS)
def test_a_student_notebook_carries_no_solution_and_no_output(course, stem):
    nb = json.loads((course / "student" / f"{stem}.ipynb").read_text(encoding="utf-8"))
    teacher = json.loads((course / "teacher" / f"{stem}.ipynb").read_text(encoding="utf-8"))
    solutions = ["".join(c["source"]) for c in teacher["cells"] if BEGIN in "".join(c["source"])]
    text = json.dumps(nb)
    assert BEGIN not in text and END not in text
    assert all(c.get("outputs", []) == [] for c in nb["cells"] if c["cell_type"] == "code")
    for sol in solutions:   # the lines between the markers are gone, those before them stay
        body = sol.split(BEGIN)[1].split(END)[0].strip()
        assert body not in text, body[:80]
    meta = [c["metadata"]["nbgrader"] for c in nb["cells"] if "nbgrader" in c.get("metadata", {})]
    graded = [m for m in meta if m["grade"] and not m["solution"]]                 # checks, graded by their run
    assert graded and all(m["locked"] and m["points"] > 0 for m in graded)
    written = [m for m in meta if m["grade"] and m["solution"]]                    # written answers, graded by hand
    assert all(not m["locked"] and m["points"] > 0 for m in written) and len(written) == text.count(TEXT_STUB)
    answers = [m for m in meta if m["solution"] and not m["grade"]]
    assert len(answers) + len(written) == len(solutions) and len(answers) == text.count(STUB)
    assert all(not m["locked"] for m in answers) and HIDDEN_BEGIN not in text
    ids = [m["grade_id"] for m in meta]
    assert len(set(ids)) == len(ids) and all(m["schema_version"] == 3 for m in meta)


def _student_problems(stem, nb) -> list[str]:
    "What is wrong with an unanswered student notebook's run: an error outside a graded check, a check that passed, a wrong error."
    graded = {i: exercises({"cells": [c]})[0] for i, c in enumerate(nb.cells)
              if c.cell_type == "code" and exercises({"cells": [c]})}
    errors, bad = _errors(nb), []
    bad += [f"{stem} cell {i}: {o['ename']}: {o['evalue'][:200]} (not a graded check)" for i, o in errors if i not in graded]
    bad += [f"{stem} cell {i}: the graded check {graded[i]['grade_id']} passed unanswered"
            for i in sorted(set(graded) - {i for i, _ in errors})]
    bad += [f"{stem} cell {i}: {o['ename']} {o['evalue'][:200]!r} is not an AssertionError with the check's hint"
            for i, o in errors if i in graded and (o["ename"] != "AssertionError" or o["evalue"] not in graded[i]["hints"])]
    return bad


def _run_versions(course, versions) -> list[str]:
    "Run every graded notebook in the given versions, two kernels at a time; what went wrong, one line each."
    jobs = [(v, s) for s in GRADED_UNITS for v in versions]
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = dict(zip(jobs, pool.map(lambda job: _run(course / job[0] / f"{job[1]}.ipynb"), jobs)))
    bad = []
    for (version, stem), nb in runs.items():
        if version == "student": bad += _student_problems(stem, nb)
        else: bad += [f"teacher {stem} cell {i}: {o['ename']}: {o['evalue'][:300]}" for i, o in _errors(nb)]
    return bad


def test_student_notebooks_fail_only_at_their_graded_checks(course):
    """Every student notebook run unanswered in a real kernel: only its graded checks fail, each with an
    AssertionError whose message is its hint. One test, so that pytest-xdist runs the notebooks once."""
    bad = _run_versions(course, ("student",))
    assert not bad, "\n".join(bad)


@pytest.mark.heavy
def test_teacher_notebooks_pass_in_a_kernel(course):
    """Every teacher notebook run answered in a real kernel: no error. (The default run checks the same code through
    the notebooks of nbs/, which hold the answers and run in nbdev's runner; this runs the built copies as a class would.)"""
    bad = _run_versions(course, ("teacher",))
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("stem", GRADED_UNITS + TUTORIALS)
def test_the_slides_build(course, stem):
    if not (course / "slides").is_dir(): pytest.skip("no slides: npm is needed for their offline assets")
    html = (course / "slides" / f"{stem}.slides.html").read_text(encoding="utf-8")
    assert "Reveal.initialize" in html and html.count("<section") >= 3, stem
    assert (course / "slides" / "assets" / "reveal.js" / "dist" / "reveal.js").is_file() and 'src="assets/js/require.js"' in html
    ids = [e["grade_id"] for e in exercises(json.loads((ROOT / "nbs" / f"{stem}.ipynb").read_text(encoding="utf-8")))]
    shown = [i for i in ids if f"graded: {i}" in html]
    assert BEGIN not in html and not shown, f"{stem}: the slides show a solution or a check: {shown}"


def test_the_slide_types_are_valid(course):
    from xai_geometry.course import slide_version
    for stem in GRADED_UNITS + TUTORIALS:
        nb = json.loads((ROOT / "nbs" / f"{stem}.ipynb").read_text(encoding="utf-8"))
        types = [c["metadata"]["slideshow"]["slide_type"] for c in slide_version(nb)["cells"]]
        assert set(types) <= {"slide", "subslide", "fragment", "-", "skip", "notes"} and types[0] == "slide", stem


def test_the_syllabus_names_real_notebooks_in_three_weeks():
    assert sorted({u.week for u in UNITS}) == [1, 2, 3]
    for u in UNITS:
        assert u.objectives and u.prerequisites and u.hours > 0, u.title
        for s in u.notebooks: assert (ROOT / "nbs" / f"{s}.ipynb").is_file(), s
    assert set(GRADED_UNITS) | set(TUTORIALS) <= {s for u in UNITS for s in u.notebooks}


def test_building_writes_only_into_the_folder_given(tmp_path):
    before = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
    written = build_course(tmp_path, nbs=ROOT / "nbs", slides=False)
    assert all(tmp_path in p.parents for ps in written.values() for p in ps)
    assert "slides" not in written and not (tmp_path / "slides").exists()
    after = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
    assert before == after


def test_the_course_command_is_one_line_on_a_mistake(tmp_path):
    target = tmp_path / "a_file"
    target.write_text("x")
    status = subprocess.run([sys.executable, "-m", "xai_geometry.cli", "course", "--out", str(target)], cwd=ROOT,
                            capture_output=True, text=True)
    assert status.returncode == 2 and len(status.stderr.strip().splitlines()) == 1 and "not a folder" in status.stderr


@pytest.mark.heavy
def test_nbgrader_generates_the_same_student_version(course, tmp_path, monkeypatch):
    "With nbgrader installed (the `course` extra), its own generate_assignment turns the teacher notebooks into ours."
    pytest.importorskip("nbgrader", reason="nbgrader (the course extra) is not installed")
    import os
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))  # its alembic
    from nbgrader.apps import NbGraderAPI
    from traitlets.config import Config
    src = tmp_path / "source" / "unit"
    src.mkdir(parents=True)
    for s in GRADED_UNITS: (src / f"{s}.ipynb").write_bytes((course / "teacher" / f"{s}.ipynb").read_bytes())
    cfg = Config()
    cfg.CourseDirectory.root = str(tmp_path)
    cfg.ClearSolutions.code_stub = {"python": STUB}
    api = NbGraderAPI(config=cfg)
    result = api.generate_assignment("unit", force=True, create=True)
    assert result["success"], result.get("log", "")[-3000:]
    for s in GRADED_UNITS:
        theirs = nbformat.read(tmp_path / "release" / "unit" / f"{s}.ipynb", as_version=4)
        ours = nbformat.read(course / "student" / f"{s}.ipynb", as_version=4)
        assert [c.source for c in theirs.cells] == [c.source for c in ours.cells], s


def test_the_run_check_catches_what_a_class_would_hit():
    "The verdict on a run, on made-up outputs: an error outside a check, a check passing unanswered, a bare assert."
    v4 = nbformat.v4
    def err(name, value): return v4.new_output("error", ename=name, evalue=value, traceback=[])
    cells = [v4.new_code_cell("x = None"), v4.new_code_cell('# graded: a (1 point)\nassert matches(x, 1), "hint a"'),
             v4.new_code_cell("y = x + 1"), v4.new_code_cell('# graded: b (1 point)\nassert matches(x, 2), "hint b"'),
             v4.new_code_cell('# graded: c (1 point)\nassert x == 3, "hint c"')]
    cells[1].outputs, cells[2].outputs = [err("AssertionError", "hint a")], [err("TypeError", "unsupported operand")]
    cells[4].outputs = [err("AssertionError", "")]
    bad = _student_problems("toy", v4.new_notebook(cells=cells))
    assert len(bad) == 3 and "cell 2: TypeError" in bad[0] and "b passed unanswered" in bad[1] and "cell 4" in bad[2], bad
    cells[2].outputs, cells[3].outputs, cells[4].outputs = [], [err("AssertionError", "hint b")], [err("AssertionError", "hint c")]
    assert _student_problems("toy", v4.new_notebook(cells=cells)) == []
