"""The course graded as nbgrader grades it, its answer key kept from the students and from the site, and its decks
offline.

- No student notebook (and no page of the site) holds a solution, a model answer or a hidden test (fast).
- With real nbgrader (`--heavy`): `xai-geometry course --nbgrader DIR` writes a course folder; nbgrader's
  `generate_assignment` and `autograde` grade three submissions of every unit: the teacher's notebooks score 100 % of
  the auto-graded points, the unanswered ones 0 %, and a *copycat* ≤ 25 %: a submission that fills each answer cell
  with the expressions of the visible check below it (for each call or comparison of the check that takes the answer
  and another expression, `answer = that expression`, each tried in turn). nbgrader's rule: a graded code cell scores
  its points when its run shows no error (and nothing on stderr); written answers wait for the hand grading.
- In headless Chromium with every network request refused (`--heavy`; skipped without Chromium, its driver or
  selenium): each deck names no online script or style sheet, starts as reveal.js slides, MathJax typesets its TeX
  from the deck's own `assets/`, and no slide is taller or wider than reveal.js's frame (a long code cell or output
  scrolls inside its own box).
"""
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from xai_geometry.course import (BEGIN, END, GRADED_UNITS, HIDDEN_BEGIN, HIDDEN_END, MARK_BEGIN, MARK_END, TUTORIALS,
                                 build_course, exercises, strip_hidden_tests, written_answers)

ROOT = Path(__file__).resolve().parent.parent
MARKERS = (BEGIN, END, HIDDEN_BEGIN, HIDDEN_END, MARK_BEGIN, MARK_END)
REGIONS = ((BEGIN, END), (HIDDEN_BEGIN, HIDDEN_END), (MARK_BEGIN, MARK_END))   # solutions, hidden tests, mark schemes


def _src(c): return "".join(c["source"]) if isinstance(c["source"], list) else c["source"]


def _key_lines(nb: dict) -> set[str]:
    "The lines of a notebook's solutions, model answers, mark schemes and hidden tests (those long enough to be telling)."
    out = set()
    for c in nb["cells"]:
        s = _src(c)
        for b, e in REGIONS:
            while b in s:
                body, s = s.split(b, 1)[1].split(e, 1)[0], s.split(e, 1)[1]
                out |= {l.strip() for l in body.splitlines() if len(l.strip()) > 25}
    return out


def _outside_key(src: str) -> str:
    for b, e in REGIONS:
        while b in src: src = src.split(b, 1)[0] + src.split(b, 1)[1].split(e, 1)[1]
    return src


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("course")
    build_course(out, nbs=ROOT / "nbs", slides=False)
    return out


@pytest.mark.parametrize("stem", GRADED_UNITS)
def test_no_student_notebook_holds_a_solution_or_a_hidden_test(built, stem):
    source = json.loads((ROOT / "nbs" / f"{stem}.ipynb").read_text(encoding="utf-8"))
    text = (built / "student" / f"{stem}.ipynb").read_text(encoding="utf-8")
    student = json.loads(text)
    assert not [m for m in MARKERS if m in text]
    cells = "\n".join(_src(c) for c in student["cells"])
    task = "\n".join(_outside_key(_src(c)) for c in source["cells"])      # a line the task states is no leak
    leaked = [l for l in _key_lines(source) if l in cells and l not in task]
    assert not leaked, leaked[:3]
    ex = exercises(source)
    assert ex and all(e["hidden"] for e in ex), [e["grade_id"] for e in ex if not e["hidden"]]


def test_twenty_auto_graded_exercises_and_four_written_answers():
    units = [json.loads((ROOT / "nbs" / f"{s}.ipynb").read_text(encoding="utf-8")) for s in GRADED_UNITS]
    assert sum(len(exercises(u)) for u in units) >= 20 and sum(len(written_answers(u)) for u in units) >= 4


def _visible_answer_copies(check: str, names: list[str]) -> list[str]:
    "`name = expr` for each call or comparison of the visible check that takes an answer `name` and another `expr`."
    tree = ast.parse(strip_hidden_tests(check))
    mentions = lambda node, n: any(isinstance(x, ast.Name) and x.id == n for x in ast.walk(node))
    out = []
    for node in ast.walk(tree):
        args = (node.args + [k.value for k in node.keywords]) if isinstance(node, ast.Call) else \
               ([node.left] + node.comparators) if isinstance(node, ast.Compare) else []
        for n in names:
            if any(mentions(a, n) for a in args):
                out += [f"{n} = {ast.unparse(a)}" for a in args if not any(mentions(a, m) for m in names)]
    return out


