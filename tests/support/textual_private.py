"""Every private Textual name the tests use, in one place, each with why no public API serves.

Textual 8.2.8 is pinned in the test extra; if an upgrade renames one of these, the tests fail here
with the name, not somewhere deep in a test.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import App, ScreenStackError
from textual.geometry import Size
from textual.notifications import Notification
from textual.strip import Strip


def screen_lines(app: App[Any]) -> list[Strip]:
    """The current screen as drawn, one Strip per terminal row, with styles.

    Why private: `App.export_screenshot` gives SVG; nothing public returns the composed cells of a
    screen, which footer, title-bar, legend and plot tests compare cell by cell."""
    return app.screen._compositor.render_strips()


def notification_texts(app: App[Any]) -> list[tuple[str, str]]:
    """(title, message) of every notification still on show.

    Why private: Textual keeps its toasts in `App._notifications` and offers no accessor."""
    return [(n.title or "", n.message) for n in app._notifications]


# the character a named key types, for the names tests use
CHARACTERS = {"plus": "+", "minus": "-", "full_stop": ".", "space": " ", "slash": "/", "colon": ":"}


def live_notifications(app: App[Any]) -> list[Notification]:
    """The notifications the app holds, their toasts on show.

    Why private: Textual keeps its toasts in `App._notifications` and offers no accessor."""
    return list(app._notifications)


def toasts_laid_out(app: App[Any]) -> bool:
    """Every notification the app holds is a toast on the screen, laid out (its region has a height).

    Why private: Textual keeps its toasts in `App._notifications`; the rack mounts a `Toast` (a private
    module's widget) for each new one when it next refreshes, and `Toast._notification` is the only tie
    between the two."""
    from textual.widgets._toast import Toast

    if app.screen._layout_required:
        return False
    drawn = {toast._notification.identity: toast.region.height for toast in app.screen.query(Toast)}
    return all(drawn.get(n.identity, 0) > 0 for n in app._notifications if not n.has_expired)


def type_ahead(app: App[Any], *keys: str) -> None:
    """Queue keys the way a terminal delivers fast typing: all at once, with no wait between them.

    Why private: `Pilot.press` waits for the app to go idle after every key, which is exactly what a
    user typing ahead of a busy app does not do; the driver's queue is where a terminal's keys arrive."""
    driver = app._driver
    assert driver is not None
    for key in keys:
        event = events.Key(key, CHARACTERS.get(key, key if len(key) == 1 else None))
        event.set_sender(app)
        driver.send_message(event)


def paste_ahead(app: App[Any], text: str) -> None:
    """Queue a bracketed paste where a terminal's input arrives, behind the keys queued before it.

    Why private: as for `type_ahead`; `App.post_message` would put the paste in the app's own queue,
    which the keys a test queued at the driver may not have reached yet."""
    driver = app._driver
    assert driver is not None
    event = events.Paste(text)
    event.set_sender(app)
    driver.send_message(event)


def count_table_measures(monkeypatch: Any) -> list[int]:
    """Count the DataTable's measurements of cells from now on: a list whose one item is the count.

    Why private: DataTable measures each cell through `textual.widgets._data_table.measure`, the name
    its module imported; nothing public says how often a table measured."""
    from textual.render import measure
    from textual.widgets import _data_table

    calls = [0]

    def counting(console: Any, renderable: Any, default: int, *, container_width: int | None = None) -> int:
        calls[0] += 1
        return measure(console, renderable, default, container_width=container_width)

    monkeypatch.setattr(_data_table, "measure", counting)
    return calls


def type_bytes(app: App[Any], typed: str) -> None:
    """Queue what a terminal sends for `typed` (`"V\\x1b3cy"`: V, Escape, 3, c, y typed in one burst) as
    Textual's terminal parser reads it when it all arrives at once, then the keys it made.

    Why private: the parser is `textual._xterm_parser.XTermParser`; Escape and the character after it,
    read together, become one key (`alt+c`, or `£` for Escape then 3), which no key name given to
    `type_ahead` says came from two keys."""
    from textual._xterm_parser import XTermParser

    parser = XTermParser()
    made = [*parser.feed(typed), *parser.feed("")]
    driver = app._driver
    assert driver is not None
    for event in made:
        event.set_sender(app)
        driver.send_message(event)


def resize_now(app: App[Any], width: int, height: int) -> None:
    """The terminal resized to `width` x `height`, its Resize put in the current screen's queue now, where
    Textual's resize timer puts it when it fires (a key's messages may still be on their way then).

    Why private: `Pilot.resize_terminal` posts the Resize to the app, which hands it on from a timer 1/120 s
    later, after the keys queued with it have settled; a terminal resized while the app is busy has its timer
    fire between a key's cursor move and the message that reports it. The app's and the driver's size
    (`App._size`, the headless driver's `_size`) are what the timer's Resize would have set."""
    size = Size(width, height)
    driver = app._driver
    assert driver is not None
    driver._size = size
    app._size = size
    event = events.Resize(size, size)
    event.set_sender(app)
    app.screen.post_message(event)


def messages_waiting(app: App[Any]) -> int:
    """Messages queued at the app and at every node of its current screen and not handled yet.

    Why private: `message_queue_size` does not count the message a node's loop has taken out of its queue
    ahead of the one it runs (`_pending_message`). A key handed on by the dashboard's key router goes from
    the focused widget to its screen to the app (where its binding runs) one queue at a time: what a test
    waits for is every queue empty, not the CPU seeming idle (`Pilot.pause`), which a loaded machine fakes."""
    try:
        nodes = [app, *app.screen.walk_children(with_self=True)]
    except ScreenStackError:  # the app is closing: no screen, nothing more will be handled
        return 0
    return sum(node.message_queue_size + (node._pending_message is not None) for node in nodes)
