"""One benchmark run's results as a markdown table, for the README (one table per run, never mixed):

    python -m bench.table bench/.data/results-full.json [--targets]

A row per case: our median, the baseline's median (and what the baseline is), the ratio (the median
of the paired ratios where ours and the baseline ran in pairs, else the ratio of the medians,
marked "of medians"), the target and whether it was met (a time limit on the best run, which the
cell names when the median is over it). Above the table, the run: its mode, the
commit, when it finished, the load average at its start and end.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/table.py` puts bench/ first, not the repo root
    sys.path.insert(0, str(ROOT))

from bench.harness import fmt_mb, fmt_time  # noqa: E402


def ratio_text(result: dict[str, Any]) -> str:
    """The paired ratio (write_pg's rounds: `paired_ratio_median`; else the median of `paired_ratios`,
    which `ratio_median` holds when there are any), or the ratio of the medians."""
    if result.get("paired_ratio_median") is not None:
        return _times(result["paired_ratio_median"])
    if result.get("paired_ratios"):
        return _times(result["ratio_median"])
    return f"{_times(result['ratio_median'])} of medians"


def _times(ratio: float) -> str:
    """1.30x; below a hundredth as a fraction, 1/449x (0.00x would say nothing)."""
    return f"{ratio:.2f}x" if ratio >= 0.01 or ratio <= 0 else f"1/{1 / ratio:,.0f}x"


def ours_text(result: dict[str, Any]) -> str:
    text = fmt_time(result["ours_median_s"])
    if result.get("peak_rss_mb") is not None:
        text += f"; peak {fmt_mb(result['peak_rss_mb'])}"
    if result.get("records_per_s") is not None:
        text += f"; {result['records_per_s']:,.0f} records/s"
    return text


def baseline_text(result: dict[str, Any]) -> str:
    text = f"{fmt_time(result['baseline_median_s'])} ({result['baseline']})"
    if result.get("plain_records_per_s") is not None:
        text += f"; {result['plain_records_per_s']:,.0f} records/s"
    return text


def verdict_text(result: dict[str, Any]) -> str:
    """The run's verdict. A time limit is judged on the best run (bench/harness.py), so where the
    best is under it and the median (the time the row shows) is not, the cell says so."""
    limit = (result.get("target") or {}).get("max_s")
    verdict = str(result["verdict"])
    if verdict == "yes" and limit is not None and result["ours_median_s"] >= limit:
        best = result["ours_best_s"]  # to the millisecond: 1.998 s would round to the limit itself
        return (
            f"yes on the best run ({best:.3f} s); the median is over"
            if best >= 1
            else (f"yes on the best run ({fmt_time(best)}); the median is over")
        )
    return verdict


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def markdown(payload: dict[str, Any], targets_only: bool = False) -> str:
    """The run's line and its table; `targets_only`: without the cases that only report a number."""
    env = payload["environment"]
    start, end = env["load_average_at_start"][0], payload["load_average_at_end"][0]
    flag = "" if payload["mode"] == "full" else " --" + payload["mode"]
    lines = [
        f"`python -m bench.run{flag}` at {env['git_head'][:7]}, "
        f"finished {payload['finished'][:16].replace('T', ' ')}, {env['cpus']} CPUs, load average "
        f"{start:.1f} at the start and {end:.1f} at the end, {_duration(payload['elapsed_s'])}; medians of each "
        "case's runs.",
        "",
        "| case | ours | baseline | ratio | target | met |",
        "|---|---|---|---|---|---|",
    ]
    for r in payload["results"]:
        if targets_only and r["verdict"] == "n/a (report)":
            continue
        cells = [f"`{r['case']}`", ours_text(r), baseline_text(r), ratio_text(r), r["target_text"], verdict_text(r)]
        lines.append("| " + " | ".join(cell.replace("|", "/") for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.table", description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="a results file bench.run wrote (bench/.data/results-*.json)")
    parser.add_argument("--targets", action="store_true", help="only the cases with a target (not those that report)")
    args = parser.parse_args(argv)
    sys.stdout.write(markdown(json.loads(args.results.read_text()), targets_only=args.targets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
