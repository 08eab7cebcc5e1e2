"""Choosing lessons for a session: `select`."""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from lesson_credit.cli.common import (
    CliError,
    SubParsers,
    command,
    open_workspace,
    optional_category,
    positive_int,
    print_json,
    seed_arg,
    unit_float,
    warning_lines,
)
from lesson_credit.cli.render import counted, listed, output_width, safe, warning_line, wrap
from lesson_credit.core.analysis.joint import kind_of
from lesson_credit.core.log.stores import is_local

if TYPE_CHECKING:
    from lesson_credit.core.bandit.select import Selection

# core/bandit/policy.py's POLICIES, written out: the parser is built without the engine (a test keeps them equal)
POLICIES = ("seed", "evidence", "uniform", "joint")
SHOWN_KINDS = 5  # kinds of work named when --category names none of them
SHOWN_LEFT_OUT = 5  # lessons named in the summary's note on those the kind of work left out


def _read_context(args: argparse.Namespace) -> str:
    """The context text `select` matches, capped like a journal: a device or an endless pipe is refused."""
    from lesson_credit.core.base.safe_read import JOURNAL_MAX_BYTES, UnsafeFile, read_capped

    try:
        if args.context == "-":
            stdin = getattr(sys.stdin, "buffer", None)  # a text stream without one (tests) is read as text
            raw = stdin.read(JOURNAL_MAX_BYTES + 1) if stdin else sys.stdin.read(JOURNAL_MAX_BYTES + 1).encode()
            if len(raw) > JOURNAL_MAX_BYTES:
                raise CliError(f"context on stdin is larger than {JOURNAL_MAX_BYTES} bytes")
        else:
            raw = read_capped(args.context, JOURNAL_MAX_BYTES)
    except FileNotFoundError:
        raise CliError(f"context file not found: {args.context}") from None
    except UnsafeFile as exc:
        raise CliError(f"context {exc}") from None
    except OSError as exc:
        raise CliError(f"cannot read context {args.context}: {exc.strerror or exc}") from None
    return raw.decode("utf-8", errors="replace")


def cmd_select(args: argparse.Namespace) -> int:
    """`select`; the command line runs it inside `comment_stderr` (cli/main.py), its error line included."""
    return _select(args)


def comment_stderr(json: bool) -> contextlib.AbstractContextManager[object]:
    """While it is entered, the table form's stderr (not `json`'s), when not a terminal, as `#` comments line by line
    (`Comments`): the command line enters it around the whole command and its parsing, so a failed select's one
    line and its usage error are comments too."""
    if json or sys.stderr.isatty():
        return contextlib.nullcontext()
    return contextlib.redirect_stderr(Comments(sys.stderr))


