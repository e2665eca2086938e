"""Bad input over the whole public API: one invariant for every case.

Every call either returns finite values of the documented shape, or raises `ValueError`, `TypeError`
or `NotFittedError` whose message names the offending argument (or column); and it never hangs (each
case is bounded in time). The cases are grouped by the classes of failure found in a review of the
package — large or tiny finite values, options not validated, inputs that change type between fit and
predict, helpers that skip their siblings' checks — and cover the data loader, the shared modules,
the command line and the three subpackages. Part-specific suites (tests/test_*bad_input*.py) add
cases of their own; this file is the cross-package one.
"""
from __future__ import annotations

import contextlib
import io
from numbers import Integral

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

from xai_geometry import Explanation, datasets, stats, validation
from xai_geometry.cli import main as cli_main
from xai_geometry.runner import UsageError, select_datasets

ERRORS = (ValueError, TypeError, NotFittedError)


def _finite(x) -> bool:
    "Every number in x (an array, a DataFrame, a tuple of them or an Explanation) is finite."
    if isinstance(x, Explanation): return _finite(x.values) and _finite(x.base_values)
    if isinstance(x, (tuple, list)): return all(_finite(v) for v in x)
    if isinstance(x, pd.DataFrame): x = x.select_dtypes("number").to_numpy()
    a = np.asarray(x)
    return a.dtype.kind not in "fc" or bool(np.isfinite(a).all())


class Case:
    "A call and what it must give: an error naming `names`, or a finite result passing `check`."
    def __init__(self, id, call, *, names=None, check=None, error=ERRORS):
        self.id, self.call, self.names, self.check, self.error = id, call, names, check, error

    def run(self):
        if self.names is not None:
            with pytest.raises(self.error) as e: self.call()
            msg = str(e.value)
            for n in ([self.names] if isinstance(self.names, str) else self.names):
                assert n in msg, f"{self.id}: the message does not name {n!r}: {msg!r}"
            return
        res = self.call()
        assert _finite(res), f"{self.id}: a non-finite result {res!r}"
        if self.check is not None: assert self.check(res), f"{self.id}: unexpected result {res!r}"


def _cli(*argv):
    "Status and error stream of the command line, in process."
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try: status = cli_main(list(argv))
        except SystemExit as e: status = e.code
    return status, err.getvalue()


def _cli_case(id, argv, says):
    def call():
        status, err = _cli(*argv)
        lines = err.strip().splitlines()
        if status == 2 and len(lines) == 1 and "Traceback" not in err: raise ValueError(err)
        raise AssertionError(f"expected one line and status 2, got status {status}: {err!r}")
    return Case(id, call, names=says)


class _Est:
    "A bare object that validation functions remember columns on."


def _fitted(X):
    est = _Est(); validation.check_features(est, X, reset=True, numeric=not isinstance(X, pd.DataFrame) or
                                            all(pd.api.types.is_numeric_dtype(t) for t in X.dtypes))
    return est


F = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [0.5, 0.1, 0.2]})

LOADER = [
    Case("load name None", lambda: datasets.load(None), names="name must be a string"),
    Case("load name int", lambda: datasets.load(3), names="name must be a string"),
    Case("load unknown name", lambda: datasets.load("adult2"), names=["'adult2'", "known:"]),
    Case("load empty name", lambda: datasets.load(""), names="unknown data set ''"),
    Case("load data_home int", lambda: datasets.load("iris", data_home=3), names="data_home"),
    Case("load data_home list", lambda: datasets.load("iris", data_home=["a"]), names="data_home"),
    Case("load missing folder falls back to the package", lambda: datasets.load("heart", data_home="/nonexistent")[0],
         check=lambda X: X.shape == (270, 13)),
    Case("locate unknown", lambda: datasets.locate("nope"), names="'nope'"),
    Case("find_file of a scikit-learn set", lambda: datasets.find_file("digits"), error=(datasets.DatasetNotFoundError,),
         names="'digits'"),
    Case("list_datasets part int", lambda: datasets.list_datasets(3), names="part must be"),
    Case("list_datasets part D", lambda: datasets.list_datasets("D"), names="part must be"),
    Case("list_datasets part empty", lambda: datasets.list_datasets(""), names="part must be"),
    Case("list_datasets part-c", lambda: datasets.list_datasets("part-c"), check=lambda d: len(d) == 12),   # part C's twelve sets
    Case("alias", lambda: datasets.load("wdbc")[0], check=lambda X: X.shape == (569, 30)),
    Case("verify_checksums of a folder without sums", lambda: datasets.verify_checksums("/nonexistent"),
         error=(FileNotFoundError,), names="SHA256SUMS"),
]

