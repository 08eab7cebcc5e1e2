"""The package installs from the folders at the repository's root (pyproject.toml's package-dir), with
no symlink: every folder of core/, cli/ and tui/ that is a package is listed, and nothing else."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

REPO = Path(__file__).parents[1]


def test_every_package_folder_is_listed_and_mapped() -> None:
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert setuptools["package-dir"] == {
        "lesson_credit.core": "core",
        "lesson_credit.cli": "cli",
        "lesson_credit.tui": "tui",
    }
    on_disk = {"lesson_credit"} | {
        "lesson_credit." + ".".join(init.parent.relative_to(REPO).parts)
        for top in ("core", "cli", "tui")
        for init in (REPO / top).rglob("__init__.py")
    }
    assert set(setuptools["packages"]) == on_disk
    assert len(setuptools["packages"]) == len(on_disk)  # listed once each


def test_no_symlink_is_tracked() -> None:
    """A checkout without symlinks (core.symlinks=false, Windows without developer mode) builds the
    same wheel: git's mode 120000 is a symlink."""
    listed = subprocess.run(["git", "ls-files", "-s"], cwd=REPO, capture_output=True, text=True)
    if listed.returncode != 0:  # not a git checkout (an unpacked sdist): nothing is tracked
        return
    links = [line.split("\t", 1)[1] for line in listed.stdout.splitlines() if line.startswith("120000 ")]
    assert links == []
