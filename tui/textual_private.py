"""Every private Textual name the dashboard uses, in one place, each with why no public API serves.

Nothing else under tui/ may use one (tests/test_house.py checks). The runtime range of textual in
pyproject.toml is the one these were checked against; if a release renames one, the dashboard
fails here, with the name, not deep inside a screen. The tests' own private names are in
tests/support/textual_private.py.
"""

from __future__ import annotations

from textual.app import App


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
