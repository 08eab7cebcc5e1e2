"""Reading TOML that anyone can put in a workspace (config.toml, gptme.toml) in bounded time and memory.

Python's `tomllib` (and tomlkit) recurse once per level of `[[[...` or `{a={a=...`: 1,000 of them (2 KB)
raise RecursionError, which used to be a traceback. A dotted key costs the square of its depth: for each
of its parts the parser builds and checks the key up to that part, so `a.a.a...` of 8,000 parts (16 KB)
took 2.5 s and 260 MB, and a 1 MB file of them never finished. `check_shape` refuses such text before any
parser sees it (a key is on one line, and each of its levels takes a `.`, so the squares of the dots per
line bound that cost); `loads` is `tomllib.loads` with both refusals as TOMLDecodeError, one line each.
"""

from __future__ import annotations

import tomllib
from typing import Any

DOTS_SQUARED_MAX = 1_000_000  # a line of 1,000 dots (its key's cost, ~0.1 s), or many shorter; real files: < 1,000


def check_shape(text: str) -> None:
    """TOMLDecodeError (naming the line with the most dots) when the dotted keys the text may hold would cost
    more than DOTS_SQUARED_MAX to parse; linear in the text."""
    counts = [line.count(".") for line in text.split("\n")]
    if sum(count * count for count in counts) > DOTS_SQUARED_MAX:
        worst = max(range(len(counts)), key=counts.__getitem__)
        raise tomllib.TOMLDecodeError(f"keys nested too deeply to read: line {worst + 1} has {counts[worst]:,} dots")


def loads(text: str) -> dict[str, Any]:
    """`tomllib.loads(text)`, with text nested too deeply (`check_shape`, or arrays and inline tables inside
    each other past Python's recursion limit) refused as a TOMLDecodeError saying so."""
    check_shape(text)
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError("arrays or tables nested too deeply to read") from None
