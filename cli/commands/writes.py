"""Writing sessions: `record`, `grade`, `undo` and `prune`."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Collection
from pathlib import Path
from shlex import quote
from typing import TYPE_CHECKING

from lesson_credit.cli.commands.sessions import explanation_json, explanation_text
from lesson_credit.cli.common import (
    CliError,
    SubParsers,
    command,
    next_command,
    one_line,
    open_workspace,
    optional_category,
    print_json,
    print_warnings,
    resolve_session,
    reward_or_word,
)
from lesson_credit.cli.credit_text import credit_cells, no_lessons_line
from lesson_credit.cli.render import counted, fmt, output_width, safe, stdout_is_terminal, table, wrap

if TYPE_CHECKING:
    from lesson_credit.core.views import Explanation

LESSONS_FILE_LIMIT = 1024 * 1024
NO_LESSONS_HINT = "for no lessons pass --lessons with no ids; for a pipe, --lessons-file - reads stdin"


def _lessons_from_file(name: str) -> list[str]:
    """The lines of a lessons file (what `select` printed; `_lesson_ids` reads the ids in them); an empty file is an
    empty selection. `-` reads stdin. Any other name must be a regular file (opened without blocking, checked once
    open): a device or a FIFO is refused with what to pass instead, as `/dev/null` for "no lessons" would be."""
    from lesson_credit.core.base.safe_read import UnsafeFile, open_regular, read_opened

    try:
        if name == "-":
            text = sys.stdin.read(LESSONS_FILE_LIMIT + 1)
        else:
            text = read_opened(open_regular(name), name, LESSONS_FILE_LIMIT, longer=True).decode(errors="replace")
    except FileNotFoundError:
        raise CliError(f"lessons file not found: {name}") from None
    except UnsafeFile as exc:  # (the message names the file and what it is)
        if Path(name).is_dir():
            raise CliError(f"lessons file {name} is a folder, not a file") from None
        raise CliError(f"lessons file {str(exc).removesuffix('; not read')}; {NO_LESSONS_HINT}") from None
    except OSError as exc:
        raise CliError(f"cannot read lessons file {name}: {exc.strerror}") from None
    if len(text) > LESSONS_FILE_LIMIT:
        raise CliError(f"lessons file {name} is larger than {LESSONS_FILE_LIMIT >> 20} MB")
    return text.splitlines()


_COMMENT = re.compile(r"(?:^|\s)#.*")  # a `#` that starts a line or follows a space: the rest of the line


def _lesson_ids(lines: list[str], known: Collection[str]) -> list[str]:
    """The ids a lessons file's `lines` name: each line without its comment, whole when it is a lesson's id (a
    lesson file named with a space, as `select` prints it, one per line) or one as `select` prints it (a control
    code shown escaped: `tools/a\\x01.md`), else split on whitespace."""
    ids: list[str] = []
    printed: dict[str, str] | None = None  # a lesson's id as `select` prints it -> the id, where they differ
    for line in lines:
        if (whole := line.strip()) not in known:  # (a lesson named `x #y.md` is no comment)
            whole = _COMMENT.sub("", line).strip()
        if whole not in known and "\\x" in line:
            printed = _printed_ids(known) if printed is None else printed
            whole = printed.get(line.strip(), printed.get(whole, whole))
        ids.extend([whole] if whole in known else whole.split())
    return ids


def _printed_ids(known: Collection[str]) -> dict[str, str]:
    """Each id of `known` that `select` prints otherwise (`safe`: its control codes escaped), by how it prints it;
    none printed as two ids are, nor as a known id (that one is meant)."""
    printed: dict[str, str | None] = {}
    for lesson_id in known:
        if (shown := safe(lesson_id)) != lesson_id and shown not in known:
            printed[shown] = None if shown in printed else lesson_id
    return {shown: lesson_id for shown, lesson_id in printed.items() if lesson_id is not None}


def cmd_record(args: argparse.Namespace) -> int:
    reward, word = reward_or_word(args.reward)
    grader = one_line(args.grader, "grader")  # the category is checked by lesson_credit.core.commands.recording
    lines = None if args.lessons is not None else _lessons_from_file(args.lessons_file)
    ws = open_workspace(args, writes=True)
    lessons = args.lessons if lines is None else _lesson_ids(lines, ws.library().by_id())
    exp = ws.record(
        args.session_id,
        Path(args.journal),
        lessons,
        reward=reward,
        category=args.category,
        grader=grader or "heuristic",
        outcome=word,
        during=args.during,
    )
    print_warnings(ws)
    from lesson_credit.core.base.files import reading_back  # (the engine's files: not for --help)

    with reading_back():  # the session is logged: no memory to show it says so
        text = None if args.json else _record_text(exp, args, output_width())
        payload = explanation_json(ws, exp) if args.json else None
    if payload is not None:
        print_json(payload, ws)
    else:
        print(text)
    return 0


def _record_text(exp: Explanation, args: argparse.Namespace, width: int | None) -> str:
    """record's answer: explain's text. On a terminal the credit table stays in view: each lesson's
    keywords (a line or two each: 61 lines for eight lessons of four) are counted in one line saying which command
    lists them; piped (also with $COLUMNS set), the text is explain's whole, as scripts read it."""
    if not stdout_is_terminal():
        return explanation_text(exp, width)
    keywords = [k for c in exp.lessons if c.breakdown is not None for k in c.breakdown.keywords]
    if not keywords:
        return explanation_text(exp, width)
    hits = sum(k.hit for k in keywords)
    command = next_command(args, ["explain"], [exp.session.session_id])
    whose = "lesson's" if len(exp.lessons) == 1 else "lessons'"
    said = f"the journal mentions {hits} of the {whose} {len(keywords)} keywords; each, and where:"
    return f"{explanation_text(exp, width, keywords=False)}\n\n{wrap(said, width)}\n  {command}"


