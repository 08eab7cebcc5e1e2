"""The installed package's layout for the type checker and the import linter:

    python scripts/typecheck_tree.py && mypy
    cd build/typecheck && PYTHONPATH=../.. lint-imports --config ../../pyproject.toml

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


def make_tree() -> Path:
    if TREE.is_symlink() or TREE.is_file():
        TREE.unlink()
    elif TREE.exists():
        shutil.rmtree(TREE)
    TREE.mkdir(parents=True)
    for name, target in LINKS.items():
        os.symlink(os.path.relpath(ROOT / target, TREE), TREE / name)
    return TREE


if __name__ == "__main__":
    try:
        make_tree()
    except OSError as exc:
        sys.exit(f"typecheck_tree: cannot link the package's folders under {TREE.parent}: {exc}")
