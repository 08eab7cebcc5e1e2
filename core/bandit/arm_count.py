"""How many arms a `bandit-state.json` has, counted from its bytes without decoding it, as far as a number asked.

A state file with more arms beyond the log's than a log names lessons is refused (StateFile.refuse_arms_file): deciding
that by decoding it cost every command the whole decode (1,500,000 arms, 235 MB: 10 s of CPU and 1.4 GB).
`count_arms` counts the members of the top-level object's "arms" object a few MB at a time, following strings, escapes
and nesting as JSON has them (numpy, a few passes over each piece), and stops once past the number asked: the first
100,000 arms of such a file are 15 MB. Bytes it cannot follow as a state file (no top-level object, no "arms" object,
the file ended inside it, or bytes that are not JSON as far as the count read: `json_so_far`) tell nothing (-1): the
decode then decides as before, and says where a file is not JSON. A document naming "arms" twice at the
top level (no writer of a JSON object does) is counted by the first; the decoded file's are counted again after.
numpy is imported by the scan alone, which never runs over bytes too few to hold the arms asked about (`fewest_bytes`:
the state file of a workspace of 1,000 lessons is read without it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, BinaryIO

import msgspec

if TYPE_CHECKING:
    import numpy as np

# what `count_arms` counts, as a refusal says it: a decode keeps a key's last value, the count counts each
ARM_KEYS = "keys of its arms object, a key given twice counted twice"
CHUNK_BYTES = 1 << 22  # read and scanned at a time
KEY_BYTES = 64  # a top-level key longer than this is not "arms" (spelled with escapes, \u0061rms..., it is 24 bytes)
# the bytes told apart: `{`, `[`, `}` and `]`, `:` (no commas: each member has a colon), and strings' `"` and `\\`
OBJECT, ARRAY, CLOSE, COLON, QUOTE, SLASH = 1, 2, 3, 4, 5, 6
_MARKS = dict(zip(b'{[}]:"\\', (OBJECT, ARRAY, CLOSE, CLOSE, COLON, QUOTE, SLASH), strict=True))
_CODES = bytes(_MARKS.get(byte, 0) for byte in range(256))  # (bytes.translate: a byte's code, others 0)
_STEP = (0, 1, 1, -1, 0)  # the depth each kind adds
START, TOP, AFTER_KEY, IN_ARMS = range(4)  # where: before the top-level object, in it, after "arms":, in arms
_BYTE = re.compile(r"\(byte (\d+)\)$")  # where msgspec says a document stops being JSON


def fewest_bytes(arms: int) -> int:
    """The fewest bytes a state file with `arms` arms takes: each is a key and a value, `"":0` and a comma at least."""
    return 5 * arms


class _Scan:
    """What the scan knows at the end of the bytes read so far."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.offset = 0  # the first byte of the piece being read, in the whole
        self.in_string = False
        self.backslashes = 0  # the run of backslashes that ended the previous piece
        self.depth = 0
        self.quotes: list[int] = []  # the last two quotes that open or close strings, in the whole
        self.tail = b""  # the bytes before the piece (a key that began there)
        self.where = START
        self.arms = 0
        self.told: bool | None = None  # True: more arms than `limit`; False: not (or cannot be told)
        self.whole = False  # all the arms counted (the arms object ended)

    def read(self, piece: bytes | memoryview) -> None:
        """Scan the next `piece` of the file; `told` once it is decided."""
        import numpy as np

        codes = np.frombuffer(bytes(piece).translate(_CODES), dtype=np.uint8)
        at = np.flatnonzero(codes != 0)  # (a byte in 10 or so: strings are most of a state file)
        kinds = codes[at]
        real = kinds == QUOTE
        real[np.flatnonzero(real)[self._escaped(at[real], at[kinds == SLASH], len(codes))]] = False
        strings = np.cumsum(real, dtype=np.int32) - real + self.in_string  # the quotes before each: odd in a string
        marks = (kinds < QUOTE) & (strings & 1 == 0)
        quotes, at, kinds = at[real], at[marks], kinds[marks]
        steps = np.array(_STEP, dtype=np.int32)[kinds]
        after = self.depth + np.cumsum(steps)
        before = after - steps
        if len(after) and after.min() < 0:
            self.told = False  # (closes more than it opened: not JSON)
        else:
            self._follow(piece, quotes, at, kinds, before, after)
        self.in_string = bool((self.in_string + len(quotes)) % 2)
        self.depth = int(after[-1]) if len(after) else self.depth
        self.quotes = (self.quotes + (quotes[-2:] + self.offset).tolist())[-2:]
        self.tail = (self.tail + bytes(piece[-(KEY_BYTES + 2) :]))[-(KEY_BYTES + 2) :]
        self.offset += len(codes)

    def _escaped(self, quotes: np.ndarray, slashes: np.ndarray, size: int) -> np.ndarray:
        """Which of the piece's quotes (at `quotes`) a backslash escapes: those after an odd run of backslashes (at
        `slashes`; in JSON a backslash is only ever in a string). Keeps the run that ends the piece (`size` bytes)."""
        import numpy as np

        if not len(slashes):
            escaped: np.ndarray = (quotes == 0) & bool(self.backslashes % 2)
            self.backslashes = 0
            return escaped
        starts = np.ones(len(slashes), dtype=bool)
        starts[1:] = slashes[1:] != slashes[:-1] + 1
        first = np.maximum.accumulate(np.where(starts, np.arange(len(slashes)), 0))  # where each one's run begins
        runs = np.arange(len(slashes)) - first + 1 + np.where(slashes[first] == 0, self.backslashes, 0)
        last = np.maximum(np.searchsorted(slashes, quotes) - 1, 0)  # the backslash before each quote
        touching = (slashes[last] == quotes - 1) & (quotes > 0)
        run = np.where(touching, runs[last], np.where(quotes == 0, self.backslashes, 0))
        self.backslashes = int(runs[-1]) if slashes[-1] == size - 1 else 0
        escaped = run % 2 == 1
        return escaped

    def _follow(
        self,
        piece: bytes | memoryview,
        quotes: np.ndarray,
        at: np.ndarray,
        kinds: np.ndarray,
        before: np.ndarray,
        after: np.ndarray,
    ) -> None:
        """Follow the piece's brackets and colons (`at`, of `kinds`, the depth `before` and `after` each): the
        top-level object, its key "arms", the arms object's members (its colons one level in)."""
        import numpy as np

        i = 0
        while i < len(at) and self.told is None:
            if self.where == START:  # (a document that is not an object: nothing to tell)
                self.where, self.told, i = (TOP, None, i + 1) if kinds[i] == OBJECT else (START, False, i)
            elif self.where == TOP:
                keys = np.flatnonzero((kinds[i:] == COLON) & (before[i:] == 1))
                ends = np.flatnonzero(after[i:] == 0)
                if len(ends) and (not len(keys) or ends[0] < keys[0]):
                    self.told = False  # (the top-level object ended with no "arms" object)
                elif not len(keys):
                    i = len(at)
                else:
                    i += int(keys[0]) + 1
                    self.where = AFTER_KEY if self._key_before(piece, quotes, int(at[i - 1])) == "arms" else TOP
            elif self.where == AFTER_KEY:  # its value: any but an object ends before the next bracket or colon
                self.where, self.told, i = (IN_ARMS, None, i + 1) if kinds[i] == OBJECT else (AFTER_KEY, False, i)
            else:
                ends = np.flatnonzero(after[i:] == 1)
                stop = i + int(ends[0]) if len(ends) else len(at)
                self._members(kinds[i:stop], before[i:stop], 2)
                if self.told is None and len(ends):
                    self.told, self.whole = False, True
                i = stop

    def _members(self, kinds: np.ndarray, before: np.ndarray, depth: int) -> None:
        """Count the members of the objects `depth` levels in (their colons; `kinds` and the depth `before` each mark):
        told once past the limit."""
        import numpy as np

        self.arms += int(np.count_nonzero((kinds == COLON) & (before == depth)))
        if self.arms > self.limit:
            self.told = True

    def counted(self, pieces: Iterable[bytes | memoryview]) -> int:
        """Scan `pieces` (in order) until told: what `count_arms` (or `count_members`, for `_Members`) returns."""
        read = bytearray()  # (for `json_so_far`: held once)
        for piece in pieces:
            self.read(piece)
            read += piece
            if self.told is not None:
                if self.told and not json_so_far(read):
                    return -1  # (the decode says where it is not JSON, as of any file)
                return self.arms if self.told or self.whole else -1
        return self.untold()

    def untold(self) -> int:
        """The count when the bytes end before it is told: none (the file ended inside the arms object)."""
        return -1

    def _key_before(self, piece: bytes | memoryview, quotes: np.ndarray, colon: int) -> str | None:
        """The top-level key whose colon is at `colon` (in `piece`): the string just before it, decoded when it is
        short enough to be "arms"; None otherwise."""
        import numpy as np

        before = int(np.searchsorted(quotes, colon))
        seen = self.quotes + (quotes[max(before - 2, 0) : before] + self.offset).tolist()
        if len(seen) < 2 or seen[-1] - seen[-2] > KEY_BYTES + 1:
            return None
        first, last = seen[-2] - self.offset, seen[-1] - self.offset + 1  # (in the piece; before it: in the tail)
        if first < -len(self.tail):
            return None
        text = (self.tail[first:] if first < 0 else b"") + bytes(piece[max(first, 0) : max(last, 0)])
        if last <= 0:
            text = self.tail[first : len(self.tail) + last]
        try:
            key = json.loads(text)
        except ValueError:
            return None
        return key if isinstance(key, str) else None


