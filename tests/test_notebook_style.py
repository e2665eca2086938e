"""House rules of the notebooks that tools depend on.

nbdev's doc processing executes every cell that imports something (to render the API docs), so a
cell that mixes imports with other code would run heavy work while the docs build: imports live in
cells of their own. Exported code must not import the development tools (nbdev, fastcore).

Derivations: each step of a display equation carries a short label (a `\\tag` of at most 12 characters such as
`\\tag{A1}`, a `\\text` of at most 30) and its reason is written in the prose right below the display, so that every
display fits the column of the docs' page.
"""
import ast
import re
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "nbs").glob("*.ipynb"))


def _cells(nb):
    for i, c in enumerate(json.loads(nb.read_text(encoding="utf-8"))["cells"]):
        if c["cell_type"] == "code": yield i, "".join(c["source"])


def _tree(src):
    lines = [l for l in src.splitlines() if not l.lstrip().startswith(("%", "!"))]
    try: return ast.parse("\n".join(lines))
    except SyntaxError: return None


def _directives(src):
    return {l.strip()[2:].strip().split()[0] for l in src.splitlines()
            if l.strip().startswith("#|") and len(l.strip()) > 2}


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_imports_in_their_own_cells(nb):
    bad = []
    for i, src in _cells(nb):
        dirs = _directives(src)
        if dirs & {"export", "exports", "exporti", "exec_doc"} or "eval:" in dirs: continue
        t = _tree(src)
        if t is None: continue
        nodes = list(ast.walk(t))
        has_imp = any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in nodes)
        has_other = any(isinstance(n, (ast.Expr, ast.Assign)) for n in nodes)
        if has_imp and has_other: bad.append(f"cell {i}: {src[:120]!r}")
    assert not bad, f"{nb.name}: cells mixing imports and other code (the docs build would run them):\n" + "\n".join(bad)


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_exported_code_needs_no_dev_tools(nb):
    "No module-level import of a development tool; the docs builder may import nbdev inside the function that runs it."
    bad = []
    for i, src in _cells(nb):
        if not (_directives(src) & {"export", "exports", "exporti"}): continue
        t = _tree(src)
        for n in (t.body if t else []):
            mods = [a.name for a in n.names] if isinstance(n, ast.Import) else [n.module or ""] if isinstance(n, ast.ImportFrom) else []
            bad += [f"cell {i}: imports {m}" for m in mods if m.split(".")[0] in ("nbdev", "fastcore", "execnb")]
    assert not bad, f"{nb.name}: exported code imports development tools:\n" + "\n".join(bad)


OUTSIDE = re.compile(r"REFERENCE\.md|KHIOPS\.md|DESIGN\.md|STYLE\.md|NBDEV\.md|\.\./shared|shared/datasets|shared/tools")


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_file_outside_the_repository_is_cited(nb):
    "A reader has the repository only: the prose brings facts in with their real sources."
    text = nb.read_text(encoding="utf-8")
    assert not OUTSIDE.search(text), f"{nb.name} cites a file outside the repository: {OUTSIDE.search(text).group(0)}"


#: what a cell needs from an optional extra -> the flag that makes it skip, with its reason, when the extra is absent
EXTRA_NEEDED = {
    "compare": re.compile(r"^\s*(import|from)\s+(shap|lime|pgmpy|quantus|networkx)\b|\.to_shap\(|\.waterfall\(", re.M),
    "cluster": re.compile(r"^\s*(import|from)\s+(dask|distributed)\b|\.(to|read)_parquet\(", re.M),   # Parquet: pyarrow, with dask[dataframe]
}


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_cell_that_needs_an_extra_carries_its_flag(nb):
    """The README's install is the `dev` extra alone, and its `pytest` runs every notebook: a cell that imports a
    package of an optional extra (or draws through shap) carries that extra's flag, so that it skips with a reason
    instead of failing. Exported code imports such packages inside the functions that need them, so it is exempt."""
    bad = []
    for i, src in _cells(nb):
        dirs = _directives(src)
        if dirs & {"export", "exports", "exporti"} or "eval: false" in src: continue
        bad += [f"cell {i} needs the {flag} extra: {m.group(0).strip()!r}" for flag, pat in EXTRA_NEEDED.items()
                if flag not in dirs and "slow" not in dirs for m in [pat.search(src)] if m]
    assert not bad, f"{nb.name}: cells that need an optional extra without its flag:\n" + "\n".join(bad)


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_page_opens_with_its_title(nb):
    "The first cell is a markdown title, `# ...`: the docs take the page's name and the sidebar's entry from it."
    first = json.loads(nb.read_text(encoding="utf-8"))["cells"][0]
    src = "".join(first["source"]) if isinstance(first["source"], list) else first["source"]
    assert first["cell_type"] == "markdown" and src.startswith("# "), f"{nb.name} opens without a '# ' title: {src[:60]!r}"


