"""The grade events (a grade, an undo, a retraction) and what appending one reports.

`Workspace.append_grade` is the one writer of a grade: the CLI's `grade`, `Workspace.undo_grade`
and the dashboard's grades and undos all go through it; `undo_of` is the one meaning of an undo (the
log's undo stack, `undoable`). Appending needs two facts read atomically with the append: the
grade in force just before it and the line the new event got (what a later undo names). A
retraction (`base_reward` None, docs/format.md §5.3) returns the session to pending. An event that
reached the log is a success even when `bandit-state.json` (derived) could not be rewritten: that is
a warning, not a failure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple

from msgspec import Struct

from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.log.events import GRADE
from lesson_credit.core.model.credit import check_reward as check_unit_reward
from lesson_credit.core.model.sources import automatic_sources, source_of
from lesson_credit.core.views import GradeRecord, SourceScore


class GradeAppended(Struct, frozen=True):
    before: GradeRecord | None  # the grade in force just before the append (None: the session was pending)
    record: GradeRecord  # the event appended, with its line
    warnings: tuple[str, ...] = ()  # what the write could not do besides (a derived file): it is logged
    before_own: float | None = None  # the score of the grader's own reward source just before (None: none)
    in_force: GradeRecord | None = None  # the grade in force just after it (None: pending), read with it
    undo: Undone | None = None  # what the event undid, when it is an undo (`undo_of`), for each face to word

    @property
    def before_value(self) -> float | None:
        return None if self.before is None else self.before.base_reward

    @property
    def outranked(self) -> bool:
        """Whether the score logged is not the one in force: the `[rewards]` priority puts another
        source's score first (a record's judge, say), or leaves the grader's source out."""
        return self.in_force is None or self.in_force.source != source_of(self.record.grader)


class GradeConflict(WorkspaceError):
    """The grade in force is not the one the caller expected (another writer got there first). `refusal`: what
    an undo found, when it is an undo's refusal (None: a grade's, or one worded only as text)."""

    def __init__(self, message: str, refusal: UndoRefusal | None = None) -> None:
        super().__init__(message)
        self.refusal = refusal


def grade_in_force(sources: Sequence[SourceScore]) -> GradeRecord | None:
    """The score in force among a session's reward sources (docs/records.md), as a grade record (None:
    pending). A score from a gptme-sessions record has no line in the log: line 0."""
    for source in sources:
        if source.in_force and source.score is not None:
            return GradeRecord(source.score, source.grader, source.timestamp, None, source.line or 0, source.source)
    return None


def own_source_score(sources: Sequence[SourceScore], grader: str) -> float | None:
    """The score of `grader`'s reward source (None: it has none)."""
    mine = source_of(grader)
    return next((s.score for s in sources if s.source == mine), None)


def check_grader(grader: str) -> None:
    """A grader name a writer logs: one non-empty line, naming at most one automatic reward source
    (`llm heuristic` would be read as a person's and outrank both: refused)."""
    if not grader or "\n" in grader:
        raise WorkspaceError("grader must be a non-empty single line")
    found = automatic_sources(grader)
    if len(found) > 1:
        raise WorkspaceError(
            f"grader {grader!r} names {len(found)} reward sources ({', '.join(found)}); use a name of one"
        )


def check_reward(reward: float | None) -> float | None:
    """A grade's reward, checked (in [0, 1]); None is a retraction."""
    return None if reward is None else check_unit_reward(reward)


def check_expected(session_id: str, history: Sequence[GradeRecord], expect_line: int | None) -> None:
    """GradeConflict unless the session's latest grade event is the one at `expect_line` (None: no check)."""
    if expect_line is not None and (not history or history[-1].line != expect_line):
        raise GradeConflict(
            f"session {session_id!r} was graded elsewhere since line {expect_line}; nothing was written"
        )


