"""Why one lesson got its credit in one session: salience -> weight -> credited (its share of the
session's reward) -> alpha/beta."""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.reactive import reactive
from textual.widgets import Static

from lesson_credit.core.api import CreditSettings, LessonCredit
from lesson_credit.tui.text import fmt, fmt_exact, fmt_grade, fmt_signed, one_line
from lesson_credit.tui.widgets.key_scroll import KeyScroll

SAME_SALIENCE = 1e-9  # the journal gives the logged salience (as core's explanation notes a difference)


def credit_story(
    credit: LessonCredit,
    settings: CreditSettings,
    base: float | None,
    compact: bool = False,
    journal_changed: bool = False,
) -> Text:
    """The arithmetic behind a lesson's credit, with the keywords that made its salience.

    `compact` (an 80x24 terminal): four lines, not seven; the lesson is named in the panel's title
    (`story_title`), salience and weight share a line, and so do the keywords hit and missed.

    The salience is the log's. When the journal or the lesson's keywords no longer give it, the keywords are not
    said to make it: the line says "(logged)", and the next says what they give now (in the lines a box shows at
    80x24: the note at the story's end was below them). `journal_changed`: the journal's sha256 is not its
    record's, said on a line of its own there too (`show` and `explain` warn so)."""
    out = Text()
    if not compact:
        out.append(one_line(credit.path) + "\n", style="bold")
    breakdown = credit.breakdown
    counted = len(breakdown.keywords) if breakdown else None
    drifted = breakdown is not None and abs(breakdown.salience - credit.salience) > SAME_SALIENCE
    if credit.salience_missing:
        out.append("salience not stored in the log: counted as 0.5\n", style="italic")
    elif drifted:
        out.append(f"salience {fmt(credit.salience, 3)} (logged)\n")
    elif breakdown is not None and counted:
        out.append(f"salience {breakdown.hits}/{counted} keywords = {fmt(credit.salience, 3)}\n")
    else:
        out.append(f"salience {fmt(credit.salience, 3)}\n")
    if compact:
        out.remove_suffix("\n")
        out.append(" · ", style="dim")
    floor = settings.floor
    out.append(f"weight {floor:g} + {1 - floor:g}×{fmt(credit.salience, 3)} = {fmt(credit.weight, 3)}\n")
    if drifted and breakdown is not None:
        now = f"{breakdown.hits}/{counted} keywords hit" if counted else "no keywords counted"
        said = f"⚠ now {now}: salience {fmt(breakdown.salience, 3)}; the log's {fmt(credit.salience, 3)} counts\n"
        out.append(said, style="bold")
    if journal_changed:
        out.append("⚠ journal changed since the session was recorded (sha256 differs)\n", style="bold")
    if credit.during:  # (as `show` says under its credit table)
        out.append("included during the session (record --during): credited as the others; no effect estimate")
        out.append(" counts it\n")
    if base is None:
        out.append("pending: no credit until the session is graded\n", style="italic")
    else:
        if settings.strategy == "seed":
            # the numbers as typed and exact where they can be, so the product checks by hand
            weight, exact_weight = fmt_exact(credit.weight, 4)
            reward, exact_reward = fmt_exact(credit.reward, 6)
            equals = "=" if exact_weight and exact_reward else "≈"
            out.append(f"credited {fmt_grade(base)}×{weight} {equals} {reward} ({settings.strategy})")
        else:
            out.append(f"credited {fmt(credit.reward, 3)} ({settings.strategy})")
        out.append(f"   α {fmt_signed(credit.alpha_delta)}   β {fmt_signed(credit.beta_delta)}\n")
    mean_before = credit.alpha_before / (credit.alpha_before + credit.beta_before)
    mean_after = credit.alpha_after / (credit.alpha_after + credit.beta_after)
    out.append(
        f"α {fmt(credit.alpha_before)} → {fmt(credit.alpha_after)}   β {fmt(credit.beta_before)} → "
        f"{fmt(credit.beta_after)}   mean {fmt(mean_before, 3)} → {fmt(mean_after, 3)}\n"
    )
    if breakdown is not None:
        hits = [f"{one_line(k.keyword)} ×{'?' if k.count is None else k.count}" for k in breakdown.keywords if k.hit]
        misses = [
            one_line(k.keyword) + (" (not matched)" if k.unmatched else "") for k in breakdown.keywords if not k.hit
        ]
        out.append("hit: ", style="bold")
        out.append(", ".join(hits) or "none")
        out.append(" · " if compact else "\n", style="dim")
        out.append("missed: ", style="bold")
        out.append(", ".join(misses) or "none")
        if not breakdown.keywords:
            out.append("\n(no counted keywords: salience is 0.5 by rule)", style="italic")
    if credit.note and not drifted:  # (the salience's note is said above, in the story's first lines)
        out.append("\n⚠ " + one_line(credit.note), style="bold")
    return out


