"""`lesson-credit --version` (docs/cli.md): the version of the code that runs, on stdout, exit 0."""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from lesson_credit.cli.main import main
from lesson_credit.cli.version import version

ROOT = Path(__file__).resolve().parents[2]


def test_version_from_a_checkout_is_its_pyproject(capsys: pytest.CaptureFixture[str]) -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr() == (f"lesson-credit {declared}\n", "")


def test_version_installed_is_the_distributions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # installed, the folder above cli/ (site-packages/lesson_credit/) has no pyproject.toml, or another project's
    asked = []

    def installed(name: str) -> str:
        asked.append(name)
        return "7.8.9"

    monkeypatch.setattr(metadata, "version", installed)
    assert version(tmp_path) == "7.8.9"
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "other"\nversion = "1.0"\n')
    assert version(tmp_path) == "7.8.9"
    (tmp_path / "pyproject.toml").write_text("[project\n")  # not TOML
    assert version(tmp_path) == "7.8.9"
    assert asked == ["lesson-credit"] * 3


def test_version_neither_installed_nor_in_a_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def not_installed(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", not_installed)
    assert version(tmp_path) == "unknown (not installed)"
