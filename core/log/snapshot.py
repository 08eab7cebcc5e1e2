"""A fold snapshot: the log read so far as read-only arrays (`FoldData`), and its per-block sums.

`core.log.index.LogIndex` hands out snapshots; `core.bandit.fold` folds them. A snapshot never changes
once taken: its arrays are read-only views the index only ever appends past, and who graded
each session (`Graders`) is fixed when the snapshot is taken. Per-arm sums are kept per block
of sessions (`BlockCache`, shared between snapshots of one index), so a new grade or session
only recomputes one block.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import xxhash
from msgspec import Struct
from msgspec import field as struct_field

from lesson_credit.core.base.arrays import latest_per_row
from lesson_credit.core.log.columns import Column
from lesson_credit.core.log.events import GradeEvent
from lesson_credit.core.log.evidence import SourceInputs as SourceInputs
from lesson_credit.core.log.evidence import scored_by_log
from lesson_credit.core.log.steps import StepArrays
from lesson_credit.core.log.store import LogProblem
from lesson_credit.core.model import credit as credit_mod
from lesson_credit.core.model.settings import CreditSettings
from lesson_credit.core.model.sources import NO_SOURCE, OUTCOME, SOURCES, RewardInputs, combine

if TYPE_CHECKING:
    from lesson_credit.core.model.sources import CodeArray

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class Entries(Struct, frozen=True, eq=False):
    """The entry columns a snapshot reads: the index's own (append-only), of which the snapshot sees
    the first `n_entries` entries and the starts of its first `n_sessions` sessions. A slice reads only
    the chunks it lies in; a whole column is gathered (once) when something asks for it whole."""

    arm: Column
    salience: Column
    session: Column
    start: Column  # entries of session i: [start[i], start[i + 1])
    n_sessions: int
    n_entries: int


class FoldData(Struct, frozen=True, dict=True, eq=False):
    """What the fold needs, as arrays. Shared read-only with the UI.

    The per-entry columns (`entry_arm`, `entry_salience`, `entry_session`, `session_start`) are
    gathered when first asked for whole; the fold's per-block sums and one session's entries
    read only their slices (`starts`, `entry_slice`), so a snapshot of a million sessions loaded
    from the cache costs what the blocks that changed cost."""

    arm_ids: tuple[str, ...]
    entries: Entries
    base: FloatArray  # effective base reward per session (the priority's first source with a score); NaN = pending
    grader_source: Graders
    prior_alpha: FloatArray  # NaN where no prior event set the arm's start
    prior_beta: FloatArray
    prior_n: IntArray  # a prior's n plus increment events' (docs/format.md §5.5)
    prior_rewards: IntArray
    added_alpha: FloatArray  # increment events' alpha and beta: added after the fold, never decayed
    added_beta: FloatArray
    # per increments event and arm: (sessions logged before it, arm, alpha, beta), in log order
    added_after: StepArrays = struct_field(default_factory=StepArrays.empty)
    # per prior event and arm: (sessions logged before it, arm, its starting alpha, beta), in log order
    prior_after: StepArrays = struct_field(default_factory=StepArrays.empty)
    counted_sessions: int = 0  # sessions other tools counted (imported files', their logged updates')
    problems: tuple[LogProblem, ...] = ()
    blocks: BlockCache = struct_field(default_factory=lambda: BlockCache())
    sources: SourceScores | None = None  # every source's score
    # entries (positions in the entry columns) of lessons included during their session, not chosen before it
    during: IntArray = struct_field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    evidence: SourceInputs | None = None  # the log's scores the ones in force came from (None: only `base` known)

    @cached_property
    def scored_once(self) -> npt.NDArray[np.bool_]:
        """Per session: whether it has a score in force, or the log gave it a result once (`scored_by_log`: before
        a retraction or an undo took it back, or the settings made it pending; gptme's bandit counted it then,
        and never counts back: docs/format.md §7)."""
        once = ~np.isnan(self.base)
        if self.evidence is not None:
            once |= scored_by_log(self.evidence, self.n_sessions)
        return once

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
    def entry_arm(self) -> npt.NDArray[np.int32]:
        return self.entries.arm.view()[: self.entries.n_entries]

    @cached_property
    def entry_salience(self) -> FloatArray:
        return self.entries.salience.view()[: self.entries.n_entries]

    @cached_property
    def entry_session(self) -> npt.NDArray[np.int32]:
        return self.entries.session.view()[: self.entries.n_entries]

    @cached_property
    def session_start(self) -> IntArray:
        """Entries of session i are [start[i], start[i+1])."""
        return self.entries.start.view()[: self.entries.n_sessions + 1]

    def starts(self, lo: int, hi: int) -> IntArray:
        """session_start[lo : hi + 1]: where sessions lo..hi-1 start, and where the last one ends."""
        if "session_start" in self.__dict__:
            return self.session_start[lo : hi + 1]
        return self.entries.start.span(lo, hi + 1)

    def entry_arms(self, start: int, stop: int) -> tuple[npt.NDArray[np.int32], FloatArray]:
        """(arm, salience) of entries [start, stop): a cached block's session rows are not read."""
        e = self.entries
        return e.arm.span(start, stop), e.salience.span(start, stop)

    def entry_slice(self, start: int, stop: int) -> tuple[npt.NDArray[np.int32], FloatArray, npt.NDArray[np.int32]]:
        """(arm, salience, session row) of entries [start, stop)."""
        return *self.entry_arms(start, stop), self.entries.session.span(start, stop)

    def entry_pieces(self, name: str, size: int = 1 << 20) -> Iterator[npt.NDArray[Any]]:
        """The entry column `name` ("arm", "salience" or "session") in pieces of `size` entries, in order: for a
        reader of every entry once (a hash), which need not gather the column whole (a copy of it: at a million
        sessions ~1 s and 40-80 MB a column); the whole column when it is gathered already."""
        whole = self.__dict__.get(f"entry_{name}")
        if whole is not None:
            yield whole
            return
        column, n = getattr(self.entries, name), self.entries.n_entries
        for lo in range(0, n, size):
            yield column.span(lo, min(lo + size, n))

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


