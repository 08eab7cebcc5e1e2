"""Plain-text rendering for people: aligned tables and terminal-safe strings, fitted to a terminal's width.

Fitting applies only where a person reads: `output_width()` is None for a pipe or a file (unless $COLUMNS
is set), and then every table and line prints exactly as wide as it comes, so a script reads what it
always read. --json output never goes through here.
"""

from __future__ import annotations

import os
import re
import sys
import textwrap
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar

from lesson_credit.core.base.numbers import counted as counted  # the commands' (the engine's words)
from lesson_credit.core.base.numbers import fixed
from lesson_credit.core.base.numbers import listed as listed
from lesson_credit.core.base.shorten import MIN_CUT, char_cells  # text fitted to a width (the dashboard's too)
from lesson_credit.core.base.shorten import Shorten as Shorten
from lesson_credit.core.base.shorten import cells as cells
from lesson_credit.core.base.shorten import shorten as shorten

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
GAP = "  "  # between two columns
# a shortened column keeps at least this many characters (or its header's): enough to tell most rows apart
MIN_SHORTENED = 16


def safe(text: object) -> str:
    """Text from a journal, lesson or log with control characters made visible.

    An escape sequence in a journal must never reach the terminal as a control code.
    """
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))


def fmt(value: float | None, digits: int = 3) -> str:
    """A number to `digits` places, rounded as the dashboard rounds it (core.base.numbers)."""
    if value is None:
        return "-"
    return fixed(value, digits)


def terminal_columns() -> int:
    """The terminal's width as shutil.get_terminal_size() gives it ($COLUMNS when a positive number, else
    stdout's terminal, else 80), without importing shutil (with bz2 and lzma, ~2 ms on every command's
    start: argparse imports it for each parser it builds unless the formatter is given a width)."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):  # no stdout, closed, or not a terminal
        return 80


def output_width() -> int | None:
    """The width to fit stdout to: $COLUMNS when set (a positive number), else a terminal's width; None for a
    pipe or a file without $COLUMNS, which gets the full width as before."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    return terminal_columns() if stdout_is_terminal() else None


def stderr_columns() -> int | None:
    """The width of the terminal stderr is (held by the pager or not); None for a pipe, a file or a hook's log."""
    try:
        if sys.stderr is None or not sys.stderr.isatty():
            return None
        return os.get_terminal_size(sys.stderr.fileno()).columns or None
    except (AttributeError, ValueError, OSError):  # closed, or a stream with no descriptor
        return None


# whether the command line being parsed asks for --json: its error and warning lines stay one line for a program
JSON_WORDS: ContextVar[bool] = ContextVar("json_words", default=False)


def error_line(line: str, json: bool = False) -> str:
    """An error's one line as stderr shows it: on a terminal (not for --json, which a program reads) broken at
    spaces to the terminal's width, its continuation lines indented two spaces, where the terminal cut a word in
    two at the edge; anywhere else (a pipe, a hook's log) the one line exactly, as a script reads it."""
    return wrap(line, None if json else stderr_columns())


def warning_line(text: str) -> str:
    """`warning: TEXT` as stderr shows it, as an error's line is (`error_line`): wrapped at spaces on a terminal
    (its end fell off an 80-column one), one line with --json on the command line, in a pipe or a hook's log."""
    return error_line(f"warning: {text}", JSON_WORDS.get())


def stdout_is_terminal() -> bool:
    """Whether stdout is a terminal (a person reading, not a pipe or a file, whatever $COLUMNS says): where a
    command's answer is kept in view, its detail counted in a line saying how to see it."""
    try:
        return sys.stdout is not None and sys.stdout.isatty()
    except (OSError, ValueError):  # closed
        return False


