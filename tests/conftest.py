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
