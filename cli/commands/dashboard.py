"""Opening the dashboard: `tui` (also what no command does)."""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from lesson_credit.cli.common import CliError, SubParsers, command, on_a_terminal, open_workspace, why_no_terminal

if TYPE_CHECKING:
    from lesson_credit.core.workspace import Workspace


def cmd_tui(args: argparse.Namespace) -> int:
    if not on_a_terminal():  # Textual would draw on a file or a pipe and wait for keys forever
        raise CliError(
            f"the dashboard needs a terminal on stdin, stdout and stderr, and {why_no_terminal()}: run it in one, "
            "or give a command (lesson-credit --help lists them)"
        )
    from lesson_credit.tui import gc_settings

    gc_settings.start()  # before the engine and the dashboard are imported
    from lesson_credit.core.library.journals import outside_library_allowed
    from lesson_credit.tui.app import run
    from lesson_credit.tui.source import Opening

    outside = outside_library_allowed(None, getattr(args, "allow_outside", False))
    opening = Opening(Path(args.workspace).resolve(), partial(_open, args), outside)
    # the first frame lists the lessons while the dashboard imports the engine and opens the workspace
    # (an error then ends it with one line and its exit code, before anything is written)
    run(opening)
    return 0


def _open(args: argparse.Namespace) -> Workspace:
    ws = open_workspace(args, progress=False, writes=True, one_event=False)  # (the title bar says how far a read is)
    from lesson_credit.core.log.stores import is_local

    if not is_local(ws.log):
        ws.log.size()  # a database that cannot be reached: one line and exit 1
    return ws


def register(sub: SubParsers, common: argparse.ArgumentParser, data: argparse.ArgumentParser) -> None:
    """Add `tui` to `sub`."""
    p = command(
        sub,
        "tui",
        [common],
        "open the dashboard",
        "Open the Textual dashboard on the workspace (the same as giving no command on a terminal). It needs\n"
        "a terminal: with stdin, stdout or stderr redirected it says so and exits 1.",
        "  lesson-credit tui --workspace ~/agent",
    )
    p.set_defaults(func=cmd_tui)
