"""The installed package's layout for the type checker and the import linter:

    python scripts/typecheck_tree.py && mypy
    cd build/typecheck && PYTHONPATH=../.. lint-imports ../../pyproject.toml

`lesson_credit.core`, `.cli` and `.tui` live at the repository's root (core/, cli/, tui/) and are
mapped by setuptools' package-dir, which an editable install follows through an import hook that
neither mypy nor grimp (lint-imports) reads. This makes build/typecheck/lesson_credit (ignored by
git), links to the real folders, where both find the package under its installed name: mypy's
`files` and `mypy_path` point there (pyproject.toml); lint-imports runs from there (its folder comes
first on the path, the repository after it for `bench`).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / "build" / "typecheck" / "lesson_credit"
LINKS = {"__init__.py": "lesson_credit/__init__.py", "core": "core", "cli": "cli", "tui": "tui"}


def make_tree(folder: Path = TREE.parent) -> Path:
    """`folder`/lesson_credit, made afresh: links to the package's files and folders in the repository."""
    tree = folder / "lesson_credit"
    if tree.is_symlink() or tree.is_file():
        tree.unlink()
    elif tree.exists():
        shutil.rmtree(tree)
    tree.mkdir(parents=True)
    for name, target in LINKS.items():
        os.symlink(os.path.relpath(ROOT / target, tree), tree / name)
    return tree


if __name__ == "__main__":
    try:
        make_tree()
    except OSError as exc:
        sys.exit(f"typecheck_tree: cannot link the package's folders under {TREE.parent}: {exc}")
