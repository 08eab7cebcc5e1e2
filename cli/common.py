"""What every command shares: the refusal it raises, argument types, the workspace it opens, output helpers."""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeAlias

from lesson_credit.cli.render import counted, safe, terminal_columns, warning_line
from lesson_credit.core.base.errors import UserError
from lesson_credit.core.base.gc_pause import gc_paused
from lesson_credit.core.base.numbers import decimal

if TYPE_CHECKING:
    from collections.abc import Callable

    from lesson_credit.core.reader import ReadProgress
    from lesson_credit.core.workspace import Workspace

# what `register(sub, ...)` gets: the subcommands of the top-level parser
SubParsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

EXIT_BAD_INPUT = 1
EXIT_USAGE = 2  # as argparse exits on a usage error
EXIT_INTERNAL = 70  # EX_SOFTWARE: a bug (a builtin exception escaped a command); the traceback is printed


class CliError(UserError):
    """A one-line reason for refusing; exits 1."""


class UsageError(UserError):
    """The command line itself is wrong, found after argparse parsed it (a topic that names no command, a
    parameter out of a simulation's range): a user's error that exits 2 with the command's usage, as
    argparse's own errors do. What a command is given to act on (a reward to log, a session id, a file)
    is bad input (CliError, 1)."""

    exit_code = EXIT_USAGE


_STREAM_ROLES = {
    "stdin": "it reads keys there",
    "stdout": "redirected, the run is a script's",
    "stderr": "the dashboard draws there",
}


def on_a_terminal() -> bool:
    """Whether the dashboard has a terminal: it reads keys on stdin and draws on stderr (Textual's driver),
    and stdout redirected to a file is a script's, not a person's, run."""
    return not not_terminals()


def not_terminals() -> list[str]:
    """The names of the standard streams that are not a terminal."""
    return [name for name in _STREAM_ROLES if not _isatty(getattr(sys, name))]


def why_no_terminal() -> str:
    """Which stream is not a terminal and why the dashboard needs it: "stderr is not one (the dashboard draws
    there)"."""
    names = not_terminals() or list(_STREAM_ROLES)
    if len(names) == 1:
        return f"{names[0]} is not one ({_STREAM_ROLES[names[0]]})"
    return f"{', '.join(names[:-1])} and {names[-1]} are not terminals"


def _isatty(stream: Any) -> bool:
    try:
        return stream is not None and bool(stream.isatty())
    except (OSError, ValueError):  # closed
        return False


def parse_reward(text: str | None) -> float | None:
    """A reward from the command line. Parsed in the command, not by argparse, so that every
    bad reward (non-numeric, NaN, out of range) exits 1 with one line, never a usage dump."""
    if text is None:
        return None
    value = decimal(text)
    if value is None:
        raise CliError(f"reward must be a number in [0, 1], got {text!r}")
    if not 0.0 <= value <= 1.0:
        raise CliError(f"reward must be in [0, 1], got {text!r}")
    return value


def reward_or_word(text: str | None) -> tuple[float | None, str | None]:
    """(reward, None) for a number in [0, 1]; (None, word) for anything that is not a number, to be
    checked against the workspace's gptme outcome words (Workspace.outcome_reward); (None, None) for None."""
    if text is None:
        return None, None
    if decimal(text) is None:
        return None, text
    return parse_reward(text), None


def next_command(args: argparse.Namespace, words: Sequence[str], operands: Sequence[str] = ()) -> str:
    """The `lesson-credit` command line a command's answer names to run next (`words`: the command and its
    options, `option` for each with a value), on what this one ran on: its `-w DIR` when not the current folder,
    the `--store` given on the command line (`''`: the file; `URL` for one holding a password, never shown), then
    `operands` (after `--` when one starts with `-`); quoted for a shell and shown as plain text."""
    from shlex import quote

    from lesson_credit.cli.render import safe

    parts = ["lesson-credit", *words]
    parts += option("--workspace", args.workspace, "-w") if args.workspace != "." else []
    if (store := getattr(args, "store", None)) is not None:
        parts += option("--store", "URL" if _holds_password(store) else store)
    parts += ["--"] if any(operand.startswith("-") for operand in operands) else []
    return safe(" ".join(quote(part) for part in [*parts, *operands]))


def option(name: str, value: str, short: str | None = None) -> list[str]:
    """`name value` (or `short value`) on a command line, `name=value` when the value starts with `-` (read as an
    option else)."""
    return [f"{name}={value}"] if value.startswith("-") else [short or name, value]


def _holds_password(store: str) -> bool:
    """Whether a --store value (a postgresql:// URL or a libpq keyword string) holds a password."""
    from urllib.parse import urlsplit

    if "://" in store:
        try:
            return urlsplit(store).password is not None or "password=" in store
        except ValueError:
            return True  # (not shown when it cannot be read)
    return re.search(r"(?:^|\s)password\s*=", store) is not None


