"""Reward sources (docs/records.md): who scored a session, and which score the posteriors use.

A session can carry a score from several sources at once: people (`manual` and any other named
grader), an LLM judge, a trajectory or heuristic grade, and an outcome word mapped to a number.
Each grade event and each session record belongs to one source, decided by its grader's name
alone (`source_of`), so the log says which source every number came from and a cache of the
parsed log never goes stale when settings change. Per source the latest event is in force (a
retraction withdraws that source's score); the priority, an ordered list of sources, picks the
first source that has a score (`combine`). Pure functions over names and arrays (numpy is imported by
`combine` alone: a workspace's config.toml is read without it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatArray: TypeAlias = npt.NDArray[np.float64]
    CodeArray: TypeAlias = npt.NDArray[np.int8]

HUMAN, JUDGE, HEURISTIC, OUTCOME = "human", "judge", "heuristic", "outcome"
SOURCES: tuple[str, ...] = (HUMAN, JUDGE, HEURISTIC, OUTCOME)  # the code of a source is its index here
# the default priority: a person's latest grade, then the judge, then a heuristic (trajectory) grade,
# then the outcome word's mapping
DEFAULT_PRIORITY: tuple[str, ...] = SOURCES
NO_SOURCE = -1  # the code of "no source has a score" (the session is pending)

# words of automatic sources' grader names; a name with none of them is a person (`manual`, `alice`, ...)
_JUDGE_WORDS = frozenset({"judge", "llm"})
_HEURISTIC_WORDS = frozenset({"heuristic", "trajectory", "auto", "simulated", "imported"})
_OUTCOME_WORDS = frozenset({"outcome"})
_WORDS = re.compile(r"[a-z0-9]+")


def source_of(grader: str | None) -> str:
    """The source a grader's scores belong to. A record without a grader (another tool's line in
    the published shape, or `record` before graders were logged) is an automatic heuristic score.
    The name before a `:` is split into words (letters and digits; `-`, `_`, spaces and the rest
    separate them): a word of one automatic source makes it that source (`llm judge`, `judge:haiku`, `gpt-4-judge`,
    `trajectory_grade`); a name with no such word, or with words of two sources (`ambiguous_sources`
    names them; writers refuse it), is a person's."""
    if grader is None or grader == "":
        return HEURISTIC
    found = automatic_sources(grader)
    return found[0] if len(found) == 1 else HUMAN


def automatic_sources(grader: str) -> tuple[str, ...]:
    """The automatic sources whose words a grader's name has (docs/format.md §5.3)."""
    words = set(_WORDS.findall(grader.lower().split(":", 1)[0]))  # `judge:MODEL`: the model is not read
    named = ((JUDGE, _JUDGE_WORDS), (HEURISTIC, _HEURISTIC_WORDS), (OUTCOME, _OUTCOME_WORDS))
    return tuple(source for source, vocabulary in named if words & vocabulary)


_code_cache: dict[str | None, int] = {}


def code_of(grader: str | None) -> int:
    """`source_of` as its code (an index into SOURCES), memoised: it runs once per line of a big log."""
    code = _code_cache.get(grader)
    if code is None:
        if len(_code_cache) > 10_000:
            _code_cache.clear()
        code = _code_cache[grader] = SOURCES.index(source_of(grader))
    return code


def check_priority(priority: Iterable[object]) -> tuple[str, ...]:
    """A valid priority: a non-empty list of distinct source names. ValueError (one line) if not."""
    if isinstance(priority, str):
        raise ValueError(f"priority must be a list of sources, got the string {priority!r}")
    out: list[str] = []
    for item in priority:
        if not isinstance(item, str) or item not in SOURCES:
            raise ValueError(f"unknown reward source {item!r} (expected some of {', '.join(SOURCES)})")
        if item in out:
            raise ValueError(f"reward source {item!r} is listed twice in the priority")
        out.append(item)
    if not out:
        raise ValueError("the reward priority names no source")
    return tuple(out)


def parse_priority(text: str) -> tuple[str, ...]:
    """`human,judge,outcome` (commas and/or spaces) as a priority."""
    return check_priority([part for part in text.replace(",", " ").split() if part])


def combine(values: Mapping[str, FloatArray], priority: Sequence[str], n: int) -> tuple[FloatArray, CodeArray]:
    """(each session's score in force, the code of the source it came from; NO_SOURCE = pending).

    `values[source]` holds that source's score per session (NaN: none); the first source of
    `priority` with a score wins. Sources not in the priority never count, but stay visible."""
    import numpy as np

    base = np.full(n, np.nan)
    chosen = np.full(n, NO_SOURCE, dtype=np.int8)
    for source in reversed(priority):  # the first in the priority is applied last, so it wins
        column = values.get(source)
        if column is None:
            continue
        column = column[:n]
        has = ~np.isnan(column)
        # copyto with a mask copies in place (a boolean index gathers then scatters: ~3x the time at 1M)
        np.copyto(base[: len(column)], column, where=has)
        np.copyto(chosen[: len(column)], SOURCES.index(source), where=has)
    return base, chosen


class RewardInputs:
    """What decides the scores in force besides the log: the priority, and scores from outside the
    log (gptme-sessions records joined to sessions) per source, each an array by session row
    (shorter than the log when sessions were appended since the join: NaN beyond).

    A score from outside counts for a source only where the log gives that source no score (no
    event of it, or its latest withdrawn): the log's grade events stay the source of truth. `token`
    names the outside scores (the records file's identity and the join), so that equal inputs are
    known equal cheaply."""

    __slots__ = ("external", "priority", "token")

    def __init__(
        self,
        priority: Sequence[str] = DEFAULT_PRIORITY,
        external: Mapping[str, FloatArray] | None = None,
        token: object = None,
    ) -> None:
        self.priority = check_priority(priority)
        self.external: Mapping[str, FloatArray] = dict(external or {})
        self.token = token

    def same_as(self, other: RewardInputs | None) -> bool:
        return other is not None and self.priority == other.priority and self.token == other.token


DEFAULT_INPUTS = RewardInputs()
