"""Links that let the type checker and the import linter see the package as it installs:

    python scripts/typecheck_tree.py && mypy && lint-imports

`lesson_credit.core`, `.cli` and `.tui` live at the repository's root (core/, cli/, tui/) and are
mapped by setuptools' package-dir, which an editable install follows through an import hook that
neither mypy nor grimp (lint-imports) reads: they look for lesson_credit/core/ on disk. This links
lesson_credit/core -> ../core (and cli, tui) in the checkout. The links are ignored by git and by
the build (package-dir maps the real folders), so a checkout without them builds the same wheel;
they only serve these two tools. `make_tree(folder)` makes the same package under another folder
(the layering test's, tests/core/test_import_hygiene.py).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("core", "cli", "tui")


def _link(target: Path, link: Path) -> None:
    if link.is_symlink() or link.is_file():
        link.unlink()
    elif link.exists():
        shutil.rmtree(link)
    os.symlink(os.path.relpath(target, link.parent), link)


def link_folders(package: Path = ROOT / "lesson_credit") -> None:
    """`package`/core -> core/ and so on (made afresh)."""
    for name in FOLDERS:
        _link(ROOT / name, package / name)


def make_tree(folder: Path) -> Path:
    """`folder`/lesson_credit: links to the package's __init__.py and folders in the repository."""
    tree = folder / "lesson_credit"
    tree.mkdir(parents=True, exist_ok=True)
    _link(ROOT / "lesson_credit" / "__init__.py", tree / "__init__.py")
    link_folders(tree)
    return tree


if __name__ == "__main__":
    try:
        link_folders()
    except OSError as exc:
        sys.exit(f"typecheck_tree: cannot link core/, cli/ and tui/ under lesson_credit/: {exc}")