SELECT = [
    Case("select unknown", lambda: select_datasets(["nope"], ["iris"], "reproduce part-c"), names=["'nope'", "part-c"]),
    Case("select a set of another part", lambda: select_datasets(["adult"], ["iris"], "reproduce part-c"),
         names="not used by reproduce part-c"),
    Case("select None", lambda: select_datasets(None, ["iris", "wine"]), check=lambda r: r == ["iris", "wine"]),
    Case("select a string", lambda: select_datasets("wine", ["iris", "wine"]), check=lambda r: r == ["wine"]),
    Case("select int", lambda: select_datasets([3], ["iris"]), names="3"),
    Case("UsageError is a ValueError", lambda: (_ for _ in ()).throw(UsageError("x names it")), names="names it"),
]

EXPLANATION = [
    Case("values 1-d", lambda: Explanation(np.ones(3)), names="(n, M) or (n, M, K)"),
    Case("values 4-d", lambda: Explanation(np.ones((1, 2, 3, 4))), names="(n, M) or (n, M, K)"),
    Case("values NaN", lambda: Explanation(np.array([[np.nan]])), names="NaN or infinity"),
    Case("values inf", lambda: Explanation(np.array([[np.inf, 0.0]])), names="NaN or infinity"),
    Case("values strings", lambda: Explanation(np.array([["a"]])), names="numeric"),
    Case("base NaN", lambda: Explanation(np.ones((2, 2)), base_values=np.nan), names="base_values"),
    Case("base wrong length", lambda: Explanation(np.ones((2, 2)), base_values=np.ones(3)), names="base_values"),
    Case("base (n, K) for 2-d values", lambda: Explanation(np.ones((2, 2)), base_values=np.ones((2, 2))), names="base_values"),
    Case("feature_names too short", lambda: Explanation(np.ones((2, 3)), feature_names=["a"]), names="feature_names"),
    Case("output_names on 2-d values", lambda: Explanation(np.ones((2, 3)), output_names=["a"]), names="output_names"),
    Case("output_names wrong length", lambda: Explanation(np.ones((2, 3, 2)), output_names=["a"]), names="output_names"),
    Case("data wrong shape", lambda: Explanation(np.ones((2, 3)), data=np.ones((3, 3))), names="data has shape"),
    Case("check_additivity wrong output", lambda: Explanation(np.ones((2, 3))).check_additivity([0.0, 0.0]),
         error=(AssertionError,), names="do not add up"),
    Case("select_output on 2-d", lambda: Explanation(np.ones((2, 3))).select_output(0), names="single output"),
    Case("select_output unknown name", lambda: Explanation(np.ones((2, 3, 2)), output_names=["u", "v"]).select_output("w"),
         error=(KeyError,), names="'w'"),
    Case("select_output out of range", lambda: Explanation(np.ones((2, 3, 2))).select_output(5), error=(IndexError,), names="5"),
    Case("row out of range", lambda: Explanation(np.ones((2, 3)))[7], error=(IndexError,), names="7"),
    Case("a large but finite explanation", lambda: Explanation(np.full((2, 3), 1e300)).values, check=lambda v: v.shape == (2, 3)),
    Case("to_frame 3-d", lambda: Explanation(np.ones((2, 3, 2))).to_frame(include_base=True),
         check=lambda d: d.shape == (2, 8)),
]

