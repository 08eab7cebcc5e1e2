"""The block hash tables' id hashes, taken in bulk, are each id's own hash (tests/robustness covers their use)."""

from __future__ import annotations

import xxhash

from lesson_credit.core.log.lookup import id_hash, id_hashes


def test_bulk_hashes_are_each_ids_hash() -> None:
    # A lone surrogate (a log written by a tool that let one through), non-ASCII, empty and plain ids.
    ids = ["2026-12-07-001", "sessão-ü", "\ud800x", "", "s" * 300]
    # Each computed a second way: the xxh3-64 object over the id's UTF-8 bytes (surrogates passed through).
    expected = []
    for sid in ids:
        hasher = xxhash.xxh3_64()
        hasher.update(sid.encode("utf-8", "surrogatepass"))
        expected.append(hasher.intdigest())
    assert id_hashes(ids).tolist() == expected
    assert [id_hash(sid) for sid in ids] == expected
    assert id_hashes([]).tolist() == []
