"""How many events this process has stored: a write command that stored its event has succeeded, whatever
fails after it (cli/process.py). A module of its own, importing nothing: the command line reads it before
any command (and the dashboard's first frame) imports the engine."""

from __future__ import annotations

_LOGGED = [0]  # events this process appended to an event store (`note_logged`)


def note_logged() -> None:
    """An event is in the store, appended and committed (fsynced, or the INSERT's commit confirmed)."""
    _LOGGED[0] += 1


def logged_count() -> int:
    """How many events this process has stored so far: a command that stored its event has succeeded,
    whatever fails after it (cli/process.py says so, exit 0, instead of a failure)."""
    return _LOGGED[0]
