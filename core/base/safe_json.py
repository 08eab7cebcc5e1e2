"""Reading JSON that anyone can put in a workspace: one reader for every file we accept.

A line of 1,000 `[` (2 KB) makes the decoder recurse past Python's limit, and a 400-digit
integer is a number no float holds; both used to be tracebacks. `decode_json` refuses JSON
nested deeper than `JSON_MAX_DEPTH` and numbers outside the float range (msgspec already
refuses `NaN`, `Infinity` and `1e999`), and every refusal is a `JsonError` whose message is one
sentence naming the file and the line. Sizes are capped by the read (`read_json`, or the
caller's `read_regular`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec

from lesson_credit.core.base.safe_read import read_regular

JSON_MAX_DEPTH = 100  # arrays and objects inside each other; real files nest fewer than 10
_MAX_INT_DIGITS = 300  # an integer this long is still a float (below 1.8e308)
_BYTE = re.compile(r"\s*\(byte (\d+)\)$")
_LONG_DIGITS = re.compile(rb"\d{%d}" % (_MAX_INT_DIGITS + 1))
_HUGE_NUMBER = re.compile(rb"\d{%d}|\d[eE]\+?\d{3}" % (_MAX_INT_DIGITS + 1))
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


class JsonError(ValueError):
    """JSON we do not use: the message is one line naming the file and the line; `reason` is
    the part after them (for a caller that reports lines its own way)."""

    def __init__(self, where: str | Path, line: int | None, reason: str) -> None:
        super().__init__(f"{where}, line {line}: {reason}" if line is not None else f"{where}: {reason}")
        self.line = line
        self.reason = reason


def decode_json(data: bytes, where: str | Path, line: int | None = None) -> Any:
    """The value of one JSON document: a whole file (`line` None), or line `line` of a
    JSON-lines file (`data` that line). JsonError, naming `where` and the line, when it is not
    valid JSON, nests deeper than JSON_MAX_DEPTH or holds an integer too big for a float."""
    try:
        value = msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        reason = str(exc)
        found = _BYTE.search(reason)
        offset = int(found.group(1)) if found else _number_at(data)
        at = line if line is not None or offset is None else data.count(b"\n", 0, offset) + 1
        raise JsonError(where, at, f"not valid JSON ({_BYTE.sub('', reason)})") from None
    except RecursionError:
        raise _too_deep(data, where, line) from None
    suspect = data.count(b"[") + data.count(b"{") > JSON_MAX_DEPTH or _LONG_DIGITS.search(data)
    if suspect and not _usable(value):
        if _depth_at(data) is not None:
            raise _too_deep(data, where, line)
        at = line if line is not None else data.count(b"\n", 0, _number_at(data) or 0) + 1
        raise JsonError(where, at, "a number too big for a float")
    return value


def read_json(path: Path, limit: int) -> Any:
    """The JSON value of a regular file of at most `limit` bytes: `read_regular`'s errors
    (UnsafeFile, OSError) as it raises them, JsonError as `decode_json` does."""
    return decode_json(read_regular(path, limit), path)


def _too_deep(data: bytes, where: str | Path, line: int | None) -> JsonError:
    at = line if line is not None else data.count(b"\n", 0, _depth_at(data) or 0) + 1
    return JsonError(where, at, f"JSON nested too deeply (over {JSON_MAX_DEPTH} levels)")


def _number_at(data: bytes) -> int | None:
    """The offset of the first number that may be out of range (for the line of the message)."""
    found = _HUGE_NUMBER.search(data)
    return found.start() if found else None


def _usable(value: Any) -> bool:
    """Nested at most JSON_MAX_DEPTH deep, every integer within the float range."""
    if not isinstance(value, dict | list):
        return not isinstance(value, int) or value.bit_length() <= 1000
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > JSON_MAX_DEPTH:
            return False
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1))
            elif isinstance(child, int) and child.bit_length() > 1000:
                return False
    return True


def _depth_at(data: bytes) -> int | None:
    """The offset where the nesting first passes JSON_MAX_DEPTH, or None when it never does
    (strings skipped: brackets in them do not nest). Only on the way to an error."""
    depth = 0
    for token in _TOKEN.finditer(data):
        char = data[token.start()]
        if char in b"[{":
            depth += 1
            if depth > JSON_MAX_DEPTH:
                return token.start()
        elif char in b"]}":
            depth -= 1
    return None
