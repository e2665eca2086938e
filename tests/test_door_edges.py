"""Edges of the explain doors found by a bad-input review: each either works or fails with a message naming
what was wrong (sparse rows for part A, empty dask partitions, an uncreatable --cache folder, Explanation
selections that numpy or Python would otherwise refuse in their own words)."""
from __future__ import annotations

import contextlib
import io
import warnings

import numpy as np
import pandas as pd
import pytest

from xai_geometry.cli import main as cli_main


def _cli(*argv):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try: status = cli_main(list(argv))
        except SystemExit as e: status = e.code
    return status, err.getvalue()


# ---- 3. --cache on a folder that cannot be made: exit 2, like --out --------------------------------------
@pytest.mark.parametrize("option", ["--out", "--cache"])
@pytest.mark.parametrize("under", [False, True])
def test_uncreatable_folder_is_a_usage_error(tmp_path, option, under):
    blocked = tmp_path / "file"; blocked.write_text("")
    where = blocked / "sub" if under else blocked     # under a regular file: no folder can be made (even as root)
    status, err = _cli("reproduce", "part-c", "--quick", "--no-progress", option, str(where))
    assert status == 2, err
    assert f"{option} {where}: " in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "unexpected error" not in err


# ---- 4. Explanation selections: a message that says what was wrong --------------------------------------
from xai_geometry.explanation import Explanation, UnknownNameError, class_explanation


def _three_d():
    return Explanation(np.arange(24.0).reshape(4, 3, 2), base_values=[1.0, -1.0], feature_names=["a", "b", "c"],
                       output_names=["no", "yes"], output="log-odds")


def _binary():
    return class_explanation(np.arange(24.0).reshape(4, 3, 2), [0.5, -0.5], classes=np.array(["no", "yes"]),
                             output="log-odds of 'yes'", feature_names=["a", "b", "c"])


@pytest.mark.parametrize("key, error, says", [
    ("f0", IndexError, ["rows are selected by position, slice or boolean mask, not by name", "e[:, name]"]),
    ("a", IndexError, ["not by name", "'a' is a feature: e[:, 'a'] selects it"]),
    ("yes", IndexError, ["not by name", "'yes' is an output: e[..., 'yes'] selects it"]),
    (["a"], IndexError, ["not by name"]),
    (1.5, IndexError, ["a row is selected by position", "got the float 1.5"]),
    (np.float64(2.0), IndexError, ["got the float 2.0"]),
    ([0, 1.5], IndexError, ["got the float 1.5"]),
    (None, IndexError, ["a row is selected by position", "got None"]),
    (True, IndexError, ["a boolean is not a row position", "mask of length 4"]),
    ([True], IndexError, ["a boolean mask over the rows needs 4 entries, got 1"]),
    (10, IndexError, ["row 10 is out of range for 4 rows"]),
    ([0, -5], IndexError, ["row -5 is out of range for 4 rows"]),
    (np.array([[0, 1]]), IndexError, ["rows are selected by a 1-d list", "(1, 2)"]),
    (slice("a", None), IndexError, ["a slice of rows takes integer positions"]),
    ((slice(None), 1.5), IndexError, ["a feature is selected by position or name, got the float 1.5"]),
    ((slice(None), None), IndexError, ["a feature is selected by position or name, got None"]),
    ((slice(None), "zz"), KeyError, ["no feature named 'zz'; features: ['a', 'b', 'c']"]),
    ((slice(None), slice("a", "b")), IndexError, ["a slice of features takes integer positions"]),
    ((Ellipsis, 0.5), IndexError, ["an output is selected by position or name, got the float 0.5"]),
    ((Ellipsis, None), IndexError, ["an output is selected by position or name, got None"]),
    ((Ellipsis, True), IndexError, ["a boolean is not an output position"]),
    ((Ellipsis, "maybe"), KeyError, ["no output named 'maybe'"]),
])
def test_three_d_selection_errors(key, error, says):
    e = _three_d()
    with pytest.raises(error) as err: e[key]
    for s in says: assert s in str(err.value), str(err.value)


