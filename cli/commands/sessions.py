"""Reading sessions: `sessions`, `show` and `explain`."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lesson_credit.cli.common import (
    CliError,
    SubParsers,
    command,
    open_workspace,
    parse_reward,
    positive_int,
    print_json,
    resolve_session,
    reward_bound,
    sort_arg,
    time_arg,
    warn_problems,
    warning_lines,
)
from lesson_credit.cli.credit_text import credit_table
from lesson_credit.cli.render import counted, fmt, output_width, safe, table, wrap

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from lesson_credit.cli.render import Shorten
    from lesson_credit.core.library.salience import KeywordHit
    from lesson_credit.core.views import Explanation, GradeRecord, LessonCredit, SessionTable
    from lesson_credit.core.workspace import Workspace

    IntArray = npt.NDArray[np.int64]
    FloatArray = npt.NDArray[np.float64]


def explanation_text(exp: Explanation, width: int | None = None, keywords: bool = True) -> str:
    """explain's text, fitted to `width` when one is given (cli/render.py); `keywords`: each one hit or missed."""
    s = exp.session
    grade = "pending" if exp.base_reward is None else f"{fmt(exp.base_reward)} ({safe(s.grader)})"
    out = [
        f"session {safe(s.session_id)}  {safe(s.timestamp or '')}  category {safe(s.category or '-')}",
        f"grade {grade}; strategy {exp.settings.strategy}, floor {exp.settings.floor:g}",
    ]
    if exp.journal_problem:
        out.append(f"note: {safe(exp.journal_problem)}")
    credit = credit_table(exp, width)
    head, out = wrap("\n".join(out), width), []  # the table's lines are fitted, never wrapped
    text = exp.journal_text or ""  # (a breakdown with hits comes from a journal that was read)
    for c in [c for c in exp.lessons if keywords or c.note or c.salience_missing or _unmatched(c)]:  # (record: notes)
        out += ["", f"{safe(c.path)}: salience {fmt(c.salience)} -> weight {fmt(c.weight)}"]
        if c.note:
            out.append(f"  note: {safe(c.note)}")
        if c.salience_missing:
            out.append("  note: the record had no salience; counted as 0.5")
        if unmatched := _unmatched(c):
            from lesson_credit.core.library.keyword_limits import unmatched_reason

            out.append(f"  note: {unmatched_reason(unmatched)}")
        if c.breakdown is None or not keywords:
            continue
        if not c.breakdown.keywords:
            out.append("  no counted keywords: salience 0.5 by definition")
        out += [_hit_line("hit  ", k, text) if k.hit else _miss_line(k) for k in c.breakdown.keywords]
        out += _uncounted_line(c.breakdown.keywords)
        out += _ignored_lines(c, text)
    if len(exp.grades) > 1:
        out.append("")
        out.append("grade history:")
        out += _history_lines(exp.grades)
    return "\n".join([head, "", credit, *([wrap("\n".join(out), width, hang=4)] if out else [])])


def _miss_line(k: KeywordHit) -> str:
    return f"  miss  '{safe(k.keyword)}'" + (" (not matched)" if k.unmatched else "")


def _unmatched(c: LessonCredit) -> int:
    """How many of the lesson's wildcard keywords the journal's scan left unmatched (its work budget spent)."""
    return c.breakdown.unmatched if c.breakdown is not None else 0


def _hit_line(label: str, k: KeywordHit, text: str) -> str:
    """A keyword the journal mentions: how often, where (the first five), and the journal around the first."""
    from lesson_credit.core.library.salience import snippet

    if k.count is None:  # not counted (nor looked for): the note under the lesson's keywords says why
        return f"  {label} '{safe(k.keyword)}' x? (not counted)"
    first = k.first(6)  # (not every offset: nested keywords over a journal of `a`s have 100 a character)
    start, end = first[0]
    where = ", ".join(str(o) for o, _ in first[:5]) + (" ..." if len(first) > 5 else "")
    return f"  {label} '{safe(k.keyword)}' x{k.count} at {where}: {safe(snippet(text, start, end))}"


def _uncounted_line(hits: Sequence[KeywordHit]) -> list[str]:
    """Why a lesson's hit keywords are `x?`: their pass went past its budget (core/library/hit_counts.py)."""
    from lesson_credit.core.library.hit_counts import uncounted_reason

    return [f"  note: {uncounted_reason()}"] if any(k.hit and k.count is None for k in hits) else []