def cmd_grade(args: argparse.Namespace) -> int:
    reward, word = reward_or_word(args.reward)
    grader = one_line(args.grader, "grader")
    assert grader is not None
    ws = open_workspace(args, writes=True)
    if word is not None:
        reward = ws.outcome_reward(word)
    assert reward is not None
    session_id = args.session_id = resolve_session(ws, args.session_id)  # (whole: what a failure after says)
    appended = ws.append_grade(session_id, reward, grader=grader, note=args.note, outcome=word)
    record = appended.record  # and the score in force just before it, read under the lock with the append
    ws.warnings.extend(appended.warnings)
    print_warnings(ws)
    from lesson_credit.core.base.files import reading_back  # (the engine's files: not for --help)

    with reading_back():  # the grade is logged: no memory to show it says so
        exp = ws.explain(session_id, with_journal=args.json)  # --json lists each lesson's keywords
    if args.json:
        payload = explanation_json(ws, exp)
        payload["grader"] = record.grader
        payload["history"] = _history(exp)
        print_json(payload, ws)
        return 0
    previous = "pending" if appended.before_value is None else fmt(appended.before_value)  # three places, as show
    given = fmt(reward) if word is None else f"{safe(word)} = {fmt(reward)}"
    if appended.outranked:  # another source's score is in force (the priority puts it first), or none
        in_force = appended.in_force
        stays = (
            "the session stays pending"
            if in_force is None
            else f"{fmt(in_force.base_reward)} ({safe(in_force.grader)}) stays in force"
        )
        priority = ", ".join(ws.config.reward_priority)
        return _print_credit(
            f"graded {safe(session_id)}: {safe(record.grader)} {given} logged; {stays} [priority: {priority}]", exp
        )
    return _print_credit(f"graded {safe(session_id)}: {previous} -> {given} ({safe(record.grader)})", exp)


def cmd_undo(args: argparse.Namespace) -> int:
    grader = one_line(args.grader, "grader")
    assert grader is not None
    ws = open_workspace(args, writes=True)
    session_id = args.session_id = resolve_session(ws, args.session_id)  # (whole: what a failure after says)
    from lesson_credit.core.api import NothingToUndo  # (the engine's: not for --help)

    try:
        appended = ws.append_undo(session_id, grader=grader, note=None)  # (the note says what it undid)
    except NothingToUndo as exc:  # someone else's grade is the latest: say how they undo it
        if exc.other is None:
            raise
        raise CliError(
            f"{exc}; they undo it with: lesson-credit undo {quote(session_id)} --grader {quote(exc.other)}"
        ) from None
    ws.warnings.extend(appended.warnings)
    print_warnings(ws)
    from lesson_credit.core.base.files import reading_back  # (the engine's files: not for --help)

    with reading_back():  # the undo is logged: no memory to show it says so
        exp = ws.explain(session_id, with_journal=args.json)
    if args.json:
        payload = explanation_json(ws, exp)
        payload["undo"] = {"line": appended.record.line, "note": appended.record.note}
        payload["history"] = _history(exp)
        print_json(payload, ws)
        return 0
    stays = _stays(exp, grader, session_id, appended.record.line)
    return _print_credit(f"{safe(session_id)}: {safe(appended.record.note or '')}{stays}", exp)