def wrap(text: str, width: int | None, hang: int = 2) -> str:
    """Each line of `text` longer than `width` broken at spaces (never inside a word or a number), its
    continuation lines indented `hang` spaces past the line's own indent; unchanged when `width` is None."""
    if width is None:
        return text
    out = []
    for line in text.split("\n"):
        if cells(line) <= width:
            out.append(line)
            continue
        line = _padded(line)  # textwrap counts characters: a wide one counts as the two columns it fills
        indent = line[: len(line) - len(line.lstrip(" "))]
        pieces = textwrap.wrap(
            line,
            width,
            subsequent_indent=indent + " " * hang,
            break_long_words=False,
            break_on_hyphens=False,
        )
        # a label alone on its line ("session", then an id too long for the rest of the line) stays beside it
        # when that makes the line no wider than the id's own line
        label = re.match(r" *\S+ +", line)
        if label and len(pieces) > 1 and pieces[0] == label.group().rstrip():
            word = pieces[1].lstrip()
            if " " not in word and len(label.group()) + len(word) <= len(pieces[1]):
                pieces[:2] = [label.group() + word]
        out += [piece.replace(_WIDE_PAD, "") for piece in pieces or [line]]  # (a line of spaces alone: as it was)
    return "\n".join(out)


# follows each wide character while a line is wrapped, so that its length is the columns it fills; never
# whitespace, so textwrap (which breaks only at whitespace here) keeps it with its character. A NUL of the
# text's own goes with the pads (text from a file reaches here through `safe`, which shows it as \x00). A
# combining mark (no column) still counts as one: a line may wrap a little early, never past the width.
_WIDE_PAD = "\x00"


def _padded(line: str) -> str:
    return line if line.isascii() else "".join(c + _WIDE_PAD if char_cells(c) == 2 else c for c in line)


def table(
    headers: Sequence[str],
    rows: Sequence[Sequence[object]],
    right: Sequence[int] = (),
    *,
    width: int | None = None,
    shorten_columns: Mapping[int, Shorten] | None = None,
    drop: Sequence[int] = (),
    hide: Sequence[int] = (),
    hidden_names: Callable[[Sequence[int]], str] | None = None,
) -> str:
    """An aligned text table; columns listed in `right` are right-aligned (numbers).

    With a `width` (`output_width()`), a table wider than it is fitted: the `shorten_columns` (index: how)
    give way first, down to MIN_SHORTENED characters each, then the `drop` columns are left out in that
    order, with a line under the table naming them (`hidden_names(the columns left out)`, where headers
    alone would not tell them apart; default: their headers). Numbers and the other columns are never cut:
    a table that cannot fit after all that prints wider than `width`. The `hide` columns are left out
    whatever the width (a command shows them another way), named in the note when there is a width.
    """
    rows_text = _cells_text(rows)
    widths = _natural(headers, rows_text)
    how = dict(shorten_columns or {})
    shown = [i for i in range(len(headers)) if i not in hide]
    if width is not None:
        shown, widths = _fitted(headers, widths, how, drop, width, hide, _file_names(rows_text, how))

    def line(values: Sequence[str]) -> str:
        parts = []
        for i in shown:
            value = values[i]
            if i in how:
                value = shorten(value, widths[i], how[i])
            pad = " " * (widths[i] - cells(value))
            parts.append(pad + value if i in right else value + pad)
        return GAP.join(parts).rstrip()

    out = [line(headers), line(["-" * w for w in widths])]
    out += [line(row) for row in rows_text]
    hidden = [i for i in range(len(headers)) if i not in shown]
    if hidden and width is not None:
        names = hidden_names(hidden) if hidden_names is not None else ", ".join(headers[i] for i in hidden)
        out.append(_hidden_note(names, width))
    return "\n".join(out)


def fitted_columns(
    headers: Sequence[str],
    rows: Sequence[Sequence[object]],
    *,
    width: int | None,
    shorten_columns: Mapping[int, Shorten] | None = None,
    drop: Sequence[int] = (),
) -> tuple[list[int], list[int]]:
    """The columns `table` shows given the same arguments, and the columns of those it shortens (some cell
    cut): what a command whose column must be read whole (`loo`'s flags) needs to show it another way."""
    if width is None:
        return list(range(len(headers))), []
    rows_text = _cells_text(rows)
    how = dict(shorten_columns or {})
    natural = _natural(headers, rows_text)
    shown, widths = _fitted(headers, natural, how, drop, width, (), _file_names(rows_text, how))
    return shown, [i for i in shown if widths[i] < natural[i]]


