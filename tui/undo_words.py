"""What the dashboard says about an undo (tui/writes.py applies it), from what the engine found (core/grading.py's
`Undone` and `UndoRefusal`, which `lesson-credit undo` words its own way): told to the operator at the keys,
whose grader name ("manual") is "you" there. Grader names and session ids are plain text, on one line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lesson_credit.tui.text import fmt_grade, one_line

if TYPE_CHECKING:
    from lesson_credit.core.api import GradeConflict, NothingToUndo, Undone


def undone(sid: str, undo: Undone | None, note: str | None) -> str:
    """An undo's confirmation, for this dashboard's commits and the log's grades alike: "Undid your grade on s4
    (line 5): 0.5 back to pending." (`sid` is one line already; the undo is the operator's, as the dashboard asks
    it). `undo` None (not known): its logged `note`."""
    if undo is None:
        return f"Undo on {sid}: {one_line(note or '')}."
    whence = f" ({one_line(undo.source)})" if undo.source is not None and undo.in_force is not None else ""
    said = f"{fmt_grade(undo.value)} back to {fmt_grade(undo.in_force)}{whence}"
    if undo.note:
        said += f"; {one_line(undo.note)}"
    return f"Undid your grade on {sid} (line {undo.line}): {said}."


def refusal(exc: NothingToUndo | GradeConflict) -> str:
    """Why the operator's undo wrote nothing, told to them: from the engine's `UndoRefusal` that `exc` carries
    ("you have no grade on session 's2' left (...)"); an error that carries none, as its text."""
    found = exc.refusal
    if found is None:
        return one_line(str(exc))
    sid, other = one_line(repr(found.session_id)), one_line(found.other or "")
    match found.kind:
        case "theirs":
            what = "retraction" if found.other_value is None else fmt_grade(found.other_value)
            latest = f"{other}'s {what} on line {found.other_line}"
            return f"you have no grade on session {sid} left (the latest, {latest}, is theirs to undo)"
        case "undone_already":
            return f"your grades on session {sid} are undone already or changed nothing"
        case "no_grade":
            owners = [f"{one_line(name)}'s" for name in found.others]
            whose = owners[0] if len(owners) == 1 else f"{', '.join(owners[:-1])} and {owners[-1]}"
            return f"you have no grade on session {sid} ({whose} grades there are undone already or changed nothing)"
        case "record_only":
            return f"session {sid} is scored only by its record (no grade)"
        case "pending":
            return f"session {sid} is pending"
        case "replaced":
            return (
                f"{other}'s grade on line {found.other_line} replaced yours on line {found.line} of session {sid} "
                "since (undoing it would withdraw theirs); nothing was written"
            )
    return f"session {sid} was graded elsewhere since line {found.line}; nothing was written"


def undo_unread(session_id: str) -> str:
    """Why the keys typed after an undo of the log's go on before the session shows it: it could not be read."""
    return (
        f"The undo on {one_line(session_id)} is saved, but the session could not be read again: the screen may "
        "show it as before the undo. The keys typed after u go on."
    )
