"""A fold snapshot: the log read so far as read-only arrays (`FoldData`), and its per-block sums.

`core.log.index.LogIndex` hands out snapshots; `core.bandit.fold` folds them. A snapshot never changes
once taken: its arrays are read-only views the index only ever appends past, and who graded
each session (`Graders`) is fixed when the snapshot is taken. Per-arm sums are kept per block
of sessions (`BlockCache`, shared between snapshots of one index), so a new grade or session
only recomputes one block.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from lesson_credit.core.log.columns import Encoded
from lesson_credit.core.log.events import GradeEvent
from lesson_credit.core.log.store import LogProblem
from lesson_credit.core.model import credit as credit_mod
from lesson_credit.core.model.settings import CreditSettings
from lesson_credit.core.model.sources import NO_SOURCE, OUTCOME, SOURCES, CodeArray, RewardInputs, combine

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class FoldData:
    """What the fold needs, as arrays. Shared read-only with the UI."""

    arm_ids: tuple[str, ...]
    entry_arm: npt.NDArray[np.int32]
    entry_salience: FloatArray
    entry_session: npt.NDArray[np.int32]
    session_start: IntArray  # entries of session i are [start[i], start[i+1])
    base: FloatArray  # effective base reward per session (the priority's first source with a score); NaN = pending
    grader_source: Graders = field(repr=False, compare=False)
    prior_alpha: FloatArray  # NaN where no prior event set the arm's start
    prior_beta: FloatArray
    prior_n: IntArray
    prior_rewards: IntArray
    problems: tuple[LogProblem, ...] = ()
    blocks: BlockCache = field(default_factory=lambda: BlockCache(), repr=False, compare=False)
    sources: SourceScores | None = field(default=None, repr=False, compare=False)  # every source's score

    def scores(self) -> SourceScores:
        """Every source's score per session (a snapshot built without them: the base as one source)."""
        if self.sources is not None:
            return self.sources
        chosen = np.where(np.isnan(self.base), NO_SOURCE, 0).astype(np.int8)
        empty = {source: np.full(self.n_sessions, np.nan) for source in SOURCES[1:]}
        return SourceScores({SOURCES[0]: self.base, **empty}, chosen, np.zeros(0, dtype=np.int64), SOURCES)

    @property
    def n_arms(self) -> int:
        return len(self.arm_ids)

    @property
    def n_sessions(self) -> int:
        return len(self.base)

    @cached_property
    def graders(self) -> tuple[str | None, ...]:
        """Who gave each session its grade in force (None: pending). Built on first use."""
        return self.grader_source.every(self.base)

    def grader(self, row: int) -> str | None:
        """Who gave one session its grade in force (None: pending), without building them all."""
        if self.__dict__.get("graders") is not None:
            return self.graders[row]
        return self.grader_source.of(row, float(self.base[row]))

    @cached_property
    def own_blocks(self) -> list[_Block]:
        """The blocks' sums under this snapshot's grades, kept in the shared block cache."""
        return _blocks(self, self.base, keep=True)

    @cached_property
    def stats(self) -> ArmStats:
        """Per-arm sums under this snapshot's grades (computed once, then shared by what-ifs)."""
        return arm_stats(self, self.base)


BLOCK_ROWS = 1 << 16  # sessions per block of the per-arm sums


@dataclass(frozen=True, eq=False)
class BlockSums:
    """Per-arm sums over one block of sessions, under the rewards they were computed from."""

    base: FloatArray  # the block's session rewards (NaN = pending)
    n: FloatArray  # graded sessions the arm was injected in
    sum_base: FloatArray
    sum_base_salience: FloatArray
    sum_salience: FloatArray
    last: IntArray  # row of the arm's latest graded session in the block, -1 if none
    rewarded: dict[tuple[str, float], IntArray] = field(default_factory=dict)  # by (strategy, floor)


class BlockCache:
    """Per-arm sums of fixed blocks of BLOCK_ROWS sessions, reused while a block's rewards stay the same.

    Every fold sums the blocks in order, whether they come from here, from the parsed-log
    cache or were just computed, so the numbers never depend on what was cached. A new grade
    only recomputes its session's block; an appended session only the last block."""

    def __init__(self) -> None:
        self.sums: dict[tuple[int, int], BlockSums] = {}  # (block, sessions in it) -> sums
        self.usage: dict[tuple[int, int], BlockUsage] = {}  # (block, sessions in it) -> usage counts


@dataclass(frozen=True, eq=False)
class BlockUsage:
    """Per arm, over one block of sessions, graded or not: what does not depend on rewards."""

    injected: IntArray  # entries of the arm (sessions it was injected in)
    salient: IntArray  # of those, entries with salience > 0
    salience: FloatArray  # sum of salience