LEAK = re.compile(r"site-packages/|Traceback \(most recent call last\)|/home/[^/\s]+/|/Users/[^/\s]+/")


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_saved_outputs_are_clean(nb):
    "The docs show the saved outputs: no error, no traceback, no warning that prints a path of the machine that ran it."
    bad = []
    for i, c in enumerate(json.loads(nb.read_text(encoding="utf-8"))["cells"]):
        for o in c.get("outputs", []):
            if o.get("output_type") == "error": bad.append(f"cell {i}: error output {o.get('ename')}")
            elif LEAK.search(json.dumps(o)): bad.append(f"cell {i}: {LEAK.search(json.dumps(o)).group(0)!r} in a saved output")
    assert not bad, f"{nb.name}:\n" + "\n".join(bad)


def test_the_package_cites_no_file_outside_the_repository():
    files = [p for p in (ROOT / "xai_geometry").rglob("*.py") if p.name != "_modidx.py"] + [ROOT / "README.md"]
    bad = [str(p.relative_to(ROOT)) for p in files if OUTSIDE.search(p.read_text(encoding="utf-8"))]
    assert not bad, bad


def _package_version():
    from configparser import ConfigParser
    cp = ConfigParser(delimiters=["="]); cp.read(ROOT / "settings.ini", encoding="utf-8")
    return cp["DEFAULT"]["version"]


WARNING = re.compile(r"\w*Warning:")
OWN_VERSION = re.compile(r"xai_geometry\.__version__|version\(\s*['\"]xai[-_]geometry['\"]")  # a cell that shows the version
VERSION_NAMED = re.compile(r"xai[-_]geometry[ =:v'\"]{1,3}(\d+\.\d+(?:\.\d+)?)")                 # "xai_geometry 0.2.0" in any output
SEMVER = re.compile(r"\b\d+\.\d+\.\d+\b")
# notebooks whose saved outputs are known to be stale, each with who re-runs it; the mark is strict: once the notebook
# is clean this test fails until its entry goes
STALE_OUTPUTS: dict[str, str] = {}


@pytest.mark.parametrize("nb", [pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=STALE_OUTPUTS[p.stem]))
                                if p.stem in STALE_OUTPUTS else p for p in NOTEBOOKS], ids=lambda p: p.stem)
def test_saved_outputs_hold_no_warning_and_no_other_version(nb):
    "What the docs show is current: no warning printed on stderr, and no version of the package other than settings.ini's."
    version, bad = _package_version(), []
    for i, c in enumerate(json.loads(nb.read_text(encoding="utf-8"))["cells"]):
        src = "".join(c.get("source", []))
        for o in c.get("outputs", []):
            if o.get("output_type") == "stream":
                text = "".join(o.get("text", []))
                if o.get("name") == "stderr" and WARNING.search(text):
                    bad.append(f"cell {i}: a warning in a saved output: {WARNING.search(text).group(0)}")
            else:
                text = "".join("".join(v) if isinstance(v, list) else str(v) for k, v in o.get("data", {}).items()
                               if k.startswith("text/"))
            shown = set(VERSION_NAMED.findall(text)) | (set(SEMVER.findall(text)) if OWN_VERSION.search(src) else set())
            shown -= set(SEMVER.findall(src))  # a version the cell writes itself is an example input, not a stale output
            bad += [f"cell {i}: shows version {v} of the package, which is {version}" for v in sorted(shown - {version})]
    assert not bad, f"{nb.name} (execute it again, save its outputs, then nbdev_clean):\n" + "\n".join(bad)


