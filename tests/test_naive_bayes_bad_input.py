"""Part A on bad input: every call returns finite values of the documented shape, or raises ValueError,
TypeError or NotFittedError with a message naming the argument (or the column) at fault.

Each case runs under a time bound (`bounded`, a SIGALRM guard of `LIMIT` seconds): a hang fails the case
instead of the whole run. The bound is a guard against non-termination, not a measurement.
"""
import contextlib
import signal
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from sklearn.exceptions import NotFittedError
from sklearn.naive_bayes import BernoulliNB, CategoricalNB, ComplementNB, GaussianNB, MultinomialNB

from xai_geometry.naive_bayes import (SupervisedKNeighborsClassifier, WeightedNaiveBayes, embedding,
                                      exact_shapley_values, explain, local_agreement, local_margin,
                                      pairwise_distances, shapley_values)
from xai_geometry.naive_bayes.shapley import explained_output

LIMIT = 30  # seconds per case
ERRORS = (ValueError, TypeError, NotFittedError)


@contextlib.contextmanager
def bounded(seconds: int = LIMIT):
    "Fail (TimeoutError) if the block runs longer than `seconds`."
    def _alarm(signum, frame): raise TimeoutError(f"the case did not finish within {seconds} s")
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try: yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0); signal.signal(signal.SIGALRM, old)


def outcome(fn, names):
    """Run `fn` under the time bound: its result, or None after an error of an allowed type whose message
    names one of `names` (a TimeoutError or any other exception fails the test)."""
    with bounded():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return fn()
        except ERRORS as e:
            msg = str(e)
            assert any(n in msg for n in names), f"{type(e).__name__} names none of {names}: {msg!r}"
            return None


