"""An answer taller than the terminal goes through the pager (docs/cli.md): `lesson-credit` run in a
pseudo-terminal of 24 rows and 80 columns, as a person at one runs it, with a pager script that keeps what it was
given; piped, with --json, with --no-pager or an empty pager variable, it prints what it printed before."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

from lesson_credit.cli.pager import pager_command, rows_taken
from tests.support.cli_run import FINISH_LIMIT_S, process_env, run_process
from tests.support.engine_helpers import make_workspace, session

ROWS, COLUMNS = 24, 80
# thirty lessons: status prints a row for each, more than the 24 rows of the terminal by themselves
MANY = {f"l{i:02}.md": ([f"k{i}"], "active") for i in range(30)}
FEW = {f"l{i:02}.md": ([f"k{i}"], "active") for i in range(3)}  # a headline, a table of 3: under 24 rows
MARK = "the pager ran with:"


def _workspace(tmp_path: Path, lessons: dict[str, tuple[list[str], str]], broken: bool = False) -> Path:
    """A workspace with one session of every lesson; `broken`: a log line that cannot be read (status warns)."""
    events: list[object] = [session("s1", 0.5, {path: 1.0 for path in lessons})]
    return make_workspace(tmp_path, lessons, [*events, *(["{broken\n"] if broken else [])])  # type: ignore[list-item]


def _pager(tmp_path: Path, body: str = 'cat > "$1"') -> str:
    """A pager command (a script and its argument, split as a shell would): it runs `body`, then says so on the
    terminal with its arguments."""
    script = tmp_path / "pager.sh"
    script.write_text(f'#!/bin/sh\n{body}\necho "{MARK} $*"\n')
    script.chmod(0o755)
    return f"{script} {tmp_path / 'paged.txt'}"


def _on_terminal(*argv: str, cwd: Path, env: dict[str, str], rows: int = ROWS) -> tuple[int, str]:
    """`lesson-credit ARGV` with stdin, stdout and stderr a pseudo-terminal of `rows` x COLUMNS ($LINES and $COLUMNS
    say so too): its exit status and what the terminal showed, line ends as written. A hang fails the test (a
    generous bound, never a speed assertion)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", rows, COLUMNS, 0, 0))
    environ = {k: v for k, v in process_env(LINES=str(rows), COLUMNS=str(COLUMNS)).items() if k not in ("PAGER",)}
    done = subprocess.Popen(
        [sys.executable, "-m", "lesson_credit.cli.main", *argv],
        cwd=cwd, env={**environ, **env}, stdin=follower, stdout=follower, stderr=follower,
    )  # fmt: skip
    os.close(follower)
    shown = b""
    while True:
        ready, _, _ = select.select([leader], [], [], FINISH_LIMIT_S)
        assert ready, f"no end after {FINISH_LIMIT_S} s: {shown[-500:]!r}"
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # (EIO: every process holding the terminal has ended)
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    return done.wait(timeout=FINISH_LIMIT_S), shown.decode().replace("\r\n", "\n")


