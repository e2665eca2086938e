"""One explanation, one meaning: the same quantity under the same name through every door of the package.

- the same model explained by two parts gives the same numbers for every shared `output` (hypothesis, fixed seed);
- the rows and columns of an explanation, its edges (the magnitudes float64 cannot add up, --out that cannot be written);
- the former names still work, with a FutureWarning that names the new one;
- the package imports nothing private of scikit-learn or nbdev.
"""
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from sklearn.naive_bayes import BernoulliNB, GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import xai_geometry
from xai_geometry import OUTPUTS, background_sample
from xai_geometry import gnb, naive_bayes, neuralized
from xai_geometry.gnb import GeneralizedNaiveBayes
from xai_geometry.naive_bayes import SupervisedKNeighborsClassifier, WeightedNaiveBayes

ROOT = Path(__file__).resolve().parent.parent
SHARED = ("log_odds", "joint_log_likelihood", "centred_log_likelihood")


def _data(seed, n, d, K):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    X = rng.normal(size=(n, d)) * rng.uniform(0.2, 5, d) + y[:, None] * rng.normal(size=d)
    return X, y


# ---- same model, two doors ------------------------------------------------------------------------------------------

@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n=st.integers(40, 120), d=st.integers(1, 5), K=st.integers(2, 4),
       var_smoothing=st.sampled_from([1e-9, 1e-6, 1e-3]), frame=st.booleans())
def test_gnb_without_edges_is_gaussian_nb_for_every_shared_output(seed, n, d, K, var_smoothing, frame):
    """GeneralizedNaiveBayes(n_edges=0, dependence="gaussian") and GaussianNB, fitted on the same rows with the same
    var_smoothing, are the same model (part C applies GaussianNB's smoothing rule): every shared output, both complements,
    the same values and base values. Tolerance 1e-9 of the largest |value|: rounding, from part C's power-of-two scaling."""
    X, y = _data(seed, n, d, K)
    if frame: X = pd.DataFrame(X, columns=[f"v{j}" for j in range(d)], index=np.arange(n) * 3)
    c = GeneralizedNaiveBayes(n_edges=0, dependence="gaussian", var_smoothing=var_smoothing).fit(X, y)
    a = GaussianNB(var_smoothing=var_smoothing).fit(X, y)
    B = background_sample(X, n_samples=25, random_state=seed)
    rows = X.iloc[:15] if frame else X[:15]
    for output in SHARED:
        for complement in ("pooled", "mixture"):
            ec = gnb.explain(c, rows, output=output, complement=complement, background=B)
            ea = naive_bayes.explain(a, rows, output=output, complement=complement, background=B)
            assert ec.shape == ea.shape == ((15, d) if K == 2 else (15, d, K))
            scale = max(1.0, np.abs(ea.values).max(), np.abs(ea.base_values).max())
            np.testing.assert_allclose(ec.values, ea.values, rtol=1e-9, atol=1e-9 * scale)
            np.testing.assert_allclose(ec.base_values, ea.base_values, rtol=1e-9, atol=1e-9 * scale)
            np.testing.assert_allclose(ec.total, ea.total, rtol=1e-9, atol=1e-9 * scale)
            assert ec.output == ea.output and ec.feature_names == ea.feature_names
            if frame: assert list(ec.data.index) == list(ea.data.index) == list(rows.index)
            # the fast layer and the base-value function agree too, class by class
            np.testing.assert_allclose(gnb.shapley_values(c, rows, output=output, complement=complement, background=B),
                                       naive_bayes.shapley_values(a, rows, output=output, complement=complement, background=B),
                                       rtol=1e-9, atol=1e-9 * scale)
            np.testing.assert_allclose(gnb.base_values(c, output=output, complement=complement, background=B),
                                       naive_bayes.base_values(a, output=output, complement=complement, background=B),
                                       rtol=1e-9, atol=1e-9 * scale)


def _l1_q_distances(knn, model, Xte, Xtr, ytr):
    "Part A's own numbers: the q-th smallest distance to the training rows of each class, (n, 2), and the argsort per class."
    D = naive_bayes.pairwise_distances(model, Xte, Xtr, kind=knn.kind, complement=knn.complement)
    q = (knn.n_neighbors + 1) // 2
    out = np.empty((len(D), 2))
    for c in (0, 1):
        Dc = D[:, np.asarray(ytr) == knn.classes_[c]]
        out[:, c] = np.sort(Dc, axis=1)[:, q - 1]
    return out, D


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), k=st.sampled_from([1, 3, 5]), kind=st.sampled_from(["shap", "odds", "nb", "snb"]),
       complement=st.sampled_from(["pooled", "mixture"]))