# A wall time is machine-dependent: no notebook or test may compare one with a number. A time-like quantity is a
# name, attribute, column label or keyword ending in _s/_sec(s)/_seconds/_time(s)/_wall/_elapsed/_duration/_took (or
# spelled so: seconds, dt, wall, ...), or a variable assigned from one; a ratio of two times measured in the same
# run is not (that is how benchmarks report), nor a comparison of two times with each other.
TIME_NAME = re.compile(r"(^|_)(sec|secs|seconds|time|times|wall|elapsed|duration|took|dt|runtime)$", re.I)
TIME_COLUMN = re.compile(r"(^|_)(sec|secs|seconds|time|times|wall|elapsed|duration|took|dt|runtime|s)$", re.I)  # fit_s, ours_per_row_s
_NOT_TIME_CALLS = {"len", "int", "str", "repr", "print", "isinstance", "type", "bool", "round", "sorted", "set", "list",
                   "idxmax", "idxmin", "argmax", "argmin", "argsort", "nunique", "count", "isna", "notna"}  # labels, counts
_NOT_TIME_ATTRS = {"index", "columns", "shape", "size", "dtype", "name"}
_CHECKS = re.compile(r"^(assert\w*|test_close|test_eq|test_ne|isclose|allclose|between)$")


def _call_name(node) -> str:
    return node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")


def _time_like(node, env) -> bool:
    if isinstance(node, ast.Name): return node.id in env or bool(TIME_NAME.search(node.id))
    if isinstance(node, ast.Constant): return isinstance(node.value, str) and bool(TIME_COLUMN.search(node.value))
    if isinstance(node, ast.Attribute):
        if node.attr in _NOT_TIME_ATTRS: return False
        return bool(TIME_COLUMN.search(node.attr)) or _time_like(node.value, env)
    if isinstance(node, ast.Subscript): return _time_like(node.value, env) or _time_like(node.slice, env)
    if isinstance(node, ast.BinOp):
        left, right = _time_like(node.left, env), _time_like(node.right, env)
        if isinstance(node.op, ast.Div) and left and right: return False    # a ratio of two times
        return left or right
    if isinstance(node, ast.Call):
        if _call_name(node) in _NOT_TIME_CALLS: return False
        return _time_like(node.func, env) or any(_time_like(a, env) for a in node.args)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)): return any(_time_like(e, env) for e in node.elts)
    if isinstance(node, ast.UnaryOp): return _time_like(node.operand, env)
    if isinstance(node, (ast.GeneratorExp, ast.ListComp)): return _time_like(node.elt, env)
    return False


def _bind(target, timed: bool, env: set):
    for n in ast.walk(target):
        if isinstance(n, ast.Name): (env.add if timed else env.discard)(n.id)


def _zero(node) -> bool:
    return isinstance(node, ast.Constant) and (node.value is None or (not isinstance(node.value, str) and node.value == 0))


def _timing_assertions(trees) -> list:
    "Assertions, in a sequence of parsed cells or files, that compare a time-like quantity with a number."
    env, bad = set(), []
    for label, tree in trees:
        events = []
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.comprehension, ast.Assert, ast.Call)):
                events.append(node)
        events.sort(key=lambda n: (getattr(n, "lineno", getattr(getattr(n, "target", None), "lineno", 0)),
                                   getattr(n, "col_offset", getattr(getattr(n, "target", None), "col_offset", 0))))
        for node in events:
            if isinstance(node, ast.Assign) and node.value is not None:
                for t in node.targets: _bind(t, _time_like(node.value, env), env)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                _bind(node.target, _time_like(node.value, env), env)
            elif isinstance(node, (ast.For, ast.comprehension)):
                _bind(node.target, _time_like(node.iter, env), env)
            elif isinstance(node, ast.Assert) or (isinstance(node, ast.Call) and _CHECKS.match(_call_name(node))):
                for sub in ast.walk(node.test if isinstance(node, ast.Assert) else node):
                    if isinstance(sub, ast.Compare): sides = [sub.left, *sub.comparators]
                    elif isinstance(sub, ast.Call) and _CHECKS.match(_call_name(sub)):
                        sides = ([sub.func.value] if _call_name(sub) == "between" else []) + list(sub.args[:3])
                    else: continue
                    sides = [x for x in sides if not _zero(x)]   # a time compared with 0 (or None) holds on any machine
                    timed = [_time_like(x, env) for x in sides]
                    if any(timed) and not all(timed):
                        bad.append(f"{label}: {ast.unparse(sub)[:140]}"); break
    return sorted(set(bad), key=bad.index)


def _notebook_trees(nb):
    for i, src in _cells(nb):
        if "eval:" in _directives(src): continue
        t = _tree(src)
        if t is not None: yield f"cell {i}", t


