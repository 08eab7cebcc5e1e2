"""`prune`: retire the arms whose lesson files are gone, by logging a retire event.

Nothing is deleted: the arms' sessions and grades stay in the log and keep counting in every
fold. A retired arm is only hidden from `status` and `replay` (unless `--all`) while its file
stays gone; restoring the file brings the lesson back with its evidence. The event is
`{"type": "retire", "timestamp": ISO-8601, "retired": [lesson ids]}`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.base.files import reading_back
from lesson_credit.core.library.lessons import MISSING
from lesson_credit.core.log.events import RETIRE, encode

if TYPE_CHECKING:
    from lesson_credit.core.views import LessonRow
    from lesson_credit.core.workspace import Workspace


def missing_arms(ws: Workspace) -> list[str]:
    """Arms of the log whose lesson file is not in the library and that are not retired yet."""
    known = {lesson.id for lesson in ws.library().lessons}
    known |= {p.lesson_id for p in ws.library().problems if p.lesson_id}  # a broken file is still there
    retired = ws.retired_arms()
    return [arm for arm in ws.data().arm_ids if arm not in known and arm not in retired]


def retire_missing(ws: Workspace, *, dry_run: bool = False) -> list[str]:
    """Log one retire event for every arm `missing_arms` finds (checked again under the lock).
    WorkspaceError when gptme.toml's library cannot be read whole (a folder it names is missing): its
    lessons would look gone, as `select` refuses to draw from it."""
    if (problem := ws.library().config_problem()) is not None:
        raise WorkspaceError(f"{problem}; not pruning against an incomplete library (fix gptme.toml)")
    if dry_run:
        return missing_arms(ws)
    with ws.log.locked():
        ws.refresh()
        arms = missing_arms(ws)
        if arms:
            ws.log.append(encode({"type": RETIRE, "timestamp": ws.now_iso(), "retired": arms}))
            with reading_back():
                ws.refresh()
    return arms


def hidden_rows(ws: Workspace, rows: Sequence[LessonRow]) -> frozenset[str]:
    """The rows `status` hides (unless `--all`), as the dashboard does: arms retired by `prune` whose
    lesson file is still gone (status missing). A restored file brings its lesson back (docs/format.md §5.6)."""
    retired = ws.retired_arms()
    if not retired:
        return frozenset()
    return frozenset(row.path for row in rows if row.status == MISSING and row.path in retired)
