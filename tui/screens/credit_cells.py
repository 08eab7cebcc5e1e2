"""The cells of Session detail's credits table, one row per lesson, and its columns' keys and labels."""

from __future__ import annotations

from collections.abc import Callable

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


def ellipsis(cell: Text) -> Text:
    """The cell, cut with an ellipsis when its column is narrower."""
    cell.overflow = "ellipsis"
    return cell


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
        hit = ", ".join(one_line(k) for k in breakdown.hit_keywords) if breakdown else "?"
        missed = ", ".join(one_line(k) for k in breakdown.missed_keywords) if breakdown else "?"
        name = labels[credit.path] if compact else credit.path.removesuffix(".md")
        cells = [
            lesson_name_text(name, toned("", "warning").style if credit.note else "", alike=alike),  # folders, middle
            Text(fmt(credit.salience) + ("*" if credit.salience_missing else ""), justify="right"),
            Text(fmt(credit.weight, 3), justify="right"),
            toned("—" if pending else fmt(credit.reward, 3), tone),
            toned("—" if pending else fmt_signed(credit.alpha_delta), tone),
            toned("—" if pending else fmt_signed(credit.beta_delta), tone),
            ellipsis(toned(hit or "none", None)),
            ellipsis(toned(missed or "none", "muted")),
        ]
        rows.append((credit.path, cells))
    return rows


def journal_highlights(explanation: Explanation) -> Highlights:
    """Where the session's lessons' keywords hit its journal, for its highlights (tui/highlights.py's budget):
    worked out once, in the thread that read the explanation, for the journal and every lesson in focus."""
    if explanation.journal_text is None:
        return Highlights()
    return highlights([(credit.path, credit.breakdown) for credit in explanation.lessons])
