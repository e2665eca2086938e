"""The package's own tree Shapley values: equal to the enumeration of the interventional game's coalitions (the model's
own predictions on every hybrid row) to 1e-8, adding up to the model's own output, with or without shap installed."""
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_diabetes
from sklearn.ensemble import (GradientBoostingClassifier, HistGradientBoostingClassifier, IsolationForest,
                              RandomForestClassifier, RandomForestRegressor)

import xai_geometry as xg
from xai_geometry.explainers.coalitions import coalition_shapley


def enumeration(f, X, B):
    """(n, M, K) Shapley values of v(S) = mean_b f(x_S, b_rest), every coalition's hybrid rows predicted by the model
    itself (f: DataFrame -> (N, K)), all coalitions in one call."""
    X, B = X.reset_index(drop=True), B.reset_index(drop=True)
    n, m, M = len(X), len(B), X.shape[1]
    masks = ((np.arange(2 ** M)[:, None] >> np.arange(M)) & 1).astype(bool)
    i = np.broadcast_to(np.arange(n)[None, :, None], (2 ** M, n, m)).ravel()
    j = np.broadcast_to(np.arange(m)[None, None, :], (2 ** M, n, m)).ravel()
    s = np.repeat(np.arange(2 ** M), n * m)
    cols = {}
    for c_idx, c in enumerate(X.columns):
        xs, bs = X[c].to_numpy(), B[c].to_numpy()
        v = np.where(masks[s, c_idx], xs[i], bs[j])
        cols[c] = pd.Categorical(v, categories=X[c].cat.categories) if isinstance(X[c].dtype, pd.CategoricalDtype) else v.astype(float)
    v = np.asarray(f(pd.DataFrame(cols)), float).reshape(2 ** M, n, m, -1).mean(2)      # (2^M, n, K)
    key = 1 << np.arange(M)
    return coalition_shapley(lambda mk: v[int(mk @ key)], M)


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    return X, y


def test_forest_on_diabetes_equals_enumeration(diabetes):
    X, y = diabetes
    rf = RandomForestRegressor(20, max_depth=6, random_state=0).fit(X[:300], y[:300])
    B, rows = X[:50], X[400:404]                          # withheld rows, a 50-row background
    e = xg.explain(rf, rows, background=B)
    assert e.info["algorithm"].startswith("the package's own")
    ref = enumeration(lambda H: rf.predict(H)[:, None], rows, B)[..., 0]
    np.testing.assert_allclose(e.values, ref, rtol=0, atol=1e-8)
    e.check_additivity(rf.predict(rows), rtol=0, atol=1e-8)


def test_forest_on_red_wines_equals_enumeration():
    X, y = xg.datasets.load("wine_quality_red")
    yb = (y.astype(float) >= 6).astype(int) if not isinstance(y.iloc[0], str) else (y == y.mode()[0]).astype(int)
    rf = RandomForestClassifier(20, max_depth=8, random_state=0).fit(X[:1000], yb[:1000])
    B, rows = X[1000:1030], X[1100:1103]
    e = xg.explain(rf, rows, background=B)
    ref = enumeration(lambda H: rf.predict_proba(H)[:, 1:], rows, B)[..., 0]
    np.testing.assert_allclose(e.values, ref, rtol=0, atol=1e-8)
    e.check_additivity(rf.predict_proba(rows)[:, 1], rtol=0, atol=1e-8)


def _mixed(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n), "c": pd.Categorical(rng.choice(list("pqrst"), n)),
                      "b": rng.normal(size=n), "d": rng.integers(0, 3, n).astype(float)})
    y = ((X.a + X.c.isin(["p", "r"]) * 1.5 - X.d * 0.5 + rng.normal(size=n) * 0.3) > 0.5).astype(int)
    X.loc[rng.random(n) < 0.2, "a"] = np.nan
    X.loc[rng.random(n) < 0.1, "d"] = np.nan
    return X, y