def _piped(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The same command with stdout a pipe, 80 columns ($COLUMNS: fitted as on the terminal) and the pager set."""
    return run_process(*argv, cwd=cwd, env={"COLUMNS": str(COLUMNS), "LESSON_CREDIT_PAGER": "false"})


def test_a_tall_answer_goes_through_the_pager_and_its_warning_is_said_after_it(tmp_path: Path) -> None:
    """status on thirty lessons (33 lines) ran off the top of a 24-row terminal, the warning above it too."""
    root = _workspace(tmp_path, MANY, broken=True)
    code, shown = _on_terminal("status", cwd=root, env={"LESSON_CREDIT_PAGER": _pager(tmp_path)})
    piped = _piped("status", cwd=root)
    assert code == 0 == piped.returncode
    paged = (tmp_path / "paged.txt").read_text()
    assert paged == piped.stdout  # the answer whole, as fitted to 80 columns
    assert sum(line.startswith("l") and line.split()[0] in MANY for line in paged.split("\n")) == 30
    assert "l00.md" not in shown  # the terminal got the answer from the pager alone
    warning = piped.stderr.strip()
    assert warning.startswith("warning:") and warning.count("\n") == 0, piped.stderr
    # the warning comes after the pager ended, where the person sees it, not above 33 lines (wrapped at spaces to
    # the terminal's 80 columns: its words in order from where it starts)
    starts = shown.index(" ".join(warning.split()[:3]))
    assert shown.index(f"{MARK} {tmp_path / 'paged.txt'}") < starts, shown
    assert " ".join(warning.split()) in " ".join(shown[starts:].split()), shown


def test_pager_variable_order_and_less_for_LESS(tmp_path: Path) -> None:
    """$LESSON_CREDIT_PAGER wins over $PAGER; $PAGER is used without it; $LESS is FRX for the pager when unset
    (a $PAGER of plain `less` quits at once on a short answer, shows colours, leaves the screen), kept when set."""
    root = _workspace(tmp_path, MANY)
    body = 'cat > "$1"; echo "LESS=$LESS" >> "$1.env"'
    pager = _pager(tmp_path, body)
    code, shown = _on_terminal("status", cwd=root, env={"PAGER": pager, "LESSON_CREDIT_PAGER": "/bin/false"})
    assert code == 0 and MARK not in shown and "l00.md" not in shown  # /bin/false took it (and showed nothing)
    code, shown = _on_terminal("status", cwd=root, env={"PAGER": pager})
    assert code == 0 and MARK in shown
    code, shown = _on_terminal("status", cwd=root, env={"PAGER": pager, "LESS": "-S"})
    assert code == 0 and MARK in shown
    assert (tmp_path / "paged.txt.env").read_text() == "LESS=FRX\nLESS=-S\n"


def test_a_short_answer_json_no_pager_and_an_empty_variable_print_as_before(tmp_path: Path) -> None:
    few = _workspace(tmp_path / "few", FEW)
    many = _workspace(tmp_path / "many", MANY)
    pager = {"LESSON_CREDIT_PAGER": _pager(tmp_path)}
    for argv, root, env in (
        (("status",), few, pager),  # fits: 3 rows and a header
        (("status", "--no-pager"), many, pager),
        (("--no-pager", "status"), many, pager),
        (("status",), many, {"LESSON_CREDIT_PAGER": ""}),
        (("status",), many, {"LESSON_CREDIT_PAGER": "  ", "PAGER": pager["LESSON_CREDIT_PAGER"]}),
        (("status",), many, {"PAGER": ""}),
    ):
        code, shown = _on_terminal(*argv, cwd=root, env=env)
        assert code == 0 and MARK not in shown, (argv, env, shown)
        assert shown == _piped(*argv, cwd=root).stdout, (argv, env)
    code, shown = _on_terminal("status", "--json", cwd=many, env=pager)
    assert code == 0 and MARK not in shown and shown == _piped("status", "--json", cwd=many).stdout
    assert not (tmp_path / "paged.txt").exists()


def test_a_pager_that_cannot_start_leaves_the_answer_printed_as_before(tmp_path: Path) -> None:
    root = _workspace(tmp_path, MANY, broken=True)
    for pager in (str(tmp_path / "no-such-pager"), "'unclosed"):
        code, shown = _on_terminal("status", cwd=root, env={"LESSON_CREDIT_PAGER": pager})
        piped = _piped("status", cwd=root)
        # the warning first, as before (wrapped at spaces to the terminal's 80 columns), then the answer
        warning, answer = shown[: len(shown) - len(piped.stdout)], shown[len(shown) - len(piped.stdout) :]
        assert code == 0 and answer == piped.stdout, (pager, shown)
        assert " ".join(warning.split()) == " ".join(piped.stderr.split()), (pager, shown)
        assert all(len(row) <= 80 for row in warning.splitlines()) and warning.count("\n") > 1, warning


def test_a_pager_quit_early_ends_quietly_with_the_commands_exit_status(tmp_path: Path) -> None:
    """`q` in less before the end: the rest of the answer has nowhere to go. No traceback, no broken-pipe
    line; the command's status (lint's 1 for an unreadable log line and a broken lesson) is the process's."""
    root = _workspace(tmp_path, FEW, broken=True)
    (root / "lessons" / "broken.md").write_text("---\nstatus: [\n---\n")
    piped = _piped("lint", cwd=root)
    assert piped.returncode == 1 and piped.stdout.count("\n") > 8  # two findings of 4 lines or more, a verdict
    for body in ("exec 0<&-", 'head -c 1 > "$1"'):  # closes its stdin unread; reads a character
        pager = _pager(tmp_path, body)
        code, shown = _on_terminal("lint", cwd=root, env={"LESSON_CREDIT_PAGER": pager}, rows=8)
        assert code == 1 and MARK in shown, shown
        assert "Traceback" not in shown and "Broken" not in shown and "Exception" not in shown, shown


