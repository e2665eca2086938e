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

from xai_geometry.course import (BEGIN, END, GRADED_UNITS, HIDDEN_BEGIN, HIDDEN_END, MARK_BEGIN, MARK_END, PARTS, TUTORIALS,
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


# A student who answers each exercise by calling the package's (or the notebook's) function for it, where there is
# one: the right value, the wrong method where the exercise says "by hand" or "without calling"; the other exercises
# left unanswered. Only the points where the call is the exercise should be scored.
CALLING = {
    "shapley_square_game": "phi_square = coalition_shapley(lambda m: np.array([[float(a[m].sum()) ** 2]]), 3)[0, :, 0]",
    "shapley_observational": "phi_obs_01 = shapley(observational_game((0, 1)), 2)",
    "shapley_naive_bayes_closed_form": "phi_closed = exact_shapley_values(model, rows)[:, :, 1]",
    "pset_a_top_features": "top_features = set(X.columns[np.argsort(-np.abs(explain(model, X).values).mean(axis=0))[:3]])",
    "pset_a_base_value": "base_value = float(explain(model, X).base_values[0])",
    "pset_a_correlated": "C = X.corr().abs().to_numpy(copy=True)\nnp.fill_diagonal(C, 0)\n"
                         "most_correlated = {X.columns[k] for k in np.unravel_index(np.argmax(C), C.shape)}",
    "lrp_zero_rule": "def lrp_0_layer(a, W, R): return lrp_layer(a, W, R)",
    "lrp_conservation": "total_relevance = float(lrp(x_new)[0].sum())",
    "lrp_epsilon": "eps_half = next(e for e in eps_grid if lrp(x_new, eps=e)[0].sum() / f(x_new) < 0.5)",
    "lrp_saturation": "ig_by_hand = integrated_gradients(np.array([0.5, 2.5]))",
    "flipping_aufc": "aufc_by_hand = aufc(c_ex)",
    "flipping_order": "from xai_geometry.explainers.flipping import _tie_free_order\n"
                      "order_0 = list(_tie_free_order(np.sign(f(points[:1]))[:, None] * R[:1], 1e-12, np.random.default_rng(0))[0])",
    "flipping_ties": "def break_ties(R, random_state=None):\n    from xai_geometry.explainers.flipping import _tie_free_order\n"
                     "    R = np.asarray(R, float)\n    order = _tie_free_order(R, 1e-12, np.random.default_rng(random_state))\n"
                     "    ranks = np.empty_like(R)\n"
                     "    np.put_along_axis(ranks, order, np.tile(np.arange(R.shape[1], 0, -1, dtype=float), (len(R), 1)), axis=1)\n"
                     "    return ranks",
    "dependence_copies": "X3 = np.c_[x1, x1, x1, x3]\n"
                         "p3 = shapley_values(GaussianNB().fit(X3[train], y[train]), X3[test], background=X3[:200])[:, :, 1]\n"
                         "copies_factor = float(np.abs(p3[:, :3].sum(axis=1)).mean() / np.abs(phi_single[:, 0]).mean())",
    "dependence_cmi": "r_ = np.random.default_rng(0)\n"
                      "s_ = np.r_[r_.multivariate_normal([0, 0], [[1, .6], [.6, 1]], 20000), r_.multivariate_normal([1, 1], [[1, .8], [.8, 1]], 20000)]\n"
                      "cmi_classes = float(conditional_mutual_information(s_, np.r_[np.zeros(20000), np.ones(20000)])[0, 1])",
    "dependence_tree": "tree_edges = set(maximum_spanning_tree(W4))",
    "dependence_first_edge": "first_pair = set(first[0])",
    "pset_b_lrp": "relevance_lrp = explain(svm, points).values",
    "pset_b_aufc": "aufc_lrp = aufc(*flipping_curve(svm, points, explain(svm, points).values, background=X, n_draws=20, random_state=0)[::-1])\n"
                   "aufc_occlusion = aufc(*flipping_curve(svm, points, occlusion(svm, points, background=X), background=X, n_draws=20, random_state=0)[::-1])",
    "pset_b_verdict": "preferred = 'LRP' if aufc_lrp < aufc_occlusion else 'occlusion'",
    "pset_c_losses": "losses = [log_loss(y_te, nb.predict_proba(X_te)), log_loss(y_te, gnb.predict_proba(X_te))]",
    "pset_c_first_edge": "first_edge = set(X.columns[list(gnb.structure_.edges[0])])",
    "pset_c_edge_correlation": "edge_correlation = float(X_tr[sorted(first_edge)[0]].corr(X_tr[sorted(first_edge)[1]]))",
}
# A student who copies what is printed where students read (the notebooks' outputs, the site's pages) or shown as the
# format of an answer: the quizzes' format examples, the fraction table of LRP-ε at `x` (below half at ε = 1), the
# mutual information of a correlation of 0.9 that page 30 prints.
COPYING = {"lrp_epsilon": "eps_half = 1.0", "dependence_cmi": "cmi_classes = 0.830"}


def _format_example(task: str) -> str | None:
    m = re.search(r"Set `(\w+)` to a tuple.*?e\.g\. `(\([^`]+\))`", task, re.S)
    return f"{m[1]} = {m[2]}" if m else None


def _fill(nb: dict, answers: dict) -> dict:
    "The released notebook with each answer cell's stub replaced by `answers[grade_id]` (left alone when absent)."
    nb = json.loads(json.dumps(nb))
    for c in nb["cells"]:
        meta = c.get("metadata", {}).get("nbgrader", {})
        if c["cell_type"] != "code" or not meta.get("solution") or meta.get("grade"): continue
        gid = re.sub(r"_answer(_\d+)?$", "", meta.get("grade_id", ""))
        if gid in answers: c["source"] = _src(c).replace("# YOUR CODE HERE", answers[gid])
    return nb


def _copying(nb: dict) -> dict:
    answers = dict(COPYING)
    for i, c in enumerate(nb["cells"]):
        g = _format_example(_src(c)) if c["cell_type"] == "markdown" else None
        if g: answers[next(re.search(r"# graded: (\w+)", _src(d))[1] for d in nb["cells"][i:] if "# graded:" in _src(d))] = g
    return _fill(nb, answers)

_DUMP = """import json as _json, numpy as _np
_answers = {}
for _name in NAMES:
    _value = globals().get(_name)
    if isinstance(_value, (set, frozenset)): _answers[_name] = sorted(map(str, _value))
    else:
        try: _answers[_name] = _np.asarray(_value, float).ravel().tolist()
        except (TypeError, ValueError): pass
with open(FILE, "w") as _f: _json.dump(_answers, _f)"""


def _with_dump(nb: dict, names, file: str) -> dict:
    "The teacher's notebook with a last cell writing the values of its answers `names` to `file` (JSON)."
    nb = json.loads(json.dumps(nb))
    nb["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                        "source": _DUMP.replace("NAMES", repr(list(names))).replace("FILE", repr(file))})
    return nb


def _printed(nb: dict) -> list[str]:
    "The text of every output of a notebook (streams, plain text, errors' messages)."
    out = []
    for c in nb["cells"]:
        for o in c.get("outputs", []):
            t = o.get("text") or o.get("data", {}).get("text/plain") or o.get("evalue") or ""
            out.append("".join(t) if isinstance(t, list) else t)
    return out


_NUMBER = re.compile(r"-?\d+\.(\d+)(?:e([-+]?\d+))?")


def _shows(texts: list[str], value) -> bool:
    """Whether an answer is printed in `texts`: a set of names all in one line; a number or each of two or three
    numbers (not whole numbers) in one output, printed with three or more significant digits."""
    if value and isinstance(value[0], str):
        return any(all(v in line for v in value) for t in texts for line in t.splitlines())
    if not value or len(value) > 3 or all(float(v).is_integer() for v in value): return False
    for t in texts:
        nums = [(float(m[0]), 0.5 * 10.0 ** (int(m[2] or 0) - len(m[1]))) for m in _NUMBER.finditer(t)
                if len(m[0].split("e")[0].lstrip("-0.").replace(".", "")) >= 3]      # three significant digits or more
        if all(any(abs(v - p) <= tol + 1e-12 for p, tol in nums) for v in value): return True
    return False


@pytest.mark.heavy
def test_nbgrader_grades_the_method_and_gives_feedback_without_the_key(tmp_path, monkeypatch):
    """Through real nbgrader (generate_assignment, autograde of withheld submissions, generate_feedback): the teacher
    scores 100 %, an unanswered submission 0 %, a copycat of the visible checks ≤ 25 %, a student who calls the
    package's function for each exercise ≤ 28 %, a student who copies printed numbers ≤ 3 %; the feedback shows no
    hidden test, no mark scheme, and a by-hand exercise answered by a call says why it scored 0."""
    pytest.importorskip("nbgrader", reason="nbgrader (the course extra) is not installed")
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.setenv("PYTHONPATH", str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    course, folder = tmp_path / "course", tmp_path / "nbgrader"
    r = subprocess.run([sys.executable, "-m", "xai_geometry.cli", "course", "--out", str(course), "--no-slides",
                        "--nbgrader", str(folder), "--start", "2027-01-04"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    from nbgrader.apps import NbGraderAPI
    from nbgrader.api import Gradebook
    from traitlets.config import Config, PyFileConfigLoader
    from xai_geometry.course_tools import ASSIGNMENTS, course_marks
    monkeypatch.chdir(folder)
    env = dict(os.environ)
    keys = {}
    exec((folder / "graders" / "course_graders.py").read_text(encoding="utf-8"), keys)
    names = sorted({n for k in keys["KEYS"].values() for n in k["answers"]})
    dumps = tmp_path / "answers"
    dumps.mkdir()
    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(folder)).load_config()   # sets the kernels' PYTHONPATH
    cfg.CourseDirectory.root = str(folder)
    api = NbGraderAPI(config=cfg)
    weeks = sorted(p.name for p in (folder / "source").iterdir())
    students = {"teacher": None, "blank": lambda nb: nb, "copycat": copycat, "calling": lambda nb: _fill(nb, CALLING),
                "copying": _copying}
    try:
        for week in weeks:
            assert api.generate_assignment(week, force=True, create=True)["success"]
            assert not list((folder / "release" / week).glob("*.py")), "the graders were released"
            for student, make in students.items():
                sub = folder / "submitted" / student / week
                sub.mkdir(parents=True)
                for nb_path in (folder / "release" / week).glob("*.ipynb"):
                    nb = json.loads(nb_path.read_text(encoding="utf-8"))
                    if make is None:      # the teacher, whose answers are kept to look for them where students read
                        nb = _with_dump(json.loads((folder / "source" / week / nb_path.name).read_text(encoding="utf-8")),
                                        names, str(dumps / f"{nb_path.stem}.json"))
                    else: nb = make(nb)
                    (sub / nb_path.name).write_text(json.dumps(nb), encoding="utf-8")
                result = api.autograde(week, student, force=True, create=True)
                assert result["success"], result.get("log", "")[-3000:]
            for student in ("calling", "blank"):
                assert api.generate_feedback(week, student, force=True)["success"]
    finally:
        os.environ.clear(); os.environ.update(env)
    scores, per_exercise = {}, {}
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as gb:
        for student in students:
            got = total = 0.0
            for week in weeks:
                for nb in gb.find_submission(week, student).notebooks:
                    got, total = got + nb.code_score, total + nb.max_code_score
                    for g in nb.grades:
                        if g.auto_score is not None: per_exercise[student, g.name] = g.auto_score
            scores[student] = got / total
    print("share of the auto-graded points:", {k: f"{v:.1%}" for k, v in scores.items()}, "of", total)
    print("calling scores on:", sorted(n for (s, n), v in per_exercise.items() if s == "calling" and v > 0))
    assert scores["teacher"] == 1.0 and scores["blank"] == 0.0, scores
    assert scores["copycat"] <= 0.25 and scores["calling"] <= 0.28 and scores["copying"] <= 0.03, scores
    # the gradebook as the syllabus reads it: half the week's exercise points (the written answers not graded yet),
    # half the project (not graded yet); the due dates of --start
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as gb:
        assert [gb.find_assignment(w).duedate.isoformat() for w in weeks] == [f"2027-01-{d}T09:00:00" for d in (11, 18, 25)]
        share = [sum(c.max_score for nb in gb.find_assignment(w).notebooks for c in nb.grade_cells if c.cell_type == "code")
                 / sum(c.max_score for nb in gb.find_assignment(w).notebooks for c in nb.grade_cells) for w in weeks]
    marks = course_marks(folder / "gradebook.db")
    print("course marks:", {k: round(v, 1) for k, v in marks.items()})
    assert abs(marks["teacher"] - 50 * sum(share) / 3) < 1e-9 and marks["blank"] == 0, marks
    released = "\n".join(_src(c) for p in (folder / "release").rglob("*.ipynb") for c in json.loads(p.read_text(encoding="utf-8"))["cells"])
    test_lines = {l.strip() for k in keys["KEYS"].values() for l in k["test"].splitlines()
                  if len(l.strip()) > 25 and l.strip() not in released}   # a line the students' notebook holds is no leak
    feedback = "\n".join(p.read_text(encoding="utf-8") for p in (folder / "feedback").rglob("*.html"))
    import html
    shown = html.unescape(re.sub(r"<[^>]+>", "", feedback))
    assert feedback and "HIDDEN TESTS" not in shown and "MARK SCHEME" not in shown and "Model answer" not in shown
    assert "course_graders" not in shown          # a failure shows its hint alone (xmode Minimal), not the grader's call
    assert not [l for l in test_lines if l in shown], [l for l in test_lines if l in shown][:3]
    assert "this exercise is done by hand" in shown
    # no answer printed where students read: the outputs of their notebooks run (the unanswered submissions, run by
    # autograde) and the site's pages (every notebook's saved outputs, the graded units as the site shows them)
    from xai_geometry.course import public_version
    answers = {}
    for p in dumps.glob("*.json"): answers.update(json.loads(p.read_text()))
    assert len(answers) >= 20, sorted(answers)
    texts = [t for p in (folder / "autograded" / "blank").rglob("*.ipynb") for t in _printed(json.loads(p.read_text(encoding="utf-8")))]
    for p in sorted((ROOT / "nbs").glob("*.ipynb")):
        nb = json.loads(p.read_text(encoding="utf-8"))
        texts += _printed(public_version(nb) if p.stem in GRADED_UNITS else nb)
    printed = sorted(n for n, v in answers.items() if _shows(texts, v))
    print("answers printed where students read:", printed, "of", len(answers))
    assert not printed, printed


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
      let cut = 0;   // a figure whose bottom is hidden by a box that scrolls or clips it, or by the slide
      sec.querySelectorAll('img').forEach(img => {
        const r = img.getBoundingClientRect();
        for (let p = img.parentElement; p && p !== sec.parentElement; p = p.parentElement) {
          const st = getComputedStyle(p);
          if ((p === sec || st.overflowY !== 'visible') && r.bottom > p.getBoundingClientRect().bottom + 1) { cut += 1; break; }
        }
      });
      out.push({slide: [i, j], height: sec.scrollHeight, frame: H, width: sec.scrollWidth, frame_width: W, cut: cut,
                figures: sec.querySelectorAll('img').length, notes: !!sec.querySelector(':scope > aside.notes'),
                title: ((sec.querySelector('h1,h2,h3') || {}).textContent || '').slice(0, 60)});
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
        for stem in GRADED_UNITS + TUTORIALS + PARTS:
            html = (out / "slides" / f"{stem}.slides.html").read_text(encoding="utf-8")
            online = re.findall(r'<(?:script|link)[^>]+(?:src|href)="(https?:[^"]+)"', html)
            assert not online, f"{stem} loads {online}"
            d.get((out / "slides" / f"{stem}.slides.html").resolve().as_uri())
            seen[stem] = d.execute_async_script(_DECK)
    finally:
        d.quit(); shutil.rmtree(short, ignore_errors=True)
    return seen


@pytest.mark.heavy
@pytest.mark.parametrize("stem", GRADED_UNITS + TUTORIALS + PARTS)
def test_a_deck_starts_as_slides_offline_with_its_tex_typeset(decks, stem):
    r = decks[stem]
    assert r["ready"] and len(r["slides"]) >= 3, stem
    assert r["tex"] == 0 or r["typeset"] >= r["tex"] * 0.9, (r["typeset"], r["tex"])


@pytest.mark.heavy
def test_no_slide_runs_past_its_frame(decks):
    over = [(s, x["title"], x["height"], x["width"]) for s, r in decks.items() for x in r["slides"]
            if x["height"] > x["frame"] + 1 or x["width"] > x["frame_width"] + 1]
    assert not over, over


@pytest.mark.heavy
def test_fourteen_decks_with_speaker_notes_on_every_slide_and_no_figure_cut(decks):
    "A deck for every unit and tutorial and one per part (14), speaker notes on every slide, no figure cut by its box."
    assert len(decks) >= 14 and {"A_naive_bayes", "B_neuralized", "C_gnb"} <= set(decks)
    bare = [(s, x["slide"], x["title"]) for s, r in decks.items() for x in r["slides"] if not x["notes"]]
    cut = [(s, x["slide"], x["title"]) for s, r in decks.items() for x in r["slides"] if x["cut"]]
    figures = sum(x["figures"] for r in decks.values() for x in r["slides"])
    print(f"{len(decks)} decks, {sum(len(r['slides']) for r in decks.values())} slides, {figures} figures, {len(cut)} cut")
    assert figures >= 20 and not cut and not bare, (cut[:5], bare[:5])


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


def test_the_nbgrader_option_overwrites_a_course_folder_with_force(tmp_path):
    "`--force` writes the course folder over the teacher's (the course extra: nbgrader)."
    pytest.importorskip("nbgrader", reason="nbgrader (the course extra) writes the course folder")
    cmd = [sys.executable, "-m", "xai_geometry.cli", "course", "--out", str(tmp_path / "out"), "--no-slides"]
    folder = tmp_path / "nbgrader"
    (folder / "source" / "week1").mkdir(parents=True)
    (folder / "nbgrader_config.py").write_text("c = get_config()  # the teacher's\n")
    r = subprocess.run(cmd + ["--nbgrader", str(folder), "--force"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "ClearSolutions" in (folder / "nbgrader_config.py").read_text()


BY_HAND = ("shapley_square_game", "shapley_observational", "shapley_naive_bayes_closed_form", "lrp_zero_rule",
           "lrp_conservation", "lrp_saturation", "flipping_aufc", "flipping_order", "flipping_ties", "dependence_copies",
           "dependence_cmi", "dependence_tree", "dependence_first_edge", "pset_a_base_value")


def test_every_by_hand_exercise_takes_its_functions_away_and_says_so():
    """An exercise done by hand names what its answer may not use (`# without:` in its hidden tests), and its task
    says that the grading takes them away; a quiz scores a point per question and its key is not its format example."""
    from xai_geometry.course_grading import graded_version
    from xai_geometry.course import teacher_version
    keys, tasks = {}, {}
    for stem in GRADED_UNITS:
        nb = json.loads((ROOT / "nbs" / f"{stem}.ipynb").read_text(encoding="utf-8"))
        keys.update(graded_version(teacher_version(nb))[1])
        cells = nb["cells"]
        for i, c in enumerate(cells):
            m = re.search(r"# graded: (\w+)", _src(c))
            if m: tasks[m[1]] = next(_src(d) for d in reversed(cells[:i]) if d["cell_type"] == "markdown")
    assert set(BY_HAND) <= {g for g, k in keys.items() if k["without"]}, set(BY_HAND) - {g for g, k in keys.items() if k["without"]}
    for g in BY_HAND:
        named = [n for n in keys[g]["without"] if f"`{n}`" in tasks[g].split("Graded on the method")[-1]]
        assert "taken away" in tasks[g] and named, (g, keys[g]["without"])
    quizzes = [g for g, k in keys.items() if k["partial"]]
    assert len(quizzes) == 4 and all(keys[g]["points"] == 3 for g in quizzes)
    for g in quizzes:
        example = re.search(r"e\.g\. `(\([^`]+\))`", tasks[g])[1]
        key = tuple(re.findall(r'== "(\w)"', keys[g]["test"]))
        assert len(key) == 3 and all(a != b for a, b in zip(ast.literal_eval(example), key)), (g, example, key)


def test_no_slide_cuts_a_sentence_around_a_formula():
    "Where long prose is cut into sub-slides, each piece ends a sentence and the next starts one (never at a formula)."
    from xai_geometry.course import _deck_source, _ends_sentence, slide_version
    bad = []
    for stem in GRADED_UNITS + TUTORIALS + PARTS:
        cells = [c for c in slide_version(_deck_source(ROOT / "nbs", stem))["cells"] if c["cell_type"] == "markdown"]
        for prev, c in zip(cells, cells[1:]):
            if not re.search(r"-\d+$", str(c.get("id", ""))): continue        # a piece cut from the prose before it
            head = c["source"].lstrip()
            if head[:1].islower() or head.startswith("$$") or not _ends_sentence(prev["source"].split("\n\n")[-1]):
                bad.append((stem, head[:60]))
    assert not bad, bad[:5]