def count_arms(pieces: Iterable[bytes | memoryview], limit: int) -> int:
    """The arms of the state file whose bytes are `pieces` (in order), counted until past `limit`: more than `limit`
    (the arms counted so far: it has at least as many), else all of them; -1 when they cannot be told (its bytes end
    first, or cannot be followed as a state file: see the module's docstring, or are not JSON as far as they were
    read: `json_so_far`)."""
    return _Scan(limit).counted(pieces)


class _Members(_Scan):
    """`_Scan` counting the top-level object's members (its colons one level in) instead of its arms'."""

    def _follow(
        self,
        piece: bytes | memoryview,
        quotes: np.ndarray,
        at: np.ndarray,
        kinds: np.ndarray,
        before: np.ndarray,
        after: np.ndarray,
    ) -> None:
        self._members(kinds, before, 1)

    def untold(self) -> int:
        return self.arms  # (every member: the bytes ended, none past the limit)


def count_members(pieces: Iterable[bytes | memoryview], limit: int) -> int:
    """The members of the top-level object of the JSON document whose bytes are `pieces`, counted until past `limit`
    (more than `limit`: at least as many), else all of them (0 for a document that is not an object); -1 when they
    cannot be told: bytes that are not JSON as far as they were read (`json_so_far`), or close more than they open.
    A key given twice counts twice (a decode keeps its last value)."""
    return _Members(limit).counted(pieces)


