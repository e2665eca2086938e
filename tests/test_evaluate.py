"""`evaluate` (explainers.evaluation): feature flipping in the model's own units. On columns whose spreads span six
orders of magnitude the exact explanation beats a random one by at least two standard errors, and the raw and the
standardized columns give the same AUFC; one-hot columns, an array-fitted imputing pipeline and a 3-class model are
judged; part B's inputs give `flipping_curve`'s curves bit for bit; bad input names the argument."""
import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.svm import SVC

import xai_geometry as xg
from xai_geometry.explainers.evaluation import evaluate
from xai_geometry.explainers.flipping import ConditionalKDEInpainter, flipping_curve

UNITS = np.array([1e-3, 1.0, 1e3, 10.0, 0.1])
_rng = np.random.default_rng(0)
Z = _rng.normal(size=(360, 5))
CAT = _rng.choice(["a", "b", "c"], 360)
Y = (1.5 * Z[:, 0] - Z[:, 1] + 0.5 * Z[:, 2] + 1.2 * (CAT == "a") - (CAT == "c") + 0.4 * _rng.normal(size=360) > 0).astype(int)
RAW = Z * UNITS                                  # spreads from 0.001 to 1000
TR, TE = slice(0, 300), slice(300, 340)
OPTS = dict(n_draws=10, random_state=0)


def _beats_random(model, X, background):
    "(exact, random) results; the exact explanation is ahead of a random one by >= 2 standard errors of the difference."
    e = xg.explain(model, X)
    exact = evaluate(model, e, background=background, **OPTS)
    rnd = evaluate(model, np.random.default_rng(1).normal(size=e.values.shape), X=X, background=background, **OPTS)
    gap, se = rnd["mean"] - exact["mean"], np.hypot(rnd["stderr"], exact["stderr"])
    assert gap >= 2 * se, (exact["mean"], rnd["mean"], se)
    return exact, rnd


@pytest.mark.parametrize("est", [SVC(), KNeighborsClassifier(9)], ids=["svc", "knn"])
def test_scaled_model_on_raw_columns_beats_random_and_ignores_units(est):
    pipe = make_pipeline(StandardScaler(), est).fit(RAW[TR], Y[TR])
    exact_raw, rnd_raw = _beats_random(pipe, RAW[TE], RAW[TR])
    Zs = pipe[0].transform(RAW)
    bare = type(est)(**est.get_params()).fit(Zs[TR], Y[TR])
    exact_std, rnd_std = _beats_random(bare, Zs[TE], Zs[TR])
    assert abs(exact_raw["mean"] - exact_std["mean"]) <= 0.02 and abs(rnd_raw["mean"] - rnd_std["mean"]) <= 0.02


def test_one_hot_column_transformer_beats_random():
    df = pd.DataFrame(RAW, columns=list("pqrst")).assign(c=CAT)
    ct = ColumnTransformer([("num", StandardScaler(), list("pqrst")), ("cat", OneHotEncoder(), ["c"])])
    pipe = make_pipeline(ct, SVC()).fit(df.iloc[TR], Y[TR])
    exact, _ = _beats_random(pipe, df.iloc[TE], df.iloc[TR])
    assert exact["curves"].shape == (40, 7)                  # 0..6 raw columns removed: the 3 indicators of c as one


def test_bare_model_in_raw_units_is_in_painted_in_units_of_spread():
    "A model whose fit ignores units (GaussianNB, negligible smoothing) gets the same AUFC on raw and standardized columns."
    sc = StandardScaler().fit(RAW[TR]); Zs = sc.transform(RAW)
    g_raw = GaussianNB(var_smoothing=1e-15).fit(RAW[TR], Y[TR]); g_std = GaussianNB(var_smoothing=1e-15).fit(Zs[TR], Y[TR])
    a = evaluate(g_raw, xg.explain(g_raw, RAW[TE]), background=RAW[TR], **OPTS)["mean"]
    b = evaluate(g_std, xg.explain(g_std, Zs[TE]), background=Zs[TR], **OPTS)["mean"]
    assert abs(a - b) <= 0.02, (a, b)


