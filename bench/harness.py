"""The benchmark harness both `bench.run` and `bench.scale` use: generated data sets, timing, reporting."""

from __future__ import annotations

import gc
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench import baselines

ROOT = Path(__file__).resolve().parent.parent

# generated data and results; LESSON_CREDIT_BENCH_DATA moves them (the smoke test writes to a temporary folder)
DATA = Path(os.environ.get("LESSON_CREDIT_BENCH_DATA") or ROOT / "bench" / ".data")
GEN_VERSION = 3  # bump when a generator changes, so stale data is regenerated

FULL: dict[str, Any] = {
    "workspace": {"lessons": 1000, "sessions": 100_000, "per_session": 10, "grades": 5000, "pending": 0.10},
    "salience": {"lessons": 3000, "keywords": 5, "journal_bytes": 2_000_000, "wildcard_lessons": 30},
    "transcript": {"bytes": 10 * 1024 * 1024},  # the 10 MB trajectory (bench/transcript.py)
    "runs": {
        "cold": (5, 3),
        "warm": (30, 3),
        "salience": (9, 3),
        "status": (5, 3),
        "record": (7, 7),
        "tui_start": (10, 10),  # the first paint: a median of at least 10 paired ratios
        "transcript": (5, 5),
        "filter_typing": (3, 3),
    },
    "flat": {"lessons": 3000, "small": 10_000, "big": 100_000, "rounds": 5, "commits": 5},  # bench/flat.py
    "select": {"lessons": 30_000, "runs": 3},
    "import": {"arms": 40_000, "runs": 3},
    "gptme": {"lessons": 1000, "sessions": 1_000_000, "rounds": 7},  # bench/peer.py: bench/scale.py's log size
    "dashboard_memory": {"lessons": 1000, "sessions": 1_000_000},  # bench/tui_memory.py: bench/scale.py's log
}
QUICK: dict[str, Any] = {
    "workspace": {"lessons": 200, "sessions": 10_000, "per_session": 10, "grades": 500, "pending": 0.10},
    "salience": {"lessons": 600, "keywords": 5, "journal_bytes": 400_000, "wildcard_lessons": 6},
    "transcript": {"bytes": 10 * 1024 * 1024},
    "runs": {
        "cold": (3, 2),
        "warm": (10, 2),
        "salience": (3, 2),
        "status": (2, 2),
        "record": (3, 3),
        "tui_start": (2, 2),
        "transcript": (3, 3),
        "filter_typing": (1, 1),
    },
    "flat": {"lessons": 300, "small": 1_000, "big": 10_000, "rounds": 3, "commits": 2},
    "select": {"lessons": 3000, "runs": 2},
    "import": {"arms": 4000, "runs": 2},
    "gptme": {"lessons": 300, "sessions": 10_000, "rounds": 3},  # flat's big workspace: no data of its own
    "dashboard_memory": {"lessons": 300, "sessions": 10_000, "grades": 500},
}
SMOKE: dict[
    str, Any
] = {  # every case once on tiny data: a check that the benchmarks still run (tests/bench), not a measurement
    "workspace": {"lessons": 30, "sessions": 400, "per_session": 5, "grades": 20, "pending": 0.10},
    "salience": {"lessons": 60, "keywords": 3, "journal_bytes": 20_000, "wildcard_lessons": 2},
    "transcript": {"bytes": 200_000},
    "runs": {
        "cold": (1, 1),
        "warm": (1, 1),
        "salience": (1, 1),
        "status": (1, 1),
        "record": (1, 1),
        "tui_start": (1, 1),
        "transcript": (1, 1),
        "filter_typing": (1, 1),
    },
    "filter_characters": 200,  # bench/filter_typing.py types 5,000 otherwise
    "flat": {"lessons": 20, "small": 100, "big": 400, "rounds": 1, "commits": 1},
    "select": {"lessons": 200, "runs": 1},
    "import": {"arms": 200, "runs": 1},
    "gptme": {"lessons": 20, "sessions": 400, "rounds": 1},  # the flat smoke case's workspace
    "dashboard_memory": {"lessons": 40, "sessions": 3500, "grades": 100},  # bench/scale.py's smoke log
}
SEED = 20260305

