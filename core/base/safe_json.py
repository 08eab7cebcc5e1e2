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

from lesson_credit.core.base.errors import UserError
from lesson_credit.core.base.safe_read import read_regular

JSON_MAX_DEPTH = 100  # arrays and objects inside each other; real files nest fewer than 10
_MAX_INT_DIGITS = 300  # an integer this long is still a float (below 1.8e308)
_BYTE = re.compile(r"\s*\(byte (\d+)\)$")
# a digit to "1", e/E to "e", "+" as it is, any other byte to "0": number shapes found with bytes.find
_DIGIT_MAP = bytes(
    0x31 if 0x30 <= b <= 0x39 else b | 0x20 if b in b"eE" else b if b == 0x2B else 0x30 for b in range(256)
)
_DIGIT_RUN = b"1" * (_MAX_INT_DIGITS + 1)
_LINE_SEARCH_BYTES = 1 << 20  # where the nesting passes the limit is looked for this far (a Python step per token)
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


class JsonError(UserError):
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
        raise _not_json(data, where, line, exc) from None
    except RecursionError:
        raise _too_deep(data, where, line) from None
    long_digits = _long_digits(data)
    suspect = long_digits or data.count(b"[") + data.count(b"{") > JSON_MAX_DEPTH
    if suspect and (problem := _unusable(value, numbers=long_digits)):
        if problem == "deep":
            raise _too_deep(data, where, line)
        at = line if line is not None else data.count(b"\n", 0, _number_at(data) or 0) + 1
        raise JsonError(where, at, "a number too big for a float")
    return value


def decode_members(data: bytes, where: str | Path) -> dict[str, msgspec.Raw] | None:
    """The members of the JSON object that is the whole of `data`, each value kept as its bytes (msgspec.Raw: checked
    as JSON, made into no objects: 3 ms a MB), a key given twice as its last; None when the document begins as no
    object does (msgspec stops at its first byte). JsonError as `decode_json` says it (where, the line) when it is not
    JSON or nests past what msgspec follows; the values' own depth and numbers are their decoder's to check."""
    try:
        return msgspec.json.decode(data, type=dict[str, msgspec.Raw])
    except msgspec.ValidationError:
        return None
    except msgspec.DecodeError as exc:
        raise _not_json(data, where, None, exc) from None
    except RecursionError:
        raise _too_deep(data, where, None) from None


def _not_json(data: bytes, where: str | Path, line: int | None, exc: msgspec.DecodeError) -> JsonError:
    reason = str(exc)
    found = _BYTE.search(reason)
    offset = int(found.group(1)) if found else _number_at(data)
    at = line if line is not None or offset is None else data.count(b"\n", 0, offset) + 1
    return JsonError(where, at, f"not valid JSON ({_BYTE.sub('', reason)})")


def read_json(path: Path, limit: int) -> Any:
    """The JSON value of a regular file of at most `limit` bytes: `read_regular`'s errors
    (UnsafeFile, OSError) as it raises them, JsonError as `decode_json` does."""
    return decode_json(read_regular(path, limit), path)


def _too_deep(data: bytes, where: str | Path, line: int | None) -> JsonError:
    deep = _depth_at(data)
    at = line if line is not None or deep is None else data.count(b"\n", 0, deep) + 1
    return JsonError(where, at, f"JSON nested too deeply (over {JSON_MAX_DEPTH} levels)")


def _long_digits(data: bytes) -> bool:
    """Whether a run of more than _MAX_INT_DIGITS digits occurs (in a number or a string: the walk
    tells them apart). Linear: a regex would try each position of a 300-digit run again."""
    return len(data) > _MAX_INT_DIGITS and _DIGIT_RUN in data.translate(_DIGIT_MAP)


def _number_at(data: bytes) -> int | None:
    """The offset of the first number that may be out of range (a long run of digits, or an
    exponent of 3 digits, as in 1e999, which msgspec refuses without saying where)."""
    shapes = data.translate(_DIGIT_MAP)
    found = [at for shape in (_DIGIT_RUN, b"1e111", b"1e+111") if (at := shapes.find(shape)) >= 0]
    return min(found) if found else None


def _unusable(value: Any, numbers: bool = True) -> str | None:
    """ "deep" past JSON_MAX_DEPTH, "number" for an integer past the float range (looked for only with
    `numbers`: without a run of _MAX_INT_DIGITS digits in the bytes there is none), else None."""
    if not isinstance(value, dict | list):
        return "number" if numbers and isinstance(value, int) and value.bit_length() > 1000 else None
    containers = (dict, list)  # (a tuple: isinstance with a union is slower, per child of a 1,000-arm state file)
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > JSON_MAX_DEPTH:
            return "deep"
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, containers):
                stack.append((child, depth + 1))
            elif numbers and isinstance(child, int) and child.bit_length() > 1000:
                return "number"
    return None


def _depth_at(data: bytes) -> int | None:
    """The offset where the nesting first passes JSON_MAX_DEPTH within the first MB (strings
    skipped: brackets in them do not nest), or None. Only on the way to an error, for its line."""
    depth = 0
    for token in _TOKEN.finditer(data, 0, _LINE_SEARCH_BYTES):
        char = data[token.start()]
        if char in b"[{":
            depth += 1
            if depth > JSON_MAX_DEPTH:
                return token.start()
        elif char in b"]}":
            depth -= 1
    return None
