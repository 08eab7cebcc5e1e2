"""Sections of the parsed-log cache: stretches of a block read, and checked against their digest,
when first used.

A block's blob is found when the cache's head is read; a section of it is read only when something
needs its items, and checked against the xxh3-64 the head gives for it. One that cannot be read back
as written (changed, cut, removed, unreadable) is derived again from the log by its source (`heal`,
core/log/cache.py `Healer`): a caller gets the log's bytes either way. A source that cannot heal (a
test's) raises `CacheDamaged`.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
import xxhash

from lesson_credit.core.base.files import StoreError


class CacheDamaged(StoreError):
    """A section of the cache could not be read back as written (changed, cut or unreadable)."""


class SectionSource(Protocol):
    """Where sections are read from: a block of the cache (core/log/cache.py `BlobSource`)."""

    name: str

    def read(self, offset: int, length: int) -> bytes | memoryview: ...


class Section:
    """`length` bytes at `offset` of a source, whose xxh3-64 is `digest`; read once, when first used.
    `name` is the section's in its block: what a block derived again is asked for (its offset and length
    are the head's, which may be the damaged part)."""

    __slots__ = ("source", "name", "offset", "length", "digest", "_data")

    def __init__(self, source: SectionSource, name: str, offset: int, length: int, digest: int) -> None:
        self.source = source
        self.name = name
        self.offset = offset
        self.length = length
        self.digest = digest
        self._data: bytes | memoryview | None = None

    def bytes(self) -> bytes | memoryview:
        if self._data is None:
            try:
                data = self.source.read(self.offset, self.length)
                if xxhash.xxh3_64_intdigest(data) != self.digest:
                    raise CacheDamaged(f"{self.source.name}: a section does not match its checksum")
            except CacheDamaged as exc:
                heal = getattr(self.source, "heal", None)
                if heal is None:
                    raise
                data = heal(self.name, str(exc))
            self._data = data
        return self._data

    def array(self, dtype: npt.DTypeLike) -> npt.NDArray[Any]:
        data = self.bytes()
        if len(data) % np.dtype(dtype).itemsize:
            raise CacheDamaged(f"{self.source.name}: a section's length is not a whole number of items")
        out = np.frombuffer(data, dtype=dtype)
        out.flags.writeable = False
        return out