def check_unseen(
    session_id: str, history: Sequence[GradeRecord], seen_line: int | None, grader: str, priority: Sequence[str]
) -> None:
    """GradeConflict unless no grade event of the session after `seen_line` (the latest the grader was shown; 0:
    none) comes from a source the grade would replace or stand under: the grader's own (a person's grade, for a
    person's: another person's, or the same grader's logged by another process) or one the [rewards] priority
    ranks before it (all of the priority, when it leaves the grader's source out). A score of a source ranked
    after it (a judge's, under a person's grade) is no such event: the grade goes into force over it as it would
    have before (None: no check)."""
    if seen_line is None:
        return
    own, ranked = source_of(grader), list(priority)
    over = {own, *(ranked[: ranked.index(own)] if own in ranked else ranked)}
    unseen = [g for g in history if g.line > seen_line and (g.source or source_of(g.grader)) in over]
    if unseen:
        last = unseen[-1]
        raise GradeConflict(
            f"session {session_id!r} was graded by {last.grader} ({grade_text(last.base_reward)}, line {last.line}) "
            f"since line {seen_line}; nothing was written"
        )


def grade_event(
    session_id: str, reward: float | None, grader: str, timestamp: str, note: str | None, outcome: str | None = None
) -> dict[str, Any]:
    """A grade event (`reward` None: a retraction); the latest grade of a session is the one that counts.
    `outcome`: the gptme outcome word the reward was given as, kept beside it."""
    event: dict[str, Any] = {
        "type": GRADE,
        "session_id": session_id,
        "base_reward": reward,
        "grader": grader,
        "timestamp": timestamp,
    }
    if note:
        event["note"] = note
    if outcome is not None:
        event["outcome"] = outcome
    return event


def grade_text(value: float | None) -> str:
    """A grade as typed, for notes and messages: "pending", or at least one decimal and at most
    six (0.725 stays 0.725, 1 is 1.0)."""
    if value is None:
        return "pending"
    text = f"{round(value, 6):.6f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def undo_note(
    line: int, undone: float | None, restored: float | None, source: str | None = None, whose: str | None = None
) -> str:
    """The note of an undo, whoever writes it: whose grade it undid (`whose`, the reverted grade's grader, who
    is the undoer) on which line, from what to what (the score in force afterwards, with the `source` it comes
    from when that is another than the reverted grade's: "0.6 back to 0.6 (judge)"): "undid judge's grade on
    line 2: 0.9 back to pending"."""
    grade = f"{whose}'s grade" if whose else "the grade"
    whence = f" ({source})" if source is not None and restored is not None else ""
    return f"undid {grade} on line {line}: {grade_text(undone)} back to {grade_text(restored)}{whence}"


# an undo note's start (undo_note's, then the words notes had before they named whose grade was undone,
# "undo of line 3 by erik: 0.5 back to 0.9", in logs written then: undos as well), and the score it undid
_UNDID = r"(?:.*? )?undid (?:(?P<whose>.*?)'s|the) grade on line \d+: "
UNDO_NOTE = re.compile(rf"{_UNDID}|undo of line \d+(?: by |: )")
UNDONE_SCORE = re.compile(rf"(?:{_UNDID}|undo of line \d+(?: by .*?)?: )(?P<score>pending|\d+\.\d+) back to ")
# and the score it put back, when it is the undo's own (no other source named after it: `undo_note`'s `whence`)
RESTORED = re.compile(rf"{_UNDID}(?:pending|\d+\.\d+) back to (?P<restored>\d+\.\d+)(?!\d| \()")


class UndoWalk(NamedTuple):
    """A session's undo stack as the log holds it and what its undos did (`undo_walk`)."""

    stack: list[tuple[GradeRecord, float | None]]  # the events an undo may revert, each with its source's score before
    reverted: dict[int, GradeRecord]  # each undo event's line -> the event it reverted

    @property
    def withdrawn(self) -> frozenset[int]:
        """The lines of the events that are nobody's grade: every undo (it logs, under the undoer's name, a
        score they never gave) and every event undone. The one meaning of "undos and undone"."""
        return frozenset(self.reverted).union(g.line for g in self.reverted.values())

    def standing(self, history: Sequence[GradeRecord]) -> dict[str, GradeRecord]:
        """Grader -> their latest grade in `history` (the one walked, or a part of it) still standing: not
        `withdrawn`. A retraction stands (score None); so does the record's own score."""
        gone = self.withdrawn
        return {g.grader: g for g in history if g.line not in gone}

    def attributed(self, history: Sequence[GradeRecord], source: str) -> GradeRecord | None:
        """The grade the score of `source` is owed to when its latest event is an undo: the latest event of
        the source still standing (the record's own score when every grade since is withdrawn), when it holds
        that score; None: the latest event is its own."""
        ours = [g for g in history if g.source == source]
        if not ours or ours[-1].line not in self.reverted or ours[-1].base_reward is None:
            return None
        gone = self.withdrawn
        left = [g for g in ours if g.line not in gone]
        return left[-1] if left and left[-1].base_reward == ours[-1].base_reward else None


