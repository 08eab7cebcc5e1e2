"""The app's navigation (a mixin of LessonCreditApp): the screens its keys open, a session opened or the next
to grade, leaving a session with a draft (after asking), help, the command palette and quitting."""

from __future__ import annotations

import asyncio
import math
import sys
from collections.abc import Awaitable, Callable, Iterable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from textual import work
from textual.app import SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from lesson_credit.tui.screens.lazy import help_screens, is_session_detail
from lesson_credit.tui.text import counted, fmt_grade, one_line

if TYPE_CHECKING:
    from textual.app import App

    from lesson_credit.core.api import SessionTable
    from lesson_credit.tui.keys import KeyRouter
    from lesson_credit.tui.next_pending import ListOrder
    from lesson_credit.tui.screens.sessions import SessionsScreen
    from lesson_credit.tui.source import WorkspaceSource
    from lesson_credit.tui.source_views import SourceSnapshot
    from lesson_credit.tui.writes import WriteQueue

    _Base = App[None]
else:  # a plain mixin at run time, before App in LessonCreditApp's bases
    _Base = object

MODE_ACTIONS: tuple[str, ...] = ("show_lessons", "show_sessions", "show_analysis", "show_simulation", "show_health")
MODE_ACTIONS += ("show_agreement", "show_queue", "help", "jump")  # A and I (the screens group) too
# the palette's title of a binding whose footer entry stands for several keys (`0-9 Draft`), listed under its own
# key: chosen as `Draft`, it drafted 0.0
PALETTE_TITLES = {"set_draft(0.0)": "Draft 0.0"}
ORDER_HOLD = "list order"  # `n` waits for the Sessions list's order (KeyRouter.hold)


class ListShown(NamedTuple):
    """The Sessions list `n` goes down: its order, its table, the highlighted session and the filter it shows."""

    order: ListOrder
    table: SessionTable
    highlighted: str | None
    shown_filter: str


