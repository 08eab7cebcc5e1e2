"""`lesson-credit`: the command line an agent's hooks call and people script with --json.

Headless commands never import the dashboard (or textual): a session hook pays only for
the engine. Bad input exits 1 with one line on stderr and leaves the log untouched.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Collection, Sequence
from importlib import import_module
from typing import Any, NoReturn

from lesson_credit.cli.common import (
    EXIT_USAGE,
    HelpFormatter,
    UsageError,
    nearest_command,
    on_a_terminal,
    subcommands,
    summary_lines,
    why_no_terminal,
    workspace_arg,
)
from lesson_credit.cli.pager import paging
from lesson_credit.cli.process import guarded, limit_blas_threads, msgspec_without_typing_extensions, stored, succeeded
from lesson_credit.cli.render import JSON_WORDS, error_line, safe, warning_line
from lesson_credit.cli.version import VersionAction

__all__ = ["build_parser", "main", "subcommands", "summary_lines"]

# The command list in --help, in its order: each command's group (its module in cli/commands, which
# registers the group's commands beside their handlers) and its one-line summary. A command's run builds
# the parser of its own group only: the other commands are listed by these lines, their modules (and
# what those import) never loaded (tests/cli/test_lazy_commands.py checks the lines against the modules').
COMMANDS: dict[str, tuple[str, str]] = {
    "tui": ("dashboard", "open the dashboard"),
    "status": ("posteriors", "posterior per lesson"),
    "replay": ("posteriors", "re-fold the log under another strategy/floor/decay/reward priority"),
    "sessions": ("sessions", "list and filter sessions"),
    "show": ("sessions", "one session: record, grades, credit"),
    "explain": ("sessions", "why each lesson got its credit in a session"),
    "select": ("selection", "Thompson-sample lessons for a context"),
    "record": ("writes", "log a session with its journal and lessons"),
    "grade": ("writes", "grade (or regrade) a session"),
    "undo": ("writes", "undo your latest grade of a session"),
    "prune": ("writes", "retire arms whose lesson file is gone"),
    "loo": ("analysis", "each lesson's effect on reward, and leave-one-out lift"),
    "lint": ("analysis", "health checks (errors and warnings)"),
    "simulate": ("analysis", "compare credit strategies and selection policies in a world with known truth"),
    "agreement": ("agreement", "how far the judge, heuristics and outcomes agree with people"),
    "import-gptme": ("gptme", "log a gptme bandit-state.json as a prior"),
    "export-gptme": ("gptme", "write posteriors as a gptme bandit-state.json"),
    "store": ("store", "move the event log between the workspace file and a database store"),
    "completion": ("meta", "print a shell completion script"),
    "help": ("meta", "describe a command"),
}
STORE_HELP = (
    "event store: a postgresql:// URL or libpq keyword string (default: $LESSON_CREDIT_STORE, [store] url in "
    'config.toml, else the workspace\'s sessions.jsonl; --store "" forces the file)'
)
AGENT_HELP = "who writes, recorded with each event in a database store (default: the hostname)"
NO_PAGER_HELP = "print an answer taller than the terminal as it comes, not through the pager"
# `help` and `completion` describe every command: their run builds the whole parser
WHOLE_PARSER = "meta"


class Parser(argparse.ArgumentParser):
    """argparse's parser, except that an unknown command is said in one short line naming the nearest
    command (argparse lists all twenty in a line of 250 characters)."""

    def error(self, message: str) -> NoReturn:
        import re

        found = re.match(r"argument COMMAND: invalid choice: '((?:[^'\\]|\\.)*)'", message)
        if found is not None:
            word = found.group(1)
            message = (
                f"unknown command '{word}'{nearest_command(word, COMMANDS)} (lesson-credit --help lists the commands)"
            )
        super().error(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        """argparse's exit; its error line (`prog: error: ...`) wrapped at spaces on a terminal (`error_line`)."""
        if status and message:
            message = error_line(message.rstrip("\n"), JSON_WORDS.get()) + "\n"
        super().exit(status, message)


