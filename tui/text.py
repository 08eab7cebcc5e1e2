"""Display helpers: text from journals, lessons and the log shown literally, and number formats.

Everything read from disk is shown as `rich.text.Text`, never parsed as markup, and control
characters (an ANSI escape in a journal, a NUL in an id) are replaced by visible stand-ins so
they cannot move the cursor or recolour the screen.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from rich.console import Console, ConsoleOptions, JustifyMethod
from rich.segment import Segment
from rich.style import StyleType
from rich.text import Span, Text

from lesson_credit.core.api import counted as counted  # counts in prose that agree with their noun
from lesson_credit.core.api import fixed, shorten_lesson, signed
from lesson_credit.core.api import listed as listed  # the first few of a list, then "… and N more"

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


TAB_SIZE = 4
JOURNAL_DISPLAY_LIMIT = 2_000_000  # characters of a journal the viewer lays out


_SUBSTITUTE = "\ufffd"  # shown for invisible characters that reorder or break lines


def _translation(keep_newline: bool) -> dict[int, str]:
    table = {code: chr(0x2400 + code) for code in range(0x20)}  # C0 controls -> control pictures
    table[0x7F] = "\u2421"  # DEL
    for code in range(0x80, 0xA0):  # C1 controls (a lone 0x9b is CSI on some terminals)
        table[code] = _SUBSTITUTE
    for code in (0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A)):
        table[code] = _SUBSTITUTE  # line/paragraph separators, bidi overrides
    table[ord("\t")] = " "
    table[ord("\r")] = " "
    if keep_newline:
        table.pop(ord("\n"))
        table.pop(ord("\t"))  # tabs in multi-line text are expanded separately
    return table


_ONE_LINE = _translation(keep_newline=False)
_MULTI_LINE = _translation(keep_newline=True)


def one_line(value: str | None, empty: str = "") -> str:
    """A value from the log or a lesson (id, category, note) made safe for one line of display."""
    if value is None or value == "":
        return empty
    return value.translate(_ONE_LINE)


def folded(text: str) -> str:
    """`text` to compare as a person reads it: one Unicode form (`café` typed with é as one code point or as
    `e` and a combining accent) and no case."""
    return text.casefold() if text.isascii() else unicodedata.normalize("NFC", text).casefold()


def spaced(cell: Text) -> Text:
    """A table cell with one space before it, for a table without cell padding (its columns fit closer);
    cut as the cell says (an ellipsis)."""
    out = Text(" ", end="", justify=cell.justify) + cell
    out.justify = cell.justify
    out.overflow = cell.overflow
    return out


class LessonName(Text):
    """A lesson's name in a table cell, cut to the cells its column gives it as `shorten_lesson` cuts it (its
    folders, then its file name's middle, give way: two lessons never read as one "escalate-when-bl…"), at
    each render, so a resize cuts it anew. What comes before the name (`name_start` characters: a space, a
    pin mark) stays whole. `alike`: the names of its column, so the cut may end at a word break where that
    makes it read as no other name (`shorten_lesson`)."""

    name_start = 0
    alike: frozenset[str] | None = None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterable[Segment]:
        width = options.max_width
        if self.cell_len <= width:
            yield from super().__rich_console__(console, options)
            return
        out = self[: self.name_start]
        name = self.plain[self.name_start :]
        style = next((span.style for span in self.spans if span.start <= self.name_start < span.end), "")
        out.append(shorten_lesson(name, max(1, width - out.cell_len), self.alike), style=style)
        out.justify, out.overflow, out.no_wrap, out.end = self.justify, "crop", True, self.end
        yield from out.__rich_console__(console, options)


def lesson_name_text(
    name: str, style: StyleType = "", lead: Text | None = None, alike: frozenset[str] | None = None
) -> LessonName:
    """`name` (made one line) as a `LessonName` in `style`, after `lead` when given; `alike`: the names of its
    column, made one line as it is."""
    out = LessonName(end="", overflow="ellipsis")  # (where a renderer other than a table cell cuts it)
    out.alike = alike
    if lead is not None:
        out.append_text(lead)
        out.name_start = len(out)
    out.append(one_line(name), style=style)
    return out


def spaced_text(value: str, style: StyleType = "", justify: JustifyMethod | None = None) -> Text:
    """`spaced(Text(value, style=style, justify=justify, end=""))` built directly: the same text and
    spans, without the copy and append of `Text.__add__` (a big table has thousands of cells)."""
    out = Text(" " + value, justify=justify, end="")
    if style and len(out) > 1:
        out.spans.append(Span(1, len(out), style))
    return out


def visible_text(raw: str) -> str:
    """Multi-line text with every control character except newline and tab made visible, length kept."""
    return raw.translate(_MULTI_LINE)


_INVISIBLE = re.compile("[" + "".join(re.escape(chr(code)) for code in sorted(_MULTI_LINE)) + "]")


def visible_text_sparse(raw: str) -> str:
    """`visible_text` for megabytes where such characters are rare: a regex finds them and only they
    are replaced (str.translate looks every character up: a quarter of a second for 1.6 MB, holding
    the GIL that the event loop needs)."""
    return _INVISIBLE.sub(lambda match: _MULTI_LINE[ord(match.group())], raw)


def expand_tabs(text: str, size: int = TAB_SIZE) -> tuple[str, npt.NDArray[np.int64] | None]:
    """Tabs expanded to spaces, with a map from offsets in `text` to offsets in the result.

    The map has len(text) + 1 entries; it is None when the text has no tabs (offsets unchanged).
    """
    if "\t" not in text:
        return text, None
    import numpy as np  # not before the first frame

    extra = np.zeros(len(text) + 1, dtype=np.int64)
    pieces: list[str] = []
    line_start = 0
    for line in text.split("\n"):
        if "\t" in line:
            out: list[str] = []
            column = 0
            last = 0
            for match in re.finditer("\t", line):
                segment = line[last : match.start()]
                out.append(segment)
                column += len(segment)
                width = size - column % size
                out.append(" " * width)
                column += width
                extra[line_start + match.start() + 1] += width - 1
                last = match.end()
            out.append(line[last:])
            pieces.append("".join(out))
        else:
            pieces.append(line)
        line_start += len(line) + 1
    mapping: npt.NDArray[np.int64] = np.arange(len(text) + 1, dtype=np.int64) + np.cumsum(extra)
    return "\n".join(pieces), mapping


def fmt(value: float | None, digits: int = 2, empty: str = "—") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return empty
    return fixed(value, digits)  # 0.57749999… and 0.57750…01 print alike, as in the CLI


def fmt_grade(value: float | None, empty: str = "pending") -> str:
    """A grade as it was typed: 0.725 stays 0.725, 0.7 is 0.7 (at least one decimal, at most six)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return empty
    from lesson_credit.core.api import grade_text  # the engine's grading module: not before the first frame

    return grade_text(value)  # the engine's format: undo notes in the log read the same


