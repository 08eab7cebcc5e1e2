"""The lesson-credit process: what it sets before it imports the engine (and numpy with it), and what
its exit status is when a command ends in something other than its own result or the project's errors."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Iterator

from lesson_credit.cli.common import EXIT_INTERNAL, json_text
from lesson_credit.cli.render import error_line, safe, warning_line
from lesson_credit.core.base.errors import TemporaryFailure
from lesson_credit.core.base.logged import logged_count

EXIT_INTERRUPTED = 130  # as a shell reports a process ended by SIGINT (128 + 2)

# numpy's OpenBLAS starts one thread per CPU when numpy is imported, and those threads spin before they
# sleep: on the 2-CPU machine `lesson-credit status` on the demo took 0.47 s of CPU, 0.27 s with one
# thread, and an agent's hook pays that on every command. The engine's linear algebra is small (the
# joint fit's 1,000-lesson eigen-decomposition: 458 ms with the threads, 428 ms without, `python -m
# bench.run --only analysis`). A value the user set wins; an empty one is OpenBLAS's "unset" (a count
# of 0: one thread per CPU), so it gets the one thread too.


def limit_blas_threads() -> None:
    """One BLAS thread unless the environment says otherwise; only takes effect before numpy is imported."""
    if not os.environ.get("OPENBLAS_NUM_THREADS", "").strip():
        os.environ["OPENBLAS_NUM_THREADS"] = "1"


@contextlib.contextmanager
def msgspec_without_typing_extensions() -> Iterator[None]:
    """msgspec imported inside this block imports as where typing_extensions is not installed (textual, psycopg
    and mypy install it): msgspec takes only `get_type_hints`, `Required` and `NotRequired` from it, for the
    TypedDicts and dataclasses it decodes, and falls back to Python's `typing` (3.11 has all three) without it.
    The engine decodes msgspec Structs only, whose annotations msgspec resolves itself. typing_extensions'
    import was 20 M instructions of a `record`'s 632 M (3%, callgrind at 10,000 sessions). After the block it
    imports as ever (the dashboard's textual, psycopg); nothing is hidden once either module is loaded."""
    if "msgspec" in sys.modules or "typing_extensions" in sys.modules:
        yield
        return
    sys.modules["typing_extensions"] = None  # type: ignore[assignment]  # (an ImportError, as for no module)
    try:
        yield
    finally:
        if "typing_extensions" in sys.modules and sys.modules["typing_extensions"] is None:
            del sys.modules["typing_extensions"]


def guarded(
    run: Callable[[], int],
    name: str,
    has_stored: Callable[[int], bool] | None = None,
    args: argparse.Namespace | None = None,
) -> int:
    """`run()`'s exit status (`name`: the command, for messages), at the process's boundary: Ctrl-C ends
    it with 130, a reader that went away (`| head`) with 0, no memory for it (a MemoryError; a library
    that could not be mapped under `ulimit -v`) with one line and the error root's temporary failure
    (75: a resource that may be there later, not bad input; once a write command has stored its event,
    `has_stored(the events logged before it)`, a warning and 0: `succeeded`, with `args` the command's), and
    anything else, which no command raises on purpose, with its traceback and EXIT_INTERNAL: a bug, never
    "bad input"."""
    logged = logged_count()
    try:
        return run()
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
    except MemoryError as exc:
        why = f": {safe(str(exc).splitlines()[0])}" if str(exc).strip() else ""  # ours say what needs more
        if has_stored is not None and has_stored(logged):
            return succeeded(f"not enough memory to finish {name}{why}", args)
        print(error_line(f"lesson-credit: not enough memory for {name}{why}", _json(args)), file=sys.stderr)
        return TemporaryFailure.exit_code
    except ImportError as exc:
        if "failed to map segment" not in str(exc) and "cannot allocate memory" not in str(exc).lower():
            return _internal(name)
        if has_stored is not None and has_stored(logged):
            return succeeded(f"not enough memory to finish {name} (a library could not be loaded)", args)
        line = f"lesson-credit: not enough memory for {name} (a library could not be loaded)"
        print(error_line(line, _json(args)), file=sys.stderr)
        return TemporaryFailure.exit_code
    except Exception:  # not one of ours (core/base/errors.py)
        return _internal(name)


def _json(args: argparse.Namespace | None) -> bool:
    """Whether the command was asked for --json: its error lines stay one line for a program (`error_line`)."""
    return bool(getattr(args, "json", False))


def _internal(name: str) -> int:
    import traceback

    traceback.print_exc()
    line = f"lesson-credit: internal error in {name} (a bug: please report it with the traceback above)"
    print(error_line(line), file=sys.stderr)
    return EXIT_INTERNAL


def stored(args: argparse.Namespace, logged: int) -> bool:
    """Whether a write command (`open_workspace(writes=True)`) has stored its event: more events logged
    (core/base/logged.py `logged_count`) than `logged`, the count when it started."""
    return bool(getattr(args, "writes", False)) and logged_count() > logged


def succeeded(why: str, args: argparse.Namespace | None = None) -> int:
    """A write command whose event is stored has succeeded: what failed after it (reading the log back,
    memory for what it prints) is a warning, and the exit status 0; a failure (75, retry later) would
    have a hook retry a record the log already has, and be refused the duplicate. With --json, stdout
    still gets an object (a script parsing it would get nothing): the event is logged, what it did to
    the credit is not known (`read_back` false), and the warning."""
    warning = f"{why} (the command succeeded: its event is logged)"
    print(warning_line(warning), file=sys.stderr)
    if args is not None and getattr(args, "json", False):
        sys.stdout.write(json_text(logged_unread(args, warning)))
    return 0


def logged_unread(args: argparse.Namespace, warning: str) -> dict[str, object]:
    """What --json says of an event stored but not read back: the command, the session it names (the
    whole id once the command resolved it, or the one `select` drew before logging without --session-id;
    None where the command names none, as `import-gptme`),
    that it is logged, and that the credit, the posteriors and the session as logged now are unknown."""
    session_id = getattr(args, "session_id", None)
    return {
        "command": args.command,
        "session_id": session_id if isinstance(session_id, str) else None,
        "logged": True,
        "read_back": False,
        "warnings": [warning],
    }
