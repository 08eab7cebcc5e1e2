"""The dashboard's credit story marks a wildcard keyword the journal's work budget left unmatched, as explain does
(`(not matched)`): counted as missed, it was never looked for (core/library/keyword_limits.py `work_budget`)."""

from __future__ import annotations

from lesson_credit.core.library.salience import salience_breakdowns
from lesson_credit.core.model.settings import CreditSettings
from lesson_credit.core.views import LessonCredit
from lesson_credit.tui.widgets.credit_panel import credit_story


def test_the_story_marks_a_wildcard_left_unmatched() -> None:
    # 300,000 `a`s: budget 16 x 300,001 = 4,800,016 occurrences; four 4-part wildcards of 1,200,000 (`a`) or
    # 1,199,999 (one `aa` part) each fit (4,799,997); the fifth would pass it: missed, not matched.
    wild = ["a*a*a*a", "aa*a*a*a", "a*aa*a*a", "a*a*aa*a", "a*a*a*aa"]
    (breakdown,) = salience_breakdowns("a" * 300_000, [("w.md", [*wild, "zzz"])])
    assert [k.keyword for k in breakdown.keywords if k.unmatched] == ["a*a*a*aa"]
    credit = LessonCredit("w.md", breakdown.salience, 0.5, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, breakdown)
    story = credit_story(credit, CreditSettings(), None).plain
    assert "missed: a*a*a*aa (not matched), zzz" in story
