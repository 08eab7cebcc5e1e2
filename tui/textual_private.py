"""Every private Textual name the dashboard uses, in one place, each with why no public API serves.

Nothing else under tui/ may use one (tests/test_house.py checks). The runtime range of textual in
pyproject.toml is the one these were checked against; if a release renames one, the dashboard
fails here, with the name, not deep inside a screen. The tests' own private names are in
tests/support/textual_private.py.
"""

from __future__ import annotations

import asyncio

from textual.app import App
from textual.message import Message
from textual.message_pump import MessagePump


def trim_toasts(app: App[object], keep: int) -> None:
    """Dismiss the oldest toasts on show beyond `keep`, confirmations before errors and warnings.

    Why private: Textual keeps its toasts in `App._notifications`, dismisses one with
    `App._unnotify` and redraws them with `App._refresh_notifications`; the public API can only
    add a toast (`notify`) or dismiss them all (`clear_notifications`)."""
    live = [n for n in app._notifications if not n.has_expired]
    excess = len(live) - keep
    if excess <= 0:
        return
    infos = [n for n in live if n.severity == "information"]
    others = [n for n in live if n.severity != "information"]
    for notification in (infos + others)[:excess]:
        app._unnotify(notification, refresh=False)
    app._refresh_notifications()


def message_loop_task(node: MessagePump) -> asyncio.Task[None] | None:
    """The task running a node's message loop (None before it starts).

    Why private: the key router waits for a node's queue to drain; a node closed with a drain callback
    still queued would stall the keys, and only the loop's task says that the loop has ended."""
    return node._task


def pending_message(app: App[object]) -> Message | None:
    """The message the app's loop has taken out of its queue ahead of the one it runs.

    Why private: Textual's loop takes the next message early (to see whether it replaces the current
    one), and `message_queue_size` does not count it; the key router needs both to know the app's
    queue is really empty."""
    return app._pending_message