@pytest.mark.parametrize("output", [None, 1.5, [0], True])
def test_select_output_of_a_wrong_type(output):
    with pytest.raises(TypeError) as err: _three_d().select_output(output)
    msg = str(err.value)
    assert "an output is chosen by position (0..1) or name" in msg and "outputs: ['no', 'yes']" in msg, msg


@pytest.mark.parametrize("name", ["yes", "no", "maybe"])
def test_binary_ellipsis_name_says_it_has_one_output(name):
    b = _binary()
    with pytest.raises(KeyError) as err: b[..., name]     # UnknownNameError: a KeyError and a ValueError
    assert isinstance(err.value, UnknownNameError)
    msg = str(err.value)
    assert f"no feature named {name!r}" in msg and "This explanation has one output, class 'yes'" in msg, msg
    assert "e[..., output] selects an output of an (n, M, K) explanation only" in msg, msg


def test_binary_own_class_as_feature_key_says_so():
    with pytest.raises(KeyError, match="This explanation has one output, class 'yes'"): _binary()[:, "yes"]
    with pytest.raises(KeyError) as err: _binary()[:, "maybe"]      # not its class, no `...`: the plain message
    assert "one output" not in str(err.value)


def test_valid_selections_still_work():
    e, b = _three_d(), _binary()
    assert e[0].shape == (1, 3, 2) and e[-1].shape == (1, 3, 2) and e[1:3].shape == (2, 3, 2) and e[5:].shape == (0, 3, 2)
    assert e[[True, False, True, False]].shape == (2, 3, 2) and e[np.array([0, 2])].shape == (2, 3, 2)
    assert e[pd.Series([True, True, False, False])].shape == (2, 3, 2) and e[[]].shape == (0, 3, 2)
    assert e[:, "b"].shape == (4, 1, 2) and e[:, ["c", "a"]].feature_names == ("c", "a") and e[:, 1:].shape == (4, 2, 2)
    np.testing.assert_allclose(e[..., "yes"].values, e.values[:, :, 1]); np.testing.assert_allclose(e[2:4, "a", 0].values, e.values[2:4, [0], 0])
    assert e[..., [True, False]].shape == (4, 3, 1) and e.select_output("no").shape == (4, 3) and e.select_output(np.int64(1)).shape == (4, 3)
    assert b[..., 0].shape == (4, 1) and b[..., "a"].shape == (4, 1) and b[:, ["a", "c"]].shape == (4, 2)


# ---- 1. sparse rows for part A's explain ------------------------------------------------------------------
import scipy.sparse as sps
from sklearn.naive_bayes import BernoulliNB, ComplementNB, MultinomialNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler

from xai_geometry import naive_bayes


def _counts(K, seed=0, n=60, M=7):
    rng = np.random.default_rng(seed)
    X = rng.poisson(1.0, size=(n, M)).astype(float); X[rng.random((n, M)) < 0.5] = 0.0     # mostly zeros
    y = np.arange(n) % K
    return X, y