class Comments(io.TextIOBase):
    """A stream writing to `stream` each line that is not a comment as one (`# ` before it): what other parts
    print on stderr while `select` runs (a cache's note, the offline fallback's warning) reaches a hook saving
    stdout and stderr to one file (`2>&1`) as a comment, and `record --lessons-file` reads no comment as an id."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._line_start = True

    def write(self, text: str) -> int:
        out = []
        for piece in text.splitlines(keepends=True):
            out.append(piece if not self._line_start or piece.startswith("#") else "# " + piece)
            self._line_start = piece.endswith(("\n", "\r"))
        self._stream.write("".join(out))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()


def _select(args: argparse.Namespace) -> int:
    from lesson_credit.core.log.store import StoreError

    ws = open_workspace(args, writes=not args.dry_run)
    context = _read_context(args)
    if not context.strip():  # an empty file, a pipe no one wrote to, an unset variable: nothing can match
        where = "on stdin" if args.context == "-" else args.context
        ws.warnings.append(f"the context {where} is empty: no lesson's keywords can match it")
    logged = not args.dry_run
    given = args.session_id is not None  # (else generated: the hint below says to pass it to record)
    if logged and not given:  # the id is drawn here, before the write: what a failure after it names
        from lesson_credit.core.commands import selection_id

        args.session_id = selection_id(None, ws.clock)
    try:
        selection = ws.select(
            context,
            k=args.k,
            seed=args.seed,
            session_id=args.session_id,
            log=not args.dry_run,
            dropout=args.dropout,
            policy=args.policy,
            category=args.category,
        )
        new_kind: str | None = None  # read after the write's outcome is settled: below
    except StoreError as exc:
        if not args.offline_ok or is_local(ws.log):
            raise
        from lesson_credit.core.offline import select_offline

        selection = select_offline(
            ws, context, k=args.k, seed=args.seed, session_id=args.session_id, category=args.category
        )
        logged, new_kind = False, ""
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        why = f"{safe(reason)}; selected from the last known posteriors (not logged, no dropout)"
        print(warning_line(why), file=sys.stderr)
    if new_kind is None:
        try:  # a note only: the selection is logged, so a store failing now must not report it as failed
            new_kind = _new_kind(selection.category, ws.session_categories())
        except StoreError:
            new_kind = ""
    ws.warnings.extend(_unpassable(selection.selected))
    if args.json:
        payload = _selection_json(selection, args.dropout > 0 or bool(selection.withheld), logged)
        if new_kind:  # what the `#` summary says, for a hook that reads the JSON
            payload["warnings"] = [*warning_lines(ws), new_kind.removeprefix("; ")]
        print_json(payload, ws)
    else:
        for lesson_id in selection.selected:
            print(safe(lesson_id))
        width = output_width()  # (stderr's lines fitted as stdout's: $COLUMNS, or a terminal)
        # a dry run's generated id names no session: nothing logged it, a record cannot link to it
        named = f"session {safe(selection.session_id)}: " if logged or given else ""
        summary = (
            f"# {named}{len(selection.selected)} of "
            f"{counted(len(selection.candidates), 'matching lesson')} (seed {selection.seed}"
            + (f", policy {safe(selection.policy)}" if selection.policy else "")
            + (f", category {safe(selection.category)})" if selection.category is not None else ")")
            + _left_out(selection.left_out, selection.category)
            + new_kind
            + ("; --dry-run: nothing logged" if args.dry_run else "")
        )
        print(_comment(summary, width), file=sys.stderr)
        if logged and not given:  # a record links to the selection by this id alone
            generated = safe(selection.session_id)
            hint = f"# no --session-id given: pass --session-id {generated} to record to link it to this selection"
            print(_comment(hint, width), file=sys.stderr)
        for line in warning_lines(ws):  # the log's and library's problems, as every command's; comments too
            print(_comment(f"# warning: {safe(line)}", width), file=sys.stderr)
    return 0


def _unpassable(selected: Sequence[str]) -> list[str]:
    """A warning for each id of `selected` that a hook cannot pass back to `record` (`read_as`: it reads another)."""
    from lesson_credit.core.base.ids import quoted, read_as

    return [
        f"lesson {quoted(lesson_id)}: record reads its id as {quoted(read)}, so a hook cannot pass it back (rename "
        "its file)"
        for lesson_id in selected
        if (read := read_as(lesson_id)) is not None
    ]


def _comment(text: str, width: int | None) -> str:
    """A `# ...` line fitted to `width`, every line it wraps to a comment too: a hook that saves stderr with
    stdout (`2>&1`) hands the file to `record --lessons-file`, which reads what is not a comment as ids."""
    body = wrap(text.removeprefix("# "), None if width is None else max(width - 2, 20))
    return "\n".join("# " + line for line in body.split("\n"))


def _selection_json(selection: Selection, dropout: bool, logged: bool) -> dict[str, object]:
    """What `select --json` prints (`dropout`: with the lessons withheld; `logged`: whether a selection
    event under `session_id` is in the log, for a record to link to: not after --dry-run or offline)."""
    payload: dict[str, object] = {
        "session_id": selection.session_id,
        "logged": logged,
        "selected": list(selection.selected),
        "candidates": list(selection.candidates),
        "propensity": selection.propensity,
        "k": selection.k,
        "seed": selection.seed,
        "policy": selection.policy or None,
        "category": selection.category,
        "left_out": list(selection.left_out),
    }
    if dropout:
        payload["withheld"] = list(selection.withheld)
    return payload


def _new_kind(category: str | None, logged: Sequence[str | None]) -> str:
    """The summary's note when no logged session is of the kind of work `category` (grouped as the
    estimates group kinds: `kind_of`) though some are of others: a new kind, or a typo, that selecting
    would pass over in silence. A log without kinds of work says nothing."""
    kinds = {kind_of(c) for c in set(logged)} - {""}
    if category is None or not kind_of(category) or not kinds or kind_of(category) in kinds:
        return ""
    shown = listed([safe(kind) for kind in sorted(kinds)[:SHOWN_KINDS]], SHOWN_KINDS, total=len(kinds))
    return f"; no session in the log is of kind {safe(category)} (a new kind of work, or a typo? logged: {shown})"


def _left_out(left_out: tuple[str, ...], category: str | None) -> str:
    """The summary's note on the matching lessons the session's kind of work left out, if any."""
    if not left_out or category is None:
        return ""
    shown = listed([safe(lesson_id) for lesson_id in left_out[:SHOWN_LEFT_OUT]], SHOWN_LEFT_OUT, total=len(left_out))
    whose = "its" if len(left_out) == 1 else "their"
    return f"; {len(left_out)} more left out: {whose} match.session_categories do not name {safe(category)} ({shown})"


def register(sub: SubParsers, common: argparse.ArgumentParser, data: argparse.ArgumentParser) -> None:
    """Add this group's subcommands to `sub`."""
    p = command(
        sub,
        "select",
        [common, data],
        "Thompson-sample lessons for a context",
        "Thompson-sample the top k among the active lessons whose keywords or patterns match the\n"
        "context and whose match.session_categories, if any, name the session's kind of work\n"
        "(--category); print the chosen ids one per line (a summary, any warnings and an error's\n"
        "line go to stderr, each line a # comment when not a terminal, as record --lessons-file\n"
        "skips them; a failed select exits non-zero) and log a\n"
        "selection event with each candidate's selection probability (unless --dry-run). A\n"
        "record links to it by its session id: without --session-id the generated one is on\n"
        "stderr (in --json: session_id); pass it to record --session-id.",
        "  lesson-credit select --context task.md --session-id S1 --category code > selected.txt\n"
        "  echo 'fix the git worktree' | lesson-credit select --context - --k 3 --dry-run",
    )
    p.add_argument("--context", required=True, metavar="FILE|-", help="text to match lessons against; - for stdin")
    p.add_argument("--k", type=positive_int, default=None, help="how many lessons, >= 1 (default: config k, 10)")
    p.add_argument(
        "--seed",
        type=seed_arg,
        default=None,
        help="random seed of the draw, in [0, 2**63) (default: a fresh random one)",
    )
    p.add_argument(
        "--session-id",
        default=None,
        metavar="ID",
        help="id to log the selection under; use the same id for `record` (default: time + random suffix, "
        "printed on stderr)",
    )
    p.add_argument(
        "--policy",
        default=None,
        choices=POLICIES,
        help="what to draw from: seed, evidence or uniform, the Beta posteriors under that credit strategy; "
        "joint, the joint estimate's posterior (category baselines + every lesson's effect, fitted once per "
        "log version and cached) (default: [select] policy in config.toml, else joint; after an imported "
        "prior, the credit strategy)",
    )
    p.add_argument(
        "--category",
        type=optional_category,
        default=None,
        metavar="NAME",
        help="the session's kind of work (`record` then takes it from the selection): a lesson whose "
        "match.session_categories name only other kinds is left out (compared case-insensitively; the summary "
        "on stderr and --json's left_out name them), the joint policy draws each lesson's effect in it, and it "
        "is logged, in the spelling the log uses for that kind if it has it (CODE as code: no new spelling) "
        "(default, or empty: the category of config.toml's [categories] whose keywords the context "
        "mentions most, else none: every matching lesson, each with its overall effect); a kind no logged "
        "session has (grouped as the estimates group them: Code is code) is named in the summary and in "
        "--json's warnings, a typo?",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="draw and print as without it, but log no selection event: the summary on stderr names no session "
        '(unless --session-id) and --json says "logged": false (its session_id is no selection a record links to)',
    )
    p.add_argument(
        "--dropout",
        type=unit_float,
        default=0.0,
        metavar="EPSILON",
        help="withhold each chosen lesson with this probability and log the draw to "
        "state/lesson-dropout/<session-id>.jsonl (a randomized trial, as gptme's LESSON_DROPOUT_EPSILON; "
        "default 0: none withheld; a session's earlier trial keeps its coins either way: what it withheld stays out)",
    )
    p.add_argument(
        "--offline-ok",
        action="store_true",
        help="if the database store is unreachable, select from the last known posteriors "
        "(bandit-state.json) without logging, instead of failing",
    )
    p.set_defaults(func=cmd_select, stderr_comments=comment_stderr)
