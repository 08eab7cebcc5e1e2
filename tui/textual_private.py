"""Every private Textual name the dashboard uses, in one place, each with why no public API serves.

Nothing else under tui/ may use one (tests/test_house.py checks). The runtime range of textual in
pyproject.toml is the one these were checked against; if a release renames one, the dashboard
fails here, with the name, not deep inside a screen. The tests' own private names are in
tests/support/textual_private.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual import events
from textual.app import App
from textual.dom import DOMNode
from textual.message import Message
from textual.message_pump import MessagePump
from textual.notifications import Notification
from textual.widgets import DataTable
from textual.widgets.data_table import CellDoesNotExist, ColumnKey, RowKey


def trim_toasts(app: App[object], keep: int) -> None:
    """Dismiss a toast on show that a newer one repeats (the same title, message and severity: `u u u` with
    nothing to undo says it once), then the oldest beyond `keep`, confirmations before errors and warnings.

    Why private: Textual keeps its toasts in `App._notifications`, dismisses one with
    `App._unnotify` and redraws them with `App._refresh_notifications`; the public API can only
    add a toast (`notify`) or dismiss them all (`clear_notifications`). A toast's widget is `Toast` in a
    `ToastHolder` (textual.widgets._toast), which the rack leaves behind (`_remove_toasts`)."""
    live = [n for n in app._notifications if not n.has_expired]
    newest = {(n.title, n.message, n.severity): n for n in live}  # (the latest of each wins)
    repeated = [n for n in live if newest[(n.title, n.message, n.severity)] is not n]
    live = [n for n in live if newest[(n.title, n.message, n.severity)] is n]
    excess = max(0, len(live) - keep)
    if not repeated and not excess:
        return
    infos = [n for n in live if n.severity == "information"]
    others = [n for n in live if n.severity != "information"]
    dropped = repeated + (infos + others)[:excess]
    for notification in dropped:
        app._unnotify(notification, refresh=False)
    _remove_toasts(app, {n.identity for n in dropped})
    app._refresh_notifications()


def withdraw_toasts(app: App[Any], said: set[tuple[str, str]]) -> None:
    """Dismiss the warnings on show whose (title, message) is one of `said`: a write's "not saved yet", once it is
    saved, discarded, or said again for another reason.

    Why private: as `trim_toasts`'s (`App._notifications`, `App._unnotify`, `App._refresh_notifications`)."""
    dropped = [n for n in app._notifications if n.severity == "warning" and (n.title, n.message) in said]
    if not dropped:
        return
    for notification in dropped:
        app._unnotify(notification, refresh=False)
    _remove_toasts(app, {n.identity for n in dropped})
    app._refresh_notifications()


def _remove_toasts(app: App[object], identities: set[str] | None = None) -> None:
    """The toasts of these notifications (None: all) off every screen, each with the `ToastHolder` around it.
    Textual's rack drops a toast the app no longer holds but keeps its holder (the toast's own expiry removes
    both), which drew the toasts shown after it a line lower, under an empty one."""
    from textual.widgets._toast import Toast, ToastHolder

    for screen in app.screen_stack:
        for toast in screen.query(Toast):
            if identities is None or toast._notification.identity in identities:
                (toast.parent if isinstance(toast.parent, ToastHolder) else toast).remove()


def take_toasts(app: App[object]) -> list[Notification]:
    """The toasts on show (not yet expired), in the order raised, taken off the app and every screen: their time
    no longer runs.

    Why private: Textual keeps its toasts in `App._notifications`; the public API can only add a toast or
    dismiss them all (`clear_notifications`, used here), not read them; their widgets go as in `trim_toasts`."""
    live = [n for n in app._notifications if not n.has_expired]
    app.clear_notifications()
    _remove_toasts(app)
    return live


def binds_itself(node: DOMNode, keys: list[str]) -> bool:
    """`node`'s own bindings (its class's BINDINGS, not its ancestors') take one of `keys`.

    Why private: Textual keeps a node's bindings in `DOMNode._bindings`; the public `active_bindings` leaves
    out a focused widget that shows a loading indicator, which is the widget the key router asks about."""
    return any(key in node._bindings.key_to_bindings for key in keys)


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