class BlockSums(Struct, frozen=True, eq=False):
    """Per-arm sums over one block of sessions, under the rewards they were computed from."""

    base_key: bytes  # rewards_key of the block's session rewards (NaN = pending)
    n: FloatArray  # graded sessions the arm was injected in
    sum_base: FloatArray
    sum_base_salience: FloatArray
    sum_salience: FloatArray
    last: IntArray  # row of the arm's latest graded session in the block, -1 if none
    rewarded: dict[tuple[str, float], IntArray] = struct_field(default_factory=dict)  # by (strategy, floor)


class BlockCache:
    """Per-arm sums of fixed blocks of BLOCK_ROWS sessions, reused while a block's rewards stay the same.

    Every fold sums the blocks in order, whether they come from here, from the parsed-log
    cache or were just computed, so the numbers never depend on what was cached. A new grade
    only recomputes its session's block; an appended session only the last block."""

    def __init__(self) -> None:
        self.sums: dict[tuple[int, int], BlockSums] = {}  # (block, sessions in it) -> sums
        self.usage: dict[tuple[int, int], BlockUsage] = {}  # (block, sessions in it) -> usage counts
        self.changed = False  # sums or counts computed since the parsed-log cache last saved them
        self.bases: dict[tuple[int, int], FloatArray] = {}  # the rewards sums were last found valid for
        self.earlier: FloatArray | None = None  # the (read-only) rewards of the index's previous snapshot
        # sums read from the parsed-log cache's sums file, not used until the log is known to hold the
        # bytes they were computed from (`claimed`, `settle_claim`)
        self.claim: Claim | None = None

    def claimed(self, claim: Claim) -> None:
        """Sums read from a file, held apart until `settle_claim` says whether the log vouches for them."""
        self.claim = claim

    def settle_claim(self, vouched: bool) -> None:
        """Use the claimed sums (the log holds the bytes they came from), or forget them."""
        claim, self.claim = self.claim, None
        if claim is not None and vouched:
            for key, sums in claim.sums.items():
                self.sums.setdefault(key, sums)
            for key, usage in claim.usage.items():
                self.usage.setdefault(key, usage)

    def keep(self, key: tuple[int, int], sums: BlockSums, rewards: FloatArray | None = None) -> None:
        """Keep a block's sums (dropping those of the block at another length: it only grows), and the
        (read-only) rewards they are of, for `core.log.blockpatch`."""
        for old in [k for k in self.sums if k[0] == key[0] and k != key]:
            del self.sums[old]
            self.bases.pop(old, None)
        self.sums[key] = sums
        self.bases.pop(key, None)
        if rewards is not None:
            self.bases[key] = rewards
        self.changed = True

    def keep_usage(self, key: tuple[int, int], usage: BlockUsage) -> None:
        for old in [k for k in self.usage if k[0] == key[0] and k != key]:
            del self.usage[old]
        self.usage[key] = usage
        self.changed = True

    def shorter(self, table: dict[tuple[int, int], Any], block: int, rows: int) -> tuple[int, Any] | None:
        """The entry of `table` for the block at the most rows under `rows` (to extend), if any."""
        known = [k[1] for k in table if k[0] == block and k[1] < rows]
        return None if not known else (max(known), table[(block, max(known))])


