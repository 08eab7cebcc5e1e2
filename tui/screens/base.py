"""What every data screen shares: it reloads its view in a worker when the log changes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import ClassVar, TypeVar

from textual import on
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.types import NoActiveAppError
from textual.widget import Widget
from textual.worker import NoActiveWorker, Worker, get_current_worker

from lesson_credit.core.api import LessonCreditError
from lesson_credit.tui.messages import WorkFailed
from lesson_credit.tui.newest import Newest
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.widths import NARROW_BELOW, SHORT_BELOW, WIDE_FROM

T = TypeVar("T")

SIZE_CLASSES = ("-narrow", "-wide", "-short")  # set from the terminal's size (DataScreen.on_resize)
LOADING_DELAY = 0.15  # seconds before a running worker shows a loading indicator

# what a worker may hit and report instead of crashing the app (a builtin ValueError, KeyError, ... is a bug)
EXPECTED_ERRORS = (LessonCreditError, OSError)


def describe_failure(exc: Exception) -> str:
    """One line for the operator: the message of an expected error, the type too for a bug."""
    if isinstance(exc, EXPECTED_ERRORS):
        return str(exc) or type(exc).__name__
    return f"internal error: {type(exc).__name__}: {exc}"


def screen_css(name: str) -> str:
    """A screen's stylesheet (a .tcss file beside this module) as the text of its DEFAULT_CSS."""
    return (Path(__file__).parent / name).read_text(encoding="utf-8")


