"""The dashboard app: wires the screens to one source, applies the write queue, watches for changes.

One source of change: the source's version moves once per write (by the writer) or per poll
that saw another process's append, and one `SourceChanged` message carries the new frozen
snapshot; `data_version` follows it and the screens reload from it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, ClassVar

from textual import events, on, work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.notifications import Notify, SeverityLevel
from textual.reactive import reactive
from textual.scrollbar import ScrollBar
from textual.timer import Timer
from textual.worker import get_current_worker

from lesson_credit.tui import gc_settings
from lesson_credit.tui.app_navigation import MODE_ACTIONS, AppNavigation
from lesson_credit.tui.app_writes import RETRY_SECONDS, AppWrites, DiscardAsked
from lesson_credit.tui.background import use_background_threads
from lesson_credit.tui.held_toasts import HeldToasts
from lesson_credit.tui.keys import KeyRouter
from lesson_credit.tui.messages import (
    FirstViewShown,
    SourceChanged,
    ToastHoldersChanged,
    WorkFailed,
    WorkspaceWritten,
)
from lesson_credit.tui.newest import Newest
from lesson_credit.tui.screens.base import describe_failure
from lesson_credit.tui.screens.lazy import (
    analysis_screen,
    health_screen,
    sessions_screen,
    simulation_screen,
)
from lesson_credit.tui.screens.lessons import LessonsScreen
from lesson_credit.tui.source import Opening, WorkspaceSource
from lesson_credit.tui.source_views import Problems, SourceSnapshot
from lesson_credit.tui.stylesheet import ThemeStylesheet
from lesson_credit.tui.text import counted, listed, one_line
from lesson_credit.tui.textual_private import trim_toasts
from lesson_credit.tui.widgets.scrollbar_render import SCROLLBAR_CSS, WholeCellScrollBarRender
from lesson_credit.tui.write_state import Write
from lesson_credit.tui.writes import OPERATOR, WriteQueue

if TYPE_CHECKING:
    from textual.command import Provider

    from lesson_credit.tui.source import Workspace

POLL_SECONDS = 0.2  # a commit by another process is on screen within half a second (bench/tui_live.py)
PROGRESS_EVERY_S = 0.5  # how often the title bar looks at a read under way
PROGRESS_AFTER_S = 1.0  # a read shows its progress once it has taken this long (a poll's never does)
FIRST_SNAPSHOT_LATEST_S = 2.0  # the first snapshot starts once the Lessons rows are drawn, or after this
WATCH_SECONDS = 1.0  # longest wait in a database store's `wait` before the watcher looks again
PROBLEMS_IN_NOTICE = 3
SNAPSHOT_HOLD = "first snapshot"  # the keys typed after a key that waits for it (KeyRouter.hold)
TOASTS_SHOWN = 2  # at most this many toasts at once: more would cover the numbers being graded (80x24)
TOAST_SECONDS = 4.0  # a confirmation's life; errors and warnings stay twice as long
SCREENS_GROUP = Binding.Group("screens")
# what a screen holding its keys lets pass (tui/keys.py): the screens, and ctrl+d, which asks to discard the writes
# not saved (a screen may hold its keys for one of them: an undo of the log's)
LEAVING_ACTIONS = frozenset((*MODE_ACTIONS, "discard_writes"))


def keys_commands() -> type[Provider]:
    """The palette's commands, a title starting with what was typed ranked first (imported when it opens)."""
    from lesson_credit.tui.screens.palette import KeysCommands

    return KeysCommands