def skip_idle_measure(table: DataTable[Any], row_key: RowKey) -> None:
    """Tell the table that a row it was just given needs no measuring when it is next idle.

    Why private: DataTable measures every new row's cells in its idle pass (`_new_rows`, read by
    `_update_dimensions`), a second time for rows whose widths the caller has already taken (ThemedTable
    does, as it adds them): 0.2 ms a row, 40 ms of event loop a batch of 200, with no public way to
    say so. The virtual size is still recomputed (that pass reads every row, not `_new_rows`)."""
    table._new_rows.discard(row_key)


def paint_count(table: DataTable[Any]) -> int:
    """The table's update count, for `keep_painted_lines` (why private: see there)."""
    return table._update_count


def keep_painted_lines(table: DataTable[Any], update_count: int) -> None:
    """Rows were just added below every other row, and widened no column: the lines already painted
    stay as they are, so their caches stay valid (the row offsets do not: cleared).

    Why private: DataTable keys every painted line, row and cell by `_update_count`, which `add_row`
    bumps: each batch of a fill repainted every visible line (41 lines of a 3,000-lesson table: 40-170
    ms of event loop a batch, 15 batches). Setting the count back to its value before the batch is safe
    because nothing is painted during the batch: no cache entry was made with the counts it skipped."""
    table._update_count = update_count
    table._offset_cache.clear()


def replace_cells(table: DataTable[Any], cells: list[tuple[RowKey, ColumnKey, Text]]) -> None:
    """Textual's `update_cell` (without update_width) for many cells at once: one repaint, not one each.

    Why private: `update_cell` clears the table's six render caches and asks for a repaint per cell,
    with no public way to replace many; the 3,000 interval cells of a big library, set one by one,
    held the event loop 0.15-0.5 s. Same checks, same effect, done once."""
    for row_key, column_key, _ in cells:
        if row_key not in table._row_locations or column_key not in table._column_locations:
            raise CellDoesNotExist(f"No cell exists for row_key={row_key!r}, column_key={column_key!r}.")
    for row_key, column_key, value in cells:
        table._data[row_key][column_key] = value
    table._update_count += 1
    table._clear_caches()
    table.refresh()


def refresh_scrollbars(table: DataTable[Any]) -> None:
    """Decide again whether the table's scrollbars show, from its virtual size as it is now.

    Why private: Textual decides it (`Widget._refresh_scrollbars`) when a layout finds the widget's size,
    virtual size or container size changed since the last one, comparing the virtual size the layout
    measured with the widget's own, which its idle pass has already set: a table as tall as its rows and a
    sideways scrollbar whose columns shrank to fit kept the scrollbar (and its blank row), its size unchanged."""
    table._refresh_scrollbars()


BATCH_WAIT_S = 0.01  # how often `after_shown` looks again while the app holds its repaints


def after_shown(node: DOMNode, callback: Callable[[], object]) -> None:
    """`callback()` after the next refresh that the screen can show: Textual's `call_after_refresh`,
    waiting first while the app holds its repaints; dropped if `node` left its screen meanwhile, or is being
    removed (`_leaving`).

    Why private: while `App._batch_count` is set (Textual's start-up holds it until its mount and
    ready callbacks have run) a refresh draws nothing, yet runs the callbacks `call_after_refresh`
    queued. A first Lessons view read before that ended had the work that follows the first frame
    (the intervals' scipy import, the top-k estimate, the joint fit, the plot's import) start before
    any frame was shown: four threads holding the GIL while the UI thread painted the rows."""

    def check() -> None:
        if not node.is_attached or _leaving(node):  # taken off its screen before the refresh (Textual runs it
            return  # all the same), or on its way off: a screen closes part by part, running its callbacks
        if node.app._batch_count:
            node.set_timer(BATCH_WAIT_S, lambda: node.call_after_refresh(check))
        else:
            callback()

    node.call_after_refresh(check)


