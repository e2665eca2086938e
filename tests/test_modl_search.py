"""The fast MODL search (compiled; O(1) per merge, local updates per move) against the plain one, on tie-rich problems."""
import copy
import heapq
import math

import numpy as np
from hypothesis import given, settings, strategies as st

from xai_geometry.naive_bayes.modl.criteria import (_khiops_disc_pcost, _lnfact_list, _modl2006_disc_pcost,
                                                    _part_costs, log_factorial, universal_code_length)
from xai_geometry.naive_bayes.modl.search import (_greedy_merge, _khiops_greedy_merge, _khiops_lnf_table, _partition_cost_table, _post_optimize,
                                                  greedy_discretization, khiops_discretization, optimal_discretization)


# --- the plain search (as written before the fast one; the notebook's equation-literal reference) ---------------
def _fold(xs):
    "Left-to-right sum of a list of floats (the order of every sum of the search)."
    s = 0.0
    for x in xs: s += x
    return s

def reference_greedy_merge(c, partition_cost, lnf):
    "The plain greedy merge: a heap of (delta, left, right, versions) tuples; returns the ends at the best count seen."
    V, J = c.shape
    if V == 1: return np.array([0], dtype=np.int64)
    lnJ1 = lnf[J - 1]
    cf = _part_costs(c)
    cost = cf.tolist()
    d0 = (_part_costs(c[:-1] + c[1:]) - cf[:-1] - cf[1:]).tolist()
    nxt = list(range(1, V + 1)); prv = list(range(-1, V - 1))
    ver = [0] * V  # bumped when a row changes or dies: stale heap entries are skipped
    pop, push = heapq.heappop, heapq.heappush
    I = V; total = 0.0; best_total = 0.0; best_I = V; order = []
    pc = _partition_cost_table(partition_cost, V)
    if J == 2:
        # entries (delta, left index, version of left): the pair is (left, nxt[left]); any change of either
        # row bumps the version of the pair's left row, so stale entries are recognized in O(1)
        A, B = c[:, 0].tolist(), c[:, 1].tolist()
        heap = list(zip(d0, range(V - 1), [0] * (V - 1)))
        heapq.heapify(heap)
        while I > 1:
            d, i, vi = pop(heap)
            if ver[i] != vi: continue
            j = nxt[i]
            a = A[i] + A[j]; b = B[i] + B[j]; A[i] = a; B[i] = b
            ci = cost[i] + cost[j] + d; cost[i] = ci
            ver[j] = -1; vi = ver[i] = vi + 1
            nj = nxt[j]; nxt[i] = nj
            order.append(j)
            total += d + pc[I - 1] - pc[I]; I -= 1
            if total <= best_total + 1e-9: best_total, best_I = total, I
            p = prv[i]
            if p >= 0:
                vp = ver[p] = ver[p] + 1
                ap = A[p] + a; bp = B[p] + b
                push(heap, (lnf[ap + bp + 1] - lnJ1 - lnf[ap] - lnf[bp] - cost[p] - ci, p, vp))
            if nj < V:
                prv[nj] = i
                an = A[nj] + a; bn = B[nj] + b
                push(heap, (lnf[an + bn + 1] - lnJ1 - lnf[an] - lnf[bn] - cost[nj] - ci, i, vi))
    else:
        heap = list(zip(d0, range(V - 1), range(1, V), [0] * (V - 1), [0] * (V - 1)))
        heapq.heapify(heap)
        rows = [tuple(r) for r in c.tolist()]
        def pcost(r): return lnf[sum(r) + J - 1] - lnJ1 - _fold([lnf[x] for x in r])
        def add(r, q): return tuple([a + b for a, b in zip(r, q)])
        while I > 1:
            d, i, j, vi, vj = pop(heap)
            if ver[i] != vi or ver[j] != vj: continue
            rows[i] = add(rows[i], rows[j])
            ci = cost[i] + cost[j] + d; cost[i] = ci
            ver[j] += 1; vi = ver[i] = vi + 1
            nj = nxt[j]; nxt[i] = nj
            order.append(j)
            total += d + pc[I - 1] - pc[I]; I -= 1
            if total <= best_total + 1e-9: best_total, best_I = total, I
            p = prv[i]
            if p >= 0:
                push(heap, (pcost(add(rows[p], rows[i])) - cost[p] - ci, p, i, ver[p], vi))
            if nj < V:
                prv[nj] = i
                push(heap, (pcost(add(rows[i], rows[nj])) - ci - cost[nj], i, nj, vi, ver[nj]))
    # replay: the starts removed by the first V - best_I merges
    removed = np.zeros(V, dtype=bool); removed[np.array(order[:V - best_I], dtype=np.int64)] = True
    starts = np.flatnonzero(~removed)
    return np.append(starts[1:] - 1, V - 1).astype(np.int64)

