"""Part B use cases: the molecular representations' invariances, the QM9 isomer sets (cut from the
optional qm9pack wheel into a cache, or the bundled subset with a message), and the wine statistics."""
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from xai_geometry.experiments import part_b_dipoles as Q
from xai_geometry.experiments import part_b_wine as W
from xai_geometry.runner import UsageError


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
    Qm = Rotation.random(random_state=seed).as_matrix()
    perm = rng.permutation(Z.shape[1])
    Z2, R2 = Z[:, perm], (R @ Qm.T + rng.normal(size=3))[:, perm]
    np.testing.assert_allclose(Q.coulomb_matrix(Z2, R2)[0], Q.coulomb_matrix(Z, R)[0], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(Q.bag_of_bonds(Z2, R2)[0], Q.bag_of_bonds(Z, R)[0], rtol=1e-9, atol=1e-9)


def test_representation_pairs_point_at_the_features():
    Z, R = _molecules(3)
    F, P = Q.coulomb_matrix(Z, R)
    i, j = P[..., 0], P[..., 1]
    D = np.linalg.norm(np.take_along_axis(R, i[..., None], 1) - np.take_along_axis(R, j[..., None], 1), axis=-1)
    Zi, Zj = np.take_along_axis(Z, i, 1), np.take_along_axis(Z, j, 1)
    expected = np.where(i == j, 0.5 * Zi ** 2.4, Zi * Zj / np.where(i == j, 1, D))
    np.testing.assert_allclose(F, expected, rtol=1e-12)
    F, P, names = Q.bag_of_bonds(Z, R)
    for m in range(len(Z)):
        np.testing.assert_allclose(F[m], np.linalg.norm(R[m, P[m, :, 0]] - R[m, P[m, :, 1]], axis=1), rtol=1e-12)


def test_unequal_molecules_are_refused():
    with pytest.raises(ValueError, match="equal atom counts"):
        Q._stack([["C", "H"], ["C"]], [np.zeros((2, 3)), np.zeros((1, 3))])


def test_hill_formula():
    assert Q.hill_formula(["O", "C", "H", "H", "C", "N"]) == "C2H2NO"
    assert Q.hill_formula(["H", "O", "H"]) == "H2O"


def test_subset_isomers_and_bad_source():
    X, y, src = Q.qm9_isomers(source="subset")
    assert src == "qm9_subset" and X.formula.value_counts().to_dict() == {"C7H10O2": 279, "C7H11NO": 251}
    assert len(y) == len(X) and y.name == "dipole"
    with pytest.raises(ValueError, match="source must be"):
        Q.qm9_isomers(source="web")
    with pytest.raises(ValueError, match="expected elements"):
        Q.qm9_isomers("C7H10X2")
    assert Q._stoichiometry("C7H11NO") == "[11,7,1,1,0]"


def test_without_the_extra_full_is_a_usage_error_and_auto_says_how_to_get_it(monkeypatch):
    monkeypatch.setattr(Q, "qm9pack_installed", lambda: False)
    with pytest.raises(UsageError, match=r"pip install 'xai-geometry\[qm9\]'"):
        Q.qm9_isomers(source="full")
    with pytest.warns(UserWarning, match=r"qm9_subset .*pip install 'xai-geometry\[qm9\]'"):
        X, _, src = Q.qm9_isomers(source="auto")
    assert src == "qm9_subset"


def test_full_isomer_sets_are_cut_once_into_the_cache(tmp_path):
    pytest.importorskip("qm9pack", reason="the qm9 extra (qm9pack wheel) holds the full QM9")
    if not Q.qm9pack_installed(): pytest.skip(f"qm9pack is not version {Q.QM9PACK_VERSION}")
    X, y, src = Q.qm9_isomers(source="full", cache_dir=tmp_path)
    assert src.startswith("qm9pack") and X.formula.value_counts().to_dict() == Q.PAPER_ISOMER_COUNTS
    assert X.groupby("formula").N_atoms.agg(set).to_dict() == {"C7H10O2": {19}, "C7H11NO": {20}} and y.notna().all()
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and files[0].suffix == ".gz"
    stamp = files[0].stat().st_mtime_ns
    X2, y2, _ = Q.qm9_isomers(("C7H11NO",), source="full", cache_dir=tmp_path)  # another cut, another file
    assert len(X2) == 5858 and len(list(tmp_path.iterdir())) == 2
    Q.qm9_isomers(source="full", cache_dir=tmp_path)
    assert files[0].stat().st_mtime_ns == stamp  # read from the cache, not cut again


def test_ols_with_hc3_errors_against_a_loop():
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 10, 200); y = 1 + 0.5 * x - 0.1 * x ** 2 + rng.normal(0, 1 + 0.2 * x)
    b, se = W._ols(x, y, 2)
    np.testing.assert_allclose(b, np.polyfit(x, y, 2)[::-1], rtol=1e-9)
    A = np.vander(x, 3, increasing=True); inv = np.linalg.inv(A.T @ A); e = y - A @ b
    meat = sum(np.outer(A[i], A[i]) * (e[i] / (1 - A[i] @ inv @ A[i])) ** 2 for i in range(len(x)))
    np.testing.assert_allclose(se, np.sqrt(np.diag(inv @ meat @ inv)), rtol=1e-9)


def test_wine_verdicts_recognise_the_papers_shapes():
    rng = np.random.default_rng(4)
    n = 2000
    s = rng.uniform(0.5, 20, n); c = np.where(rng.uniform(size=n) < 0.3, 0.15, 0.04); ph = rng.uniform(2.8, 3.6, n)
    acid = ph < np.median(ph)
    R_s = np.where(c > 0.1, -0.01 * s, -0.001 * (s - 8) ** 2) + rng.normal(0, 0.002, n)
    R_p = np.where(acid, np.where(s > 10, 0.01, -0.01), 0.0) + rng.normal(0, 0.002, n)
    Wf = pd.DataFrame({"gamma": 0.2, "scaling": "median", "residual sugar": s, "chlorides": c, "pH": ph,
                       "R_residual sugar": R_s, "R_pH": R_p})
    V = W.wine_verdicts(W.wine_interactions(Wf))
    assert V.holds.all(), V
    Wf["R_residual sugar"] = 0.001 * s + rng.normal(0, 0.002, n)  # rising everywhere: neither sugar reading
    V = W.wine_verdicts(W.wine_interactions(Wf))
    assert not V.holds.iloc[0] and not V.holds.iloc[1]
    with pytest.raises(ValueError, match="no wines with gamma"):
        W.wine_interactions(Wf, gamma=3.0)