def lesson_usage(data: FoldData) -> BlockUsage:
    """Usage counts of every arm over the whole log, added up block by block (cached per block:
    entries never change once read)."""
    injected = np.zeros(data.n_arms, dtype=np.int64)
    salient = np.zeros(data.n_arms, dtype=np.int64)
    salience = np.zeros(data.n_arms)
    for index, lo, hi in block_ranges(data.n_sessions):
        usage = data.blocks.usage.get((index, hi - lo))
        if usage is None:
            start, stop = int(data.session_start[lo]), int(data.session_start[hi])
            arms, values = data.entry_arm[start:stop], data.entry_salience[start:stop]
            usage = data.blocks.usage[(index, hi - lo)] = BlockUsage(
                injected=np.bincount(arms, minlength=data.n_arms).astype(np.int64),
                salient=np.bincount(arms[values > 0], minlength=data.n_arms).astype(np.int64),
                salience=sum_by_arm(arms, values, data.n_arms),
            )
        k = len(usage.injected)
        injected[:k] += usage.injected
        salient[:k] += usage.salient
        salience[:k] += usage.salience
    return BlockUsage(injected, salient, salience)


@dataclass(frozen=True)
class _Block:
    index: int
    lo: int  # rows [lo, hi)
    hi: int
    sums: BlockSums

    def rewarded(self, data: FoldData, settings: CreditSettings) -> IntArray:
        key = (settings.strategy, settings.floor)
        counts = self.sums.rewarded.get(key)
        if counts is None:
            start, stop = int(data.session_start[self.lo]), int(data.session_start[self.hi])
            graded = ~np.isnan(self.sums.base)
            sizes = np.diff(data.session_start[self.lo : self.hi + 1])
            rows = np.repeat(graded, sizes)
            w = credit_mod.weight(data.entry_salience[start:stop][rows], settings.floor)
            credited = credit_mod.credited_reward(np.repeat(self.sums.base, sizes)[rows], w, settings.strategy)
            arms = data.entry_arm[start:stop][rows]
            counts = np.bincount(arms[credited > 0.5], minlength=data.n_arms).astype(np.int64)
            self.sums.rewarded[key] = counts
        return counts


def blocks_of(data: FoldData, base: FloatArray) -> list[_Block]:
    """The blocks of sessions with their per-arm sums under `base`: cached where a block's
    rewards are unchanged, else computed (and kept when `base` is the snapshot's own)."""
    if base is data.base:
        return data.own_blocks
    return _blocks(data, base, keep=False)


def _blocks(data: FoldData, base: FloatArray, keep: bool) -> list[_Block]:
    out = []
    for index, lo, hi in block_ranges(data.n_sessions):
        key = (index, hi - lo)
        sums = data.blocks.sums.get(key)
        # byte-equal rewards are the same rewards (a different NaN payload or -0.0 only recomputes)
        if sums is None or sums.base.tobytes() != base[lo:hi].tobytes():
            sums = _block_sums(data, base, lo, hi)
            if keep:
                data.blocks.sums[key] = sums
        out.append(_Block(index, lo, hi, sums))
    return out


def block_ranges(n_sessions: int) -> list[tuple[int, int, int]]:
    """(block number, first row, end row) of each block of BLOCK_ROWS sessions."""
    return [(index, lo, min(lo + BLOCK_ROWS, n_sessions)) for index, lo in enumerate(range(0, n_sessions, BLOCK_ROWS))]


def _block_sums(data: FoldData, base: FloatArray, lo: int, hi: int) -> BlockSums:
    start, stop = int(data.session_start[lo]), int(data.session_start[hi])
    arms, salience = data.entry_arm[start:stop], data.entry_salience[start:stop]
    block_base = np.array(base[lo:hi], dtype=np.float64)
    graded_rows = ~np.isnan(block_base)
    sizes = np.diff(data.session_start[lo : hi + 1])
    entry_base = np.repeat(np.where(graded_rows, block_base, 0.0), sizes)  # 0 for pending
    graded = np.repeat(graded_rows, sizes)
    n_arms = data.n_arms
    last = np.full(n_arms, -1, dtype=np.int64)
    np.maximum.at(last, arms[graded], data.entry_session[start:stop][graded].astype(np.int64))
    block_base.flags.writeable = False
    return BlockSums(
        base=block_base,
        n=sum_by_arm(arms, graded, n_arms),
        sum_base=sum_by_arm(arms, entry_base, n_arms),
        sum_base_salience=sum_by_arm(arms, entry_base * salience, n_arms),
        sum_salience=sum_by_arm(arms, salience * graded, n_arms),
        last=last,
    )