def _grown(values: npt.NDArray[Any], n_arms: int, fill: float = 0) -> npt.NDArray[Any]:
    out = np.full(n_arms, fill, dtype=values.dtype)
    out[: len(values)] = values
    return out


class Claim(Struct, frozen=True, eq=False):
    """Block sums and usage counts as saved by some process, computed from the store's content up to
    `end`, which `vouch` identifies (a prefix digest of the file, a database position's identity)."""

    end: int
    vouch: str
    sums: dict[tuple[int, int], BlockSums]
    usage: dict[tuple[int, int], BlockUsage]


class BlockUsage(Struct, frozen=True, eq=False):
    """Per arm, over one block of sessions, graded or not: what does not depend on rewards."""

    injected: IntArray  # entries of the arm (sessions it was injected in)
    salient: IntArray  # of those, entries with salience > 0
    salience: FloatArray  # sum of salience


def rewards_key(base: FloatArray) -> bytes:
    """What identifies a block's rewards: byte-equal rewards are the same rewards (a different NaN
    payload or -0.0 only recomputes). A 128-bit hash of the bytes, so the cache need not keep them."""
    return xxhash.xxh3_128_digest(np.ascontiguousarray(base, dtype=np.float64).tobytes())


class _Block(Struct, frozen=True):
    index: int
    lo: int  # rows [lo, hi)
    hi: int
    sums: BlockSums
    base: FloatArray  # the rewards the sums are of: base[lo:hi]

    def rewarded(self, data: FoldData, settings: CreditSettings) -> IntArray:
        key = (settings.strategy, settings.floor)
        counts = self.sums.rewarded.get(key)
        if counts is None:
            ends = data.starts(self.lo, self.hi)
            counts = _rewarded(data, self.base, ends, settings.strategy, settings.floor)
            self.sums.rewarded[key] = counts
            data.blocks.changed = True
        return counts


def _rewarded(data: FoldData, base: FloatArray, ends: IntArray, strategy: str, floor: float) -> IntArray:
    """Graded sessions whose credited reward exceeded 0.5, per arm, over the sessions `ends` bound."""
    arms_all, salience = data.entry_arms(int(ends[0]), int(ends[-1]))
    graded = ~np.isnan(base)
    sizes = np.diff(ends)
    rows = np.repeat(graded, sizes)
    w = credit_mod.weight(salience[rows], floor)
    credited = credit_mod.credited_reward(np.repeat(base, sizes)[rows], w, strategy)
    arms = arms_all[rows]
    return np.bincount(arms[credited > 0.5], minlength=data.n_arms).astype(np.int64)


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
        rewards = base[lo:hi]
        if sums is None or sums.base_key != rewards_key(rewards):
            sums = (
                _extended(data, base, index, lo, hi)
                or _patched(data, rewards, key, lo)
                or _block_sums(data, base, lo, hi)
            )
            if keep:
                data.blocks.keep(key, sums, rewards if not rewards.flags.writeable else None)
        elif keep and not rewards.flags.writeable:
            data.blocks.bases[key] = rewards
        out.append(_Block(index, lo, hi, sums, rewards))
    return out


