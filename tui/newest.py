"""Reads whose results may land out of order: a screen shows the result of the read that started last among those
landed, and never one older than a result it has shown.

A screen reloads in a thread each time the log changes; on a loaded machine the threads run late, and an older
read's result may be posted after a newer one's, which it would replace with what was in force before. Dropping a
read once a newer one has started (an exclusive worker cancels the older) is not the rule: under writes faster than
a read, every read is cancelled by the next and the screen showed nothing until the writes stopped. So each read is
numbered as it starts (`start`, on its thread, before it reads) and its result is shown, on the UI thread, unless a
read numbered after it has had its result shown (`shows`). A read held up between its number and its read (a thread
descheduled there) may read a log newer than a read numbered after it: that older view then shows until the
reload the newer log started lands (the last read after the writes stop is always shown)."""

from __future__ import annotations

import itertools


class Newest:
    """The numbering of reads, and per kind of result (a worker group) the last number shown."""

    def __init__(self) -> None:
        self._numbers = itertools.count()  # (`next` on it is one step under the GIL: any thread may take one)
        self._shown: dict[str, int] = {}

    def start(self) -> int:
        """(the read's thread, before it reads) the read's number: later reads see the log no older."""
        return next(self._numbers)

    def superseded(self, kind: str, number: int) -> bool:
        """(UI thread) whether a read started after read `number` has had its result of `kind` shown: then a failure
        of read `number` is not said either (nobody waits for it)."""
        return number < self._shown.get(kind, -1)

    def shows(self, kind: str, number: int) -> bool:
        """(UI thread) whether the result of read `number` is shown: not when a later read's result of `kind` was."""
        if self.superseded(kind, number):
            return False
        self._shown[kind] = number
        return True