def sum_by_arm(arms: npt.NDArray[np.int32], weights: npt.NDArray[Any], n_arms: int) -> FloatArray:
    return np.bincount(arms, weights=weights, minlength=n_arms).astype(np.float64, copy=False)


@dataclass(frozen=True)
class ArmStats:
    """Per-arm sums over graded sessions. Without decay every strategy's posterior is a linear
    function of these, so a what-if over strategy or floor costs O(arms), not O(entries)."""

    n: FloatArray  # graded sessions the arm was injected in
    sum_base: FloatArray  # sum of base rewards
    sum_base_salience: FloatArray  # sum of base * salience
    sum_salience: FloatArray  # sum of salience
    graded_sessions: int


def arm_stats(data: FoldData, base: FloatArray) -> ArmStats:
    """The per-arm sums: each block's, added up in block order (the same order every time)."""
    totals = np.zeros((4, data.n_arms))
    for block in blocks_of(data, base):
        sums = block.sums
        k = len(sums.n)
        totals[0, :k] += sums.n
        totals[1, :k] += sums.sum_base
        totals[2, :k] += sums.sum_base_salience
        totals[3, :k] += sums.sum_salience
    return ArmStats(
        n=totals[0],
        sum_base=totals[1],
        sum_base_salience=totals[2],
        sum_salience=totals[3],
        graded_sessions=int(np.count_nonzero(~np.isnan(base))),
    )


def salience_in(data: FoldData, rows: IntArray, arms: IntArray) -> FloatArray:
    """For each (session row, arm) pair: the salience of the arm's first entry in that session
    (NaN where the session has none), for many pairs at once."""
    out = np.full(len(rows), np.nan)
    if not len(rows):
        return out
    starts = data.session_start[rows]
    sizes = data.session_start[rows + 1] - starts
    owner = np.repeat(np.arange(len(rows)), sizes)
    entry = np.repeat(starts - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()))
    found = np.flatnonzero(data.entry_arm[entry] == np.asarray(arms)[owner])
    pairs, first = np.unique(owner[found], return_index=True)
    out[pairs] = data.entry_salience[entry[found[first]]]
    return out


class Graders:
    """Who gave each session of a snapshot its score in force: the grader of the grade event in
    force, else the record's own grader (or 'imported' / 'heuristic' when it names none), or
    `record:SOURCE` for a score from outside the log (a gptme-sessions record).

    Holds what it needs as of the snapshot, not the index: the recorded graders and the grade
    events (append-only sequences, or the cache's still-encoded bytes of them, decoded once for
    whichever of the index and this asks first), the published flags as a read-only view, and
    which grade events are in force. Rows and positions below what the snapshot saw never change,
    so neither does this."""

    def __init__(
        self,
        recorded: Sequence[str | None] | Encoded,
        published: npt.NDArray[np.bool_],
        applied: IntArray,
        applied_rows: IntArray,
        grades: Sequence[tuple[int, GradeEvent]] | Encoded,
        decode_grades: Callable[[Any], Sequence[tuple[int, GradeEvent]]],
        scores: SourceScores | None = None,
    ) -> None:
        self._recorded = recorded
        self._published = published
        self._applied = applied  # positions in the grade events of the grades in force
        self._applied_rows = applied_rows  # and the row each one grades
        self._grades = grades
        self._decode_grades = decode_grades
        self._scores = scores

    def _external(self, row: int) -> str | None:
        scores = self._scores
        if scores is None or not len(scores.external_rows):
            return None
        at = int(np.searchsorted(scores.external_rows, row))
        if at < len(scores.external_rows) and scores.external_rows[at] == row:
            return f"record:{SOURCES[int(scores.chosen[row])]}"
        return None

    def _recorded_graders(self) -> Sequence[str | None]:
        if isinstance(self._recorded, Encoded):
            self._recorded = self._recorded.decode(tuple)
        return cast(Sequence[str | None], self._recorded)

    def _grade_events(self) -> Sequence[tuple[int, GradeEvent]]:
        if isinstance(self._grades, Encoded):
            self._grades = self._grades.decode(self._decode_grades)
        return cast(Sequence[tuple[int, GradeEvent]], self._grades)

    def of(self, row: int, base: float) -> str | None:
        if math.isnan(base):
            return None
        hit = np.flatnonzero(self._applied_rows == row)
        if len(hit):
            return self._grade_events()[int(self._applied[hit[0]])][1].grader
        external = self._external(row)
        if external is not None:
            return external
        recorded = self._recorded_graders()[row]
        return recorded or ("imported" if self._published[row] else "heuristic")

    def every(self, base: FloatArray) -> tuple[str | None, ...]:
        n = len(self._published)
        out: list[str | None] = [
            None if b != b else (g or ("imported" if p else "heuristic"))
            for b, g, p in zip(base.tolist(), self._recorded_graders()[:n], self._published.tolist(), strict=True)
        ]
        grades = self._grade_events()
        for position, row in zip(self._applied.tolist(), self._applied_rows.tolist(), strict=True):
            grade = grades[position][1]
            out[row] = None if grade.base_reward is None else grade.grader  # a retraction: pending
        if self._scores is not None:
            for row in self._scores.external_rows.tolist():
                out[row] = self._external(row)
        return tuple(out)


