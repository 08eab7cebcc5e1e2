"""Credible intervals kept from one process to the next: `status` shows every lesson's interval, and
importing the quantile function (scipy.special, ~0.2 s of CPU) is most of what a warm `status` does
besides reading the log.

The file is derived (`.cache/intervals` of the workspace): sealed with a checksum, holding rows of
(alpha, beta) and their interval at one level. A row is used only for exactly its (alpha, beta); the
rows a call lacks are computed (`beta.interval`) and the file rewritten with the rows of that call.
A missing, damaged or other file is no cache: everything is computed, and it is written again.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import numpy as np

from lesson_credit.core.base.files import read_cache, write_cache
from lesson_credit.core.base.safe_read import UnsafeFile
from lesson_credit.core.base.sealed import seal, unseal
from lesson_credit.core.model import beta as beta_mod
from lesson_credit.core.model.beta import FloatArray

MAGIC = b"lesson-credit intervals 1\n"
MAX_BYTES = 64 << 20  # 2 million rows; a file bigger than this is not ours


class _Rows(msgspec.Struct, array_like=True):
    level: float
    alpha: bytes  # float64 arrays, native byte order
    beta: bytes
    low: bytes
    high: bytes


def _load(path: Path, level: float) -> tuple[FloatArray, ...] | None:
    try:
        raw = read_cache(path, MAX_BYTES)
        rows = None if raw is None else msgspec.msgpack.decode(unseal(MAGIC, raw), type=_Rows)
    except (OSError, UnsafeFile, ValueError, msgspec.DecodeError):
        return None
    if rows is None or rows.level != level:
        return None
    arrays = tuple(np.frombuffer(b, dtype=np.float64) for b in (rows.alpha, rows.beta, rows.low, rows.high))
    return arrays if len({len(a) for a in arrays}) == 1 else None


def interval(
    alpha: FloatArray, beta: FloatArray, cache: Path | None, level: float = 0.95
) -> tuple[FloatArray, FloatArray]:
    """`beta.interval(alpha, beta, level)`, with the rows `cache` holds taken from it (None: no cache)."""
    a = np.ascontiguousarray(alpha, dtype=np.float64)
    b = np.ascontiguousarray(beta, dtype=np.float64)
    if cache is None or not len(a):
        return beta_mod.interval(a, b, level)
    stored = _load(cache, level)
    low, high = np.full(len(a), np.nan), np.full(len(a), np.nan)
    if stored is not None:
        row_of = {pair: i for i, pair in enumerate(zip(stored[0].tolist(), stored[1].tolist(), strict=True))}
        found = [row_of.get(pair, -1) for pair in zip(a.tolist(), b.tolist(), strict=True)]
        rows = np.asarray(found, dtype=np.int64)
        hit = rows >= 0
        low[hit], high[hit] = stored[2][rows[hit]], stored[3][rows[hit]]
    else:
        hit = np.zeros(len(a), dtype=bool)
    if hit.all():
        return low, high
    miss = ~hit
    low[miss], high[miss] = beta_mod.interval(a[miss], b[miss], level)
    payload = msgspec.msgpack.encode(_Rows(level, a.tobytes(), b.tobytes(), low.tobytes(), high.tobytes()))
    write_cache(cache, seal(MAGIC, payload))
    return low, high
