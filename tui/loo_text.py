"""Leave-one-out lift as text: the numbers and flags of one lesson's LOO result, for any screen."""

from __future__ import annotations

from rich.text import Text

from core.analysis import LooResult
from tui.text import fmt, fmt_signed, one_line

INSUFFICIENT = "insufficient data"


def lift(value: float | None) -> str:
    return "—" if value is None else fmt_signed(value)


def p_text(value: float | None) -> str:
    if value is None:
        return "—"
    return "<0.001" if value < 0.0005 else fmt(value, 3)


def interval(result: LooResult) -> str:
    if result.ci_low is None or result.ci_high is None:
        return "—"
    return f"[{fmt_signed(result.ci_low, 2)}, {fmt_signed(result.ci_high, 2)}]"


def short_flags(result: LooResult) -> list[str]:
    """One short phrase per flag (the part of a reason before its colon); the panel gives them in full."""
    flags = [] if result.sufficient else [INSUFFICIENT]
    flags += [reason.split(":", 1)[0] for reason in result.confound_reasons]
    return flags


def describe(result: LooResult | None, hint: str = "") -> Text:
    """Everything about one lesson's lift, reasons in full."""
    if result is None:
        return Text("No lesson highlighted.", style="italic")
    out = Text()
    out.append(one_line(result.path), style="bold")
    if hint:
        out.append("   " + hint, style="dim")
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
        out.append(" · propensity-weighted: no logged selection propensities", style="")
    else:
        out.append(f" · propensity-weighted {lift(result.delta_ipw)} over {result.n_ipw} candidate sessions")
        if result.ipw_gap is not None:
            out.append(f" (gap to naive {lift(result.ipw_gap)})")
    if not result.sufficient:
        out.append(f"\n{INSUFFICIENT}: {one_line(result.insufficient_reason)}", style="dim")
    for reason in result.confound_reasons:
        out.append("\n⚠ " + one_line(reason), style="bold")
    return out
