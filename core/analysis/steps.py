"""Baseline steps where the design switches inside a time block (docs/estimates.md "A switch inside a block").

The fit's baselines change only where a time block starts. A lesson (or the number of lessons a session injects)
that changes at one moment inside a block is, within that block, a step at that moment: a change of the baseline
there would read as its effect. So, per baseline group (a category, an agent and a time block: m sessions) and per
lesson injected in k of them (0 < k < m), four runs are told: the sessions before its first injection, after its
last, before its first absence, after its last absence. Under "its k injections fall at random among the group's m
sessions" a run of L sessions without it has chance C(m - L, k) / C(m, k), with it C(m - L, k - L) / C(m, k); below
`ALPHA` the baseline steps at the run's edge. The number of lessons a session injects: per group its best single
step (the split of its sessions in log order that takes the most of that number's spread), when its F-test,
Bonferroni over the m - 1 moments, is below `ALPHA` (a perfect split, every session before smaller than every one
after: its chance 2 / C(m, m0)).

Two more kinds, for switches those runs miss. Per (lesson, group) of a block its best single split (`_split_steps`:
a share that steps, 5% before and 90% after, whose strays and gaps break the four runs): k injections among m at
random, c among the first m0, the smaller exact hypergeometric tail times 2 (m - 1) moments, below ALPHA over the
block's varying pairs. Per (lesson, category and agent) its first injection judged against the log from its start to
the end of that block (`_NewLessons`: a new lesson late in the log at a low share), Bonferroni over those first
injections.

Each step is one in the baseline of its category and agent from that moment to the END of the log (a lesson that
switches on in one category persists into the later blocks there, as the lesson does; stopping at the block's end
left it a step's worth of bias), fitted with a flat prior like the other baselines; the fit then decides what is
left of each lesson beside them. They are kept one nonzero per session (`Steps.codes`: the last step of the
session's category and agent at or before it; the same span as the steps themselves, as their differences), so the
baseline indicators stay one row pattern per group.

Found once per log, a time block at a time (what is held is a block's injections), on each lesson's injections
(each (session, lesson) pair once, whatever its weight): `loo`'s claims, the ranking and the joint policy read the
same steps (`joint.with_steps`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from lesson_credit.core.base.memory import scipy_linalg

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Entries = tuple[IntArray, IntArray, FloatArray]  # (session position - lo, arm, weight) per injection

KEPT_MIN = 0.2  # a lesson the steps leave less than this share of its precision is identified only by time
SPLIT_CHUNK = 4096  # injections whose splits `_split_steps` tells at once
ALPHA = 1e-3  # a run this improbable under "its injections at random in the group" puts a baseline step at its edge


@dataclass(frozen=True)
class Steps:
    """The baseline's steps: `key` (sorted, each once) pair * (n + 1) + at, a step in the baseline of the sessions of
    one category and agent (`pair`: category * `agents` + agent) from graded session `at` (its position in log
    order) to the log's end; `n`: the graded sessions."""

    key: IntArray
    n: int
    agents: int

    @property
    def count(self) -> int:
        return len(self.key)

    def codes(self, category: IntArray, agent: IntArray | None, position: IntArray) -> IntArray:
        """Per session (its category, agent and position): its step column, the last step of its category and agent
        at or before it (-1: none)."""
        base = pair_codes(category, agent, self.agents) * (self.n + 1)
        first = np.searchsorted(self.key, base, side="left")
        upto = np.searchsorted(self.key, base + position, side="right")
        out: IntArray = np.where(upto > first, upto - 1, -1).astype(np.int64)
        return out


def pair_codes(category: IntArray, agent: IntArray | None, agents: int) -> IntArray:
    """Each session's category and agent as one code."""
    out: IntArray = category.astype(np.int64) * max(agents, 1)
    return out if agent is None else out + agent


def no_steps(n: int) -> Steps:
    return Steps(np.zeros(0, dtype=np.int64), n, 1)


def find_steps(
    n: int,
    category: IntArray,
    agent: IntArray | None,
    time: IntArray | None,
    entries: Callable[[int, int], Entries],
    span: int,
) -> Steps:
    """The `Steps` of n graded sessions (`category`, `agent`: each one's; `time`: its time block, None: one block, no
    steps) whose injections `entries(lo, hi)` gives `span` sessions at a time (as `joint.sums` reads them)."""
    agents = int(agent.max()) + 1 if agent is not None and len(agent) else 1
    if time is None or n == 0:
        return no_steps(n)
    pair = pair_codes(category, agent, agents)
    found, new = [], _NewLessons(pair, n)
    for lo, hi, row, arm in _blocks(n, time, entries, span):
        codes, group = np.unique(pair[lo:hi], return_inverse=True)
        group = group.astype(np.int64)
        n_groups = len(codes)
        count = np.bincount(row, minlength=hi - lo)
        for g, t in (run_steps(group, row, arm, n_groups), size_steps(group, count, n_groups)):
            found.append(codes[g] * (n + 1) + lo + t)
        new.block(lo, hi, row, arm)
    found.append(new.steps())
    key = np.unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)
    return Steps(key.astype(np.int64), n, agents)