def copycat(student: dict) -> dict:
    "The student notebook with each answer cell filled with its visible check's expressions (see the module's doc)."
    nb = json.loads(json.dumps(student))
    cells = nb["cells"]
    for i, c in enumerate(cells):
        meta = c.get("metadata", {}).get("nbgrader", {})
        if c["cell_type"] != "code" or not meta.get("solution") or meta.get("grade"): continue
        names = [t.id for st in ast.parse(_src(c)).body if isinstance(st, ast.Assign) for t in st.targets
                 if isinstance(t, ast.Name) and isinstance(st.value, ast.Constant) and st.value.value is None]
        check = next((_src(d) for d in cells[i + 1:] if d.get("metadata", {}).get("nbgrader", {}).get("grade")), "")
        setup = [ast.unparse(st) for st in ast.parse(strip_hidden_tests(check)).body
                 if not isinstance(st, ast.Assert) and not any(isinstance(x, ast.Name) and x.id in names for x in ast.walk(st))]
        tries = [f"try:\n    {line}\nexcept Exception:\n    pass" for line in setup + _visible_answer_copies(check, names)]
        c["source"] = "\n".join([_src(c)] + tries)
    return nb


@pytest.mark.heavy
def test_nbgrader_grades_the_teacher_100_the_unanswered_0_and_a_copycat_at_most_25_percent(tmp_path, monkeypatch):
    pytest.importorskip("nbgrader", reason="nbgrader (the course extra) is not installed")
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.setenv("PYTHONPATH", str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    course, folder = tmp_path / "course", tmp_path / "nbgrader"
    r = subprocess.run([sys.executable, "-m", "xai_geometry.cli", "course", "--out", str(course), "--no-slides",
                        "--nbgrader", str(folder)], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    from nbgrader.apps import NbGraderAPI
    from nbgrader.api import Gradebook
    from traitlets.config import Config, PyFileConfigLoader
    monkeypatch.chdir(folder)
    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(folder)).load_config()
    cfg.CourseDirectory.root = str(folder)
    api = NbGraderAPI(config=cfg)
    weeks = sorted(p.name for p in (folder / "source").iterdir())
    for week in weeks:
        assert api.generate_assignment(week, force=True, create=True)["success"]
        for student in ("teacher", "blank", "copycat"):
            sub = folder / "submitted" / student / week
            sub.mkdir(parents=True)
            for nb_path in (folder / "release" / week).glob("*.ipynb"):
                nb = json.loads(nb_path.read_text(encoding="utf-8"))
                if student == "teacher": nb = json.loads((folder / "source" / week / nb_path.name).read_text(encoding="utf-8"))
                if student == "copycat": nb = copycat(nb)
                (sub / nb_path.name).write_text(json.dumps(nb), encoding="utf-8")
            result = api.autograde(week, student, force=True, create=True)
            assert result["success"], result.get("log", "")[-3000:]
    scores = {}
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as gb:
        for student in ("teacher", "blank", "copycat"):
            got = total = 0.0
            for week in weeks:
                for nb in gb.find_submission(week, student).notebooks:
                    got, total = got + nb.code_score, total + nb.max_code_score
            scores[student] = got / total
    print("share of the auto-graded points:", {k: f"{v:.1%}" for k, v in scores.items()})
    assert scores["teacher"] == 1.0 and scores["blank"] == 0.0 and scores["copycat"] <= 0.25, scores


def _chromium():
    try:
        from selenium import webdriver  # noqa: F401
    except ImportError:
        return None
    chrome = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    driver = shutil.which("chromedriver")
    return (chrome, driver) if chrome and driver else None


_DECK = r"""
const done = arguments[arguments.length - 1];
const t0 = Date.now();
function wait(cond, then) { if (cond() || Date.now() - t0 > 120000) then(); else setTimeout(() => wait(cond, then), 100); }
const typeset = () => new Promise(r => { if (window.MathJax && MathJax.isReady) MathJax.Hub.Queue(() => r()); else r(); });
wait(() => window.xgReveal && document.querySelector('.reveal.ready') && window.MathJax && MathJax.isReady, () => typeset().then(() => {
  const R = window.xgReveal, out = [], shown = document.querySelectorAll('.mjx-chtml').length;
  if (!R || !document.querySelector('.reveal.ready')) { done({ready: false}); return; }
  const H = R.getConfig().height, W = R.getConfig().width;
  document.querySelectorAll('.reveal .slides > section').forEach((s, i) => {
    const subs = s.querySelectorAll(':scope > section');
    (subs.length ? Array.from(subs, (_, j) => j) : [0]).forEach(j => {
      R.slide(i, j); const sec = R.getCurrentSlide();
      out.push({slide: [i, j], height: sec.scrollHeight, frame: H, width: sec.scrollWidth, frame_width: W, title: ((sec.querySelector('h1,h2,h3') || {}).textContent || '').slice(0, 60)});
    });
  });
  done({ready: true, slides: out, typeset: shown,
        tex: document.querySelectorAll('script[type^="math/tex"]').length});
}));
"""


@pytest.fixture(scope="module")
def decks(tmp_path_factory):
    if _chromium() is None: pytest.skip("needs Chromium, its driver and selenium (apt-get install chromium chromium-driver)")
    out = tmp_path_factory.mktemp("decks")
    r = subprocess.run([sys.executable, "-m", "xai_geometry.cli", "course", "--out", str(out)], cwd=ROOT,
                       capture_output=True, text=True)
    if r.returncode != 0 and "npm" in r.stderr: pytest.skip(r.stderr.strip())
    assert r.returncode == 0, r.stderr
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    chrome, driver = _chromium()
    o = Options()
    o.binary_location = chrome
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,800",
              "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",   # every request to the network refused
              "--host-resolver-rules=MAP * ~NOTFOUND"):
        o.add_argument(a)
    o.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")   # a profile of its own
    # Chromium puts its unix sockets in TMPDIR, and a socket's path has at most 107 bytes: the test run's nested
    # temporary folders (a worker's inside the run's) are longer, and Chromium then exits at start. A short folder:
    short = tempfile.mkdtemp(prefix="xg-chromium-", dir="/tmp" if os.path.isdir("/tmp") else None)
    try: d = webdriver.Chrome(service=Service(driver, env={**os.environ, "TMPDIR": short}), options=o)
    except Exception:
        shutil.rmtree(short, ignore_errors=True); raise
    d.set_script_timeout(300)   # a loaded machine: reveal.js and MathJax may take long to start
    seen = {}
    try:
        for stem in GRADED_UNITS + TUTORIALS:
            html = (out / "slides" / f"{stem}.slides.html").read_text(encoding="utf-8")
            online = re.findall(r'<(?:script|link)[^>]+(?:src|href)="(https?:[^"]+)"', html)
            assert not online, f"{stem} loads {online}"
            d.get((out / "slides" / f"{stem}.slides.html").resolve().as_uri())
            seen[stem] = d.execute_async_script(_DECK)
    finally:
        d.quit(); shutil.rmtree(short, ignore_errors=True)
    return seen