def _frame(n=60, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = pd.DataFrame({"num": y + rng.normal(0, 0.7, n),
                      "cat": pd.Series(np.where(rng.random(n) < 0.7, np.array(["a", "b", "c"])[y], "d"), dtype=object),
                      "noise": rng.normal(size=n)})
    X.loc[rng.random(n) < 0.1, "num"] = np.nan
    return X, pd.Series(np.array(["u", "v", "w"])[y])


@pytest.fixture(scope="module")
def fitted():
    X, y = _frame()
    return X, y, WeightedNaiveBayes().fit(X, y)


# ---- explicit cases: (call, exception type, words the message must hold) --------------------------------
def _cases(X, y, nb):
    Xinf = X.assign(num=X.num.where(X.index != 3, np.inf))
    gnb = GaussianNB().fit(np.random.default_rng(0).normal(size=(50, 2)), np.arange(50) % 3)
    cnb = CategoricalNB().fit(np.arange(40).reshape(20, 2) % 4, np.arange(20) % 2)
    knn = SupervisedKNeighborsClassifier().fit(X, y)
    return {
        "prior_weight nan": (lambda: WeightedNaiveBayes(prior_weight=np.nan).fit(X, y), ValueError, ["prior_weight"]),
        "prior_weight inf": (lambda: WeightedNaiveBayes(prior_weight=np.inf).fit(X, y), ValueError, ["prior_weight"]),
        "prior_weight negative": (lambda: WeightedNaiveBayes(prior_weight=-0.1).fit(X, y), ValueError, ["prior_weight"]),
        "prior_exponent nan": (lambda: WeightedNaiveBayes(prior_exponent=np.nan).fit(X, y), ValueError, ["prior_exponent"]),
        "max_iter 0": (lambda: WeightedNaiveBayes(max_iter=0).fit(X, y), ValueError, ["max_iter"]),
        "max_iter float": (lambda: WeightedNaiveBayes(max_iter=2.5).fit(X, y), ValueError, ["max_iter"]),
        "smoothing string": (lambda: WeightedNaiveBayes(smoothing="yes").fit(X, y), ValueError, ["smoothing"]),
        "encoder object": (lambda: WeightedNaiveBayes(encoder=object()).fit(X, y), ValueError, ["encoder"]),
        "weights nan": (lambda: WeightedNaiveBayes(weights=[0.5, np.nan, 1]).fit(X, y), ValueError, ["weights"]),
        "weights inf": (lambda: WeightedNaiveBayes(weights=[0.5, np.inf, 1]).fit(X, y), ValueError, ["weights"]),
        "weights length": (lambda: WeightedNaiveBayes(weights=[0.5, 1]).fit(X, y), ValueError, ["weights"]),
        "weights above 1": (lambda: WeightedNaiveBayes(weights=[0.5, 2, 1]).fit(X, y), ValueError, ["weights"]),
        "weights text": (lambda: WeightedNaiveBayes(weights="all").fit(X, y), ValueError, ["weights"]),
        "from_counts weights nan": (lambda: WeightedNaiveBayes.from_counts([np.array([[3, 4], [5, 6]])], [np.nan]),
                                    ValueError, ["weights"]),
        "from_counts negative": (lambda: WeightedNaiveBayes.from_counts([np.array([[3, -4], [5, 6]])]), ValueError, ["counts"]),
        "from_counts option": (lambda: WeightedNaiveBayes.from_counts([np.array([[3, 4], [5, 6]])], prior_weight=-1),
                               ValueError, ["prior_weight"]),
        "duplicate columns fit": (lambda: WeightedNaiveBayes().fit(X.set_axis(["num", "num", "noise"], axis=1), y),
                                  ValueError, ["duplicate", "num"]),
        "duplicate columns predict": (lambda: nb.predict(X.set_axis(["num", "cat", "num"], axis=1)), ValueError, ["duplicate"]),
        "inf in DataFrame fit": (lambda: WeightedNaiveBayes().fit(Xinf, y), ValueError, ["infinity", "'num'"]),
        "inf in DataFrame predict": (lambda: nb.predict_proba(Xinf), ValueError, ["infinity", "'num'"]),
        "inf in array": (lambda: WeightedNaiveBayes().fit(np.c_[Xinf.num, X.noise], y), ValueError, ["infinity"]),
        "missing column": (lambda: nb.predict(X.drop(columns="cat")), ValueError, ["'cat'"]),
        "extra column": (lambda: nb.predict(X.assign(extra=1)), ValueError, ["'extra'"]),
        "zero rows": (lambda: WeightedNaiveBayes().fit(X.iloc[:0], y.iloc[:0]), ValueError, ["0 rows"]),
        "y length": (lambda: WeightedNaiveBayes().fit(X, y.iloc[:10]), ValueError, ["y"]),
        "y missing label": (lambda: WeightedNaiveBayes().fit(X, y.where(y.index != 2)), ValueError, ["y"]),
        "shapley unfitted": (lambda: shapley_values(WeightedNaiveBayes(), X), NotFittedError, ["model"]),
        "shapley foreign": (lambda: shapley_values(object(), X), TypeError, ["model"]),
        "shapley class": (lambda: explain(GaussianNB, X), TypeError, ["model"]),
        "shapley unfitted GaussianNB": (lambda: explain(GaussianNB(), X), NotFittedError, ["model"]),
        "shapley positional option": (lambda: shapley_values(nb, X, "pooled"), TypeError, ["positional"]),
        "explain output": (lambda: explain(nb, X, output="proba"), ValueError, ["output"]),
        "explain complement": (lambda: explain(nb, X, complement="rest"), ValueError, ["complement"]),
        "background column": (lambda: explain(nb, X, background=X[["num", "cat"]]), ValueError, ["background", "'noise'"]),
        "background inf": (lambda: explain(nb, X, background=Xinf), ValueError, ["background", "'num'"]),
        "embedding kind": (lambda: embedding(nb, X, kind="euclid"), ValueError, ["kind"]),
        "distances complement": (lambda: pairwise_distances(nb, X, complement="x"), ValueError, ["complement"]),
        "knn n_neighbors 0": (lambda: SupervisedKNeighborsClassifier(n_neighbors=0).fit(X, y), ValueError, ["n_neighbors"]),
        "knn n_neighbors > rows": (lambda: SupervisedKNeighborsClassifier(n_neighbors=100).fit(X, y), ValueError, ["n_neighbors"]),
        "knn ties": (lambda: SupervisedKNeighborsClassifier(ties="random").fit(X, y), ValueError, ["ties"]),
        "knn model object": (lambda: SupervisedKNeighborsClassifier(model=object()).fit(X, y), ValueError, ["model"]),
        "knn prefit unfitted": (lambda: SupervisedKNeighborsClassifier(model=GaussianNB(), prefit=True).fit(X, y),
                                NotFittedError, ["model"]),
        "knn GaussianNB on text": (lambda: SupervisedKNeighborsClassifier(model=GaussianNB()).fit(X, y), ValueError, ["'cat'"]),
        "local_margin unfitted": (lambda: local_margin(SupervisedKNeighborsClassifier(), X, y), NotFittedError, ["knn"]),
        "local_margin y length": (lambda: local_margin(knn, X, y.iloc[:5]), ValueError, ["y"]),
        "local_agreement foreign": (lambda: local_agreement(nb, X), TypeError, ["knn"]),
        "GaussianNB NaN": (lambda: explain(gnb, np.array([[np.nan, 0.0]])), ValueError, ["NaN", "0"]),
        "GaussianNB too large": (lambda: explain(gnb, np.array([[1e200, 0.0]])), ValueError, ["column"]),
        "GaussianNB columns": (lambda: explain(gnb, np.zeros((2, 3))), ValueError, ["X has 3 features"]),
        "GaussianNB mixture needs background": (lambda: explain(gnb, np.zeros((2, 2)), complement="mixture"),
                                                ValueError, ["background"]),
        "enumeration needs background": (lambda: exact_shapley_values(gnb, np.zeros((2, 2))), ValueError, ["background"]),
        "CategoricalNB unseen code": (lambda: explain(cnb, np.array([[9.0, 1.0]])), ValueError, ["column", "x0"]),
        "CategoricalNB negative": (lambda: explain(cnb, np.array([[-1.0, 1.0]])), ValueError, ["x0"]),
        "CategoricalNB fraction": (lambda: explain(cnb, np.array([[0.5, 1.0]])), ValueError, ["x0"]),
        "ComplementNB norm one feature": (lambda: explain(ComplementNB(norm=True).fit(np.ones((4, 1)), [0, 1] * 2), np.ones((1, 1))),
                                          ValueError, ["model", "NaN"]),
        "ComplementNB multiclass log-odds": (lambda: explain(ComplementNB().fit(np.ones((6, 2)), [0, 1, 2] * 2), np.ones((1, 2))),
                                             ValueError, ["output"]),
    }


def test_every_explicit_case(fitted):
    X, y, nb = fitted
    for name, (fn, exc, words) in _cases(X, y, nb).items():
        with bounded():
            with pytest.raises(exc) as info, warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn()
        msg = str(info.value)
        assert all(w in msg for w in words), f"{name}: {msg!r} lacks {words}"


def test_extreme_but_valid_values_give_finite_answers(fitted):
    X, y, _ = fitted
    for scale in (1e-300, 1e300):
        Z = X.assign(num=X.num * scale, noise=X.noise * scale)
        with bounded():
            nb = WeightedNaiveBayes().fit(Z, y)
            p = nb.predict_proba(Z); e = explain(nb, Z)
        assert np.isfinite(p).all() and np.isfinite(e.values).all()
        e.check_additivity(explained_output(nb, Z), rtol=1e-9, atol=1e-9)
    Z = X.assign(num=np.r_[np.finfo(float).max, -np.finfo(float).max, X.num.iloc[2:]])
    with bounded():
        p = WeightedNaiveBayes().fit(Z, y).predict_proba(Z)
    assert p.shape == (len(Z), 3) and np.isfinite(p).all()


def test_one_class_and_one_row(fitted):
    X, y, _ = fitted
    with bounded():
        nb = WeightedNaiveBayes().fit(X.iloc[:1], y.iloc[:1])
        e = explain(nb, X)
    assert nb.predict_proba(X).shape == (len(X), 1) and e.values.shape == (len(X), 3, 1) and np.all(e.values == 0)


# ---- generated cases --------------------------------------------------------------------------------------
_VALUES = st.sampled_from([0.0, 1.0, -2.5, 1e300, -1e300, 1e-300, np.nan, np.inf, -np.inf, 3.0, 7.0])
_TEXT = st.sampled_from(["a", "b", "c", " a", "", None])


@st.composite
def frames(draw):
    n = draw(st.integers(1, 25)); m = draw(st.integers(1, 3))
    cols = {}
    for j in range(m):
        kind = draw(st.sampled_from(["float", "int", "text", "category", "bool"]))
        if kind == "float": cols[f"f{j}"] = draw(st.lists(_VALUES, min_size=n, max_size=n))
        elif kind == "int": cols[f"i{j}"] = draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n))
        elif kind == "bool": cols[f"b{j}"] = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        else:
            v = draw(st.lists(_TEXT, min_size=n, max_size=n))
            cols[f"t{j}"] = pd.Series(v, dtype="category" if kind == "category" else object)
    X = pd.DataFrame(cols)
    y = draw(st.lists(st.sampled_from(["p", "q", "r"]), min_size=n, max_size=n))
    return X, pd.Series(y)