def _ignored_lines(c: LessonCredit, text: str) -> list[str]:
    """A lesson's wildcard keywords past its first ones: how many, not counted, and those the journal mentions."""
    from lesson_credit.core.library.keyword_limits import WILDCARD_MAX_PER_LESSON as FIRST

    looked = f" (the first {FIRST} of them looked for in the journal)" if c.unchecked else ""
    note = f"  note: {counted(c.beyond, 'wildcard keyword')} past the first {FIRST} not counted in salience{looked}"
    return [note, *(_hit_line("ignored", k, text) for k in c.ignored)] if c.beyond else []


def _history_lines(grades: Sequence[GradeRecord]) -> list[str]:
    """One line per grade event, oldest first; a retraction (base_reward null) says so."""
    lines = []
    for g in grades:
        note = "  " + safe(g.note).replace("\n", "\\n") if g.note else ""  # one line: a newline shows as \n
        value = "retracted" if g.base_reward is None else fmt(g.base_reward)  # three places, as `sessions`
        lines.append(f"  {safe(g.timestamp or '-')}  {value}  {safe(g.grader)}{note}")
    return lines


def _record_of(ws: Workspace, session_id: str) -> dict[str, Any]:
    """The session's record as logged ({} if it cannot be read back)."""
    return ws.session_record(session_id)


def explanation_json(ws: Workspace, exp: Explanation) -> dict[str, Any]:
    """explain's JSON: a pending session's per-lesson reward is null (it credited nothing yet),
    and `journal_changed` says whether the journal's sha256 still matches the recorded one."""
    from lesson_credit.core.library.journals import journal_changed

    payload: dict[str, Any] = exp.as_json()
    payload["lessons"] = credit_json(exp, payload["lessons"])
    record = _record_of(ws, exp.session.session_id)
    changed, why = journal_changed(ws.root, record, ws.allow_outside_journals)
    payload["journal_changed"] = changed
    payload["journal_note"] = why
    # without log lines: explain reads the same from a file and from a database store (show has the lines)
    sources = [source.as_json() for source in ws.reward_sources(exp.session.session_id)]
    payload["sources"] = [{key: value for key, value in s.items() if key != "line"} for s in sources]
    payload["priority"] = list(ws.config.reward_priority)
    return payload


