"""Text fitted to a width for a person: the columns a string fills, and shortening it with a visible
ellipsis (a path keeps its file name, an id both its ends). The command line's tables and the dashboard
share it, so a lesson cut in one reads as it is cut in the other."""

from __future__ import annotations

import unicodedata
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from typing import Literal

ELLIPSIS = "…"
MIN_FOLDER = 3  # a shortened path keeps its folders' start only when this many characters of it fit
MIN_CUT = 4  # the last resort, when every column that may go is gone, the table still too wide and this fits
WORD_BREAKS = "-_ "  # where a lesson's name may be cut between words
NEAR_BREAK = 4  # a middle cut moves to a word break when one is this near (leaving this many characters out at most)
MIN_WORD_CUT = 3  # ... keeping this many characters of the start and of the end at least
# how a column's long text is shortened: "path" keeps the file name (the folders give way first), "middle"
# keeps both ends (an id's date and its counter), "end" keeps the start (a list of flags reads from the left)
Shorten = Literal["path", "middle", "end"]


def cells(text: str) -> int:
    """The terminal columns `text` fills: two for a wide (CJK) character, none for a combining mark."""
    if text.isascii():
        return len(text)
    return sum(char_cells(char) for char in text)


def char_cells(char: str) -> int:
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in "WF" else 1


def _head(text: str, width: int) -> str:
    """The longest start of `text` that fills at most `width` columns."""
    used = 0
    for index, char in enumerate(text):
        used += char_cells(char)
        if used > width:
            return text[:index]
    return text


def _tail(text: str, width: int) -> str:
    """The longest end of `text` that fills at most `width` columns."""
    return _head(text[::-1], width)[::-1]