VALIDATION = [
    Case("check_features duplicate columns", lambda: validation.check_features(_Est(), pd.concat([F, F["a"]], axis=1), reset=True),
         names="duplicate column names: ['a']"),
    Case("check_features missing column", lambda: validation.check_features(_fitted(F), F[["a"]], reset=False), names="['b']"),
    Case("check_features extra column", lambda: validation.check_features(_fitted(F), F.assign(z=1.0), reset=False), names="['z']"),
    Case("check_features reordered", lambda: validation.check_features(_fitted(F), F[["b", "a"]], reset=False),
         check=lambda A: np.array_equal(A, F.to_numpy())),
    Case("check_features inf in frame", lambda: validation.check_features(_Est(), F.assign(b=[0, np.inf, 0]), reset=True), names="'b'"),
    Case("check_features -inf in array", lambda: validation.check_features(_Est(), np.array([[0.0, -np.inf]]), reset=True), names="infinity"),
    Case("check_features NaN refused", lambda: validation.check_features(_Est(), F.assign(a=[np.nan, 1, 2]), reset=True), names="'a'"),
    Case("check_features NaN allowed", lambda: np.nan_to_num(validation.check_features(_Est(), F.assign(a=[np.nan, 1, 2]), reset=True,
                                                                                    allow_nan=True)), check=lambda A: A.shape == (3, 2)),
    Case("check_features strings", lambda: validation.check_features(_Est(), F.assign(a=["x", "y", "z"]), reset=True), names="'a'"),
    Case("check_features mixed column name types", lambda: validation.check_features(_Est(), pd.DataFrame({"a": [1.0], 0: [2.0]}), reset=True),
         names="mixed types"),
    Case("check_features 0 rows", lambda: validation.check_features(_Est(), F.iloc[:0], reset=True), names="0 rows"),
    Case("check_features 0 columns", lambda: validation.check_features(_Est(), F[[]], reset=True), names="0 feature"),
    Case("check_features 1-d array", lambda: validation.check_features(_Est(), np.ones(3), reset=True), names="2D"),
    Case("check_features complex", lambda: validation.check_features(_Est(), np.ones((2, 2)) * 1j, reset=True), names="Complex"),
    Case("check_features wrong width", lambda: validation.check_features(_fitted(np.ones((2, 2))), np.ones((2, 3)), reset=False),
         names="3 features"),
    Case("check_target length", lambda: validation.check_target([0, 1], 3), names="y has 2 labels for 3 rows"),
    Case("check_target None", lambda: validation.check_target(None, 3), names="y"),
    Case("check_target NaN", lambda: validation.check_target([0.0, np.nan], 2), names="NaN"),
    Case("check_target None label", lambda: validation.check_target(["a", None], 2), names="NaN or None"),
    Case("check_target continuous", lambda: validation.check_target([0.1, 0.2], 2), names="continuous"),
    Case("check_finite_output NaN", lambda: validation.check_finite_output(np.array([[np.nan, 0.0]]), "output"), names="row 0"),
    Case("check_finite_output +inf", lambda: validation.check_finite_output(np.array([[np.inf, 0.0]]), "output"), names="row 0"),
    Case("check_params bad", lambda: validation.check_params("Model", {"k": [validation.Interval(Integral, 1, None, closed="left")]}, {"k": 0}),
         names="'k' parameter of Model"),
]

STATS = [
    Case("friedman NaN", lambda: stats.friedman_nemenyi(np.array([[1, np.nan], [2, 3]])), names="scores"),
    Case("friedman one method", lambda: stats.friedman_nemenyi(np.ones((5, 1))), names="scores"),
    Case("friedman alpha", lambda: stats.friedman_nemenyi(np.random.default_rng(0).random((5, 3)), alpha=2), names="alpha"),
    Case("ttest lengths", lambda: stats.corrected_ttest(np.ones(3), np.ones(4), 90, 10), names="a and b"),
    Case("ttest NaN", lambda: stats.corrected_ttest(np.array([1, np.nan, 2.0]), np.ones(3), 90, 10), names="a or b"),
    Case("ttest n_train", lambda: stats.corrected_ttest(np.ones(5), np.zeros(5) + [0, 1, 0, 1, 0], -1, 10), names="n_train"),
    Case("ttest equal", lambda: stats.corrected_ttest(np.ones(5), np.ones(5), 90, 10), check=lambda r: r == (0.0, 1.0)),
    Case("holm NaN", lambda: stats.holm([0.1, np.nan]), names="pvalues"),
    Case("holm > 1", lambda: stats.holm([0.1, 1.5]), names="pvalues"),
    Case("auc shapes", lambda: stats.macro_ovr_auc([0, 1], np.ones((3, 2))), names="scores"),
]

