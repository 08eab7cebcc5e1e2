"""`?`: every key of every screen, built from the BINDINGS themselves so it cannot drift."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen
from textual.widgets import Static

from lesson_credit.tui.messages import ToastHoldersChanged
from lesson_credit.tui.screens.base import screen_css
from lesson_credit.tui.screens.dialog_toasts import ToastsAsBelow
from lesson_credit.tui.widgets.key_footer import KeyFooter
from lesson_credit.tui.widgets.key_scroll import FootedKeyScroll


@dataclass(frozen=True)
class HelpSection:
    title: str
    about: str
    keys: tuple[tuple[str, str], ...]  # (key as shown, what it does)


# what each column of the tables means (the `?` screen's last sections)
COLUMNS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        "Lessons columns",
        (
            ("n", "graded sessions the lesson was injected in"),
            (
                "mean",
                "posterior mean alpha/(alpha+beta): the expected reward rate; sorted by it, lessons never used "
                "(n 0, the prior's mean) come last",
            ),
            ("95% CI", "central 95% interval of the Beta posterior"),
            (
                "ranking",
                "the shrunk joint estimate of the effect on reward (`loo --json`'s `ranking`), to rank by; "
                "not Analysis's `effect` (the headline `loo` prints, unshrunk, with its interval), whose sign "
                "can differ; — when none",
            ),
            ("last", "what the lesson was credited (its share of the reward) in its latest graded session"),
            ("category", "the lesson's folder under lessons/"),
            (
                "status",
                "active (the only ones select injects), automated, deprecated, archived; missing = logged but no "
                "file; broken = unreadable file",
            ),
        ),
    ),
    (
        "Sessions columns",
        (
            ("grade", "the grade in force (the latest grade event); pending = none yet, or retracted"),
            ("grader", "who gave that grade (manual = this dashboard's operator)"),
            ("lessons", "lessons injected in the session"),
            ("mean salience", "average keyword salience of those lessons in the journal"),
        ),
    ),
    (
        "Analysis columns",
        (
            (
                "effect",
                "the lesson's change in reward per injection, the headline `loo` prints: ʳ randomized (dropout "
                "logs), ˡ its later half (the effect drifted); in parentheses it claims nothing",
            ),
            ("95% CI", "the effect's 95% interval"),
            ("p (BH), p BH", "the effect's p-value, adjusted for testing every lesson (Benjamini-Hochberg)"),
            ("with, without (w/o)", "graded sessions with the lesson and without it"),
            ("naive Δ", "mean reward with minus without (leave-one-out)"),
            ("by cat (cat)", "the same within each category"),
            ("IPW", "the same, propensity-weighted"),
            (
                "flags",
                "why to read a row with care, in short (the panel gives each in full); ⚠ a comparison to distrust",
            ),
            (
                "← / →",
                "where the table is wider than the screen (80 columns: from naive Δ on), the next column out of view; "
                "the lesson names stay, and the panel's top edge names the columns out of view",
            ),
        ),
    ),
    (
        "What-if columns",
        (
            ("rank (what-if)", "the lesson's rank by mean under the what-if settings (1 = best)"),
            ("rank now", "its rank under the saved settings"),
            ("move", "places moved: ▲ up, ▼ down, · unchanged"),
            ("mean what-if", "the posterior mean (the expected reward rate) under the what-if settings"),
            ("mean now", "the posterior mean under the saved settings"),
            ("Δ mean", "mean what-if minus mean now"),
            ("lesson", "the lesson id; below 100 columns its file name"),
        ),
    ),
    (
        "Session detail columns",
        (
            (
                "lesson",
                "the lesson id; its file name with the short headers, below 150 columns (the id is in the panel)",
            ),
            ("salience (sal)", "share of the lesson's keywords found in the journal (stored in the log)"),
            ("weight (wt)", "floor + (1 - floor) x salience"),
            ("credited", "the lesson's share of the session's reward: grade x weight (seed strategy)"),
            ("Δα Δβ", "what this session adds to the lesson's alpha and beta (with the short headers: in the panel)"),
            (
                "hit / missed",
                "the lesson's keywords found / not found in the journal, as many as fit, then +N: N more (all "
                "in the panel; missed in the panel only where the lessons' names need the room)",
            ),
        ),
    ),
    (
        "Simulation columns",
        (
            ("spearman ρ", "rank correlation of the estimate with the lessons' true values (over those injected)"),
            ("precision@10 (prec@10)", "share of the 10 highest estimates that are truly helpful lessons"),
            (
                "harmful in bottom 10% (harmful)",
                "share of the truly harmful lessons that the estimate ranks in its bottom 10%",
            ),
            (
                "cumulative regret (regret)",
                "the true reward the policy's selections lost against the oracle's, summed over the sessions; "
                "lower is better",
            ),
            ("a cell", "the mean over the seeds ±sd, then [p10, p90] (below 100 columns mean ±sd only)"),
        ),
    ),
    (
        "Agreement columns",
        (
            ("reference (ref)", "the person whose grades are taken as true"),
            ("compared", "the judge, the heuristic, the outcome word, or another person (marked *)"),
            ("MAE", "mean absolute difference between the two scores"),
            ("Pearson, Spearman", "correlation of the scores, and of their ranks"),
            (
                "kappa",
                "Cohen's kappa of positive (at or above the threshold) against not: 1 always agree, 0 no better "
                "than chance",
            ),
            (
                "tp/fp/fn/tn",
                "sessions both positive, compared only, reference only, neither",
            ),
        ),
    ),
)


def column_sections() -> list[HelpSection]:
    return [HelpSection(title, "", keys) for title, keys in COLUMNS]


def as_binding(entry: BindingType) -> Binding:
    return entry if isinstance(entry, Binding) else Binding(*entry)


def bound_keys(bindings: Iterable[BindingType]) -> frozenset[str]:
    """The keys `bindings` take (a screen's: the app's bindings of those keys do not act on it)."""
    return frozenset(key.strip() for entry in bindings for key in as_binding(entry).key.split(","))


def help_keys(
    bindings: Iterable[BindingType], show: Callable[[Binding], str], taken: frozenset[str] = frozenset()
) -> tuple[tuple[str, str], ...]:
    """(keys, description) per binding with a description; `show` is App.get_key_display. A binding whose keys
    are all in `taken` (the current screen's own, listed under it) is left out, unless it has priority (the
    app's then acts first): on Lessons, help listed `esc Clear filter` and, under Anywhere, `esc Back`."""
    out = []
    for entry in bindings:
        binding = as_binding(entry)
        if not binding.description:
            continue
        if not binding.priority and {key.strip() for key in binding.key.split(",")} <= taken:
            continue
        if binding.key_display:
            keys = binding.key_display
        else:
            keys = " / ".join(show(Binding(key.strip(), binding.action)) for key in binding.key.split(","))
        out.append((keys, binding.description))
    return tuple(out)


def help_text(sections: Sequence[HelpSection], current: str, width: int | None = None) -> Text:
    """The sections' text; a key's description longer than `width` cells wraps under its description
    (the keys stay a column), not at the left edge. None: not wrapped here."""
    out = Text()
    for index, section in enumerate(sections):
        if index:
            out.append("\n")
        title = section.title + ("  (this screen)" if section.title == current else "")
        out.append(title + "\n", style="bold underline")
        if section.about:
            out.append(section.about + "\n", style="italic")
        keys_width = max((len(k) for k, _ in section.keys), default=0)
        indent = keys_width + 4
        for keys, description in section.keys:
            out.append(f"  {keys:>{keys_width}}  ", style="bold")
            lines = [description] if width is None else hanging(description, max(width - indent, 20))
            out.append(("\n" + " " * indent).join(lines) + "\n")
    return out


def hanging(description: str, width: int) -> list[str]:
    """`description` in lines of at most `width` cells, broken at spaces (a longer word is split)."""
    return textwrap.wrap(description, width, break_on_hyphens=False) or [""]


class HelpText(Static):
    """The help's text, wrapped for the width it is given (a resize wraps it again)."""

    def __init__(self, sections: Sequence[HelpSection], current: str, **kwargs: Any) -> None:
        super().__init__(help_text(sections, current), **kwargs)
        self.sections = sections
        self.current = current

    def on_resize(self, event: events.Resize) -> None:
        self.update(help_text(self.sections, self.current, event.size.width))


CLOSE_KEYS = (("escape", "Close help"),)  # the footer's first entry (the focused body's scroll keys came first)


class HelpScreen(ToastsAsBelow, ModalScreen[None]):
    """Keys per screen, the current screen first."""

    DEFAULT_CSS = screen_css("help.tcss")
    # no toast over the help (help.tcss): those on show as it opens and those raised while it is up are held
    # and shown once it closes
    HOLDS_TOASTS = True

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark", "close", "Close help"),
    ]

    def __init__(self, sections: Sequence[HelpSection], current: str) -> None:
        super().__init__()
        ordered = sorted(sections, key=lambda s: s.title != current)
        self.sections = tuple(ordered)
        self.current = current

    def compose(self) -> ComposeResult:
        with FootedKeyScroll(id="help-body"):  # a burst of keys ends where they say; the footer names them
            yield HelpText(self.sections, self.current, id="help-text")
        # over the screen's below (its keys do nothing here); what closes the help first, then the scroll keys
        yield KeyFooter(keys=CLOSE_KEYS)

    def on_mount(self) -> None:
        self.app.post_message(ToastHoldersChanged())  # (on the stack: the toasts on show are held, their time kept)
        body = self.query_one("#help-body", FootedKeyScroll)
        body.border_title = "keys  (escape closes · ctrl+p lists every action)"
        body.focus()

    def on_unmount(self) -> None:
        self.app.post_message(ToastHoldersChanged())  # (off the stack: the toasts held meanwhile show)

    def action_close(self) -> None:
        self.dismiss(None)