def shorten(text: str, width: int, how: Shorten = "end") -> str:
    """`text` in at most `width` columns, a visible ellipsis where some were left out."""
    if cells(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    if how == "path":
        return _short_path(text, width)
    if how == "middle":
        head = _head(text, width // 2)
        return head + ELLIPSIS + _tail(text, width - 1 - cells(head))
    return _head(text, width - 1) + ELLIPSIS


def _short_path(path: str, width: int) -> str:
    """The folders give way first ("work…/issue-triage.md", "…/issue-triage.md"), then the file name's
    middle: its start and its extension stay ("…/issue-tri….md")."""
    folder, slash, name = path.rpartition("/")
    room = width - cells(name) - 2  # for the folders' start, beside the ellipsis and the slash
    if slash and room >= 0:
        return (_head(folder, room) if room >= MIN_FOLDER else "") + ELLIPSIS + "/" + name
    stem, dot, extension = name.rpartition(".")
    for prefix in (ELLIPSIS + "/" if slash else "", ""):
        keep = width - len(prefix) - cells(extension) - 2  # of the stem, beside the ellipsis and the dot
        if dot and stem and len(extension) <= 5 and keep >= MIN_CUT:
            return prefix + _head(stem, keep) + ELLIPSIS + "." + extension
    return name if cells(name) <= width else _head(name, width - 1) + ELLIPSIS


def shorten_lesson(name: str, width: int, alike: frozenset[str] | None = None) -> str:
    """A lesson's id (or name) in at most `width` columns, its distinguishing part kept: the folders give
    way first ("work…/resolve-merge-conflicts", "…/resolve-merge-conflicts"), then the middle of the file
    name, whose start and end both stay ("resolve-…-conflicts"): cutting the end made
    "escalate-when-blocked" and "escalate-when-blocking" one "escalate-when-bl…", and naming lessons by
    their file name alone made tools/x.md and workflow/x.md one "x".

    Given `alike` (every name shown beside it, in a column), the middle cut ends and resumes at a word break
    (`-`, `_`, a space) where one is near: "check-ci-…-done", not "check-ci-…ore-done", unless another
    name of `alike` would then read the same (that name and this one keep the plain cut, which shows more)."""
    if cells(name) <= width:
        return name
    plain = _shorten_lesson(name, width, words=False)
    if alike is None:
        return plain
    cut = _shorten_lesson(name, width, words=True)
    if cut != plain and _reads_as(alike, width, cut) > (1 if name in alike else 0):
        return plain
    return cut


READS_KEPT = 4096  # the counts kept per set of names: the rows in view at many widths


class _Index:
    """`alike`'s file names, sorted, and each one's name; then the file names reversed, sorted, and each one's
    name: the names a cut's start (or end) may stand for are found by bisection, not by cutting every name of
    a column (30,000 lessons took 0.9 s at a width's first render). `reads`: the counts `_reads_as` found for
    this set, kept with it, so a set no longer shown goes with its index (a count cache keyed by the set kept
    every set it had seen)."""

    __slots__ = ("alike", "files", "names", "ends", "end_names", "reads")

    def __init__(self, alike: frozenset[str]) -> None:
        self.alike = alike  # the set the index was built for: the cache's key
        file_of = {name: name.rpartition("/")[2] for name in alike}
        self.names = sorted(file_of, key=file_of.__getitem__)  # (by a key: comparing tuples took twice as long)
        end_of = {name: file[::-1] for name, file in file_of.items()}
        self.end_names = sorted(end_of, key=end_of.__getitem__)
        self.files = [file_of[n] for n in self.names]
        self.ends = [end_of[n] for n in self.end_names]
        self.reads: dict[tuple[int, str], int] = {}


@lru_cache(maxsize=4)  # the sets of a few columns (Lessons, What-if's two widths, a session's credits)
def _by_file(alike: frozenset[str]) -> _Index:
    return _Index(alike)


def index_names(alike: frozenset[str]) -> frozenset[str]:
    """Sort `alike` for the word-break cuts now: a worker calls this with a column's new set of names, so the
    first render that cuts one of them (on the UI thread) finds the set sorted (sorting 30,000 names is a
    tenth of a second). Returns the set the index is kept for, `alike` or an equal one sorted before: cuts
    given that very set find its index at once (an equal other set is compared with it name by name)."""
    return _by_file(alike).alike


def _starting(keys: list[str], start: str) -> range:
    """Where the sorted `keys` that start with `start` are."""
    low = bisect_left(keys, start)
    return range(low, bisect_left(keys, start + "\U0010ffff", low))


def _reads_as(alike: frozenset[str], width: int, cut: str) -> int:
    """How many names of `alike` a word-break cut at `width` reads as, counted up to 2 (the most a caller
    asks). Only a name whose file name starts with the cut's start and ends with its end can read the same
    (a cut in the file name's middle keeps both): those are found by bisection, from whichever end matches
    fewer names. 30,000 names all starting "lesson-" took 0.4 s when every one of them was cut."""
    index = _by_file(alike)
    known = index.reads.get((width, cut))
    if known is not None:
        return known
    head, _, tail = cut.partition(ELLIPSIS)
    by_head, by_tail = _starting(index.files, head), _starting(index.ends, tail[::-1])
    if len(by_head) <= len(by_tail):
        candidates = (index.names[i] for i in by_head if index.files[i].endswith(tail))
    else:
        candidates = (index.end_names[i] for i in by_tail if index.ends[i].endswith(head[::-1]))
    found = 0
    for other in candidates:
        if cells(other) > width and _shorten_lesson(other, width, words=True) == cut:
            found += 1
            if found == 2:
                break
    if len(index.reads) >= READS_KEPT:
        index.reads.clear()
    index.reads[(width, cut)] = found
    return found


def _shorten_lesson(name: str, width: int, words: bool) -> str:
    _folder, slash, file = name.rpartition("/")
    if slash and cells(file) + 2 <= width:
        return shorten(name, width, "path")
    cut = shorten(file, width, "middle")
    return _at_word_breaks(file, cut) if words else cut


def _at_word_breaks(text: str, cut: str) -> str:
    """A middle cut of `text` (`cut`: start, ellipsis, end) with its start ending and its end starting at a word
    break where one is NEAR_BREAK characters or fewer away; only characters are left out, so the result is
    shorter than every plain cut to the same width and never reads as one."""
    head, cut_here, tail = cut.partition(ELLIPSIS)
    if not cut_here:  # the file name whole (its folders gone: "…/" did not fit beside it)
        return cut
    if head and head[-1] not in WORD_BREAKS and text[len(head)] not in WORD_BREAKS:
        back = max(head.rfind(c) for c in WORD_BREAKS)
        if back >= MIN_WORD_CUT - 1 and len(head) - 1 - back <= NEAR_BREAK:
            head = head[: back + 1]
    start = len(text) - len(tail)
    if tail and tail[0] not in WORD_BREAKS and text[start - 1] not in WORD_BREAKS:
        found = [i for i in (tail.find(c) for c in WORD_BREAKS) if i >= 0]
        if found and min(found) <= NEAR_BREAK and len(tail) - min(found) >= MIN_WORD_CUT:
            tail = tail[min(found) :]
    return head + ELLIPSIS + tail


def lesson_labels(lesson_ids: Iterable[str]) -> dict[str, str]:
    """Each lesson's name where a narrow table names lessons by their file name (without `.md`): the whole id
    (without `.md`) for the lessons whose file names are alike (tools/retry.md and workflow/retry.md would
    both read "retry"). Cut to a column with `shorten_lesson`."""
    ids = list(lesson_ids)
    names = {lesson_id: lesson_id.removesuffix(".md").rsplit("/", 1)[-1] for lesson_id in ids}
    seen = Counter(names.values())
    return {lesson_id: name if seen[name] == 1 else lesson_id.removesuffix(".md") for lesson_id, name in names.items()}
