"""Reading the event log incrementally: what was appended since the last read, into a `LogIndex`.

`LogReader` owns the index of the log read so far, the parsed-log cache and the current
snapshot, and answers the lookups by session the read models need (row, event, line, grades),
so nothing above it reaches into the index. Appends go through the store it reads
(`reader.log`: the JSONL `EventLog` or another `EventStore`, core/log/eventstore.py); a later read
picks them up like any other writer's.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from msgspec import Struct

from lesson_credit.core import views
from lesson_credit.core.bandit.fold import Posterior, fold
from lesson_credit.core.base.gc_pause import gc_paused
from lesson_credit.core.log import halves
from lesson_credit.core.log.cache import MIN_NEW_BYTES, LogCache
from lesson_credit.core.log.columns import Objects
from lesson_credit.core.log.events import GradeEvent, SelectionEvent, SessionEvent, decode_raw
from lesson_credit.core.log.eventstore import EventStore
from lesson_credit.core.log.graded import GradedRows
from lesson_credit.core.log.index import LogIndex
from lesson_credit.core.log.logcheck import PrefixChecker, PrefixDigest
from lesson_credit.core.log.snapshot import FoldData
from lesson_credit.core.log.store import EventLog, LogProblem, ReadResult
from lesson_credit.core.log.stores import is_local, log_cache, prefix_check, session_agents
from lesson_credit.core.log.unchosen import unchosen_by_row
from lesson_credit.core.log.unrecorded import recorded_unselected, selected_never_recorded
from lesson_credit.core.log.usage import lesson_usage
from lesson_credit.core.log.vocab import decode_lines
from lesson_credit.core.model.settings import CreditSettings
from lesson_credit.core.model.sources import DEFAULT_INPUTS, RewardInputs
from lesson_credit.core.views import GradeRecord


class ReadProgress(Struct, frozen=True):
    """How far a read under way has come (`LogReader.progress`): what a dashboard shows while a big
    log is read (25 s for a million sessions the first time)."""

    stage: str  # "reading" the events, then "caching" (writing the parsed-log cache after a big read)
    done: int  # of `total`, counted from where the read began
    total: int
    of_bytes: bool  # bytes of a log file; else positions of a database
    since: float  # time.monotonic() when the refresh began

    def describe(self) -> str:
        """The step as words: "reading the log: 38% of 1.4 GB", "reading the database: 38%", "saving
        the parsed-log cache" (the share floored: 100% only once all is read). A database's share is
        of positions, not events: a transaction rolled back uses positions up, so counts would lie."""
        if self.stage == "caching":
            return "saving the parsed-log cache"
        share = 100 * self.done // self.total if self.total else 100
        if not self.of_bytes:
            return f"reading the database: {share}%"
        return f"reading the log: {share}% of {size_text(self.total)}"


def size_text(size: int) -> str:
    """1.4 GB, 340 MB, 12 KB, 900 bytes (powers of 1,024; one decimal below 10 of a unit)."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            value = size / scale
            return f"{value:.1f} {unit}" if value < 9.95 else f"{value:.0f} {unit}"
    return f"{size} bytes"


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters
_HEAP_KEPT = (1 << 30, 256 << 20)  # during a big read: free memory kept up to 1 GB; blocks up to 256 MB from it
# after it: where glibc's own rule puts them after a big read (mmap: the largest mapped block freed, up to
# 32 MB on 64 bits; trim: twice that; a big read frees growing columns of every size up to that); then trimmed
_HEAP_AFTER = (64 << 20, 32 << 20)
_heap_lock = threading.Lock()
_heap_depth = 0
_heap_settled = False  # `settle_heap` has run in this process


@contextlib.contextmanager
def heap_kept() -> Iterator[None]:
    """A big read keeps the memory it frees for its next allocations (glibc's malloc; elsewhere nothing
    changes). Without it each 32 MB buffer of the log and each grown column is a fresh mapping of the
    kernel's, every page of it faulted in and zeroed: measured at a million sessions, 6.7 s of system
    time of a 26 s read, 1.9 s with it. Afterwards the thresholds are where glibc's own rule would have
    put them (setting them ends that rule) and what is free is returned."""
    global _heap_depth, _heap_settled
    libc = _libc()
    with _heap_lock:
        _heap_depth += 1
        if libc is not None and _heap_depth == 1:
            libc.mallopt(_M_TRIM_THRESHOLD, _HEAP_KEPT[0])
            libc.mallopt(_M_MMAP_THRESHOLD, _HEAP_KEPT[1])
    try:
        yield
    finally:
        with _heap_lock:
            _heap_depth -= 1
            if _heap_depth == 0:
                _heap_settled = True  # where settle_heap would put them
                if libc is not None:
                    libc.mallopt(_M_TRIM_THRESHOLD, _HEAP_AFTER[0])
                    libc.mallopt(_M_MMAP_THRESHOLD, _HEAP_AFTER[1])
                    libc.malloc_trim(0)