class _NewLessons:
    """A lesson's first injection in its category and agent, told against the whole log up to its block's end: m
    sessions of the pair from the log's start to there, k of them with the lesson, L before its first: a run of
    chance C(m - L, k) / C(m, k), Bonferroni over the candidates (every (lesson, pair) but those first injected at a
    block's start, where the blocks' baselines take a step), below ALPHA a step at its first injection. A new lesson
    late in the log at a low share (20% of its last block's last 50 sessions) has no improbable run in its block
    alone, and a step in the baseline then read as its effect."""

    def __init__(self, pair: IntArray, n: int) -> None:
        self.n = n
        self.pair = pair
        self.sorted = np.sort(pair.astype(np.int64) * (n + 1) + np.arange(n))  # (pair, position)
        self.seen = np.zeros(0, dtype=bool)  # per code arm * (pairs) + pair: already injected
        self.width = int(pair.max()) + 1 if n else 1
        self.key: list[IntArray] = []  # per candidate: its step's key, m, k and L
        self.m: list[IntArray] = []
        self.k: list[IntArray] = []
        self.lead: list[IntArray] = []

    def _before(self, pc: IntArray, at: IntArray) -> IntArray:
        """Sessions of pair `pc` before position `at`."""
        base = pc * (self.n + 1)
        out: IntArray = np.searchsorted(self.sorted, base + at) - np.searchsorted(self.sorted, base)
        return out

    def block(self, lo: int, hi: int, row: IntArray, arm: IntArray) -> None:
        """One block's injections (`row` within it, sorted by (arm, row), each pair once): per (lesson, pair) code
        its injections and its first, tallied by code (no sort of the block's injections), in the order of codes."""
        code = arm * self.width + self.pair[lo + row]
        size = int(code.max()) + 1 if len(code) else 0
        if len(self.seen) < size:
            self.seen = np.concatenate([self.seen, np.zeros(size - len(self.seen), dtype=bool)])
        count = np.bincount(code, minlength=size)
        first = np.full(size, hi - lo, dtype=np.int64)
        np.minimum.at(first, code, row)
        present = count > 0
        fresh = np.flatnonzero(present & ~self.seen[:size])
        self.seen[:size] |= present
        fresh = fresh[first[fresh] > 0]  # (first injected at the block's start: the blocks' baselines step there)
        if not len(fresh):
            return
        pcs, at = fresh % self.width, lo + first[fresh]
        self.key.append(pcs * (self.n + 1) + at)
        self.m.append(self._before(pcs, np.full(len(pcs), hi)))
        self.k.append(count[fresh])
        self.lead.append(self._before(pcs, at))

    def steps(self) -> IntArray:
        """The step keys of the improbable first injections."""
        key, m, k, lead = (
            np.concatenate([np.zeros(0, dtype=np.int64), *c]) for c in (self.key, self.m, self.k, self.lead)
        )
        if not len(key):
            return key
        ok = (lead > 0) & (k <= m - lead)
        left = np.where(ok, m - lead, 1).astype(float)
        chance = _log_choose(left, np.where(ok, k, 0).astype(float)) - _log_choose(m.astype(float), k.astype(float))
        limit = np.log(ALPHA) - np.log(len(key))
        out: IntArray = key[ok & (chance < limit)]
        return out