def test_l1_knn_through_part_b_is_part_a_distances(seed, k, kind, complement):
    """Part A's l1 k-NN explained through part B's network (kappa = 0, base 0): the values add up to g = d_q(-) - d_q(+),
    the difference of the q-th distances that part A's own `pairwise_distances` gives; sign g is part A's vote off ties;
    and where the q-th neighbour of each class is one recoded row, the relevance of each variable is the difference of
    part A's per-variable distance tables at those rows."""
    rng = np.random.default_rng(seed)
    n = 160
    y = pd.Series(np.where(rng.random(n) < 0.5, "no", "yes"))
    X = pd.DataFrame({"num": rng.normal(size=n) + (y == "yes") * 1.2, "cat": pd.Categorical(rng.choice(list("abcd"), n)),
                      "z": rng.normal(size=n) * 3 + (y == "yes")})
    X.loc[rng.random(n) < 0.1, "cat"] = np.nan
    tr, te = np.arange(n) < 120, np.arange(n) >= 120
    knn = SupervisedKNeighborsClassifier(kind=kind, n_neighbors=k, complement=complement).fit(X[tr], y[tr])
    e = neuralized.explain(knn, X[te])
    dq, D = _l1_q_distances(knn, knn.model_, X[te], X[tr], y[tr])
    g_a = dq[:, 0] - dq[:, 1]
    np.testing.assert_array_equal(e.base_values, 0.0)
    np.testing.assert_allclose(e.total, g_a, rtol=1e-9, atol=1e-9 * (1 + np.abs(dq).max()))
    off_tie = np.abs(g_a) > 1e-9 * (1 + np.abs(dq).max())
    np.testing.assert_array_equal(np.where(g_a > 0, "yes", "no")[off_tie], knn.predict(X[te])[off_tie])
    # per variable, where the q-th neighbour of each class is a single recoded row
    from xai_geometry.naive_bayes.geometry import distance_tables
    model = knn.model_; T = distance_tables(model, kind, complement)
    Pte, Ptr = model.part_indices(X[te]), model.part_indices(X[tr])
    q = (k + 1) // 2; ytr = np.asarray(y[tr]); checked = 0
    for i in range(len(Pte)):
        rows = []
        for c in ("no", "yes"):
            idx = np.flatnonzero(ytr == c); d = D[i, idx]
            at_q = idx[np.abs(d - np.sort(d)[q - 1]) <= 1e-9 * (1 + np.abs(d).max())]
            if len({tuple(Ptr[j]) for j in at_q}) != 1: break
            rows.append(at_q[0])
        else:
            ref = [T[m][Pte[i, m], Ptr[rows[0], m]] - T[m][Pte[i, m], Ptr[rows[1], m]] for m in range(len(T))]
            np.testing.assert_allclose(e.values[i], ref, rtol=1e-9, atol=1e-9 * (1 + np.abs(dq).max()))
            checked += 1
    assert checked > 0