@pytest.mark.parametrize("kind", [MultinomialNB, BernoulliNB, ComplementNB])
@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_sparse_rows_explained_as_dense(kind, K, fmt):
    X, y = _counts(K)
    S = sps.csr_matrix(X).asformat(fmt)
    out = "joint_log_likelihood" if kind is ComplementNB and K > 2 else "log_odds"
    model = kind().fit(sps.csr_matrix(X), y)
    e = naive_bayes.explain(model, S[:15] if fmt != "coo" else sps.coo_matrix(X[:15]), output=out)
    dense = naive_bayes.explain(model, X[:15], output=out)
    np.testing.assert_allclose(e.values, dense.values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(e.base_values, dense.base_values, rtol=0, atol=1e-12)
    assert isinstance(e.data, pd.DataFrame) and e.data.shape == (15, X.shape[1])
    pd.testing.assert_frame_equal(e.data, dense.data)
    np.testing.assert_allclose(naive_bayes.shapley_values(model, S[:15] if fmt != "coo" else sps.coo_matrix(X[:15]), output=out),
                               naive_bayes.shapley_values(model, X[:15], output=out), rtol=0, atol=1e-12)


def test_sparse_background_and_pipeline():
    X, y = _counts(2, seed=1)
    S = sps.csr_matrix(X)
    for model in (MultinomialNB().fit(S, y), make_pipeline(MaxAbsScaler(), MultinomialNB()).fit(S, y)):
        e = naive_bayes.explain(model, S[:10], background=S[10:40])
        dense = naive_bayes.explain(model, X[:10], background=X[10:40])
        np.testing.assert_allclose(e.values, dense.values, rtol=0, atol=1e-12)
        np.testing.assert_allclose(e.base_values, dense.base_values, rtol=0, atol=1e-12)
        assert e.info["background"] == dense.info["background"] == "30 background rows (their marginals)"
        np.testing.assert_allclose(naive_bayes.base_values(model, S[:3], background=S[10:40]),
                                   naive_bayes.base_values(model, X[:3], background=X[10:40]), rtol=0, atol=1e-12)


def test_sparse_rows_for_the_weighted_naive_bayes_name_x():
    X, y = _counts(2, seed=2)
    model = naive_bayes.WeightedNaiveBayes().fit(pd.DataFrame(X, columns=[f"c{i}" for i in range(X.shape[1])]), y)
    with pytest.raises(TypeError, match="Sparse data was passed for X"): naive_bayes.explain(model, sps.csr_matrix(X[:3]))


# ---- 2. empty partitions of a dask collection: skipped, the result that of the non-empty rows -------------
def _three_parts():
    from sklearn.naive_bayes import GaussianNB
    from sklearn.svm import SVC
    from xai_geometry import gnb, neuralized
    from xai_geometry.gnb import GeneralizedNaiveBayes
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(80, 3)), columns=["x", "b", "c"], index=np.arange(100, 180))
    X["x"] = np.arange(80) / 8.0                       # x > 5 empties the first partitions of four
    y = (X.b + 0.3 * X.c > 0).astype(int)
    y3 = np.digitize(X.b, [-0.5, 0.5])
    return X, [("A", naive_bayes.explain, GaussianNB().fit(X, y), {}, 0.0),
               ("A, 3 classes", naive_bayes.explain, GaussianNB().fit(X, y3), {}, 0.0),
               ("B", neuralized.explain, SVC(gamma=0.5).fit(X, y), {}, 1e-12),
               ("C", gnb.explain, GeneralizedNaiveBayes().fit(X, y), {"background": X.iloc[:20]}, 0.0)]


def _close(a, b, tol):
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.abs(b).max())))