_OPTIONS = st.fixed_dictionaries({}, optional={
    "prior_weight": st.sampled_from([0.1, 0.0, -1.0, np.nan, np.inf, 1e300]),
    "prior_exponent": st.sampled_from([0.95, 0.0, -1.0, np.nan]),
    "max_iter": st.sampled_from([200, 1, 0, -3, 2.5]),
    "smoothing": st.sampled_from([False, True, "yes"]),
    "weights": st.sampled_from(["khiops", "uniform", "all", [0.5], [np.nan], [0.5, 0.5], [1.5, 0.2, 0.0]]),
})


def _changed(X, how):
    "A second frame for predict/explain: the same, reordered, a column dropped or added, duplicated, or infinite."
    if how == "same": return X
    if how == "reordered": return X[X.columns[::-1]]
    if how == "dropped": return X.iloc[:, 1:] if X.shape[1] > 1 else X.iloc[:, :0]
    if how == "added": return X.assign(zz=1.0)
    if how == "duplicated": return pd.concat([X, X.iloc[:, :1]], axis=1)
    return X.assign(**{X.columns[0]: np.inf})


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=frames(), options=_OPTIONS, how=st.sampled_from(["same", "reordered", "dropped", "added", "duplicated", "inf"]))
def test_generated_inputs_answer_or_name_the_argument(data, options, how):
    X, y = data
    names = ["X", "y", "background", "model", "0 rows", *options, *X.columns, *map(str, X.columns)]
    nb = outcome(lambda: WeightedNaiveBayes(**options).fit(X, y), names)
    if nb is None: return
    K = len(nb.classes_); M = X.shape[1]
    X2 = _changed(X, how)
    p = outcome(lambda: nb.predict_proba(X2), names + ["duplicate", "infinity", "zz"])
    if p is not None:
        assert p.shape == (len(X2), K) and np.isfinite(p).all()
        np.testing.assert_allclose(p.sum(axis=1), 1, rtol=1e-9)
    e = outcome(lambda: explain(nb, X2, background=X), names + ["duplicate", "infinity", "zz"])
    if e is not None:
        one = (lambda a: a[..., 1]) if K == 2 else (lambda a: a)      # a binary model's record is of classes_[1]
        assert e.values.shape == one(np.zeros((len(X2), M, K))).shape and np.isfinite(e.values).all() and np.isfinite(e.base_values).all()
        e.check_additivity(one(shapley_values(nb, X2, background=X).sum(axis=1)) + e.base_values, rtol=1e-12, atol=1e-12)
    D = outcome(lambda: pairwise_distances(nb, X2, kind="global"), names + ["duplicate", "infinity", "zz"])
    if D is not None: assert D.shape == (len(X2), len(X2)) and np.isfinite(D).all() and (D >= 0).all()
    knn = outcome(lambda: SupervisedKNeighborsClassifier(model=nb, prefit=True).fit(X, y), names)
    if knn is not None:
        pred = outcome(lambda: knn.predict(X2), names + ["duplicate", "infinity", "zz"])
        if pred is not None: assert pred.shape == (len(X2),) and set(pred) <= set(nb.classes_)
        m = outcome(lambda: local_margin(knn, X2, y.iloc[:len(X2)], per_row=True), names + ["duplicate", "infinity", "zz"])
        if m is not None: assert m.shape == (len(X2),) and np.all(np.isnan(m) | ((m >= -1) & (m <= 1)))