CLI = [
    _cli_case("cli unknown command", ["nosuch"], "invalid choice: 'nosuch'"),
    _cli_case("cli unknown part", ["reproduce", "part-d"], "invalid choice: 'part-d'"),
    _cli_case("cli unknown bench", ["bench", "modl2"], "invalid choice: 'modl2'"),
    _cli_case("cli n-jobs 0", ["reproduce", "part-a", "--n-jobs", "0"], "--n-jobs 0"),
    _cli_case("cli n-jobs text", ["reproduce", "part-a", "--n-jobs", "x"], "--n-jobs takes an integer"),
    _cli_case("cli repeats 0", ["bench", "part-c", "--repeats", "0"], "positive integer"),
    _cli_case("cli repeats -3", ["bench", "part-c", "--repeats", "-3"], "positive integer"),
    _cli_case("cli datasets part", ["datasets", "--part", "Z"], "invalid choice: 'Z'"),
    _cli_case("cli demo part", ["demo", "--parts", "E"], "invalid choice: 'E'"),
    _cli_case("cli backend on part-b", ["reproduce", "part-b", "--quick", "--backend", "khiops"], "part-b has no --backend"),
    _cli_case("cli unknown backend", ["reproduce", "part-a", "--quick", "--backend", "weka", "--no-progress"], "unknown backend 'weka'"),
    _cli_case("cli unknown set part-a", ["reproduce", "part-a", "--quick", "--datasets", "iris", "--no-progress"], "'iris'"),
    _cli_case("cli unknown set part-b", ["reproduce", "part-b", "--quick", "--datasets", "adult", "--no-progress"], "'adult'"),
    _cli_case("cli unknown set part-c", ["reproduce", "part-c", "--quick", "--datasets", "ionosphere2", "--no-progress"], "'ionosphere2'"),
    _cli_case("cli unknown option", ["reproduce", "part-a", "--fast"], "unrecognized arguments: --fast"),
    _cli_case("cli missing part", ["reproduce"], "required: part"),
]

def _door_models():
    "A Gaussian SVM on two named columns, a ColumnTransformer pipeline on raw columns (a scaled 'a' and 'b', a one-hot 'c'), a scaler pipeline."
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler
    from sklearn.svm import SVC
    rng = np.random.default_rng(0)
    raw = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60) * 100, "c": rng.choice(["u", "v"], 60)})
    t = ((raw.a + raw.b / 100) > 0).astype(int)
    ct = make_pipeline(make_column_transformer((StandardScaler(), ["a", "b"]), (OneHotEncoder(), ["c"])), SVC(gamma=0.5)).fit(raw, t)
    num = raw[["a", "b"]]
    return {"svm": SVC(gamma=0.5).fit(num, t), "ct": ct, "scaled": make_pipeline(StandardScaler(), SVC()).fit(num, t),
            "linear": LogisticRegression().fit(num, t), "raw": raw, "num": num}


_D = {}

def _door(kind, X=None, **kw):
    "xai_geometry.explain on one of the door's models (built once)."
    import xai_geometry as xg
    if not _D: _D.update(_door_models())
    rows = _D["num"].iloc[:3] if X is None else (X(_D) if callable(X) else X)
    return xg.explain(_D[kind], rows, **{k: (v(_D) if callable(v) else v) for k, v in kw.items()})