@dataclass(frozen=True, eq=False)
class SourceScores:
    """Every reward source's score of every session (SPEC 11), and which one is in force.

    `values[source]` is that source's score per row: its latest event in the log (a retraction
    withdraws it), else the score from outside the log (a gptme-sessions record), if any. `external_rows`
    are the rows whose score in force came from outside the log."""

    values: dict[str, FloatArray]
    chosen: CodeArray  # code of the source in force per row (core.model.sources), NO_SOURCE: pending
    external_rows: IntArray
    priority: tuple[str, ...]

    def in_force(self, priority: tuple[str, ...]) -> FloatArray:
        """The scores in force under another priority (a what-if): NaN where no source in it has one."""
        base, _ = combine(self.values, priority, len(self.chosen))
        return base


@dataclass(frozen=True)
class SourceInputs:
    """The log's evidence on each session's sources, as columns (see `source_scores`)."""

    own: FloatArray  # the record's own score (NaN: pending or a string outcome)
    own_source: CodeArray  # its source
    outcome_rows: IntArray  # records with a string outcome that maps to a number
    outcome_values: FloatArray
    grade_rows: IntArray  # the row each grade event names (-1: unknown session)
    grade_base: FloatArray  # NaN: a retraction
    grade_source: CodeArray


def source_scores(log: SourceInputs, inputs: RewardInputs) -> tuple[FloatArray, SourceScores, IntArray, IntArray]:
    """(each session's score in force, every source's scores, the positions of the grade events in
    force and the rows they grade). Per source the latest event in file order wins; a score from
    outside the log fills a source only where the log gives that source no score (none, or withdrawn)."""
    n = len(log.own)
    values: dict[str, FloatArray] = {}
    latest: dict[int, tuple[IntArray, IntArray]] = {}  # source code -> (rows, positions of their latest event)
    filled: dict[int, IntArray] = {}  # source code -> rows scored from outside the log
    known = np.flatnonzero(log.grade_rows >= 0)
    for code, source in enumerate(SOURCES):
        value = np.full(n, np.nan)
        mine = log.own_source == code
        value[mine] = log.own[mine]
        if source == OUTCOME and len(log.outcome_rows):
            value[log.outcome_rows] = log.outcome_values
        positions = known[log.grade_source[known] == code]
        if len(positions):
            reversed_rows = log.grade_rows[positions][::-1]
            graded, first_in_reversed = np.unique(reversed_rows, return_index=True)
            last = positions[len(positions) - 1 - first_in_reversed]
            value[graded] = log.grade_base[last]  # NaN: a retraction withdraws the log's score
            latest[code] = (graded, last)
        outside = inputs.external.get(source)
        if outside is not None and len(outside):
            m = min(n, len(outside))
            fill = np.flatnonzero(np.isnan(value[:m]) & ~np.isnan(outside[:m]))
            value[fill] = outside[fill]
            filled[code] = fill
        values[source] = value
    base, chosen = combine(values, inputs.priority, n)
    applied_rows: list[IntArray] = []
    applied: list[IntArray] = []
    for code, (rows, positions) in latest.items():
        keep = (chosen[rows] == code) & ~np.isnan(log.grade_base[positions])
        applied_rows.append(rows[keep])
        applied.append(positions[keep])
    external = [rows[chosen[rows] == code] for code, rows in filled.items()]
    empty = np.zeros(0, dtype=np.int64)
    external_rows = np.sort(np.concatenate(external)) if external else empty
    base.flags.writeable = False
    scores = SourceScores(values, chosen, external_rows, inputs.priority)
    return (
        base,
        scores,
        np.concatenate(applied) if applied else empty,
        np.concatenate(applied_rows) if applied_rows else empty,
    )