def reference_post_optimize(c, ends, partition_cost, max_iter=1000):
    "The plain post-optimization: every move of every window re-evaluated at each step (O(V) per move)."
    V, J = c.shape
    P = np.vstack([np.zeros((1, J), np.int64), np.cumsum(c, 0)])
    def seg_cost(a, b):  # values a..b-1
        return _part_costs(P[b] - P[a])
    ends = np.asarray(ends, dtype=np.int64)
    for _ in range(max_iter):
        I = len(ends)
        starts = np.concatenate([[0], ends[:-1] + 1]); stops = ends + 1
        cur = seg_cost(starts, stops)
        best = (-1e-9, None)
        for w, dI in ((1, +1), (2, 0), (3, -1)):
            if I < w: continue
            k = np.arange(I - w + 1)
            a, b = starts[k], stops[k + w - 1]
            L = b - a
            ok = L >= 2
            k, a, b, L = k[ok], a[ok], b[ok], L[ok]
            if len(k) == 0 or I + dI < 1: continue
            rep = np.repeat(np.arange(len(k)), L - 1)
            cut = a[rep] + (np.arange(rep.size) - np.repeat(np.cumsum(L - 1) - (L - 1), L - 1)) + 1
            new = seg_cost(a[rep], cut) + seg_cost(cut, b[rep])
            oldw = np.convolve(cur, np.ones(w), mode="valid")[k]
            delta = new - oldw[rep] + (partition_cost(I + dI) - partition_cost(I))
            t = int(np.argmin(delta))
            if delta[t] < best[0]:
                kk = int(k[rep[t]])
                best = (float(delta[t]), (kk, w, int(cut[t])))
        if best[1] is None: break
        kk, w, cut = best[1]
        new_ends = np.concatenate([ends[:kk], [cut - 1], [ends[kk + w - 1]], ends[kk + w:]])
        ends = new_ends
    return ends


# --- Khiops' merges, plainly (the notebook's reference) ---------------------------------------------------------
class KhiopsSortedList:
    "Khiops' `SortedList` on float keys: items of equal key are kept as [first inserted, newest, ..., oldest]."
    def __init__(self): self.groups, self.keys, self.where, self.items, self.serial = {}, [], {}, {}, 0
    def add(self, item, key):
        self.serial += 1; token = self.serial
        self.where[item] = (token, key); self.items[token] = item
        if key in self.groups: self.groups[key].insert(1, token)      # right after the first of its ties
        else: self.groups[key] = [token]; heapq.heappush(self.keys, key)
    def remove(self, item):
        token, key = self.where.pop(item)
        g = self.groups[key]; g.remove(token)
        if not g: del self.groups[key]
    def head(self):
        while self.keys[0] not in self.groups: heapq.heappop(self.keys)
        return self.items[self.groups[self.keys[0]][0]]
    def __len__(self): return len(self.where)

def reference_khiops_merge(c, partition_cost):
    """Khiops' merges, plainly (`IntervalListMergeOptimization`, `IntervalListBestMergeOptimization`): merge while
    the cost does not increase (gains below 1e-6 count as 0); from there, on to one interval, keeping the best
    count (ties within 1e-6: fewer intervals); replay to it. Each phase starts from a fresh sorted list filled
    left to right; costs are Khiops' (`_khiops_lnf_table`, its order of operations), recomputed from the counts."""
    V, J = c.shape
    if V == 1: return np.array([0], dtype=np.int64)
    K = _khiops_lnf_table(int(c.sum()) + J + 2)
    def part_cost(row):                                  # KWMODLDiscretizationCosts::ComputePartCost
        d = 0.0
        for x in row: d -= K[x]
        d += K[sum(row) + J - 1]; d -= K[J - 1]
        return d
    pc = _partition_cost_table(partition_cost, V)
    rows = [list(r) for r in c.tolist()]
    s = dict(rows=rows, cost=[part_cost(r) for r in rows], prv=list(range(-1, V - 1)), nxt=list(range(1, V + 1)),
             first=0, I=V, merge={})
    def set_merge(s, r):                                 # ComputeIntervalMerge: r with its predecessor
        m = [a + b for a, b in zip(s["rows"][s["prv"][r]], s["rows"][r])]; mc = part_cost(m)
        s["merge"][r] = (m, mc, mc - s["cost"][r] - s["cost"][s["prv"][r]])
    for r in range(1, V): set_merge(s, r)
    def run(s, phase, stop_at=0):
        L = KhiopsSortedList(); r = s["nxt"][s["first"]]
        while r < V: L.add(r, s["merge"][r][2]); r = s["nxt"][r]
        tot, best, best_I = 0.0, 0.0, s["I"]
        while len(L) and s["I"] > stop_at:
            r = L.head(); p, n = s["prv"][r], s["nxt"][r]
            d = (pc[s["I"] - 1] - pc[s["I"]]) + s["merge"][r][2]
            if phase == 1:
                if abs(d) < 1e-6: d = 0.0
                if d > 0: break
            L.remove(r)                                  # UpdateMergeSortedList
            if s["prv"][p] >= 0: L.remove(p)
            if n < V: L.remove(n)
            s["rows"][r], s["cost"][r] = s["merge"][r][0], s["merge"][r][1]
            pp = s["prv"][p]; s["prv"][r] = pp
            if pp >= 0: s["nxt"][pp] = r; set_merge(s, r); L.add(r, s["merge"][r][2])
            else: s["first"] = r
            if n < V: set_merge(s, n); L.add(n, s["merge"][n][2])
            s["I"] -= 1
            tot += d
            if tot <= best + 1e-6 and s["I"] >= 1: best, best_I = tot, s["I"]
        return best_I
    run(s, 1)
    best_I = run(copy.deepcopy(s), 2)
    run(s, 3, stop_at=best_I)
    ends, r = [], s["first"]
    while r < V: ends.append(r); r = s["nxt"][r]
    return np.array(ends, dtype=np.int64)


