"""Lesson `match.patterns`: regexes from lesson files, matched with a time limit.

Patterns come from files anyone can edit, and a catastrophic-backtracking shape such as
`(a+)+$` would hang `select` forever with the stdlib `re`. The `regex` module accepts the
same syntax and takes a timeout.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

PATTERN_TIMEOUT_S = 0.05


class PatternError(ValueError):
    pass


@lru_cache(maxsize=4096)
def compile_pattern(pattern: str) -> Any:
    """The compiled pattern (case-insensitive), or PatternError with the reason."""
    import regex

    try:
        return regex.compile(pattern, regex.IGNORECASE | regex.VERSION0)
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        raise PatternError(f"invalid pattern {pattern!r}: {exc}") from None


def pattern_matches(pattern: str, text: str, timeout: float = PATTERN_TIMEOUT_S) -> bool:
    """True when the pattern occurs in text; False for invalid patterns and ones that time out."""
    try:
        compiled = compile_pattern(pattern)
        return compiled.search(text, timeout=timeout) is not None
    except (PatternError, TimeoutError):
        return False
