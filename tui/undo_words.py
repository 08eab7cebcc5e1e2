"""What the dashboard says about an undo (tui/writes.py applies it), in one voice: the engine's words
(`lesson-credit undo` says the same) told to the operator at the keys, whose grader name ("manual") is
"you" there.
"""

from __future__ import annotations

import re

from lesson_credit.tui.text import one_line

# the engine's note of an undo (core/grading.py's `undo_note`): "undid manual's grade on line 5: 0.5 back to pending"
_UNDID = re.compile(r"undid (?P<whose>.+?)'s grade on line (?P<line>\d+): (?P<rest>.+)")


def undone(sid: str, note: str | None, operator: str) -> str:
    """An undo's confirmation from its logged note, for this dashboard's commits and the log's grades alike:
    "Undid your grade on s4 (line 5): 0.5 back to pending." (`sid` is one line already)."""
    text = one_line(note or "")
    said = _UNDID.match(text)
    if said is None or said["whose"] != operator:  # (not the note the engine writes now: as it is)
        return f"Undo on {sid}: {text}."
    return f"Undid your grade on {sid} (line {said['line']}): {said['rest']}."


def refusal(exc: Exception, operator: str) -> str:
    """An undo's refusal as the engine words it, without its "nothing to undo: " or "not undone: " start, told
    to the operator (`as_you`)."""
    text = one_line(str(exc))
    head, _, rest = text.partition(": ")
    return as_you(rest if head in ("nothing to undo", "not undone") and rest else text, operator)


def as_you(text: str, operator: str) -> str:
    """The engine's words about the operator's grades, said to the operator: "manual has no grade" is "you have
    no grade", "manual's grades" "your grades", "replaced manual's on line 5" "replaced yours on line 5"."""
    name = rf"(?<![\w'.-]){re.escape(operator)}"
    text = re.sub(rf"{name} has\b", "you have", text)
    text = re.sub(rf"{name}'s (grades?)\b", r"your \1", text)
    return re.sub(rf"{name}'s(?= on line\b)", "yours", text)


def undo_unread(session_id: str) -> str:
    """Why the keys typed after an undo of the log's go on before the session shows it: it could not be read."""
    return (
        f"The undo on {one_line(session_id)} is saved, but the session could not be read again: the screen may "
        "show it as before the undo. The keys typed after u go on."
    )