class AppNavigation(_Base):
    """The app's navigation side (a mixin of LessonCreditApp, which has these attributes)."""

    if TYPE_CHECKING:
        source: WorkspaceSource
        writes: WriteQueue
        snapshot: SourceSnapshot | None
        keys: KeyRouter
        grading_order: str
        queue_ids: tuple[str, ...] | None

        def after_first_snapshot(self, call: Callable[[], Awaitable[None]]) -> bool: ...

        async def action_discard_writes(self, then: Callable[[], Awaitable[None]] | None = None) -> None: ...

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in MODE_ACTIONS and self.screen.is_modal:
            return False  # a dialog is open: answer it first
        return True

    # Screen changes are awaited: the next key (typed fast) then goes to the screen shown, mounted.

    async def action_show_lessons(self) -> None:
        await self._show_mode("lessons")

    async def action_show_sessions(self) -> None:
        await self._show_mode("sessions")

    async def action_show_analysis(self) -> None:
        await self._show_mode("analysis")

    async def action_show_simulation(self) -> None:
        await self._show_mode("simulation")

    async def action_show_health(self) -> None:
        await self._show_mode("health")

    async def action_show_agreement(self) -> None:
        from lesson_credit.tui.screens.agreement import AgreementScreen

        if not isinstance(self.screen, AgreementScreen):  # (on it, `A` again stacked a second: escape showed it)
            await self.push_screen(AgreementScreen(self.source))

    async def action_show_queue(self) -> None:
        """`I`: the grading queue, in place of a session screen on top (after asking, when leaving a
        draft): a session opened from it is then never stacked on another, nor the queue on itself."""
        from lesson_credit.tui.screens.grading_queue import GradingQueueScreen
        from lesson_credit.tui.screens.session_detail import SessionDetailScreen

        async def go() -> None:
            while isinstance(self.screen, SessionDetailScreen):
                await self.pop_screen()
            if not isinstance(self.screen, GradingQueueScreen):  # the queue a session was opened from: one layer
                await self.push_screen(GradingQueueScreen(self.source))

        await self.leave_detail(go, "open the grading queue")

    async def _show_mode(self, mode: str) -> None:
        """The mode's list (its root screen), not a detail screen left open in it earlier."""

        async def go() -> None:
            if self.current_mode != mode:
                await self.switch_mode(mode)
            while len(self.screen_stack) > 1 and not self.screen.is_modal:
                await self.pop_screen()

        await self.leave_detail(go, f"open {mode.capitalize()}")

    async def leave_detail(self, go: Callable[[], Awaitable[None]], then: str, under_dialogs: bool = False) -> None:
        """Run `go`, after asking first when it would leave a session with an uncommitted draft or note (`then`:
        what going does, in the question: "quit", "open Lessons"). `under_dialogs`: the session may be under
        dialogs (quitting, ctrl+q, goes from over any: over the replace-grade question it dropped the draft it
        asks about); over this question itself, nothing more is asked (it is answered first)."""
        from lesson_credit.tui.screens.confirm import LeaveQuestion

        if isinstance(self.screen, LeaveQuestion):
            return
        screen = self.screen
        if under_dialogs:
            screen = next((below for below in reversed(self.screen_stack) if not below.is_modal), screen)
        draft = getattr(screen, "draft", None)
        note = str(getattr(screen, "note", "")).strip()  # a note typed without a draft went without a word
        if is_session_detail(screen) and (draft is not None or note):

            async def answered(discard: bool) -> None:
                if discard:  # discarded now: a quit that waits for a write asked again, and escape there kept it
                    cast(Any, screen).discard_draft()  # (a Session detail: is_session_detail, imported lazily)
                    await go()

            sid = one_line(getattr(screen, "session_id", ""))
            if draft is not None:
                question = f"Discard the draft grade {fmt_grade(draft)} of {sid} and {then}?"
                detail = "Nothing is written. escape goes back to the draft (c commits it)."
            else:
                question = f"Discard the note typed on {sid} and {then}?"
                detail = "Nothing is written. escape goes back to it (a grade, then c, commits it with the grade)."
            await self.push_screen(LeaveQuestion(question, detail, on_answer=answered))
            return
        await go()

    async def open_next_pending(self, after: str | None) -> None:
        """Open the next pending session after `after`, from Sessions or a Session detail: down the Sessions list
        in its order when the session was opened from it (or `n` is typed on it), else in the grading queue's.

        Pending as the operator will find it: a session with a grade still queued is not, one whose
        queued undo retracts its grade is."""
        snapshot = self.snapshot
        if snapshot is None:
            if not self.after_first_snapshot(partial(self.open_next_pending, after)):
                self.notify("The session list could not be read (see the error).", severity="error", markup=False)
            return
        sessions = self._sessions_screen_under()
        if sessions is not None and sessions.order_building:
            # the list's order is built in a worker when the list is read: the keys typed after `n` wait with it
            self.keys.hold(ORDER_HOLD)
            sessions.after_order(partial(self._after_order, after))
            return
        listed = self._sessions_list_under(sessions)
        if listed is not None:
            target = self._next_in_list(listed, after, snapshot)
        elif self.grading_order == "informative" and self.queue_ids is not None:
            from lesson_credit.tui.records_views import next_in_order

            found = (self.queue_ids, after, self.writes.expected, self.writes.touched(), snapshot.grade_of)
            target = next_in_order(*found)
        else:
            target = snapshot.next_pending(after, self.writes.expected, self.writes.touched())
        if target is None:
            shown = "" if listed is None else listed.shown_filter
            if shown:  # the list's own order: there may be pending sessions it does not show
                said = f"No pending session left in the list filtered by {one_line(shown)!r} (escape there clears it)."
                self.notify(said, markup=False)
            else:
                self.notify("No pending session left to grade.", markup=False)
            return

        await self.open_session(target)

    def _next_in_list(self, listed: ListShown, after: str | None, snapshot: SourceSnapshot) -> str | None:
        """`n` down the Sessions list: from just after `after`, or at the highlighted row when `after` is None."""
        from lesson_credit.tui.next_pending import next_in_list, start_position

        order, table = listed.order, listed.table

        def row_of(session_id: str | None) -> int | None:
            """The session's row in the list's table: looked up in the snapshot's ids (no scan), checked there."""
            if session_id is None:
                return None
            try:
                row = snapshot.session_ids.index(session_id)
            except ValueError:
                return None
            if row >= len(table) or table.session_ids[row] != session_id:  # (the log was read anew since)
                return None
            return row

        def still_pending(row: int) -> bool:
            session_id = table.session_ids[row]
            value = self.writes.expected(session_id, snapshot.grade_of(session_id))
            return value is None or math.isnan(value)

        start = start_position(order, row_of(after if after is not None else listed.highlighted), after is not None)
        touched = [row for row in map(row_of, self.writes.touched()) if row is not None]
        row = next_in_list(order, start, row_of(after), still_pending, touched)
        return None if row is None else table.session_ids[row]

    async def _after_order(self, after: str | None) -> None:
        """`n` once the Sessions list's order has landed, then the keys typed after it."""
        try:
            await self.open_next_pending(after)
        finally:
            sessions = self._sessions_screen_under()
            if sessions is None or not sessions.order_building:  # (else `n` waits again: the list changed since)
                self.keys.release(ORDER_HOLD)

    def _sessions_screen_under(self) -> SessionsScreen | None:
        """The Sessions list when it is the screen in view or the one under the sessions opened over it; None from
        anywhere else (where `n` follows the grading queue)."""
        module = sys.modules.get("lesson_credit.tui.screens.sessions")  # (not imported: no Sessions list open)
        under = next((s for s in reversed(self.screen_stack) if not (s.is_modal or is_session_detail(s))), None)
        if module is None or not isinstance(under, module.SessionsScreen):
            return None
        return cast("SessionsScreen", under)

    def _sessions_list_under(self, under: SessionsScreen | None) -> ListShown | None:
        """The Sessions list's order (`SessionsScreen.list_order`), highlighted row and filter shown, from `under`
        (`_sessions_screen_under`): None when there is none or its order could not be built."""
        listed = None if under is None else under.list_order()
        if under is None or listed is None:
            return None
        return ListShown(listed[0], listed[1], under.highlighted, under.shown_filter)

    async def open_session(self, session_id: str, focus_lesson: str | None = None) -> None:
        """Open a session's detail over the current screen (after asking, when leaving a draft).

        A session screen on top is replaced, not stacked on: escape always goes back to the list."""
        from lesson_credit.tui.screens.session_detail import SessionDetailScreen

        async def go() -> None:
            opened = SessionDetailScreen(self.source, session_id, focus_lesson=focus_lesson)
            if not isinstance(self.screen, SessionDetailScreen):
                await self.push_screen(opened)
                return
            while isinstance(self.screen_stack[-2], SessionDetailScreen):
                await self.pop_screen()
            # in its place: popped first, the list under it was shown (a third of a second on a loaded machine)
            # until the next session's screen was up, at every `n`
            await self.switch_screen(opened)

        await self.leave_detail(go, f"open {one_line(session_id)}")

    async def action_what_if(self) -> None:
        """`w`: What-if over the screen in view, its cursor on the lesson highlighted there (if any)."""
        from lesson_credit.tui.screens.base import DataScreen
        from lesson_credit.tui.screens.what_if import WhatIfScreen

        screen = self.screen
        # a dialog on top: `w` itself stops at it, but the command palette (ctrl+p) lists the app's keys over it
        if isinstance(screen, WhatIfScreen) or screen.is_modal:
            return
        await self.push_screen(
            WhatIfScreen(self.source, screen.lesson_in_view if isinstance(screen, DataScreen) else None)
        )

    async def action_jump(self) -> None:
        """`:`: a session by its id or the start of one, from any screen."""
        from lesson_credit.tui.screens.jump import JumpScreen

        def ids() -> Sequence[str] | None:
            return None if self.snapshot is None else self.snapshot.session_ids

        await self.push_screen(JumpScreen(ids, self.open_session, self.after_first_snapshot))

    async def action_quit(self) -> None:
        """Quit once every queued write is in the log (after asking, with a draft open; while a write
        waits to be retried, after asking whether to discard what is not saved)."""
        if self.writes.pending:
            pending = self.writes.pending  # (in a toast's 38 cells at 80 columns)
            self.notify(
                f"Quitting once {counted(pending, 'write')} {'is' if pending == 1 else 'are'} saved…", markup=False
            )
        await self.leave_detail(self._finish_quit, "quit", under_dialogs=True)

    async def _finish_quit(self) -> None:
        if self.writes.pending:
            self._quit_when_saved()
        else:
            self.exit()

    @work(exclusive=True, group="quit")
    async def _quit_when_saved(self) -> None:
        """Quit once the queue is empty, in a worker: awaited in the key's action, the wait stopped the app's
        messages, so nothing was drawn (the toast above, the grade line's "waiting to be saved") while a write
        waited for another writer's lock, up to its timeout."""
        while self.writes.pending:
            if self.writes.waiting() is not None:  # (saved meanwhile, the question goes and the quit goes on)
                await self.action_discard_writes(then=self._quit_after_question)
                return
            await asyncio.sleep(0.02)
        await self.leave_detail(self._exit_now, "quit", under_dialogs=True)  # (a draft typed meanwhile: asked)

    async def _quit_after_question(self) -> None:
        """The quit goes on after the question whether to discard the writes not saved (answered yes, or gone as
        they were saved): once the queue is empty, after asking about a draft typed meanwhile."""
        if self.writes.pending:
            self._quit_when_saved()
        else:
            await self.leave_detail(self._exit_now, "quit", under_dialogs=True)

    async def _exit_now(self) -> None:
        self.exit()

    def action_help(self) -> None:
        from lesson_credit.tui.screens.help import HelpScreen, HelpSection, bound_keys, column_sections, help_keys

        if isinstance(self.screen, HelpScreen):
            return
        show = self.get_key_display
        taken = bound_keys(type(self.screen).BINDINGS)  # listed under the screen: one entry per key
        if self.screen_stack and self.screen is self.screen_stack[0]:  # a screen list's own: Back closes nothing
            taken |= {"escape"}
        anywhere = help_keys(self.BINDINGS, show, taken)
        sections = [HelpSection("Anywhere", "Unless a text box has the focus.", anywhere)]
        current = "Anywhere"
        for title, screen_class in help_screens():
            about = str(getattr(screen_class, "HELP", "") or "")
            sections.append(HelpSection(title, about, help_keys(screen_class.BINDINGS, show)))
            if type(self.screen) is screen_class:
                current = title
        sections.extend(column_sections())
        self.push_screen(HelpScreen(sections, current))

    def action_command_palette(self) -> None:
        """ctrl+p (and a click on the title bar's icon): Textual's palette, with a footer naming its own keys."""
        from textual.command import CommandPalette

        from lesson_credit.tui.screens.palette import KeysPalette

        if self.use_command_palette and not isinstance(self.screen, CommandPalette):  # (as CommandPalette.is_open)
            self.push_screen(KeysPalette(id="--command-palette"))

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The palette lists every key binding of the current screen and the app, then Textual's own; ctrl+d's
        discard only while a write waits (else it says there is nothing to discard), and the app's Back only over
        a screen it would close (on Lessons, Sessions, Analysis, Simulation or Health, chosen, it did nothing)."""
        from lesson_credit.tui.screens.help import as_binding

        seen: set[str] = set() if self.writes.waiting() is not None else {"discard_writes"}
        if self.screen_stack and screen is self.screen_stack[0]:  # a screen list's own: nothing to go back to
            seen.add("back")
        for node, bindings in ((screen, type(screen).BINDINGS), (self, self.BINDINGS)):
            for entry in bindings:
                binding = as_binding(entry)
                if not binding.description or binding.action in seen:
                    continue
                seen.add(binding.action)
                key = binding.key.split(",")[0]
                title = PALETTE_TITLES.get(binding.action, binding.description)
                keys = binding.key_display if title == binding.description else None
                keys = keys or self.get_key_display(Binding(key, binding.action))
                yield SystemCommand(title, f"key: {keys}", partial(node.run_action, binding.action))
        yield from super().get_system_commands(screen)