def _stays(exp: Explanation, grader: str, session_id: str, line: int) -> str:
    """When a grade of another grader's came after the one undone (a hook running `undo` to take the judge's back
    undoes manual's now): that it stays, and how its grader undoes it. `exp`: the session after the undo (on `line`).
    Only a grade still on the log's undo stack is one (`undo_walk`): an undo, or a grade undone, is nobody's to undo."""
    from lesson_credit.core.api import grade_text, undo_walk  # (the engine's: not for --help)

    walk = undo_walk(exp.grades, exp.session.line)
    undone = walk.reverted.get(line)
    latest = walk.stack[-1][0] if walk.stack else None
    if undone is None or latest is None or latest.grader == grader or latest.line < undone.line:
        return ""
    what = "retraction" if latest.base_reward is None else grade_text(latest.base_reward)
    kept = f"{safe(latest.grader)}'s {what} on line {latest.line}"
    fix = f"lesson-credit undo {quote(session_id)} --grader {quote(latest.grader)}"
    return f"; {kept} stays: {safe(fix)} undoes it"


def _history(exp: Explanation) -> list[dict[str, object]]:
    """The session's grade events, oldest first, as --json lists them."""
    return [
        {"base_reward": g.base_reward, "grader": g.grader, "timestamp": g.timestamp, "note": g.note} for g in exp.grades
    ]


def _print_credit(headline: str, exp: Explanation) -> int:
    """What a grade or an undo did, then each lesson's credit under the grade in force now."""
    width = output_width()
    print(wrap(headline, width) + "\n")
    if not exp.lessons:  # (an empty table)
        print(wrap(no_lessons_line(exp.base_reward is None), width))
        return 0
    rows = [
        (
            c.path,
            fmt(c.salience),
            *credit_cells(c, exp.base_reward is None),  # pending (an undo): nothing credited, as `show` says
            fmt(c.alpha_after / (c.alpha_after + c.beta_after)),
        )
        for c in exp.lessons
    ]
    headers = ["lesson", "salience", "credited", "alpha", "beta", "mean now"]
    print(table(headers, rows, right=(1, 2, 3, 4, 5), width=width, shorten_columns={0: "path"}))
    return 0


def cmd_prune(args: argparse.Namespace) -> int:
    from lesson_credit.core.retire import retire_missing

    ws = open_workspace(args, writes=not args.dry_run)
    arms = retire_missing(ws, dry_run=args.dry_run)
    if args.json:
        print_json({"retired": arms, "written": bool(arms) and not args.dry_run}, ws)
        return 0
    if not arms:
        nothing = "nothing to prune: every arm in the log has its lesson file (or is retired already)"
        print(wrap(nothing, output_width()))
        return 0
    verb = "would retire" if args.dry_run else "retired"
    print(
        wrap(
            f"{verb} {counted(len(arms), 'arm')} whose lesson file is gone (their history stays in the log):",
            output_width(),
        )
    )
    for arm in arms:
        print(f"  {safe(arm)}")
    return 0


