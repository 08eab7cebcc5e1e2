"""Typed-ahead keys reach the screen and widget they were typed for, in the order they were typed.

Textual hands a key to the focused widget's queue and resolves its (non-priority) bindings
only when the key has bubbled back up to the app, while the app is already handing out the
next keys. A key whose action moves the focus or pushes a screen then sends the keys typed
after it to where the focus *was*: `7 enter` on Sessions opened a session with a draft of 0.7
(the 7 came back to the app after enter had pushed the session), `g 0.37 enter c` left `0.37c`
in the exact-grade box or lost the digits, `/ ID enter enter 3 c` typed `3c` into the filter.

The router keeps Textual's own routing and takes the ordering away from timing: the app hands
on one key at a time, and before it hands on the next it lets everything the previous one set
in motion land:

1. the focused widget's queue, then each ancestor's up to the screen, is drained in turn (a
   callback queued behind what is there, awaited; bottom-up, so what a widget bubbles to its
   parent is queued before the parent is drained): the key's handlers and what they posted
   (an input's `Submitted`, a table's `RowSelected`, a dialog's answer) have run;
2. the app runs what they queued for it (the key's bindings once it bubbled back, focus
   changes, which Textual applies as app callbacks) before the router looks again: the next
   key waits behind them in the app's own queue;
3. repeated until a drain leaves the app's queue empty (at most SETTLE_ROUNDS times).

A screen pushed by the key is drained the same way: its queue starts with its compose,
mount and resume, so once a callback queued behind them has run it is mounted and focused.
No step waits for time: a busy machine only delays keys, never reorders them.

A printable key typed into a text box (Textual's Input stops it there: no binding can see it)
changes nothing but the box's text, so the next printable key for the same box is handed on
without settling: the box's queue keeps them in order, and a 5,000-character paste typed key
by key does not take 5,000 settles. Any other key settles first, so `enter` sees every
character typed before it.

Escape typed at once before a key reaches the app as one key: the terminal sends Escape as the
byte that also starts Alt+key and the other escape sequences, and Textual's parser reads Escape
and the byte after it, when they arrive together, as `alt+c` (Escape then c), or as a symbol
for a digit (`£` for Escape then 3: a macOS Option-key table). `V escape 3 c y` typed in a burst
on a transcript wrote nothing: the transcript saw `£`, which means nothing there, then `c` and
`y`; `e why escape 9 c` on a session wrote `whyªc` into its note and graded nothing. So when
such a key is about to be handed on and nothing on the screen binds it, it is handed on as what
was typed: Escape, then the key (which settles like any other), in a text box too. Escape typed
at once before enter, space, punctuation or a digit was lost or made a symbol in the parser
itself (`\x1b\r` arrived as `enter`, or `^` then `enter` when another Escape followed): the
parser is made to read them as `alt+enter`, `alt+slash`, `alt+3`, ... at once, like a letter
(`keep_escape_before_any_key` in tui/textual_private.py), and they are split the same way. A
symbol typed (`£`) is its own character and stays one.

A screen may define `before_key()`: the router calls it just before it hands the screen a key,
to apply what the screen put off and the key may read (a debounced filter: screens/sortable.py).
And `keys_held`: while it is true the router holds the keys (a list whose first load has not
landed: `enter` would open nothing, a filter would filter nothing); the screen calls `wake()`
when it is ready (screens/base.py), as does every change of screen. A key that only leaves the
screen (an app binding to another screen, `leaving`: `h` for Health; the screen's own `back`,
Escape) is not held: it reads nothing the screen loads, and the keys after it go to the screen it
opens or returns to (held there if that one loads). `ctrl+d` is one of the app's `leaving`: it opens
the question whether to discard the writes not saved yet (tui/writes.py).
A key the focused widget binds itself (a table's `down`) waits while that widget shows a loading
indicator, and the keys after it with it, until the widget has loaded: Textual skips a loading
widget's bindings, and the key did nothing (`] down down` on What-if, the downs typed once the
fold's indicator showed). One handed on before the indicator showed and coming back to the app for
its binding after goes back to the front of the queue (`put_back`).
The app holds them too (`hold`, `release`, a reason each) while a key's action waits for data of the app's own:
`n`, or enter in the jump dialog, typed before the first snapshot (the session ids they need) waits for it
(`LessonCreditApp.after_first_snapshot`); `n` down the Sessions list before the list's order, built in a worker
when the list is read, has landed (`SessionsScreen.after_order`).

A yes/no question (a screen with `asked_at`: tui/screens/confirm.py) is answered only by keys typed
after it appeared: Textual stamps every key with the time it arrived (`event.time`), and the question
with the time it was first drawn. The keys typed before it (`c n 3 c` typed in one burst: the first
`c` asks to replace a grade) wait at the front of the queue, shown in the dialog, while the keys
typed after it are handed on past them; once it is answered they go on to the screen under it. A
`c` typed ahead answered "replace the grade?" before the operator had read it, and `n 3` were
swallowed by the dialog (`n 8 c n 3 c n 9 c`: 0.3 lost, 0.9 written to the wrong session). An answer
no drops them (`drop_typed_before`; the dialog says which): they were typed for what a yes does.
They wait under a screen opened over the question too (ctrl+p's command palette: a priority binding):
handed to its search box, they were lost when it closed.

Two Textual internals are used, through tui/textual_private.py: a node's message-loop task, so that
a node closed with a drain callback in its queue does not stall the keys; and the message the app's
loop has taken out of its queue ahead of time, which the queue's size does not count.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import ScreenStackError
from textual.keys import key_to_character
from textual.widgets import Input

from lesson_credit.tui.textual_private import (
    binds_itself,
    character_key,
    keep_escape_before_any_key,
    message_loop_task,
    pending_message,
)

if TYPE_CHECKING:
    from textual.app import App
    from textual.dom import DOMNode
    from textual.screen import Screen
    from textual.widget import Widget

SETTLE_ROUNDS = 8  # app turns a key may wait for the previous one's effects (each drains the focus chain)

Typed = events.Key | events.Paste
# keys a terminal may report with Alt and no character when typed right after Escape; only these are split
# (a real Alt with an arrow, Home or a function key, `alt+up`, is a key of its own, not Escape then it)
NO_CHARACTER_AFTER_ESCAPE = frozenset({"tab", "backspace", "left_square_bracket", "right_square_bracket"})


class KeyRouter:
    """The app's typed-ahead keys (and pastes), handed on one at a time once the previous one has settled."""

    def __init__(
        self, app: App[Any], deliver: Callable[[events.Event], Awaitable[None]], leaving: frozenset[str] = frozenset()
    ) -> None:
        """`deliver(event)`: Textual's own handling of a key from the terminal (App.on_event); `leaving`:
        the app's actions that open another screen (ctrl+d's `discard_writes` too: its question), which a screen
        holding its keys does not hold."""
        self.app = app
        self._deliver = deliver
        self._leaving = leaving
        self._typed: deque[Typed] = deque()
        self._scheduled = False
        self._routing = False
        self._rounds = 0
        self._typing_into: Widget | None = None  # the box the last key was typed into (see the module doc)
        self._holds: set[str] = set()  # why the app holds the keys (a key's action waits for data): `release`
        keep_escape_before_any_key()  # escape-enter read together is `alt+enter`, not `enter` (see the module doc)

    @property
    def waiting(self) -> int:
        """Keys taken from the terminal and not yet handed on (the one being handed on counts), but
        for those typed before the question on screen, which wait for the operator's answer."""
        held = self._typed_before_question() if self._has_screen() else None
        return len(self._typed) - (held or 0) + int(self._routing or self._scheduled)

    def held_for(self, question: Screen[Any]) -> int:
        """How many keys wait for `question`'s answer: typed before it appeared (all waiting, until it is drawn)."""
        asked_at: float | None = getattr(question, "asked_at", None)
        return sum(1 for event in self._typed if asked_at is None or event.time < asked_at)

    def drop_typed_before(self, asked_at: float | None) -> list[Typed]:
        """Take out the keys typed before a question answered no (they were typed for what a yes
        does): the ones the dialog showed as waiting. Returns them, for the dialog to name."""
        dropped = []
        while self._typed and (asked_at is None or self._typed[0].time < asked_at):
            dropped.append(self._typed.popleft())
        return dropped

    def take(self, event: Typed) -> None:
        """A key or paste from the terminal: queued behind the ones typed before it."""
        self._typed.append(event)
        self._schedule()

    @property
    def held(self) -> bool:
        """The app holds the keys: a key's action waits for data of the app's own (`hold`)."""
        return bool(self._holds)

    def hold(self, reason: str) -> None:
        """Hold the keys for `reason` (the first snapshot, a list's order) until `release(reason)`: each wait its
        own, so one ending does not hand on keys another still holds (`n` typed before the first snapshot, then
        waiting for the list's order)."""
        self._holds.add(reason)

    def release(self, reason: str) -> None:
        """The app no longer holds the keys for `reason`; they go on once nothing holds them."""
        self._holds.discard(reason)
        self.wake()

    def wake(self) -> None:
        """A screen that held the keys is ready for them (or the screen changed): go on."""
        if self._typed:
            self._schedule()

    def _schedule(self) -> None:
        if not self._scheduled and self.app.call_later(self._next):
            self._scheduled = True

    async def _next(self) -> None:
        """One app turn: settle one more round, or hand on the oldest key."""
        self._scheduled = False
        if not self._typed:
            return
        if not self._has_screen():
            self._typed.clear()  # the app is closing: there is nothing left to type into
            return
        event = self._typed[0]
        if not self._may_skip_settling(event):
            await self._drain_focus_chain()
            if self._rounds < SETTLE_ROUNDS and (self._rounds == 0 or not self._app_queue_empty()):
                self._rounds += 1  # let the app run what was queued for it, then look again
                self._schedule()
                return
        self._rounds = 0
        screen = self.app.screen
        if self.held or getattr(screen, "keys_held", False) and not self._leaves(event):
            return  # the screen is loading what the key reads: `wake` goes on once it has
        if self._for_a_loading_widget(event):
            return  # the focused widget's own key, which Textual skips while it loads: `wake` goes on once loaded
        index = self._answerable()
        if index is None:
            return  # every key waiting was typed before the question on screen: the next typed may answer it
        event = self._typed[index] = self._newline_as_enter(self._typed[index])
        split = self._escape_then_key(event)
        if split is not None:
            self._typed[index], event = split[1], split[0]  # Escape now; the key typed with it waits in its place
        else:
            del self._typed[index]
        self._routing = True
        try:
            before_key = getattr(screen, "before_key", None)
            if callable(before_key):
                before_key()
            self._typing_into = self._text_box_for(event)
            await self._deliver(event)
        finally:
            self._routing = False
        if self._typed:
            self._schedule()

    def put_back(self, event: events.Event) -> bool:
        """A key handed on that has come back to the app for its binding: when it is the focused widget's own and
        that widget has shown a loading indicator since it was handed on (the indicator's delay ran out while the
        key went from queue to queue), it goes back to the front of the queue, to wait for the load, and True."""
        if not isinstance(event, events.Key) or not self._has_screen() or not self._for_a_loading_widget(event):
            return False
        again = events.Key(event.key, event.character)
        again.set_sender(self.app)
        again.time = event.time  # typed when it was (a question compares the times)
        self._typed.appendleft(again)
        return True

    @property
    def waiting_for_load(self) -> bool:
        """The next key is one the focused widget binds and waits for its loading indicator to go."""
        return bool(self._typed) and self._has_screen() and self._for_a_loading_widget(self._typed[0])

    def _for_a_loading_widget(self, event: Typed) -> bool:
        """`event` is a key of the focused widget's own (a table's `down`) while it shows a loading indicator:
        Textual skips that widget's bindings then, and the key did nothing (`] down down` on What-if: the downs
        typed once the fold's indicator showed were lost). It waits, and the keys after it, until the widget
        has loaded (screens/base.py: `done` wakes the router)."""
        if not isinstance(event, events.Key):
            return False
        focused = self.app.screen.focused  # (`App.focused` is None while the focused widget loads)
        return focused is not None and focused.loading and binds_itself(focused, event.aliases)

    # ---------------------------------------------------------------- a question on screen

    def _question(self) -> Screen[Any] | None:
        """The topmost question on the stack: on screen, or under a screen opened over it (the command
        palette, which a priority binding opens anywhere): the keys typed before it wait for its answer."""
        return next((s for s in reversed(self.app.screen_stack) if hasattr(s, "asked_at")), None)

    def _typed_before_question(self) -> int | None:
        """How many of the keys waiting (at the front) were typed before the question on the stack appeared:
        all of them until it has been drawn; None when no question is on the stack."""
        screen = self._question()
        if screen is None:
            return None
        asked_at: float | None = getattr(screen, "asked_at", None)  # None: not drawn yet
        if asked_at is None:
            return len(self._typed)
        return next((i for i, event in enumerate(self._typed) if event.time >= asked_at), len(self._typed))

    def _answerable(self) -> int | None:
        """Where the next key to hand on is in the queue: the first, or on a question the first typed
        after it appeared (the dialog is told which keys wait for it); None: none may go yet."""
        before = self._typed_before_question()
        if before is None:
            return 0
        show = getattr(self._question(), "show_typed_ahead", None)
        if callable(show):
            show([self._typed[i] for i in range(before)])
        return before if before < len(self._typed) else None

    def _newline_as_enter(self, event: Typed) -> Typed:
        """Enter typed while the dashboard starts, before it sets the terminal raw, reaches it as a newline
        (the terminal's line discipline turns a carriage return into one), which Textual reads as ctrl+j:
        when nothing on the screen binds ctrl+j, it is the Enter it was typed as."""
        if not isinstance(event, events.Key) or event.key != "ctrl+j":
            return event
        if any(key in self.app.screen.active_bindings for key in event.aliases):
            return event
        enter = events.Key("enter", "\r")
        enter.set_sender(self.app)
        enter.time = event.time  # typed when the newline was (a question compares the times)
        return enter

    def _leaves(self, event: Typed) -> bool:
        """`event` would run one of the app's `leaving` actions, as it would once the screen has loaded (no
        text box has the focus and nothing on the screen binds the key before the app), or the screen's own
        `back` (Escape: it reads nothing the screen loads; it waited for a What-if fold to land)."""
        if not isinstance(event, events.Key) or isinstance(self.app.focused, Input):
            return False
        bindings = self.app.screen.active_bindings
        active = next((bindings[key] for key in event.aliases if key in bindings), None)
        if active is None or not active.enabled:
            return False
        action = active.binding.action
        return action in self._leaving if active.node is self.app else action == "back"

    # ---------------------------------------------------------------- Escape typed with a key

    def _escape_then_key(self, event: Typed) -> tuple[events.Key, events.Key] | None:
        """Escape and the key typed with it, when `event` is both as the terminal's parser read them and
        nothing on the screen binds it (see the module doc); None when it is a key of its own."""
        split = escape_and_key(event)
        if split is None or not isinstance(event, events.Key):
            return None
        if any(alias in self.app.screen.active_bindings for alias in event.aliases):
            return None
        for key in split:
            key.set_sender(self.app)
        return split

    # ---------------------------------------------------------------- settling

    def _text_box_for(self, event: Typed) -> Widget | None:
        """The focused text box when `event` is a printable key it will take as text, else None."""
        if not isinstance(event, events.Key) or not event.is_printable:
            return None
        focused = self.app.focused
        return focused if isinstance(focused, Input) else None

    def _may_skip_settling(self, event: Typed) -> bool:
        box = self._typing_into
        return box is not None and self._text_box_for(event) is box

    def _has_screen(self) -> bool:
        return bool(self.app.screen_stack)

    def _app_queue_empty(self) -> bool:
        """Nothing waits in the app's queue: Textual's loop takes the message after the one it runs
        out of the queue early (to see whether one replaces the other), so that one counts too."""
        return self.app.message_queue_size == 0 and pending_message(self.app) is None

    async def _drain_focus_chain(self) -> None:
        """Drain the focused widget's queue, then each ancestor's up to the screen (bottom-up)."""
        try:
            screen = self.app.screen
        except ScreenStackError:  # the app is closing: nothing to drain
            return
        node: DOMNode = screen.focused or screen
        chain = [n for n in node.ancestors_with_self if n is not self.app]
        for pump in chain:
            await self._drain(pump)

    async def _drain(self, node: DOMNode) -> None:
        """Until every message queued at `node` now has been handled (or the node has closed)."""
        loop = asyncio.get_running_loop()
        drained: asyncio.Future[None] = loop.create_future()

        def done(*_: object) -> None:
            if not drained.done():
                drained.set_result(None)

        if not node.call_later(done):
            return  # closing or closed: nothing will be handled there
        task = message_loop_task(node)
        if task is not None:
            if task.done():
                return
            task.add_done_callback(done)
        try:
            await drained
        finally:
            if task is not None:
                task.remove_done_callback(done)


