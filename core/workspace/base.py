"""The workspace's ground floor: its folder, settings, event store, and the log as read so far.

`WorkspaceBase` opens a workspace (choosing its event store as the CLI does: `choose_store`) and
reads what was appended to the log since the last read (`lesson_credit.core.reader`); the rooms
above it (reading, analysis, the state file, writing) ask it for the snapshot (`data`), a
session's row, the library and the settings.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lesson_credit.core.bandit.config import (
    PENDING_OUTCOME,
    SETTLE_S,
    Config,
    ConfigError,
    parse_config,
    read_config,
    read_config_text,
)
from lesson_credit.core.base.clock import iso, utc_now
from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.base.files import WriteGuard, set_aside_notices
from lesson_credit.core.base.gc_pause import gc_paused
from lesson_credit.core.base.ids import library_spellings
from lesson_credit.core.base.numbers import counted, listed
from lesson_credit.core.joined_records import JoinedRecords, SessionRecords
from lesson_credit.core.library.journals import outside_library_allowed, read_journal
from lesson_credit.core.library.lessons import LessonProblem, Library, load_library
from lesson_credit.core.log.eventstore import EventStore, JsonlStore
from lesson_credit.core.log.snapshot import FoldData
from lesson_credit.core.log.store import LogProblem, StoreError
from lesson_credit.core.model.kinds import KindNames
from lesson_credit.core.model.settings import CreditSettings
from lesson_credit.core.model.sources import RewardInputs
from lesson_credit.core.reader import LogReader, ReadProgress

if TYPE_CHECKING:  # imported where used: the analysis and the joint fit are not needed to show posteriors
    pass

STATE_DIR = Path("state") / "lesson-thompson"
LOG_FILE = "sessions.jsonl"  # the event log, in STATE_DIR (when the store is the file)
LIBRARY_RECHECK_S = 5.0  # a library read longer ago than this is read again by the next refresh (stat-checked)
LIBRARY_RECHECK_SHARE = 0.02  # and no sooner than its last reread took / this: 30,000 lessons take 0.5 s


class WorkspaceBase:
    """A workspace folder: lessons, the event log, settings. See docs/format.md §1."""

    def __init__(
        self,
        root: Path | str = ".",
        *,
        clock: Callable[[], dt.datetime] = utc_now,
        use_cache: bool = True,
        allow_outside_journals: bool = False,
        allow_outside_library: bool | None = None,
        cache_threshold: int | None = None,
        store: EventStore | str | None = None,
        agent: str | None = None,
        written_by: str | None = None,
        allow_outside_writes: bool | None = None,
    ) -> None:
        """`store`: the event store, or a URL naming one ("": the workspace's JSONL file); None chooses
        as the CLI does (`choose_store`: $LESSON_CREDIT_STORE, then config.toml's `[store] url`, else
        the file). `agent` and `written_by`: a database store's writer and reader (docs/postgres.md).
        `allow_outside_writes`: let writes follow symlinks out of the workspace (default: only with
        LESSON_CREDIT_WRITE_OUTSIDE=1; see core.base.files)."""
        self.root = Path(root).resolve()
        self.state_dir = self.root / STATE_DIR
        self.state_path = self.state_dir / "bandit-state.json"
        self.config_path = self.state_dir / "config.toml"
        log_file = self.state_dir / LOG_FILE
        kept = (log_file, log_file.with_name(LOG_FILE + ".torn"), self.config_path)  # never from a derived file's name
        self.guard = WriteGuard.of(self.root, allow_outside_writes).keeping(*kept)
        try:
            self.config, self._config_text = read_config(self.config_path)
        except ConfigError as exc:
            raise WorkspaceError(str(exc)) from None
        self.config_problem: str | None = None  # why config.toml as it is now is not the one in force
        self._config_seen = self._config_text  # the text of the last look at it that held still
        if not isinstance(store, str) and store is not None:
            self.log: EventStore = store
        else:
            self.log = choose_store(store, self.config, self.config_path, self.guard, agent, written_by)
        self.clock = clock
        self.allow_outside_journals = allow_outside_journals
        self.allow_outside_library = outside_library_allowed(allow_outside_library, allow_outside_journals)
        self._warnings: list[str] = []  # see `warnings`
        self._library: Library | None = None
        self._library_read = 0.0  # time.monotonic() when it was read
        self._library_reread_s = 0.0  # how long its last reread by `_reread_library` took
        self._spellings: tuple[Library | None, Mapping[str, str]] = (None, {})  # `_library_spellings`
        self._reader = LogReader(
            self.log,
            cache_dir=self.state_dir / ".cache",
            use_cache=use_cache and self._cache_folder_inside(),
            cache_threshold=cache_threshold,
            outcomes=self.config.outcomes,
            rewards=RewardInputs(self.config.reward_priority),
            # a folder of lessons alone (a checkout of a library, no state/) is read, not written: no state
            # folder is made for caches; from the first write that makes it (a record) they are kept
            keeps=self.state_dir.parent.is_dir,
        )
        # gptme-sessions' (docs/records.md); a rotated file linking outside the workspace read as journals are
        self.session_records = SessionRecords(self.root, self.config.records, allow_outside=allow_outside_journals)
        self.version = 0  # bumped whenever the log read so far changes
        self._kinds = KindNames()  # the sessions' kinds of work, counted as the log grows (`kind_names`)

    @property
    def warnings(self) -> list[str]:
        """What a command that succeeded could not do (a derived file), one line each: appended to
        by the commands, and each cache file set aside under the state folder (core.base.files). A
        grade's write returns its own (`GradeAppended.warnings`) instead: the dashboard writes
        grades for hours, so they are not kept here."""
        self._warnings.extend(set_aside_notices(self.state_dir))
        return self._warnings

    def _cache_folder_inside(self) -> bool:
        """Whether the caches' folder may be written (it does not link out of the workspace); when
        not, no cache is kept, and a warning says why."""
        folder = self.state_dir / ".cache"
        try:
            self.guard.folder(folder)
        except StoreError as exc:
            self.warnings.append(f"{exc}; no caches are kept")
            return False
        return True

    @property
    def settings(self) -> CreditSettings:
        return self.config.credit

    def library(self, reload: bool = False) -> Library:
        if self._library is None or reload:
            cache = self.state_dir / ".cache" / "lessons.msgpack" if self._reader.caches else None
            with gc_paused():  # thousands of lessons, each a few small containers (see gc_paused)
                self._library = load_library(self.root, cache, allow_outside=self.allow_outside_library)
            self._library_read = time.monotonic()
        return self._library

    def _reread_library(self) -> bool:
        """Read the library again when it was read more than LIBRARY_RECHECK_S ago (its cache makes that
        a stat per unchanged file): a workspace kept open (the dashboard) then shows a lesson written,
        archived or broken since. A command's library, read moments ago, is not read twice; a library
        slow to read again is read again less often (LIBRARY_RECHECK_SHARE of the time at most). True
        when it changed."""
        wait = max(LIBRARY_RECHECK_S, self._library_reread_s / LIBRARY_RECHECK_SHARE)
        if self._library is None or time.monotonic() - self._library_read < wait:
            return False
        before, started = self._library, time.monotonic()
        changed = self.library(reload=True) != before
        self._library_reread_s = time.monotonic() - started
        return changed

    def refresh(self) -> bool:
        """Read what was appended to the log since the last read (and the records file, when it
        changed: its scores count for their sources; config.toml when it changed, and the library now
        and then: `_reread_config`, `_reread_library`). True when anything changed."""
        changed = self._reread_config()
        changed = self._reread_library() or changed
        changed = self._reader.refresh(self.settings) or changed
        changed = self._sync_rewards() or changed
        self.version += changed
        return changed

    def _reread_config(self) -> bool:
        """Read config.toml again when its text changed since it was read: a workspace kept open (the
        dashboard) then folds, and rewrites bandit-state.json, with what `replay --write`, an editor or
        another dashboard set there. True when the settings changed, or whether they can be read. A changed
        text is taken once two reads SETTLE_S apart agree (an editor saving in place truncates the
        file first: an empty config.toml is a valid one, of the defaults). One that cannot be read now (a
        half-saved edit) keeps the settings read before, and `config_problem` says why, until it can. A
        changed `[store] url` takes effect when the workspace is opened again."""
        said = self.config_problem
        try:
            text = read_config_text(self.config_path)
            if text == self._config_seen:  # as at the last look (in force, or said not to be readable)
                return False
            if text != self._config_text:
                time.sleep(SETTLE_S)
                if read_config_text(self.config_path) != text:  # being saved (an editor truncates, then writes)
                    return False  # read at the next refresh, once it holds still
            self._config_seen = text
            config = self.config if text == self._config_text else parse_config(self.config_path, text)
        except ConfigError as exc:
            self.config_problem = f"{exc}; the settings read before stay in force"
            return self.config_problem != said
        self.config_problem, self._config_text = None, text
        if config == self.config:
            return said is not None
        if config.records != self.config.records:
            self.session_records = SessionRecords(self.root, config.records, allow_outside=self.allow_outside_journals)
        self.config = config
        self._reader.set_outcomes(config.outcomes)
        return True

    def _sync_rewards(self) -> bool:
        """Hand the reader the reward priority and the records' scores; True when they changed."""
        priority = self.config.reward_priority
        if not self.session_records.has_records():
            return self._reader.set_rewards(RewardInputs(priority))
        joined = self.records()
        return self._reader.set_rewards(RewardInputs(priority, joined.scores, joined.token))

    def records(self) -> JoinedRecords:
        """The gptme-sessions records joined to the sessions read so far (see core.joined_records)."""
        n = self._reader.index.n_sessions

        def columns() -> tuple[Sequence[str], Sequence[str | None]]:
            c = self._reader.session_columns(n)
            return c.session_ids, c.timestamps

        return self.session_records.joined(n, columns, self.config.outcomes, self._reader.generation)

    def data(self) -> FoldData:
        """The fold snapshot of the log (read first if the last change has not been read)."""
        if self._reader.snapshot is None:
            self.refresh()
        if self._reader.index.unicode_arms:  # an id not in ASCII may be logged in another form than the library's
            self._reader.set_spellings(self._library_spellings())
        return self._reader.data()

    def _library_spellings(self) -> Mapping[str, str]:
        """How the library spells each lesson id that is not ASCII, by its NFC form (core/log/arm_names.py)."""
        library = self.library()
        if self._spellings[0] is not library:
            self._spellings = (library, library_spellings(library.by_id()))
        return self._spellings[1]

    def log_problems(self) -> list[LogProblem]:
        return self._reader.problems(self.data())

    def log_missing(self) -> str | None:
        """Why every lesson shows as never used, when the workspace's log file is gone (deleted, moved)
        or holds no session (emptied, or no line of it readable; nor a prior or increments), or a
        database store holds none (new, `store push` not run yet, or emptied), while
        `bandit-state.json`, written after every append, is still there: one line naming the log; None
        otherwise (a fresh workspace has neither). The state file is then left as it is: a fold of
        nothing would throw its evidence away."""
        if not os.path.lexists(self.state_path):
            return None
        if not isinstance(self.log, JsonlStore):  # a database: a new one, or one emptied
            if self._has_evidence():
                return None
            return (
                f"{self.log.name}: the event store holds no session (a new database? `lesson-credit store push` "
                f"copies the log file into it); every lesson shows as never used, and {self.state_path.name} "
                "is left as it is"
            )
        if not os.path.lexists(self.log.path):
            why = "is missing (deleted or moved?)"
        elif not self._has_evidence():
            why = "holds no session (emptied?)"
        else:
            return None
        return (
            f"{self.log.path}: the event log {why}; every lesson shows as never used, and "
            f"{self.state_path.name} is left as it is"
        )

    def records_shown(self) -> str:
        """The records file read now, relative to the workspace when inside it (as bandit-state.json names it)."""
        path = self.session_records.path
        return path.relative_to(self.root).as_posix() if path.is_relative_to(self.root) else str(path)

    def records_missing(self) -> str | None:
        """`records_unread`, as why `bandit-state.json` is left as it is (one line; None: they are read)."""
        if (unread := self.records_unread()) is None:
            return None
        return f"{unread}: their rewards fall back to other sources, and {self.state_path.name} is left as it is"

    def records_unread(self) -> str | None:
        """Why `bandit-state.json` is left as it is when it was written with rewards from a gptme-sessions records
        file (interop.RECORDS_KEY) that is not read now: gone, emptied, or another one named ($GPTME_SESSIONS_DIR
        set in one environment and not in another, `[records] path`) from which no session takes a reward. Those
        rewards are not in the log: a fold without them would rewrite gptme's numbers from other sources. (The
        file there with records, whatever its joins give now, is read: grades, priorities and joins move on.)
        One line; None otherwise (the records back, or the state file deleted: the next write starts anew). A file
        gptme's bandit saved since (without our keys) is taken as the copy of ours it grew from names."""
        if not os.path.lexists(self.state_path):
            return None
        from lesson_credit.core.bandit.interop import RECORDS_KEY, read_state

        file = read_state(self.state_path)
        said = file[RECORDS_KEY] if RECORDS_KEY in file else self._records_of_copy(file)
        used, path = (said.get("sessions"), said.get("path")) if isinstance(said, dict) else (None, None)
        if not isinstance(used, int) or isinstance(used, bool) or used <= 0 or not isinstance(path, str):
            return None
        now, read = self.records_shown(), self.session_records.path
        named = Path(path).expanduser()
        same = now == path or _same_file(named if named.is_absolute() else self.root / named, read)
        # the file, or the rotated files beside it (core/sessions/record_set.py): a file renamed to a backup
        # and none started yet is read from the backup (a link to nothing is not there)
        missing = not self.session_records.there()
        empty = not missing and not self.session_records.has_records()
        if not missing and not empty and (same or len(self.data().scores().external_rows)):
            return None
        if same:
            rotated = self.session_records.file().rotated
            if missing:
                why = "it is missing"
            elif rotated and not os.path.exists(read):
                why = (
                    f"it is missing, and no record can be read from the rotated files beside it ({listed(rotated, 3)})"
                )
            elif rotated:
                why = f"no record can be read from it or the rotated files beside it ({listed(rotated, 3)})"
            else:
                why = "no record can be read from it"
        else:
            state = "missing" if missing else "holding no record" if empty else "no session taking a reward from it"
            why = f"{now} is read now, {state}: $GPTME_SESSIONS_DIR or config.toml's [records] path names another"
        return (
            f"{self.state_path.name} was written with the rewards of {counted(used, 'session')} from the "
            f"gptme-sessions records in {path}, which are not read now ({why})"
        )

    def _say_torn(self) -> None:
        """Say (`warnings`) each torn last line an append of ours moved out of the log (core/log/store.py): a program
        appending without our lock may finish it later, and its event is then only in `.torn` (`lint` lists it)."""
        moved = getattr(self.log, "set_aside", None)  # (the log file's appends; a database has no torn lines)
        while moved:
            self.warnings.append(
                f"a torn last line of the log ({counted(moved.pop(0), 'byte')}, no event) was moved to "
                f"{LOG_FILE}.torn: a writer killed mid-write, or a program appending without the lock (look at it)"
            )

    def _records_of_copy(self, state: dict[str, Any]) -> Any:
        """What the file of ours that `state` grew from named as its rewards' records (the copy of what we wrote:
        gptme's bandit saves its own keys only). None here: no copy."""
        return None

    def _has_evidence(self) -> bool:
        """Whether the log holds a session, a prior or increments (anything a fold takes)."""
        data = self.data()
        return data.n_sessions > 0 or bool(self._reader.index.priors) or bool(self._reader.index.increments)

    def lesson_problems(self) -> tuple[LessonProblem, ...]:
        return self.library().problems

    def _row(self, session_id: str) -> int:
        row = self._reader.row_of(session_id)
        if row is None:
            raise WorkspaceError(f"unknown session {session_id!r}")
        return row

    def _journal(self, journal_path: str | None) -> tuple[str | None, str | None]:
        return read_journal(self.root, journal_path, self.allow_outside_journals)

    @property
    def read_progress(self) -> ReadProgress | None:
        """How far the read under way has come (None: none is), safe to ask from another thread."""
        return self._reader.progress

    def on_read_progress(self, hook: Callable[[ReadProgress | None], None] | None) -> None:
        """Call `hook` in the reading thread with each step of a read, and None when it ends."""
        self._reader.progress_hook = hook

    @property
    def read_generation(self) -> int:
        """Changes when the log is read again from its start (rows read before may be other sessions)."""
        return self._reader.generation

    def outcome_reward(self, word: str, *, pending_ok: bool = False) -> float | None:
        """The reward a gptme outcome word stands for in this workspace ([outcomes] over gptme-sessions'
        defaults); with `pending_ok`, `unknown` is None (pending, as gptme records it). WorkspaceError
        naming the accepted words for any other."""
        outcomes = self.config.outcomes
        if word in outcomes:
            return outcomes[word]
        if pending_ok and word == PENDING_OUTCOME:
            return None
        accepted = sorted(outcomes) + ([PENDING_OUTCOME] if pending_ok else [])
        raise WorkspaceError(f"reward must be a number in [0, 1] or one of {', '.join(accepted)}, got {word!r}")

    def now_iso(self) -> str:
        return iso(self.clock())


def choose_store(
    given: str | None,
    config: Config,
    config_path: Path,
    guard: WriteGuard,
    agent: str | None = None,
    written_by: str | None = None,
) -> EventStore:
    """The event store `given` names (a URL; "": the JSONL file), else $LESSON_CREDIT_STORE, else
    config.toml's `[store] url`, else the workspace's JSONL file (core.log.stores). `written_by`:
    reads see only what that agent wrote, which only a database store records."""
    from lesson_credit.core.log.stores import open_store, store_url

    url = store_url(given, config.extra, config_path)
    log_path = config_path.parent / LOG_FILE
    store = JsonlStore(log_path, guard) if url is None else open_store(url, log_path, agent)
    if written_by is not None:
        from lesson_credit.core.log.stores import is_local

        if is_local(store):  # (before importing the database store: psycopg may not be installed)
            raise WorkspaceError("--written-by needs a database store: the file does not record who wrote each event")
        from lesson_credit.core.log.pgstore import PgStore

        assert isinstance(store, PgStore)
        store.written_by = written_by
    return store


def _same_file(one: Path, other: Path) -> bool:
    """Whether two paths name one file (a link, `..`, a relative $GPTME_SESSIONS_DIR): by the file when both are
    there, else by their resolved paths."""
    try:
        return os.path.samefile(one, other)
    except OSError:
        return os.path.realpath(one) == os.path.realpath(other)
