"""A session's trajectory: messages and tool calls in order, long outputs collapsed, keyword hits highlighted.

The trajectory is read, normalised (core.sessions), searched for every lesson's keywords and laid
out in a worker: the screen opens at once and fills in when the work is done (a 10 MB trajectory
takes a fraction of a second; see bench `transcript`). `/` searches within it: enter goes to the
next match. `x` shows the collapsed outputs in full, or collapses them again.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Input, Static

from lesson_credit.core.api import find_all, gc_paused
from lesson_credit.tui.records_views import TranscriptData, transcript_data
from lesson_credit.tui.screens.base import DataScreen, screen_css
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.text import one_line, phrase_lines
from lesson_credit.tui.widgets.filter_box import LEAVE_BY_TAB, TextBox
from lesson_credit.tui.widgets.key_footer import KeyFooter
from lesson_credit.tui.widgets.title_bar import TitleBar
from lesson_credit.tui.widgets.transcript_view import Prepared, TranscriptView, prepare

Span = tuple[int, int]
WIDTH_GUESS = 100  # cells laid out for before the view has a size (it wraps again if it differs)


def info_text(data: TranscriptData | None, found: int | None, at: int, needle: str, width: int = 0) -> Text:
    """The heading and what the view shows, in lines of `width` cells (0: as long as they come) broken
    between phrases ("40 messages" is not cut after its count)."""
    if data is None:
        return Text("Reading the trajectory…", style="italic")
    if data.text is None:
        return Text("No transcript for this session", style="bold")  # (the box below says why)
    heading = [Text(phrase) for phrase in one_line(data.heading).split(" · ")]
    many = "s" if data.collapsed != 1 else ""
    shown = "expanded (x collapses)" if data.expanded else f"{data.collapsed} long message{many} collapsed (x expands)"
    how = [Text(phrase, style="dim") for phrase in (shown, "keyword hits highlighted", "/ search")]
    if found is not None:
        if found:
            how.append(Text(f"match {at + 1} of {found} for “{one_line(needle)}”", style="bold"))
        else:
            missed = Text(f"no match for “{one_line(needle)}”", style="bold")
            if data.collapsed and not data.expanded:  # the search covers the text shown, not what is collapsed
                missed.append(" in the text shown: collapsed output is not searched (x expands it)", style="not bold")
            how.append(missed)
    return phrase_lines([heading, how], width)


class TranscriptScreen(DataScreen):
    """One session's transcript; escape goes back to the session."""

    AUTO_FOCUS = "#transcript"
    DEFAULT_CSS = screen_css("transcript.tcss")
    HELP = (
        "The session's trajectory (gptme, Claude Code or Codex) as one text: messages and tool calls in order, "
        "long outputs collapsed (x shows them in full), every lesson's keyword hits highlighted. / searches: "
        "enter goes to the next match."
    )
    # keys typed before the text is read (`V / pytest enter` in one burst) wait for it, as on Sessions: a
    # search typed into nothing would find nothing; the tests' settle() waits for it the same way
    HOLDS_KEYS_UNTIL_LOADED = True

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "focus_filter", "Search"),
        Binding("x", "toggle_expand", "Expand / collapse"),
        Binding("escape", "back", "Back"),
    ]

    class Read(Message):
        def __init__(self, data: TranscriptData, prepared: Prepared | None) -> None:
            super().__init__()
            self.data = data
            self.prepared = prepared

    def __init__(self, source: WorkspaceSource, session_id: str, focus_lesson: str | None = None) -> None:
        super().__init__(source)
        self.session_id = session_id
        self.focus_lesson = focus_lesson
        self.data: TranscriptData | None = None
        self.expand = False
        self.matches: list[Span] = []
        self.match_at = -1
        self.needle = ""
        self._loaded_once = False

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(info_text(None, None, 0, ""), id="transcript-info")
        yield TextBox(
            placeholder="search within the transcript (/), enter: next match",
            id="transcript-search",
            footer_keys=(("enter", "Next match"), ("escape", "Back"), *LEAVE_BY_TAB),
        )
        yield TranscriptView(id="transcript")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.title = f"Transcript {one_line(self.session_id)}"
        self.sub_title = self.source.name
        self.query_one("#transcript", TranscriptView).border_title = "transcript"

    def reload(self) -> None:
        if not self._loaded_once:  # a trajectory does not change with the log: read it once per open
            self._loaded_once = True
            # once laid out, so the text is wrapped for the view's real width
            self.call_after_refresh(lambda: self._read(self.expand, self._width()))

    def _width(self) -> int:
        return self.query_one("#transcript", TranscriptView).scrollable_content_region.width or WIDTH_GUESS

    @work(thread=True, exclusive=True, group="transcript")
    def _read(self, expand: bool, width: int) -> None:
        session_id, focus = self.session_id, self.focus_lesson

        def read() -> TranscriptScreen.Read:
            with gc_paused():  # tens of thousands of small objects: see core.base.gc_pause
                data = transcript_data(self.source, session_id, expand)
                if data.text is None:
                    return self.Read(data, None)
                return self.Read(data, prepare(data.text, data.hits, data.lesson_hits.get(focus or "", ()), width))

        self.post_result(read, lambda message: message)

    @on(Read)
    def _shown(self, event: Read) -> None:
        self.data = event.data
        view = self.query_one("#transcript", TranscriptView)
        if event.prepared is None:
            view.show_message(f"No transcript to show: {event.data.note or 'no trajectory'}.")
        else:
            view.show_prepared(event.prepared)
        self.matches, self.match_at = [], -1
        if self.needle:
            self._search(self.needle, advance=False)
        self._update_info()
        self.ready_for_keys()

    def resized(self, rebuild: bool) -> None:
        if self.data is not None:
            self._update_info()  # its lines break between phrases at the width

    def _update_info(self) -> None:
        found = len(self.matches) if self.needle else None
        width = self.size.width - 2  # (the padding)
        self.query_one("#transcript-info", Static).update(
            info_text(self.data, found, self.match_at, self.needle, width)
        )

    # ---------------------------------------------------------------- search

    def _search(self, needle: str, advance: bool) -> None:
        view = self.query_one("#transcript", TranscriptView)
        text = self.data.text if self.data is not None else None
        if text is None or not needle:
            self.matches, self.match_at = [], -1
            view.set_focus_spans([])
        else:
            if needle != self.needle or not self.matches:
                self.matches, self.match_at = find_all(text, needle), -1
            if self.matches:
                self.match_at = (
                    (self.match_at + 1) % len(self.matches) if advance or self.match_at < 0 else self.match_at
                )
                view.set_focus_spans(self.matches)
                view.scroll_to_offset(view.display_offset(self.matches[self.match_at][0]))
        self.needle = needle
        self._update_info()

    @on(Input.Submitted, "#transcript-search")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._search(event.value, advance=True)

    def action_focus_filter(self) -> None:
        """`/`, as on the other screens: the box that narrows what is shown (here: finds in it)."""
        self.query_one("#transcript-search", Input).focus()

    def action_toggle_expand(self) -> None:
        self.expand = not self.expand
        self.query_one("#transcript-info", Static).update(Text("Laying out the transcript again…", style="italic"))
        self._read(self.expand, self._width())

    def action_back(self) -> None:
        if isinstance(self.focused, Input):
            self.query_one("#transcript", TranscriptView).focus()
            return
        self.dismiss()
