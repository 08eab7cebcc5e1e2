"""A derived cache of the parsed log, so a big log is parsed once and only its tail afterwards.

The cache records how many bytes of the log it covers and a fingerprint of them (their
length and a hash of the last few KB). It is used only when the log still starts with
exactly those bytes; otherwise it is ignored and rebuilt. It holds nothing the log does not:
deleting it never changes a number, only how long the next read takes.
"""

from __future__ import annotations

import contextlib
from array import array
from typing import Any

import msgspec

from core.events import GradeEvent, SelectionEvent
from core.fold import LogIndex
from core.store import EventLog, LogProblem, StoreError, atomic_write

CACHE_VERSION = 3
MIN_NEW_BYTES = 4 * 1024 * 1024  # rewrite the cache when a read parsed at least this much


def _bytes(values: array[Any]) -> bytes:
    return values.tobytes()


def _array(code: str, data: bytes) -> array[Any]:
    out = array(code)
    out.frombytes(data)
    return out


def encode_index(index: LogIndex, fingerprint: str, partial: bool) -> bytes:
    payload = {
        "version": CACHE_VERSION,
        "end": index.end,
        "lines": index.lines,
        "fingerprint": fingerprint,
        "partial": partial,
        "arm_ids": index.arm_ids,
        "session_ids": index.session_ids,
        "session_lines": _bytes(array("q", index.session_lines)),
        "session_times": index.session_times,
        "session_base": _bytes(index.session_base),
        "session_categories": index.session_categories,
        "session_journals": index.session_journals,
        "session_graders": index.session_graders,
        "session_strategies": index.session_strategies,
        "session_floors": index.session_floors,
        "session_published": bytes(bytearray(index.session_published)),
        "missing_salience": [[row, list(pos)] for row, pos in index.missing_salience.items()],
        "propensities": [[row, list(p)] for row, p in index.propensities.items()],
        "entry_arm": _bytes(index.entry_arm),
        "entry_salience": _bytes(index.entry_salience),
        "session_start": _bytes(index.session_start),
        "grades": [[line, g.session_id, g.base_reward, g.grader, g.timestamp, g.note] for line, g in index.grades],
        "grade_rows": _bytes(array("q", index.grade_rows)),
        "selections": [
            [line, s.session_id, s.timestamp, list(s.candidates), list(s.selected), s.propensity, s.k, s.seed]
            for line, s in index.selections
        ],
        "priors": {arm: list(prior) for arm, prior in index.priors.items()},
        "prior_rewards": index.prior_rewards,
        "problems": [[p.line, p.reason, p.session_id] for p in index.problems],
    }
    encoded: bytes = msgspec.msgpack.encode(payload)
    return encoded


def decode_index(data: bytes) -> tuple[LogIndex, str, bool]:
    """The index, fingerprint and partial flag stored in a cache; ValueError if unusable."""
    try:
        p = msgspec.msgpack.decode(data)
    except msgspec.DecodeError as exc:
        raise ValueError(f"unreadable cache: {exc}") from None
    if not isinstance(p, dict) or p.get("version") != CACHE_VERSION:
        raise ValueError("cache from another version")
    try:
        index = LogIndex(
            arm_ids=list(p["arm_ids"]),
            arm_index={arm: i for i, arm in enumerate(p["arm_ids"])},
            session_ids=p["session_ids"],
            session_lines=_array("q", p["session_lines"]).tolist(),
            session_times=p["session_times"],
            session_base=_array("d", p["session_base"]),
            session_categories=p["session_categories"],
            session_journals=p["session_journals"],
            session_graders=p["session_graders"],
            session_strategies=p["session_strategies"],
            session_floors=p["session_floors"],
            session_published=[bool(b) for b in p["session_published"]],
            missing_salience={row: tuple(pos) for row, pos in p["missing_salience"]},
            propensities={row: tuple(v) for row, v in p["propensities"]},
            entry_arm=_array("i", p["entry_arm"]),
            entry_salience=_array("d", p["entry_salience"]),
            session_start=_array("q", p["session_start"]),
            grades=[(g[0], GradeEvent(g[1], g[2], g[3], g[4], g[5])) for g in p["grades"]],
            grade_rows=_array("q", p["grade_rows"]).tolist(),
            selections=[
                (s[0], SelectionEvent(s[1], s[2], tuple(s[3]), tuple(s[4]), dict(s[5]), s[6], s[7]))
                for s in p["selections"]
            ],
            priors={arm: (v[0], v[1], v[2]) for arm, v in p["priors"].items()},
            prior_rewards=dict(p["prior_rewards"]),
            problems=[LogProblem(line, reason, sid) for line, reason, sid in p["problems"]],
            end=int(p["end"]),
            lines=int(p["lines"]),
        )
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise ValueError(f"malformed cache: {exc}") from None
    n = len(index.session_ids)
    if not (len(index.session_start) == n + 1 and len(index.entry_arm) == len(index.entry_salience)):
        raise ValueError("inconsistent cache")
    return index, str(p["fingerprint"]), bool(p["partial"])


class LogCache:
    """`state/lesson-thompson/.cache/log-index.msgpack` for one log."""

    def __init__(self, log: EventLog) -> None:
        self.log = log
        self.path = log.path.parent / ".cache" / "log-index.msgpack"

    def load(self) -> tuple[LogIndex, str, bool] | None:
        """The cached index if it still describes a prefix of the log, else None."""
        try:
            data = self.path.read_bytes()
        except OSError:
            return None
        try:
            index, fingerprint, partial = decode_index(data)
        except ValueError:
            return None
        if self.log.size() < index.end or self.log.fingerprint(index.end) != fingerprint:
            return None
        return index, fingerprint, partial

    def save(self, index: LogIndex, fingerprint: str, partial: bool) -> None:
        """Best effort: a cache that cannot be written (read-only workspace) is simply skipped."""
        with contextlib.suppress(StoreError, OSError):
            atomic_write(self.path, encode_index(index, fingerprint, partial))
