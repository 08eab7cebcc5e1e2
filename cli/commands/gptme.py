"""gptme's bandit-state.json: `import-gptme` and `export-gptme`."""

from __future__ import annotations

import argparse
from pathlib import Path

from lesson_credit.cli.common import (
    SubParsers,
    command,
    open_workspace,
    print_json,
    print_warnings,
)
from lesson_credit.cli.render import counted, output_width, safe, wrap


def cmd_import_gptme(args: argparse.Namespace) -> int:
    ws = open_workspace(args, writes=True)
    report = ws.import_gptme(Path(args.path))
    print_warnings(ws)
    if args.json:
        print_json(
            {
                "imported": len(report.arms) if report.skipped is None else 0,
                "skipped": report.skipped,
                "arms": [
                    {
                        "source": a.source_id,
                        "path": a.lesson_id,
                        "alpha": a.alpha,
                        "beta": a.beta,
                        "n": a.n,
                        "matched": a.matched,
                    }
                    for a in report.arms
                ],
                "unmatched": [a.source_id for a in report.unmatched],
            },
            ws,
        )
        return 0
    if report.skipped is not None:
        print(wrap(safe(report.skipped), output_width()))  # (prose: fitted as the other commands' is)
        return 0
    print(f"imported {counted(len(report.arms), 'arm')} from {safe(report.path)} as a prior event")
    for arm in report.unmatched:
        print(f"  no lesson in the library for {safe(arm.source_id)!r} (kept as {safe(arm.lesson_id)!r})")
    return 0


def cmd_export_gptme(args: argparse.Namespace) -> int:
    ws = open_workspace(args, writes=True, one_event=False)  # (an export to another file is logged)
    target = ws.export_gptme(args.path)  # the text: a trailing "/" means a folder
    print_warnings(ws)
    if args.json:
        print_json({"wrote": str(target), "logged": target.resolve() != ws.state_path.resolve()}, ws)
        return 0
    print(f"wrote {safe(target)}")
    return 0


def register(sub: SubParsers, common: argparse.ArgumentParser, data: argparse.ArgumentParser) -> None:
    """Add this group's subcommands to `sub`."""
    p = command(
        sub,
        "import-gptme",
        [common, data],
        "log a gptme bandit-state.json as a prior",
        "Log an existing gptme-sessions bandit-state.json as a prior event, its arms mapped to\n"
        "library ids. A file whose evidence is in the log already (the workspace's own, a file of\n"
        "ours that agrees with the log, priors imported before) is skipped with one line; of a file\n"
        "export-gptme wrote, or a copy of the workspace's own, only what gptme's bandit added since\n"
        "is logged (as increments); such a file changed otherwise (a number that went down, alpha\n"
        "or beta moved with no selection added: each update of gptme's adds one) is refused with one\n"
        "line, nothing logged.",
        "  lesson-credit import-gptme ~/agent/state/lesson-thompson/bandit-state.json",
    )
    p.add_argument("path", metavar="PATH", help="the bandit-state.json to import")
    p.set_defaults(func=cmd_import_gptme)

    p = command(
        sub,
        "export-gptme",
        [common, data],
        "write posteriors as a gptme bandit-state.json",
        "Write the current posteriors in the shape gptme-sessions loads (six keys per arm). An export\n"
        "to a file other than the workspace's own is logged (the numbers it wrote), so that\n"
        "import-gptme of that file later logs only what gptme's bandit added to it.",
        "  lesson-credit export-gptme ~/agent/state/lesson-thompson/",
    )
    p.add_argument(
        "path",
        metavar="PATH",
        help="a new file, a gptme bandit-state.json to replace (no other file is replaced; one holding "
        "sessions of gptme's bandit the log has not is refused until import-gptme logs them), or a folder to "
        "write bandit-state.json in",
    )
    p.set_defaults(func=cmd_export_gptme)