@pytest.mark.heavy
@pytest.mark.parametrize("stem", GRADED_UNITS + TUTORIALS)
def test_a_deck_starts_as_slides_offline_with_its_tex_typeset(decks, stem):
    r = decks[stem]
    assert r["ready"] and len(r["slides"]) >= 3, stem
    assert r["tex"] == 0 or r["typeset"] >= r["tex"] * 0.9, (r["typeset"], r["tex"])


@pytest.mark.heavy
def test_no_slide_runs_past_its_frame(decks):
    over = [(s, x["title"], x["height"], x["width"]) for s, r in decks.items() for x in r["slides"]
            if x["height"] > x["frame"] + 1 or x["width"] > x["frame_width"] + 1]
    assert not over, over


def test_the_build_checks_its_tools_before_writing_anything(tmp_path, monkeypatch):
    "A missing tool (nbconvert for the slides, the slides' offline assets, nbgrader) is one clear error, and nothing is written."
    import importlib.util
    from xai_geometry.runner import UsageError
    real = importlib.util.find_spec
    out = tmp_path / "course"
    for missing, kw in [("nbconvert", {"slides": True}), ("nbgrader", {"slides": False, "nbgrader": tmp_path / "ng"})]:
        monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a, _m=missing: None if name == _m else real(name, *a))
        with pytest.raises(UsageError, match=missing):
            build_course(out, nbs=ROOT / "nbs", **kw)
        monkeypatch.setattr(importlib.util, "find_spec", real)
    monkeypatch.setenv("XAI_GEOMETRY_SLIDE_ASSETS", str(tmp_path / "empty"))          # no reveal.js, no MathJax there
    with pytest.raises(UsageError, match="npm"):
        build_course(out, nbs=ROOT / "nbs", slides=True)
    assert not out.exists() and not (tmp_path / "ng").exists()