# ------------------------------------------------------------------ vocabulary

TECH_WORDS = """
git worktree branch rebase merge conflict commit push pull force lease remote origin main
stale checkout stash cherry pick bisect tag release hook pre-commit lint format ruff mypy
pytest fixture mock patch flaky retry timeout deadline test suite coverage assert snapshot
shell quote escape heredoc pipe grep sed awk find xargs subprocess signal exit status code
python package import module venv pip wheel build install dependency version pin upgrade
docker image container volume network port compose kubernetes pod deploy rollout rollback
issue triage label milestone review approve comment request changes description changelog
ci pipeline workflow job runner cache artifact matrix secret token permission rate limit
backoff loop budget context window journal checkpoint scope creep escalate blocked ping
maintainer irc channel update summary concise status report error traceback exception
log file path directory read edit write large chunk offset line diff hunk apply revert
database migration schema index query transaction lock deadlock connection pool session
api endpoint request response header payload json yaml toml config setting default option
cron schedule daily nightly batch queue worker thread async await event callback handler
""".split()

STOP_WORDS = """
the a an and or but so then when while if because after before with without into onto from
to of in on at by for about over under again once more most some any each every this that
these those it its we our you your they them their is are was were be been being have has
had do does did not no yes can could should would will may might must just also only very
""".split()