@settings(max_examples=10, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10**6), K=st.integers(2, 3))
def test_a_pipeline_is_its_model_at_the_transformed_rows(seed, K):
    "naive_bayes.explain of a Pipeline of per-feature steps = explain of its final model on the transformed rows, raw rows as data."
    X, y = _data(seed, 80, 3, K)
    X = pd.DataFrame(X, columns=list("abc"))
    pipe = make_pipeline(StandardScaler(), GaussianNB()).fit(X, y)
    B = background_sample(X, n_samples=20, random_state=seed)
    for output in SHARED:
        e = naive_bayes.explain(pipe, X.iloc[:10][["c", "b", "a"]], output=output, background=B)
        ref = naive_bayes.explain(pipe[-1], pipe[:-1].transform(X.iloc[:10]), output=output, background=pipe[:-1].transform(B))
        np.testing.assert_allclose(e.values, ref.values, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(e.base_values, ref.base_values, rtol=1e-12, atol=1e-12)
        pd.testing.assert_frame_equal(e.data, X.iloc[:10])


def test_the_vocabulary_is_one_set_of_names():
    assert set(OUTPUTS) == {"log_odds", "joint_log_likelihood", "centred_log_likelihood", "network_output"}
    from xai_geometry.gnb.shapley import OUTPUTS as C
    from xai_geometry.naive_bayes.sklearn_models import OUTPUTS as A
    assert set(A) == set(C) == set(SHARED) and set(SHARED) <= set(OUTPUTS)
    X, y = _data(0, 60, 3, 2)
    svm = make_pipeline(StandardScaler(), __import__("sklearn.svm", fromlist=["SVC"]).SVC()).fit(X, y)
    for part, call in (("A", lambda o: naive_bayes.explain(GaussianNB().fit(X, y), X[:3], output=o)),
                       ("C", lambda o: gnb.explain(GeneralizedNaiveBayes().fit(X, y), X[:3], output=o, background=X)),
                       ("B", lambda o: neuralized.explain(svm, X[:3], output=o))):
        offered = set(SHARED) if part != "B" else {"network_output"}
        for o in OUTPUTS:
            if o in offered: call(o)
            else:
                with pytest.raises(ValueError, match=f"The 'output' parameter of .* must be a str among"): call(o)


# ---- rows and columns -----------------------------------------------------------------------------------------------

def test_the_index_is_kept_on_every_path():
    X, y = _data(1, 80, 3, 3)
    df = pd.DataFrame(X, columns=["p", "q", "r"], index=[f"row{i}" for i in range(80)])
    rows = df.iloc[5:12]
    records = [naive_bayes.explain(WeightedNaiveBayes().fit(df, y), rows),
               naive_bayes.explain(GaussianNB().fit(df, y), rows),
               naive_bayes.explain(make_pipeline(StandardScaler(), GaussianNB()).fit(df, y), rows),
               gnb.explain(GeneralizedNaiveBayes().fit(df, y), rows, background=df),
               neuralized.explain(make_pipeline(StandardScaler(), __import__("sklearn.svm", fromlist=["SVC"]).SVC()).fit(df, y), rows)]
    for e in records:
        assert list(e.data.index) == list(rows.index) and list(e.to_frame().index) == list(rows.index), e


def test_a_dataframe_for_an_array_fitted_model_warns_and_is_read_by_position():
    X, y = _data(2, 60, 3, 2)
    for model, call in ((GaussianNB().fit(X, y), lambda m, Z: naive_bayes.explain(m, Z)),
                        (GeneralizedNaiveBayes().fit(X, y), lambda m, Z: gnb.explain(m, Z, background=X)),
                        (WeightedNaiveBayes().fit(X, y), lambda m, Z: naive_bayes.explain(m, Z))):
        named = pd.DataFrame(X[:5], columns=["c", "b", "a"])
        with pytest.warns(UserWarning, match=f"X has feature names, but {type(model).__name__} was fitted without feature names"):
            e = call(model, named)
        np.testing.assert_array_equal(e.values, call(model, X[:5]).values)          # by position


# ---- the edges ------------------------------------------------------------------------------------------------------

def test_magnitudes_float64_cannot_add_up_are_refused_with_the_cause():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2)); y = np.arange(60) % 2; X[y == 1, 1] = 3.0          # constant within a class
    model = GaussianNB(var_smoothing=1e-300).fit(X, y)
    with pytest.raises(ValueError, match=r"feature 'x1' \(its variance within a class is .*var_smoothing=1e-300"):
        naive_bayes.explain(model, X)
    ok = GaussianNB().fit(X, y)                     # scikit-learn's default smoothing: values of 1e9, still summable
    e = naive_bayes.explain(ok, X)
    e.check_additivity(naive_bayes.shapley.explained_output(ok, X)[:, 1], rtol=1e-9, atol=1e-14 * np.abs(e.values).sum(1).max())
    with pytest.warns(RuntimeWarning, match="float64 knows their sum only to"):
        xai_geometry.Explanation(np.array([[1.5e300, -1.5e300, 1.0]]))


def test_the_messages_name_the_real_cause():
    X = np.random.default_rng(0).poisson(3, size=(40, 3)).astype(float); y = np.arange(40) % 2
    with pytest.raises(ValueError, match=r"BernoulliNB\(binarize=None\) was fitted on values other than 0 and 1 .* > 1"):
        naive_bayes.explain(BernoulliNB(binarize=None).fit(X, y), X)
    for est in (SupervisedKNeighborsClassifier(n_neighbors=True), GeneralizedNaiveBayes(n_neighbors=True)):
        with pytest.raises(ValueError, match=f"The 'n_neighbors' parameter of {type(est).__name__} must be an int in the range"):
            est.fit(X, y)


