"Bad and edge inputs of the MODL transformers: each a defined, tested behaviour."
import io
import math

import numpy as np
import pandas as pd
import pytest

from xai_geometry.naive_bayes.modl import (MODLDiscretizer, MODLEncoder, MODLGrouper, discretization_cost,
                                           grouping_cost, greedy_discretization, optimal_discretization)
from xai_geometry.naive_bayes.modl.criteria import _disc_partition_cost

rng = np.random.default_rng(0)
N = 400
Y = rng.integers(0, 2, N)
X_INFO = np.where(Y == 1, rng.normal(2, 1, N), rng.normal(0, 1, N))


@pytest.mark.parametrize("criterion", ["khiops", "modl2006"])
def test_all_missing_column_is_one_part(criterion):
    X = pd.DataFrame({"a": np.full(N, np.nan), "b": X_INFO})
    enc = MODLEncoder(criterion=criterion).fit(X, Y)
    assert enc.n_parts_[0] == 1 and not enc.informative_[0] and enc.level_[0] == 0
    assert enc.informative_[1]
    Z = enc.transform(X)
    assert (Z[:, 0] == 0).all() and Z.min() >= 0


@pytest.mark.parametrize("criterion", ["khiops", "modl2006"])
def test_constant_columns_are_one_part(criterion):
    X = pd.DataFrame({"num": np.full(N, 3.0), "cat": pd.Categorical(["u"] * N)})
    enc = MODLEncoder(criterion=criterion).fit(X, Y)
    np.testing.assert_array_equal(enc.n_parts_, [1, 1])
    np.testing.assert_array_equal(enc.counts_[0], [np.bincount(Y)])
    assert (enc.transform(pd.DataFrame({"num": [1.0, 3.0, 99.0], "cat": ["u", "v", None]})) == 0).all()


def test_single_class_target():
    X = pd.DataFrame({"num": X_INFO, "cat": rng.choice(list("abc"), N)})
    enc = MODLEncoder().fit(X, np.zeros(N, int))
    assert len(enc.classes_) == 1
    np.testing.assert_array_equal(enc.n_parts_, [1, 1])
    assert (enc.level_ == 0).all() and not enc.informative_.any()
    assert enc.counts_[0].shape == (1, 1)


@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_infinities_are_refused_naming_the_column(bad):
    x = X_INFO.copy(); x[3] = bad
    with pytest.raises(ValueError, match="column 'x' holds infinite"):
        MODLEncoder().fit(pd.DataFrame({"z": X_INFO, "x": x}), Y)
    with pytest.raises(ValueError, match="column 1 holds infinite"):
        MODLDiscretizer().fit(np.c_[X_INFO, x], Y)
    enc = MODLEncoder().fit(pd.DataFrame({"z": X_INFO, "x": X_INFO}), Y)
    with pytest.raises(ValueError, match="column 'x' holds infinite"):
        enc.transform(pd.DataFrame({"z": X_INFO, "x": x}))
    with pytest.raises(ValueError, match="column 'x' holds infinite"):
        enc.transform(np.c_[X_INFO, x])      # an array is refused like a DataFrame
    # extreme finite values and missing values are fine
    Z = enc.transform(pd.DataFrame({"z": [1e300, -1e300, np.nan], "x": [0.0, 0.0, 0.0]}))
    assert Z[0, 0] == enc.n_parts_[0] - 1 and enc.partitions_[0][Z[2, 0]].missing


def test_mixed_type_object_column_is_read_as_text():
    vals = np.array([1, "1", 2.5, "a", None, True, " a "], dtype=object)
    x = vals[rng.integers(0, len(vals), N)]
    yy = (pd.Series(x).astype(str).str.strip() == "a").to_numpy().astype(int)
    enc = MODLEncoder().fit(pd.DataFrame({"m": x}), yy)
    assert enc.is_categorical_[0]
    groups = [set(g.values) for g in enc.partitions_[0]]
    assert any("a" in g for g in groups) and not any(" a " in g for g in groups)  # blanks trimmed
    # 1 and "1" are the same text; None is the value ""
    Z = enc.transform(pd.DataFrame({"m": np.array([1, "1", None, ""], dtype=object)}))[:, 0]
    assert Z[0] == Z[1] and Z[2] == Z[3]


def test_many_distinct_categories():
    n = 100_000
    x = np.array([f"id{i}" for i in range(n)], dtype=object)
    yy = np.arange(n) % 2
    enc = MODLEncoder().fit(pd.DataFrame({"id": x}), yy)
    assert enc.n_parts_[0] == 1 and not enc.informative_[0]  # every value seen once: no information
    assert (enc.transform(pd.DataFrame({"id": ["id3", "never seen"]})) == 0).all()


@pytest.mark.parametrize("Est", [MODLDiscretizer, MODLGrouper])
def test_one_row(Est):
    est = Est().fit(np.array([[1.0]]), ["a"])
    assert est.n_parts_[0] == 1
    assert est.transform(np.array([[5.0]]))[0, 0] == 0


def test_one_row_encoder():
    enc = MODLEncoder().fit(pd.DataFrame({"x": [1.0], "c": ["u"]}), ["a"])
    np.testing.assert_array_equal(enc.n_parts_, [1, 1])