def no_lessons_story(pending: bool) -> Text:
    """What the box says for a session that injected no lesson (there is none to select), in the words of
    `show` and `explain`: such a session moves no posterior; graded, it counts for the effects' baseline."""
    when = "once graded, it counts" if pending else "it counts"
    return Text(f"No lessons in this session: no posterior moves; {when} for the baseline only.", style="italic")


def story_title(path: str | None, compact: bool) -> Text:
    """The panel's title (plain text, never markup): the lesson named there when the compact story
    leaves out its line."""
    return Text(f"why this credit: {one_line(path)}" if compact and path is not None else "why this credit")


class CreditPanel(KeyScroll):
    """Set `story` (built with `credit_story`) to show one lesson's credit: in a box that scrolls when the
    story is taller than the box may be (its border closed: at 80x24 the compact story's keywords can
    take a fifth line). The story's text is the Static `text_id`. While lines are below the box's bottom, its
    last line says so and how to reach them: the box cut "missed:" off with no mark (a thumb of five rows in
    six does not read as a scrollbar)."""

    DEFAULT_CSS = """
    CreditPanel {
        height: auto;
        max-height: 12;
        padding: 0 1;
        border: round $primary 50%;
    }
    CreditPanel > Static {
        height: auto;
    }
    CreditPanel > Static.more {
        dock: bottom;
        height: 1;
        display: none;
        color: $text-muted;
        text-style: italic;
    }
    """

    story: reactive[Text | None] = reactive(None, always_update=True)

    def __init__(self, text_id: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.text_id = text_id

    def compose(self) -> ComposeResult:
        yield Static(id=self.text_id)
        yield Static(classes="more")  # docked at the bottom: it stays put while the story scrolls

    def on_mount(self) -> None:
        if not self.border_title:
            self.border_title = story_title(None, compact=False)

    def watch_story(self, story: Text | None) -> None:
        text = self.query_one(f"#{self.text_id}", Static)
        text.update(story if story is not None else Text("Select a lesson to see its credit.", style="italic"))
        self.call_after_refresh(self._mark_more)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._mark_more()

    def on_resize(self) -> None:
        self.call_after_refresh(self._mark_more)

    def on_focus(self) -> None:
        self._mark_more(focused=True)  # (this handler runs before the widget's own: has_focus not yet set)

    def on_blur(self) -> None:
        self._mark_more(focused=False)

    def _mark_more(self, focused: bool | None = None) -> None:
        """The marker line shown while the story goes on below the box (hidden at its end, where the story's
        last line takes its place), saying how many lines and how to see them (`focused`: the focus as it is
        about to be; None: as it is)."""
        marks = self.query(".more").results(Static)  # none while the box mounts its children or is removed
        more = next(marks, None)
        if more is None or not self.is_mounted:
            return
        focused = self.has_focus if focused is None else focused
        below = int(self.max_scroll_y - round(self.scroll_y))  # (the marker shown: the lines it covers included)
        shown = below > 0 and self.size.height > 1
        if shown:
            more.update(Text(more_mark(below, focused, more.size.width or self.scrollable_content_region.width)))
        if more.display != shown:
            more.display = shown
            self.call_after_refresh(self._mark_more)  # the box's scroll range changed with it


def more_mark(below: int, focused: bool, width: int) -> str:
    """The marker line for `below` lines under the box, in `width` cells: the longest of its forms that fits,
    so a narrow box says how many lines follow, whole, before it says how to reach them (a 40-cell box cut
    "▼ 2 more lines: tab to this box and ↓ (or the m" at its edge, and a narrower one the count itself)."""
    lines = "1 more line" if below == 1 else f"{below} more lines"
    them = "it" if below == 1 else "them"
    hows = (f"↓ shows {them}",) if focused else ("tab to this box and ↓ (or the mouse wheel)", "tab here, ↓")
    forms = [f"▼ {lines}: {how}" for how in hows] + [f"▼ {lines}", f"▼ {below} more", f"▼ {below}"]
    return next((form for form in forms if cell_len(form) <= width), forms[-1])