@pytest.mark.parametrize("where", ["file", "under_a_file"])
def test_an_unwritable_out_is_a_user_mistake(tmp_path, where):
    f = tmp_path / "afile"; f.write_text("x")
    out = f if where == "file" else f / "sub"
    r = subprocess.run([sys.executable, "-m", "xai_geometry.cli", "reproduce", "part-a", "--quick", "--no-progress",
                        "--out", str(out)], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert f"--out {out}:" in r.stderr and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_the_package_has_a_docstring():
    assert xai_geometry.__doc__ and "explanations as geometry" in xai_geometry.__doc__


# ---- the former names -----------------------------------------------------------------------------------------------

def test_the_former_names_still_work_and_name_their_replacement():
    X, y = _data(3, 60, 3, 3)
    m = GeneralizedNaiveBayes().fit(X, y); B = background_sample(X, n_samples=20, random_state=0)
    centred = gnb.shapley_values(m, X[:4], background=B, output="centred_log_likelihood")
    cases = [
        (lambda: gnb.shapley_values(m, X[:4], background=B, output="centred"), "output='centred_log_likelihood'", centred),
        (lambda: gnb.shapley_values(m, X[:4], X_background=X, n_background=20), r"background=xai_geometry.background_sample", None),
        (lambda: gnb.explain(m, X[:4], X_background=X, output="centred_log_likelihood"), "background=", None),
        (lambda: gnb.expected_value(m, B), r"use base_values\(model", gnb.base_values(m, background=B, output="centred_log_likelihood")),
        (lambda: gnb.background_sample(X, 20), r"use xai_geometry.background_sample", B),
        (lambda: gnb.exact_shapley_values(m, X[:2], B[:3], "centred_log_likelihood"), "pass background=, output= by keyword", None),
        (lambda: gnb.embedding(m, X[:2], "shap", B), "pass kind=, background= by keyword", None),
        (lambda: naive_bayes.embedding(GaussianNB().fit(X, y), X[:2], "odds"), "pass kind= by keyword", None),
        (lambda: naive_bayes.pairwise_distances(GaussianNB().fit(X, y), X[:2], None, "odds"), "pass kind= by keyword", None),
        (lambda: gnb.class_mutual_information(X, y, "gaussian"), "pass dependence= by keyword", None),
    ]
    for call, says, expected in cases:
        with pytest.warns(FutureWarning, match=says):
            got = call()
        if expected is not None: np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    from sklearn.svm import SVC
    from xai_geometry.neuralized import NeuralizedSVM, flipping_curve
    from xai_geometry.neuralized.attribution import kernel_shap
    from xai_geometry.neuralized.flipping import ConditionalKDEInpainter
    y2 = (y > 0).astype(int); net = NeuralizedSVM(SVC().fit(X, y2))
    with pytest.warns(FutureWarning, match=r"NeuralizedSVM.explain\(X\) is deprecated .* use NeuralizedSVM.relevance\(X\)"):
        np.testing.assert_array_equal(net.explain(X[:3]), net.relevance(X[:3]))
    with pytest.warns(FutureWarning, match="kernel_shap: pass background= by keyword"):
        kernel_shap(SVC().fit(X, y2), X[:2], X[:10], n_samples=20)
    R = net.relevance(X[:3])
    with pytest.warns(FutureWarning, match="X_train= is deprecated|X_train=\\) is deprecated"):
        a = flipping_curve(net, X[:3], R, X_train=X, n_draws=2)
    b = flipping_curve(net, X[:3], R, background=X, n_draws=2)
    np.testing.assert_array_equal(a[1], b[1])


# ---- no private imports ---------------------------------------------------------------------------------------------

DOCS_BRANCH = {"docs.py"}   # its private nbdev name belongs to the docs branch (to be removed when that branch lands)


def _private_uses(tree) -> list[str]:
    "Private names of scikit-learn or nbdev a module uses: from a private module, imported by name, or read off a module alias."
    import ast
    roots = ("sklearn", "nbdev")
    private = lambda name: name.startswith("_") and not name.startswith("__")
    aliases, bad = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in roots:
                    if any(private(p) for p in a.name.split(".")): bad.append(a.name)
                    aliases.add(a.asname or a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in roots:
            if any(private(p) for p in node.module.split(".")): bad.append(node.module)
            for a in node.names:
                if private(a.name): bad.append(f"{node.module}.{a.name}")
                else: aliases.add(a.asname or a.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and private(node.attr) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            bad.append(f"{node.value.id}.{node.attr}")
    return bad


def test_the_package_imports_nothing_private_of_scikit_learn_or_nbdev():
    import ast
    bad, docs = [], []
    for p in sorted((ROOT / "xai_geometry").rglob("*.py")):
        if p.name == "_modidx.py": continue
        found = _private_uses(ast.parse(p.read_text(encoding="utf-8")))
        (docs if p.name in DOCS_BRANCH else bad).extend(f"{p.relative_to(ROOT)}: {b}" for b in found)
    assert not bad, "private names used:\n" + "\n".join(bad)
    assert all("nbdev" in d or "serve" in d or "drv" in d for d in docs), docs     # docs.py: nbdev's only, for now


def test_the_private_name_check_can_fail():
    import ast
    assert _private_uses(ast.parse("from sklearn.utils._param_validation import Interval")) == ["sklearn.utils._param_validation"]
    assert _private_uses(ast.parse("import nbdev.serve as serve\nserve._proc_file(1)")) == ["serve._proc_file"]
    assert _private_uses(ast.parse("from sklearn.utils import _safe_indexing")) == ["sklearn.utils._safe_indexing"]
    assert _private_uses(ast.parse("from sklearn.utils.validation import check_array")) == []