@pytest.mark.parametrize("part", ["A", "A, 3 classes", "B", "C"])
def test_empty_partitions_are_skipped(part):
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe"); da = pytest.importorskip("dask.array")
    X, cases = _three_parts()
    _, fn, model, opts, tol = next(c for c in cases if c[0] == part)
    keep = X.x > 5
    memory = fn(model, X[keep], **opts)
    with dask.config.set(scheduler="synchronous"):
        ddf = dd.from_pandas(X, npartitions=4)
        rows = ddf[ddf.x > 5]
        assert (rows.map_partitions(len).compute() == 0).any()          # the filter made empty partitions
        lazy = fn(model, rows, **opts)
        got = lazy.compute()
        _close(got.values, memory.values, tol); _close(got.base_values, memory.base_values, tol)
        assert list(got.data.index) == list(X.index[keep]) and got.feature_names == memory.feature_names
        frame = lazy.to_frame(include_base=True).compute()
        _close(frame.to_numpy(), memory.to_frame(include_base=True).to_numpy(), tol)
        assert list(frame.index) == list(X.index[keep]) and list(frame.columns) == list(memory.to_frame(include_base=True).columns)
        first = lazy.partition(0)
        assert len(first) == 0 and first.values.shape[1:] == memory.values.shape[1:] and len(first.data) == 0
        if part.startswith("A"):                                          # no check runs on a partition without rows
            from xai_geometry.naive_bayes.shapley import explained_output
            expected = (lambda m, R: explained_output(m, R)[:, 1]) if part == "A" else explained_output
            lazy.check_additivity(expected).compute(); lazy.check_additivity(expected).to_frame().compute()
        # a dask array: a filter's chunks, once their sizes are known, and an empty chunk given as such
        A = da.from_array(X.to_numpy(), chunks=(20, 3))
        filtered = A[A[:, 0] > 5]
        with pytest.raises(ValueError, match="X has unknown chunk sizes"): fn(model, filtered, **opts)   # at once, not at compute
        filtered.compute_chunk_sizes()
        for arr in (filtered, da.from_array(X[keep].to_numpy(), chunks=((0, 10, 0, 29, 0), (3,)))):
            assert 0 in arr.chunks[0]
            lazy = fn(model, arr, **opts)
            got = lazy.compute()
            _close(got.values, memory.values, tol); _close(got.base_values, memory.base_values, tol)
            assert list(got.data.index) == list(range(int(keep.sum())))
            frame = lazy.to_frame().compute()
            _close(frame.to_numpy(), memory.to_frame().to_numpy(), tol)


def test_no_rows_at_all_is_an_error():
    dask = pytest.importorskip("dask"); dd = pytest.importorskip("dask.dataframe")
    X, cases = _three_parts()
    _, fn, model, opts, _ = cases[0]
    with dask.config.set(scheduler="synchronous"):
        ddf = dd.from_pandas(X, npartitions=4)
        with pytest.raises(ValueError, match="X has no rows to explain"): fn(model, ddf[ddf.x > 100], **opts).compute()


# ---- other raw errors of the same kind on the three doors --------------------------------------------------
def _doors():
    from sklearn.naive_bayes import GaussianNB
    from xai_geometry import gnb
    from xai_geometry.gnb import GeneralizedNaiveBayes
    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.normal(size=(60, 3)), columns=["a", "b", "c"]); y = (X.a + X.b > 0).astype(int)
    return X, {"A: GaussianNB": (naive_bayes.explain, GaussianNB().fit(X, y), {}),
               "A: WeightedNaiveBayes": (naive_bayes.explain, naive_bayes.WeightedNaiveBayes().fit(X, y), {}),
               "C: GNB": (gnb.explain, GeneralizedNaiveBayes().fit(X, y), {"background": X.iloc[:20]})}


BAD_ROWS = {"1-d": np.ones(3), "3-d": np.ones((2, 3, 1)), "no rows": np.ones((0, 3)), "a Series": pd.Series([1.0, 2.0, 3.0]),
            "a dict": {"a": [1.0]}, "a scalar": 3.0, "complex": np.ones((2, 3)) * 1j}


@pytest.mark.parametrize("door", ["A: GaussianNB", "A: WeightedNaiveBayes", "C: GNB"])
@pytest.mark.parametrize("bad", list(BAD_ROWS))
@pytest.mark.parametrize("arg", ["X", "background"])
def test_scikit_learn_shape_errors_name_the_argument(door, bad, arg):
    X, doors = _doors()
    fn, model, opts = doors[door]
    call = (lambda: fn(model, BAD_ROWS[bad], **opts)) if arg == "X" else (lambda: fn(model, X.iloc[:3], **{**opts, "background": BAD_ROWS[bad]}))
    with pytest.raises((ValueError, TypeError)) as err, warnings.catch_warnings():
        warnings.simplefilter("ignore"); call()
    assert str(err.value).startswith(f"{arg}: ") or str(err.value).startswith(f"{arg} "), str(err.value)


