"""Part B experiments: bad input, the molecular representations' invariances, the preprocessing,
and a tiny end-to-end Table-2 cell group."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from xai_geometry.experiments import part_b as E


def test_bad_keys_and_kinds():
    with pytest.raises(ValueError, match="key must be one of"):
        E.binarized("nope")
    with pytest.raises(ValueError, match="kind must be"):
        E.select_model("tree", np.zeros((10, 2)), np.r_[np.zeros(5), np.ones(5)])
    with pytest.raises(ValueError, match="method must be"):
        E.relevance("saliency", None, np.zeros((1, 2)), np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r"unknown data set\(s\) 'nope' for reproduce part-b"):
        E.reproduce("/tmp/never_written", datasets=["nope"], progress=False)


def test_ordinal_codes_follow_the_given_order():
    X = pd.DataFrame({"safety": pd.Categorical(["low", "high", "med"]), "n": [1, 2, 3]})
    out = E._ordinal(X, {"safety": ["low", "med", "high"]})
    np.testing.assert_array_equal(out["safety"], [0, 2, 1])
    with pytest.raises(ValueError, match="outside the order"):
        E._ordinal(X, {"safety": ["low", "med"]})


def test_car_evaluation_binarized_as_unacc_vs_rest():
    X, y = E.binarized("car_evaluation")
    assert X.shape == (1728, 6) and y.sum() == 1210
    assert X["safety"].min() == 0 and X["safety"].max() == 2


def test_split_scale_unit_median_distance():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(300, 5)) * [1, 10, 100, 1, 1], rng.integers(0, 2, 300)
    Xtr, Xte, ytr, yte = E.split_scale(X, y, max_rows=250)
    assert len(Xtr) == 200 and len(Xte) == 50
    from scipy.spatial.distance import pdist
    np.testing.assert_allclose(np.median(pdist(Xtr)), 1.0, rtol=1e-12)


def _molecules(seed, n=6, a=7):
    rng = np.random.default_rng(seed)
    Z = np.tile(rng.choice([1.0, 6.0, 7.0, 8.0], size=a), (n, 1))
    R = rng.normal(scale=1.5, size=(n, a, 3))
    return Z, R


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_representations_invariant_to_rigid_motion_and_atom_order(seed):
    from scipy.spatial.transform import Rotation
    Z, R = _molecules(seed)
    rng = np.random.default_rng(seed + 1)
    Q = Rotation.random(random_state=seed).as_matrix()
    perm = rng.permutation(Z.shape[1])
    Z2, R2 = Z[:, perm], (R @ Q.T + rng.normal(size=3))[:, perm]
    np.testing.assert_allclose(E.coulomb_matrix(Z2, R2)[0], E.coulomb_matrix(Z, R)[0], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(E.bag_of_bonds(Z2, R2)[0], E.bag_of_bonds(Z, R)[0], rtol=1e-9, atol=1e-9)


def test_representation_pairs_point_at_the_features():
    Z, R = _molecules(3)
    F, P = E.coulomb_matrix(Z, R)
    i, j = P[..., 0], P[..., 1]
    D = np.linalg.norm(np.take_along_axis(R, i[..., None], 1) - np.take_along_axis(R, j[..., None], 1), axis=-1)
    Zi, Zj = np.take_along_axis(Z, i, 1), np.take_along_axis(Z, j, 1)
    expected = np.where(i == j, 0.5 * Zi ** 2.4, Zi * Zj / np.where(i == j, 1, D))
    np.testing.assert_allclose(F, expected, rtol=1e-12)
    F, P, names = E.bag_of_bonds(Z, R)
    for m in range(len(Z)):
        np.testing.assert_allclose(F[m], np.linalg.norm(R[m, P[m, :, 0]] - R[m, P[m, :, 1]], axis=1), rtol=1e-12)


def test_unequal_molecules_are_refused():
    with pytest.raises(ValueError, match="equal atom counts"):
        E._stack([["C", "H"], ["C"]], [np.zeros((2, 3)), np.zeros((1, 3))])


def test_tiny_table2_cell_group():
    r = E.table2_task("real_estate", "svm", quick=True, max_rows=200, cv_rows=100,
                      methods=("lrp", "gradient_x_input", "gradient_x_input_g"))
    T = E.table2_frame([r])
    assert set(T.method) == {"lrp", "gradient_x_input", "gradient_x_input_g"}
    assert T.loc[T.method == "gradient_x_input_g", "rank"].isna().all()
    assert np.all((T.aufc >= -1) & (T.aufc <= 1))
    S = E.table2_summary(T)
    assert S.lrp_rank.iloc[0] in (1, 2)
