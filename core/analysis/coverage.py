"""Keyword coverage: how many journals each library keyword hits, and the keywords too broad to
tell sessions apart."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from lesson_credit.core.analysis.limits import BROAD_KEYWORD_SHARE
from lesson_credit.core.library.lessons import Lesson
from lesson_credit.core.library.salience import KeywordMatcher, casekey, counted_keys, counted_keywords


def keyword_coverage(
    lessons: Sequence[Lesson],
    journal_paths: Iterable[str | None],
    read_text: Callable[[str | None], str | None],
    max_journals: int = 2000,
) -> tuple[int, dict[str, float]]:
    """(journals read, share of them each keyword of `lessons` hits), over the first
    `max_journals` of `journal_paths` that `read_text` can read."""
    matcher = KeywordMatcher.of_keys(key for lesson in lessons for key in counted_keys(lesson.keywords))
    counts: dict[str, int] = {}
    read = 0
    for journal_path in journal_paths:
        if read >= max_journals:
            break
        text = read_text(journal_path)
        if text is None:
            continue
        read += 1
        for keyword in matcher.scan(text):
            counts[keyword] = counts.get(keyword, 0) + 1
    return read, {k: c / read for k, c in counts.items()} if read else {}


def broad_keywords(
    lessons: Sequence[Lesson], read: int, coverage: dict[str, float], share: float = BROAD_KEYWORD_SHARE
) -> dict[str, str]:
    """Lessons with a keyword that hits more than `share` of journals, with the reason (none
    when fewer than 10 journals were read)."""
    if read < 10:
        return {}
    found = {}
    for lesson in lessons:
        worst = max(((coverage.get(casekey(k), 0.0), k) for k in counted_keywords(lesson.keywords)), default=None)
        if worst is not None and worst[0] > share:
            found[lesson.id] = f"keyword {worst[1]!r} matches {worst[0]:.0%} of journals: too broad"
    return found