def test_weighted_naive_bayes_rows_of_the_wrong_width_or_kind_name_x():
    X, doors = _doors()
    _, model, _ = doors["A: WeightedNaiveBayes"]
    for A, says in ((np.ones((2, 4)), "X has 4 features, but WeightedNaiveBayes is expecting 3"),
                    (np.ones((2, 2)), "X has 2 features, but WeightedNaiveBayes is expecting 3"),
                    (X.iloc[:3].assign(a=["u", "v", "w"]), "X: column 'a' was numeric in fit"),
                    (np.array([[1.0, "x", 2.0]], dtype=object), "X: column 'b' was numeric in fit")):
        with pytest.raises(ValueError) as err, warnings.catch_warnings():
            warnings.simplefilter("ignore"); naive_bayes.explain(model, A)
        assert says in str(err.value), str(err.value)
    with pytest.raises(ValueError, match="background: column 'a' was numeric in fit"):
        naive_bayes.explain(model, X.iloc[:3], background=X.iloc[:5].assign(a=["u"] * 5))
    # the checks add no second warning about column names
    with pytest.warns(UserWarning) as rec: naive_bayes.shapley_values(model, X.iloc[:3].to_numpy())
    assert sum("feature names" in str(w.message) for w in rec) == 1


def test_lazy_partition_and_sep_name_the_mistake():
    dask = pytest.importorskip("dask"); dd = pytest.importorskip("dask.dataframe"); da = pytest.importorskip("dask.array")
    X, doors = _doors()
    _, model, _ = doors["A: GaussianNB"]
    with dask.config.set(scheduler="synchronous"):
        lazy = naive_bayes.explain(model, dd.from_pandas(X, npartitions=3))
        with pytest.raises(IndexError, match="partition 3 is out of range for 3 partitions"): lazy.partition(3)
        with pytest.raises(TypeError, match=r"partition takes a position 0..2, got 1.5"): lazy.partition(1.5)
        with pytest.raises(TypeError, match="partition takes a position"): lazy.partition(True)
        assert len(lazy.partition(-1)) == len(lazy.partition(2))
        with pytest.raises(TypeError, match="sep must be a string"): lazy.to_frame(sep=3)
        with pytest.raises(TypeError) as err: naive_bayes.explain(model, da.ones((4, 3, 2)))
        assert "3 dimension(s)" in str(err.value) and "Series" not in str(err.value)
        with pytest.raises(TypeError, match=r"\(a Series: X.to_frame\(\)\)"): naive_bayes.explain(model, dd.from_pandas(X, npartitions=2).a)


def test_check_additivity_mean_and_plot_name_what_is_wrong():
    import matplotlib
    matplotlib.use("Agg")
    e, b = _three_d(), _binary()
    with pytest.raises(ValueError, match=r"expected has shape \(5,\), but the explained output has shape \(4, 2\)"): e.check_additivity(np.zeros(5))
    with pytest.raises(ValueError, match=r"pass that output's column \(e.g. expected\[:, 1\]"): b.check_additivity(np.zeros((4, 2)))
    with pytest.raises(TypeError, match="expected must be the model's output"): e.check_additivity(None)
    with pytest.raises(TypeError, match="expected must be numbers"): e.check_additivity("x")
    assert b.check_additivity(b.total) is b and e.check_additivity(e.total) is e
    same = Explanation(np.ones((3, 2, 2)), base_values=[1.0, 2.0])
    same.check_additivity([3.0, 4.0]); same[..., 0].check_additivity(3.0)             # broadcast as before
    with pytest.raises(AssertionError, match="do not add up"): b.check_additivity(b.total + 1)
    for bad in (0, -1, 1.5, None, True):
        with pytest.raises(ValueError, match="max_features must be a positive integer"): e.plot(max_features=bad)
    with pytest.raises(TypeError, match="ax must be a matplotlib Axes"): e.plot(ax=3)
    with pytest.raises(ValueError, match="no rows"): e[4:].mean(0)
    with pytest.raises(ValueError, match="no rows to plot"): e[4:].plot()
