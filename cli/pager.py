"""An answer taller than the terminal goes through a pager, as git's do.

When stdout is a terminal (its own descriptor, whatever $COLUMNS says) and the command prints text (not --json,
not the dashboard), what it writes on stdout is held until it ends. An answer that fits above the shell's next
prompt (fewer rows than the terminal has, $LINES when set) is then printed as it would have been; a taller one is
handed to the pager: `$LESSON_CREDIT_PAGER`, else `$PAGER`, else `less -FRXd` (a command and its options, split as
a shell splits them, not run by one; `$LESS` is `FRX` for it when unset, as git sets it). `--no-pager`, or an
empty variable, prints every answer as before; a pager that cannot be started does too.

stderr, when it is a terminal too, is held with stdout, so that a warning is never scrolled out of view by the
answer: printed in order with it when the answer is not paged, after the pager ends when it is. A line rewritten
in place (a progress line, `\\r`) is shown as it comes. The command's exit status is its own whatever the pager
does: a pager quit before the end of the answer (`q`) ends it quietly.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from typing import TextIO

DEFAULT_PAGER = ["less", "-FRXd"]  # (-d: no "terminal is not fully functional", waiting for RETURN)
PAGER_VARIABLES = ("LESSON_CREDIT_PAGER", "PAGER")  # the first one set decides (empty: no pager)


def pager_command(environ: dict[str, str] | os._Environ[str] | None = None) -> list[str]:
    """The pager's command line: the first of `PAGER_VARIABLES` set (nothing, when it is empty or cannot be split),
    else `less -FRXd` (-d: a $TERM without a terminfo entry is no warning to press RETURN at), unless $TERM is
    unset or `dumb` (less would warn that the terminal is not fully functional
    and wait for RETURN: nothing then)."""
    import shlex

    environ = os.environ if environ is None else environ
    for name in PAGER_VARIABLES:
        if name in environ:
            try:
                return shlex.split(environ[name])
            except ValueError:  # an unclosed quote: not a command that can be started
                return []
    return list(DEFAULT_PAGER) if environ.get("TERM", "") not in ("", "dumb") else []


def _terminal_fd(stream: TextIO | None) -> int | None:
    """`stream`'s descriptor when it is a terminal (a stream that only says it is one has none)."""
    try:
        fd = stream.fileno() if stream is not None else None
        return fd if fd is not None and os.isatty(fd) else None
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None


def terminal_rows(fd: int) -> int:
    """The terminal's height: $LINES when a positive number, else the terminal's own (0 when it says none)."""
    lines = os.environ.get("LINES", "").strip()
    if lines.isdigit() and int(lines) > 0:
        return int(lines)
    try:
        return os.get_terminal_size(fd).lines
    except OSError:
        return 0


def rows_taken(text: str, columns: int) -> int:
    """How many rows `text` takes on a terminal `columns` wide, a line longer than it wrapping onto the next."""
    from lesson_credit.cli.render import cells

    lines = text[:-1].split("\n") if text.endswith("\n") else text.split("\n")
    return sum(max(1, -(-cells(line) // max(columns, 1))) for line in lines) if text else 0


class Held(io.TextIOBase):
    """A standard stream while the answer is held: each write kept in `chunks` in order, beside the other
    stream's; a line rewritten in place (`\\r`, a progress line on stderr) written through at once. It says what
    the stream under it says (a terminal, its descriptor, its encoding), so a command fits its answer as before."""

    def __init__(self, stream: TextIO, name: str, chunks: list[tuple[str, str]]) -> None:
        self.stream = stream
        self.name = name
        self.chunks = chunks

    def write(self, text: str) -> int:
        if self.name == "stderr" and "\r" in text:
            self.stream.write(text)
            self.stream.flush()
        else:
            self.chunks.append((self.name, text))
        return len(text)

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.stream.encoding

    def flush(self) -> None:  # (held until the command ends)
        pass


@contextlib.contextmanager
def paging(wanted: bool) -> Iterator[None]:
    """While it is entered, stdout (and stderr when it is a terminal too) held when `wanted` and stdout is a
    terminal with a pager to show it; on leaving, the answer printed or paged (the module's docstring)."""
    out, err = sys.stdout, sys.stderr
    fd = _terminal_fd(out) if wanted else None
    command = pager_command() if fd is not None else []
    if fd is None or not command:
        yield
        return
    chunks: list[tuple[str, str]] = []
    sys.stdout = Held(out, "stdout", chunks)
    if _terminal_fd(err) is not None:
        sys.stderr = Held(err, "stderr", chunks)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err
        _show(chunks, out, err, fd, command)


def _show(chunks: list[tuple[str, str]], out: TextIO, err: TextIO, fd: int, command: list[str]) -> None:
    """The held answer: through the pager when taller than the terminal (its stderr after it), else as it was."""
    from lesson_credit.cli.render import terminal_columns

    answer = "".join(text for name, text in chunks if name == "stdout")
    rows = terminal_rows(fd)
    paged = 0 < rows <= rows_taken(answer, terminal_columns()) and _page(answer, out, fd, command)
    with contextlib.suppress(BrokenPipeError):
        for name, text in chunks:
            if name == "stderr" or not paged:
                (out if name == "stdout" else err).write(text)
        out.flush()
        err.flush()


def _page(answer: str, out: TextIO, fd: int, command: list[str]) -> bool:
    """`answer` shown by the pager `command` on the terminal `fd`; False when the pager could not be started (the
    answer is then printed as before). Ctrl-C while it runs is the pager's: this process waits for it to end."""
    import signal
    import subprocess

    env = dict(os.environ)
    env.setdefault("LESS", "FRX")  # (a $PAGER of plain `less`: quit at once when the answer fits after all)
    env.setdefault("LV", "-c")
    out.flush()
    try:
        pager = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=fd, env=env)
    except (OSError, ValueError):  # not found, not executable
        return False
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread
        previous = None
    try:
        assert pager.stdin is not None
        with contextlib.suppress(BrokenPipeError):  # the pager quit before the end (`q`)
            pager.stdin.write(answer.encode(getattr(out, "encoding", None) or "utf-8", "replace"))
        with contextlib.suppress(BrokenPipeError):
            pager.stdin.close()
        pager.wait()
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    return True