def one_line(value: str | None, what: str) -> str | None:
    """A label (the grader) that the log and tables show on one line."""
    if value is None:
        return None
    if not value.strip():
        raise CliError(f"{what} must not be empty")
    if any(ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F for ch in value):
        raise CliError(f"{what} must be one line without control characters, got {value!r}")
    return value


def resolve_session(ws: Workspace, text: str) -> str:
    """The logged session an id or a unique id prefix names (ambiguous prefixes are refused)."""
    return ws.session_id_of(text)


def unit_float(text: str) -> float:
    value = decimal(text)
    if value is None or not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}")
    return value


def floor_arg(text: str) -> float:
    value = decimal(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"floor must be a number in [0, 1], got {text!r}")
    if not (0.0 <= value <= 1.0):
        raise argparse.ArgumentTypeError(f"floor must be in [0, 1], got {text!r}")
    return value


def decay_arg(text: str) -> float:
    value = decimal(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"decay must be a number in (0, 1], got {text!r}")
    if not (0.0 < value <= 1.0):
        raise argparse.ArgumentTypeError(f"decay must be in (0, 1], got {text!r}")
    return value


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _checked(text: str, check: Callable[[str], object], refused: type[Exception]) -> str:
    """`text` when `check` takes it; what `check` refuses (`refused`) is argparse's usage error (exit 2)."""
    try:
        check(text)
    except refused as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def reward_bound(text: str) -> str:
    """--min-reward / --max-reward of `sessions`: a query's bound, checked as the command line is parsed
    (a usage error, 2); the reward a command logs is data (`parse_reward`, 1)."""
    return _checked(text, parse_reward, CliError)


def sort_arg(text: str) -> str:
    """--sort of `sessions`: `COLUMN`, `COLUMN:asc` or `COLUMN:desc`, checked as the command line is parsed."""
    from lesson_credit.core.query import QueryError, parse_sort

    return _checked(text, parse_sort, QueryError)


def time_arg(text: str) -> str:
    """--since / --until: a relative time (2h) or an ISO date, checked as the command line is parsed; the
    command reads it against its own clock (a relative form is valid whatever now is)."""
    import datetime as dt

    from lesson_credit.core.query import QueryError, parse_time

    return _checked(text, lambda value: parse_time(value, dt.datetime.now(dt.UTC)), QueryError)


def optional_category(text: str) -> str | None:
    """--category of select and record: an empty value (a hook's unset variable) is none, as if not given."""
    return text or None


def seed_arg(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seed must be an integer, got {text!r}") from None
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"seed must be in [0, 2**63), got {text!r}")
    return value


def print_warnings(ws: Workspace) -> None:
    """What a command that succeeded could not do (a derived file), one line each on stderr."""
    for warning in ws.warnings:
        print(warning_line(safe(warning)), file=sys.stderr)


def problem_lines(ws: Workspace) -> list[str]:
    """The log's and the library's problems as the table forms warn of them ("sessions.jsonl line
    N: ..."), the first five of each and then a count."""
    from lesson_credit.core.base.files import StoreError

    lines = []
    try:
        problems = ws.log_problems()
    except StoreError:  # the store went away (select --offline-ok): the command said so already
        problems = []
    lines += [f"{ws.log.name} {problem}" for problem in problems[:5]]
    if len(problems) > 5:
        lines.append(f"{counted(len(problems) - 5, 'more problem')} in {ws.log.name}")
    from lesson_credit.core.library.problem_kinds import KINDS

    lesson_problems = ws.lesson_problems()
    prefix = {kind.kind: kind.label for kind in KINDS}
    lines += [f"{prefix.get(problem.kind, '')}{problem}" for problem in lesson_problems[:5]]
    if len(lesson_problems) > 5:
        lines.append(counted(len(lesson_problems) - 5, "more lesson problem"))
    if ws.config.categories:  # keywords select's category matching does not count, as a lesson's
        from lesson_credit.core.bandit.select import category_problems

        found = category_problems(ws.config.categories)
        lines += [f"{ws.config_path}: [categories] {name!r}: {'; '.join(why)}" for name, why in found.items()]
    return lines


def warning_lines(ws: Workspace) -> list[str]:
    """Every warning a command has for its reader: the log's and library's problems, then what a
    command that succeeded could not do (`ws.warnings`)."""
    return [*problem_lines(ws), *ws.warnings]


def nearest_command(word: str, commands: Iterable[str]) -> str:
    """ "; did you mean 'status'?" for a mistyped command name, or "" when no command is near it."""
    import difflib

    near = difflib.get_close_matches(word, list(commands), n=1)
    return f"; did you mean '{near[0]}'?" if near else ""


