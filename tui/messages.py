"""Messages that travel up to the app (screens and workers tell it what happened)."""

from __future__ import annotations

from textual.message import Message


class LogChanged(Message):
    """The event log grew or changed on disk (this process or another)."""


class WorkspaceWritten(Message):
    """This dashboard appended to the log or rewrote settings: every view is stale."""


class WorkFailed(Message):
    """A worker could not finish; `reason` is one line for the operator."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason
