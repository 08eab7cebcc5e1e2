"""Help about the CLI itself: `completion` and `help`."""

from __future__ import annotations

import argparse
import sys

from lesson_credit.cli.common import (
    SubParsers,
    UsageError,
    command,
    nearest_command,
    subcommands,
    workspace_arg,
)

# as every command takes it (the README says so: a wrapper may append it to any command line); these two
# describe the command line and read no workspace
IGNORED_WORKSPACE_HELP = "accepted as every command accepts it; ignored: this command reads no workspace"


def _workspace_accepted(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--workspace", "-w", default=argparse.SUPPRESS, type=workspace_arg, metavar="DIR", help=IGNORED_WORKSPACE_HELP
    )


def cmd_completion(args: argparse.Namespace) -> int:
    import shtab

    sys.stdout.write(shtab.complete(args.parser, shell=args.shell))
    return 0


def cmd_help(args: argparse.Namespace) -> int:
    parser = args.parser
    if args.topic is None:
        parser.print_help()
        return 0
    sub = subcommands(parser)
    if args.topic not in sub:
        near = nearest_command(args.topic, sub)
        raise UsageError(f"unknown command {args.topic!r}{near} (lesson-credit --help lists the commands)")
    sub[args.topic].print_help()
    return 0


def register(sub: SubParsers, common: argparse.ArgumentParser, data: argparse.ArgumentParser) -> None:
    """Add this group's subcommands to `sub`."""
    p = command(
        sub,
        "completion",
        [],
        "print a shell completion script",
        "Print a completion script for bash or zsh (see the README for where to put it).",
        "  mkdir -p ~/.local/share/bash-completion/completions && "
        "lesson-credit completion bash > ~/.local/share/bash-completion/completions/lesson-credit\n"
        "  mkdir -p ~/.zfunc && lesson-credit completion zsh > ~/.zfunc/_lesson-credit  # with fpath+=(~/.zfunc)",
    )
    p.add_argument("shell", choices=["bash", "zsh"], help="the shell to complete for")
    _workspace_accepted(p)
    p.set_defaults(func=cmd_completion)

    p = command(
        sub,
        "help",
        [],
        "describe a command",
        "Print the reference of one command (its --help), or the list of commands.",
        "  lesson-credit help sessions",
    )
    p.add_argument(
        "topic",
        nargs="?",
        default=None,
        metavar="COMMAND",
        help="the command to describe (default: none, the list of commands)",
    )
    _workspace_accepted(p)
    p.set_defaults(func=cmd_help)
