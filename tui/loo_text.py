"""A lesson's effect and leave-one-out lift as text: its numbers and flags, for any screen."""

from __future__ import annotations

from rich.text import Text

from lesson_credit.core.api import Effect, LooResult, kind, notes
from lesson_credit.core.api import span as interval_text
from lesson_credit.tui.text import Phrase, fmt, fmt_signed, one_line, phrase_lines

INSUFFICIENT = "insufficient data"


UNUSED = "unused (none kept or none withheld at their epsilon)"  # coins in no stratum with both


def lift(value: float | None) -> str:
    return "—" if value is None else fmt_signed(value)


def p_text(value: float | None) -> str:
    if value is None:
        return "—"
    return "<0.001" if value < 0.0005 else fmt(value, 3)


def span(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "—"
    return interval_text(low, high)  # the CLI's: a bound that rounds to zero reads 0.00, signless


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
    flags += [] if result.sufficient else ["no LOO comparison" if result.timed else INSUFFICIENT]
    flags += [reason.split(":", 1)[0] for reason in result.confound_reasons]
    return flags


def _effect_phrases(label: str, eff: Effect, style: str = "") -> list[Phrase]:
    """The estimate with its interval (one phrase: the label, the number and the interval stay together),
    then its p-values."""
    if not eff.claims:
        nothing = Text("(ranking only: nothing claimed)", style=style)
        return [Text(f"{label} {lift(eff.estimate)}", style=style), (" ", nothing)]
    return [
        Text(f"{label} {lift(eff.estimate)} 95% CI {span(eff.ci_low, eff.ci_high)}", style=style),
        ("  ", Text(f"p {p_text(eff.p_value)}", style=style)),
        ("  ", Text(f"BH {p_text(eff.p_adjusted)}", style=style)),
    ]


def _cell_text(cell: dict[str, object] | None) -> str:
    if not cell:
        return "—"
    est, low, high = cell.get("estimate"), cell.get("ci_low"), cell.get("ci_high")
    if not isinstance(est, float) or not isinstance(low, float) or not isinstance(high, float):
        return "—"
    return f"{lift(est)} {span(low, high)} (n {cell.get('n_with')})"


def effect_paragraphs(result: LooResult) -> list[list[Phrase]]:
    """The headline and the joint effect's parts: identification, group, over time, by category; a
    paragraph a line at any width, its phrases kept whole."""
    out: list[list[Phrase]] = []
    eff, joint = result.effect, result.joint
    if eff is not None:
        out.append(_effect_phrases(f"effect ({kind(eff)})", eff, "bold"))
    if joint is not None and eff is not None and eff.method != joint.method:
        out.append(_effect_phrases("joint", joint))
    if joint is None:
        return out
    if joint.ranking is not None:
        out.append([Text(f"ranking (shrunk joint estimate) {lift(joint.ranking)}", style="dim")])
    for note in notes(joint):
        out.append([Text(one_line(note), style="bold" if note.startswith(("drifting", "differs")) else "")])
    if joint.over_time:
        out.append(
            [
                Text(f"over time: earlier {_cell_text(joint.over_time.get('earlier'))}"),
                Text(f"later {_cell_text(joint.over_time.get('later'))}"),
            ]
        )
    if joint.by_category:
        cells = [Text(f"{one_line(name) or '(none)'} {_cell_text(cell)}") for name, cell in joint.by_category.items()]
        cells[0] = Text("by category: ") + cells[0]
        out.append(list(cells))
    return out


def _lift_paragraphs(result: LooResult) -> list[list[Phrase]]:
    """The randomized estimate, then the leave-one-out lifts: naive, within categories, propensity-weighted."""
    out: list[list[Phrase]] = []
    if result.randomized is not None:
        rnd = result.randomized
        out.append(
            [
                Text(f"randomized (dropout): {lift(rnd.estimate)} 95% CI {span(rnd.ci_low, rnd.ci_high)}"),
                Text(f"kept {rnd.n_kept}, withheld {rnd.n_withheld}"),
                *([(", ", Text(f"{rnd.n_unused} {UNUSED}"))] if rnd.n_unused else []),  # (else reads: never flipped)
            ]
        )
    if result.timed:  # its means with and without are after and before one moment: the difference withheld
        counts = f"graded sessions with it {result.n_with}, without {result.n_without}: no leave-one-out comparison"
        return [*out, [Text(counts)]]
    out.append(
        [
            Text(f"mean reward with {fmt(result.mean_with, 3)} (n {result.n_with})"),
            Text(f"without {fmt(result.mean_without, 3)} (n {result.n_without})"),
            Text(f"Δ {lift(result.delta)}  95% CI {interval(result)}"),
            ("  ", Text(f"p {p_text(result.p_value)}")),
            ("  ", Text(f"BH {p_text(result.p_adjusted)}")),
        ]
    )
    within = f"within categories {lift(result.delta_category)}"
    if result.p_category is not None:
        within += f" (p {p_text(result.p_category)})"
    lifts: list[Phrase] = [Text(within)]
    if result.delta_ipw is None:
        lifts.append(
            Text(
                f"propensity-weighted: too few candidate sessions ({result.n_ipw_treated} treated, "
                f"{result.n_ipw_untreated} untreated)"
            )
        )
    else:
        ipw = f"{lift(result.delta_ipw)} {span(result.ipw_ci_low, result.ipw_ci_high)}"
        treated = f"{result.n_ipw_treated} treated and {result.n_ipw_untreated} untreated"
        lifts.append(Text(f"propensity-weighted {ipw}"))
        lifts.append((" ", Text(f"over {treated} candidate sessions")))
        if result.ipw_gap is not None:
            lifts.append((" ", Text(f"(gap to naive {lift(result.ipw_gap)})")))
    if result.n_ipw_missing:
        one = result.n_ipw_missing == 1
        sessions = "1 session with it has" if one else f"{result.n_ipw_missing} sessions with it have"
        lifts.append(Text(f"{sessions} no logged propensity"))
    out.append(lifts)
    return out


def describe(result: LooResult | None, hint: str = "", width: int = 0) -> Text:
    """Everything about one lesson's effect and lift, reasons in full: the headline, the joint effect's
    parts, randomized, then LOO; in lines of `width` cells (0: a line each) that break between phrases,
    never inside an interval nor between a label and its number."""
    if result is None:
        return Text("No lesson highlighted.", style="italic")
    head: list[Phrase] = [Text(one_line(result.path), style="bold")]
    if hint:
        head.append(("   ", Text(hint, style="dim")))
    paragraphs = [head, *effect_paragraphs(result), *_lift_paragraphs(result)]
    if not result.sufficient:  # the reason of a lesson identified only by time says it is no comparison
        said = (
            one_line(result.insufficient_reason)
            if result.timed
            else f"{INSUFFICIENT}: {one_line(result.insufficient_reason)}"
        )
        paragraphs.append([Text(said, style="dim")])
    paragraphs += [[Text("⚠ " + one_line(reason), style="bold")] for reason in result.confound_reasons]
    return phrase_lines(paragraphs, width, hang=2)  # a paragraph's next lines indented under its first