DOOR = [
    Case("door kernel_shap background of the wrong width", lambda: _door("svm", method="kernel_shap", background=np.ones((5, 3))),
         names="background has 3 features"),
    Case("door kernel_shap background with NaN", lambda: _door("svm", method="kernel_shap", background=lambda d: d["num"].assign(b=np.nan)),
         names=["background contains NaN", "'b'"]),
    Case("door kernel_shap background of strings", lambda: _door("svm", method="kernel_shap", background=lambda d: d["num"].assign(a="x")),
         names=["background", "'a'"]),
    Case("door kernel_shap background 1-d", lambda: _door("svm", method="kernel_shap", background=np.ones(2)),
         names="background"),
    Case("door kernel_shap background with no rows", lambda: _door("svm", method="kernel_shap", background=lambda d: d["num"].iloc[:0]),
         names="background has 0 rows"),
    Case("door occlusion background missing a column", lambda: _door("svm", method="occlusion", background=lambda d: d["num"][["a"]]),
         names=["background", "['b']"]),
    Case("door integrated gradients baseline of the wrong width", lambda: _door("svm", method="integrated_gradients", baseline=np.ones(3)),
         names="baseline has 3 features"),
    Case("door integrated gradients baseline with NaN", lambda: _door("svm", method="integrated_gradients", baseline=np.array([0.0, np.nan])),
         names="baseline contains NaN"),
    Case("door integrated gradients good baseline", lambda: _door("svm", method="integrated_gradients", baseline=np.zeros(2)),
         check=lambda e: e.values.shape == (3, 2)),
    Case("door linear background of the wrong width", lambda: _door("linear", background=np.ones((4, 3))),
         names="background has 3 features"),
    Case("door lrp with a background", lambda: _door("svm", background=lambda d: d["num"]), names="background does not apply"),
    Case("door extra column into a ColumnTransformer pipeline", lambda: _door("ct", X=lambda d: d["raw"].iloc[:5].assign(extra=1.0)),
         names="X has column(s) ['extra'] not seen in fit"),
    Case("door extra column in a pipeline's background", lambda: _door("ct", X=lambda d: d["raw"].iloc[:5], method="kernel_shap",
                                                                       background=lambda d: d["raw"].assign(extra=1.0)),
         names="background has column(s) ['extra']"),
    Case("door NaN in raw column b of a ColumnTransformer pipeline", lambda: _door("ct", X=lambda d: d["raw"].iloc[:5].assign(b=np.nan)),
         names="X contains NaN in column 'b'"),
    Case("door NaN in raw column b of a scaler pipeline", lambda: _door("scaled", X=lambda d: d["num"].iloc[:5].assign(b=np.nan)),
         names="X contains NaN in column 'b'"),
    Case("door NaN in raw column b, model-agnostic", lambda: _door("ct", X=lambda d: d["raw"].iloc[:5].assign(b=np.nan), method="occlusion",
                                                                   background=lambda d: d["raw"]),
         names="X contains NaN in column 'b'"),
    Case("door zero rows into a pipeline", lambda: _door("ct", X=lambda d: d["raw"].iloc[:0]), names="X has 0 rows"),
    Case("door zero rows, array", lambda: _door("svm", X=np.ones((0, 2))), names="X"),
    Case("door 1-d rows into a pipeline", lambda: _door("scaled", X=np.ones(2)), names="X: "),
    Case("door 1-d rows, model-agnostic", lambda: _door("svm", X=np.ones(2), method="occlusion", background=lambda d: d["num"]),
         names="X: "),
    Case("door 1-d rows, linear", lambda: _door("linear", X=np.ones(2), background=lambda d: d["num"]), names="X: "),
    Case("door a good ColumnTransformer pipeline", lambda: _door("ct", X=lambda d: d["raw"].iloc[:4]),
         check=lambda e: e.feature_names == ("a", "b", "c")),
]

ALL = LOADER + SELECT + EXPLANATION + VALIDATION + STATS + CLI + DOOR


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", ALL, ids=[c.id for c in ALL])
def test_bad_input(case):
    case.run()


def test_the_suite_is_what_it_says():
    ids = [c.id for c in ALL]
    assert len(ids) == len(set(ids)), "case ids must be unique"
    assert len(ALL) >= 80
