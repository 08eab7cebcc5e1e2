"""The Lessons table's cells: built off the UI thread from a view's rows and the table's tones."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text

from lesson_credit.core.api import MISSING, index_names
from lesson_credit.tui.source_views import BROKEN
from lesson_credit.tui.text import fmt, fmt_interval, fmt_signed, lesson_name_text, one_line, spaced_text

if TYPE_CHECKING:
    from lesson_credit.core.api import LessonRow

PIN_MARK = "◆"


def lesson_name(row: LessonRow) -> str:
    """The id without its category folder (a column of its own) and without `.md`."""
    name = row.path
    if row.category and name.startswith(row.category + "/"):
        name = name[len(row.category) + 1 :]
    return name.removesuffix(".md")


def effect_text(path: str, effects: Mapping[str, float] | None) -> str:
    if effects is None:
        return "…"  # being computed
    value = effects.get(path)
    return "—" if value is None else fmt_signed(value)


Tone = Callable[[str], Style]  # a theme tone's style (ThemedTable.tone, or a lookup in its tones())


def lesson_cells(
    row: LessonRow,
    tone: Tone,
    pinned: bool = False,
    effects: Mapping[str, float] | None = None,
    alike: frozenset[str] | None = None,
) -> list[Text]:
    """The row's cells as the table shows them, with one space before each instead of the usual
    padding (the table fits beside the plot). Reads no widget: a worker can build them. `alike`: every row's
    name (`names_alike`), for the names' cuts."""
    if row.status in (MISSING, BROKEN):
        status_tone: str | None = "warning" if row.status == MISSING else "error"
    elif row.status != "active":
        status_tone = "muted"
    else:
        status_tone = None
    return [
        name_cell(row, tone, pinned, alike),
        spaced_text(str(row.n), justify="right"),
        spaced_text(fmt(row.mean, 3), justify="right"),
        spaced_text(fmt_interval(row.ci_low, row.ci_high)),
        spaced_text(effect_text(row.path, effects), justify="right"),
        spaced_text(fmt(row.last_credit), justify="right"),
        spaced_text(one_line(row.category, "—")),
        spaced_text(one_line(row.status), tone(status_tone) if status_tone else ""),
    ]


def name_only_cells(lesson_id: str, columns: int) -> list[Text]:
    """A lesson's row before the log is read: its id (without `.md`), then "…" in the other columns."""
    return [spaced_text(one_line(lesson_id.removesuffix(".md")))] + [spaced_text("…") for _ in range(columns - 1)]


def names_alike(rows: Iterable[LessonRow]) -> frozenset[str]:
    """The names of the Lessons table's column, as its cells show them before a cut."""
    return frozenset(one_line(lesson_name(row)) for row in rows)


def name_cell(row: LessonRow, tone: Tone, pinned: bool, alike: frozenset[str] | None = None) -> Text:
    """The lesson's name, marked ◆ when pinned and muted when it is not an active lesson; cut when the column
    is narrower (a narrow terminal: the panel shows the full id), its folders then its middle left out, so
    names alike at their start stay apart. The mark comes first: after the name, a cut took it with the name's end."""
    lead = Text(" ", end="")
    if pinned:
        name_tone: str | None = "pinned"
        lead.append(PIN_MARK + " ", style=tone("pinned"))
    else:
        name_tone = "muted" if row.status not in ("active", MISSING, BROKEN) else None
    return lesson_name_text(lesson_name(row), tone(name_tone) if name_tone else "", lead, alike)


@dataclass(frozen=True, eq=False)
class LessonCells:
    """Every row's cells (unpinned), built by the worker with the table's tones as they were then,
    from `rows` and `effects` (used only while the view still has those very objects)."""

    tones: Mapping[str, Style]
    cells: Mapping[str, list[Text]]  # lesson id -> cells
    rows: tuple[LessonRow, ...] = ()
    effects: Mapping[str, float] | None = None
    alike: frozenset[str] | None = None  # the rows' names (`names_alike`)

    @classmethod
    def build(
        cls,
        rows: tuple[LessonRow, ...],
        tones: Mapping[str, Style],
        effects: Mapping[str, float] | None = None,
        previous: LessonCells | None = None,
    ) -> LessonCells:
        """`previous`: cells built before, reused for every row equal to the one they were built for
        (a commit changes a few of three thousand rows: building them all took 0.1 s), and in a row
        that changed, each cell that looks the same: the very object, so that the Lessons screen
        finds the cells to replace by identity (its intervals change one cell in eight), without
        comparing texts on the UI thread."""
        alike = names_alike(rows)
        if previous is not None and previous.alike == alike:
            alike = previous.alike  # the very set: the cuts' cache compares an equal new one name by name
        else:  # sorted here, off the UI thread (its first cut found a new set unsorted), the sorted set's very object
            alike = index_names(alike)
        if previous is None or previous.tones != tones:
            built = {row.path: lesson_cells(row, tones.__getitem__, False, effects, alike) for row in rows}
            return cls(tones, built, rows, effects, alike)
        old_rows = {row.path: row for row in previous.rows}
        old_effects, new_effects = previous.effects or {}, effects or {}
        same_effects = (previous.effects is None) == (effects is None)
        cells: dict[str, list[Text]] = {}
        for row in rows:
            old = previous.cells.get(row.path)
            if old is None:
                cells[row.path] = lesson_cells(row, tones.__getitem__, False, effects, alike)
            elif (
                same_effects
                and old_rows.get(row.path) == row
                and old_effects.get(row.path) == new_effects.get(row.path)
            ):
                cells[row.path] = old
            else:
                new = lesson_cells(row, tones.__getitem__, False, effects, alike)
                cells[row.path] = [was if same_text(was, cell) else cell for was, cell in zip(old, new, strict=True)]
        return cls(tones, cells, rows, effects, alike)

    def shown_for(
        self, rows: tuple[LessonRow, ...], effects: Mapping[str, float] | None, tones: Mapping[str, Style]
    ) -> bool:
        """These cells are what a table filled from `rows` and `effects` with `tones` shows (unpinned rows)."""
        return self.rows is rows and self.effects is effects and self.tones == tones


def same_text(a: Text, b: Text) -> bool:
    """The two cells look the same: text, styles and layout."""
    return (
        a.plain == b.plain
        and a.style == b.style
        and a.spans == b.spans
        and (a.justify, a.overflow, a.no_wrap, a.end) == (b.justify, b.overflow, b.no_wrap, b.end)
    )