def test_hist_gradient_boosting_with_nan_and_a_categorical_column():
    X, y = _mixed()
    m = HistGradientBoostingClassifier(max_iter=30, categorical_features="from_dtype", random_state=0).fit(X, y)
    B, rows = X[:25], X[300:306]
    assert rows.a.isna().any() or rows.d.isna().any()
    e = xg.explain(m, rows, background=B)
    ref = enumeration(lambda H: m.decision_function(H)[:, None], rows, B)[..., 0]
    np.testing.assert_allclose(e.values, ref, rtol=0, atol=1e-8)
    e.check_additivity(m.decision_function(rows), rtol=0, atol=1e-8)


def test_three_class_gradient_boosting_per_class_log_odds():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X = X.iloc[:, :6]; y3 = pd.qcut(y, 3, labels=False)
    m = GradientBoostingClassifier(n_estimators=20, max_depth=3, random_state=0).fit(X[:300], y3[:300])
    B, rows = X[:20], X[400:403]
    e = xg.explain(m, rows, background=B)
    assert e.values.shape == (3, 6, 3)
    np.testing.assert_allclose(e.values, enumeration(m.decision_function, rows, B), rtol=0, atol=1e-8)
    e.check_additivity(m.decision_function(rows), rtol=0, atol=1e-8)


def test_isolation_forest_explains_its_mean_path_length(diabetes):
    X, _ = diabetes
    iso = IsolationForest(n_estimators=50, random_state=0).fit(X[:300])
    e = xg.explain(iso, X[300:340], background=X[:30])
    assert "mean path length" in e.output and "score_samples" in e.info["note"]
    h = e.values.sum(1) + e.base_values
    s = iso.score_samples(X[300:340])
    order = np.argsort(h)
    assert (np.diff(s[order]) > 0).all()                   # strictly increasing in the explained quantity
    from xai_geometry.trees.models import _path_length_correction
    np.testing.assert_allclose(h, -_path_length_correction(iso.max_samples_) * np.log2(-s), rtol=0, atol=1e-9)


def test_path_dependent_equals_shap():
    shap = pytest.importorskip("shap")
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    rf = RandomForestRegressor(20, max_depth=8, random_state=0).fit(X, y)
    e = xg.explain(rf, X[:20])
    assert e.info["feature_perturbation"] == "tree_path_dependent"
    np.testing.assert_allclose(e.values, shap.TreeExplainer(rf).shap_values(X[:20]), rtol=0, atol=1e-8)
    e.check_additivity(rf.predict(X[:20]), rtol=0, atol=1e-8)