def credit_json(exp: Explanation, lessons: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The per-lesson credit of explain's and show's JSON (`lessons`, as `exp.as_json()` has it): a pending
    session's reward null (it credited nothing yet)."""
    for lesson in lessons if exp.base_reward is None else ():
        lesson["reward"] = None
    return lessons


def cmd_explain(args: argparse.Namespace) -> int:
    ws = open_workspace(args)
    exp = ws.explain(resolve_session(ws, args.session_id), lesson=args.lesson)
    if args.json:  # the text's warning of a changed journal is one of the JSON's warnings too
        payload = explanation_json(ws, exp)
        journal = [payload["journal_note"]] if payload["journal_changed"] else []
        print_json({**payload, "warnings": [*warning_lines(ws), *journal]})
    else:
        width = output_width()
        print(explanation_text(exp, width))
        from lesson_credit.core.library.journals import journal_changed

        changed, why = journal_changed(ws.root, _record_of(ws, exp.session.session_id), ws.allow_outside_journals)
        if changed:
            print(wrap(f"\nwarning: {safe(why)}", width))
    return 0


def _session_json(table_obj: SessionTable, row: int, words: dict[int, str]) -> dict[str, Any]:
    summary = table_obj.summary(row)
    return {
        "session_id": summary.session_id,
        "timestamp": summary.timestamp,
        "category": summary.category,  # its kind's name, as sessions are grouped
        "recorded_category": summary.recorded_category,  # as the log has it
        "base_reward": summary.base_reward,  # null while pending
        "outcome": words.get(row),  # the gptme outcome word the reward in force comes from, if any
        "grader": summary.grader,
        "lessons": summary.n_lessons,
        "mean_salience": summary.mean_salience,
        "line": summary.line,
    }


def cmd_sessions(args: argparse.Namespace) -> int:
    from lesson_credit.core.base.ids import lesson_named
    from lesson_credit.core.query import NO_ROWS, SessionQuery, parse_sort, parse_time, rows_with_arm, select_rows

    min_reward = parse_reward(args.min_reward)
    max_reward = parse_reward(args.max_reward)
    column, descending = parse_sort(args.sort)
    ws = open_workspace(args)
    now = ws.clock()
    since = parse_time(args.since, now) if args.since is not None else None
    until = parse_time(args.until, now) if args.until is not None else None
    lesson_rows = None
    if args.lesson is not None:
        data = ws.data()
        lesson = lesson_named(args.lesson, [*data.arm_ids, *ws.library().by_id()])
        if lesson in data.arm_ids:
            lesson_rows = rows_with_arm(data.entry_arm, data.entry_session, data.arm_ids.index(lesson))
        elif lesson in ws.library().by_id():
            lesson_rows = NO_ROWS  # in the library, never injected
        else:
            raise CliError(f"lesson {args.lesson!r} is neither in the library nor in the log")
    query = SessionQuery(
        pending=args.pending,
        graded=args.graded,
        category=args.category,
        grader=args.grader,
        lesson_rows=lesson_rows,
        min_reward=min_reward,
        max_reward=max_reward,
        since=since,
        until=until,
        sort=column,
        descending=descending,
    )
    table_obj = ws.session_table()
    rows = select_rows(table_obj, query)
    information = None
    if args.order == "informative":
        rows, information = _informative(ws, rows)
    shown = rows[: args.limit] if args.limit is not None else rows
    warn_problems(ws, args.json)
    words = ws.outcome_words()
    if args.json:
        listed = [_session_json(table_obj, row, words) for row in shown.tolist()]
        if information is not None:
            for entry, row in zip(listed, shown.tolist(), strict=True):
                entry["information"] = float(information[row])
        print_json({"sessions": listed, "matched": len(rows)}, ws)
        return 0
    print(_sessions_text(table_obj, shown, words, information))
    more = f" (showing {len(shown)})" if len(shown) < len(rows) else ""
    verb = "matches" if len(rows) == 1 else "match"
    print(f"\n{len(rows)} of {counted(len(table_obj), 'session')} {verb}{more}")
    return 0


def _sessions_text(
    table_obj: SessionTable, shown: IntArray, words: dict[int, str], information: FloatArray | None
) -> str:
    """The `sessions` table, and under it what its less plain cells mean: `shift` (the informative order's
    column) and a `record:SOURCE` grader."""
    import math

    width = output_width()
    cells: list[tuple[object, ...]] = []
    for row in shown.tolist():
        s = table_obj.summary(row)
        reward = "pending" if s.pending else fmt(s.base_reward)  # three places, as every other command
        cells.append(
            (
                s.session_id,
                s.timestamp or "-",
                s.category or "-",
                f"{words[row]} ({reward})" if row in words else reward,  # gptme's word: noop, failed... differ
                s.grader or "-",
                s.n_lessons,
                fmt(s.mean_salience),
            )
        )
    headers = ["session", "time", "category", "reward", "grader", "lessons", "salience"]
    legend = []
    if information is not None:  # its square root: a distance on the reward's scale, read as the rest
        headers.append("shift")
        cells = [(*c, fmt(math.sqrt(max(information[row], 0.0)))) for c, row in zip(cells, shown.tolist(), strict=True)]
        legend.append(
            "shift: how far a person's grade is expected to move the means of the session's lessons (the root of "
            "--json's information, the sum of their expected squared changes); 0: a person graded it, or a "
            "person's grade would not be in force"
        )
    records = sorted({str(c[4]) for c in cells if str(c[4]).startswith("record:")})
    if records:
        sources = ", ".join(name.removeprefix("record:") for name in records)
        legend.append(
            f"{', '.join(records)}: the {sources} score from the session's gptme-sessions record (no grade "
            "event in the log)"
        )
    shortened: dict[int, Shorten] = {0: "middle", 2: "end", 4: "end"}  # an id's date and counter stay
    # who scored the reward goes last: without it a judge's score reads as a person's grade (at 80 columns
    # the grader stays, informative order included; the category, then the salience, give way first)
    drop = (2, 6, 4)
    text = table(headers, cells, right=(5, 6, 7), width=width, shorten_columns=shortened, drop=drop)
    return (
        text
        + "".join("\n\n" + wrap(line, width) for line in legend[:1])
        + "".join("\n" + wrap(line, width) for line in legend[1:])
    )


def _gptme_sessions(ws: Workspace, session_id: str) -> dict[str, Any]:
    """The session as gptme keeps it (docs/records.md): its gptme-sessions record, its trajectory and every
    reward source's score; each missing or unreadable part is None with a one-line note."""
    from lesson_credit.core.sessions.record_file import logged_judge, record_lines

    row = ws.session_row(session_id)
    file = ws.session_records.file()
    record, how, weights, note = None, None, {}, file.note
    if file.present:
        joined = ws.records()
        record, how, weights = joined.record_at(row), joined.join.how.get(row), joined.weights
        beside = f" or the {counted(len(file.rotated), 'rotated file')} beside it" if file.rotated else ""
        none = file.note or f"no gptme-sessions record in {file.path}{beside} joins this session"
        if file.problem_count and not file.note:  # a file that could not be read said so only in lint
            none += (
                f"; it has {counted(file.problem_count, 'problem')} (lint lists them), the first: {file.problems[0]}"
            )
        note = None if record is not None else none
    trajectory, trajectory_note = ws.trajectory_of(session_id)
    sources = ws.reward_sources(session_id)
    judge = logged_judge(sources)
    text = [] if record is None else record_lines(record, weights, how, outcomes=ws.config.outcomes, logged_judge=judge)
    return {
        "record": None if record is None else {**record.as_json(weights), "joined_by": how},
        "record_note": note,
        "record_text": text,
        "trajectory": None if trajectory is None else trajectory.as_json(),
        "trajectory_note": trajectory_note,
        "trajectory_obj": trajectory,
        "sources": [source.as_json() for source in sources],
        "priority": list(ws.config.reward_priority),
    }


def _source_text(sources: list[dict[str, Any]]) -> str:
    parts = []
    for s in sources:
        score = "withdrawn" if s["score"] is None else fmt(s["score"])
        where = f"line {s['line']}" if s["line"] is not None else "gptme-sessions record"
        parts.append(f"{s['source']} {score} ({safe(s['grader'])}, {where})" + (" in force" if s["in_force"] else ""))
    return "; ".join(parts) or "none (pending)"


def _informative(ws: Workspace, rows: IntArray) -> tuple[IntArray, FloatArray]:
    """The selected rows in the informative grading order (core.analysis.informative): sessions no
    person graded, most informative first, then the rest in log order; and each row's score."""
    import numpy as np

    from lesson_credit.core.reward_report import grading_queue

    queue = grading_queue(ws, "informative")
    assert queue.informative is not None
    chosen = set(rows.tolist())
    first = [row for row in queue.rows if row in chosen]
    rest = sorted(chosen.difference(first))
    return np.array(first + rest, dtype=np.int64), queue.informative.score


OUTSIDE_KEYS = ("sources", "priority", "record", "record_note", "trajectory", "trajectory_note")


def _outside_lines(outside: dict[str, Any]) -> list[str]:
    """show's lines for the reward sources, the gptme-sessions record and the trajectory. Show continues a wrapped
    labelled line under its value (10 in), a record's line (10 in, no label) 2 past its start."""
    trajectory = outside["trajectory_obj"]
    record_text = outside["record_text"] or [outside["record_note"] or "none"]
    trajectory_text = (
        f"{trajectory.path} ({trajectory.format}, {counted(len(trajectory.messages), 'message')}, "
        f"{counted(trajectory.tool_calls, 'tool call')})"
        if trajectory is not None
        else outside["trajectory_note"] or "none"
    )
    return [
        f"sources   {_source_text(outside['sources'])}  [priority: {', '.join(outside['priority'])}]",
        f"record    {safe(record_text[0])}",
        *(f"          {safe(line)}" for line in record_text[1:]),
        f"trajectory {safe(trajectory_text)}",
    ]


def _recorded_as(name: str | None, recorded: str | None) -> str:
    """After the name of a session's kind of work, the category as the log has it when spelt otherwise (quoted,
    its spaces seen; with its code points escaped when it is in another Unicode form than the name, which reads
    alike)."""
    from lesson_credit.core.base.ids import one_form

    if recorded is None or recorded == name:
        return ""
    return f" (recorded as {safe(ascii(recorded) if one_form(recorded) != recorded else repr(recorded))})"


def cmd_show(args: argparse.Namespace) -> int:
    from lesson_credit.core.library.journals import journal_changed

    ws = open_workspace(args)
    session_id = resolve_session(ws, args.session_id)
    outside = _gptme_sessions(ws, session_id)
    exp = ws.explain(session_id, with_journal=False)
    record = _record_of(ws, session_id)
    changed, why = journal_changed(ws.root, record, ws.allow_outside_journals)
    s = exp.session
    # who gave the grade in force: its source's (an undo's score is owed to the grade it put back, not the undoer)
    given_by = next((g["grader"] for g in outside["sources"] if g["in_force"] and g["line"]), s.grader)
    label = ws.outcome_label(session_id)
    history = [
        {"base_reward": g.base_reward, "grader": g.grader, "timestamp": g.timestamp, "note": g.note, "line": g.line}
        for g in exp.grades
    ]
    credited = credit_json(exp, exp.as_json()["lessons"])  # (not explanation_json: record and journal read above)
    for lesson in credited:
        del lesson["keywords"]
    if args.json:
        print_json(
            {
                "session_id": s.session_id,
                "timestamp": s.timestamp,
                "category": s.category,
                "recorded_category": s.recorded_category,
                "base_reward": exp.base_reward,
                "grader": given_by,
                "outcome": label,
                "journal_path": s.journal_path,
                "journal_sha256": record.get("journal_sha256"),
                "journal_changed": changed,
                "line": s.line,
                "strategy": exp.settings.strategy,
                "floor": exp.settings.floor,
                "grades": history,
                "lessons": credited,
                **{key: outside[key] for key in OUTSIDE_KEYS},
            },
            ws,
        )
        return 0
    grade = "pending" if exp.base_reward is None else f"{fmt(exp.base_reward)} ({safe(given_by)})"
    width = output_width()
    history_text = ["grade history:" if exp.grades else "grade history: none (pending)", *_history_lines(exp.grades)]
    out = [
        f"session   {safe(s.session_id)}",
        f"time      {safe(s.timestamp or '-')}",
        f"category  {safe(s.category or '-')}" + _recorded_as(s.category, s.recorded_category),
        f"grade     {grade}" + (f"  (outcome {safe(label)!r})" if label else ""),
        f"journal   {safe(s.journal_path or '-')}" + (f"  [{safe(why)}]" if changed is not None else ""),
        f"log line  {s.line}",
        *_outside_lines(outside),
    ]
    heading = f"credit of grade {grade} under strategy {exp.settings.strategy}, floor {exp.settings.floor:g}:"
    credit = [
        *([wrap(heading, width)] if exp.lessons else []),  # (the grade again: in view under a long record)
        credit_table(exp, width),
        "",
        *(wrap(line, width, hang=4) for line in history_text),
    ]
    print("\n".join(wrap(line, width, hang=2 if line.startswith(" ") else 10) for line in out), "", *credit, sep="\n")
    return 0


def register(sub: SubParsers, common: argparse.ArgumentParser, data: argparse.ArgumentParser) -> None:
    """Add this group's subcommands to `sub`."""
    p = command(
        sub,
        "sessions",
        [common, data],
        "list and filter sessions",
        "List logged sessions, filtered and sorted. Filters combine (all must hold). Times are\n"
        "relative to now (30m, 2h, 7d, 2w, 90s) or ISO dates / date-times (no zone means UTC).\n"
        "--json: {sessions: [{session_id, timestamp, category, recorded_category, base_reward (null while\n"
        "pending), outcome, grader, lessons, mean_salience (null: no lesson), line}], matched: count before\n"
        "--limit}; lessons is a count: the lesson entries of the session's event, as show and explain list them.\n"
        "category: the kind of work's name (the spelling most of its sessions use); recorded_category: as logged.",
        "  lesson-credit sessions --since 1d --pending --lesson tools/git.md\n"
        "  lesson-credit sessions --sort reward:desc --limit 10 --json",
    )
    p.add_argument("--pending", action="store_true", help="only sessions waiting for a grade")
    p.add_argument("--graded", action="store_true", help="only graded sessions")
    p.add_argument(
        "--category",
        default=None,
        metavar="C",
        help="only sessions of this kind of work (category, case and spaces around ignored: Code is code)",
    )
    p.add_argument("--grader", default=None, metavar="G", help="only sessions whose grade in force is by G")
    p.add_argument(
        "--lesson",
        default=None,
        metavar="ID",
        help="only sessions this lesson was injected in (an id, or its unique file name)",
    )
    p.add_argument(
        "--min-reward",
        type=reward_bound,
        default=None,
        metavar="R",
        help="only graded sessions with reward >= R, R in [0, 1]",
    )
    p.add_argument(
        "--max-reward",
        type=reward_bound,
        default=None,
        metavar="R",
        help="only graded sessions with reward <= R, R in [0, 1]",
    )
    p.add_argument(
        "--since",
        type=time_arg,
        default=None,
        metavar="TIME",
        help="only sessions at or after TIME (e.g. 2h, 7d, 2026-03-01)",
    )
    p.add_argument(
        "--until", type=time_arg, default=None, metavar="TIME", help="only sessions before TIME (same forms as --since)"
    )
    p.add_argument(
        "--sort",
        type=sort_arg,
        default="line",
        metavar="COLUMN[:desc]",
        help="order by line (log order), id, time, category, reward, grader, lessons or salience, "
        "ascending unless :desc; missing values last (default: line)",
    )
    p.add_argument(
        "--order",
        choices=["sort", "informative"],
        default="sort",
        help="sort: as --sort says; informative: first the sessions no person graded whose grade would most "
        "change the lessons' estimates, then the rest in log order, with a column `shift`: how far a person's "
        "grade is expected to move the session's lessons' posterior means, the square root of `information` "
        "in --json, the sum over the session's lessons of the expected squared change of the lesson's "
        "posterior mean if a person graded it (0 for a session a person graded; see docs/records.md); the "
        "grader column says who scored each reward, `record:judge` a gptme-sessions record's judge "
        "(default: sort)",
    )
    p.add_argument(
        "--limit", type=positive_int, default=None, metavar="N", help="show at most N sessions (default: all)"
    )
    p.set_defaults(func=cmd_sessions)
    _register_show(sub, common, data)


def _register_show(sub: SubParsers, common: argparse.ArgumentParser, data: argparse.ArgumentParser) -> None:
    """Add `show` and `explain` to `sub`."""
    p = command(
        sub,
        "show",
        [common, data],
        "one session: record, grades, credit",
        "One session's record (time, category, journal and whether it changed since), its grade\n"
        "history and each lesson's credit. A unique prefix of the id is enough. As gptme keeps it\n"
        "(docs/records.md): every reward source's score (the one in force marked), the gptme-sessions record\n"
        "joined to it (harness, model, duration, outcome, deliverables, grades, judge) and its\n"
        "trajectory. --json adds sources, priority, record (every key of the record, unknown ones\n"
        "too, with joined_by), trajectory {path, format, messages, tool_calls} (counts), and\n"
        "record_note / trajectory_note: why one is null. The category is its kind of work's name (as\n"
        "`sessions` shows it; the spelling logged after it when another, recorded_category in --json).",
        "  lesson-credit show 20260305T1630\n  lesson-credit show S1 --json",
    )
    p.add_argument("session_id", metavar="SESSION_ID", help="a session id or a unique prefix of one")
    p.add_argument(
        "--allow-outside",
        action="store_true",
        help="read journals and trajectories outside the workspace (and the [records] trajectory_dirs)",
    )
    p.set_defaults(func=cmd_show)

    p = command(
        sub,
        "explain",
        [common, data],
        "why each lesson got its credit in a session",
        "Per lesson of a session: salience (keywords hit and missed, where in the journal),\n"
        "weight, credited reward (the lesson's share of the session's: `credited`, `reward` in --json)\n"
        "and the alpha/beta change, under the current settings. Under decay (config.toml decay < 1) the\n"
        "change is what the grade moves in today's posterior: its increment worth gamma^(T - t), and the\n"
        "decay step the grade adds to what came before it (a pending session decays nothing), so beta can\n"
        "fall on a reward of 1. The lessons included during the session (record --during) are named under the\n"
        "table (`during` in --json): credited as the others, they are no treatment of the effect estimates.\n"
        "--json adds journal_changed: true when the journal no longer has the recorded sha256, and\n"
        "sources (every reward source's score, the one in force marked) with the priority (docs/records.md).",
        "  lesson-credit explain S1\n  lesson-credit explain S1 --lesson tools/git.md --json",
    )
    p.add_argument("session_id", metavar="SESSION_ID", help="a session id or a unique prefix of one")
    p.add_argument(
        "--lesson",
        default=None,
        metavar="ID",
        help="only this lesson (it must be in the session; an id, or its unique file name there)",
    )
    p.add_argument("--allow-outside", action="store_true", help="read journals outside the workspace")
    p.set_defaults(func=cmd_explain)
