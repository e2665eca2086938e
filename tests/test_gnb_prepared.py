"""Part C at the cost of a prediction (nbs/41): the prepared explainer `gnb.shapley.Prepared` against the averaging over
the background rows (`_averaged_shapley_values`, the reference) on random models and backgrounds of the three
dependences, its one-row and DataFrame calls against `explain`, the kernel sums against the model's own densities at
the hybrid rows. Timings are `xai-geometry bench serve`'s, never asserted here."""
import numpy as np
import pandas as pd
import pytest

import xai_geometry as xg
from xai_geometry.gnb import GeneralizedNaiveBayes
from xai_geometry.gnb.shapley import (Prepared, _averaged_base_values, _averaged_shapley_values, _kde_cross, _unit_rows,
                                      base_values, explain, explained_output, shapley_values)

CASES = [("joint_log_likelihood", None), ("centred_log_likelihood", None), ("log_odds", None), ("log_odds", "mixture"),
         ("log_odds", "pooled")]


def _problem(seed, n=120):
    rng = np.random.default_rng(seed); d = int(rng.integers(2, 6)); K = int(rng.integers(2, 4))
    y = rng.integers(0, K, n); y[:K] = np.arange(K)
    X = rng.normal(size=(n, d)) @ rng.normal(size=(d, d)) * 10.0 ** rng.integers(-3, 4, d) + y[:, None] * rng.normal(size=d)
    return rng, X, y, d, K


@pytest.mark.parametrize("dependence", ["gaussian", "gaussian_copula", "nonparametric"])
@pytest.mark.parametrize("seed", range(3))
def test_prepared_equals_the_averaging(dependence, seed):
    rng, X, y, d, K = _problem(seed, n=90 if dependence == "nonparametric" else 120)
    model = GeneralizedNaiveBayes(dependence=dependence, n_edges=None if seed else int(rng.integers(0, d))).fit(X, y)
    B = xg.background_sample(X, n_samples=int(rng.integers(1, 25)), random_state=seed)
    rows = np.vstack([X[:30], X[:2] * 3])                                           # two rows beyond the training range
    for output, complement in CASES:
        if complement == "pooled" and K > 2 and dependence != "gaussian": continue  # refused
        P = Prepared(model, output=output, complement=complement, background=B)
        ref = _averaged_shapley_values(model, rows, B, output, complement)
        np.testing.assert_allclose(P.values(rows), ref, rtol=1e-8, atol=1e-8)
        np.testing.assert_allclose(P.base, _averaged_base_values(model, B, output, complement), rtol=1e-8, atol=1e-8)
        F = explained_output(model, rows, output=output, complement=complement)
        np.testing.assert_allclose(P.values(rows).sum(1) + P.base, F, rtol=1e-8, atol=1e-7)   # efficiency


def _same(a, b):
    np.testing.assert_array_equal(a.values, b.values)
    np.testing.assert_array_equal(a.base_values, b.base_values)
    assert tuple(a.feature_names) == tuple(b.feature_names) and a.output == b.output and a.method == b.method
    assert a.info == b.info and a.output_names == b.output_names
    pd.testing.assert_frame_equal(a.data, b.data)


@pytest.mark.parametrize("dependence", ["gaussian", "gaussian_copula"])
def test_prepared_is_explain_one_row_and_dataframe(dependence):
    rng, X, y, d, K = _problem(7)
    cols = [f"f{j}" for j in range(d)]
    df = pd.DataFrame(X, columns=cols, index=np.arange(100, 100 + len(X)))
    for target in (y % 2, y):
        model = GeneralizedNaiveBayes(dependence=dependence).fit(df, target)
        P = Prepared(model)
        full = P(df[cols[::-1]])                                                    # matched by name, index kept
        _same(full, explain(model, df))
        one = P(df.iloc[[4]])
        _same(one, explain(model, df.iloc[[4]]))
        np.testing.assert_allclose(one.values, full.values[[4]], rtol=1e-12, atol=1e-12)
        _same(xg.Explainer(model)(df.iloc[[4]]), one)                               # the door keeps the prepared explainer
        assert full.info["background"].startswith("100 training rows")
        np.testing.assert_array_equal(shapley_values(model, df.iloc[:5]).sum(1) + base_values(model, df.iloc[:5]),
                                      P.values(X[:5]).sum(1) + P.base)


def test_prepared_bad_input_names_it():
    rng, X, y, d, K = _problem(3)
    model = GeneralizedNaiveBayes().fit(X, y)
    P = Prepared(model, background=X[:10])
    bad = X[:3].copy(); bad[1, 1] = np.nan
    with pytest.raises(ValueError, match="NaN|missing"): P(bad)
    with pytest.raises(ValueError, match="features"): P(X[:3, :1])
    with pytest.raises(ValueError, match="1e150"): P(X[:2] * 1e200)
    with pytest.raises(ValueError, match="background"): Prepared(model, background=X[:5, :1])
    with pytest.raises(ValueError, match="output"): Prepared(model, output="odds")


def test_kernel_sums_are_the_densities_at_the_hybrid_rows():
    rng, X, y, d, K = _problem(4, n=150)
    X[:, 1] = X[:, 0] * 3 + 0.01 * X[:, 1]                                          # a nearly deterministic pair
    model = GeneralizedNaiveBayes(dependence="nonparametric").fit(X, y)
    dens = model.densities_
    R = np.vstack([X[:20], X[:3] * 50])                                             # far rows: the direct sums take over
    B = X[20:35]
    for S in [s for s in model._sets if len(s) == 2]:
        i, j = S
        H = np.zeros((len(R) * len(B), d)); H[:, i] = np.repeat(R[:, i], len(B)); H[:, j] = np.tile(B[:, j], len(R))
        jac = np.log(2.0) * float(dens.exponents_[[i, j]].sum())
        for k in range(dens.K):
            ref = dens.log_density(H, [S])[:, k, 0].reshape(len(R), len(B)) + jac
            got = _kde_cross(dens, k, S, _unit_rows(dens, R)[:, i], _unit_rows(dens, B)[:, j])
            np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-8)