def settle_heap() -> None:
    """Put glibc's thresholds where its own rule puts them after a big read (`_HEAP_AFTER`) before the
    first one, once per process: a command that starts from the parsed-log cache reads no big buffer,
    and without it every column of a million sessions it loads and every temporary array of its
    snapshot (8 MB each: glibc maps blocks of 128 KB and more afresh until one is freed) is a fresh
    mapping, each page faulted in and zeroed: measured on a `record` at a million sessions, 18,000 page
    faults, 14,800 with it, and 3% less CPU. Inside `heap_kept` (or after it) nothing changes."""
    global _heap_settled
    with _heap_lock:
        if _heap_settled or _heap_depth:
            return
        _heap_settled = True
        libc = _libc()
        if libc is not None:
            libc.mallopt(_M_TRIM_THRESHOLD, _HEAP_AFTER[0])
            libc.mallopt(_M_MMAP_THRESHOLD, _HEAP_AFTER[1])


def _libc() -> Any:
    """The C library when it has glibc's `mallopt` and `malloc_trim`; else None."""
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None
    except (OSError, AttributeError, ImportError):
        return None


class SessionFields(Struct, frozen=True):
    """Per-session strings and lines of the first `n` sessions, in log order."""

    session_ids: Sequence[str]
    timestamps: Sequence[str | None]
    categories: Sequence[str | None]
    journal_paths: Sequence[str | None]
    lines: npt.NDArray[np.int64]