def undoable(history: Sequence[GradeRecord], record_line: int) -> list[tuple[GradeRecord, float | None]]:
    """The session's grade events an undo may revert, oldest first, each with its source's score just
    before it: the undo stack the log holds (`undo_walk`)."""
    return undo_walk(history, record_line).stack


def undo_walk(history: Sequence[GradeRecord], record_line: int) -> UndoWalk:
    """The undo stack the log holds (see below), and each undo event's line -> the event it reverted.

    An undo takes the event it reverts off the stack and is not on it; the record's own grade (line
    `record_line`) and an event that left its source's score as it was (nothing to undo) are not on it either.

    An undo reverts its grader's latest event on the stack (`undo_of`, under the log's lock): an event is one when its
    note starts as `undo_note` writes it and its grader has an event on the stack with the score the
    note says it undid (its latest when it was written: logs merged since may have put other events above
    it, `_undone`). The line the note names is not used: it is where the
    reverted event was as the log was numbered then (a log pushed into a database holding other
    events, pulled from one, or merged after another holds it at another line), and a person's note
    may begin with the same words."""
    stack: list[tuple[GradeRecord, float | None]] = []
    reverted: dict[int, GradeRecord] = {}
    last: dict[str | None, float | None] = {}  # each source's latest score so far
    for grade in history:
        previous = last.get(grade.source)
        last[grade.source] = grade.base_reward
        undone = _undone(grade, stack)
        if undone is not None:
            reverted[grade.line] = stack[undone][0]
            _take_off(stack, undone)
        elif grade.line != record_line and grade.base_reward != previous:
            stack.append((grade, previous))
    return UndoWalk(stack, reverted)


def _take_off(stack: list[tuple[GradeRecord, float | None]], at: int) -> None:
    """Take the undone event at `at` off the stack. A later event of its source (another person's grade
    merged between it and its undo) replaced its score, so that event's score before is now the one the
    undone event replaced: undoing it never puts the undone score back."""
    undone, before = stack.pop(at)
    for above in range(at, len(stack)):
        grade, replaced = stack[above]
        if grade.source == undone.source:  # (as `undoable` keys each source's latest score)
            if replaced == undone.base_reward:
                stack[above] = (grade, before)
            return


def _undone(grade: GradeRecord, stack: Sequence[tuple[GradeRecord, float | None]]) -> int | None:
    """Where on the stack the grade `grade` undoes is, or None when it is no undo: an undo reverts the
    latest grade of its grader not undone yet (the top of the stack when it was written). Logs merged
    since may have put another event above it: another grader's, or the same grader's from another
    machine (both named `manual`), which replaced another score there. So the grader's latest event
    with the score the note says it undid is the one; a note that does not say (a person's) is an
    undo only of the grader's latest event, and only when it puts back the score that event replaced."""
    found = UNDO_NOTE.match(grade.note or "")
    if found is None or found.group("whose") not in (None, grade.grader):  # (an undo is logged as the grader's)
        return None
    said = UNDONE_SCORE.match(grade.note or "")
    restored = RESTORED.match(grade.note or "")
    if restored is not None and restored.group("restored") != grade_text(grade.base_reward):
        return None  # an undo logs the score its note says it put back: a note quoting one, on another grade
    for at in range(len(stack) - 1, -1, -1):
        top, before = stack[at]
        if top.grader != grade.grader:
            continue
        if said is None:
            return at if grade.base_reward == before else None
        if grade_text(top.base_reward) == said.group("score"):
            return at
    return None


