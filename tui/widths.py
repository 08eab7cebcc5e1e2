"""Terminal widths at which the dashboard changes its layout, and fitting a sorted table into one."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.text import Text

NARROW_BELOW = 100  # columns: below this (an 80-column terminal) screens stack and the footer is compact
WIDE_FROM = 150  # columns: from this, screens show their widest tables
SHORT_BELOW = 32  # rows: below this (a 24-row terminal) screens give their secondary panels fewer lines
MIN_NAME_CELLS = 12  # a table's name column is never cut narrower than this to show the columns it keeps


def sort_column_second(keys: list[str], sort_column: str) -> list[str]:
    """Column keys left to right: the first (the name), then the sort column (so that a narrow terminal,
    which loses columns at the right, still shows what the rows are ordered by), then the rest."""
    if sort_column in keys and sort_column != keys[0]:
        keys = [key for key in keys if key != sort_column]
        keys.insert(1, sort_column)
    return keys


def name_column_width(names: int, rest: Sequence[int], visible: int, keep: int) -> int | None:
    """The width of a table's first column (its names, `names` cells wide) for `visible` cells, the widths
    of the columns after it being `rest`, left to right: no column is then cut at the right edge (its header
    cut to "ra"): the first column takes the cells the whole columns leave, and the next column starts at
    the edge, where the table scrolls to it. The names are cut (not below MIN_NAME_CELLS) to keep the
    first `keep` of the other columns in sight. None: every column fits (or the table is not laid out)."""
    if visible <= 0 or names + sum(rest) <= visible:
        return None
    shown = taken = 0
    names = max(names, MIN_NAME_CELLS)  # (the column is never narrower: the columns beside it fit that)
    while shown < len(rest) and names + taken + rest[shown] <= visible:  # whole beside the whole names
        taken += rest[shown]
        shown += 1
    while shown < min(keep, len(rest)) and MIN_NAME_CELLS + taken + rest[shown] <= visible:
        taken += rest[shown]
        shown += 1
    return max(visible - taken, MIN_NAME_CELLS)


def widest(cells: Iterable[Text]) -> int:
    """The width of the widest of `cells` (0 for none)."""
    return max((cell.cell_len for cell in cells), default=0)


SHORT_DETAIL_ROWS = 17  # Session detail at 80x24: the rows of the record, journal, credits table and credit box


def short_detail_heights(lessons: int, record_least: int = 1) -> tuple[int, int, int, bool, bool, int | None]:
    """Session detail at 80x24 (narrow and short) for a session of `lessons` lessons: (the journal's height
    with its borders, the record's most lines, the credits table's most rows with its header, whether the
    credit box's bottom border is left out, whether the journal's is, the credit box's most rows or None for
    the stylesheet's). The journal starts with three lines, the record with three, "why this credit" with its
    four; the table takes the rows it needs from the journal's bottom border (the table's header closes it),
    the record (down to its first line's rows, `record_least` of three: the judge's score and reason, or the
    record's harness to outcome, wrapped; the rest scrolls), the credit box's bottom border (the grade bar's
    rule closes it), then the journal's lines (down to one), then the credit box's (its story scrolls in it, its
    more-lines mark says so), so up to eight lessons show without scrolling and up to six beside three lines of
    the journal. Rows the table does not need (fewer than three lessons) go to the journal. The record's first
    line was cut to one row from five lessons ("... logged on line 41," and the score that counts, the reason,
    below it, a scrollbar thumb the only sign)."""
    table = 1 + min(max(lessons, 0), 8)
    journal, record, box = 5, 3, 6
    least = min(max(record_least, 1), record)
    over = table + journal + record + box - SHORT_DETAIL_ROWS
    open_journal = over > 0
    over -= open_journal
    record_cut = min(max(over, 0), record - least)
    over -= record_cut
    open_box = over > 0
    over -= open_box
    journal_cut = min(max(over, 0), 2)
    over -= journal_cut
    box_rows = box - int(open_box) - over if over > 0 else None  # (the table fits beside the box's top and a line)
    journal += -int(open_journal) - journal_cut - min(over, 0)  # fewer rows than three lessons: the journal's
    return journal, record - record_cut, table, open_box, open_journal, box_rows


WIDE_JOURNAL_LEAST = 50  # Session detail from WIDE_FROM columns: the journal pane's width at least (borders in)


def wide_side_width(screen_width: int, needed: int) -> int:
    """Session detail from WIDE_FROM columns: the side pane's width for a credit table `needed` cells wide
    (its scrollbar in): its share beside the journal (2fr to 1fr) or, where the table needs more, what it needs
    while the journal keeps WIDE_JOURNAL_LEAST (at 200 columns the keywords missed were cut to `tests p…` beside
    a journal of 66 columns)."""
    share = screen_width - screen_width // 3
    return max(share, min(needed, screen_width - WIDE_JOURNAL_LEAST))


NARROW_JOURNAL_MOST = 7  # Session detail below 100 columns, from SHORT_BELOW rows: the journal's height (borders in)
NARROW_JOURNAL_LEAST = 5  # ... down to three of its lines, for the credit rows and "why this credit" beside it


def detail_heights(body: int, table: int, story: int, narrow: bool) -> tuple[int | None, int | None]:
    """Session detail from SHORT_BELOW rows below 100 columns (80x32 to 80x40), or at any height from 100 columns,
    its body `body` rows tall with the credits table `table` rows and "why this credit" `story` rows with its
    borders: (the journal's height or None for the stylesheet's, the credit box's most rows or None for all it
    needs). Below 100 columns the journal gives up to two of its lines so that the box ends inside the pane under
    the table; where that is not enough (and from 100 columns, the journal beside the pane) the box is cut to what
    is left (closed: its story scrolls in it, its more-lines mark says so). The plot stays below: where the pane
    scrolls below 100 columns, in the rows left from 100, if all its rows fit (tui/screens/detail_side.py). At
    100x24 the box ran past the pane's bottom, under the grade bar, "missed:" and its bottom border hidden."""
    left = body - table
    journal = min(NARROW_JOURNAL_MOST, max(NARROW_JOURNAL_LEAST, left - story)) if narrow else None
    room = left - (journal or 0)
    return journal, (max(3, room) if room < story else None)


def share_cut(widths: dict[int, int], least: dict[int, int], over: int) -> int:
    """Cut `over` cells from the columns `least` names (in `widths`, in place), the widest first, so that where
    all do not fit they end as wide as each other, none below its `least`; returns the cells still to cut.
    Session detail's keywords hit and missed share what is left of the line: cut one after the other, at 200x50
    the hits kept 59 cells beside a missed column of 6 ("confl…")."""
    while over > 0:
        cuttable = [i for i in least if widths[i] > least[i]]
        if not cuttable:
            break
        widest = max(cuttable, key=lambda i: (widths[i], -i))  # a tie: the lower index
        widths[widest] -= 1
        over -= 1
    return over