def test_part_b_inputs_give_flipping_curve_bit_for_bit():
    "On part B's inputs (z-scored, divided by the median distance) the in-painter sees the rows themselves."
    from xai_geometry.datasets import load
    from xai_geometry.experiments.part_b_data import split_scale
    X, y = load("raisin")
    Xtr, Xte, ytr, _ = split_scale(X.to_numpy(float), y.to_numpy(), max_rows=300, seed=0)
    inpainter = ConditionalKDEInpainter().fit(Xtr)
    R = np.random.default_rng(2).normal(size=(15, Xtr.shape[1]))
    for model, kw in ((SVC(gamma=1.0).fit(Xtr, ytr), dict()), (SVC(gamma=1.0).fit(Xtr, ytr), dict(output="decision")),
                      (KNeighborsClassifier(9).fit(Xtr, ytr), dict(local_gamma=1.0))):
        old = flipping_curve(model, Xte[:15], R, inpainter=inpainter, n_draws=5, random_state=4, **kw)[1]
        new = evaluate(model, R, X=Xte[:15], background=Xtr, n_draws=5, random_state=4, **kw)["curves"]
        np.testing.assert_array_equal(new, old)


def test_categories_are_drawn_without_noise():
    U = np.c_[np.random.default_rng(0).normal(size=(50, 2)), np.repeat([[1.0, 0.0], [0.0, 1.0]], 25, axis=0)]
    inp = ConditionalKDEInpainter(categorical=np.array([False, False, True, True])).fit(U)
    D = inp.sample_batch(U[:3], np.zeros((3, 4), bool), 200, random_state=0)
    assert set(map(tuple, D[..., 2:].reshape(-1, 2))) <= {(1.0, 0.0), (0.0, 1.0)}     # a whole category of a row
    assert np.unique(D[..., 0]).size > 500                                               # numeric columns noised
    with pytest.raises(ValueError, match="categorical must be 4 booleans"):
        ConditionalKDEInpainter(categorical=np.array([True, False])).fit(U)


def test_array_fitted_imputing_pipeline_keeps_rows_numeric():
    Xm = RAW[:, :4].copy(); Xm[np.random.default_rng(3).random(Xm.shape) < 0.05] = np.nan
    pipe = make_pipeline(SimpleImputer(), StandardScaler(), SVC()).fit(Xm[TR], Y[TR])
    e = xg.explain(pipe, Xm[TE])
    r = evaluate(pipe, e, background=Xm[TR], **OPTS)
    assert r["aufc"].shape == (40,) and np.isfinite(r["mean"])


def test_three_classes_per_class_and_at_once():
    y3 = np.digitize(Z[:, 0] + Z[:, 1], [-0.8, 0.8])
    pipe = make_pipeline(StandardScaler(), SVC()).fit(RAW[TR], y3[TR])
    e = xg.explain(pipe, RAW[TE])
    assert e.values.shape == (40, 5, 3)
    every = evaluate(pipe, e, background=RAW[TR], **OPTS)
    assert every["aufc"].shape == (40, 3) and every["curves"].shape == (40, 3, 6) and every["classes"] == [0, 1, 2]
    assert every["mean"] == pytest.approx(every["aufc"].mean()) and set(every["by_class"]) == {0, 1, 2}
    for k in (0, 2):
        one = evaluate(pipe, e, background=RAW[TR], output=k, **OPTS)
        np.testing.assert_array_equal(one["aufc"], every["aufc"][:, k])
        np.testing.assert_array_equal(evaluate(pipe, e[..., k], background=RAW[TR], **OPTS)["aufc"], one["aufc"])
        rnd = evaluate(pipe, np.random.default_rng(1).normal(size=(40, 5)), X=RAW[TE], background=RAW[TR], output=k, **OPTS)
        assert rnd["mean"] - one["mean"] >= 2 * np.hypot(rnd["stderr"], one["stderr"])   # the outer classes: exact ahead