def _patched(data: FoldData, rewards: FloatArray, key: tuple[int, int], lo: int) -> BlockSums | None:
    """The block's sums from those kept for rewards that differ in a few sessions (a regrade), when
    those rewards are known and still the ones the kept sums are of (core/log/blockpatch.py)."""
    from lesson_credit.core.log import blockpatch

    sums, lo_hi = data.blocks.sums.get(key), slice(lo, lo + len(rewards))
    earlier = data.blocks.earlier  # the rewards of the snapshot taken before this one, if any
    tried = (data.blocks.bases.get(key), None if earlier is None or len(earlier) < lo_hi.stop else earlier[lo_hi])
    old = next((b for b in tried if b is not None and sums is not None and sums.base_key == rewards_key(b)), None)
    if sums is None or old is None or len(old) != len(rewards):
        return None
    rows = blockpatch.changed_rows(old, rewards)
    if not len(rows) or len(rows) > blockpatch.PATCH_ROWS:
        return None
    fields = blockpatch.patched(data, rewards, lo, lo + len(rewards), sums, rows)
    return BlockSums(base_key=rewards_key(rewards), **fields)


def _extended(data: FoldData, base: FloatArray, index: int, lo: int, hi: int) -> BlockSums | None:
    """The block's sums from those of its first rows (sessions were appended to it since), when their
    rewards are unchanged: the new rows' entries added one by one, in order, as the block's own
    bincount adds them (so the sums are the same, bit for bit, as summing the whole block)."""
    shorter = data.blocks.shorter(data.blocks.sums, index, hi - lo)
    if shorter is None or shorter[1].base_key != rewards_key(base[lo : lo + shorter[0]]):
        return None
    return _summed(data, base, lo, lo + shorter[0], hi, shorter[1])


def block_ranges(n_sessions: int) -> list[tuple[int, int, int]]:
    """(block number, first row, end row) of each block of BLOCK_ROWS sessions."""
    return [(index, lo, min(lo + BLOCK_ROWS, n_sessions)) for index, lo in enumerate(range(0, n_sessions, BLOCK_ROWS))]


def _block_sums(data: FoldData, base: FloatArray, lo: int, hi: int) -> BlockSums:
    return _summed(data, base, lo, lo, hi, None)


def _summed(data: FoldData, base: FloatArray, lo: int, start: int, hi: int, old: BlockSums | None) -> BlockSums:
    """The sums of the block of rows [lo, hi): `old`'s (those of rows [lo, start)) with the entries of
    rows [start, hi) added, or (`old` None, `start` lo) a bincount of the block's entries."""
    ends = data.starts(start, hi)
    arms, salience, sessions = data.entry_slice(int(ends[0]), int(ends[-1]))
    block_base = np.array(base[start:hi], dtype=np.float64)
    graded_rows = ~np.isnan(block_base)
    sizes = np.diff(ends)
    entry_base = np.repeat(np.where(graded_rows, block_base, 0.0), sizes)  # 0 for pending
    graded = np.repeat(graded_rows, sizes)
    n_arms = data.n_arms
    weights = {
        "n": graded.astype(np.float64),
        "sum_base": entry_base,
        "sum_base_salience": entry_base * salience,
        "sum_salience": salience * graded,
    }
    if old is None:
        out = {name: sum_by_arm(arms, w, n_arms) for name, w in weights.items()}
        last = np.full(n_arms, -1, dtype=np.int64)
    else:
        out = {name: _grown(getattr(old, name), n_arms) for name in weights}
        for name, w in weights.items():
            np.add.at(out[name], arms, w)
        last = _grown(old.last, n_arms, -1)
    np.maximum.at(last, arms[graded], sessions[graded].astype(np.int64))
    rewarded = {}
    for (strategy, floor), counts in ({} if old is None else old.rewarded).items():
        rewarded[(strategy, floor)] = _grown(counts, n_arms) + _rewarded(data, block_base, ends, strategy, floor)
    return BlockSums(base_key=rewards_key(base[lo:hi]), **out, last=last, rewarded=rewarded)


