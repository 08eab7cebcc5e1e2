"""The cells of Session detail's credits table, one row per lesson, and its columns' keys and labels."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions
from rich.segment import Segment
from rich.style import StyleType
from rich.text import Text

from lesson_credit.core.api import Explanation, LessonCredit, lesson_labels
from lesson_credit.tui.highlights import Highlights, highlights
from lesson_credit.tui.text import fmt, fmt_signed, lesson_name_text, one_line

CREDIT_COLUMNS = (
    ("lesson", "lesson"),
    ("salience", "salience"),
    ("weight", "weight"),
    ("credited", "credited"),  # the lesson's share of the session's reward (the CLI's word too)
    ("d_alpha", "Δα"),
    ("d_beta", "Δβ"),
    ("hit", "hit"),
    ("missed", "missed"),
)
# below 100 columns: the arithmetic (salience to credited) fits beside the lesson's file name (the help explains);
# Δα and Δβ are in "why this credit"; the keywords missed, then hit, take what is left (all in "why this credit")
NARROW_LABELS = {"salience": "sal", "weight": "wt"}
NARROW_HIDDEN = ("d_alpha", "d_beta")
HIT_KEPT = 16  # the keywords hit keep this many cells before a lesson's name is cut
HIT, MISSED = (next(i for i, (key, _) in enumerate(CREDIT_COLUMNS) if key == name) for name in ("hit", "missed"))


Toned = Callable[[str, str | None], Text]  # a value as literal text in a tone of the table's theme (or plain)


def fitted_keywords(keywords: Sequence[str], width: int) -> Text:
    """`keywords` joined by ", " in `width` cells: all of them where they fit, else the first ones that fit
    whole and "+N" for the others; where not even the first fits beside its "+N", cut with an ellipsis (in 6
    cells "git a…" says more than "gi… +1")."""
    whole = ", ".join(keywords)
    for shown in range(len(keywords) - 1, 0, -1):
        if cell_len(whole) <= width:
            break
        text = ", ".join(keywords[:shown]) + f" +{len(keywords) - shown}"
        if cell_len(text) <= width:
            return Text(text, no_wrap=True, end="")
    out = Text(whole, no_wrap=True, end="")
    out.truncate(width, overflow="ellipsis")
    return out


class KeywordList(Text):
    """A lesson's keywords hit (or missed) in a table cell, fitted to the cells its column gives it at each
    render (`fitted_keywords`): the keywords that fit whole, then "+N" for the others, which "why this credit"
    lists. Cut with an ellipsis, at 80 columns "mock, unittest.mock, mock…" hid how many more there were."""

    keywords: tuple[str, ...] = ()

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterable[Segment]:
        width = options.max_width
        if self.cell_len <= width or len(self.keywords) < 2:
            yield from super().__rich_console__(console, options)
            return
        out = fitted_keywords(self.keywords, width)
        out.stylize(self.style)
        out.justify, out.end = self.justify, self.end
        yield from out.__rich_console__(console, options)


def keyword_cell(keywords: Sequence[str] | None, style: StyleType) -> Text:
    """The keywords (each made one line) as a `KeywordList` in `style`; "none" for none, "?" when unknown."""
    names = tuple(one_line(k) for k in keywords) if keywords is not None else ()
    plain = ", ".join(names) if keywords is not None else "?"
    out = KeywordList(plain or "none", style=style, end="", overflow="ellipsis")
    out.keywords = names
    return out


def credit_cells(
    credits: list[LessonCredit], compact: bool, pending: bool, tone: str | None, toned: Toned
) -> list[tuple[str, list[Text]]]:
    """Every column's cell per lesson, keyed by its id (the compact columns name it by its file name: the
    full id is in the "why this credit" panel below). `tone`: the credited numbers' (a draft's preview)."""
    rows: list[tuple[str, list[Text]]] = []
    labels = lesson_labels(credit.path for credit in credits)  # file names, whole ids where those are alike
    names = [labels[c.path] if compact else c.path.removesuffix(".md") for c in credits]
    alike = frozenset(one_line(name) for name in names)  # for the names' cuts
    for credit in credits:
        breakdown = credit.breakdown
        name = labels[credit.path] if compact else credit.path.removesuffix(".md")
        cells = [
            lesson_name_text(name, toned("", "warning").style if credit.note else "", alike=alike),  # folders, middle
            Text(fmt(credit.salience) + ("*" if credit.salience_missing else ""), justify="right"),
            Text(fmt(credit.weight, 3), justify="right"),
            toned("—" if pending else fmt(credit.reward, 3), tone),
            toned("—" if pending else fmt_signed(credit.alpha_delta), tone),
            toned("—" if pending else fmt_signed(credit.beta_delta), tone),
            keyword_cell(breakdown.hit_keywords if breakdown else None, toned("", None).style),
            keyword_cell(breakdown.missed_keywords if breakdown else None, toned("", "muted").style),
        ]
        rows.append((credit.path, cells))
    return rows


def journal_highlights(explanation: Explanation) -> Highlights:
    """Where the session's lessons' keywords hit its journal, for its highlights (tui/highlights.py's budget):
    worked out once, in the thread that read the explanation, for the journal and every lesson in focus."""
    if explanation.journal_text is None:
        return Highlights()
    return highlights([(credit.path, credit.breakdown) for credit in explanation.lessons])
