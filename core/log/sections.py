"""Sections of a cache file: stretches read, and checked against their digest, when first used.

A cache file is opened (or read into memory) when its directory is read; a section of it is read
only when something needs its items, and checked against the xxh3-64 the directory gives for it.
One that does not match raises `CacheDamaged`: the cache was changed after it was written (or the
disk returned other bytes), and the reader reads the log again instead.
"""

from __future__ import annotations

import os
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
import xxhash

from lesson_credit.core.base.files import StoreError


class CacheDamaged(StoreError):
    """A section of a cache file could not be read back as written (changed, cut or unreadable)."""


class SectionSource(Protocol):
    """Where sections are read from: an open cache file (`FileSource`; tests use bytes in memory)."""

    name: str

    def read(self, offset: int, length: int) -> bytes | memoryview: ...


class FileSource:
    """A cache file, held open from the moment its directory was read: replacing or deleting the
    file afterwards does not change what is read (a file cut in place reads short: CacheDamaged)."""

    def __init__(self, fd: int, name: str) -> None:
        self.fd = fd
        self.name = name
        self.size = os.fstat(fd).st_size

    def read(self, offset: int, length: int) -> bytes:
        if offset < 0 or length < 0 or offset + length > self.size:  # before a buffer of `length` is made
            raise CacheDamaged(f"{self.name}: a section lies outside the file")
        try:
            data = os.pread(self.fd, length, offset)
        except OSError as exc:
            raise CacheDamaged(f"{self.name}: {exc.strerror or exc}") from None
        if len(data) != length:
            raise CacheDamaged(f"{self.name}: shorter than its directory says")
        return data

    def __del__(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass


class Section:
    """`length` bytes at `offset` of a source, whose xxh3-64 is `digest`; read once, when first used."""

    __slots__ = ("source", "offset", "length", "digest", "_data")

    def __init__(self, source: SectionSource, offset: int, length: int, digest: int) -> None:
        self.source = source
        self.offset = offset
        self.length = length
        self.digest = digest
        self._data: bytes | memoryview | None = None

    def bytes(self) -> bytes | memoryview:
        if self._data is None:
            data = self.source.read(self.offset, self.length)
            if xxhash.xxh3_64_intdigest(data) != self.digest:
                raise CacheDamaged(f"{self.source.name}: a section does not match its checksum")
            self._data = data
        return self._data

    def array(self, dtype: npt.DTypeLike) -> npt.NDArray[Any]:
        data = self.bytes()
        if len(data) % np.dtype(dtype).itemsize:
            raise CacheDamaged(f"{self.source.name}: a section's length is not a whole number of items")
        out = np.frombuffer(data, dtype=dtype)
        out.flags.writeable = False
        return out