def test_nbgrader_releases_from_the_course_folder_what_the_students_get(tmp_path, monkeypatch):
    """`build_course(..., nbgrader=DIR)` writes a course folder nbgrader uses as it is: with its nbgrader_config.py (the
    code stub without `raise NotImplementedError()`), `generate_assignment` releases exactly our student notebooks."""
    pytest.importorskip("nbgrader", reason="nbgrader (the course extra) is not installed")
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))  # its alembic
    from nbgrader.apps import NbGraderAPI
    from traitlets.config import PyFileConfigLoader
    folder = tmp_path / "nbgrader"
    build_course(tmp_path / "course", nbs=ROOT / "nbs", slides=False, nbgrader=folder)
    monkeypatch.chdir(folder)
    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(folder)).load_config()
    cfg.CourseDirectory.root = str(folder)
    result = NbGraderAPI(config=cfg).generate_assignment("week1", force=True, create=True)
    assert result["success"], result.get("log", "")[-3000:]
    released = sorted((folder / "release" / "week1").glob("*.ipynb"))
    assert [p.stem for p in released] == ["50_foundations_shapley", "57_problem_set_a"]
    for p in released:
        theirs = json.loads(p.read_text(encoding="utf-8"))
        ours = json.loads((tmp_path / "course" / "student" / p.name).read_text(encoding="utf-8"))
        assert [_src(c) for c in theirs["cells"]] == [_src(c) for c in ours["cells"]], p.stem


def test_the_nbgrader_option_is_one_line_on_a_mistake(tmp_path):
    target = tmp_path / "a_file"
    target.write_text("x")
    r = subprocess.run([sys.executable, "-m", "xai_geometry.cli", "course", "--out", str(tmp_path / "out"), "--no-slides",
                        "--nbgrader", str(target)], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "--nbgrader" in r.stderr, r.stderr
    assert not (tmp_path / "out" / "student").exists()


@pytest.mark.parametrize("stem", GRADED_UNITS)
def test_the_site_copy_of_a_unit_holds_no_answer_key(stem):
    "What the docs build renders for a graded unit (`docs.site_notebook`): the student's view plus a note per exercise."
    pytest.importorskip("execnb", reason="execnb (nbdev's) reads the notebooks for the site")
    from xai_geometry.course import TEACHER_NOTE
    from xai_geometry.docs import site_notebook
    source = json.loads((ROOT / "nbs" / f"{stem}.ipynb").read_text(encoding="utf-8"))
    shown = site_notebook(ROOT / "nbs" / f"{stem}.ipynb")
    text = "\n".join(c.source for c in shown.cells)
    outputs = json.dumps([c.get("outputs", []) for c in shown.cells])
    task = "\n".join(_outside_key(_src(c)) for c in source["cells"])
    assert not [m for m in MARKERS if m in text]
    assert not [l for l in _key_lines(source) if (l in text or l in outputs) and l not in task]
    assert text.count(TEACHER_NOTE) == len(exercises(source)) + len(written_answers(source))


def test_the_nbgrader_option_refuses_a_course_folder_and_an_empty_path(tmp_path):
    "`--nbgrader DIR` on a course folder already there exits 2 in one line and keeps the teacher's files, unless --force."
    cmd = [sys.executable, "-m", "xai_geometry.cli", "course", "--out", str(tmp_path / "out"), "--no-slides"]
    folder = tmp_path / "nbgrader"
    (folder / "source" / "week1").mkdir(parents=True)
    (folder / "nbgrader_config.py").write_text("c = get_config()  # the teacher's\n")
    (folder / "source" / "week1" / "50_foundations_shapley.ipynb").write_text("edited")
    for extra in (["--nbgrader", str(folder)], ["--nbgrader", ""], ["--nbgrader", " ", "--force"]):
        r = subprocess.run(cmd + extra, cwd=ROOT, capture_output=True, text=True)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "--nbgrader" in r.stderr, r.stderr
    assert (folder / "nbgrader_config.py").read_text() == "c = get_config()  # the teacher's\n"
    assert (folder / "source" / "week1" / "50_foundations_shapley.ipynb").read_text() == "edited"
    assert not (tmp_path / "out").exists()
    r = subprocess.run(cmd + ["--nbgrader", str(folder), "--force"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "ClearSolutions" in (folder / "nbgrader_config.py").read_text()