class DataScreen(Screen[None]):
    """Watches the app's `data_version`: reloads when current, else on resume."""

    # a list whose keys (enter, the filter, a cursor move) read what it loads: keys typed before its
    # first load has landed wait for it in the key router (tui/keys.py), rather than open nothing
    HOLDS_KEYS_UNTIL_LOADED: bool = False
    # the attribute holding the lesson highlighted (or shown) on the screen: `w` opens What-if on it
    LESSON_IN_VIEW: ClassVar[str | None] = None
    # the size classes whose change asks `resized` to rebuild the view
    REBUILD_ON: ClassVar[tuple[str, ...]] = ("-narrow",)

    def __init__(self, source: WorkspaceSource) -> None:
        super().__init__()
        self.source = source
        self._stale = False
        self._ready_for_keys = not self.HOLDS_KEYS_UNTIL_LOADED
        self._loading_timers: dict[int, Timer] = {}
        self._newest = Newest()  # the order its reads started in, against results landing out of it
        self._focus_when_loaded: Widget | None = None  # see focus_from_box
        # the width classes from the terminal's size before the widgets are first styled: set at the first
        # resize instead, they restyled every widget of the screen once more (an 80-column terminal)
        try:
            self._size_classes(self.app.size.width, self.app.size.height, update=False)
        except NoActiveAppError:  # made outside a running app: the first resize sets them
            pass

    @property
    def lesson_in_view(self) -> str | None:
        """The lesson (its path) highlighted or shown on this screen: None for none."""
        lesson = getattr(self, self.LESSON_IN_VIEW) if self.LESSON_IN_VIEW else None
        return lesson if isinstance(lesson, str) else None

    def on_mount(self) -> None:
        # Textual calls every class's on_mount (subclass first): subclasses must not call this one
        # read it first: Textual initialises a reactive on first access and then calls its
        # watchers, which would reload a screen that has not loaded yet
        _ = self.app.data_version  # type: ignore[attr-defined]
        self.watch(self.app, "data_version", self._data_changed, init=False)
        self.reload()

    @property
    def in_view(self) -> bool:
        """The screen on top, or under dialogs only (they let it show). Textual's `is_current` also holds for the
        screen just under any other: the Sessions list under a session's screen re-read every session at each grade
        typed there (a million: a second of the app's CPU a grade, for a list nobody sees until escape)."""
        stack = self.app.screen_stack
        if self not in stack:
            return False
        return all(screen.is_modal for screen in stack[stack.index(self) + 1 :])

    def _data_changed(self) -> None:
        if self.in_view:
            self.reload()
        else:
            self._stale = True

    def on_screen_resume(self) -> None:
        if self._stale:
            self._stale = False
            self.reload()

    def reload(self) -> None:
        """Start the worker that loads this screen's view."""

    class Deferred(Message):
        """A load left its view uncomputed: the screen was no longer shown (it loads when shown again)."""

    @on(Deferred)
    def _deferred(self) -> None:
        if self.in_view:
            self.reload()
        else:
            self._stale = True

    @property
    def keys_held(self) -> bool:
        """True while the key router must hold the keys typed for this screen (tui/keys.py)."""
        return not self._ready_for_keys

    def hold_keys(self) -> None:
        """A key started a load that the keys typed after it read (a new order): hold them until
        `ready_for_keys`, as for the first load."""
        self._ready_for_keys = False

    def ready_for_keys(self) -> None:
        """A load has landed (or failed): hand this screen the keys typed for it (a subclass's `keys_held` may
        still hold them: what it reads may be in this load, so the router looks again each time)."""
        self._ready_for_keys = True
        router = getattr(self.app, "keys", None)
        if router is not None:
            router.wake()

    def _size_classes(self, width: int, height: int, update: bool = True) -> None:
        self.set_class(width < NARROW_BELOW, "-narrow", update=update)
        self.set_class(width >= WIDE_FROM, "-wide", update=update)
        self.set_class(height < SHORT_BELOW, "-short", update=update)

    def on_resize(self) -> None:
        """`-narrow` (an 80-column terminal), `-wide` and `-short` (24 rows) classes for the screen's stylesheet,
        then `resized`. (Textual calls each class's `on_resize`: a subclass overrides `resized` instead.)"""
        was = {name for name in SIZE_CLASSES if self.has_class(name)}
        self._size_classes(self.size.width, self.size.height)
        changed = was ^ {name for name in SIZE_CLASSES if self.has_class(name)}
        if changed:
            self.refresh_bindings()  # a key may be offered at one size only (check_action: Sessions' x)
        self.resized(rebuild=not changed.isdisjoint(self.REBUILD_ON))

    def resized(self, rebuild: bool) -> None:
        """After a resize, the size classes set: `rebuild` when one of REBUILD_ON came or went (the screen
        shows its other layout: short headers, compact panels)."""

    # ---------------------------------------------------------------- loading indicator

    def busy(self, widget: Widget, delay: float = LOADING_DELAY) -> None:
        """Show `widget` as loading if the work takes longer than `delay` (0: at once)."""
        if delay <= 0:
            widget.loading = True
            return
        key = id(widget)
        if key not in self._loading_timers:
            self._loading_timers[key] = self.set_timer(delay, lambda: setattr(widget, "loading", True))

    def done(self, widget: Widget) -> None:
        timer = self._loading_timers.pop(id(widget), None)
        if timer is not None:
            timer.stop()
        widget.loading = False
        router = getattr(self.app, "keys", None)
        if router is not None:
            router.wake()  # the keys the widget binds waited while it loaded (tui/keys.py)
        if self._focus_when_loaded is widget:
            self._focus_when_loaded = None
            if self.focused is None:  # nothing took the focus meanwhile (such as `e`, the note box)
                self.set_focus(widget)

    def focus_from_box(self, widget: Widget) -> None:
        """Leave a text box (enter, escape) for `widget`, at once. Textual gives no focus to a widget that
        shows a loading indicator: then nothing has the focus (the keys typed next act on the screen, none
        goes into the box) until `done` hands it to `widget`."""
        self.set_focus(widget)
        if self.focused is not widget:
            self.set_focus(None)
            self._focus_when_loaded = widget

    def fail(self, exc: Exception) -> None:
        """Report a worker's failure from its thread (the app shows it as a notification)."""
        self.post_message(WorkFailed(describe_failure(exc)))

    def post_result(
        self,
        compute: Callable[[], T],
        message: Callable[[T], Message],
        worker: Worker[object] | None = None,
        choice: object = None,
    ) -> None:
        """From a thread worker: post `message(compute())` to this screen, or report the failure.

        Not when a read of the worker's group that started after this one has had its result shown (tui/newest.py:
        posted after it, on a loaded machine, this one would replace it with what was in force before); nor its
        failure then (nobody waits for that read, and `WorkFailed` lets the keys held for a load go on). `worker`:
        the async worker whose read runs in a thread of its own (Lessons': no worker is current there). Health's
        passes none, and its results are posted as they come: its ctrl+r re-reads the lesson files in its own read,
        whose view alone says the library changed (which makes the other screens reload). `choice`: what the read
        was asked for that a key may change meanwhile (Agreement's threshold, the queue's order, a preview's draft),
        whose result the screen's handler drops once it is no longer the choice in force: results count against
        those of the same choice only (a dropped one must not hide the newer choice's read, numbered before it)."""
        if worker is None:
            try:
                worker = get_current_worker()
            except NoActiveWorker:  # (a read no worker started: posted as it comes)
                worker = None
        number, kind = self._newest.start(), None if worker is None else f"{worker.group}\x00{choice!r}"
        try:
            result = compute()
        except Exception as exc:  # reported, not raised: a worker must not take the app down
            if kind is None:
                self.fail(exc)
            else:  # (not when a newer read's result is shown: nobody waits for this one)
                self.call_later(self._fail_newest, kind, number, exc)
            return
        made = message(result)
        if kind is None:
            self.post_message(made)
        else:  # (checked on the screen's thread, where the results are shown in turn)
            self.call_later(self._post_newest, kind, number, made)

    def _post_newest(self, kind: str, number: int, made: Message) -> None:
        if self._newest.shows(kind, number):
            self.post_message(made)

    def _fail_newest(self, kind: str, number: int, exc: Exception) -> None:
        if not self._newest.superseded(kind, number):
            self.fail(exc)

    @on(WorkFailed)
    def _work_failed(self, event: WorkFailed) -> None:
        for key in list(self._loading_timers):
            self._loading_timers.pop(key).stop()
        for widget in self.query("*"):
            if widget.loading:
                self.done(widget)
        self.ready_for_keys()  # nothing more will load: the keys typed for it go on
        # let it bubble on to the app, which notifies