# Notebooks whose timing assertions are being rewritten elsewhere: strict, so that the entry goes once they are.
TIMING_BEING_REWRITTEN: dict[str, str] = {}


@pytest.mark.parametrize("nb", [pytest.param(p, marks=pytest.mark.xfail(reason=TIMING_BEING_REWRITTEN[p.stem], strict=True))
                                if p.stem in TIMING_BEING_REWRITTEN else p for p in NOTEBOOKS], ids=lambda p: p.stem)
def test_no_wall_time_is_asserted(nb):
    "Timings live in the benchmarks, as ratios measured in the same run: a busy or another machine must not fail a notebook."
    bad = _timing_assertions(_notebook_trees(nb))
    assert not bad, f"{nb.name} compares a wall time with a number:\n" + "\n".join(bad)


def test_no_test_asserts_a_wall_time():
    files = sorted((ROOT / "tests").glob("test_*.py"))
    bad = _timing_assertions((p.name, ast.parse(p.read_text(encoding="utf-8"))) for p in files)
    assert not bad, "tests comparing a wall time with a number:\n" + "\n".join(bad)


def test_the_wall_time_rule_catches_its_forms():
    "The forms this rule exists for, and forms it must leave alone."
    cases = json.loads((ROOT / "tests" / "data" / "wall_time_rule_cases.json").read_text(encoding="utf-8"))
    flagged, left = cases["flagged"], cases["left"]
    for src in flagged: assert _timing_assertions([("x", ast.parse(src))]), src
    for src in left: assert not _timing_assertions([("x", ast.parse(src))]), src


# Display equations: a step's label is short, its reason goes in the prose below the display (the rule of the module's
# docstring). Long reasons written as a \tag or a \text are what ran past the page's column.
DISPLAY = re.compile(r"\$\$(.*?)\$\$|\\begin\{(align\*?|equation\*?|gather\*?|multline\*?)\}(.*?)\\end\{\2\}", re.S)
LABEL = re.compile(r"\\(tag\*?|text|textrm|textit|textbf|mbox)\s*\{")
TAG_MAX, TEXT_MAX = 12, 30


def _braced(s: str, i: int) -> str:
    "The text inside the balanced braces whose opening brace is s[i]."
    depth = 0
    for j in range(i, len(s)):
        depth += {"{": 1, "}": -1}.get(s[j], 0) if s[j - 1] != "\\" or j == i else 0
        if depth == 0: return s[i + 1:j]
    return s[i + 1:]


def long_labels(markdown: str) -> list[str]:
    "Every \\tag longer than TAG_MAX and every \\text (\\textrm, \\mbox, ...) longer than TEXT_MAX in a display equation."
    bad = []
    for m in DISPLAY.finditer(markdown):
        eq = m.group(0)
        for l in LABEL.finditer(eq):
            body = _braced(eq, l.end() - 1)
            limit = TAG_MAX if l.group(1).startswith("tag") else TEXT_MAX
            if len(body) > limit: bad.append(f"\\{l.group(1)}{{{body}}} ({len(body)} > {limit} characters)")
    return bad


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_display_labels_are_short(nb):
    "A display step carries a short label; its reason is a sentence below the display (long tags ran past the column)."
    bad = []
    for i, c in enumerate(json.loads(nb.read_text(encoding="utf-8"))["cells"]):
        if c["cell_type"] != "markdown": continue
        src = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        bad += [f"cell {i}: {b}" for b in long_labels(src)]
    assert not bad, (f"{nb.name}: write the reason in the prose below the display and keep a short label, "
                     "e.g. `&& \\text{(a)}`:\n" + "\n".join(bad))


def test_the_display_label_rule_catches_its_forms():
    assert long_labels(r"$$a = b \tag{A1: the definition}$$") and not long_labels(r"$$a = b \tag{A1}$$")
    long_reason = r"\begin{aligned} a &= b && \text{(triangle, then reverse triangle inequality)} \end{aligned}"
    assert long_labels("$$" + long_reason + "$$") and long_labels("\\begin{align}" + long_reason + "\\end{align}")
    assert not long_labels(r"$$\begin{aligned} a &= b && \text{(a)}\\ c &\le d && \text{(sum over } j\text{)} \end{aligned}$$")
    assert long_labels(r"$$x \quad\text{(nested {braces} {do not end {the}} label early, it is long)}$$")
    assert not long_labels(r"inline $\text{a long text in running prose is no display label at all}$ math")