def _blocks(
    n: int, time: IntArray, entries: Callable[[int, int], Entries], span: int
) -> Iterator[tuple[int, int, IntArray, IntArray]]:
    """Per time block (runs of `time`): its first and end positions and its injections (session within the block,
    arm), each pair once; the log read `span` sessions at a time, a block's pieces held until it is whole."""
    starts = np.concatenate([[0], np.flatnonzero(np.diff(time)) + 1]).tolist()
    bounds = list(zip(starts, [*starts[1:], n], strict=True))
    b, rows, arms = 0, [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
    for lo in range(0, n, span):
        hi = min(lo + span, n)
        row, arm, _ = entries(lo, hi)
        at = np.asarray(row, dtype=np.int64) + lo
        order = np.argsort(at, kind="stable")
        at, arm = at[order], np.asarray(arm, dtype=np.int64)[order]
        while b < len(bounds) and bounds[b][0] < hi:
            lo_b, hi_b = bounds[b]
            a, e = np.searchsorted(at, (max(lo_b, lo), min(hi_b, hi)))
            rows.append(at[a:e] - lo_b)
            arms.append(arm[a:e])
            if hi_b > hi:
                break
            stride = hi_b - lo_b
            major = np.concatenate(arms)
            key = _sorted_by(major, major * stride + np.concatenate(rows))  # (rows rise: `at` is sorted)
            del major  # (not held while the block is told)
            key = key[np.concatenate([[True], key[1:] != key[:-1]])[: len(key)]]  # ([: len]: a block of no lesson)
            yield lo_b, hi_b, key % stride, key // stride
            b, rows, arms = b + 1, [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]


def _sorted_by(major: IntArray, key: IntArray) -> IntArray:
    """`np.sort(key)` of keys major * stride + minor, the minors (as the callers read them) rising within each major
    already: a stable sort of the majors, numpy's radix sort when they fit 16 bits (the keys' timsort was a third of
    the steps' time at 1M); checked, and sorted whole when they do not rise."""
    if len(major) and 0 <= int(major.min()) and int(major.max()) < 1 << 16:
        out: IntArray = key[np.argsort(major.astype(np.uint16), kind="stable")]
        if bool((out[1:] >= out[:-1]).all()):
            return out
    out = np.sort(key, kind="stable")  # (np.unique hashes, 30x slower; timsort's runs: faster)
    return out


def _log_choose(a: npt.NDArray[Any], b: npt.NDArray[Any]) -> FloatArray:
    """log C(a, b) (0 <= b <= a), as gammaln(a + 1) - gammaln(b + 1) - gammaln(a - b + 1). Every caller asks it of
    counts: those read from a table of gammaln at the integers (`_log_factorials`), the very numbers, without a
    gammaln of each (at a million sessions the steps asked it of ~10^8 arguments: 5 s of a 13 s fit)."""
    scipy_linalg("the joint fit")  # (scipy.special's first import starts scipy's OpenBLAS too: room checked first)
    a, b = np.asarray(a), np.asarray(b)
    whole_a, whole_b = a.astype(np.int64, copy=False), b.astype(np.int64, copy=False)
    counts = a.dtype.kind in "iu" and b.dtype.kind in "iu"
    if not (counts or (np.array_equal(whole_a, a) and np.array_equal(whole_b, b))):  # (not counts: as written)
        from scipy.special import gammaln

        result: FloatArray = gammaln(a + 1.0) - gammaln(b + 1.0) - gammaln(a - b + 1.0)
        return result
    top = max((int(v.max()) for v in (whole_a, whole_b, whole_a - whole_b) if v.size), default=0)
    return _choose(whole_a, whole_b, _log_factorials(top))


def _choose(a: IntArray, b: IntArray, table: FloatArray) -> FloatArray:
    """`_log_choose` of counts a, b (and a - b) that `table` covers, as it computes it."""
    out: FloatArray = _log_gamma1(a, table) - _log_gamma1(b, table) - _log_gamma1(a - b, table)
    return out


_FACTORIALS: list[FloatArray] = [np.zeros(0)]  # gammaln(i + 1.0) for i = 0, 1, ...: made once, grown when asked


def _log_factorials(upto: int) -> FloatArray:
    """gammaln(i + 1.0) for i = 0 .. upto at least (a table kept for the process, replaced whole when it grows)."""
    table = _FACTORIALS[0]
    if len(table) <= upto:
        from scipy.special import gammaln

        table = np.asarray(gammaln(np.arange(max(1024, 1 << upto.bit_length()), dtype=np.float64) + 1.0))
        _FACTORIALS[0] = table
    return table


def _log_gamma1(v: IntArray, table: FloatArray) -> FloatArray:
    """gammaln(v + 1.0) of integers v from `table`: +inf at v < 0 (gammaln's poles, where a count cannot be)."""
    if not v.size or int(v.min()) >= 0:
        return table[v]
    out: FloatArray = np.where(v >= 0, table[np.maximum(v, 0)], np.inf)
    return out


def run_steps(group: IntArray, row: IntArray, arm: IntArray, n_groups: int) -> tuple[IntArray, IntArray]:
    """One block (`group`: each session's group code; `row`, `arm`: its injections, each pair once): the steps its
    lessons' improbable runs put in the baseline, as (group, the first session after the step, within the block)."""
    m_all = len(group)
    size = np.bincount(group, minlength=n_groups)
    order = np.lexsort((np.arange(m_all), group))  # sessions by (group, position)
    start = np.concatenate([[0], np.cumsum(size)[:-1]])
    place = np.empty(m_all, dtype=np.int64)
    place[order] = np.arange(m_all) - start[group[order]]
    major = arm * n_groups + group[row]
    both = _sorted_by(major, major * m_all + row)  # by (lesson, group), then in log order (`row` rises in each lesson)
    key, pos = both // m_all, place[both % m_all]
    if not len(key):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    first = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]]))
    end = np.append(first[1:], len(key))
    k = end - first
    g = key[first] % n_groups
    m = size[g]
    index = np.arange(len(key)) - np.repeat(first, k)
    lead = np.add.reduceat((pos == index).astype(np.int64), first)  # injected from the group's start
    trail = np.add.reduceat((pos == np.repeat(m - k, k) + index).astype(np.int64), first)  # to its end
    before, after = pos[first], m - 1 - pos[end - 1]  # without it at the start, at the end
    whole = _log_choose(m.astype(float), k.astype(float))
    varies = k < m
    # Bonferroni over the block's (lesson, group) pairs where the lesson varies: ALPHA is the chance of a false step
    # of each kind in a block, however many lessons it holds (at ALPHA each, a log of 1,000 lessons at random had 263
    # false steps at 100,000 sessions, 329 at 1,000,000, and 640 lessons in 800 sessions lost 395 of 593
    # identifications to the 13 false steps they had)
    limit = np.log(ALPHA) - np.log(max(int(varies.sum()), 1))
    out_g, out_t = [], []
    for run, with_it, edge in ((before, False, before), (after, False, m - after), (lead, True, lead)):
        hit = _improbable(run, with_it, m, k, whole, limit) & varies
        out_g.append(g[hit])
        out_t.append(edge[hit])
    hit = _improbable(trail, True, m, k, whole, limit) & varies
    out_g.append(g[hit])
    out_t.append((m - trail)[hit])
    split_g, split_t = _split_steps(pos, first, end, g, m, varies)
    cg, cp = np.concatenate([*out_g, split_g]), np.concatenate([*out_t, split_t])
    keep = (cp > 0) & (cp < size[cg])
    cg, cp = cg[keep], cp[keep]
    return cg.astype(np.int64), order[start[cg] + cp].astype(np.int64)