def print_json(payload: Any, ws: Workspace | None = None) -> None:
    """`payload` as JSON on stdout. With the workspace `ws`, a top-level "warnings" list carries
    every warning the table form prints on stderr (bad log lines, skipped lessons, derived files),
    so that a hook reading JSON learns of them too (`lint` keeps its own "warnings" count: its
    findings list the same problems)."""
    sys.stdout.write(json_text(payload, ws))


def json_text(payload: Any, ws: Workspace | None = None) -> str:
    """What `print_json` prints."""
    if ws is not None and isinstance(payload, dict) and "warnings" not in payload:
        payload = {**payload, "warnings": warning_lines(ws)}
    # ensure_ascii: no control character (not even U+009B, an 8-bit CSI) reaches the terminal raw
    return json.dumps(payload, indent=2, ensure_ascii=True, allow_nan=False) + "\n"


def workspace_arg(text: str) -> str:
    """--workspace: a folder name; an empty one (`-w ""`, an unset variable) is a usage error, not `.`."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must name a folder, got an empty string")
    return text


def is_workspace(root: Path) -> bool:
    """Whether `root` holds a workspace: a `lessons/` folder, a `gptme.toml`, or a `state/lesson-thompson/`
    folder (the log's, which only a write or a person makes). A hook run from the wrong folder would
    otherwise start a second log there."""
    from lesson_credit.core.workspace import STATE_DIR

    return (root / "lessons").is_dir() or (root / "gptme.toml").exists() or (root / STATE_DIR).is_dir()


def not_a_workspace(root: Path) -> str:
    """One line: `root` is not a workspace, the nearest folder above it that is, and --workspace."""
    root = root.resolve()
    above = next((folder for folder in root.parents if is_workspace(folder)), None)
    found = f"; {above} is one" if above is not None else ""
    return (
        f"{root} is not a lesson-credit workspace (no lessons/, gptme.toml or state/lesson-thompson/){found}: "
        "run from the workspace or pass --workspace DIR"
    )


def open_workspace(
    args: argparse.Namespace,
    *,
    progress: bool = True,
    writes: bool = False,
    one_event: bool = True,
    anywhere: bool = False,
) -> Workspace:
    """The workspace a command works on, its store chosen by `Workspace` (--store, else
    $LESSON_CREDIT_STORE, else config.toml's [store] url, else the JSONL file). `progress`: a long
    read says how far it has come on stderr, when that is a terminal (not for the dashboard, which
    draws the terminal itself). A folder that is not a workspace (`is_workspace`) is refused, whatever the
    command and the store: it has nothing there to read, a write would start a second log, and a read on a
    database would leave its caches there, which made the folder a workspace (`anywhere`: `store pull`, which
    reads the database only and writes the file it is given). A
    write command that logs `one_event` (record, grade, undo) has succeeded once it is stored, whatever fails
    after it (cli/process.py `stored`); not the dashboard (many writes, each reported by its write queue) nor an
    export (what it was asked to write is a file, not the foreign update it logs first)."""
    first = "lesson_credit.core.workspace" not in sys.modules
    with gc_paused():  # the engine's modules (see `_frozen`)
        # numpy first, a few frames deep: imported from inside the engine's imports (24 frames deeper), the
        # bodies of numpy._typing's modules ran at the end of a 16 KB chunk of CPython 3.11's frame stack, and
        # their calls mapped and unmapped a new chunk ~1,500 times (strace: 1,545 munmaps of 16 KB in a `record`,
        # 2 from here; ~1,600 page faults). The engine imports numpy in any case.
        import numpy  # noqa: F401

        from lesson_credit.core.workspace import Workspace

        if first:  # before the collector runs again: its next collection would walk all the imports made
            _frozen()

    args.writes = writes and one_event  # its event stored, it succeeds whatever fails after it (cli/main.py)
    root = Path(args.workspace)
    if not root.is_dir():
        raise CliError(f"workspace {root} is a file, not a folder" if root.exists() else f"workspace not found: {root}")
    if not anywhere and not is_workspace(root):  # before anything is read (or a cache saved, a database opened)
        raise CliError(not_a_workspace(root))
    ws = Workspace(
        root,
        allow_outside_journals=getattr(args, "allow_outside", False),
        store=getattr(args, "store", None),
        agent=getattr(args, "agent", None),
        written_by=getattr(args, "written_by", None),
        **({"clock": args.clock} if getattr(args, "clock", None) is not None else {}),
    )
    if progress and sys.stderr.isatty():  # (with stderr closed, `main` made it /dev/null)
        ws.on_read_progress(ProgressLine(sys.stderr))
    return ws


def _frozen() -> None:
    """Once the engine is imported: what the process holds then (the modules' functions, classes and
    tables, tens of thousands of objects that live as long as it does) is left out of the cyclic
    collector's walks (gc.freeze), which went over it again at each collection of the command's own
    work (with the collector paused during the imports: 4% of a `record`'s instructions at a million
    sessions, callgrind)."""
    import gc

    gc.freeze()


PROGRESS_AFTER_S = 1.0  # a read says how far it has come once it has taken this long
PROGRESS_EVERY_S = 0.25  # and at most this often (a new stage at once)


class ProgressLine:
    """On a terminal, a long read (the first of a big log: 15-25 s at a million sessions) says how far
    it has come on one line of stderr, rewritten in place and wiped when the read ends, before the
    command prints anything. Called by the reader (`Workspace.on_read_progress`) in its own thread:
    it never raises (a terminal that fails ends the line, not the read)."""

    def __init__(
        self, stream: TextIO, clock: Callable[[], float] | None = None, width: Callable[[], int] | None = None
    ) -> None:
        import time

        self.stream = stream
        self.clock = clock or time.monotonic
        self.width = width or self._terminal_width
        self.shown = False
        self.broken = False
        self.last = -math.inf
        self.stage = ""

    def _terminal_width(self) -> int:
        try:
            return os.get_terminal_size(self.stream.fileno()).columns
        except (OSError, ValueError, AttributeError):
            return 80

    def __call__(self, progress: ReadProgress | None) -> None:
        if self.broken:
            return
        if progress is None:
            if self.shown:
                self._write("\r\x1b[K")
                self.shown = False
            return
        now = self.clock()
        if now - progress.since < PROGRESS_AFTER_S:
            return
        if now - self.last < PROGRESS_EVERY_S and progress.stage == self.stage:
            return
        self.last, self.stage = now, progress.stage
        # one row: a line that wraps leaves rows behind that `\r` and the wipe do not reach
        text = f"lesson-credit: {progress.describe()}"[: max(self.width() - 1, 1)]
        self._write(f"\r{text}\x1b[K")
        self.shown = True

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            self.broken = True


def warn_problems(ws: Workspace, quiet: bool = False) -> None:
    """Warnings on stderr, one line each: the log's and library's problems (never blocking a read;
    left out when `quiet`, as with --json, whose "warnings" list carries them), then `ws.warnings`."""
    for line in ws.warnings if quiet else warning_lines(ws):
        print(warning_line(safe(line)), file=sys.stderr)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """`--help` fitted to the terminal: a description's prose is re-filled to its width (it is written
    wrapped at about 90 columns, which an 80-column terminal broke mid-word); an indented line (a list
    item such as a credit strategy) stays a line of its own, wrapped under its indent; the examples are
    printed as written (a command is copied whole). No line breaks at a hyphen (`<session-` / `id>`).
    Its width is `terminal_columns()`'s, as argparse's would be shutil's (not imported: every parser of
    the command line is built with this formatter, so `--version` and a command's start never load it)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, terminal_columns() - 2 if width is None else width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("examples:"):
            return super()._fill_text(text, width, indent)
        out: list[str] = []
        prose: list[str] = []
        for line in [*text.splitlines(), ""]:
            if line and not line[0].isspace():
                prose.append(line)
                continue
            if prose:
                out += self._wrapped(" ".join(prose), width, indent, indent)
                prose = []
            if line.strip():
                lead = indent + line[: len(line) - len(line.lstrip())]
                out += self._wrapped(line.strip(), width, lead, lead + "  ")
            elif out:
                out.append("")
        return "\n".join(out).rstrip("\n")

    @staticmethod
    def _wrapped(text: str, width: int, first: str, rest: str) -> list[str]:
        import textwrap

        return textwrap.wrap(
            text, width, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False, break_long_words=False
        )

    def _split_lines(self, text: str, width: int) -> list[str]:
        import textwrap

        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


STRATEGY_HELP = (  # one per line: replay's description keeps its indented lines (HelpFormatter)
    "\n  seed: alpha += base*w, beta += 1 - base*w (gptme's update with a salience weight);"
    "\n  evidence: alpha += w*base, beta += w*(1 - base) (a weakly mentioned lesson learns less);"
    "\n  uniform: alpha += base, beta += 1 - base (salience ignored, the classic bandit)"
)


SORT_LESSONS = ["mean", "n", "path", "ci_low"]


def command(
    sub: SubParsers, name: str, parents: list[argparse.ArgumentParser], summary: str, description: str, examples: str
) -> argparse.ArgumentParser:
    """A subcommand with a one-line summary (in the command list), a description and examples."""
    return sub.add_parser(
        name,
        parents=parents,
        help=summary,
        description=description,
        epilog="examples:\n" + examples.strip("\n"),
        formatter_class=HelpFormatter,
    )


def summary_lines(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Each command's one-line summary, as the command list shows it."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {choice.dest: str(choice.help) for choice in action._choices_actions}
    return {}


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Each command's parser, in the order of the command list."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}