def _leaving(node: DOMNode) -> bool:
    """Whether `node` is being removed: Textual marks a node and everything under it when it starts to remove
    it (`_pruning`), then closes each (`_closing`, `_closed`); a screen popped keeps running its callbacks
    meanwhile, while its widgets go one by one (the session screen's `#journal` already gone)."""
    return bool(node._pruning or node._closing or node._closed)


ESCAPE = "\x1b"
SEQUENCE_STARTS = "[O]P" + ESCAPE  # after Escape, these begin a longer sequence (CSI, SS3, OSC, DCS) or a new one


def keep_escape_before_any_key() -> None:
    """Escape typed at once before another key reaches the key router as `alt+` that key (`alt+enter`,
    `alt+slash`, as `alt+c` for a letter), read as soon as the two arrive, so the router can hand on
    Escape, then the key.

    Why private: the parser is `textual._xterm_parser.XTermParser`. After Escape it reads on until what it
    has makes a key (`_sequence_to_key_events` yields one), a pause of ESCDELAY, or another Escape. Escape
    and a character that make no known sequence made no key: it read on, through keys typed after them,
    and at a pause read the character again with `alt=True`, which marks only a letter or a digit
    (`\\x1b\\r` came out as `enter`, the Escape lost); at another Escape it made the first one a `^`
    (`\\x1b\\r6c\\x1b`: `^`, enter, 6, c). Escape and a character that cannot begin a longer sequence
    (not `[`, `O`, `]`, `P`) are now that character with Alt, at once. So is Escape before a digit, `-` or `=`,
    which Textual's table (`ANSI_SEQUENCES_KEYS`, a macOS Option-key layout) read as a symbol (`\\x1b3` as `£`,
    `\\x1b9` as `ª`): a symbol typed is its own character, never Escape before another, so `e why escape 9 c` in
    the note box no longer wrote `whyªc` into it. Once per process."""
    from textual._ansi_sequences import ANSI_SEQUENCES_KEYS
    from textual._xterm_parser import XTermParser

    original = XTermParser._sequence_to_key_events
    if getattr(original, "keeps_escape", False):
        return
    as_symbols = {
        sequence
        for sequence, symbol in ANSI_SEQUENCES_KEYS.items()
        if len(sequence) == 2 and sequence[0] == ESCAPE and isinstance(symbol, str) and len(symbol) == 1
    }

    def sequence_to_key_events(self: XTermParser, sequence: str, alt: bool = False) -> Any:
        if sequence in as_symbols:
            yield from sequence_to_key_events(self, sequence[1], alt=True)
            return
        made = False
        for key in original(self, sequence, alt):
            made = True
            if alt and len(sequence) == 1 and not key.key.startswith("alt+") and key.key != "escape":
                key = events.Key(f"alt+{key.key}", key.character)
            yield key
        if not made and len(sequence) == 2 and sequence[0] == ESCAPE and sequence[1] not in SEQUENCE_STARTS:
            yield from sequence_to_key_events(self, sequence[1], alt=True)

    sequence_to_key_events.keeps_escape = True  # type: ignore[attr-defined]
    XTermParser._sequence_to_key_events = sequence_to_key_events  # type: ignore[method-assign]


def character_key(character: str) -> events.Key:
    """The key event a terminal's parser makes of one typed character (`-` is `minus`, `3` is `3`).

    Why private: the names come from `textual.keys._character_to_key` and `KEY_NAME_REPLACEMENTS`, as in
    Textual's parser; the key router (tui/keys.py) makes the key that followed an Escape typed with it."""
    from textual.keys import KEY_NAME_REPLACEMENTS, _character_to_key

    name = _character_to_key(character)
    return events.Key(KEY_NAME_REPLACEMENTS.get(name, name), character)


def event_clock() -> float:
    """Now, on the clock Textual stamps its events with (`event.time`): a question compares the time its
    keys were typed with the time it appeared (tui/keys.py).

    Why private: the clock is `textual._time.get_time` (monotonic, or perf_counter on Windows); nothing
    public reads it but a new message's `time`."""
    from textual._time import get_time

    return get_time()