def _split_steps(
    pos: IntArray, first: IntArray, end: IntArray, g: IntArray, m: IntArray, varies: npt.NDArray[np.bool_]
) -> tuple[IntArray, IntArray]:
    """Per (lesson, group) (its injections' places `pos[first:end]` among the group's m sessions): the best single
    split of its 0/1 sequence, k injections among m at random with c of them among the first m0 sessions (exact
    hypergeometric tails, either side), Bonferroni over the 2 (m - 1) moments and the block's pairs where the lesson
    varies (four sessions or more): below ALPHA, a step there (group, the first session after it). A share that
    steps (5% of the sessions before, 90% after) has no run the four ends tell: strays break them. The best split
    is just before an injection (the fewest before it) or just after one (the most)."""
    scipy_linalg("the joint fit")  # (as `_log_choose`)
    ok = varies & (m >= 4)
    if not ok.any():
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    out_g, out_t = [], []
    pairs = np.flatnonzero(ok)
    limit = ALPHA / len(pairs)
    at = 0
    while at < len(pairs):  # pairs a chunk at a time: the tails' arrays held for a chunk's injections only
        upto = int(np.searchsorted(first[pairs], first[pairs[at]] + SPLIT_CHUNK, side="right"))
        chunk = pairs[at : max(upto, at + 1)]
        at += len(chunk)
        for q, t in _best_splits(pos, first[chunk], end[chunk], m[chunk], limit):
            out_g.append(int(g[chunk[q]]))
            out_t.append(t)
    return np.array(out_g, dtype=np.int64), np.array(out_t, dtype=np.int64)


