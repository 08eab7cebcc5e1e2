"""A state file replaced as a crashed save keeps another name in .cache only when .cache is a folder of the
workspace: a .cache linking out of it gets no link (docs/trust.md: such a .cache turns caches off)."""

from __future__ import annotations

import os
from pathlib import Path

from lesson_credit.core.bandit.saving import _set_aside, aside_path


def test_no_aside_link_through_a_cache_linking_out(tmp_path: Path) -> None:
    state, outside = tmp_path / "ws" / "state", tmp_path / "outside"
    state.mkdir(parents=True)
    outside.mkdir()
    (state / ".cache").symlink_to(outside)
    path = state / "bandit-state.json"
    path.write_bytes(b"")
    fd = os.open(path, os.O_RDONLY)
    try:
        _set_aside(fd, path, aside_path(path))
    finally:
        os.close(fd)
    assert list(outside.iterdir()) == []  # before: bandit-state-half-saved, a link to the state file, out there


def test_the_aside_link_is_made_in_a_cache_folder(tmp_path: Path) -> None:
    path = tmp_path / "bandit-state.json"
    path.write_bytes(b"")
    fd = os.open(path, os.O_RDONLY)
    try:
        _set_aside(fd, path, aside_path(path))
    finally:
        os.close(fd)
    assert os.path.samefile(aside_path(path), path)