def fmt_exact(value: float, most: int = 6) -> tuple[str, bool]:
    """(the shortest decimal for `value` with at most `most` decimals, whether it is exact to 1e-9)."""
    for digits in range(1, most + 1):
        if abs(round(value, digits) - value) < 1e-9:
            return f"{value:.{digits}f}", True
    return f"{value:.{most}f}", False


def fmt_signed(value: float, digits: int = 3) -> str:
    return signed(value, digits)  # the CLI's rounding (explain's Δα), so both print the same digits


def fmt_interval(low: float, high: float, digits: int = 2) -> str:
    """`low–high`; `…` while the interval is still being computed (NaN: see LessonsView)."""
    if math.isnan(low) or math.isnan(high):
        return "…"
    return f"{fmt(low, digits)}–{fmt(high, digits)}"


def fmt_time(timestamp: str | None, year: bool = True) -> str:
    """ISO-8601 as `YYYY-MM-DD HH:MM` (`MM-DD HH:MM` without the year); anything else is shown as it is
    (made safe)."""
    if not timestamp:
        return "—"
    match = re.match(r"^(\d{4}-)(\d{2}-\d{2})[T ](\d{2}:\d{2})", timestamp)
    if match:
        return f"{match.group(1) if year else ''}{match.group(2)} {match.group(3)}"
    return one_line(timestamp)


def rank_arrow(change: int) -> str:
    """▲3 moved up three places, ▼2 down two, · unchanged."""
    if change > 0:
        return f"▲{change}"
    if change < 0:
        return f"▼{-change}"
    return "·"