def _best_splits(pos: IntArray, first: IntArray, end: IntArray, m: IntArray, limit: float) -> list[tuple[int, int]]:
    """`_split_steps` for some pairs: (which, the first session after its split) of those whose best split's chance
    is below `limit`."""
    k = end - first
    start = np.cumsum(k) - k
    pair = np.repeat(np.arange(len(first)), k)
    index = np.arange(int(k.sum())) - start[pair]  # injections before this one in its pair
    at = pos[first[pair] + index]
    total, drawn = m[pair], k[pair]
    # the tails only where the point itself (a tail holds it) is below the limit: the rest cannot pass
    bar = np.log(limit) - np.log(2.0 * (total - 1))
    low, high = np.ones(len(at)), np.ones(len(at))
    table = _log_factorials(int(m.max()))  # (every count below is at most its group's m)
    for out, got, before, edge in ((low, index, at, at >= 1), (high, index + 1, at + 1, at + 1 <= total - 1)):
        t, d, c, b = (a.astype(np.int64, copy=False) for a in (total, drawn, got, before))
        point = (
            _choose(d, c, table) + _choose(np.maximum(t - d, 0), np.clip(b - c, 0, None), table) - _choose(t, b, table)
        )
        tell = np.flatnonzero(edge & (b - c <= t - d) & (point < bar))
        for j in tell.tolist():
            out[j] = _tail(int(got[j]), int(total[j]), int(drawn[j]), int(before[j]), out is low)
    tail = np.minimum(low, high)
    best = np.minimum.reduceat(tail, start)
    found = []
    for q in np.flatnonzero(2.0 * (m - 1) * best < limit).tolist():
        j = int(start[q]) + int(np.argmin(tail[start[q] : start[q] + k[q]]))
        found.append((q, int(at[j]) if low[j] <= high[j] else int(at[j]) + 1))
    return found


def _tail(got: int, total: int, drawn: int, before: int, lower: bool) -> float:
    """The hypergeometric tail: `drawn` marked among `total`, `before` taken at random, `got` marked or fewer among
    them (`lower`), else `got` or more."""
    span = np.arange(max(0, before - (total - drawn)), got + 1) if lower else np.arange(got, min(drawn, before) + 1)
    i = span.astype(float)
    log = _log_choose(np.full(len(i), float(drawn)), i) + _log_choose(np.full(len(i), float(total - drawn)), before - i)
    log -= float(_log_choose(np.array(float(total)), np.array(float(before))))
    top = float(log.max()) if len(log) else -np.inf
    return float(np.exp(top) * np.exp(log - top).sum()) if len(log) else 0.0


def _improbable(
    run: IntArray, with_it: bool, m: IntArray, k: IntArray, whole: FloatArray, limit: float
) -> npt.NDArray[np.bool_]:
    """A run of `run` sessions without (with) the lesson, k injections among m at random: its chance below ALPHA."""
    r = run.astype(float)
    left = m - r
    chosen = k - r if with_it else k.astype(float)
    ok = (run > 0) & (chosen >= 0) & (chosen <= left)
    chance = _log_choose(np.where(ok, left, 1.0), np.where(ok, chosen, 0.0)) - whole
    out: npt.NDArray[np.bool_] = ok & (chance < limit)
    return out


def size_steps(group: IntArray, count: IntArray, n_groups: int) -> tuple[IntArray, IntArray]:
    """One block (`count`: lessons each session injects): per group its best single step in that number, when its
    F-test, Bonferroni over the group's m - 1 moments, is below ALPHA (a perfect split: 2 / C(m, m0)), as (group,
    the first session after the step, within the block)."""
    scipy_linalg("the joint fit")  # (as `_log_choose`)
    from scipy.special import fdtrc

    m_all = len(group)
    order = np.lexsort((np.arange(m_all), group))
    size = np.bincount(group, minlength=n_groups)
    start = np.concatenate([[0], np.cumsum(size)[:-1]])
    values = count[order].astype(np.float64)
    out_g, out_t = [], []
    for g in np.flatnonzero(size >= 4).tolist():
        v = values[start[g] : start[g] + size[g]]
        m = len(v)
        spread = float(((v - v.mean()) ** 2).sum())
        if spread <= 1e-12:
            continue
        m0 = np.arange(1, m)
        taken = (np.cumsum(v)[:-1] - m0 * v.mean()) ** 2 * m / (m0 * (m - m0))
        j = int(np.argmax(taken))
        rest = spread - float(taken[j])
        if rest > 1e-9 * spread:
            chance = (m - 1) * float(fdtrc(1, m - 2, float(taken[j]) / (rest / (m - 2))))
        else:
            chance = 2.0 * float(np.exp(-_log_choose(np.array(float(m)), np.array(float(j + 1)))))
        if chance < ALPHA:
            out_g.append(g)
            out_t.append(int(order[start[g] + j + 1]))
    return np.array(out_g, dtype=np.int64), np.array(out_t, dtype=np.int64)
