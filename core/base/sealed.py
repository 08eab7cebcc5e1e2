"""Cache files with a checksum: a header naming the format, an xxh3-64 of the payload, the payload.

A cache is only an accelerator; a bit flipped on disk must make it "no cache", never a
different number. `seal` frames a payload, `unseal` gives it back or raises ValueError.
"""

from __future__ import annotations

import xxhash

_DIGEST_BYTES = 8


def seal(magic: bytes, payload: bytes) -> bytes:
    return magic + xxhash.xxh3_64_digest(payload) + payload


def unseal(magic: bytes, data: bytes) -> memoryview:
    """The payload of sealed `data` (a view, no copy); ValueError when anything does not hold."""
    head = len(magic) + _DIGEST_BYTES
    if len(data) < head or data[: len(magic)] != magic:
        raise ValueError("not a cache of this format")
    payload = memoryview(data)[head:]
    if xxhash.xxh3_64_digest(payload) != data[len(magic) : head]:
        raise ValueError("cache checksum mismatch")
    return payload