def escape_and_key(event: Typed) -> tuple[events.Key, events.Key] | None:
    """Escape and the key typed with it, when the terminal's parser read the two as one key (`alt+n`: see the
    module doc), each stamped with the time they arrived; None for a key typed alone. The dashboard binds no
    Alt+key, so a dialog naming the keys typed ahead names both (`escape n`), as the router hands them on."""
    if not isinstance(event, events.Key) or not event.key.startswith("alt+"):
        return None
    character = event.character if event.character and len(event.character) == 1 else None
    last = event.key.rsplit("+", 1)[1]
    typed_key = event.key.removeprefix("alt+")
    key: events.Key | None
    if len(typed_key) > 1 and character is not None and not typed_key.startswith("shift+"):
        key = events.Key(typed_key, character)  # a named key typed after Escape: enter, slash, ctrl+q, ...
    elif typed_key in NO_CHARACTER_AFTER_ESCAPE:  # one reported with no character: alt+tab, alt+]
        key = events.Key(typed_key, key_to_character(typed_key))
    else:
        typed = character or (last if len(last) == 1 else None)
        if typed is not None and "shift+" in event.key:
            typed = typed.upper()
        key = character_key(typed) if typed is not None else None
    if key is None:
        return None
    escape = events.Key("escape", "\x1b")
    for split in (escape, key):
        split.time = event.time  # typed when the two arrived (a question compares the times)
    return escape, key