def register(sub: SubParsers, common: argparse.ArgumentParser, data: argparse.ArgumentParser) -> None:
    """Add this group's subcommands to `sub`."""
    p = command(
        sub,
        "record",
        [common, data],
        "log a session with its journal and lessons",
        "Log a finished session: each injected lesson's salience is computed from the journal\n"
        "and its credit under the current settings. Zero lessons is fine (a session with nothing\n"
        "injected still counts for the baseline). Without --reward the session stays pending. An empty\n"
        "journal is logged with a warning (every salience 0: most likely the wrong file). Prints what\n"
        "explain prints; on a terminal the keywords hit and missed are one line naming explain instead.",
        "  lesson-credit record --session-id S1 --journal journal.md --lessons tools/git.md --reward 0.8\n"
        "  lesson-credit record --session-id S2 --journal j.md --lessons-file selected.txt\n"
        "  lesson-credit record --session-id S3 --journal j.md --lessons-file selected.txt --during tools/debug.md",
    )
    p.add_argument("--session-id", required=True, metavar="ID", help="a new, unique session id (one line)")
    p.add_argument(
        "--journal",
        required=True,
        metavar="FILE",
        help="the session's journal (what happened), read as UTF-8; a relative path is looked for in the "
        "workspace first, then in the current folder",
    )
    lessons = p.add_mutually_exclusive_group(required=True)
    lessons.add_argument(
        "--lessons", nargs="*", default=None, metavar="ID", help="ids of the injected lessons (none is allowed)"
    )
    lessons.add_argument(
        "--lessons-file",
        default=None,
        metavar="FILE|-",
        help="read the ids from a file (e.g. select's output: a line that is a lesson's id, or one as select prints "
        "it, its control codes escaped, else ids separated by spaces; may be empty; a # at a line's start or after a "
        "space starts a comment)",
    )
    p.add_argument(
        "--reward",
        default=None,
        metavar="R",
        help="base reward in [0, 1], or a gptme outcome word (productive, noop, failed, violated_policy, the "
        "[outcomes] of config.toml; unknown: pending), logged as gptme does; omit to leave the session pending",
    )
    p.add_argument(
        "--during",
        nargs="*",
        default=[],
        metavar="ID",
        help="more lessons of the session, included during it (gptme pulled them in when their keywords came "
        "up), not chosen before it: logged, never estimated as effects (default: none; a lesson the selection passed "
        "over that --lessons names is read so too, and record says it)",
    )
    p.add_argument(
        "--category",
        type=optional_category,
        default=None,
        metavar="C",
        help="the session's category, one line (default, or empty: its logged selection's, else none; one that "
        "differs from the selection's is logged with a warning)",
    )
    p.add_argument(
        "--grader", default="heuristic", metavar="G", help="who produced --reward, non-empty (default: heuristic)"
    )
    p.add_argument("--allow-outside", action="store_true", help="read journals outside the workspace")
    p.set_defaults(func=cmd_record)
    _register_grade_prune(sub, common, data)


def _register_grade_prune(sub: SubParsers, common: argparse.ArgumentParser, data: argparse.ArgumentParser) -> None:
    """Add `grade`, `undo` and `prune` to `sub`."""
    p = command(
        sub,
        "grade",
        [common, data],
        "grade (or regrade) a session",
        "Append a grade for a logged session. Each reward source's latest grade counts, and the\n"
        "first source of [rewards] priority with one is the reward in force (a person's grade first,\n"
        "by default); every grade stays in the log as its history. A unique prefix of the id is enough.",
        "  lesson-credit grade S1 0.7 --note 'PR needed rework'\n  lesson-credit grade S1 1 --grader judge --json",
    )
    p.add_argument("session_id", metavar="SESSION_ID", help="a session id or a unique prefix of one")
    p.add_argument(
        "reward",
        metavar="REWARD",
        help="base reward in [0, 1], or a gptme outcome word (productive 1, noop / failed / violated_policy 0, "
        "or config.toml's [outcomes]); the word is kept in the event",
    )
    p.add_argument("--note", default=None, metavar="TEXT", help="why this grade (kept in the grade history)")
    p.add_argument("--grader", default="manual", metavar="G", help="who grades, non-empty (default: manual)")
    p.set_defaults(func=cmd_grade)

    p = command(
        sub,
        "undo",
        [common, data],
        "undo your latest grade of a session",
        "Append a grade event that takes back the grader's own latest grade of the session not undone\n"
        "yet, as the dashboard's u does: their score is again what it was before it (their earlier grade,\n"
        "or none), and the priority decides what is in force. Undoing again walks further back through\n"
        "their grades. Another grader's grade (the judge's, erik's) is theirs to undo: refused, naming it;\n"
        "so is a grade of yours that another person of the same source graded over since. Nothing is\n"
        "removed from the log.",
        "  lesson-credit undo S1\n  lesson-credit undo S1 --grader judge --json",
    )
    p.add_argument("session_id", metavar="SESSION_ID", help="a session id or a unique prefix of one")
    p.add_argument("--grader", default="manual", metavar="G", help="whose grade is undone, non-empty (default: manual)")
    p.set_defaults(func=cmd_undo)

    p = command(
        sub,
        "prune",
        [common, data],
        "retire arms whose lesson file is gone",
        "Log a retire event for the arms in the log whose lesson file no longer exists. Nothing\n"
        "is deleted: their history stays in the log and in every fold; status and replay hide\n"
        "them unless --all, and restoring the file brings the lesson back.",
        "  lesson-credit prune --dry-run\n  lesson-credit prune",
    )
    p.add_argument("--dry-run", action="store_true", help="list what would be retired; log nothing")
    p.set_defaults(func=cmd_prune)