def wrap_lines(text: str, width: int) -> list[tuple[int, int]]:
    """(start, end) offsets of the screen lines of `text` soft-wrapped at `width` cells.

    Breaks after the last space that fits, else mid-word; newlines end lines and are not
    part of any range. Wide characters count two cells.
    """
    from rich.cells import get_character_cell_size

    width = max(1, width)
    out: list[tuple[int, int]] = []
    line_start = 0
    for line in text.split("\n"):
        n = len(line)
        if line.isascii():
            pos = 0
            while n - pos > width:
                space = line.rfind(" ", pos + 1, pos + width + 1)
                cut = space + 1 if space > pos else pos + width
                out.append((line_start + pos, line_start + cut))
                pos = cut
            out.append((line_start + pos, line_start + n))
        else:
            pos = 0
            cells = 0
            after_space = -1  # index just after the last space on the current screen line
            for index, char in enumerate(line):
                size = get_character_cell_size(char)
                while cells + size > width and index > pos:
                    cut = after_space if after_space > pos else index
                    out.append((line_start + pos, line_start + cut))
                    cells = sum(get_character_cell_size(c) for c in line[cut:index])
                    pos = cut
                    after_space = -1
                cells += size
                if char == " ":
                    after_space = index + 1
            out.append((line_start + pos, line_start + n))
        line_start += n + 1
    return out


Phrase = Text | tuple[str, Text]  # a phrase, or (the separator before it on a line, the phrase)


def break_words(text: str, width: int, separators: str = "/-_") -> str:
    """`text` with a line break in each word (a run without spaces) wider than `width` cells: after the last of
    `separators` that keeps the piece within the width (`patterns/read-before-` then `edit.md`; not a `.`: `edit.`
    then `md` is a cut word), else at the width.
    Words that fit are left to the widget, which wraps at spaces; a path has none, and was cut mid-word.
    `width` 0: not laid out yet, unchanged. Wide characters count two cells."""
    from rich.cells import cell_len

    if width <= 0:
        return text
    out = []
    for word in re.split(r"( +|\n)", text):
        while cell_len(word) > width:
            fits = 0
            while fits < len(word) and cell_len(word[: fits + 1]) <= width:
                fits += 1
            cut = max((word.rfind(sep, 0, fits) + 1 for sep in separators), default=0)
            cut = cut if cut > 0 else max(fits, 1)
            out.append(word[:cut] + "\n")
            word = word[cut:]
        out.append(word)
    return "".join(out)


def phrase_lines(paragraphs: Sequence[Sequence[Phrase]], width: int, separator: str = " · ", hang: int = 0) -> Text:
    """Each paragraph's phrases joined by `separator` (or the phrase's own), a new line where the next phrase
    would pass `width` cells (0: never), indented `hang` cells: a line breaks between phrases, so a count
    stays with its words. A phrase wider than the line is left to the widget's own wrapping. A separator has
    the style of the phrase after it."""
    out = Text()
    for number, phrases in enumerate(paragraphs):
        if number:
            out.append("\n")
        used = 0
        for index, item in enumerate(phrases):
            between, phrase = item if isinstance(item, tuple) else (separator, item)
            if index and width > 0 and used + len(between) + phrase.cell_len > width:
                out.append("\n" + " " * hang)
                used = hang
            elif index:
                out.append(between, style=phrase.style)  # (dim before a dim phrase)
                used += len(between)
            out.append_text(phrase)
            used += phrase.cell_len
    return out


EMPTY_WORKSPACE_HINT = (
    "Nothing logged yet. Lessons are Markdown files under lessons/ (frontmatter `match: keywords: [...]`); "
    "log a session with `lesson-credit record --session-id ID --journal JOURNAL.md --lessons LESSON_ID ...` "
    "(or gptme's bandit-state.json as a prior: `lesson-credit import-gptme`). The dashboard updates on its own."
)


NO_LESSONS_HINT = (
    "No lessons yet: lessons/ holds no lesson file. Lessons are Markdown files under lessons/ (frontmatter "
    "`match: keywords: [...]`); a session logged with `lesson-credit record --lessons LESSON_ID ...` lists its "
    "lessons here too. The dashboard updates on its own."
)


def no_lesson_listed(any_lesson: bool, filter_text: str) -> str:
    """Why the Lessons table is empty: no lesson at all (no file, none logged: what adds one), nothing matching
    the filter (what clears it), or every lesson retired (what shows them)."""
    if not any_lesson:
        return NO_LESSONS_HINT
    if filter_text:
        return f"No lessons match the filter {filter_text!r} (escape clears the filter)."
    return "Every lesson is retired (R shows them)."
