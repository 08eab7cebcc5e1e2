"""Which key of `bandit-state.json` a lesson's arm is written under when the file names it by more than ours
(docs/format.md §7 "Key style"): gptme's bandit looks an arm up by the key it was given, and makes one at Beta(1, 1)
when it finds none, so a lesson it keyed its own way (`lessons/x.md`, another mount's `/workspace/lessons/x.md`) is
written under gptme's key alone."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from lesson_credit.core.bandit.stamps import same_time


def chosen_key(arms: dict[str, Any], found: list[str], key: str, times: Callable[[], list[str | None]]) -> str:
    """The key a lesson's arm is written under, `key` ours (its id, or its absolute path) and `found` the file's other
    keys naming that lesson: the file's one key, when ours is not in the file or gptme's bandit looks the lesson up by
    that one (`_asked_by`); of two or more (our id from a write before the file had an absolute-path key, and gptme's
    under another mount's path, `/workspace/lessons/x.md`), the one gptme's bandit made, when it made one alone."""
    if len(found) == 1:
        return found[0] if key not in arms or _asked_by(arms, found[0], key, times()) else key
    told = times()
    made = [other for other in found if _by_gptme(arms, other, told)]
    if len(made) == 1 and (key not in arms or not _by_gptme(arms, key, told)):
        return made[0]
    return key


def _by_gptme(arms: dict[str, Any], key: str, told: Iterable[str | None]) -> bool:
    """Whether the arm under `key` bears a stamp of gptme's bandit's update (its clock's isoformat, `+00:00`, to the
    microsecond) that is no session's time of the log naming its lesson (`told`: the stamps a write of ours gives)."""
    entry = arms.get(key)
    stamp = entry.get("last_updated") if isinstance(entry, dict) else None
    if not isinstance(stamp, str) or not stamp.endswith("+00:00") or "." not in stamp:
        return False
    return not any(same_time(stamp, time) for time in told if isinstance(time, str))


def _asked_by(arms: dict[str, Any], other: str, ours: str, times: Iterable[str | None]) -> bool:
    """Whether gptme's bandit looks a lesson up by the key `other`, not by our key `ours` that also names it in the
    file's `arms`: it stamped `other` (it made that arm, not finding ours) and left `ours` as a write of ours stamps
    it. Its update stamps an arm with its clock's isoformat, `+00:00` and to the microsecond. A write of ours stamps
    an arm with the time of a session of the log that credited it, in that form too (`stamps.gptme_time`): a stamp
    that is one of `times` (the times of the log's sessions naming the lesson: `stamps.same_time`) is ours; else
    with the time of a write of ours, to the second (versions before this one wrote `Z`: never gptme's)."""
    told = list(times)
    return _by_gptme(arms, other, told) and not _by_gptme(arms, ours, told)
