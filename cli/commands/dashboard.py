"""Opening the dashboard: `tui` (also what no command does)."""

from __future__ import annotations

import argparse

from lesson_credit.cli.common import SubParsers, command, open_workspace


def cmd_tui(args: argparse.Namespace) -> int:
    from lesson_credit.tui import gc_settings

    gc_settings.start()  # before the engine and the dashboard are imported
    ws = open_workspace(args, progress=False, writes=True)  # the title bar says how far a read has come
    from lesson_credit.core.log.stores import is_local

    if not is_local(ws.log):
        ws.log.size()  # a database that cannot be reached: one line and exit 1, before the screen opens
    from lesson_credit.tui.app import run

    run(ws)
    return 0


def register(sub: SubParsers, common: argparse.ArgumentParser, data: argparse.ArgumentParser) -> None:
    """Add `tui` to `sub`."""
    p = command(
        sub,
        "tui",
        [common],
        "open the dashboard",
        "Open the Textual dashboard on the workspace (the same as giving no command on a terminal).",
        "  lesson-credit tui --workspace ~/agent",
    )
    p.set_defaults(func=cmd_tui)
