"""The house rules of the package (nbs/07_package): who may import whom, no import circle, no module over 600 lines,
no estimator or explainer defined in the harness. An import written as a string — "xai_geometry.mod:attr", or
importlib.import_module("xai_geometry.mod") — is an import."""
import ast
import re
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "xai_geometry"
MODULES = sorted(p for p in PKG.rglob("*.py") if p.name != "_modidx.py")
PARTS = ("naive_bayes", "neuralized", "gnb")
# the floors, lowest first: the ground, the explainers, the three parts, the exact methods and the door, the harness,
# and the command line on top (it launches the harness's reproductions and benchmarks by name)
FLOORS = {"ground": 0, "explainers": 1, "naive_bayes": 2, "neuralized": 2, "gnb": 2, "trees": 2, "methods": 3, "door": 3,
          "__init__": 3, "experiments": 4, "cli": 5}
# the former addresses of the methods' home, which read its names (the registry is `xai_geometry.explainers` too):
# re-exports only, no code of their own
FACADES = ("xai_geometry.explainers", "xai_geometry.explainers.method", "xai_geometry.explainers.agnostic")
SERVICES = ("runner", "khiops", "khiops_format", "khiops_job", "docs", "cluster")   # infrastructure of the ground floor


def _name(p: Path) -> str:
    rel = p.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__": parts = parts[:-1]
    return ".".join(parts)


def _floor(mod: str) -> tuple[int, str]:
    parts = mod.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    return FLOORS.get(top, 0), top


_DOTTED = re.compile(r"^(xai_geometry(?:\.\w+)*)(?::(\w+))?$")

def _string_imports(nodes):
    "(line, module, names) of the import strings among the nodes: 'xai_geometry.mod:attr' anywhere, and the literal argument of importlib.import_module / __import__."
    for node in nodes:
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            fn = node.func
            called = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            m = _DOTTED.match(node.args[0].value)
            if called in ("import_module", "__import__") and m: yield node.lineno, m.group(1), []
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and ":" in node.value:
            m = _DOTTED.match(node.value)
            if m and m.group(2): yield node.lineno, m.group(1), [m.group(2)]


def _module_level_nodes(tree):
    "Every node of the module's own statements, not inside a function body."
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)): stack.extend(ast.iter_child_nodes(node))


def _imports(p: Path, module_level_only: bool = False):
    "(line, imported module, names) of every import of xai_geometry in a module, import strings included (function bodies included unless told)."
    tree = ast.parse(p.read_text(encoding="utf-8"))
    mod = _name(p); pkg = mod if p.name == "__init__.py" else mod.rsplit(".", 1)[0]
    nodes = list(_module_level_nodes(tree)) if module_level_only else list(ast.walk(tree))
    yield from _string_imports(nodes)
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split("."); base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else: target = node.module or ""
            if target.startswith("xai_geometry"):
                yield node.lineno, target, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("xai_geometry"): yield node.lineno, a.name, []


def _public(target: str, name: str) -> bool:
    "Whether `name` is a public name of module `target` (listed in its __all__), or a submodule."
    import importlib
    m = importlib.import_module(target)
    return name in getattr(m, "__all__", ()) or (isinstance(getattr(m, name, None), type(m)))


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_imports_go_down_the_floors(path):
    mod = _name(path); lvl, top = _floor(mod)
    bad = []
    for line, target, names in _imports(path):
        tl, ttop = _floor(target)
        if target == "xai_geometry" and set(names) <= {"__version__"}: continue    # the version, from the package's root
        if mod in FACADES and target.startswith("xai_geometry.methods") or (mod, target) == ("xai_geometry.explainers", "xai_geometry") and names == ["methods"]:
            continue
        if tl > lvl: bad.append(f"line {line}: {target} (floor {tl}) from floor {lvl}")
        elif tl == lvl == 2 and ttop != top:           # a sibling part: its public names only
            hidden = [n for n in names if n.startswith("_") or not _public(target, n)]
            if hidden: bad.append(f"line {line}: {target} {hidden} are a sibling part's internals")
    assert not bad, f"{mod} imports upwards or a sibling's internals:\n" + "\n".join(bad)


def test_the_facades_only_read_the_home():
    "A former address defines nothing: its statements are imports, a docstring, and (the registry's module) the lazy reading of the home."
    for mod in FACADES:
        p = PKG / Path(*mod.split(".")[1:]) / "__init__.py" if mod == "xai_geometry.explainers" else PKG / Path(*mod.split(".")[1:]).with_suffix(".py")
        tree = ast.parse(p.read_text(encoding="utf-8"))
        defs = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
        assert set(defs) <= {"_home", "__getattr__", "_RegistryModule"}, (mod, defs)


def test_no_import_circle():
    graph = {}
    for p in MODULES:
        graph[_name(p)] = {t for _, t, _ in _imports(p, module_level_only=True)}
    def expand(t):            # `from xai_geometry.x import y` may name the submodule x.y
        return t if t in graph else None
    state, stack = {}, []
    def visit(m):
        state[m] = 1; stack.append(m)
        for t in graph.get(m, ()):
            t = expand(t)
            if t is None or t == m: continue
            if state.get(t) == 1: raise AssertionError("import circle: " + " -> ".join(stack[stack.index(t):] + [t]))
            if t not in state: visit(t)
        state[m] = 2; stack.pop()
    for m in graph:
        if m not in state: visit(m)


def test_import_strings_are_imports():
    "The floors see an import written as a string, and no module hides one behind a dotted name the registry reads."
    src = 'import importlib\nROW = "xai_geometry.door:explain"\ndef f(): return importlib.import_module("xai_geometry.methods")\n'
    tree = ast.parse(src)
    assert [(t, n) for _, t, n in _string_imports(ast.walk(tree))] == [("xai_geometry.door", ["explain"]), ("xai_geometry.methods", [])]
    hidden = [(str(p.relative_to(PKG)), t) for p in MODULES for _, t, _ in _string_imports(ast.walk(ast.parse(p.read_text(encoding="utf-8"))))
              if _floor(t)[0] > _floor(_name(p))[0] and t != "xai_geometry"]   # (the package root: its files, its version)
    assert not hidden, f"import strings up the floors: {hidden}"


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_no_module_over_600_lines(path):
    n = len(path.read_text(encoding="utf-8").splitlines())
    assert n <= 600, f"{_name(path)} has {n} lines: split it (one home per idea, no module over 600 lines)"


@pytest.mark.parametrize("path", sorted((PKG / "experiments").glob("*.py")), ids=_name)
def test_no_estimator_or_explainer_in_the_harness(path):
    "The harness reproduces and benchmarks; the estimators and explainers it uses live in the library."
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            bases = {getattr(b, "id", getattr(b, "attr", "")) for b in node.bases}
            methods = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
            if bases & {"BaseEstimator", "ClassifierMixin", "RegressorMixin", "TransformerMixin"} or {"fit", "predict"} <= methods:
                bad.append(node.name)
    assert not bad, f"{_name(path)} defines estimators {bad}: move them into the library"
