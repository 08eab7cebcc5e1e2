"""Time blocks for small logs: what B blocks of log order do to the claims' 90% intervals at 16-49
graded sessions, in a world that moves and in one that stands still (worlds written here with numpy,
one category, every injection weight 1).

    python -m bench.small_blocks                     # 200 seeds, n = 16 24 32 49, B = 1..3 and the rule
    python -m bench.small_blocks --seeds 100 --n 49 64 --blocks 1 2 3 4
    python -m bench.small_blocks --n 50 56 64 70 --blocks 2 3 4 --effect 0.1   # power where +0.2 saturates

Each world: 8 lessons. Lesson 0 has no effect and is injected in 10% of the first sessions and 70% of
the last (a bandit took to it); lesson 1 adds +0.2 (`--effect`) and is injected in 30% of the sessions; lessons 2-7
have no effect, 30%. Noise sd 0.15. `trend`: the baseline rises 0.40 -> 0.70 over the log; `still`: it
stays at 0.55. Per lesson kind: identified (of the seeds), and of those the 90% interval covers the
truth, excludes 0 (for lesson 1 that is power, for the others a false claim at 10%), the mean width;
`found`: identified with an interval that excludes 0, of the seeds (lesson 1: the power all told).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from lesson_credit.core.analysis.claims import lesson_claims  # noqa: E402
from lesson_credit.core.analysis.joint import Design, time_blocks  # noqa: E402

LEVEL = 0.90
P = 8
EFFECT = 0.2


def world(seed: int, n: int, trend: bool, effect: float = EFFECT) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng([71, n, seed])
    t = np.arange(n) / max(n - 1, 1)
    share = np.full((n, P), 0.3)
    share[:, 0] = 0.1 + 0.6 * t
    x = rng.random((n, P)) < share
    base = 0.40 + 0.30 * t if trend else np.full(n, 0.55)
    return x, base + effect * x[:, 1] + rng.normal(0.0, 0.15, n)


def design(x: np.ndarray, reward: np.ndarray, blocks: int) -> Design:
    n = len(reward)
    rows, arms = np.nonzero(x)
    zeros = np.zeros(n, dtype=np.int64)
    return Design(np.arange(n), reward, zeros, 1, rows, arms, np.ones(len(rows)), P, n_blocks=blocks)


@dataclass
class Kind:
    seen: int = 0
    identified: int = 0
    covered: int = 0
    excludes: int = 0
    widths: list[float] = field(default_factory=list)

    def row(self) -> str:
        k = max(self.identified, 1)
        width = f"{np.mean(self.widths):.3f}" if self.widths else "-"
        return (
            f"{100 * self.identified / max(self.seen, 1):3.0f}% | {100 * self.covered / k:3.0f}% | "
            f"{100 * self.excludes / k:3.0f}% | {width} | {100 * self.excludes / max(self.seen, 1):3.0f}%"
        )


def measure(n: int, blocks: int, trend: bool, seeds: int, effect: float = EFFECT) -> dict[str, Kind]:
    real = f"{effect:+.2g}"
    kinds = {"rising, none": Kind(), real: Kind(), "steady, none": Kind()}
    for seed in range(seeds):
        x, reward = world(seed, n, trend, effect)
        claims = lesson_claims(design(x, reward, blocks))
        for arm in range(P):
            kind = kinds["rising, none" if arm == 0 else real if arm == 1 else "steady, none"]
            truth = effect if arm == 1 else 0.0
            kind.seen += 1
            column = claims.of(arm)
            if column is None or not column.identified or len(column.arms) > 1 or column.effect is None:
                continue
            low, high = column.effect.bounds(LEVEL)
            kind.identified += 1
            kind.covered += int(low <= truth <= high)
            kind.excludes += int(low > 0 or high < 0)
            kind.widths.append(high - low)
    return kinds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--n", type=int, nargs="+", default=[16, 24, 32, 49])
    parser.add_argument("--blocks", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--effect", type=float, default=EFFECT, help="lesson 1's effect (default +0.2)")
    args = parser.parse_args(argv)
    print("| world | n | B | lesson | identified | covers truth | excludes 0 | width | found |")
    print("|---|---|---|---|---|---|---|---|---|")
    for trend in (True, False):
        for n in args.n:
            for blocks in sorted(set(args.blocks) | {time_blocks(n)}):
                rule = " (rule)" if blocks == time_blocks(n) else ""
                for name, kind in measure(n, blocks, trend, args.seeds, args.effect).items():
                    label = "trend" if trend else "still"
                    print(f"| {label} | {n} | {blocks}{rule} | {name} | {kind.row()} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
