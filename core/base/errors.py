"""The error a workspace operation raises for bad input or a state that forbids it."""

from __future__ import annotations


class WorkspaceError(ValueError):
    """Bad input or a state that forbids the operation; the message is one line for the user."""
