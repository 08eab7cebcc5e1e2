"""Health: the lint findings (the ways lesson bandits silently break), errors first, each with advice.

The words are the CLI's (`lesson-credit lint`): each finding is an error or a warning."""

from __future__ import annotations

from functools import partial
from typing import ClassVar, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from lesson_credit.core.api import ERROR, Finding
from lesson_credit.tui.background import at_ui_priority
from lesson_credit.tui.grading import Grading
from lesson_credit.tui.messages import FirstViewShown, WorkspaceWritten
from lesson_credit.tui.screens.base import DataScreen, screen_css
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.source_views import HealthView
from lesson_credit.tui.text import counted, listed, one_line
from lesson_credit.tui.textual_private import after_shown
from lesson_credit.tui.widgets.key_footer import KeyFooter
from lesson_credit.tui.widgets.title_bar import TitleBar

ITEMS_SHOWN = 40  # named items per finding; the rest are counted
# the findings that list pending sessions (lesson_credit.core.health): one graded here has left them
PENDING_FINDINGS = frozenset({"sessions-never-graded", "sessions-pending", "grades-retracted"})
NEVER_RECORDED = "selected-never-recorded"  # its items are session ids that no session record has


def counts(findings: tuple[Finding, ...]) -> str:
    """`2 errors, 1 warning`: lint's own summary words."""
    errors = sum(1 for f in findings if f.severity == ERROR)
    return f"{counted(errors, 'error')}, {counted(len(findings) - errors, 'warning')}"


def finding_text(finding: Finding) -> Text:
    out = Text()
    out.append(one_line(finding.message), style="bold")
    out.append("\n→ " + one_line(finding.advice))
    if finding.items:
        items = [one_line(item) for item in finding.items[:ITEMS_SHOWN]]
        shown = listed(items, ITEMS_SHOWN, total=len(finding.items), ellipsis=True)
        out.append(f"\nitems ({len(finding.items)}): ", style="dim")
        out.append(shown, style="dim")
    return out


def more_text(above: int, below: int, cut: bool = False) -> str:
    """The findings out of view: `above` and `below` the view, wholly; `cut`, a card runs on below its bottom edge
    (said when no other is below). `↑ 1 more finding above · ↓ 2 more findings below (down / up)`; empty for none."""
    parts = [f"↑ {counted(above, 'more finding')} above"] if above else []
    if below:
        parts.append(f"↓ {counted(below, 'more finding')} below")
    elif cut:
        parts.append("↓ this finding goes on below")
    return " · ".join(parts) + " (down / up)" if parts else ""


class FindingCard(Static, can_focus=True):
    """One finding; its border is the severity's colour and its title the check's code. Focusable:
    enter on a card opens the first session it names, else its lesson, or a list of its lessons to pick from
    (`HealthScreen.action_open_session`)."""

    DEFAULT_CSS = """
    FindingCard {
        height: auto;
        padding: 0 1;
        margin: 0 0 1 0;
        border: round $warning;
        border-title-color: $text-warning;
        border-title-style: bold;
    }
    FindingCard.-error {
        border: round $error;
        border-title-color: $text-error;
    }
    FindingCard:focus {
        border: heavy $accent;
    }
    """

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding_text(finding), classes="-error" if finding.severity == ERROR else "")
        self.finding = finding

    def on_mount(self) -> None:
        self.border_title = Text(f"{self.finding.severity}: {one_line(self.finding.code)}")