@pytest.mark.parametrize("bad", [np.nan, None])
def test_target_with_missing_values_is_refused(bad):
    y = np.array(["a", "b"] * (N // 2), dtype=object); y[3] = bad
    with pytest.raises(ValueError, match="y contains missing"):
        MODLEncoder().fit(pd.DataFrame({"x": X_INFO}), y)


def test_missing_column_in_transform_is_named():
    enc = MODLEncoder().fit(pd.DataFrame({"x": X_INFO, "z": X_INFO}), Y)
    with pytest.raises(ValueError, match="'z'"):
        enc.transform(pd.DataFrame({"x": X_INFO}))


def test_columns_matched_by_name_and_unseen_categories():
    X = pd.DataFrame({"x": X_INFO, "c": np.where(Y == 1, "p", rng.choice(["q", "r"], N))})
    enc = MODLEncoder().fit(X, Y)
    Z1 = enc.transform(X); Z2 = enc.transform(X[["c", "x"]])
    np.testing.assert_array_equal(Z1, Z2)
    d = [g.default for g in enc.partitions_[1]].index(True)
    assert enc.transform(pd.DataFrame({"x": [0.0], "c": ["never seen"]}))[0, 1] == d


def test_numeric_column_with_text_in_transform():
    enc = MODLEncoder().fit(pd.DataFrame({"x": X_INFO}), Y)
    with pytest.raises(ValueError, match="'x'"):
        enc.transform(pd.DataFrame({"x": ["a"] * 3}))


def test_bad_criterion_and_counts():
    with pytest.raises(ValueError, match="criterion"):
        MODLEncoder(criterion="nope").fit(pd.DataFrame({"x": X_INFO}), Y)
    with pytest.raises(ValueError, match="counts"):
        discretization_cost([[1, -1]])
    with pytest.raises(ValueError, match="groups"):
        grouping_cost([[1, 1], [2, 2]], 1)


def test_fitted_attributes_contract():
    X = pd.DataFrame({"x": X_INFO, "c": pd.Categorical(np.where(Y == 1, "p", "q")), "b": Y.astype(bool)})
    enc = MODLEncoder().fit(X, np.where(Y == 1, "yes", "no"))
    assert list(enc.feature_names_in_) == ["x", "c", "b"] and enc.n_features_in_ == 3
    np.testing.assert_array_equal(enc.classes_, ["no", "yes"])
    np.testing.assert_array_equal(enc.is_categorical_, [False, True, True])
    for m in range(3):
        assert enc.counts_[m].dtype == np.int64 and enc.counts_[m].shape == (enc.n_parts_[m], 2)
        assert len(enc.partitions_[m]) == enc.n_parts_[m]
    Z = enc.transform(X)
    assert Z.dtype == np.int64 and Z.shape == (N, 3)
    for m in range(3):
        np.testing.assert_array_equal(np.bincount(Z[:, m], minlength=enc.n_parts_[m]), enc.counts_[m].sum(1))


def test_greedy_never_below_optimum():
    r = np.random.default_rng(5)
    for _ in range(200):
        V, J = int(r.integers(1, 25)), int(r.integers(2, 4))
        c = r.integers(0, 6, size=(V, J)); c[:, 0] += 1
        n = int(c.sum())
        pc = lambda I: _disc_partition_cost(I, n, J, criterion="modl2006", n_values=None, granularity=None,
                                            attribute_cost=0)
        _, opt = optimal_discretization(c, pc)
        _, g = greedy_discretization(c, pc)
        assert g >= opt - 1e-9


def test_integer_categories_read_back_as_floats_keep_their_group():
    r = np.random.default_rng(3)
    k = r.integers(0, 20, 4000)
    yy = (r.uniform(size=4000) < np.where(k % 4 == 0, 0.85, 0.15)).astype(int)
    X = pd.DataFrame({"k": pd.Categorical(k), "x": r.normal(size=4000)})
    enc = MODLEncoder().fit(X, yy)
    assert enc.n_parts_[0] > 1
    buf = io.StringIO()
    X.assign(k=X.k.astype(object).where(r.uniform(size=4000) > 0.1)).to_csv(buf, index=False)
    back = pd.read_csv(io.StringIO(buf.getvalue()))            # k comes back as float64 with NaN
    assert back.k.dtype.kind == "f"
    keep = back.k.notna().to_numpy()
    np.testing.assert_array_equal(enc.transform(back)[keep], enc.transform(X)[keep])
    # the grouper alone, and object columns mixing the two spellings
    g = MODLGrouper().fit(k[:, None], yy)
    np.testing.assert_array_equal(g.transform(k[:, None].astype(float)), g.transform(k[:, None]))
    mixed = np.array([1, 1.0, np.int64(1), "1", " 1"], dtype=object)[:, None]
    assert len(set(g.transform(mixed)[:, 0])) == 1


@pytest.mark.parametrize("Est", [MODLEncoder, MODLDiscretizer, MODLGrouper])
def test_duplicate_column_names_are_refused_naming_them(Est):
    X = pd.DataFrame(np.c_[X_INFO, X_INFO, X_INFO], columns=["a", "b", "a"])
    with pytest.raises(ValueError, match=r"duplicate column names \['a'\]"):
        Est().fit(X, Y)
    good = Est().fit(X.set_axis(["a", "b", "c"], axis=1), Y)
    with pytest.raises(ValueError, match=r"duplicate column names \['a'\]"):
        good.transform(X)


@pytest.mark.parametrize("Est", [MODLEncoder, MODLDiscretizer, MODLGrouper])
@pytest.mark.parametrize("params,name", [({"criterion": "nope"}, "criterion"), ({"criterion": 3}, "criterion"),
                                         ({"attribute_cost": -1.0}, "attribute_cost"),
                                         ({"attribute_cost": np.nan}, "attribute_cost"),
                                         ({"attribute_cost": np.inf}, "attribute_cost"),
                                         ({"attribute_cost": "x"}, "attribute_cost")])
def test_every_option_is_validated_at_fit(Est, params, name):
    from xai_geometry.validation import InvalidParameterError
    est = Est(**params)                                        # __init__ only stores
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter of {Est.__name__}"):
        est.fit(pd.DataFrame({"x": X_INFO}), Y)
