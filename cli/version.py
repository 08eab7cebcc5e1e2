"""`lesson-credit --version`, looked up only when asked: importlib.metadata scans the installed
distributions (about 80 ms), which every command would pay if the parser asked for it up front."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

DISTRIBUTION = "lesson-credit"
CHECKOUT = Path(__file__).resolve().parents[1]  # the repository's root when cli/ runs from a checkout


def version(checkout: Path = CHECKOUT) -> str:
    """The version of the code that runs. From a checkout (an editable install, or the folder on the
    path), its pyproject.toml's: an editable install's metadata is a copy taken when it was installed,
    and another copy's when the folder is only on the path. Installed, the distribution's metadata."""
    import tomllib  # here: only --version reads pyproject.toml

    try:
        project = tomllib.loads((checkout / "pyproject.toml").read_text(encoding="utf-8"))["project"]
        if project["name"] == DISTRIBUTION:
            return str(project["version"])
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, KeyError, TypeError):
        pass  # not a checkout of ours (installed, cli/ is in site-packages/lesson_credit/)
    from importlib import metadata

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


class VersionAction(argparse.Action):
    """`--version`: prints `lesson-credit X.Y.Z` on stdout and exits 0 (argparse's own version action
    takes the text when the parser is built)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, help=help)

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option: str | None = None
    ) -> NoReturn:
        print(f"{parser.prog} {version()}")
        parser.exit()