class NothingToUndo(WorkspaceError):
    """An undo found no grade of its grader's left to take back: nothing was written. `refusal`: why, as the
    engine found it (None: worded only as text)."""

    def __init__(self, message: str, refusal: UndoRefusal | None = None) -> None:
        super().__init__(message)
        self.refusal = refusal

    @property
    def other(self) -> str | None:
        """The grader of the latest grade left to undo, when it is someone else's (theirs to undo)."""
        return self.refusal.other if self.refusal is not None and self.refusal.kind == "theirs" else None


class Undone(Struct, frozen=True):
    """What an undo did (`undo_of`), for each face to word (`undo_words` is the engine's: the log's note)."""

    session_id: str
    whose: str  # the grader whose grade it undid: the undoer (an undo is logged under their name)
    line: int  # the line of the grade undone
    value: float | None  # the score it had (None: it was a retraction)
    logged: float | None  # the score the undo logs: the undoer's source's before that grade (None: a retraction)
    in_force: float | None  # the score in force afterwards (None: pending)
    source: str | None = None  # where `in_force` comes from, when another than the undone grade's source
    note: str | None = None  # the undoer's own words, after the engine's


# why an undo wrote nothing: the latest grade left is another grader's ("theirs"); the undoer's grades are all
# undone or changed nothing ("undone_already"); they have none, others' are all undone ("no_grade"); only the
# session's record scores it ("record_only"); it is pending ("pending"); another grader's grade of the same
# source replaced the undoer's since ("replaced"); the grade to undo is not the one at the line asked ("moved")
RefusalKind = Literal["theirs", "undone_already", "no_grade", "record_only", "pending", "replaced", "moved"]


class UndoRefusal(Struct, frozen=True):
    """Why an undo wrote nothing (`undo_of`'s NothingToUndo or GradeConflict carries it), for each face to word."""

    kind: RefusalKind
    session_id: str
    undoer: str
    other: str | None = None  # "theirs": the latest grade's grader; "replaced": the grader of the grade over it
    other_value: float | None = None  # "theirs": that grade's score (None: a retraction)
    other_line: int | None = None  # "theirs", "replaced": that grade's line
    others: tuple[str, ...] = ()  # "no_grade": the graders with grades there, sorted
    line: int | None = None  # "replaced": the undoer's grade's line; "moved": the line asked for


def undo_words(said: Undone | UndoRefusal) -> str:
    """The engine's words for an undo (the note it logs, which `lesson-credit undo` prints) or for a refusal (the
    error's text, which `lesson-credit undo` prints)."""
    if isinstance(said, Undone):
        reverts = undo_note(said.line, said.value, said.in_force, said.source, said.whose)
        return f"{reverts}; {said.note}" if said.note else reverts
    sid, undoer = repr(said.session_id), said.undoer
    match said.kind:
        case "theirs":
            what = "retraction" if said.other_value is None else grade_text(said.other_value)
            whose = f"{said.other}'s {what} on line {said.other_line}"
            return (
                f"nothing to undo: {undoer} has no grade on session {sid} left (the latest, {whose}, is theirs to undo)"
            )
        case "undone_already":
            return f"nothing to undo: {undoer}'s grades on session {sid} are undone already or changed nothing"
        case "no_grade":
            return (
                f"nothing to undo: {undoer} has no grade on session {sid} ({_whose(said.others)} grades there are "
                "undone already or changed nothing)"
            )
        case "record_only":
            return f"nothing to undo: session {sid} is scored only by its record (no grade)"
        case "pending":
            return f"nothing to undo: session {sid} is pending"
        case "replaced":
            return (
                f"not undone: {said.other}'s grade on line {said.other_line} replaced {undoer}'s on line {said.line} "
                f"of session {sid} since (undoing it would withdraw theirs); nothing was written"
            )
    return f"session {sid} was graded elsewhere since line {said.line}; nothing was written"


def refused(refusal: UndoRefusal) -> NothingToUndo | GradeConflict:
    """The error an undo's refusal is raised as, in the engine's words: GradeConflict when another grade got there
    first ("replaced", "moved"), else NothingToUndo."""
    if refusal.kind in ("replaced", "moved"):
        return GradeConflict(undo_words(refusal), refusal)
    return NothingToUndo(undo_words(refusal), refusal)