def _cells_text(rows: Sequence[Sequence[object]]) -> list[list[str]]:
    return [[safe(c).replace("\n", " ") for c in row] for row in rows]


def _natural(headers: Sequence[str], rows_text: Sequence[Sequence[str]]) -> list[int]:
    """Each column's width unfitted: its widest cell or header."""
    widths = [cells(h) for h in headers]
    for row in rows_text:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], cells(cell))
    return widths


def _file_names(rows_text: Sequence[Sequence[str]], how: Mapping[int, Shorten]) -> dict[int, int]:
    """Per "path" column: the width that shows every row's file name whole (`…/name.md`, or the path when it
    is shorter), which the table keeps when leaving out columns that may go makes room for it."""
    out = {}
    for i, kind in how.items():
        if kind == "path":
            out[i] = max((min(cells(row[i]), cells(row[i].rpartition("/")[2]) + 2) for row in rows_text), default=0)
    return out


def _hidden_note(names: str, width: int) -> str:
    """The note under a table that says which columns were left out and how to see them: one line when a
    wording fits, else the names (wrapped between words if need be) over the hint, which is never split."""
    for note in (
        f"hidden to fit {width} columns: {names} (`| less -S` or --json shows every column)",
        f"hidden to fit {width} columns: {names} (`| less -S` or --json shows all)",
        f"hidden: {names} (`| less -S` or --json shows all)",
    ):
        if len(note) <= width:
            return note
    first = f"hidden to fit {width} columns: {names}"
    return wrap(first if len(first) <= width else f"hidden: {names}", width) + "\n  (`| less -S` or --json shows all)"


def _fitted(
    headers: Sequence[str],
    natural: Sequence[int],
    how: Mapping[int, Shorten],
    drop: Sequence[int],
    width: int,
    hide: Sequence[int] = (),
    file_names: Mapping[int, int] | None = None,
) -> tuple[list[int], list[int]]:
    """The columns shown and every column's width, for a table whose columns are `natural` wide to fit
    `width` without the `hide` columns: the fewest `drop` columns left out for the rest to fit with the
    paths' file names whole (`file_names`: each path column's width for that) and the other shortened
    columns at their least; failing that (every `drop` column gone and still too wide), the fewest for them
    to fit with every shortened column at its least. Then the shortened ones are cut only as far as needed:
    those that may go first, then the widest."""

    def least(i: int, floor: int) -> int:
        return min(natural[i], max(len(headers[i]), floor)) if i in how else natural[i]

    def total(columns: Sequence[int], widths: Sequence[int]) -> int:
        return sum(widths[i] for i in columns) + len(GAP) * (len(columns) - 1)

    def fewest_dropped(floors: Sequence[int]) -> list[int]:
        shown = [i for i in range(len(headers)) if i not in hide]
        for column in drop:
            if total(shown, floors) <= width:
                break
            if column in shown:
                shown.remove(column)
        return shown

    floors = [least(i, MIN_SHORTENED) for i in range(len(headers))]
    named = [max(floors[i], min(natural[i], (file_names or {}).get(i, 0))) for i in range(len(headers))]
    shown = fewest_dropped(named)
    if total(shown, named) <= width:  # the file names whole: a path is never cut into its name before
        floors = named  # a column that may go is left out
    else:
        shown = fewest_dropped(floors)
    last_resort = [least(i, MIN_CUT) for i in range(len(headers))]
    if total(shown, floors) > width and total(shown, last_resort) <= width:  # further, if that makes it fit
        floors = last_resort
    widths = list(natural)
    excess = total(shown, widths) - width
    for column in drop:  # a column that may go gives way before those that stay
        if column in shown and column in how and excess > 0:
            given = min(excess, widths[column] - floors[column])
            widths[column] -= given
            excess -= given
    while excess > 0:
        cut = [i for i in shown if i in how and widths[i] > floors[i]]
        if not cut:
            break
        widest = max(cut, key=lambda i: widths[i])
        widths[widest] -= 1
        excess -= 1
    return shown, widths
