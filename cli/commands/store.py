"""Moving the event log between the workspace file and a database: `store push|pull`."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lesson_credit.cli.common import (
    CliError,
    command,
    open_workspace,
    print_json,
    print_warnings,
)
from lesson_credit.cli.render import counted, safe, warning_line

if TYPE_CHECKING:
    from lesson_credit.core.log.eventstore import EventStore
    from lesson_credit.core.log.pgstore import PgStore


def cmd_store_push(args: argparse.Namespace) -> int:
    from lesson_credit.core.log.eventstore import JsonlStore

    ws = open_workspace(args)
    store = _database(ws.log, "push")  # (psycopg is imported only past this)
    from lesson_credit.core.log.pushmemory import PushMemory

    source = JsonlStore(ws.state_dir / "sessions.jsonl")
    # no log file, or a symbolic link to one moved away: pushing nothing would say the log shrank (and forget
    # what was pushed)
    if not os.path.exists(source.path):
        raise CliError(f"{source.path}: there is no event log to push (moved or deleted?); nothing pushed")
    # what this workspace pushed to this store before: a push that would add lines to a log edited
    # since is refused (core/log/pushmemory.py)
    memory = PushMemory(ws.state_dir / ".cache", store.store_id(), source.name, store.name)
    report = store.push(source.raw_lines, memory)  # how to read it from the start: see core/log/pgpush.py
    memory.save()  # the push committed
    if memory.warning:
        ws.warnings.append(memory.warning)
    if args.json:
        print_json(
            {
                "store": store.name,
                "lines": report.lines,
                "added": report.added,
                "present": report.present,
                "invalid": [{"line": p.line, "reason": p.reason} for p in report.problems],  # the first 1,000
                "invalid_lines": report.invalid,
                # what the table form warns of: the log's problems are the invalid lines above (the
                # database's events are not read: that would hold the whole log in memory)
                "warnings": list(ws.warnings),
            }
        )
        return 0
    print_warnings(ws)
    for problem in report.problems[:5]:
        print(warning_line(f"{source.name} {safe(problem)} (not pushed)"), file=sys.stderr)
    if report.invalid > 5:
        print(warning_line(f"{counted(report.invalid - 5, 'more invalid line')} (not pushed)"), file=sys.stderr)
    print(
        f"pushed {source.name} to {safe(store.name)}: {counted(report.added, 'event')} added, {report.present} already "
        f"there (or a second session event for an id), {counted(report.invalid, 'invalid line')} skipped"
    )
    return 0


def cmd_store_pull(args: argparse.Namespace) -> int:
    from lesson_credit.core.base.numbers import listed
    from lesson_credit.core.log.eventstore import export_log

    ws = open_workspace(args, anywhere=True)  # (the database read, the file given written: nothing here)
    store = _database(ws.log, "pull")
    upto = store.size()
    count = export_log(store.raw_lines(), Path(args.file))
    agents = sorted(set(store.session_agents(0, upto).values()))
    if len(agents) > 1:  # the file keeps no writer: the estimates' agent baselines are lost
        shown = listed([safe(name) for name in agents], 3)
        ws.warnings.append(
            f"the sessions were recorded by {len(agents)} agents ({shown}), and a file keeps no writer: on it, loo and "
            "select --policy joint fit no agent baselines, so their estimates may differ from the database's (the "
            "posteriors are the same)"
        )
    if args.json:
        print_json({"store": store.name, "file": str(args.file), "events": count}, ws)
    else:
        print_warnings(ws)
        print(f"wrote {counted(count, 'event')} from {safe(store.name)} to {safe(args.file)}")
    return 0


def _database(store: EventStore, action: str) -> PgStore:
    """The database store `store` is, else CliError: the file needs no push or pull. psycopg is
    imported only then (a database store imported it already), so the command says so in one line
    where the `pg` extra is not installed."""
    from lesson_credit.core.log.stores import is_local

    if is_local(store):
        raise CliError(f"store {action} needs a database store (--store URL, $LESSON_CREDIT_STORE or [store] url)")
    from lesson_credit.core.log.pgstore import PgStore

    assert isinstance(store, PgStore)
    return store


def register(sub: Any, common: argparse.ArgumentParser, data: argparse.ArgumentParser) -> None:
    """Add this group's subcommands to `sub`."""
    p = command(
        sub,
        "store",
        [],
        "move the event log between the workspace file and a database store",
        "Copy events between the workspace's sessions.jsonl and a PostgreSQL store (--store URL,\n"
        "$LESSON_CREDIT_STORE or [store] url in config.toml).",
        "  lesson-credit store push --store postgresql://host/db\n  lesson-credit store pull copy.jsonl --store postgresql://host/db",
    )
    store_sub = p.add_subparsers(
        dest="store_command",
        metavar="ACTION",
        required=True,
        help="push: copy the workspace's sessions.jsonl into the database; pull: write the database's events "
        "to a new JSONL file (`lesson-credit store ACTION --help` describes each)",
    )
    q = command(
        store_sub,
        "push",
        [common, data],
        "copy the workspace's sessions.jsonl into the database (idempotent)",
        "Copy every event of the workspace's sessions.jsonl into the database store, in one\n"
        "transaction (all or nothing), streamed: the log is never held in memory. Re-running adds\n"
        "nothing: events already there (and a second session event for an id) are skipped. A log\n"
        "edited where an earlier push to that database read it (a line changed, cut, or its pushed lines\n"
        "reordered) is refused when the push would add events (exit 1, nothing added: the database keeps\n"
        "every event in its order; correct a score with grade or undo). Exit 75 when the database\n"
        "fails for now (down, read-only, a lock held too long): nothing was added.",
        "  lesson-credit store push --store postgresql://host/db",
    )
    q.set_defaults(func=cmd_store_push)
    q = command(
        store_sub,
        "pull",
        [common, data],
        "write the database's events as a JSONL log",
        "Write the database's events, in the order they fold in (every event committed when the pull\n"
        "began), as a JSONL log that the file store folds to the same numbers. A file keeps no writer:\n"
        "where several agents recorded sessions, loo and select --policy joint fit agent baselines on the\n"
        "database and none on the file (a warning says so).",
        "  lesson-credit store pull backup.jsonl --store postgresql://host/db",
    )
    q.add_argument("file", metavar="FILE", help="the JSONL file to write (must not exist)")
    q.set_defaults(func=cmd_store_pull)