def build_parser(groups: Collection[str] | None = None, *, others: bool = True) -> argparse.ArgumentParser:
    """The command line's parser: the commands of `groups` (default: all) in full, the others by name and
    summary only (enough for the command list, not to run them), or not at all without `others` (a command's
    run shows no list: 16 parsers fewer for a hook's `record`)."""
    # --workspace may come before or after the command; SUPPRESS keeps a subcommand's
    # absent option from overwriting the value given before it.
    common = argparse.ArgumentParser(add_help=False, formatter_class=HelpFormatter)
    common.add_argument(
        "--workspace",
        "-w",
        default=argparse.SUPPRESS,
        type=workspace_arg,
        metavar="DIR",
        help="workspace folder (default: .)",
    )
    common.add_argument(
        "--store",
        default=argparse.SUPPRESS,
        metavar="URL",
        help=STORE_HELP,
    )
    common.add_argument(
        "--agent",
        default=argparse.SUPPRESS,
        metavar="NAME",
        help=AGENT_HELP,
    )
    data = argparse.ArgumentParser(add_help=False, formatter_class=HelpFormatter)
    data.add_argument("--json", action="store_true", help="print JSON on stdout instead of text")
    data.add_argument("--no-pager", action="store_true", default=argparse.SUPPRESS, help=NO_PAGER_HELP)

    parser = Parser(
        prog="lesson-credit",
        description=(
            "Salience-weighted credit for agent lessons. With no command, opens the dashboard\n"
            "on a terminal (anywhere else, exits 2)."
        ),
        epilog=(
            "exit status: 0 success, 1 bad input (a reward, session id or file the command cannot use; one\n"
            "line on stderr, nothing written), 2 usage error (an unknown command, option or choice, or an\n"
            "option's value out of range: the usage and one line, nothing read),\n"
            "75 the event store failed for now (a database down, read-only or not answering in time, or\n"
            "another writer held the log's lock over $LESSON_CREDIT_LOCK_TIMEOUT s, default 30; one line on\n"
            "stderr, nothing written), not enough memory for the command, or a bandit-state.json another tool\n"
            "is saving (export-gptme, import-gptme): retry later. 70 internal\n"
            "error (a bug: the traceback is printed; please report it). 130 interrupted (Ctrl-C).\n"
            "A write whose event is stored but cannot be shown (the store gone or no memory after it) exits 0\n"
            "with a warning; with --json, stdout is then {command, session_id, logged: true, read_back: false,\n"
            "warnings}: the event is logged, its credit and the posteriors after it are not known.\n\n"
            "Tables fit a terminal's width (or $COLUMNS, when set): long paths and ids shortened with an\n"
            "ellipsis, minor columns hidden with a note; a pipe or a file gets them in full. An answer taller\n"
            "than the terminal (or $LINES) goes through $LESSON_CREDIT_PAGER, else $PAGER, else `less -FRXd`\n"
            "(--no-pager or an empty variable: none; never with --json, for a pipe or a file, or TERM=dumb).\n\n"
            "`lesson-credit help COMMAND` (or `COMMAND --help`) describes one command."
        ),
        formatter_class=HelpFormatter,
    )
    parser.add_argument(
        "--workspace", "-w", default=".", type=workspace_arg, metavar="DIR", help="workspace folder (default: .)"
    )
    parser.add_argument("--store", default=None, metavar="URL", help=STORE_HELP)
    parser.add_argument("--agent", default=None, metavar="NAME", help=AGENT_HELP)
    parser.add_argument("--no-pager", action="store_true", help=NO_PAGER_HELP)
    parser.add_argument("--version", action=VersionAction, help="print lesson-credit's version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    registered: set[str] = set()
    for name, (group, summary) in COMMANDS.items():
        if groups is not None and group not in groups:
            if others:
                sub.add_parser(name, help=summary, add_help=False, formatter_class=HelpFormatter)
        elif group not in registered:
            registered.add(group)
            import_module(f"lesson_credit.cli.commands.{group}").register(sub, common, data)
    return parser


def _parse(argv: Sequence[str] | None) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    """The arguments, parsed by a parser with the command's own group in full: a first pass with no
    group finds the command (top-level --help, --version and usage errors end there, as the whole
    parser would end them). A command line that starts with a command's name (a hook's) needs no first
    pass: the first word that is not an option is the command. A command's parser lists no other command
    (what lists them, the top level's help and usage errors, ends in the first pass)."""
    words = sys.argv[1:] if argv is None else argv
    JSON_WORDS.set("--json" in words)
    if words and words[0] in COMMANDS:
        command = words[0]
    else:
        command = build_parser(()).parse_known_args(argv)[0].command
    group = COMMANDS[command][0] if command is not None else None
    parser = build_parser(None if group == WHOLE_PARSER else () if group is None else (group,), others=command is None)
    with _usage_comments(command, words):
        args, extra = parser.parse_known_args(argv)
        if extra:  # said by the command's own parser (its usage, its name), not the top level's
            _innermost(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    return parser, args


def _usage_comments(command: str | None, words: Sequence[str]) -> contextlib.AbstractContextManager[object]:
    """`select`'s usage error (exit 2) as `#` comments, as its other lines on stderr when that is not a terminal:
    a hook saving stdout and stderr to one file hands it to `record --lessons-file`, which skips comments."""
    if command != "select":
        return contextlib.nullcontext()
    from lesson_credit.cli.commands.selection import comment_stderr

    return comment_stderr("--json" in words)


def _innermost(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub)command `args` ran: `store push`'s for `lesson-credit store push ...`."""
    for name, command_parser in subcommands(parser).items():
        if name in (getattr(args, "command", None), getattr(args, "store_command", None)):
            return _innermost(command_parser, args)
    return parser


def main(argv: Sequence[str] | None = None, *, clock: Callable[[], Any] | None = None) -> int:
    """Run one command; `clock` (a function returning an aware datetime) stands in for now."""
    limit_blas_threads()  # before any command imports the engine
    if sys.stderr is None:  # started with stderr closed (2>&-): print(file=None) would write to stdout
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (the process's stderr, open until it ends)
    with msgspec_without_typing_extensions():  # (a command group's module may import msgspec: select's)
        parser, args = _parse(argv)
        import msgspec  # noqa: F401  (every command imports it; --help and --version end in the parse)
    args.clock = clock
    args.parser = parser  # `help` and `completion` describe this parser
    if args.command is None:
        if not on_a_terminal():  # a cron job or a pipe that forgot the command
            print(
                error_line(
                    f"lesson-credit: no command, and no terminal for the dashboard ({why_no_terminal()}): give a "
                    "command (lesson-credit --help lists them)"
                ),
                file=sys.stderr,
            )
            return EXIT_USAGE
        from lesson_credit.cli.commands.dashboard import cmd_tui

        args.func = cmd_tui
    name = args.command or "the dashboard"
    commented = getattr(args, "stderr_comments", None)  # (select: its stderr's lines, its error's too, # comments)
    with paging(wanted=args.command not in (None, "tui") and not getattr(args, "json", False) and not args.no_pager):
        with contextlib.nullcontext() if commented is None else commented(args.json):
            return guarded(lambda: _dispatch(args), name, lambda logged: stored(args, logged), args)


def _dispatch(args: argparse.Namespace) -> int:
    """The command's exit status. The dispatcher maps only the project's errors (core/base/errors.py): one
    line, and the exit status the error carries. Whatever else a command raises is not input to be
    corrected: the process boundary (cli/process.py `guarded`) says what it is."""
    from lesson_credit.core.base.errors import LessonCreditError, TemporaryFailure
    from lesson_credit.core.base.files import set_aside_mark
    from lesson_credit.core.base.logged import logged_count

    mark, logged = set_aside_mark(), logged_count()
    try:
        code = int(args.func(args))
        _set_aside_warnings(mark)
        return code
    except LessonCreditError as exc:  # one line: the caches set aside go unsaid
        message = safe(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        if isinstance(exc, UsageError):  # as argparse says its own: the command's usage, then the line (exit 2)
            _innermost(args.parser, args).error(message)
        if isinstance(exc, TemporaryFailure) and stored(args, logged):  # (the database gone after the commit)
            return succeeded(message, args)
        print(error_line(f"lesson-credit: {message}", getattr(args, "json", False)), file=sys.stderr)
        return exc.exit_code


def _set_aside_warnings(mark: int) -> None:
    """After a command that succeeded, the caches it set aside that it did not warn of itself
    (`Workspace.warnings` takes them; not every command prints them), one line each."""
    from lesson_credit.core.base.files import set_aside_notices

    for notice in set_aside_notices(since=mark):
        print(warning_line(safe(notice)), file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