_SK = [GaussianNB(), CategoricalNB(), BernoulliNB(), MultinomialNB(), ComplementNB()]


@settings(max_examples=80, deadline=None)
@given(k=st.integers(0, 4), K=st.integers(2, 3), seed=st.integers(0, 2**16),
       bad=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 2), _VALUES), max_size=3),
       output=st.sampled_from(["log_odds", "joint_log_likelihood"]), complement=st.sampled_from(["pooled", "mixture"]),
       use_background=st.booleans())
def test_generated_inputs_scikit_learn_models(k, K, seed, bad, output, complement, use_background):
    rng = np.random.default_rng(seed)
    model = _SK[k]
    X = rng.integers(0, 4, (30, 3)).astype(float); y = np.arange(30) % K
    model = type(model)().fit(X, y)
    X2 = rng.integers(0, 4, (6, 3)).astype(float)
    for i, j, v in bad: X2[i, j] = v
    names = ["X", "background", "output", "x0", "x1", "x2"]
    B = X if use_background else None
    e = outcome(lambda: explain(model, X2, output=output, complement=complement, background=B), names)
    if e is not None:
        assert e.values.shape == ((6, 3) if K == 2 else (6, 3, K)) and np.isfinite(e.values).all()
    D = outcome(lambda: pairwise_distances(model, X2, kind="odds", complement=complement), names)
    if D is not None: assert D.shape == (6, 6) and np.isfinite(D).all()