def test_a_forest_is_explained_where_shap_cannot_be_imported(tmp_path, diabetes):
    X, y = diabetes
    rf = RandomForestRegressor(10, max_depth=5, random_state=0).fit(X, y)
    with_shap = xg.explain(rf, X[:5], background=X[:20]).values
    np.save(tmp_path / "with.npy", with_shap)
    code = textwrap.dedent(f"""
        import sys; sys.modules["shap"] = None
        import numpy as np, xai_geometry as xg
        from sklearn.datasets import load_diabetes
        from sklearn.ensemble import RandomForestRegressor
        X, y = load_diabetes(return_X_y=True, as_frame=True)
        rf = RandomForestRegressor(10, max_depth=5, random_state=0).fit(X, y)
        e = xg.explain(rf, X[:5], background=X[:20])
        assert "shap" not in sys.modules or sys.modules["shap"] is None
        np.testing.assert_allclose(e.values, np.load({str(tmp_path / 'with.npy')!r}), rtol=0, atol=1e-12)
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-2000:]


def test_one_series_row_and_check_additivity(diabetes):
    X, y = diabetes
    rf = RandomForestRegressor(10, max_depth=5, random_state=0).fit(X, y)
    e = xg.explain(rf, X.iloc[3], background=X[:20])
    assert e.values.shape == (1, 10)
    e.check_additivity(rf.predict(X.iloc[[3]]), rtol=0, atol=1e-8)
    e = xg.explain(rf, X[:3], background=X[:20], check_additivity=False)
    assert e.values.shape == (3, 10)
    with pytest.raises(TypeError, match="check_additivity"):
        xg.explain(rf, X[:3], background=X[:20], check_additivity="no")


def test_random_trees_deep_and_on_thresholds():
    "Deep trees on few features, rows exactly on thresholds: the walk equals the enumeration (the page's check, more seeds)."
    from sklearn.tree import DecisionTreeRegressor
    rng = np.random.default_rng(7)
    for seed in range(5):
        X = pd.DataFrame(rng.integers(0, 5, (200, 5)).astype(float) / 2, columns=list("abcde"))
        y = rng.normal(size=200) + X.a * X.b - X.c
        tree = DecisionTreeRegressor(random_state=seed).fit(X, y)
        assert tree.get_depth() >= 8
        rows = pd.DataFrame(np.round(tree.tree_.threshold[tree.tree_.feature >= 0][:5, None] * np.ones(5), 6),
                            columns=list("abcde"))                  # rows whose values are the thresholds themselves
        e = xg.explain(tree, rows, background=X[:15])
        np.testing.assert_allclose(e.values, enumeration(lambda H: tree.predict(H)[:, None], rows, X[:15])[..., 0],
                                   rtol=0, atol=1e-8)


def test_sparsified_logistic_regression_and_a_series_row():
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    m = LogisticRegression(max_iter=5000).fit(X, y).sparsify()
    e = xg.explain(m, X.iloc[0], background=X[:50])
    assert e.method.startswith("exact interventional Shapley values of a linear model") and e.values.shape == (1, 30)
    e.check_additivity(m.decision_function(X.iloc[[0]]), rtol=0, atol=1e-9)


def test_gnb_interactions_equal_enumeration_and_nb_is_diagonal():
    import itertools
    import math
    from sklearn.naive_bayes import GaussianNB
    from xai_geometry.gnb import GeneralizedNaiveBayes
    from xai_geometry.gnb.shapley import exact_shapley_values, explained_output
    rng = np.random.default_rng(0)
    n, d = 120, 4
    y = rng.integers(0, 3, n)
    X = rng.normal(size=(n, d)) @ rng.normal(size=(d, d)) + y[:, None]
    m = GeneralizedNaiveBayes().fit(X, y)
    B, rows = X[:4], X[50:53]
    e = xg.explain(m, rows, background=B, interactions=True, output="joint_log_likelihood")
    Phi = e.interactions                                                     # (3, d, d, 3)
    def v(mask):
        absent = np.flatnonzero(~mask)
        combos = np.array(list(itertools.product(range(len(B)), repeat=len(absent))), int).reshape(len(B) ** len(absent), len(absent))
        H = np.repeat(rows, len(combos), axis=0)
        for t, s in enumerate(absent): H[:, s] = np.tile(B[combos[:, t], s], len(rows))
        return explained_output(m, H, output="joint_log_likelihood").reshape(len(rows), len(combos), -1).mean(1)
    for i, j in itertools.combinations(range(d), 2):
        rest = [k for k in range(d) if k not in (i, j)]
        I = 0.0
        for r in range(len(rest) + 1):
            for S in itertools.combinations(rest, r):
                mk = np.zeros(d, bool); mk[list(S)] = True
                mi, mj, mij = mk.copy(), mk.copy(), mk.copy(); mi[i] = mj[j] = True; mij[[i, j]] = True
                I = I + math.factorial(r) * math.factorial(d - r - 2) / math.factorial(d - 1) * (v(mij) - v(mi) - v(mj) + v(mk))
        np.testing.assert_allclose(Phi[:, i, j], I / 2, rtol=0, atol=1e-8)
    phi = exact_shapley_values(m, rows, background=B, output="joint_log_likelihood")
    np.testing.assert_allclose(Phi.sum(2), phi, rtol=0, atol=1e-8)
    np.testing.assert_allclose(Phi, Phi.transpose(0, 2, 1, 3), rtol=0, atol=1e-12)
    nb = xg.explain(GaussianNB().fit(X, y), rows, interactions=True)
    assert np.count_nonzero(nb.interactions - np.einsum("nik,ij->nijk", nb.values, np.eye(d))) == 0
