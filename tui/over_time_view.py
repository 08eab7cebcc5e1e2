"""What the Lessons screen's over-time view shows of one lesson: its joint effect by window of the
log and its credit posterior after each (core.analysis.over_time), read through the source."""

from __future__ import annotations

from dataclasses import dataclass

from lesson_credit.core.api import OverTime, fixed, some_of, span
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.text import counted, fmt_signed, one_line

__all__ = ["LEVEL", "OverTime", "OverTimeView", "Series", "over_time_view"]

LEVEL = OverTime.LEVEL


@dataclass(frozen=True)
class Series:
    """Points of one series: x (a session position in log order), the mean and its 90% interval."""

    xs: tuple[float, ...] = ()
    mean: tuple[float, ...] = ()
    low: tuple[float, ...] = ()
    high: tuple[float, ...] = ()
    x_max: int = 0  # the x axis runs from 0 to this (the graded sessions)


@dataclass(frozen=True)
class OverTimeView:
    over: OverTime
    effect: Series  # one point per window with an estimate, at the window's middle
    credit: Series  # one point per window, at its last session

    @property
    def summary(self) -> str:
        """One line on what the series are (plain text: it names the lesson)."""
        over = self.over
        level = f"{LEVEL:.0%} intervals"
        if not over.windows:
            return f"Nothing to show over time: {over.reason or 'no graded sessions'}."
        count = len(over.windows)
        fewest, more = divmod(over.injected, count)  # windows hold as many of its injections each, up to one
        each = f"{fewest} or {fewest + 1}" if more else f"{fewest}"
        after = f" after its first {over.apart}" if over.apart else ""  # (those set apart: in no window's count)
        cut = (
            f"{count} windows of the {over.graded} graded sessions, {each} of its {over.injected} each{after}"
            if count > 1
            else f"one window: {counted(over.injected, 'graded session')} with it, too few to cut"
        )
        joint = "joint effect per window" if over.identified else f"no joint effect: {over.reason}"
        if over.group:
            joint += f" (group: {one_line(some_of(over.group))})"  # a few named, the rest counted
        return f"{level} · {cut} · {joint} · credit posterior ({over.strategy}) after each window"

    def rows(self) -> list[tuple[str, str, str, str]]:
        """The table fallback: sessions, with / without, the effect with its interval, the credit."""
        out = []
        for w in self.over.windows:
            sessions = f"{w.first}–{w.last}"
            if w.effect is None:
                counts, effect = "—", "—"
            else:
                low, high = w.effect.bounds(LEVEL)
                counts = f"{w.effect.n_with}/{w.effect.n_without}"
                effect = f"{fmt_signed(w.effect.estimate)} {span(low, high)}"  # (0.000, no sign: as loo)
            credit = f"{fixed(w.credit_mean)} [{fixed(w.credit_low, 2)}, {fixed(w.credit_high, 2)}]"
            out.append((sessions, counts, effect, credit))
        return out


def view_of(over: OverTime) -> OverTimeView:
    effect_points = []
    for w in over.windows:
        if w.effect is not None:
            low, high = w.effect.bounds(LEVEL)
            effect_points.append(((w.first + w.last) / 2.0, w.effect.estimate, low, high))
    credit_points = [(float(w.last), w.credit_mean, w.credit_low, w.credit_high) for w in over.windows]
    return OverTimeView(over, _series(effect_points, over.graded), _series(credit_points, over.graded))


def _series(points: list[tuple[float, float, float, float]], x_max: int) -> Series:
    if not points:
        return Series(x_max=x_max)
    xs, mean, low, high = (tuple(float(v) for v in column) for column in zip(*points, strict=True))
    return Series(xs, mean, low, high, x_max)


def over_time_view(source: WorkspaceSource, lesson_id: str) -> OverTimeView:
    """From a worker: the lesson's series as of the log the source last checked."""
    return view_of(source.call(lambda ws: ws.lesson_over_time(lesson_id)))