def test_piped_the_answer_never_meets_the_pager(tmp_path: Path) -> None:
    root = _workspace(tmp_path, MANY)
    done = run_process("status", cwd=root, env={"LESSON_CREDIT_PAGER": _pager(tmp_path), "LINES": "5"})
    assert done.returncode == 0 and MARK not in done.stdout and "l29.md" in done.stdout
    assert not (tmp_path / "paged.txt").exists()


def test_an_answer_is_paged_when_the_shells_next_prompt_would_push_its_first_line_out(tmp_path: Path) -> None:
    """L lines and the prompt under them take L + 1 rows: a terminal of L + 1 rows shows them all, one of L
    rows does not."""
    root = _workspace(tmp_path, FEW)
    height = _piped("status", cwd=root).stdout.count("\n")  # (each line under 80 columns: a row each)
    pager = {"LESSON_CREDIT_PAGER": _pager(tmp_path)}
    code, shown = _on_terminal("status", cwd=root, env=pager, rows=height + 1)
    assert code == 0 and MARK not in shown and shown.count("\n") == height
    code, shown = _on_terminal("status", cwd=root, env=pager, rows=height)
    assert code == 0 and MARK in shown and (tmp_path / "paged.txt").read_text().count("\n") == height


def test_rows_a_line_takes_and_the_pager_chosen() -> None:
    assert rows_taken("", 80) == 0
    assert rows_taken("a\nb\n\n", 80) == 3  # an empty line takes its row
    assert rows_taken("x" * 80 + "\n", 80) == 1 and rows_taken("x" * 81 + "\n", 80) == 2
    assert rows_taken("\u6f22" * 41, 80) == 2  # 82 cells: a wide character takes two
    # -d: a $TERM without a terminfo entry (xterm-kitty over ssh) made less warn and wait for RETURN
    assert pager_command({"TERM": "xterm-256color"}) == ["less", "-FRXd"]


def test_a_dumb_terminal_gets_no_default_pager() -> None:
    """less on a terminal that says it is dumb (TERM=dumb: an Emacs shell, an agent's harness) or says nothing
    warns "terminal is not fully functional" and waits for RETURN: the command hung there. A pager named is run."""
    assert pager_command({"TERM": "dumb"}) == [] and pager_command({}) == [] and pager_command({"TERM": ""}) == []
    assert pager_command({"TERM": "dumb", "PAGER": "cat"}) == ["cat"]
    assert pager_command({"PAGER": "less -S"}) == ["less", "-S"]
    assert pager_command({"PAGER": "'my pager' -c", "LESS": "x"}) == ["my pager", "-c"]
    assert pager_command({"LESSON_CREDIT_PAGER": "most", "PAGER": "less"}) == ["most"]
    assert pager_command({"LESSON_CREDIT_PAGER": "", "PAGER": "less"}) == []
    assert pager_command({"PAGER": "'unclosed"}) == []