class HealthScreen(DataScreen):
    """Every lint finding for the workspace, grouped by severity; it re-checks when the log changes."""

    # keys typed before its first load (enter, a cursor move) wait for it (tui/keys.py)
    HOLDS_KEYS_UNTIL_LOADED = True

    AUTO_FOCUS = "#findings"
    asked = False  # ctrl+r typed: its check's result said in a toast once it lands
    # default CSS, not CSS_PATH: Textual re-parses every stylesheet and restyles every widget of
    # every screen when a screen brings a CSS file (measured: most of Health's first open);
    # a class's default CSS is only added and applied to the new widgets
    DEFAULT_CSS = screen_css("health.tcss")
    HELP = (
        "The checks `lesson-credit lint` runs. An error fails lint (exit 1); a warning does not. "
        "They are re-checked when the log changes, and with ctrl+r (which also re-reads the lesson files). "
        "down / up (tab / shift+tab) move between findings, home / end to the first / last, pgdn / pgup a page; "
        "enter opens the first session a finding names, else its lesson over time (a finding naming several "
        "lessons lists them to pick one)."
    )

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "recheck", "Re-read, re-check"),
        Binding("enter", "open_session", "Open its session or lesson"),
        # priority: the scrolling list around the cards would take them first and scroll one line
        Binding("down", "step_card(1)", "Next finding", show=False, priority=True),
        Binding("up", "step_card(-1)", "Previous finding", show=False, priority=True),
        # as down and up: the list scrolled a page or to its end and left the focus, the finding enter opens, out of
        # view
        Binding("home", "end_card(0)", "First finding", show=False, priority=True),
        Binding("end", "end_card(-1)", "Last finding", show=False, priority=True),
        Binding("pagedown", "page_cards(1)", "Findings a page down", show=False, priority=True),
        Binding("pageup", "page_cards(-1)", "Findings a page up", show=False, priority=True),
    ]

    class Loaded(Message):
        def __init__(self, view: HealthView) -> None:
            super().__init__()
            self.view = view

    def __init__(self, source: WorkspaceSource) -> None:
        super().__init__(source)
        self.view: HealthView | None = None

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield VerticalScroll(id="findings")
        yield Static(id="findings-more")  # the findings out of view, above and below (`more_text`)
        yield KeyFooter()

    def on_mount(self) -> None:
        self.title = "Health"
        self.sub_title = self.source.name
        body = self.query_one("#findings", VerticalScroll)
        self.busy(body, delay=0)
        self.watch(body, "scroll_y", lambda _y: self._show_more(), init=False)
        self.watch(body, "virtual_size", lambda _size: self._show_more(), init=False)  # the cards laid out

    def resized(self, rebuild: bool) -> None:
        self.call_after_refresh(self._show_more)

    def _show_more(self) -> None:
        """The line under the list: how many findings are above or below the view (a card not all in view counts),
        and the keys that reach them; hidden when every finding is in view. At 80x24 the demo's third warning was
        below the list's bottom edge, with nothing but a scrollbar to say so."""
        body = self.query_one("#findings", VerticalScroll)
        view = body.scrollable_content_region.height
        top = round(body.scroll_y)
        boxes = [card.virtual_region for card in self.query(FindingCard)]
        if view <= 0 or any(not box.height for box in boxes):
            return  # not laid out yet: the list's size changes once they are (the watch above)
        bottom = top + view
        above, below = sum(1 for b in boxes if b.bottom <= top), sum(1 for b in boxes if b.y >= bottom)
        said = more_text(above, below, cut=any(b.y < bottom < b.bottom for b in boxes))
        line = self.query_one("#findings-more", Static)
        line.update(said)
        if line.display != bool(said):
            line.display = bool(said)
            self.call_after_refresh(self._show_more)  # the list is a row shorter (or longer): look again

    def reload(self) -> None:
        self._check(reload_library=False)

    @work(exclusive=True, group="health", description="the Health findings")
    async def _check(self, reload_library: bool) -> None:
        # what the screen shows: at the UI thread's priority, not niced like the start-up work (tui/background.py)
        await at_ui_priority(
            lambda: self.post_result(lambda: self.source.health(reload_library=reload_library), self.Loaded)
        )

    @on(Loaded)
    async def _loaded(self, event: Loaded) -> None:
        if self.view is None:  # opened by a key typed before the Lessons rows: what the app starts after them
            after_shown(self, partial(self.post_message, FirstViewShown()))
        self.view = event.view
        findings = event.view.findings
        self.title = f"Health · {counts(findings)}"
        body = self.query_one("#findings", VerticalScroll)
        self.done(body)
        was = self.focused if isinstance(self.focused, FindingCard) else None
        place = list(self.query(FindingCard)).index(was) if was is not None else 0
        await body.remove_children()
        widgets: list[Static] = []
        if not findings:
            widgets.append(Static(Text("no problems found", style="bold"), id="health-empty"))
        for severity, heading in ((ERROR, "Errors"), (None, "Warnings")):
            group = [f for f in findings if (f.severity == ERROR) == (severity == ERROR)]
            if group:
                widgets.append(Static(Text(f"{heading} ({len(group)})"), classes="health-heading"))
                widgets += [FindingCard(f) for f in group]
        await body.mount_all(widgets)
        cards = self.query(FindingCard)
        # the cards take the focus in turn (down / up, tab): the list around them is no stop of its own, where
        # down after the last card focused nothing in view (the next down then went to the first card)
        body.can_focus = not cards
        if cards and (was is not None or not isinstance(self.focused, FindingCard)):
            self._focus_again(list(cards), was.finding if was is not None else None, place)
        self.call_after_refresh(self._show_more)  # once the cards have their heights
        self.ready_for_keys()
        if self.asked:
            self.asked = False
            self.notify(f"Checked again: {counts(findings)}.", markup=False)
        if event.view.library_changed:
            self.post_message(WorkspaceWritten())  # the other screens show the lessons read before

    def _focus_again(self, cards: list[FindingCard], finding: Finding | None, place: int) -> None:
        """Checked again: the focus goes back to the finding it was on (its items may have changed: the same
        check), else to the card now in its place, so `enter` typed after a down opens what the down led to."""
        same = next((c for c in cards if c.finding == finding), None)
        same = same or next((c for c in cards if finding is not None and c.finding.code == finding.code), None)
        card = same or cards[min(place, len(cards) - 1)]
        # into view once laid out, no further: Textual's focus scrolled before the cards had their heights, to centre
        # the first card at 100x24, the list opening two lines down ("Warnings (3)" cut off)
        card.focus(scroll_visible=False)
        self.call_after_refresh(lambda: card.scroll_visible(animate=False))

    def action_step_card(self, step: int) -> None:
        """The next (or previous) card, wrapping, scrolled into view at once: Textual's focus_next glided there, and
        a key typed meanwhile (`down down down` round to the first card) found the card in view before the glide
        ended six lines down, its card out of sight."""
        cards = list(self.query(FindingCard))
        if not cards:
            self.focus_next() if step > 0 else self.focus_previous()
            return
        at = cards.index(self.focused) if isinstance(self.focused, FindingCard) else -1 if step > 0 else 0
        self._show_card(cards[(at + step) % len(cards)])

    def _show_card(self, card: FindingCard) -> None:
        card.focus(scroll_visible=False)
        # as Textual's focus scrolls (a card not all in view centred, its top in view: the first shows its heading),
        # from where the list is now, not from where it was last drawn
        body, box = self.query_one("#findings", VerticalScroll), card.virtual_region
        view = body.scrollable_content_region.height
        if box.y < body.scroll_y or box.bottom > body.scroll_y + view:
            body.scroll_to(y=min(box.y, box.y + (box.height - view) // 2), animate=False, immediate=True)

    def action_end_card(self, index: int) -> None:
        """home / end: the first or last card, the list at its top or end (the heading above the first in view)."""
        cards = list(self.query(FindingCard))
        if not cards:
            return
        body = self.query_one("#findings", VerticalScroll)
        cards[index].focus(scroll_visible=False)
        body.scroll_to(y=0 if index == 0 else body.max_scroll_y, animate=False, immediate=True)

    def action_page_cards(self, step: int) -> None:
        """pgdn / pgup: the list a page on, the focus on the first card whose top is then in view (else the one
        the view is in); at the list's end (or top) the last (or first) card."""
        cards = list(self.query(FindingCard))
        if not cards:
            return
        body = self.query_one("#findings", VerticalScroll)
        if body.scroll_y >= body.max_scroll_y if step > 0 else body.scroll_y <= 0:
            self.action_end_card(-1 if step > 0 else 0)
            return
        view = body.scrollable_content_region.height
        body.scroll_to(y=body.scroll_y + step * view, animate=False, immediate=True)
        top = body.scroll_y
        starting = [card for card in cards if top <= card.virtual_region.y < top + view]
        covering = [card for card in cards if card.virtual_region.y <= top]
        card = starting[0] if starting else covering[-1] if covering else cards[0]
        card.focus(scroll_visible=False)

    def action_recheck(self) -> None:
        self.asked = True  # (said once checked: the same findings again looked as if ctrl+r had done nothing)
        self.busy(self.query_one("#findings", VerticalScroll), delay=0)
        self._check(reload_library=True)

    async def action_open_session(self) -> None:
        card = self.focused
        if not isinstance(card, FindingCard):
            return
        snapshot = getattr(self.app, "snapshot", None)
        known = set(snapshot.session_ids) if snapshot is not None else set()
        sessions = [item for item in card.finding.items if item in known]
        if not sessions:
            self._open_lesson(card.finding)
            return
        if card.finding.code in PENDING_FINDINGS and self.view is not None:
            # graded here since the findings were read (their reload on its way: `escape enter` typed ahead after
            # a grade), a session is no longer pending, as the operator will find the finding once it has landed
            writes, read_at = cast(Grading, self.app).writes, self.view.read_at
            sessions = writes.still_to_grade(sessions, read_at, lambda sid: sid)
            if not sessions:
                self.notify("Every session this finding names has been graded here since.", markup=False)
                return
        await cast(Grading, self.app).open_session(sessions[0])

    def _open_lesson(self, finding: Finding) -> None:
        """A finding that names no session known to the log: the lesson it names over time (as Lessons' `d`), or
        a list of the lessons it names to pick one from; selections never recorded have no session to open yet
        (said so, with how to record one)."""
        if finding.code == NEVER_RECORDED and finding.items:
            first = one_line(finding.items[0])
            self.notify(
                f"Nothing to open: {counted(len(finding.items), 'session')} selected but never recorded, so the log "
                f"has no journal, lessons or grade for {'it' if len(finding.items) == 1 else 'them'}. Record one with "
                f"`lesson-credit record --session-id {first} --journal FILE --lessons-file FILE`; it then opens here.",
                markup=False,
            )
            return
        known = self.view.lessons if self.view is not None else frozenset()
        lessons = list(dict.fromkeys(item for item in finding.items if item in known))
        if not lessons:
            self.notify("This finding names no session or lesson to open.", markup=False)
            return
        if len(lessons) == 1:
            self._open_over_time(lessons[0])
            return
        from lesson_credit.tui.screens.lesson_pick import LessonPickScreen

        # several (broad keywords in many lessons): the one picked, where enter opened the first alone
        self.app.push_screen(LessonPickScreen(lessons, finding.code), self._open_over_time)

    def _open_over_time(self, lesson: str | None) -> None:
        if lesson is None:  # the list closed with escape
            return
        from lesson_credit.tui.screens.lesson_over_time import LessonOverTimeScreen

        self.app.push_screen(LessonOverTimeScreen(self.source, lesson))
