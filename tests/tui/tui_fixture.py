"""Deterministic workspaces for the dashboard tests (a small one, and forty sessions for Analysis), a fixed clock,
and the Pilot steps many tests share (settle, open a session)."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from textual.coordinate import Coordinate
from textual.pilot import Pilot
from textual.widgets import DataTable

from lesson_credit.core.base.files import StoreUnavailable
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.health import HealthScreen
from lesson_credit.tui.screens.lessons import LessonsScreen
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from lesson_credit.tui.screens.sessions import SessionsScreen
from tests.support.layout import CONFIG_REL, FIXED_NOW, LOG_REL, STATE_REL, fixed_clock
from tests.support.textual_private import messages_waiting, toasts_laid_out, type_ahead
from tests.support.waits import task_waits, thread_waits

__all__ = ["CONFIG_REL", "FIXED_NOW", "LOG_REL", "STATE_REL", "fixed_clock"]  # the layout, re-exported

FLOOR = 0.3  # the default

MARKUP_JOURNAL = "Tried [red]boom[/] and \x1b[31mred\x1b[0m; then git worktree add.\n\tindented\tline\n"


def lesson(keywords: list[str], title: str, status: str = "active", description: str = "A test lesson.") -> str:
    return "\n".join(
        [
            "---",
            "match:",
            f"  keywords: {json.dumps(keywords)}",
            f"status: {status}",
            f"description: {json.dumps(description)}",
            "---",
            f"# {title}",
            "",
            "Body.",
            "",
        ]
    )


LESSONS = {
    "tools/git-worktree.md": lesson(["git worktree", "stale branch"], "Keep worktrees tidy"),
    "tools/shell-quoting.md": lesson(["quote", "shell", "xargs"], "Quote shell arguments"),
    "testing/run-tests.md": lesson(["pytest", "tests pass"], "Run the tests before claiming"),
    "workflow/small-commits.md": lesson(["commit"], "Small focused commits"),
    "communication/ask-first.md": lesson(["rm -rf", "destructive"], "Ask before destructive", status="deprecated"),
    "tools/old-lesson.md": lesson(["legacy"], "Removed after logging"),  # deleted below: becomes missing
}

JOURNALS = {
    "s1.md": "Set up a git worktree for the fix.\nRan pytest; the git worktree was stale.\n",
    "s2.md": "Had to quote the shell glob, then commit the change.\n",
    "s3.md": MARKUP_JOURNAL,
    "s4.md": "Ran pytest and made one commit.\n",
    "s5.md": "Another git worktree session with a shell loop.\n",
}

# (session id, journal, lessons, reward or None for pending, category, timestamp)
SESSIONS: list[tuple[str, str, list[str], float | None, str, str]] = [
    (
        "s1",
        "s1.md",
        ["tools/git-worktree.md", "testing/run-tests.md", "tools/shell-quoting.md"],
        0.8,
        "code",
        "2026-03-01T10:00:00Z",
    ),
    (
        "s2",
        "s2.md",
        ["tools/shell-quoting.md", "workflow/small-commits.md", "tools/old-lesson.md"],
        0.4,
        "code",
        "2026-03-02T11:00:00Z",
    ),
    ("s3", "s3.md", ["tools/git-worktree.md", "workflow/small-commits.md"], 0.6, "ops", "2026-03-03T12:00:00Z"),
    ("s4", "s4.md", ["testing/run-tests.md", "workflow/small-commits.md"], None, "code", "2026-03-04T13:00:00Z"),
]

NEW_SESSION = ("s5", "s5.md", ["tools/git-worktree.md", "tools/shell-quoting.md"], 0.9, "code", "2026-03-05T14:00:00Z")


def build_workspace(root: Path) -> Path:
    """Write the lessons and journals, record the sessions, then delete one lesson (now `missing`)."""
    root.mkdir(parents=True, exist_ok=True)
    for lesson_id, text in LESSONS.items():
        path = root / "lessons" / lesson_id
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    journals = root / "state" / "journals"
    journals.mkdir(parents=True, exist_ok=True)
    for name, text in JOURNALS.items():
        (journals / name).write_text(text, encoding="utf-8")
    ws = Workspace(root, clock=fixed_clock)
    for session in SESSIONS:
        record(ws, root, session)
    (root / "lessons" / "tools" / "old-lesson.md").unlink()
    return root


# A lesson of 200 keywords, each 50 times in its session's journal (60,000 characters): `k000x` ... `k199x`, each
# with the space or newline after it 6 characters, 200 of them a line (1,200 characters), 50 lines.
HOSTILE_KEYWORDS = [f"k{i:03d}x" for i in range(200)]
HOSTILE_JOURNAL = (" ".join(HOSTILE_KEYWORDS) + "\n") * 50
HOSTILE_SESSION = ("s6", "s6.md", ["tools/hostile.md"], 0.7, "code", "2026-03-06T15:00:00Z")


def add_hostile_session(root: Path) -> None:
    """The hostile lesson and its session (HOSTILE_SESSION), recorded into the fixture workspace at `root`."""
    (root / "lessons" / "tools" / "hostile.md").write_text(lesson(HOSTILE_KEYWORDS, "Hostile"), encoding="utf-8")
    (root / "state" / "journals" / "s6.md").write_text(HOSTILE_JOURNAL, encoding="utf-8")
    record(Workspace(root, clock=fixed_clock), root, HOSTILE_SESSION)


def record(ws: Workspace, root: Path, session: tuple[str, str, list[str], float | None, str, str]) -> None:
    session_id, journal, lessons, reward, category, stamp = session
    ws.record(
        session_id,
        root / "state" / "journals" / journal,
        lessons,
        reward=reward,
        category=category,
        timestamp=stamp,
    )


def log_lines(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (root / LOG_REL).read_text(encoding="utf-8").splitlines() if line.strip()]


def weight(salience: float, floor: float = FLOOR) -> float:
    return floor + (1 - floor) * salience


# ---------------------------------------------------------------------------- a workspace for the Analysis screen

ANALYSIS_LESSONS = {
    "tools/retry-budget.md": lesson(["retry budget"], "Cap retries"),  # helps
    "tools/force-push.md": lesson(["force push"], "Never force push shared branches"),  # hurts
    "workflow/commit-often.md": lesson(["commit"], "Commit often"),  # in most sessions; 'commit' is everywhere
    "docs/readme-first.md": lesson(["readme"], "Read the README first"),  # no effect
    "workflow/rebase.md": lesson(["rebase"], "Rebase before merging"),  # too few sessions
    "tools/retired.md": lesson(["legacy"], "Retired lesson"),  # deleted after logging
}
ANALYSIS_CATEGORIES = ("code", "ops", "docs")
ANALYSIS_BASELINE = {"code": 0.6, "ops": 0.45, "docs": 0.7}
ANALYSIS_SESSIONS = 40


def analysis_session(i: int) -> tuple[str, str, list[str], float, str]:
    """(selection context, journal text, lessons, reward, category) of session i: deterministic, known effects."""
    category = ANALYSIS_CATEGORIES[i % 3]
    lessons = []
    if i % 5 == 0:
        lessons.append("tools/retry-budget.md")
    if i % 5 == 2:
        lessons.append("tools/force-push.md")
    if i % 5 in (0, 1, 3):
        lessons.append("workflow/commit-often.md")
    if i % 4 == 1:
        lessons.append("docs/readme-first.md")
    if i in (7, 19, 33):
        lessons.append("workflow/rebase.md")
    if i % 6 == 4:
        lessons.append("tools/retired.md")
    if not lessons:
        lessons.append("docs/readme-first.md")
    effect = 0.2 * ("tools/retry-budget.md" in lessons) - 0.25 * ("tools/force-push.md" in lessons)
    jitter = ((i * 37) % 11 - 5) / 50
    reward = round(min(1.0, max(0.0, ANALYSIS_BASELINE[category] + effect + jitter)), 2)
    mentions = {
        "tools/retry-budget.md": "kept a retry budget",
        "tools/force-push.md": "did a force push",
        "workflow/commit-often.md": "made a commit",
        "docs/readme-first.md": "read the readme",
        "workflow/rebase.md": "ran a rebase",
        "tools/retired.md": "touched legacy code",
    }
    text = f"Session {i}: made a commit. " + " ".join(mentions[lid] for lid in lessons) + ".\n"
    # candidates: the injected lessons and, in some sessions, others that matched but were not picked
    candidates = [lid for j, lid in enumerate(mentions) if lid in lessons or (i + j) % 3 == 0]
    context = f"Task {i}: commit the change. " + " ".join(mentions[lid] for lid in candidates) + "."
    return context, text, lessons, reward, category


def build_analysis_workspace(root: Path) -> Path:
    """Forty graded sessions with selection propensities: some lessons with enough data, some flagged."""
    root.mkdir(parents=True, exist_ok=True)
    for lesson_id, text in ANALYSIS_LESSONS.items():
        path = root / "lessons" / lesson_id
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    journals = root / "state" / "journals"
    journals.mkdir(parents=True, exist_ok=True)
    ws = Workspace(root, clock=fixed_clock)
    start = dt.datetime(2026, 2, 1, 9, 0, tzinfo=dt.UTC)
    sessions = [analysis_session(i) for i in range(ANALYSIS_SESSIONS)]
    share = {lid: sum(lid in s[2] for s in sessions) / len(sessions) for lid in ANALYSIS_LESSONS}
    for i, (context, text, lessons, reward, category) in enumerate(sessions):
        journal = journals / f"a{i:02d}.md"
        journal.write_text(text, encoding="utf-8")
        session_id = f"a{i:02d}"
        stamp = (start + dt.timedelta(hours=12 * i)).strftime("%Y-%m-%dT%H:%M:%SZ")
        # the selection of a trial another tool ran (docs/format.md §5.4): it chose the session's lessons among the
        # context's candidates, each at its share of the design's sessions, and the record names what it chose, as a
        # hook passes it (a candidate the draw passed over that the record named would be read as included during
        # the session). `select`'s own draw (the joint policy: adaptive, most of its propensities 0 or 1 here) would
        # not follow the design whose effects the tests check.
        candidates = list(ws.select(context, k=len(lessons), log=False, draws=1).candidates)  # what the context matched
        selection = {
            "type": "selection",
            "session_id": session_id,
            "timestamp": stamp,
            "k": len(lessons),
            "candidates": candidates,
            "selected": lessons,
            "propensity": {lid: share[lid] for lid in candidates},
        }
        with (root / LOG_REL).open("a", encoding="utf-8") as log:
            log.write(json.dumps(selection) + "\n")
        ws.record(session_id, journal, lessons, reward=reward, category=category, timestamp=stamp)
    (root / "lessons" / "tools" / "retired.md").unlink()
    return root


def burst(pilot: Any, *keys: str) -> None:
    """Queue keys at the terminal driver all at once, the way a terminal delivers fast typing (`pilot.press`
    idles after each key, which lets what the key started finish first). A key is a character or its name."""
    type_ahead(pilot.app, *keys)


SETTLE_LIMIT_S = 300.0


async def settle(pilot: Any) -> None:
    """Let workers finish and their messages land (a result can start another worker).

    Polls rather than awaiting workers.wait_for_complete(): an exclusive worker replaced by a
    newer one ends cancelled, and waiting on it would raise WorkerCancelled."""
    import asyncio

    def busy() -> bool:
        return bool(busy_with())

    def busy_with() -> list[str]:
        """What keeps the app busy, by name (an app that never settles fails saying which)."""
        if not pilot.app.is_running:
            return []  # it stopped (an exception ends the app): nothing more will happen
        tables = pilot.app.screen.query("ThemedTable")  # a big table fills in batches
        # a DataTable measures its new rows and columns when it is next idle, which on a loaded machine can
        # come after the pause: a test reading sizes waits for it (textual 8.2.8 names). (ThemedTable sizes its
        # columns as rows are added, so no frame shows them at label widths: test_tui_table_widths.py)
        measuring = any(t._require_update_dimensions or t._updated_cells for t in pilot.app.screen.query("DataTable"))
        # a screen just pushed (or resized) is laid out when it is next idle: until then its widgets have no
        # size, and a test reading one read 0 on a loaded machine (Textual's flag, 8.2.8 names)
        measuring = measuring or pilot.app.screen._layout_required
        # a worker is pending from the key that starts it until its task first runs, which on a loaded machine can
        # come after a pause: pending counts as busy
        working = [f"worker {w.name or w.group!r} {w.state.name}" for w in pilot.app.workers if not w.is_finished]
        # keys typed ahead wait in the app's key router (tui/keys.py) until the ones before them have settled;
        # the last one handed on goes from queue to queue (widget, screen, app: its binding) after that, and a
        # pause's "the CPU seems idle" is no sign it got there on a loaded machine: every queue empty is
        typing = getattr(getattr(pilot.app, "keys", None), "waiting", 0) > 0 or messages_waiting(pilot.app) > 0
        # a screen that holds the keys until its first load lands (a list, a transcript) is loading: its read
        # may wait for the source's lock behind other work, however long that takes on a loaded machine
        loading = getattr(pilot.app.screen, "keys_held", False)
        # a filter re-runs after a pause in typing (screens/sortable.py)
        filtering = getattr(pilot.app.screen, "filter_pending", False)
        # a question not drawn yet: only keys typed once it shows answer it (screens/confirm.py)
        asking = hasattr(pilot.app.screen, "asked_at") and pilot.app.screen.asked_at is None
        filling = any(t.filling for t in tables)
        states = {"typing": typing, "loading": loading, "filtering": filtering, "asking": asking}
        states |= {"filling": filling, "measuring": measuring}
        return working + [name for name, on in states.items() if on]

    def screen_name() -> str:
        return type(pilot.app.screen).__name__ if pilot.app.is_running else "no screen (the app stopped)"

    # done when two pauses in a row find nothing busy: a result that starts more work shows as busy
    # at the pause after it lands, however long the chain
    # (a bound, never a speed assertion: an app that never settles fails its test, not the whole run's clock)
    loop = asyncio.get_running_loop()
    deadline, quiet = loop.time() + SETTLE_LIMIT_S, 0
    while quiet < 2:
        await pilot.pause()
        if busy():
            quiet = 0
            while busy():
                if loop.time() > deadline:
                    what = f"{', '.join(busy_with()) or 'nothing now'}; on {screen_name()}"
                    # and where each thread and each task of ours waits: a wait seen once is named by that run
                    waits = "\n".join(thread_waits() + task_waits())
                    raise AssertionError(f"the app did not settle within {SETTLE_LIMIT_S:g} s ({what})\n{waits}")
                await asyncio.sleep(0.01)
        else:
            quiet += 1


def table_keys(table: DataTable[Any]) -> list[str]:
    """The row keys of a table, top to bottom."""
    return [str(table.coordinate_to_cell_key(Coordinate(row, 0)).row_key.value) for row in range(table.row_count)]


async def open_sessions(pilot: Pilot[Any]) -> SessionsScreen:
    """From anywhere: `s`, and wait for the Sessions screen's table."""
    await pilot.press("s")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, SessionsScreen)
    return screen


