"""The joint fit and live updates at scale: the fit of a big log runs in a child process
and is kept per log version; while a newer log is fitted, the effects fitted before stay on screen;
a change reads its own sessions' ids, not all of them again."""

from __future__ import annotations

import asyncio
import subprocess
import threading
import types
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.bandit import policy as policy_mod
from lesson_credit.core.model import beta as beta_mod
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui import effects_job
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.lesson_cells import LessonCells
from lesson_credit.tui.screens.lessons import LessonsScreen
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.source_views import LessonsView
from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.tui.tui_fixture import CONFIG_REL as CONFIG
from tests.tui.tui_fixture import analysis_session, lessons_with_effects, settle, wait_until

SIZE = (120, 40)


def _add_session(root: Path, i: int) -> None:
    """Another process records analysis session i (a new log version)."""
    _, text, lessons, reward, category = analysis_session(i)
    journal = root / "state" / "journals" / f"late-{i}.md"
    journal.write_text(text, encoding="utf-8")
    Workspace(root).record(f"late-{i}", journal, lessons, reward=reward, category=category)


def test_the_fit_of_a_big_log_runs_in_a_child_and_is_kept_per_log_version(
    analysis_workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(effects_job, "ELSEWHERE_FROM", 0)  # every log counts as big here
    started: list[dict[str, Any]] = []
    real_run = effects_job.EffectsJob.run

    def counting(job: effects_job.EffectsJob, request: dict[str, Any], *asked: Any) -> dict[str, float]:
        started.append(request)
        return real_run(job, request, *asked)

    monkeypatch.setattr(effects_job.EffectsJob, "run", counting)
    root = analysis_workspace.root
    expected = Workspace(root, use_cache=False).effects()
    version, effects = WorkspaceSource(analysis_workspace).effects()
    assert effects == pytest.approx(expected, abs=1e-12) and len(started) == 1
    # (under the joint policy, P(top-k) from the same child: `effects_job.both`)
    assert started[0] == {"root": str(root), "store": None, "effects": True, "p_top_k": 0}
    # a new dashboard on the same log: the child's fit was kept with the log version it read
    again = WorkspaceSource(Workspace(root))
    assert again.known_effects() is not None and again.effects()[1] == effects and len(started) == 1
    _add_session(root, 41)  # another process: a new log version
    assert again.check() is not None and again.known_effects() is None
    assert again.effects()[1] == pytest.approx(Workspace(root, use_cache=False).effects(), abs=1e-12)
    assert len(started) == 2


def test_p_top_k_of_a_big_log_under_the_joint_policy_is_drawn_in_the_child(
    analysis_workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The joint policy's posterior is fitted from the design of every injection: at a million sessions
    it took the dashboard's peak RSS from ~370 MB to ~1 GB (bench dashboard_memory), under the source's
    lock. A big log's P(top-k) is drawn in the joint fit's child; the dashboard's process fits nothing."""
    monkeypatch.setattr(effects_job, "ELSEWHERE_FROM", 0)  # every log counts as big here
    root = analysis_workspace.root
    expected = Workspace(root).p_top_k(seed=0)  # in this process, before the counting below
    fitted_here: list[int] = []
    real_posterior = Workspace.joint_posterior

    def counted(ws: Workspace) -> Any:  # in this process only: the child's Workspace is not patched
        fitted_here.append(1)
        return real_posterior(ws)

    monkeypatch.setattr(Workspace, "joint_posterior", counted)
    started: list[dict[str, Any]] = []
    real_run = effects_job.EffectsJob.run

    def counting(job: effects_job.EffectsJob, request: dict[str, Any], *asked: Any) -> dict[str, float]:
        started.append(request)
        return real_run(job, request, *asked)

    monkeypatch.setattr(effects_job.EffectsJob, "run", counting)
    version, p = WorkspaceSource(analysis_workspace).p_top_k()
    assert version == analysis_workspace.version and p == expected
    assert started == [{"root": str(root), "store": None, "effects": True, "p_top_k": 0}] and fitted_here == []


def _fitted(screen: LessonsScreen) -> bool:
    """The Lessons table shows the joint effects of the log as read, and P(top-k)."""
    view = screen.view
    return view is not None and view.effects_of == view.version and view.p_top_k is not None


async def test_a_big_logs_effects_and_p_top_k_come_from_one_child_per_log_version(
    analysis_workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Lessons screen asks for the joint effects and for P(top-k) at each log version; a big log's
    were two children one after the other, the effects' and the posterior's, most of their work the same
    passes over the log (at a million sessions ~8 s of CPU each: 18.5 s until both showed). One child
    makes both (`Workspace.fit_both`), the other asker takes its answer: the same numbers."""
    monkeypatch.setattr(effects_job, "ELSEWHERE_FROM", 0)  # every log counts as big here
    root = analysis_workspace.root
    expected_effects = Workspace(root, use_cache=False).effects()
    expected_p = Workspace(root, use_cache=False).p_top_k(seed=0)
    children: list[list[str]] = []
    real_popen = subprocess.Popen

    def popen(cmd: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        children.append(cmd)
        return real_popen(cmd, **kwargs)

    monkeypatch.setattr(effects_job, "subprocess", types.SimpleNamespace(Popen=popen, PIPE=subprocess.PIPE))
    app = LessonCreditApp(analysis_workspace, poll_seconds=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, LessonsScreen)
        await wait_until(pilot, partial(_fitted, screen))
        assert screen.view is not None and len(children) == 1  # two on the old code
        assert dict(screen.view.effects or {}) == expected_effects and dict(screen.view.p_top_k or {}) == expected_p
        first = screen.view.version
        _add_session(root, 43)  # another process: a new log version, both asked for again
        await wait_until(pilot, lambda: screen.view is not None and screen.view.version > first)
        await wait_until(pilot, partial(_fitted, screen))
        assert len(children) == 2
        assert dict(screen.view.effects or {}) == Workspace(root, use_cache=False).effects()


def test_the_joint_fits_run_one_child_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The effects and P(top-k) workers ask for their fits at once: two children would hold both fits'
    memory together (~430 MB + ~950 MB at a million sessions). A second `run` waits for the first."""
    entered, release = threading.Event(), threading.Event()
    children: list[int] = []

    class Child:  # stands for the child process: answers once released
        returncode = 0

        def __init__(self, cmd: list[str], **kwargs: Any) -> None:
            children.append(len(children))
            entered.set()

        def communicate(self, given: bytes) -> tuple[bytes, bytes]:
            release.wait(30)
            return b'{"effects": {"a": 1.0}, "p_top_k": {"a": 0.5}}', b""

    monkeypatch.setattr("subprocess.Popen", Child)  # (effects_job calls subprocess.Popen)
    job = effects_job.EffectsJob()
    answers: list[dict[str, float]] = []
    first = threading.Thread(target=lambda: answers.append(job.run({"root": "r", "store": None})))
    second = threading.Thread(target=lambda: answers.append(job.run({"root": "r", "store": None, "p_top_k": 0})))
    first.start()
    assert entered.wait(30)
    second.start()
    second.join(1.0)  # on the old code the second child started at once
    assert children == [0] and second.is_alive()
    release.set()
    first.join(30)
    second.join(30)
    assert children == [0, 1] and sorted(answers, key=str) == [{"a": 0.5}, {"a": 1.0}]


async def test_effects_fitted_before_stay_on_screen_while_a_newer_log_is_fitted(
    analysis_workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = LessonCreditApp(analysis_workspace, poll_seconds=0.05)
    async with app.run_test(size=SIZE) as pilot:
        screen = await lessons_with_effects(pilot)
        assert screen.view is not None
        first = screen.view.version
        release = threading.Event()
        real = WorkspaceSource.effects

        def slow(source: WorkspaceSource) -> Any:
            release.wait(30)
            return real(source)

        monkeypatch.setattr(WorkspaceSource, "effects", slow)  # the next fit waits
        root = analysis_workspace.root
        _add_session(root, 42)
        await wait_until(pilot, lambda: screen.view is not None and screen.view.version > first)
        view = screen.view
        assert view is not None and view.effects is not None and view.effects_of == first  # shown while refitting
        table = screen.query_one("#lessons-table", ThemedTable)
        column = [str(key.value) for key in table.columns].index("effect")
        cell = str(table.get_row("tools/retry-budget.md")[column]).strip()
        assert cell == f"{view.effects['tools/retry-budget.md']:+.3f}"  # a number, not "…"
        release.set()
        await wait_until(pilot, lambda: screen.view is not None and screen.view.effects_of == screen.view.version)


async def test_one_fit_at_a_time_whatever_the_changes_and_the_last_one_is_fitted(
    analysis_workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each change used to start a worker that waited in `effects()` behind the fit under way (a
    cancelled thread worker keeps its thread): four commits during one 1M-session fit held four of the
    six threads Textual's workers share on two cores, and the next reload waited 17 s for a thread.
    One worker waits for the fit; when its answer is for an older log, the next fit starts then."""
    app = LessonCreditApp(analysis_workspace, poll_seconds=0.05)
    async with app.run_test(size=SIZE) as pilot:
        screen = await lessons_with_effects(pilot)
        release = threading.Event()
        inside, most, calls = [0], [0], [0]
        guard = threading.Lock()
        real = WorkspaceSource.effects

        def slow(source: WorkspaceSource) -> Any:
            with guard:
                inside[0] += 1
                calls[0] += 1
                most[0] = max(most[0], inside[0])
            try:
                fitted = real(source)  # the log as read now ...
                release.wait(30)  # ... answered once released
                return fitted
            finally:
                with guard:
                    inside[0] -= 1

        monkeypatch.setattr(WorkspaceSource, "effects", slow)  # every fit's answer waits until released
        root = analysis_workspace.root
        for i in range(4):  # four commits, each shown before the next
            assert screen.view is not None
            shown = screen.view.version
            _add_session(root, 60 + i)  # (none with the retired lesson: i % 6 != 4)
            await wait_until(pilot, partial(_newer_than, screen, shown))
        await wait_until(pilot, lambda: calls[0] >= 1)
        await asyncio.sleep(0.3)
        await pilot.pause()
        assert most[0] == 1 and calls[0] == 1  # the three later changes started no worker of their own
        release.set()
        await wait_until(pilot, lambda: screen.view is not None and screen.view.effects_of == screen.view.version)
        assert most[0] == 1 and calls[0] == 2  # the first answer was an older log's: one more fit, for the last
        assert screen.view is not None
        expected = Workspace(root, use_cache=False).effects()
        assert screen.view.effects == pytest.approx(expected, abs=1e-12)


async def test_a_live_update_never_writes_out_the_view_or_its_cells(
    analysis_workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Textual describes a worker by the repr() of its arguments unless given a description, on the
    UI thread: the Lessons screen's reload passed the view's cells (3,000 lessons: 60 ms at every
    change; its intervals worker, at start-up, the view: 80 ms)."""
    app = LessonCreditApp(analysis_workspace, poll_seconds=0.05)
    async with app.run_test(size=SIZE) as pilot:
        screen = await lessons_with_effects(pilot)
        written: list[str] = []

        def spy(name: str) -> Callable[[object], str]:
            def written_out(_self: object) -> str:
                written.append(name)
                return name

            return written_out

        monkeypatch.setattr(LessonsView, "__repr__", spy("view"))
        monkeypatch.setattr(LessonCells, "__repr__", spy("cells"))
        assert screen.view is not None
        before = screen.view.version
        _add_session(analysis_workspace.root, 71)  # another process's commit
        await wait_until(pilot, lambda: screen.view is not None and screen.view.version > before)
        await wait_until(pilot, lambda: screen.view is not None and screen.view.effects_of == screen.view.version)
        await settle(pilot)
        assert written == []


@pytest.mark.parametrize("module", [beta_mod, policy_mod], ids=["seed", "joint"])
def test_the_draws_of_p_top_k_leave_the_source_free(
    analysis_workspace: Workspace, monkeypatch: pytest.MonkeyPatch, module: Any
) -> None:
    """A live update's read takes the source's lock: P(top-k)'s Monte Carlo draws (0.3-0.8 s at 3,000
    lessons, started after every change) held it, and a commit landing then waited for them. Under
    the credit policy (Beta draws) and the joint one (normal draws, the default)."""
    if module is beta_mod:
        (analysis_workspace.root / CONFIG).parent.mkdir(parents=True, exist_ok=True)
        (analysis_workspace.root / CONFIG).write_text('[select]\npolicy = "seed"\n')
        analysis_workspace = Workspace(analysis_workspace.root)
    name = "p_top_k" if module is beta_mod else "p_top_k_normal"
    source = WorkspaceSource(analysis_workspace)
    free: list[bool] = []
    real = getattr(module, name)

    def drawing(*args: Any, **kwargs: Any) -> Any:
        other = threading.Thread(target=source.problems)  # another worker reading through the source
        other.start()
        other.join(10)
        free.append(not other.is_alive())
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, drawing)
    version, p = source.p_top_k()
    assert free == [True]
    assert version == analysis_workspace.version and p == Workspace(analysis_workspace.root).p_top_k(seed=0)


def test_a_change_reads_the_new_sessions_ids_and_a_new_read_all_again(
    ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = Workspace(ws_root)
    source = WorkspaceSource(ws)
    first = source.snapshot()
    before = list(first.session_ids)
    asked: list[tuple[int, int]] = []
    real = Workspace.session_ids_between

    def spy(workspace: Workspace, start: int, stop: int) -> tuple[str, ...]:
        asked.append((start, stop))
        return real(workspace, start, stop)

    other = Workspace(ws_root)
    other.record("later-1", _journal(ws_root), [_a_lesson(other)])
    monkeypatch.setattr(Workspace, "session_ids_between", spy)
    snapshot = source.check()
    assert snapshot is not None and list(snapshot.session_ids) == [*before, "later-1"]
    assert asked == [(len(before), len(before) + 1)]  # only the new session's id was read
    assert list(first.session_ids) == before  # the earlier snapshot's view did not grow
    log = ws_root / "state" / "lesson-thompson" / "sessions.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[1:]))  # another program drops the first line: read anew
    snapshot = source.check()
    expected = list(Workspace(ws_root, use_cache=False).session_table().session_ids)
    assert snapshot is not None and list(snapshot.session_ids) == expected and asked[-1][0] == 0


def _newer_than(screen: LessonsScreen, version: int) -> bool:
    return screen.view is not None and screen.view.version > version


def _journal(root: Path) -> Path:
    path = root / "later.md"
    path.write_text("a journal")
    return path


def _a_lesson(ws: Workspace) -> str:
    return sorted(lesson.id for lesson in ws.library().lessons if lesson.status == "active")[0]
