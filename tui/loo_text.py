"""A lesson's effect and leave-one-out lift as text: its numbers and flags, for any screen."""

from __future__ import annotations

from rich.text import Text

from lesson_credit.core.api import Effect, LooResult, kind, notes
from lesson_credit.core.api import span as interval_text
from lesson_credit.tui.text import fmt, fmt_signed, one_line

INSUFFICIENT = "insufficient data"


def lift(value: float | None) -> str:
    return "—" if value is None else fmt_signed(value)


def p_text(value: float | None) -> str:
    if value is None:
        return "—"
    return "<0.001" if value < 0.0005 else fmt(value, 3)


def span(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "—"
    return interval_text(low, high)  # the CLI's: a bound below zero that rounds to it reads -0.00


def interval(result: LooResult) -> str:
    return span(result.ci_low, result.ci_high)


RANDOMIZED_MARK = "ʳ"  # the headline comes from a randomized trial (dropout logs)
LATER_MARK = "ˡ"  # the joint estimate of the later half: the effect drifted
MARKS = {"randomized": RANDOMIZED_MARK, "later half": LATER_MARK}


def headline_interval(result: LooResult) -> tuple[float | None, float | None]:
    eff = result.effect
    return (None, None) if eff is None else (eff.ci_low, eff.ci_high)


def headline_text(result: LooResult) -> str:
    """The headline (core.analysis.estimates' rule), as the `loo` table shows it: in parentheses when
    it claims nothing (unidentified, or a group's member), marked when randomized or the later half."""
    eff = result.effect
    if eff is None:
        return "—"
    if not eff.claims:
        return f"({fmt_signed(eff.estimate)})"
    return fmt_signed(eff.estimate) + MARKS.get(kind(eff), " ")


def short_flags(result: LooResult) -> list[str]:
    """One short phrase per flag (the part of a reason before its colon); the panel gives them in full."""
    flags = [note.split(":", 1)[0] for note in notes(result.effect)]
    flags += [] if result.sufficient else [INSUFFICIENT]
    flags += [reason.split(":", 1)[0] for reason in result.confound_reasons]
    return flags


def _effect_line(label: str, eff: Effect) -> str:
    if not eff.claims:
        return f"{label} {lift(eff.estimate)} (ranking only: nothing claimed)"
    interval = span(eff.ci_low, eff.ci_high)
    return f"{label} {lift(eff.estimate)} 95% CI {interval}  p {p_text(eff.p_value)}  BH {p_text(eff.p_adjusted)}"


def _cell_text(cell: dict[str, object] | None) -> str:
    if not cell:
        return "—"
    est, low, high = cell.get("estimate"), cell.get("ci_low"), cell.get("ci_high")
    if not isinstance(est, float) or not isinstance(low, float) or not isinstance(high, float):
        return "—"
    return f"{lift(est)} {span(low, high)} (n {cell.get('n_with')})"


def describe_effect(out: Text, result: LooResult) -> None:
    """The headline and the joint effect's parts: identification, group, over time, by category."""
    eff, joint = result.effect, result.joint
    if eff is not None:
        out.append("\n" + _effect_line(f"effect ({kind(eff)})", eff), style="bold")
    if joint is not None and eff is not None and eff.method != joint.method:
        out.append("\n" + _effect_line("joint", joint))
    if joint is None:
        return
    if joint.ranking is not None:
        out.append(f"\nranking (shrunk joint estimate) {lift(joint.ranking)}", style="dim")
    for note in notes(joint):
        out.append("\n" + one_line(note), style="bold" if note.startswith(("drifting", "differs")) else "")
    if joint.over_time:
        out.append(
            f"\nover time: earlier {_cell_text(joint.over_time.get('earlier'))} · "
            f"later {_cell_text(joint.over_time.get('later'))}"
        )
    if joint.by_category:
        cells = " · ".join(
            f"{one_line(name) or '(none)'} {_cell_text(cell)}" for name, cell in joint.by_category.items()
        )
        out.append(f"\nby category: {cells}")


def describe(result: LooResult | None, hint: str = "") -> Text:
    """Everything about one lesson's effect and lift, reasons in full: the headline, the joint effect's
    parts, randomized, then LOO."""
    if result is None:
        return Text("No lesson highlighted.", style="italic")
    out = Text()
    out.append(one_line(result.path), style="bold")
    if hint:
        out.append("   " + hint, style="dim")
    describe_effect(out, result)
    if result.randomized is not None:
        rnd = result.randomized
        out.append(
            f"\nrandomized (dropout): {lift(rnd.estimate)} 95% CI {span(rnd.ci_low, rnd.ci_high)}"
            f" · kept {rnd.n_kept}, withheld {rnd.n_withheld}"
        )
    out.append(
        f"\nmean reward with {fmt(result.mean_with, 3)} (n {result.n_with})"
        f" · without {fmt(result.mean_without, 3)} (n {result.n_without})"
        f" · Δ {lift(result.delta)}  95% CI {interval(result)}"
        f"  p {p_text(result.p_value)}  BH {p_text(result.p_adjusted)}"
    )
    out.append(f"\nwithin categories {lift(result.delta_category)}")
    if result.p_category is not None:
        out.append(f" (p {p_text(result.p_category)})")
    if result.delta_ipw is None:
        out.append(
            f" · propensity-weighted: too few candidate sessions ({result.n_ipw_treated} treated, "
            f"{result.n_ipw_untreated} untreated)",
            style="",
        )
    else:
        out.append(
            f" · propensity-weighted {lift(result.delta_ipw)} {span(result.ipw_ci_low, result.ipw_ci_high)}"
            f" over {result.n_ipw_treated} treated and {result.n_ipw_untreated} untreated candidate sessions"
        )
        if result.ipw_gap is not None:
            out.append(f" (gap to naive {lift(result.ipw_gap)})")
    if result.n_ipw_missing:
        out.append(f" · {result.n_ipw_missing} sessions with it have no logged propensity")
    if not result.sufficient:
        out.append(f"\n{INSUFFICIENT}: {one_line(result.insufficient_reason)}", style="dim")
    for reason in result.confound_reasons:
        out.append("\n⚠ " + one_line(reason), style="bold")
    return out