class LogReader:
    """The log read so far. `refresh()` decodes only what was appended since the last read;
    a replaced or cut log is read again from the start."""

    def __init__(
        self,
        log: EventStore,
        *,
        cache_dir: Path,
        use_cache: bool = True,
        cache_threshold: int | None = None,
        outcomes: dict[str, float] | None = None,
        rewards: RewardInputs = DEFAULT_INPUTS,
        keeps: Callable[[], bool] | None = None,
    ) -> None:
        """`keeps`: asked before a cache is read or kept, whether the caches' folder may be made now (the
        workspace's: only once its state folder exists; None: always)."""
        self.outcomes = (
            outcomes  # string outcome -> reward (see lesson_credit.core.bandit.config), applied to every snapshot
        )
        self.rewards = rewards  # the reward priority and the scores from outside the log (core.model.sources)
        self.spellings: Mapping[str, str] = {}  # how the library spells a lesson's id (core/log/arm_names.py)
        self.log = log
        self.index = LogIndex()
        # the hash of what was read, checked before reading on (a database store: its identity
        # and the position, its table being append-only)
        self._prefix: PrefixChecker = prefix_check(log)
        self._tail_problem: LogProblem | None = None
        self._partial = False  # the last line read had no newline yet
        self._use_cache = use_cache
        self._keeps = keeps
        self._log_cache = log_cache(log, cache_dir) if use_cache else None
        # a read that parses at least this much rewrites the parsed-log cache (and a log this big
        # starts from it): bytes of the file, events of a database store
        default_threshold = MIN_NEW_BYTES if self._log_cache is None else self._log_cache.min_new
        self.cache_threshold = default_threshold if cache_threshold is None else cache_threshold
        # and in a log that big, a read that parses this much (what the cache does not hold yet, which
        # every command parses again until the cache is rewritten)
        tail = self.cache_threshold if self._log_cache is None else self._log_cache.min_tail
        self.tail_threshold = min(self.cache_threshold, tail)
        self.snapshot: FoldData | None = None  # of the index as it is; None until asked for again
        self.generation = 0  # +1 whenever the index is replaced (a read from the start): rows may differ
        self._folds: dict[CreditSettings, Posterior] = {}  # of the snapshot, by settings
        # who wrote each session (a database store's record), fetched up to _agents_end for _agents_of
        self._agents: dict[str, str] = {}
        self._agents_end = 0
        self._agents_of: LogIndex | None = None
        self._graded_rows: GradedRows | None = None  # the index's grade events by row (`_graded`)
        self.progress: ReadProgress | None = None  # while a refresh runs (read from other threads)
        # called in the reading thread with each new `progress`, and None when the read ends
        self.progress_hook: Callable[[ReadProgress | None], None] | None = None

    @property
    def caches(self) -> bool:
        """Whether derived caches (the parsed log, the lesson library) are kept on disk."""
        return self._use_cache and (self._keeps is None or self._keeps())

    def refresh(self, settings: CreditSettings) -> bool:
        """Read what was appended to the log since the last read. True when anything changed.

        After a big read the parsed-log cache is rewritten, with the per-arm block sums under
        `settings` computed first so that it carries them."""
        signature = self._prefix.signature()
        size = self.log.size()
        index = self.index
        reset = False
        intact = size >= index.end and self._prefix.intact(index.end, signature)
        if index.end and not intact:
            # The log was edited, replaced or cut, or a last line read without its newline was
            # continued (it is then one longer line): start over rather than trust a stale prefix.
            self.index = index = LogIndex()
            self.generation += 1
            self._partial = False
            self._prefix.reset()
            reset = True
        if index.end == 0 and self._log_cache is not None and size >= self.cache_threshold:
            settle_heap()  # the cache's columns and the snapshot's arrays: a million items each
            loaded = self._log_cache.load()
            if loaded is not None:
                self.index, hasher, self._partial = loaded
                self.generation += 1
                self._prefix.adopt(hasher)
                index = self.index
                reset = True
        if size == index.end and self._tail_problem is None and not reset:
            self._prefix.checked(signature, index.end)
            return False
        started_at = index.end
        big = size - started_at >= self.cache_threshold
        try:
            self._report("reading", 0, size - started_at)
            # millions of small containers: the cyclic GC would rescan them many times; 32 MB buffers
            # and growing columns: the allocator would map them afresh each time
            with gc_paused(), heap_kept() if big else contextlib.nullcontext():
                read, tail_problem = self._read(index, size)
            changed = reset or read
            self._prefix.checked(signature, index.end)  # after reading: it may seal the log (core/log/logcheck.py)
            claim = index.blocks.claim  # sums loaded with the cache: used if the log holds what they came from
            if claim is not None:
                index.blocks.settle_claim(self._prefix.vouches(claim.end, claim.vouch))
            changed = changed or tail_problem != self._tail_problem
            self._tail_problem = tail_problem
            prepared = self._settle(started_at, settings)
        finally:
            self.progress = None
            if self.progress_hook is not None:
                self.progress_hook(None)
        if changed:
            self.snapshot, self._folds = prepared, {}
        return changed

    def _read(self, index: LogIndex, size: int) -> tuple[bool, LogProblem | None]:
        """Read the log from `index.end` to its end: (whether anything was read, the problem of an
        unfinished last line). A big log read from its start is read on two cores (core/log/halves.py):
        this process reads the first half while a child reads the second, appended when it agrees."""
        started_at, changed, tail_problem = index.end, False, None
        half = halves.start(self.log, started_at, size)
        try:
            if half is not None:  # progress: the child reads its half as fast as this process its own
                scale = (half.stop - started_at) / (half.split - started_at)
                first = cast(EventLog, self.log).read_chunks(
                    0, 1, decode=decode_raw, decode_lines=decode_lines, hasher=self._prefix.hasher, stop=half.split
                )
                changed, _ = self._consume(index, first, lambda end: min(int(end * scale), size - 1), size)
                prefix = self._prefix.hasher  # a file's: its block digests (core/log/logcheck.py)
                hasher = half.take(index, prefix) if isinstance(prefix, PrefixDigest) else None
                if hasher is not None:
                    self._prefix.adopt(hasher)
                    changed = True
        finally:
            if half is not None:
                half.close()
        rest = self.log.read_since(
            index.end, index.lines + 1, decode=decode_raw, decode_lines=decode_lines, hasher=self._prefix.hasher
        )
        read_on, tail_problem = self._consume(index, rest, lambda end: end - started_at, size - started_at)
        return changed or read_on, tail_problem

    def _consume(
        self, index: LogIndex, results: Iterable[ReadResult], done: Callable[[int], int], total: int
    ) -> tuple[bool, LogProblem | None]:
        """Add what `results` decoded to `index`, reporting progress (`done` of a result's end)."""
        changed, tail_problem = False, None
        for result in results:
            added = index.add_many(result.events, result.offsets)
            index.problems.extend(sorted(result.problems + added, key=lambda p: p.line))
            changed = changed or bool(result.events or result.problems)
            tail_problem = result.tail_problem
            if result.end != index.end:
                index.end = result.end
                index.lines += result.lines
                self._partial = result.partial
            self._report("reading", done(result.end), total)
        return changed, tail_problem

    def _report(self, stage: str, done: int, total: int) -> None:
        since = time.monotonic() if self.progress is None else self.progress.since
        self.progress = ReadProgress(stage, done, max(done, total), is_local(self.log), since)
        if self.progress_hook is not None:
            self.progress_hook(self.progress)

    def _settle(self, started_at: int, settings: CreditSettings) -> FoldData | None:
        """After a big read (`cache_threshold`, or `tail_threshold` of a log at least `cache_threshold`
        big): settle the columns and rewrite the parsed-log cache (with the block sums it carries); the
        snapshot computed for them, if any."""
        index = self.index
        parsed = index.end - started_at
        if index.end == started_at or parsed < self.tail_threshold or index.end < self.cache_threshold:
            return None
        index.settle()
        if self._log_cache is None or not self.caches:
            return None
        self._report("caching", 0, 0)
        prepared: list[FoldData] = []
        failed: list[Exception] = []

        def with_sums() -> None:  # while a child encodes blocks: the sums it computes are then saved too
            try:
                prepared.append(_with_block_sums(index, settings, self.outcomes, self.rewards))
            except Exception as exc:  # raised below, not taken for the cache's own failure
                failed.append(exc)

        with gc_paused(), heap_kept():  # as above: encoding a million sessions makes millions of objects
            self._log_cache.save(index, self._prefix.hasher.hexdigest(), self._partial, with_sums)
            if failed:
                raise failed[0]
            return prepared[0] if prepared else _with_block_sums(index, settings, self.outcomes, self.rewards)

    def content_key(self) -> str | None:
        """What identifies the log as read (its length and the digest of its bytes), for caches of
        things computed from it; None when derived caches are not kept (or the store is no file)."""
        if not isinstance(self._log_cache, LogCache) or not self.caches:
            return None
        import xxhash

        digest = xxhash.xxh3_64_hexdigest(self._prefix.hasher.hexdigest().encode())
        return f"{self.index.end}:{self.index.lines}:{digest}"

    def keep_sums(self) -> None:
        """Save the per-block sums a fold computed since the parsed-log cache last held them (after a
        write: the next command then folds without recomputing the blocks the write changed)."""
        if self._log_cache is not None and self.caches:
            self._log_cache.save_sums(self.index, self._prefix.vouch(self.index.end))

    def vouch_read(self) -> tuple[int, str] | None:
        """(end, vouch): the log's bytes read so far and what identifies them, for data derived from them to
        carry (`vouches` checks them again); None when that is not known."""
        vouch = self._prefix.vouch(self.index.end)
        return None if vouch is None else (self.index.end, vouch)

    def vouches(self, end: int, vouch: str) -> bool:
        """Whether the log's first `end` bytes, within those read and checked, are those `vouch` was of."""
        return self._prefix.vouches(end, vouch)

    def own_append(self, append: Callable[[], None]) -> None:
        """Run `append` (the caller's append under the writers' lock); the next refresh then skips hashing
        what was read, the bytes before the event being those it read, unless the log had changed since
        it was read (another program, which takes no lock of ours, edited it): that refresh checks it."""
        unchanged = self._prefix.unchanged()
        append()
        if unchanged:
            self._prefix.trust_once()

    def set_outcomes(self, outcomes: dict[str, float]) -> bool:
        """Map outcome words to other rewards ([outcomes] changed); True when that changes the map (the
        next snapshot is then taken again, as after a change of the log)."""
        if outcomes == self.outcomes:
            return False
        self.outcomes = outcomes
        self.snapshot, self._folds = None, {}
        return True

    def set_rewards(self, rewards: RewardInputs) -> bool:
        """Use another priority or other scores from outside the log; True when that changes them
        (the next snapshot is then taken again, as after a change of the log)."""
        if rewards.same_as(self.rewards):
            return False
        self.rewards = rewards
        self.snapshot, self._folds = None, {}
        return True

    def set_spellings(self, spellings: Mapping[str, str]) -> None:
        """Show each arm as the library spells its lesson (`library_spellings`), from the next snapshot on."""
        self.spellings = spellings

    def data(self) -> FoldData:
        """The snapshot of the log as read so far (taken once per change)."""
        if self.index.use_spellings(self.spellings):
            self.snapshot, self._folds = None, {}
        if self.snapshot is None:
            self.snapshot = self.index.snapshot(self.outcomes, self.rewards)
        return self.snapshot

    def posterior(self, settings: CreditSettings) -> Posterior:
        """The fold of the snapshot under `settings` (kept until the snapshot changes)."""
        cached = self._folds.get(settings)
        if cached is None:
            cached = self._folds[settings] = fold(self.data(), settings)
        return cached

    def problems(self, data: FoldData) -> list[LogProblem]:
        """The snapshot's problems, with an unfinished last line if there is one, by line."""
        problems = list(data.problems)
        if self._tail_problem is not None:
            problems.append(self._tail_problem)
        return sorted(problems, key=lambda p: p.line)

    # ------------------------------------------------------------ lookups by session

    def row_of(self, session_id: str) -> int | None:
        return self.index.row_of(session_id)

    def session(self, row: int) -> SessionEvent:
        return self.index.session(row)

    def session_line(self, row: int) -> int:
        """The line of a session's record in the log."""
        return int(self.index.session_lines[row])

    def grades_of(self, row: int) -> list[tuple[int, GradeEvent]]:
        """(line, grade) of every grade event naming the session at `row`, in log order (found by row:
        core/log/graded.py)."""
        grades = self.index.grades
        return [grades[position] for position in self._graded().positions(row)]

    def grade_history(
        self, row: int, session: SessionEvent | None = None, grades: list[tuple[int, GradeEvent]] | None = None
    ) -> list[GradeRecord]:
        """Every grade of the session at `row`, oldest first (views.grade_history); a record without
        base_reward counts the reward its string outcome maps to, as the snapshots do (`outcomes`).
        `session` and `grades`: the row's event and grade events, when the caller has them already."""
        session = self.grading_fields(row) if session is None else session
        grades = self.grades_of(row) if grades is None else grades
        outcome = (self.outcomes or {}).get(self.index.outcome_labels.get(row) or "")
        return views.grade_history(session, self.session_line(row), grades, outcome)

    def grading_fields(self, row: int) -> SessionEvent:
        """The session's event without anything of its lessons (what its grades and reward sources read of it): no
        tuples of lessons built, which views of many sessions with undos did once per session and source."""
        return self.index.session(row, lessons=False)

    def grader_scores(self, n: int, source_code: int) -> dict[str, npt.NDArray[np.float64]]:
        """Per grader of one reward source: that grader's latest score of each of the first `n`
        sessions (NaN: none, or withdrawn by the grader's retraction), from the records' own
        scores and the grade events in log order."""
        index = self.index
        out: dict[str, npt.NDArray[np.float64]] = {}
        base = index.session_base.view()
        for own_row in np.flatnonzero(index.session_source.view()[:n] == source_code).tolist():
            value = float(base[own_row])
            if not math.isnan(value):
                nan_column(out, index.session_graders[own_row] or "heuristic", n)[own_row] = value
        codes = np.array(index.grade_source, dtype=np.int8)
        rows = np.array(index.grade_rows, dtype=np.int64)
        for position in np.flatnonzero(codes == source_code).tolist():
            _, grade = index.grades[position]
            found = int(rows[position]) if rows[position] >= 0 else self.row_of(grade.session_id)
            if found is None or found >= n:
                continue
            value = math.nan if grade.base_reward is None else grade.base_reward
            nan_column(out, grade.grader, n)[found] = value
        return out

    def rows_noted(self, noted: Callable[[str], bool], n: int) -> list[int]:
        """The rows below `n` of the sessions with a grade event whose note `noted` (a module's function) picks,
        in row order. Each note is tested once, as the log grows."""
        return self._graded().rows_noted(noted, n)

    def _graded(self) -> GradedRows:
        graded = self._graded_rows
        if graded is None or graded.index is not self.index:  # (a log rewritten is read into a new index)
            graded = self._graded_rows = GradedRows(self.index)
        return graded

    def outcome_labels(self) -> dict[int, str]:
        """Row -> string outcome of each record logged without base_reward."""
        return dict(self.index.outcome_labels.items())

    def outcome_label(self, row: int) -> str | None:
        """The string outcome of the record at `row` when it was logged without base_reward."""
        return self.index.outcome_labels.get(row)

    def session_offset(self, row: int) -> int | None:
        """Where the session's record starts in the log (None: not known, a database store's)."""
        offset = int(self.index.session_offsets[row])
        return None if offset < 0 else offset

    def retired(self) -> dict[str, int]:
        """Arm -> line of the retire event that retired it (the arm as shown, whatever form the event spelled)."""
        index = self.index
        if not index.unicode_arms:
            return index.retired
        shown: dict[str, int] = {}
        for arm, line in sorted(index.retired.items(), key=lambda item: item[1]):
            shown.setdefault(index.shown(arm), line)
        return shown

    def selections(self) -> list[tuple[int, SelectionEvent]]:
        """(line, selection) of every selection event, in log order."""
        return list(self.index.selections)

    def selected_never_recorded(self) -> list[tuple[str, int]]:
        """(session id, line of its latest selection) of the sessions selected but never recorded, though a
        later session was (core/log/unrecorded.py), in the order of those lines."""
        return selected_never_recorded(self.index)

    def passed_over(self) -> list[tuple[str, tuple[str, ...]]]:
        """(session id, lessons) of the sessions whose record names lessons their selection did not choose, not
        marked "during", read as included during the session (core/log/unchosen.py), in log order."""
        index, arms = self.index, self.index.entry_arm.view()
        rows = unchosen_by_row(index, index.n_sessions)
        starts = index.session_start.view()
        return [
            (index.session_ids[row], tuple(index.shown(index.arm_ids[int(arms[int(starts[row]) + i])]) for i in found))
            for row, found in sorted(rows.items())
        ]

    def recorded_unselected(self, back: int) -> tuple[list[str], str | None]:
        """The sessions recorded last with no selection logged for them, and the one before them that had one
        (core/log/unrecorded.py)."""
        return recorded_unselected(self.index, back)

    def session_columns(self, n: int) -> SessionFields:
        index = self.index
        return SessionFields(
            session_ids=index.session_ids.between(0, n),
            timestamps=index.session_times.between(0, n),
            categories=index.session_categories.between(0, n),
            journal_paths=index.session_journals.between(0, n),
            lines=index.session_lines.span(0, n),
        )

    def session_ids(self) -> Objects[str]:
        return self.index.session_ids

    def session_agents(self, n: int) -> list[str | None]:
        """The agent that wrote each of the first `n` sessions' records, in log order; [] when the
        store does not record who writes (the file). Fetched once per position range."""
        index = self.index
        if self._agents_of is not index or index.end < self._agents_end:
            self._agents, self._agents_end, self._agents_of = {}, 0, index
        if index.end > self._agents_end:
            self._agents.update(session_agents(self.log, self._agents_end, index.end))
            self._agents_end = index.end
        if not self._agents:
            return []
        return [self._agents.get(session_id) for session_id in index.session_ids.between(0, n)]

    def session_times(self) -> Objects[str | None]:
        return self.index.session_times

    def session_categories(self) -> Sequence[str | None]:
        return self.index.session_categories

    def category_counts(self, start: int, stop: int) -> Counter[str | None]:
        """How many of the sessions [start, stop) have each category, as logged (`Objects.counted`)."""
        return self.index.session_categories.counted(start, stop)

    def session_journals(self) -> Sequence[str | None]:
        return self.index.session_journals

    def missing_salience_count(self) -> int:
        """Lesson entries of session records that gave no salience."""
        return sum(len(positions) for positions in self.index.missing_salience.values())


def _with_block_sums(
    index: LogIndex, settings: CreditSettings, outcomes: dict[str, float] | None, rewards: RewardInputs
) -> FoldData:
    """A snapshot whose per-arm block sums (and, for the current settings, reward counts and
    last sessions) are computed, so that the parsed-log cache carries them: a later process
    then folds a big log without a pass over its entries."""
    data = index.snapshot(outcomes, rewards)
    post = fold(data, settings)
    _ = data.stats, post.rewarded, post.last_session, lesson_usage(data)
    return data


def nan_column(columns: dict[str, npt.NDArray[np.float64]], key: str, n: int) -> npt.NDArray[np.float64]:
    """`columns[key]`, a new column of `n` NaN the first time (not `setdefault`, which allocated 800 KB at
    100k sessions for every grade, kept or not)."""
    column = columns.get(key)
    if column is None:
        column = columns[key] = np.full(n, np.nan)
    return column
