"""Fixtures for the engine and CLI tests (helpers live in support/engine_helpers.py so test modules can import them)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from engine_helpers import BASIC_JOURNAL, BASIC_LESSONS, make_workspace


@pytest.fixture(name="make_workspace")
def make_workspace_fixture() -> Callable[..., Path]:
    """The helper itself: make_workspace(tmp_path, lessons=..., events=..., journals=...)."""
    return make_workspace


@pytest.fixture
def basic_ws(tmp_path: Path) -> Path:
    """A workspace with BASIC_LESSONS, one journal (j.txt) and no log yet."""
    return make_workspace(tmp_path, lessons=BASIC_LESSONS, journals={"j.txt": BASIC_JOURNAL})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `long` first (otherwise in collection order): a parallel run then starts them at
    once instead of ending with one worker busy on a long test while the others are done."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)
