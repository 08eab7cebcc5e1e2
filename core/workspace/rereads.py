"""`@rereads`: run a workspace method again, once, from a fresh read of the log when it found a
section of the parsed-log cache damaged. One decorator in one file, so that it can go as a whole."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Concatenate, ParamSpec, Protocol, TypeVar, cast

from lesson_credit.core.log.sections import CacheDamaged

if TYPE_CHECKING:
    from lesson_credit.core.reader import LogReader


class Rereading(Protocol):
    """What `rereads` needs of a workspace: its reader, and whether it is reading again already."""

    _reader: LogReader
    _rereading: bool


_W = TypeVar("_W", bound=Rereading)
_P = ParamSpec("_P")
_R = TypeVar("_R")


def rereads(method: Callable[Concatenate[_W, _P], _R]) -> Callable[Concatenate[_W, _P], _R]:
    """Run `method` again, once, from a fresh read of the log when it found a section of the
    parsed-log cache damaged (sections are checked when first read: core/log/columns.py). A write
    retried this way has not appended yet: after its append, `_after_write` reads again itself."""

    @functools.wraps(method)
    def run(self: _W, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(self, *args, **kwargs)
        except CacheDamaged as exc:
            if self._rereading:
                raise
            self._reader.drop(str(exc))
            self._rereading = True
            try:
                return method(self, *args, **kwargs)
            finally:
                self._rereading = False

    return cast("Callable[Concatenate[_W, _P], _R]", run)