# Literate cells: one concept per export cell, short enough to read at once, with its check right beneath it (the next
# code cell asserts something). Every notebook with export cells follows the rule, a new one included; over all of them
# the median export cell (imports aside) is at most EXPORT_CELL_MEDIAN_LINES lines.
EXPORT_CELL_MAX_LINES = 60
EXPORT_CELL_MEDIAN_LINES = 15
EXPORTING = sorted(p.stem for p in (ROOT / "nbs").glob("*.ipynb")
                   if any(_directives(s) & {"export", "exports", "exporti"} for _, s in _cells(p)))
_EXPORTS = {"export", "exports", "exporti"}


def _is_check(src) -> bool:
    "Whether a cell asserts something: an `assert`, a call to test_*/assert*/check_additivity, or a `pytest.raises`/`warns` block."
    t = _tree(src)
    if t is None: return False
    for n in ast.walk(t):
        if isinstance(n, ast.Assert): return True
        if isinstance(n, ast.Call) and re.match(r"^(test_\w+|assert\w*|check_additivity|raises|warns)$", _call_name(n)): return True
    return False


def _imports_only(src) -> bool:
    t = _tree(src)
    return t is not None and all(isinstance(n, (ast.Import, ast.ImportFrom)) for n in t.body)


def literate_cell_problems(nb) -> list[str]:
    "Export cells longer than the ceiling, and export cells (other than imports) whose next code cell checks nothing."
    cells = list(_cells(nb)); bad = []
    for pos, (i, src) in enumerate(cells):
        if not (_directives(src) & _EXPORTS): continue
        n = len(src.rstrip("\n").splitlines())
        if n > EXPORT_CELL_MAX_LINES: bad.append(f"cell {i}: an export cell of {n} lines (at most {EXPORT_CELL_MAX_LINES})")
        if _imports_only(src): continue
        nxt = cells[pos + 1] if pos + 1 < len(cells) else None
        if nxt is None or _directives(nxt[1]) & _EXPORTS or not _is_check(nxt[1]):
            bad.append(f"cell {i}: an export cell with no check right beneath it ({src.splitlines()[1][:60]!r} ...)")
    return bad


@pytest.mark.parametrize("stem", EXPORTING)
def test_export_cells_are_short_and_checked_beneath(stem):
    bad = literate_cell_problems(ROOT / "nbs" / f"{stem}.ipynb")
    assert not bad, f"{stem}: one concept per export cell, its check in the next code cell:\n" + "\n".join(bad)


def export_cell_lengths(paths) -> list[int]:
    "The length in lines of every export cell that is not only imports, over the notebooks."
    return [len(src.rstrip("\n").splitlines()) for p in paths for _, src in _cells(p)
            if _directives(src) & _EXPORTS and not _imports_only(src)]


def test_export_cells_are_short_over_all_notebooks():
    n = sorted(export_cell_lengths(ROOT / "nbs" / f"{s}.ipynb" for s in EXPORTING))
    median = (n[(len(n) - 1) // 2] + n[len(n) // 2]) / 2
    assert median <= EXPORT_CELL_MEDIAN_LINES, (f"the median export cell has {median} lines over {len(n)} cells (at most "
                                               f"{EXPORT_CELL_MEDIAN_LINES}): split the longest cells, one concept each")


def test_the_literate_cell_rule_catches_its_forms(tmp_path):
    def nb(*cells):
        p = tmp_path / "x.ipynb"
        p.write_text(json.dumps({"cells": [{"cell_type": "code", "source": s} for s in cells]}), encoding="utf-8")
        return p
    assert not literate_cell_problems(nb("#| export\nimport numpy as np", "#| export\ndef f(): return 1", "assert f() == 1"))
    assert literate_cell_problems(nb("#| export\ndef f(): return 1", "#| export\ndef g(): return 2", "assert g() == 2"))
    assert literate_cell_problems(nb("#| export\ndef f(): return 1", "f()"))                     # no assertion beneath
    assert literate_cell_problems(nb("#| export\ndef f(): return 1"))                            # nothing beneath
    long = "#| export\n" + "\n".join(f"x{i} = {i}" for i in range(EXPORT_CELL_MAX_LINES))
    assert literate_cell_problems(nb(long, "test_eq(x0, 0)"))
    assert export_cell_lengths([nb("#| export\nimport numpy as np", "#| export\ndef f():\n    return 1", "assert f()")]) == [3]