async def open_health(pilot: Pilot[Any]) -> HealthScreen:
    """From the start: let the first screen settle, `h`, and wait for the Health screen."""
    await settle(pilot)
    await pilot.press("h")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, HealthScreen)
    return screen


async def open_session(pilot: Pilot[Any], session_id: str) -> SessionDetailScreen:
    """From anywhere: Sessions, move to the session's row, enter."""
    screen = await open_sessions(pilot)
    table = screen.query_one("#sessions-table", DataTable)
    table.move_cursor(row=table_keys(table).index(session_id))
    await pilot.pause()
    await pilot.press("enter")
    await settle(pilot)
    detail = pilot.app.screen
    assert isinstance(detail, SessionDetailScreen)
    assert detail.session_id == session_id
    return detail


# ---------------------------------------------------------------------------- a big log for the Sessions screen

MANY_SESSIONS = 3000
MANY_CATEGORIES = ("code", "ops", "Docs", None)  # a session may have no category
MANY_LESSONS = ("tools/git-worktree.md", "tools/shell-quoting.md", "testing/run-tests.md")


@dataclass(frozen=True)
class ManySession:
    """What the Sessions screen should show for one generated session (after every grade)."""

    session_id: str
    category: str | None
    timestamp: str
    base: float | None  # None: pending
    grader: str | None  # None while pending


