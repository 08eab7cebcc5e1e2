"""The credit table `show`, `explain` and `record` print for a session (`grade` and `undo` print its cells):
each lesson's salience, weight, credited reward and alpha/beta changes, then the lessons included during the
session, said in one line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lesson_credit.cli.render import fmt, safe, table, wrap
from lesson_credit.core.base.numbers import signed

if TYPE_CHECKING:
    from lesson_credit.core.views import Explanation, LessonCredit

CREDIT_HEADERS = ["lesson", "salience", "weight", "credited", "alpha", "beta"]  # credited: the lesson's share


def no_lessons_line(pending: bool) -> str:
    """What stands for the credit table of a session without lessons (it would be empty): such a session
    moves no posterior; graded, it is a session without any lesson for the effect estimates."""
    when = "once graded, it counts" if pending else "it counts"
    return f"no lessons: no posterior moves; {when} for the baseline only"


def credit_cells(c: LessonCredit, pending: bool) -> tuple[str, str, str]:
    """A lesson's credited reward and its alpha and beta changes as the credit tables show them: for a
    pending session (no reward) nothing is credited and nothing moves, so each is "-", not +0.000."""
    if pending:
        return "-", "-", "-"
    return fmt(c.reward), signed(c.alpha_delta), signed(c.beta_delta)


def credit_table(exp: Explanation, width: int | None) -> str:
    """The session's credit table (a line saying what a session without lessons does), then the lessons
    included during it (record --during): credited as the others, they are no treatment of the effect
    estimates, which count the session as one without them."""
    pending = exp.base_reward is None
    if not exp.lessons:
        return wrap(no_lessons_line(pending), width)
    rows = [(c.path, fmt(c.salience), fmt(c.weight), *credit_cells(c, pending)) for c in exp.lessons]
    text = table(CREDIT_HEADERS, rows, right=(1, 2, 3, 4, 5), width=width, shorten_columns={0: "path"})
    during = [safe(c.path) for c in exp.lessons if c.during]
    if not during:
        return text
    them = "them" if len(during) > 1 else "it"
    said = (
        f"included during the session (record --during), not chosen before it: {', '.join(during)}; credited as"
        f" the others, and `loo` counts the session as one without {them}"
    )
    return f"{text}\n{wrap(said, width, hang=2)}"