FRAME = pd.DataFrame(RAW[:, :2], columns=["a", "b"]).assign(c=CAT)
CT = make_pipeline(ColumnTransformer([("num", StandardScaler(), ["a", "b"]), ("cat", OneHotEncoder(), ["c"])]), SVC()).fit(FRAME, Y)
E_CT = xg.explain(CT, FRAME.iloc[:5])
PIPE = make_pipeline(StandardScaler(), SVC()).fit(RAW, Y)
E = xg.explain(PIPE, RAW[:5])


@pytest.mark.parametrize("call, match", [
    (lambda: evaluate(PIPE, E, background=RAW[0]), r"^background must be rows of shape \(n, d\), got a 1-d array"),
    (lambda: evaluate(PIPE, E, background=RAW[:0]), "^background has 0 rows"),
    (lambda: evaluate(PIPE, E, background=RAW[:1]), "^background has 1 row"),
    (lambda: evaluate(PIPE, E, background=RAW[:, :4]), "^background has 4 features"),
    (lambda: evaluate(PIPE, E.values, X=RAW[:5, 0], background=RAW), "^X must be rows"),
    (lambda: evaluate(PIPE, E.values, X=RAW[:0], background=RAW), "^X has 0 rows"),
    (lambda: evaluate(PIPE, E.values, background=RAW), "X is required"),
    (lambda: evaluate(PIPE, E.values[:, :3], X=RAW[:5], background=RAW), "^explanation has 3 columns"),
    (lambda: evaluate(PIPE, E.values[:4], X=RAW[:5], background=RAW), "^explanation has 4 rows but X has 5"),
    (lambda: evaluate(PIPE, np.full((5, 5), np.nan), X=RAW[:5], background=RAW), "explanation contains NaN"),
    (lambda: evaluate(PIPE, E, background=np.ones((4, 5))), "^background has all rows equal"),
    (lambda: evaluate(CT, E_CT, background=FRAME.assign(b=np.where(np.arange(360) == 7, np.nan, FRAME.b))),
     "^background contains NaN in column 'b'"),
    (lambda: evaluate(CT, E_CT, background=FRAME.assign(extra=1.0)), r"^background has column\(s\) \['extra'\]"),
    (lambda: evaluate(CT, E_CT, background=FRAME.drop(columns="c")), r"^background lacks the column\(s\) \['c'\]"),
    (lambda: evaluate(PIPE, E, background=RAW, output="proba"), "^output='proba'"),
    (lambda: evaluate(PIPE, E, background=RAW, n_draws=0), "n_draws"),
])
def test_messages_name_the_argument(call, match):
    with pytest.raises((ValueError, TypeError), match=match): call()


def test_explanation_of_the_wrong_number_of_classes_is_refused():
    y3 = np.arange(360) % 3
    m3 = make_pipeline(StandardScaler(), GaussianNB()).fit(RAW, y3)
    with pytest.raises(ValueError, match="name the class it explains with output="):
        evaluate(m3, np.zeros((5, 5)), X=RAW[:5], background=RAW)
    with pytest.raises(ValueError, match="3 outputs but the model has one"):
        evaluate(PIPE, xg.explain(m3, RAW[:5]), background=RAW)


def test_bench_task_in_both_units():
    "One data set and one model of `xai-geometry bench evaluate --quick`: the same scores on raw and standardized columns."
    from xai_geometry.experiments.bench_evaluate import METHODS, agreement, evaluate_task, quantus_available
    ok, _ = quantus_available()
    T = evaluate_task("raisin", "SVC", quick=True, use_quantus=ok)
    assert list(T.method) == list(METHODS) * 2 and set(T.units) == {"raw", "standardized"}
    P = T.pivot(index="method", columns="units", values="aufc")
    assert (P.raw - P.standardized).abs().max() <= 0.02
    assert T.quantus_auc.notna().sum() == (4 if ok else 0)
    if ok: assert len(agreement(T)) == 1