def sum_by_arm(arms: npt.NDArray[np.int32], weights: npt.NDArray[Any], n_arms: int) -> FloatArray:
    return np.bincount(arms, weights=weights, minlength=n_arms).astype(np.float64, copy=False)


class ArmStats(Struct, frozen=True):
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

    Holds what it needs as of the snapshot: the index's recorded graders and grade events
    (append-only sequences, read lazily: one row's grader reads one item), the published flags as
    a read-only view, and which grade events are in force. Rows and positions below what the
    snapshot saw never change, so neither does this."""

    def __init__(
        self,
        recorded: Sequence[str | None],
        published: npt.NDArray[np.bool_],
        applied: IntArray,
        applied_rows: IntArray,
        grades: Sequence[tuple[int, GradeEvent]],
        scores: SourceScores | None = None,
    ) -> None:
        self._recorded = recorded
        self._published = published
        self._applied = applied  # positions in the grade events of the grades in force
        self._applied_rows = applied_rows  # and the row each one grades
        self._grades = grades
        self._scores = scores

    def _external(self, row: int) -> str | None:
        scores = self._scores
        if scores is None or not len(scores.external_rows):
            return None
        at = int(np.searchsorted(scores.external_rows, row))
        if at < len(scores.external_rows) and scores.external_rows[at] == row:
            return f"record:{SOURCES[int(scores.chosen[row])]}"
        return None

    def event_in_force(self, row: int) -> GradeEvent | None:
        """The grade event whose score is in force for the session at `row` (None: its record's own score,
        a score from outside the log, or none)."""
        hit = np.flatnonzero(self._applied_rows == row)
        return self._grades[int(self._applied[hit[0]])][1] if len(hit) else None

    def of(self, row: int, base: float) -> str | None:
        if math.isnan(base):
            return None
        event = self.event_in_force(row)
        if event is not None:
            return event.grader
        external = self._external(row)
        if external is not None:
            return external
        recorded = self._recorded[row]
        return recorded or ("imported" if self._published[row] else "heuristic")

    def every(self, base: FloatArray) -> tuple[str | None, ...]:
        n = len(self._published)
        out: list[str | None] = [
            None if b != b else (g or ("imported" if p else "heuristic"))
            for b, g, p in zip(base.tolist(), self._recorded[:n], self._published.tolist(), strict=True)
        ]
        grades = self._grades
        for position, row in zip(self._applied.tolist(), self._applied_rows.tolist(), strict=True):
            grade = grades[position][1]
            out[row] = None if grade.base_reward is None else grade.grader  # a retraction: pending
        if self._scores is not None:
            for row in self._scores.external_rows.tolist():
                out[row] = self._external(row)
        return tuple(out)


class SourceScores(Struct, frozen=True, eq=False):
    """Every reward source's score of every session (docs/records.md), and which one is in force.

    `values[source]` is that source's score per row: its latest event in the log (a retraction
    withdraws it), else the score from outside the log (a gptme-sessions record), if any. `external_rows`
    are the rows whose score in force came from outside the log."""

    values: Mapping[str, FloatArray]  # built on first use (core/log/scoring.py)
    chosen: CodeArray  # code of the source in force per row (core.model.sources), NO_SOURCE: pending
    external_rows: IntArray
    priority: tuple[str, ...]

    def in_force(self, priority: tuple[str, ...]) -> FloatArray:
        """The scores in force under another priority (a what-if): NaN where no source in it has one."""
        base, _ = combine(self.values, priority, len(self.chosen))
        return base


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
        np.copyto(value, log.own, where=log.own_source == code)
        if source == OUTCOME and len(log.outcome_rows):
            value[log.outcome_rows] = log.outcome_values
        positions = known[log.grade_source[known] == code]
        if len(positions):
            graded, last = latest_per_row(log.grade_rows[positions], positions)
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