def many_session_id(i: int) -> str:
    return f"Run-{i:05d}-{'AbCdEfGh'[i % 8]}"  # mixed case: the filter ignores case


def build_many_sessions_workspace(root: Path, n: int = MANY_SESSIONS) -> list[ManySession]:
    """`n` sessions written straight to the log (in the published record shape), then manual grades
    for some of the pending ones. Returns the sessions in log order as the dashboard should show them.

    Two in five sessions are recorded pending; every tenth of those (i % 50 == 1) is graded later."""
    root.mkdir(parents=True, exist_ok=True)
    for lesson_id, text in LESSONS.items():
        path = root / "lessons" / lesson_id
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    start = dt.datetime(2025, 1, 1, 0, 0, tzinfo=dt.UTC)
    lines: list[str] = []
    grades: list[str] = []
    expected: list[ManySession] = []
    for i in range(n):
        session_id = many_session_id(i)
        category = MANY_CATEGORIES[i % len(MANY_CATEGORIES)]
        stamp = (start + dt.timedelta(hours=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
        pending = i % 5 in (1, 3)
        reward = None if pending else round((i * 37 % 101) / 100, 2)
        lessons = [
            {"path": lesson_id, "salience": (i + j) % 3 / 2, "reward": None}
            for j, lesson_id in enumerate(MANY_LESSONS[: 1 + i % 3])
        ]
        record: dict[str, Any] = {
            "type": "session",
            "session_id": session_id,
            "timestamp": stamp,
            "outcome": reward,
            "base_reward": reward,
            "lessons": lessons,
            "grader": None if pending else "heuristic",
        }
        if category is not None:
            record["category"] = category
        lines.append(json.dumps(record))
        if i % 50 == 1:  # pending when recorded, graded later
            grades.append(
                json.dumps(
                    {
                        "type": "grade",
                        "session_id": session_id,
                        "base_reward": 0.5,
                        "grader": "manual",
                        "timestamp": "2026-01-01T00:00:00Z",
                    }
                )
            )
            expected.append(ManySession(session_id, category, stamp, 0.5, "manual"))
        else:
            expected.append(ManySession(session_id, category, stamp, reward, None if pending else "heuristic"))
    log = root / LOG_REL
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("\n".join(lines + grades) + "\n", encoding="utf-8")
    return expected


async def wait_until(pilot: Any, done: Any, timeout: float = 60.0) -> None:
    """For thread work that outlives its Textual worker (a joint fit, a cancelled simulation's seed):
    poll `done()` between pauses; `timeout` is a generous bound, never a speed assertion."""
    import asyncio

    for _ in range(int(timeout / 0.05)):
        if done():
            return
        await asyncio.sleep(0.05)
        await pilot.pause()
    raise AssertionError("timed out")


async def lessons_with_effects(pilot: Any) -> LessonsScreen:
    """The Lessons screen once its first view has the joint effects (their fit runs in a worker)."""
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, LessonsScreen)
    await wait_until(pilot, lambda: screen.view is not None and screen.view.effects is not None)
    return screen


def headless_run(self: LessonCreditApp) -> None:
    """`App.run` without a terminal (120x40): what the dashboard does on one, drawn nowhere."""
    asyncio.run(self.run_async(headless=True, size=(120, 40)))


def as_on_a_terminal(monkeypatch: pytest.MonkeyPatch, *redirected: str) -> None:
    """The CLI asks capsys's stdin, stdout and stderr whether they are a terminal: all are, except those
    named (`"stdout"`...)."""
    for name in ("stdin", "stdout", "stderr"):
        monkeypatch.setattr(getattr(sys, name), "isatty", lambda tty=name not in redirected: tty)


async def until_asked(pilot: Any, timeout: float = 60.0) -> None:
    """Until a yes/no question is on screen, drawn: only keys typed from then on answer it (keys typed
    before it wait for the answer: screens/confirm.py). Polls, without waiting for other work (a held save,
    a write being retried); `timeout` is a generous bound, never a speed assertion."""
    await wait_until(pilot, lambda: getattr(pilot.app.screen, "asked_at", None) is not None, timeout)


async def toasts_shown(pilot: Any) -> None:
    """Until every toast the app holds is on screen and laid out: the rack mounts them when it next
    refreshes, which on a loaded machine can come after a fixed pause (a test's toasts must outlive the
    wait: NOTIFICATION_TIMEOUT)."""
    await wait_until(pilot, lambda: toasts_laid_out(pilot.app))


def failing_grades(app: LessonCreditApp) -> threading.Event:
    """The source's grades raise while the returned event is set (a stopped database)."""
    down = threading.Event()
    down.set()
    real = app.source.append_grade

    def append_grade(*args: Any, **kwargs: Any) -> Any:
        if down.is_set():
            raise StoreUnavailable("postgresql://db: cannot append: connection refused")
        return real(*args, **kwargs)

    app.source.append_grade = append_grade  # type: ignore[method-assign]
    return down
