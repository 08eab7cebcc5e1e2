"""The dashboard app: wires the screens to one Workspace and watches the log for changes."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from functools import partial
from typing import Any, ClassVar

from textual import on, work
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.reactive import reactive
from textual.screen import Screen
from textual.worker import get_current_worker

from core import beta as beta_mod
from core.store import EventLog
from core.workspace import Workspace
from tui.messages import LogChanged, WorkFailed, WorkspaceWritten
from tui.screens.analysis import AnalysisScreen
from tui.screens.base import describe_failure
from tui.screens.confirm import ConfirmScreen
from tui.screens.grade_value import GradeValueScreen
from tui.screens.health import HealthScreen
from tui.screens.help import HelpScreen, HelpSection, as_binding, help_keys
from tui.screens.lesson_rewards import LessonRewardsScreen
from tui.screens.lessons import LessonsScreen
from tui.screens.session_detail import SessionDetailScreen
from tui.screens.sessions import SessionsScreen
from tui.screens.simulation import SimulationScreen
from tui.screens.what_if import WhatIfScreen
from tui.source import Problems, WorkspaceSource
from tui.text import one_line

POLL_SECONDS = 1.0
WATCH_SECONDS = 1.0  # longest wait for a database store's NOTIFY before looking again
PROBLEMS_IN_NOTICE = 3
SCREENS_GROUP = Binding.Group("screens")
MODE_ACTIONS = ("show_lessons", "show_sessions", "show_analysis", "show_simulation", "show_health", "help")

HELP_SCREENS: tuple[tuple[str, type[Screen[Any]]], ...] = (
    ("Lessons", LessonsScreen),
    ("Sessions", SessionsScreen),
    ("Session detail", SessionDetailScreen),
    ("What-if", WhatIfScreen),
    ("Analysis", AnalysisScreen),
    ("Lesson rewards", LessonRewardsScreen),
    ("Simulation", SimulationScreen),
    ("Health", HealthScreen),
    ("Exact grade dialog", GradeValueScreen),
    ("Confirm dialog", ConfirmScreen),
)


class LessonCreditApp(App[None]):
    """Lessons and Sessions are modes (each keeps its own stack); detail screens push on top."""

    TITLE = "lesson-credit"

    BINDINGS: ClassVar[list[BindingType]] = [
        # one footer entry for the five screens (each key keeps its own description for help and the palette)
        Binding("l", "show_lessons", "Lessons", group=SCREENS_GROUP),
        Binding("s", "show_sessions", "Sessions", group=SCREENS_GROUP),
        Binding("a", "show_analysis", "Analysis", group=SCREENS_GROUP),
        Binding("m", "show_simulation", "Simulation", group=SCREENS_GROUP),
        Binding("h", "show_health", "Health", group=SCREENS_GROUP),
        Binding("question_mark", "help", "Help"),
        Binding("escape", "back", "Back", show=False),
        Binding("q", "quit", "Quit"),
    ]

    data_version: reactive[int] = reactive(0)
    """Bumped whenever the log changed; screens watch it and reload."""

    def __init__(self, workspace: Workspace, *, seed: int = 0, poll_seconds: float = POLL_SECONDS) -> None:
        super().__init__()
        beta_mod.load()  # before the event loop runs: a worker importing it would freeze the loop
        self.source = WorkspaceSource(workspace, seed=seed)
        self.poll_seconds = poll_seconds
        self._notified: set[str] = set()
        self.add_mode("lessons", partial(LessonsScreen, self.source))
        self.add_mode("sessions", partial(SessionsScreen, self.source))
        self.add_mode("analysis", partial(AnalysisScreen, self.source))
        self.add_mode("simulation", partial(SimulationScreen, self.source))
        self.add_mode("health", partial(HealthScreen, self.source))

    def on_mount(self) -> None:
        self.sub_title = self.source.name
        self.switch_mode("lessons")
        self._check_problems()
        self._prepare_writes()
        if self.poll_seconds > 0:
            if isinstance(self.source.workspace.log, EventLog):
                self.set_interval(self.poll_seconds, self._poll)
            else:  # a database store tells of each commit (LISTEN/NOTIFY): no polling
                self._watch_log()

    @work(thread=True, group="prepare")
    def _prepare_writes(self) -> None:
        """Import what a grade's append needs now, so the first grade commits without that wait."""
        self.source.workspace.log.prepare()

    # ---------------------------------------------------------------- live updates

    def _poll(self) -> None:
        if any(worker.group == "poll" and worker.is_running for worker in self.workers):
            return  # the last read has not finished: do not queue another behind it
        self._refresh_log()

    @work(thread=True, exclusive=True, group="poll")
    def _refresh_log(self) -> None:
        try:
            changed = self.source.refresh()
        except Exception as exc:  # reported, not raised: a worker must not take the app down
            self.post_message(WorkFailed(describe_failure(exc)))
            return
        if changed:
            self.post_message(LogChanged())

    @work(thread=True, exclusive=True, group="watch")
    def _watch_log(self) -> None:
        """Read the log as soon as the store says another writer committed (core/eventstore.py
        `wait`); waits are bounded, so the app can stop between two."""
        worker = get_current_worker()
        store = self.source.workspace.log
        seen, failing = 0, False
        while not worker.is_cancelled:
            try:
                end = store.wait(seen, WATCH_SECONDS)
                if end != seen:
                    seen = end
                    if self.source.refresh():
                        self.post_message(LogChanged())
                failing = False
            except Exception as exc:  # reported once per outage, retried: the database may come back
                if not failing:
                    self.post_message(WorkFailed(describe_failure(exc)))
                failing = True
                time.sleep(WATCH_SECONDS)

    @on(LogChanged)
    def _log_changed(self) -> None:
        self.data_version += 1
        self._check_problems()

    @on(WorkspaceWritten)
    def _workspace_written(self) -> None:
        self.data_version += 1

    @work(thread=True, exclusive=True, group="problems")
    def _check_problems(self) -> None:
        try:
            problems = self.source.problems()
        except Exception as exc:  # reported, not raised: a worker must not take the app down
            self.post_message(WorkFailed(describe_failure(exc)))
            return
        self.call_from_thread(self._report_problems, problems)

    def _report_problems(self, problems: Problems) -> None:
        """Notify each problem once; the affected lesson or session says what is wrong itself."""
        log = [p for p in problems.log if self._first_time(f"log:{p}")]
        lessons = [p for p in problems.lessons if self._first_time(f"lesson:{p}")]
        if log:
            self.notify(
                _listing(log),
                title=f"{len(log)} unreadable line(s) in sessions.jsonl",
                severity="warning",
                markup=False,
            )
        if lessons:
            self.notify(
                _listing(lessons),
                title=f"{len(lessons)} lesson file(s) could not be loaded",
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
        self.notify(one_line(event.reason), title="Could not finish", severity="error", markup=False)

    # ---------------------------------------------------------------- navigation

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in MODE_ACTIONS and self.screen.is_modal:
            return False  # a dialog is open: answer it first
        return True

    def action_show_lessons(self) -> None:
        self._show_mode("lessons")

    def action_show_sessions(self) -> None:
        self._show_mode("sessions")

    def action_show_analysis(self) -> None:
        self._show_mode("analysis")

    def action_show_simulation(self) -> None:
        self._show_mode("simulation")

    def action_show_health(self) -> None:
        self._show_mode("health")

    def _show_mode(self, mode: str) -> None:
        if self.current_mode == mode:
            while len(self.screen_stack) > 1 and not self.screen.is_modal:
                self.pop_screen()
        else:
            self.switch_mode(mode)

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        show = self.get_key_display
        sections = [HelpSection("Anywhere", "Unless a text box has the focus.", help_keys(self.BINDINGS, show))]
        current = "Anywhere"
        for title, screen_class in HELP_SCREENS:
            about = str(getattr(screen_class, "HELP", "") or "")
            sections.append(HelpSection(title, about, help_keys(screen_class.BINDINGS, show)))
            if type(self.screen) is screen_class:
                current = title
        self.push_screen(HelpScreen(sections, current))

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The palette lists every key binding of the current screen and the app, then Textual's own."""
        seen: set[str] = set()
        for node, bindings in ((screen, type(screen).BINDINGS), (self, self.BINDINGS)):
            for entry in bindings:
                binding = as_binding(entry)
                if not binding.description or binding.action in seen:
                    continue
                seen.add(binding.action)
                keys = binding.key_display or self.get_key_display(Binding(binding.key.split(",")[0], binding.action))
                yield SystemCommand(binding.description, f"key: {keys}", partial(node.run_action, binding.action))
        yield from super().get_system_commands(screen)


def _listing(problems: Sequence[object]) -> str:
    shown = "\n".join(one_line(str(p)) for p in problems[:PROBLEMS_IN_NOTICE])
    if len(problems) > PROBLEMS_IN_NOTICE:
        shown += f"\n… and {len(problems) - PROBLEMS_IN_NOTICE} more"
    return shown


def run(workspace: Workspace) -> None:
    LessonCreditApp(workspace).run()