def bytes_have_more_members(raw: bytes, limit: int) -> bool:
    """Whether the JSON document `raw` has a top-level object of more than `limit` members (`count_members`), each
    at least `"":0,` (fewer bytes than that many are not scanned)."""
    if len(raw) < fewest_bytes(limit + 1):
        return False
    view = memoryview(raw)
    return count_members((view[at : at + CHUNK_BYTES] for at in range(0, len(raw), CHUNK_BYTES)), limit) > limit


def json_so_far(data: bytes | bytearray) -> bool:
    """Whether `data` is JSON, or the start of some JSON document: checked without making its objects (msgspec skips
    a Raw value, 3 ms a MB). The scan follows brackets, colons and strings only: `{"arms": {"a": 1 "b": 1}}` has two
    colons in its arms object and is not JSON from its second member on."""
    try:
        msgspec.json.decode(data, type=msgspec.Raw)
    except msgspec.DecodeError as exc:  # (the document goes on past the bytes read: cut short, or inside a number)
        said, found = str(exc), _BYTE.search(str(exc))
        if "truncated" in said or "trailing" in said:
            return "truncated" in said  # (trailing: the document ended, and bytes follow it)
        return found is not None and int(found.group(1)) >= len(data)
    except RecursionError:  # (nested deeper than any state file: the decode refuses it, JSON_MAX_DEPTH)
        return False
    return True


def more_arms_than(pieces: Iterable[bytes | memoryview], limit: int) -> bool:
    """Whether the state file whose bytes are `pieces` has more than `limit` arms (`count_arms`)."""
    return count_arms(pieces, limit) > limit


def bytes_have_more_arms(raw: bytes, limit: int) -> bool:
    """`more_arms_than` of bytes read already (fewer than `fewest_bytes` are not scanned)."""
    if len(raw) < fewest_bytes(limit + 1):
        return False
    view = memoryview(raw)
    return more_arms_than((view[at : at + CHUNK_BYTES] for at in range(0, len(raw), CHUNK_BYTES)), limit)


def file_pieces(handle: BinaryIO) -> Iterator[bytes]:
    """The bytes of an open file from where it is, CHUNK_BYTES at a time (read only as far as they are asked for)."""
    while piece := handle.read(CHUNK_BYTES):
        yield piece
