"Property tests (hypothesis) of the MODL criteria, optimizers and encoder."
import math

import numpy as np
import pandas as pd
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from xai_geometry.naive_bayes.modl import (MODLEncoder, discretization_cost, greedy_discretization, grouping_cost,
                                           modl_grouping, optimal_discretization)
from xai_geometry.naive_bayes.modl.criteria import _disc_partition_cost, _khiops_disc_pcost

tables = st.integers(1, 12).flatmap(lambda V: st.integers(2, 4).flatmap(
    lambda J: arrays(np.int64, (V, J), elements=st.integers(0, 9))))


@settings(max_examples=150, deadline=None)
@given(tables, st.sampled_from(["modl2006", "khiops"]))
def test_greedy_is_never_below_the_exact_optimum(c, criterion):
    c = c.copy(); c[:, 0] += 1
    N, J = int(c.sum()), c.shape[1]
    if criterion == "modl2006":
        pc = lambda I: _disc_partition_cost(I, N, J, criterion="modl2006", n_values=None, granularity=None,
                                            attribute_cost=0)
    else:
        pc = _khiops_disc_pcost(N, J, N, max(1, math.ceil(math.log2(N))), math.log(5))
    ends_opt, opt = optimal_discretization(c, pc)
    ends, g = greedy_discretization(c, pc)
    assert g >= opt - 1e-9
    # the reported cost is the cost of the reported partition
    starts = np.concatenate([[0], ends[:-1] + 1])
    tab = np.add.reduceat(c, starts, axis=0)
    if criterion == "modl2006":
        assert abs(g - discretization_cost(tab)) < 1e-8
    assert ends[-1] == len(c) - 1 and np.all(np.diff(ends) > 0)


@settings(max_examples=100, deadline=None)
@given(tables)
def test_grouping_cost_of_result_and_single_group_bound(c):
    c = c.copy(); c[:, 0] += 1
    c = c[np.argsort(-c.sum(1), kind="stable")]
    memb, cost, _ = modl_grouping(c, criterion="modl2006")
    G = np.zeros((memb.max() + 1, c.shape[1]), np.int64); np.add.at(G, memb, c)
    assert abs(cost - grouping_cost(G, len(c))) < 1e-8
    assert cost <= grouping_cost(c.sum(0, keepdims=True), len(c)) + 1e-9  # never worse than one group


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 80), st.integers(0, 2**31 - 1))
def test_encoder_counts_match_transform(n, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    x = np.round(rng.normal(y, 1.0, n), 1); x[rng.uniform(size=n) < 0.2] = np.nan
    cat = rng.choice(["a", "b", "c", None], n)
    X = pd.DataFrame({"x": x, "c": pd.Series(cat, dtype=object)})
    enc = MODLEncoder().fit(X, y)
    Z = enc.transform(X)
    assert Z.min() >= 0
    for m in range(2):
        np.testing.assert_array_equal(np.bincount(Z[:, m], minlength=enc.n_parts_[m]), enc.counts_[m].sum(1))
        assert enc.counts_[m].sum() == n