def undo_of(
    session_id: str,
    history: Sequence[GradeRecord],
    record_line: int,
    undoer: str,
    note: str | None,
    sources: Sequence[SourceScore] = (),
    priority: Sequence[str] = (),
    line: int | None = None,
    record_scores: Mapping[str, float] | None = None,
) -> Undone:
    """The undo by which `undoer` takes back their own latest grade on the session not undone yet (`undoable`):
    the CLI's `undo --grader` and the dashboard's `u` (as its operator) alike, so undoing again walks back through
    the undoer's grades to where they started. It logs, under the undoer's name, their source's score before that
    grade (`logged`; a retraction when it had none), with `undo_words` as its note. Never another grader's grade:
    NothingToUndo names whose it is. A grade of another source given since (the
    judge's over a person's) stays, and the priority decides what is in force; one of the same source by
    someone else (erik's over manual's, even of the same score) refuses it (GradeConflict): the undo would
    withdraw theirs too. Each refusal carries its `UndoRefusal`.
    `line`: refuse (GradeConflict) unless the grade undone is the one at `line`. What is in force afterwards
    (`in_force`, `source`) is found from the session's `sources` now, the scores its gptme-sessions
    record gives (`record_scores`: they count again where the log's score is withdrawn) and the `priority`."""
    walk = undo_walk(history, record_line)
    stack = walk.stack
    mine = next((at for at in range(len(stack) - 1, -1, -1) if stack[at][0].grader == undoer), None)
    if mine is None:
        raise refused(_nothing_to_undo(session_id, history, record_line, undoer, stack, sources))
    latest, previous = stack[mine]
    reverted = latest.source or source_of(latest.grader)
    # another grader's grade of the source since, standing (one that changed nothing is on no stack: erik's
    # 0.7 over manual's 0.7 is still erik's grade, which the undo would withdraw)
    gone = walk.withdrawn | {record_line}
    over = next(
        (
            g
            for g in history
            if g.line > latest.line
            and g.grader != undoer
            and g.line not in gone
            and (g.source or source_of(g.grader)) == reverted
        ),
        None,
    )
    if line is not None and latest.line != line:
        raise refused(UndoRefusal("moved", session_id, undoer, line=line))
    if over is not None:
        raise refused(
            UndoRefusal("replaced", session_id, undoer, other=over.grader, other_line=over.line, line=latest.line)
        )
    scores = {s.source: s.score for s in sources}
    labels = {s.source: s.grader for s in sources if s.grader.startswith("record:")}  # a record's own scores
    recorded = (record_scores or {}).get(reverted) if previous is None else None
    scores[reverted] = previous if recorded is None else recorded
    labels[reverted] = f"record:{reverted}" if recorded is not None else reverted
    whence = next((s for s in priority if scores.get(s) is not None), None)
    after = scores[whence] if whence is not None else (previous if not priority else None)
    named = None if whence is None else labels.get(whence, whence)
    source = None if named == reverted else named
    return Undone(session_id, undoer, latest.line, latest.base_reward, previous, after, source, note or None)


def _nothing_to_undo(
    session_id: str,
    history: Sequence[GradeRecord],
    record_line: int,
    undoer: str,
    stack: Sequence[tuple[GradeRecord, float | None]],
    sources: Sequence[SourceScore],
) -> UndoRefusal:
    """Why `undoer` has nothing to undo on the session."""
    if stack:
        other = stack[-1][0]
        return UndoRefusal(
            "theirs", session_id, undoer, other=other.grader, other_value=other.base_reward, other_line=other.line
        )
    if any(g.grader == undoer for g in history if g.line != record_line):
        return UndoRefusal("undone_already", session_id, undoer)
    others = tuple(sorted({g.grader for g in history if g.line != record_line}))
    if others:  # (none on the stack: each undone, an undo, or a grade that left its source's score as it was)
        return UndoRefusal("no_grade", session_id, undoer, others=others)
    if any(s.score is not None for s in sources):
        return UndoRefusal("record_only", session_id, undoer)
    return UndoRefusal("pending", session_id, undoer)


def _whose(names: Sequence[str]) -> str:
    """Names as owners: erik's; erik's and judge's; bob's, erik's and judge's."""
    said = [f"{name}'s" for name in names]
    return said[0] if len(said) == 1 else f"{', '.join(said[:-1])} and {said[-1]}"
