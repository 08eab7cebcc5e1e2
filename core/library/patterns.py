"""Lesson `match.patterns`: regexes from lesson files, compiled under a size bound and matched with a time limit.

Patterns come from files anyone can edit, and a catastrophic-backtracking shape such as
`(a+)+$` would hang `select` forever with the stdlib `re`. The `regex` module accepts the
same syntax and takes a timeout, but the timeout covers matching only: compiling expands a
counted repeat into copies of what it repeats, so `(?:(?:(?:a{100}){100}){100}){100}` (30
bytes) asks for 10^8 copies and ~20 GB. `expanded_size` counts those copies from the text
alone, and a pattern over `PATTERN_MAX_SIZE` is refused before it is compiled.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from lesson_credit.core.base.errors import UserError

PATTERN_TIMEOUT_S = 0.05
PATTERN_MAX_SIZE = 10_000  # elements once counted repeats are expanded (~0.5 KB each compiled)
# Patterns one lesson has tried (the first ones, in its order): each may take PATTERN_TIMEOUT_S of a `select`
# before it counts as no match, so 200 of `^(a|a)*$` took 16 s (gptme's own lessons have none)
PATTERN_MAX_PER_LESSON = 16
# Patterns one select tries over the whole library (those of lessons no keyword of which hits, in the library's
# order): each may take PATTERN_TIMEOUT_S, so 100 lessons of 16 slow patterns could take 80 s. A count, never time.
PATTERN_MAX_PER_SELECT = 128


def patterns_past_cap(patterns: Sequence[str]) -> str | None:
    """Why a lesson's patterns past its first PATTERN_MAX_PER_LESSON are not tried (one line), or None."""
    if (beyond := len(patterns) - PATTERN_MAX_PER_LESSON) <= 0:
        return None
    each = f"each up to {PATTERN_TIMEOUT_S} s of a select"
    return f"{beyond} pattern{'s' if beyond > 1 else ''} past the first {PATTERN_MAX_PER_LESSON} ({each}); ignored"


def patterns_untried_reason(lessons: int) -> str:
    """Why `lessons` lessons' patterns (some or all) were not tried in a select: one line."""
    return (
        f"the patterns of {lessons} lesson{'s' if lessons > 1 else ''} were not tried (or not all): a select tries at "
        f"most {PATTERN_MAX_PER_SELECT} of the library's patterns, in its order (each up to {PATTERN_TIMEOUT_S} s)"
    )


_COUNT = re.compile(r"\{\s*(\d*)\s*(?:,\s*(\d*)\s*)?\}")
_X_FLAG = re.compile(r"\(\?[a-zA-Z-]*x")  # an inline flag that may turn verbose mode on (or off)
_SCOPED = re.compile(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?:")  # a group's own flags: (?x:...), (?-x:...)


class PatternError(UserError):
    pass


def expanded_size(pattern: str, limit: int = PATTERN_MAX_SIZE) -> int:
    """How many elements compiling `pattern` makes, at least: each character, class or escape
    is one, a group the sum of its content, and a counted repeat `{m}`, `{m,}` or `{m,n}`
    multiplies what it repeats by its largest count (the `regex` module writes out that many
    copies). An estimate from the text alone that never undercounts a repeat; it stops once
    past `limit`. Linear in the pattern's length. Where an `x` flag could make the pattern
    verbose (`#` starts a comment), it is read both ways and the larger size counts."""
    plain = _size(pattern, limit, verbose=False)
    return max(plain, _size(pattern, limit, verbose=True)) if _X_FLAG.search(pattern) else plain


def _size(pattern: str, limit: int, verbose: bool) -> int:
    # per open group: [its size so far, its last item's size (what a repeat repeats), 1 when verbose]
    stack = [[0, 0, int(verbose)]]
    i, end = 0, len(pattern)
    while i < end:
        char, top = pattern[i], stack[-1]
        item = 1
        if char == "\\":
            i += 2
            if pattern[i - 1 : i] in ("p", "P", "N", "x") and pattern[i : i + 1] == "{":
                i = _after(pattern, "}", i)
        elif char == "[":
            i = _class_end(pattern, i + 1)
        elif char == "(" and pattern.startswith("(?#", i):
            i = _after(pattern, ")", i)
            continue
        elif char == "(":
            flags = _SCOPED.match(pattern, i)
            on, off = (flags.group(1), flags.group(2) or "") if flags else ("", "")
            stack.append([0, 0, int("x" in on or (top[2] == 1 and "x" not in off))])
            i += 1
            continue
        elif char == ")" and len(stack) > 1:
            item = max(1, stack.pop()[0])
            top = stack[-1]
            i += 1
        elif char == "|":
            top[1] = 0
            i += 1
            continue
        elif char in "*+?" or (top[2] and char.isspace()):
            i += 1
            continue
        elif char == "#" and top[2]:
            i = _after(pattern, "\n", i)
            continue
        elif char == "{" and (count := _COUNT.match(pattern, i)) and (count.group(1) or count.group(2)):
            times = max(1, *(_number(group) for group in count.groups()))
            top[0] += top[1] * (times - 1)
            top[1] *= times
            i = count.end()
            if top[0] > limit:
                return top[0]
            continue
        else:
            i += 1
        top[0] += item
        top[1] = item
        if top[0] > limit:
            return top[0]
    return sum(size for size, _, _ in stack)


def _number(digits: str | None) -> int:
    return 0 if not digits else 10**9 if len(digits) > 9 else int(digits)


def _after(pattern: str, closing: str, start: int) -> int:
    found = pattern.find(closing, start)
    return len(pattern) if found < 0 else found + 1


def _class_end(pattern: str, i: int) -> int:
    """Just past the `]` that closes a character class whose content starts at `i`."""
    if pattern[i : i + 1] == "^":
        i += 1
    if pattern[i : i + 1] == "]":
        i += 1
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
        elif char == "[" and pattern[i + 1 : i + 2] in (":", ".", "="):
            i = _after(pattern, pattern[i + 1] + "]", i + 2)
        elif char == "]":
            return i + 1
        else:
            i += 1
    return i


def shown(pattern: str) -> str:
    """The pattern for a one-line message: its repr, cut after 80 characters."""
    return repr(pattern) if len(pattern) <= 80 else repr(pattern[:77]) + "..."


@lru_cache(maxsize=4096)
def compile_pattern(pattern: str) -> Any:
    """The compiled pattern (case-insensitive), or PatternError with the reason (one line);
    a pattern whose `expanded_size` is over PATTERN_MAX_SIZE is refused without compiling."""
    import regex

    if expanded_size(pattern) > PATTERN_MAX_SIZE:
        raise PatternError(
            f"pattern {shown(pattern)} is too big to compile: its counted repeats expand to more than "
            f"{PATTERN_MAX_SIZE:,} elements"
        )
    try:
        return regex.compile(pattern, regex.IGNORECASE | regex.VERSION0)
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        raise PatternError(f"invalid pattern {shown(pattern)}: {exc}") from None


def pattern_matches(pattern: str, text: str, timeout: float = PATTERN_TIMEOUT_S) -> bool:
    """True when the pattern occurs in text; False for invalid patterns and ones that time out."""
    try:
        compiled = compile_pattern(pattern)
        return compiled.search(text, timeout=timeout) is not None
    except (PatternError, TimeoutError):
        return False
