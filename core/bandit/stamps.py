"""An arm's `last_updated` in `bandit-state.json`: a time gptme-sessions reads, and how we know ours again.

gptme-sessions' `prune` parses each arm's `last_updated` with `datetime.fromisoformat` and subtracts it from an
aware now. On Python 3.10 (it supports 3.10) that parse refuses a `Z`, and a naive time fails the subtraction, so
we write each stamp as an aware isoformat (`gptme_time`). We stamp an arm with the time of the latest session that
credited it, and the log's session times are in any form their writer used: an arm is told as ours by its stamp
being that time written so (`same_time`), or that time exactly (what versions before this one wrote)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from functools import lru_cache

# A time we read: an ISO date and time to the second, a fraction of 1-6 digits, `Z` or an offset `+HH:MM` or none
# (naive: read as UTC). Any other form of a session's time (a date alone, `20261101T100000Z`) is not taken for one.
TIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d{1,6})?(?:Z|[+-]\d\d:\d\d)?")
UTC_ZONES = ("+00:00", "-00:00", "Z", "")  # the zones a time written with offset 0 may bear (none: naive)


def gptme_time(text: object) -> str | None:
    """`text` as gptme-sessions writes a time and reads it on Python 3.10 (`isoformat` of an aware time: a naive
    one and `Z` read as UTC, an offset kept), or None when it is not a time we read (`TIME`; not a string: a
    file's value may be anything)."""
    return _written(text) if isinstance(text, str) else None


@lru_cache(maxsize=1 << 14)  # (a file's arms share their sessions' times: 412 sessions for 1,000 arms)
def _written(text: str) -> str | None:
    if TIME.fullmatch(text) is None:
        return None
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:  # (the 30th of February; hour 24; an offset of 24 hours)
        return None
    return (moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)).isoformat()


def same_time(stamp: object, time: object) -> bool:
    """Whether an arm's `stamp` is the session time `time` as we write it (`gptme_time`), or as it is written
    (a file a version before this one wrote: each stamp a session's time as logged)."""
    if not isinstance(stamp, str) or not isinstance(time, str):
        return False
    return stamp == time or ((written := gptme_time(time)) is not None and gptme_time(stamp) == written)


def spellings(stamps: Iterable[str]) -> set[str]:
    """Every text a session's time may be written as that `same_time` takes for one of `stamps`: each stamp, and
    each form of `TIME` with the time a stamp names (the date and time to the second as it has them; a `T` or a
    space; the fraction with 0-6 digits that say it; its offset, or for offset 0 any zone of UTC_ZONES). A set to
    intersect with a log's session times at once (no step per session)."""
    found: set[str] = set()
    for stamp in stamps:
        found.add(stamp)
        if (written := gptme_time(stamp)) is None:
            continue
        day, clock, offset = written[:10], written[11:19], written[-6:]  # (isoformat: `.ffffff` before it, or none)
        zones = UTC_ZONES if offset == "+00:00" else (offset,)
        digits = written[20:-6].rstrip("0")
        fractions = [""] if not digits else []
        fractions += ["." + digits.ljust(width, "0") for width in range(max(len(digits), 1), 7)]
        for fraction in fractions:
            for zone in zones:
                found.add(f"{day}T{clock}{fraction}{zone}")
                found.add(f"{day} {clock}{fraction}{zone}")
    return found