# --- problems -------------------------------------------------------------------------------------------------
@st.composite
def problems(draw):
    V, J = draw(st.integers(1, 80)), draw(st.integers(2, 10))
    kind = draw(st.sampled_from(["counts", "rows", "runs"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if kind == "counts": c = rng.integers(0, 4, size=(V, J))
    elif kind == "rows": c = np.eye(J, dtype=np.int64)[rng.integers(0, J, V)]      # continuous data: one row per row
    else: c = np.eye(J, dtype=np.int64)[rng.integers(0, J, V)] * rng.integers(1, 4, size=(V, 1))
    c[c.sum(1) == 0, 0] = 1
    N = int(c.sum())
    crit = draw(st.sampled_from(["modl2006", "khiops"]))
    pc = _modl2006_disc_pcost(N, J) if crit == "modl2006" else _khiops_disc_pcost(N, J, N, max(1, math.ceil(math.log2(N))), math.log(7))
    return c.astype(np.int64), pc


@settings(max_examples=300, deadline=None)
@given(problems(), st.integers(0, 2**32 - 1))
def test_fast_search_is_the_plain_search(problem, seed):
    c, pc = problem
    lnf = _lnfact_list(int(c.sum()) + c.shape[1] + 2)
    e = _greedy_merge(c, pc)
    np.testing.assert_array_equal(e, reference_greedy_merge(c, pc, lnf))
    np.testing.assert_array_equal(_post_optimize(c, e, pc), reference_post_optimize(c, e, pc))
    rng = np.random.default_rng(seed)                    # from any starting partition too
    if len(c) >= 3:
        start = np.unique(np.append(rng.choice(len(c) - 1, int(rng.integers(0, len(c) - 1)), replace=False), len(c) - 1))
        np.testing.assert_array_equal(_post_optimize(c, start, pc), reference_post_optimize(c, start, pc))


@settings(max_examples=100, deadline=None)
@given(problems())
def test_greedy_never_below_the_exact_optimum_and_reports_its_cost(problem):
    c, pc = problem
    _, opt = optimal_discretization(c, pc)
    ends, g = greedy_discretization(c, pc)
    assert g >= opt - 1e-9
    tab = np.add.reduceat(c, np.concatenate([[0], ends[:-1] + 1]), axis=0)
    assert abs(g - (pc(len(ends)) + float(_part_costs(tab).sum()))) < 1e-9


def test_search_on_continuous_data_at_scale():
    "20,000 distinct values, 3 classes: Khiops' granularity search returns a valid partition with its reported cost."
    rng = np.random.default_rng(1)
    x = rng.normal(size=20_000); y = (x + rng.normal(size=20_000) > 0).astype(int) + (x > 1)
    c = np.eye(3, dtype=np.int64)[y[np.argsort(x)]]
    ends, cost, G, VG = khiops_discretization(c, math.log(10))
    assert ends[-1] == len(c) - 1 and np.all(np.diff(ends) > 0) and 2 <= len(ends) < 200 and np.isfinite(cost)


def test_log_factorials_and_rissanen_code():
    from scipy.special import gammaln
    k = np.arange(0, 3_000_000, 997)
    np.testing.assert_array_equal(log_factorial(k), gammaln(k + 1.0))
    # the code the weighted naive Bayes used before it imported this one
    def previous(n):
        bits, x = math.log2(2.865064), math.log2(n)
        while x > 0:
            bits += x; x = math.log2(x) if x > 0 else 0.0
        return bits * math.log(2)
    for n in [1, 2, 3, 4, 5, 16, 17, 100, 65536, 65537, 10**6]:
        assert abs(universal_code_length(n) - previous(n)) < 1e-12


@settings(max_examples=300, deadline=None)
@given(problems())
def test_compiled_khiops_merges_are_the_plain_ones(problem):
    c, pc = problem
    np.testing.assert_array_equal(_khiops_greedy_merge(c, pc), reference_khiops_merge(c, pc))


def test_khiops_log_factorials_are_running_sums_of_logs():
    K = _khiops_lnf_table(10)
    acc = 0.0
    for i in range(1, 128_000):
        acc += math.log(i)
        if i in (1, 2, 10, 1000, 127_999): assert K[i] == acc
    from scipy.special import gammaln
    assert abs(K[127_999] - gammaln(128_000.0)) < 1e-6 * K[127_999]