def pseudo_words(rng: np.random.Generator, count: int) -> list[str]:
    """Pronounceable made-up words, so the vocabulary is large but text-like."""
    onsets = ["b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "st", "tr", "pl", "gr"]
    vowels = ["a", "e", "i", "o", "u", "ai", "ou", "ea"]
    codas = ["", "", "n", "r", "s", "t", "x", "ck", "nd", "st"]
    words: dict[str, None] = {}
    while len(words) < count:
        syllables = int(rng.integers(2, 4))
        word = (
            "".join(onsets[rng.integers(len(onsets))] + vowels[rng.integers(len(vowels))] for _ in range(syllables))
            + codas[rng.integers(len(codas))]
        )
        words[word] = None
    return list(words)


def make_phrases(rng: np.random.Generator, vocab: list[str], count: int) -> list[str]:
    """1-3 word keyword phrases, words drawn with a mild Zipf-like skew (some words are common)."""
    ranks = np.arange(1, len(vocab) + 1, dtype=np.float64)
    p = 1.0 / ranks**0.5
    p /= p.sum()
    lengths = rng.choice([1, 2, 3], size=count, p=[0.35, 0.45, 0.2])
    out = []
    for length in lengths:
        picks = rng.choice(len(vocab), size=int(length), p=p)
        out.append(" ".join(vocab[i] for i in picks))
    return out


def wildcard_of(rng: np.random.Generator, phrase: str) -> str:
    """A wildcard keyword made from a phrase: mostly `git rebas*`, some `ti*ut`, a few leading `*ebase`."""
    words = phrase.split()
    last = words[-1]
    kind = int(rng.choice(3, p=[0.6, 0.3, 0.1]))
    if kind == 0 or len(last) < 5:
        words[-1] = last[: max(2, len(last) - 2)] + "*"  # prefix: `timeo*`
    elif kind == 1:
        words[-1] = last[:2] + "*" + last[-2:]  # infix: `ti*ut`
    else:
        words[0] = "*" + words[0][1:]  # suffix form: `*ebase`
    return " ".join(words)


# ------------------------------------------------------------------ data sets


def params_dir(kind: str, params: dict[str, Any]) -> tuple[Path, dict[str, Any]]:
    full = dict(params, seed=SEED, version=GEN_VERSION)
    digest = hashlib.sha256(json.dumps(full, sort_keys=True).encode()).hexdigest()[:10]
    return DATA / f"{kind}-{digest}", full


def reuse(path: Path, params: dict[str, Any]) -> bool:
    marker = path / "params.json"
    try:
        return bool(json.loads(marker.read_text()) == params)
    except (OSError, ValueError):
        return False


def finish(path: Path, params: dict[str, Any]) -> None:
    (path / "params.json").write_text(json.dumps(params, sort_keys=True, indent=2) + "\n")
    # Data sets from an older generator are never reused: remove them (they can be ~100 MB).
    kind = path.name.split("-")[0]
    for other in DATA.glob(f"{kind}-*"):
        try:
            stale = json.loads((other / "params.json").read_text()).get("version") != GEN_VERSION
        except (OSError, ValueError):
            stale = True
        if other != path and stale:
            shutil.rmtree(other, ignore_errors=True)


def lesson_file(title: str, keywords: list[str], description: str, body: str) -> str:
    kw = "\n".join(f"  - {json.dumps(k)}" for k in keywords)
    return (
        f"---\nmatch:\n  keywords:\n{kw}\nstatus: active\ndescription: {json.dumps(description)}\n---\n\n"
        f"# {title}\n\n{body}\n"
    )


def workspace_data(params: dict[str, Any]) -> Path:
    """A workspace with `lessons` lesson files and a log of `sessions` session events (+ grades)."""
    path, full = params_dir("workspace", params)
    if reuse(path, full):
        return path
    t0 = time.perf_counter()
    print(f"generating workspace {path.name} ...", end=" ", flush=True, file=sys.stderr)
    shutil.rmtree(path, ignore_errors=True)
    rng = np.random.default_rng(SEED)
    n_lessons, n_sessions, per = params["lessons"], params["sessions"], params["per_session"]
    ids = [f"cat{i % 8}/lesson-{i}.md" for i in range(n_lessons)]

    vocab = TECH_WORDS + pseudo_words(rng, 800)
    phrases = make_phrases(rng, vocab, n_lessons * 5)
    for i, lesson_id in enumerate(ids):
        file = path / "lessons" / lesson_id
        file.parent.mkdir(parents=True, exist_ok=True)
        keywords = phrases[i * 5 : i * 5 + 5]
        body = f"## Rule\nWhen you see {keywords[0]!r}, check {keywords[-1]!r} first.\n\n## Context\n" + " ".join(
            rng.choice(vocab, size=60)
        )
        file.write_text(lesson_file(f"Lesson {i}", keywords, f"Generated lesson {i}.", body))

    # Popularity: a few lessons are injected often, most rarely (Gumbel top-k = weighted sampling w/o replacement).
    popularity = 1.0 / (np.arange(n_lessons) + 20.0) ** 0.9
    log_p = np.log(rng.permutation(popularity / popularity.sum()))
    chosen = np.empty((n_sessions, per), dtype=np.int64)
    chunk = 4096
    for start in range(0, n_sessions, chunk):
        stop = min(n_sessions, start + chunk)
        keys = log_p + rng.gumbel(size=(stop - start, n_lessons))
        chosen[start:stop] = np.argpartition(-keys, per, axis=1)[:, :per]
    graded = rng.random(n_sessions) >= params["pending"]
    base = np.round(rng.beta(2.0, 2.0, size=n_sessions), 3)
    kw_count = rng.integers(3, 8, size=(n_sessions, per))
    kw_hits = rng.binomial(kw_count, 0.3)
    session_ids = [f"s{i:06d}-{int(x):08x}" for i, x in enumerate(rng.integers(0, 2**32, size=n_sessions))]

    # Grades: after session `at`, one for a session already in the log (a regrade or a late grade).
    n_grades = params["grades"]
    grade_at = np.sort(rng.integers(0, n_sessions, size=n_grades))
    grade_target = (rng.random(n_grades) * (grade_at + 1)).astype(np.int64)
    grade_value = np.round(rng.random(n_grades), 2)
    grade_by = rng.choice(["manual", "judge"], size=n_grades)

    epoch = 1_735_689_600  # 2025-01-01T00:00:00Z
    log = path / "state" / "lesson-thompson" / "sessions.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    g = 0
    with open(log, "w", encoding="utf-8") as out:
        for i in range(n_sessions):
            b = float(base[i]) if graded[i] else None
            entries = []
            for j in range(per):
                salience = int(kw_hits[i, j]) / int(kw_count[i, j])  # full precision, e.g. 0.2857142857142857
                w = 0.3 + 0.7 * salience
                entries.append(
                    {"path": ids[chosen[i, j]], "salience": salience, "reward": None if b is None else b * w}
                )
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch + 300 * i))
            record = {
                "type": "session",
                "session_id": session_ids[i],
                "timestamp": stamp,
                "outcome": b,
                "base_reward": b,
                "lessons": entries,
            }
            out.write(json.dumps(record) + "\n")
            while g < n_grades and grade_at[g] == i:
                grade = {
                    "type": "grade",
                    "session_id": session_ids[grade_target[g]],
                    "base_reward": float(grade_value[g]),
                    "grader": str(grade_by[g]),
                    "timestamp": stamp,
                }
                out.write(json.dumps(grade) + "\n")
                g += 1
    finish(path, full)
    print(f"{time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return path


def salience_data(params: dict[str, Any]) -> Path:
    """`lessons.json` ([id, keywords] per lesson) and `journal.txt` that mentions some of the keywords."""
    path, full = params_dir("salience", params)
    if reuse(path, full):
        return path
    t0 = time.perf_counter()
    print(f"generating salience data {path.name} ...", end=" ", flush=True, file=sys.stderr)
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    rng = np.random.default_rng(SEED + 1)
    n_lessons, per = params["lessons"], params["keywords"]
    vocab = TECH_WORDS + pseudo_words(rng, 4000)
    phrases = make_phrases(rng, vocab, n_lessons * per)
    lessons: list[tuple[str, list[str]]] = []
    for i in range(n_lessons):
        keywords = phrases[i * per : (i + 1) * per]
        lessons.append((f"cat{i % 8}/lesson-{i}.md", keywords))
    for i in rng.choice(n_lessons, size=params["wildcard_lessons"], replace=False):
        keywords = lessons[int(i)][1]
        k = int(rng.integers(per))
        keywords[k] = wildcard_of(rng, keywords[k])
    # A few lessons with the edge cases docs/format.md §3 names: padded, repeated, empty and all-* keywords.
    for i in range(0, n_lessons, max(1, n_lessons // 20)):
        keywords = lessons[i][1]
        keywords[0] = f"  {keywords[0]}  "
        keywords.append(keywords[1].upper())
        keywords.append("**" if i % 2 else "   ")

    # The journal: text-like lines from the same vocabulary plus stop words, with ~15% of the
    # keyword phrases mentioned (in varied case) so that salience values spread over [0, 1].
    mentioned = [p for p in phrases if rng.random() < 0.15]
    word_p = 1.0 / np.arange(1, len(vocab) + 1) ** 1.1
    word_p /= word_p.sum()
    pieces: list[str] = []
    size = 0
    while size < params["journal_bytes"]:
        words = [vocab[k] for k in rng.choice(len(vocab), size=int(rng.integers(6, 18)), p=word_p)]
        for slot in rng.integers(0, len(words), size=int(rng.integers(1, 4))):
            words.insert(int(slot), STOP_WORDS[rng.integers(len(STOP_WORDS))])
        if rng.random() < 0.5 and mentioned:
            phrase = mentioned[rng.integers(len(mentioned))]
            words.insert(int(rng.integers(len(words) + 1)), phrase.title() if rng.random() < 0.2 else phrase)
        line = " ".join(words)
        line = line[0].upper() + line[1:] + (". " if rng.random() < 0.8 else ":\n  $ café --run ")
        if rng.random() < 0.1:
            line += "\n\n"
        pieces.append(line)
        size += len(line)
    text = "".join(pieces)[: params["journal_bytes"]]
    (path / "journal.txt").write_text(text, encoding="utf-8")
    (path / "lessons.json").write_text(json.dumps(lessons))
    finish(path, full)
    print(f"{time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return path


# ------------------------------------------------------------------ timing and reporting


@dataclass
class Target:
    max_s: float  # math.inf: no time target
    min_speedup: float | None = None
    max_rss_mb: float | None = None  # peak resident memory of the process measured
    check: str | None = None  # a target that is a check, not a number (e.g. "identical output")
    max_ratio: float | None = None  # the median of the paired ratios (ours / baseline, run by run), at most
    max_median_s: float | None = None  # the median of our runs, under

    def describe(self) -> str:
        parts = [self.check] if self.check else []
        if math.isfinite(self.max_s):
            parts.append(f"< {fmt_time(self.max_s)}")
        if self.max_median_s is not None:
            parts.append(f"median < {fmt_time(self.max_median_s)}")
        if self.max_ratio is not None:
            parts.append(f"paired ratio <= {self.max_ratio:g}x")
        if self.min_speedup is not None:
            parts.append(f">= {self.min_speedup:g}x")
        if self.max_rss_mb is not None:
            parts.append(f"RSS < {fmt_mb(self.max_rss_mb)}")
        return ", ".join(parts) or "report"

    @property
    def report_only(self) -> bool:
        numbers = (self.min_speedup, self.max_rss_mb, self.max_ratio, self.max_median_s)
        return not math.isfinite(self.max_s) and all(x is None for x in numbers) and not self.check


@dataclass
class Result:
    name: str
    ours: list[float]
    baseline: list[float]
    baseline_name: str
    target: Target
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    rss_mb: float | None = None  # peak RSS of the process that ran ours (scale cases)
    failed: list[str] = field(default_factory=list)  # checks that did not hold (e.g. "numbers differ")
    ratios: list[float] = field(default_factory=list)  # ours / baseline per pair of runs made together

    @property
    def ours_median(self) -> float:
        return float(np.median(self.ours))

    @property
    def baseline_median(self) -> float:
        return float(np.median(self.baseline))

    @property
    def ratio_median(self) -> float:
        """The median of the paired ratios (of the medians when the runs were not paired)."""
        return float(np.median(self.ratios)) if self.ratios else self.ours_median / self.baseline_median

    @property
    def ours_best(self) -> float:
        return min(self.ours)

    @property
    def baseline_best(self) -> float:
        return min(self.baseline)

    @property
    def speedup(self) -> float:
        return self.baseline_best / self.ours_best

    def verdict(self) -> tuple[bool, str]:
        misses = []
        if self.ours_best >= self.target.max_s:
            misses.append("time")
        if self.target.min_speedup is not None and self.speedup < self.target.min_speedup:
            misses.append("speedup")
        if self.target.max_rss_mb is not None and (self.rss_mb is None or self.rss_mb >= self.target.max_rss_mb):
            misses.append("memory")
        if self.target.max_ratio is not None and self.ratio_median > self.target.max_ratio:
            misses.append("ratio")
        if self.target.max_median_s is not None and self.ours_median >= self.target.max_median_s:
            misses.append("median")
        misses += self.failed
        if misses:
            return False, "NO (" + ", ".join(misses) + ")"
        return True, "n/a (report)" if self.target.report_only else "yes"

    def as_json(self) -> dict[str, Any]:
        ok, verdict = self.verdict()
        return {
            "case": self.name,
            "ours_best_s": self.ours_best,
            "ours_median_s": float(np.median(self.ours)),
            "ours_runs_s": self.ours,
            "baseline": self.baseline_name,
            "baseline_best_s": self.baseline_best,
            "baseline_median_s": float(np.median(self.baseline)),
            "baseline_runs_s": self.baseline,
            "speedup": self.speedup,
            "paired_ratios": self.ratios,
            "ratio_median": self.ratio_median,
            "target": {
                "max_s": self.target.max_s if math.isfinite(self.target.max_s) else None,
                "min_speedup": self.target.min_speedup,
                **({"max_ratio": self.target.max_ratio} if self.target.max_ratio is not None else {}),
                **({"max_median_s": self.target.max_median_s} if self.target.max_median_s is not None else {}),
                **({"max_rss_mb": self.target.max_rss_mb} if self.target.max_rss_mb is not None else {}),
                **({"check": self.target.check} if self.target.check else {}),
            },
            "target_text": self.target.describe(),
            "meets": ok,
            "verdict": verdict,
            "detail": self.detail,
            **({"peak_rss_mb": self.rss_mb} if self.rss_mb is not None else {}),
            **({"failed_checks": self.failed} if self.failed else {}),
            **self.extra,
        }


def fmt_mb(mb: float) -> str:
    return f"{mb / 1024:.2f} GB" if mb >= 1024 else f"{mb:.0f} MB"


def fmt_time(seconds: float) -> str:
    if seconds >= 1.0:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} us"


def best_of(fn: Callable[[Any], Any], runs: int, setup: Callable[[], Any] | None = None) -> tuple[list[float], Any]:
    """Time `fn(setup())` `runs` times (setup not timed); the times and the last result."""
    times = []
    result = None
    for _ in range(runs):
        arg = setup() if setup is not None else None
        gc.collect()
        start = time.perf_counter()
        result = fn(arg)
        times.append(time.perf_counter() - start)
    return times, result


def run_cli(cmd: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.decode(errors='replace')[-2000:]}")
    return proc


def time_cli(cmd: list[str], runs: int, setup: Callable[[], Any] | None = None) -> tuple[list[float], Any]:
    return best_of(lambda arg: run_cli(cmd if arg is None else arg), runs, setup)


def lesson_credit_cmd() -> list[str]:
    script = Path(sys.executable).parent / "lesson-credit"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "lesson_credit.cli.main"]


def print_table(results: list[Result]) -> None:
    """Best and median of our runs and of the baseline's, the speedup of the bests, and the median
    of the paired ratios (ours / baseline, run by run: the two measured together, so a machine that
    slows down for a while slows both) where the runs were paired."""
    headers = ["case", "ours best", "ours median", "base best", "base median", "speedup", "ratio", "target", "meets"]
    with_rss = any(r.rss_mb is not None for r in results)  # scale cases: a peak RSS column
    if with_rss:
        headers.insert(7, "peak RSS")
    rows = []
    for r in results:
        row = [
            r.name,
            fmt_time(r.ours_best),
            fmt_time(r.ours_median),
            fmt_time(r.baseline_best),
            fmt_time(r.baseline_median),
            f"{r.speedup:.1f}x" if r.speedup >= 1 else f"{r.speedup:.2f}x",
            f"{r.ratio_median:.2f}x" + ("" if r.ratios else " (med)"),
            r.target.describe(),
            r.verdict()[1],
        ]
        if with_rss:
            row.insert(7, "" if r.rss_mb is None else fmt_mb(r.rss_mb))
        rows.append(row)
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]
    right = set(range(1, 8)) if with_rss else set(range(1, 7))

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    print(line(headers))
    print(line(["-" * w for w in widths]))
    for row in rows:
        print(line(row))
    print()
    for r in results:
        print(
            f"{r.name}: ours {len(r.ours)} runs (median {fmt_time(r.ours_median)}), baseline "
            f"{len(r.baseline)} runs (median {fmt_time(r.baseline_median)}; {r.baseline_name}). {r.detail}"
        )


# ------------------------------------------------------------------ checks


def check_same_posterior(post: Any, arms: dict[str, baselines.Arm], what: str) -> None:
    """The engine's fold and the baseline's agree on every arm (alpha, beta to 1e-9 relative; n exactly)."""
    position = post.index()
    for arm_id, arm in arms.items():
        j = position[arm_id]
        if int(post.n[j]) != arm.n or not np.isclose(post.alpha[j], arm.alpha, rtol=1e-9, atol=1e-9):
            raise AssertionError(
                f"{what}: {arm_id}: ours alpha={post.alpha[j]} n={post.n[j]}, baseline {arm.alpha} {arm.n}"
            )
        if not np.isclose(post.beta[j], arm.beta, rtol=1e-9, atol=1e-9):
            raise AssertionError(f"{what}: {arm_id}: ours beta={post.beta[j]}, baseline {arm.beta}")
    for arm_id in set(post.arm_ids) - set(arms):
        assert int(post.n[position[arm_id]]) == 0, f"{what}: {arm_id} counted by ours only"


# ------------------------------------------------------------------ cases


def index_cache_supported() -> bool:
    """Whether this engine keeps an on-disk cache of the parsed log (`Workspace(use_cache=...)`)."""
    import inspect

    from lesson_credit.core.workspace import Workspace

    return "use_cache" in inspect.signature(Workspace.__init__).parameters


def drop_index_cache(root: Path) -> None:
    """Delete the workspace's derived log-index cache (state/lesson-thompson/.cache/), as on a first read."""
    shutil.rmtree(root / "state" / "lesson-thompson" / ".cache", ignore_errors=True)