class LessonCreditApp(AppNavigation, AppWrites, App[None]):
    """Lessons and Sessions are modes (each keeps its own stack); detail screens push on top."""

    TITLE = "lesson-credit"
    # start in the Lessons mode: no default screen is made, styled and then switched away from
    DEFAULT_MODE = "lessons"
    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = {keys_commands}
    NOTIFICATION_TIMEOUT = TOAST_SECONDS
    # compact toasts (one line for a confirmation) in the bottom right, above the footer. The rack keeps no
    # scrollbar gutter: with one, a toast was drawn 2 cells narrower than its height was measured for, and
    # the last line of a wrapped message ("written." of "Draft discarded; nothing was written.") was cut off
    CSS = "Toast { padding: 0 1; margin: 0 1 0 0; max-width: 50%; } ToastRack { scrollbar-size-vertical: 0; }"
    CSS += SCROLLBAR_CSS  # the thumb in $primary on the widget's background (tui/widgets/scrollbar_render.py)

    BINDINGS: ClassVar[list[BindingType]] = [
        # one footer entry for the five screens (each key keeps its own description for help and the palette)
        Binding("l", "show_lessons", "Lessons", group=SCREENS_GROUP),
        Binding("s", "show_sessions", "Sessions", group=SCREENS_GROUP),
        Binding("a", "show_analysis", "Analysis", group=SCREENS_GROUP),
        Binding("m", "show_simulation", "Simulation", group=SCREENS_GROUP),
        Binding("h", "show_health", "Health", group=SCREENS_GROUP),
        Binding("A", "show_agreement", "Agreement", key_display="A", group=SCREENS_GROUP),
        Binding("I", "show_queue", "Grading queue", key_display="I", group=SCREENS_GROUP),
        Binding("colon", "jump", "Go to session…", show=False),
        Binding("w", "what_if", "What-if (on the lesson highlighted)", show=False),  # Lessons' footer shows it
        Binding("question_mark", "help", "Help"),
        Binding("escape", "back", "Back", show=False),
        Binding("q", "quit", "Quit"),
        # priority: a text box (the note, a filter) took ctrl+d as its delete-right, under "(ctrl+d discards)"
        Binding("ctrl+d", "discard_writes", "Discard unsaved writes…", show=False, priority=True),
    ]

    data_version: reactive[int] = reactive(0)
    """The source's version as of the last change message; screens watch it and reload."""
    reading: reactive[str] = reactive("")  # a long read's progress: the title bar adds it on every screen
    saving: reactive[str] = reactive("")  # writes waiting to be retried: the title bar adds it on every screen
    saving_short = ""  # the writes waiting to be retried in fewer words, for a title bar with no room for `saving`

    def __init__(
        self,
        source: WorkspaceSource | Workspace | Opening,
        *,
        seed: int = 0,
        poll_seconds: float = POLL_SECONDS,
        operator: str = OPERATOR,
        retry_seconds: float = RETRY_SECONDS,
    ) -> None:
        """`source`: what the app reads and writes through (a Workspace, or an Opening that the first
        worker to need it opens, is wrapped in a WorkspaceSource; tests pass a source of their own).
        `retry_seconds`: the first wait before a failed write is tried again."""
        super().__init__()
        ScrollBar.renderer = WholeCellScrollBarRender  # Textual's hook: every scrollbar of the app, whole cells
        self.stylesheet = ThemeStylesheet(variables=self.get_css_variables())  # no sources yet: none to copy
        self.source = source if isinstance(source, WorkspaceSource) else WorkspaceSource(source, seed=seed)
        self.poll_seconds = poll_seconds
        self.writes = WriteQueue(operator)
        self.retry_seconds = retry_seconds
        self._waiting_reason: tuple[Write, str] | None = None  # the write whose failure was toasted last, and why
        self._lock_wait: Write | None = None  # the write the writer waits for another writer's lock to apply
        self._discard_asked: DiscardAsked | None = None  # ctrl+d's question (or the quit's), while it is up
        self._warned: list[tuple[Write, str, str]] = []  # the "not saved yet" warnings raised: write, title, message
        self._queue_reads = Newest()  # the informative order's computations, against one landing after a later one
        self.snapshot: SourceSnapshot | None = None  # the latest change message's (or the first read's)
        self._notified: set[str] = set()
        self.held_toasts = HeldToasts()
        self._snapshot_timer: Timer | None = None  # until the first snapshot starts
        # what waits for the first snapshot (None: it failed, and nothing waits for it)
        self._after_snapshot: list[Callable[[], Awaitable[None]]] | None = []
        self._first_failed = False  # the first snapshot failed, and the next to wait for it reads again
        self._watching = False  # the poll or the database watcher has started (once)
        self.grading_order = "oldest"  # the order `n` follows: "oldest" or "informative" (the grading queue's `o`)
        self.queue_ids: tuple[str, ...] | None = None  # the informative order as last computed
        self.keys = KeyRouter(self, super().on_event, LEAVING_ACTIONS)
        self.add_mode("lessons", partial(LessonsScreen, self.source))
        self.add_mode("sessions", partial(sessions_screen, self.source))
        self.add_mode("analysis", partial(analysis_screen, self.source))
        self.add_mode("simulation", partial(simulation_screen, self.source))
        self.add_mode("health", partial(health_screen, self.source))

    async def on_event(self, event: events.Event) -> None:
        """Keys and pastes from the terminal go through the key router (tui/keys.py), one at a time."""
        if isinstance(event, events.Key | events.Paste) and not event.is_forwarded:
            self.keys.take(event)
            return
        if self.keys.put_back(event):  # back for its binding, which its widget's loading indicator would skip
            return
        await super().on_event(event)

    def on_load(self) -> None:
        """Before any screen starts a worker: the workers' threads yield the CPU to this one."""
        use_background_threads(asyncio.get_running_loop())

    def on_mount(self) -> None:
        self.sub_title = self.source.name
        self.set_interval(PROGRESS_EVERY_S, self.show_progress)
        self.screen_change_signal.subscribe(self, lambda _screen: self.keys.wake())
        # the first snapshot (the session ids for next-pending, the problems notice) waits for the
        # Lessons rows to be drawn: taken now it would hold the source's lock the first rows need.
        # The timer is for a start whose Lessons screen never shows rows (its read failed).
        # Watching the log starts with it too (`_watch`): asking the store's kind opens an Opening.
        self._snapshot_timer = self.set_timer(FIRST_SNAPSHOT_LATEST_S, self._start_first_snapshot)

    def show_progress(self) -> None:
        """The title bar says how far a long read has come (a first read of a big log: 15-25 s with
        nothing but a loading indicator otherwise), and stops saying it once it is done."""
        progress = self.source.read_progress()
        long = progress is not None and time.monotonic() - progress.since >= PROGRESS_AFTER_S
        self.reading = progress.describe() if progress is not None and long else ""
        self._show_saving()  # a write that takes a while (tui/app_writes.py)

    def on_unmount(self) -> None:
        self.writes.stop()  # a writer waiting to retry ends: nothing would write what it holds
        self.source.close()  # a joint fit running in a child process ends with the dashboard

    @on(FirstViewShown)
    def _first_view_shown(self) -> None:
        self._start_first_snapshot()
        if not any(worker.group == "prepare" for worker in self.workers):
            self._prepare_writes()

    def _start_first_snapshot(self) -> None:
        """Once: on the first FirstViewShown, or when the timer fires first."""
        if self._snapshot_timer is not None:
            self._snapshot_timer.stop()
            self._snapshot_timer = None
            self._first_snapshot()

    @work(thread=True, group="prepare")
    def _prepare_writes(self) -> None:
        """Import what a grade's append needs now, so the first grade commits without that wait."""
        self.source.prepare_writes()

    @work(thread=True, group="snapshot")
    def _first_snapshot(self) -> None:
        try:
            if not self._watching:
                self.call_from_thread(self._watch, self.source.follows)
            snapshot = self.source.snapshot()
        except Exception as exc:  # reported, not raised: a worker must not take the app down
            self.post_message(WorkFailed(describe_failure(exc)))
            self.call_from_thread(self.call_later, self._snapshot_landed, True)  # what waited says so
            return
        self.call_from_thread(self._took_snapshot, snapshot)

    def _watch(self, follows: bool) -> None:
        """Follow other writers: a database store's `wait` follows commits; the app polls a file."""
        self._watching = True
        if self.poll_seconds <= 0:
            return
        if follows:
            self._watch_log()
        else:
            self.set_interval(self.poll_seconds, self._poll)

    def _took_snapshot(self, snapshot: SourceSnapshot) -> None:
        if self.snapshot is None or snapshot.version >= self.snapshot.version:
            self.snapshot = snapshot
        self._report_problems(snapshot.problems)
        self.call_later(self._snapshot_landed)

    async def _snapshot_landed(self, failed: bool = False) -> None:
        """Run what waited for the first snapshot (`n`, `:`), then hand on the keys typed after it.
        After a failure, what waited finds no snapshot and says so; what asks later reads again."""
        waiting, self._after_snapshot = self._after_snapshot or [], None if failed else []
        for call in waiting:
            await call()
        self._first_failed = failed
        self.keys.release(SNAPSHOT_HOLD)

    # ---------------------------------------------------------------- live updates

    def _poll(self) -> None:
        if any(worker.group == "poll" and worker.is_running for worker in self.workers):
            return  # the last read has not finished: do not queue another behind it
        self._check_source()

    @work(thread=True, group="poll")
    def _check_source(self, wrote: bool = False) -> None:
        """Not exclusive: a check that bumped the version must always post its snapshot."""
        try:
            snapshot = self.source.check(wrote=wrote)
        except Exception as exc:  # reported, not raised: a worker must not take the app down
            self.post_message(WorkFailed(describe_failure(exc)))
            return
        if snapshot is not None:
            self.post_message(SourceChanged(snapshot))

    @work(thread=True, exclusive=True, group="watch")
    def _watch_log(self) -> None:
        """Read the log as soon as the store's `wait` finds another writer's commit
        (core/log/eventstore.py); waits are bounded, so the app can stop between two.

        A commit counts as seen only once it was read: when the read fails (the connection was
        lost: a failover, a pooler, `pg_terminate_backend`), the next round reconnects and reads
        again, instead of waiting for a commit after one that never reached the screens."""
        worker = get_current_worker()
        seen, failing = 0, False
        while not worker.is_cancelled:
            try:
                end = self.source.wait_for_commit(seen, WATCH_SECONDS)
                if end != seen:
                    snapshot = self.source.check()
                    seen = end
                    if snapshot is not None:
                        self.post_message(SourceChanged(snapshot))
                failing = False
            except Exception as exc:  # reported once per outage, retried: the database may come back
                if not failing:
                    self.post_message(WorkFailed(describe_failure(exc)))
                failing = True
                time.sleep(WATCH_SECONDS)

    @on(SourceChanged)
    def _source_changed(self, event: SourceChanged) -> None:
        snapshot = event.snapshot
        if snapshot.version <= self.data_version:
            return  # a later change's message arrived first (the writer and the poll are two threads)
        self.snapshot = snapshot
        self.data_version = snapshot.version
        self.writes.settle(snapshot.version, snapshot.grade_of)
        self._report_problems(snapshot.problems)
        if self.grading_order == "informative":
            self._refresh_queue()

    def set_grading_order(self, order: str, session_ids: tuple[str, ...] | None) -> None:
        """The order `n` follows from now on, with its sessions when known (see the grading queue)."""
        self.grading_order, self.queue_ids = order, session_ids
        if order == "informative" and session_ids is None:
            self._refresh_queue()

    @work(thread=True, exclusive=True, group="queue")
    def _refresh_queue(self) -> None:
        from lesson_credit.tui.records_views import queue_view

        number = self._queue_reads.start()
        try:
            _, queue = queue_view(self.source, "informative")
        except Exception as exc:  # reported, not raised: a worker must not take the app down
            self.post_message(WorkFailed(describe_failure(exc)))
            return
        self.call_from_thread(self._queue_computed, queue.session_ids, number)

    def _queue_computed(self, session_ids: tuple[str, ...], number: int) -> None:
        """Not after the order of a computation started later (tui/newest.py): an older one landing late replaced it."""
        if self.grading_order == "informative" and self._queue_reads.shows("queue", number):
            self.queue_ids = session_ids

    @on(WorkspaceWritten)
    def _workspace_written(self) -> None:
        self._check_source(wrote=True)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Textual's notify; errors and warnings last twice as long as a confirmation. Held while a question or
        the help is up; once none is, those held are shown first (they are older)."""
        if timeout is None and severity != "information":
            timeout = 2 * TOAST_SECONDS
        toast = {"message": message, "title": title, "severity": severity, "timeout": timeout, "markup": markup}
        for shown in self.held_toasts.to_show(self, toast):
            super().notify(**shown)

    @on(ToastHoldersChanged)
    def _toast_holders_changed(self) -> None:
        for toast in self.held_toasts.changed(self):
            super().notify(**toast)

    @on(Notify)
    def _toast_added(self) -> None:
        """Once Textual has shown the new toast (its own Notify handler runs after this one), drop the
        oldest beyond TOASTS_SHOWN, confirmations before errors and warnings: three quick commits
        leave two one-line toasts, not a stack over the credit table."""
        self.call_next(trim_toasts, self, TOASTS_SHOWN)

    def _report_problems(self, problems: Problems) -> None:
        """Notify each problem once; the affected lesson or session says what is wrong itself."""
        for said, kind, title in (
            (problems.log_missing, "missing", "The event log is missing or empty"),
            (problems.records_missing, "records", "The gptme-sessions records are missing"),
            (problems.config, "config", "config.toml could not be read"),
        ):
            if said is not None and self._first_time(f"{kind}:{said}"):
                self.notify(one_line(said), title=title, severity="warning", markup=False)
        log = [p for p in problems.log if self._first_time(f"log:{p}")]
        lessons = [p for p in problems.lessons if self._first_time(f"lesson:{p}")]
        if log:
            self.notify(
                _listing(log),
                title=f"{counted(len(log), 'unreadable line')} in {self.source.store_name}",
                severity="warning",
                markup=False,
            )
        if lessons:
            self.notify(
                _listing(lessons),
                title=f"{counted(len(lessons), 'lesson file')} could not be loaded"
                if all(p.broken for p in lessons)
                else f"{counted(len(lessons), 'problem')} in the lesson library",
                severity="warning",
                markup=False,
            )

    def _first_time(self, key: str) -> bool:
        if key in self._notified:
            return False
        self._notified.add(key)
        return True

    @on(WorkFailed)
    def _work_failed(self, event: WorkFailed) -> None:
        if self.source.open_error is not None:
            self.exit()  # the workspace could not be opened: `run` raises why, as the CLI did before
            return
        self.notify(one_line(event.reason), title="Could not finish", severity="error", markup=False)

    def after_first_snapshot(self, call: Callable[[], Awaitable[None]]) -> bool:
        """`call` once the first snapshot (its session ids) has landed, the keys typed after it waiting
        too. When it failed, a later call reads again; False for what waited for the failed read (its
        failure was reported), nothing waiting."""
        if self._after_snapshot is None:
            if not self._first_failed:
                return False
            self._after_snapshot, self._first_failed = [], False
            self._first_snapshot()
        self._after_snapshot.append(call)
        self.keys.hold(SNAPSHOT_HOLD)
        self._start_first_snapshot()
        return True


def _listing(problems: Sequence[object]) -> str:
    shown = [one_line(str(p)) for p in problems[:PROBLEMS_IN_NOTICE]]
    return listed(shown, PROBLEMS_IN_NOTICE, "\n", total=len(problems), ellipsis=True)


def run(workspace: Workspace | Opening) -> None:
    """Open the dashboard (the CLI has called `gc_settings.start` before importing it). An Opening
    that fails ends it and is raised here: the CLI's one line and exit code."""
    gc_settings.freeze()
    app = LessonCreditApp(WorkspaceSource(workspace))
    app.run()
    if app.source.open_error is not None:
        raise app.source.open_error
