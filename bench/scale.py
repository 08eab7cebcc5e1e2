"""The scale cases of the performance targets: 3,000 lessons and 1,000,000 logged sessions.

Run from the repository root::

    python -m bench.run --scale              # every scale case (generates bench/.data/scale-* first)
    python -m bench.run --scale --only scale_status

Cases: scale_status (scale_status_cold, scale_status_warm and scale_cache_equivalence:
`lesson-credit status --json` subprocesses without and with the parsed-log cache, wall time
and the child's peak RSS), scale_regrade (scale_regrade_explain, the dashboard's live
preview `Workspace.explain(session, base_reward=x)`, and scale_regrade_fold,
`lesson_credit.core.bandit.fold.regrade`), scale_grade_commit (a grade appended, then the status table again),
and tui (tui_open, tui_sessions_open, tui_grade_keypress on the 100k and the scale
workspaces, in a child process: see bench/tui_probe.py).

The log is written in this tool's own record format (what `Workspace.record` appends:
per lesson path, salience, reward, keywords and the hit keywords), so it is bigger than a
log of bare path/salience/reward records of the same number of sessions.
"""

from __future__ import annotations

import gc
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from bench import baselines
from bench.harness import (
    DATA,
    FULL,
    ROOT,
    SEED,
    SMOKE,
    TECH_WORDS,
    Result,
    Target,
    best_of,
    drop_index_cache,
    finish,
    fmt_mb,
    fmt_time,
    lesson_credit_cmd,
    lesson_file,
    make_phrases,
    params_dir,
    pseudo_words,
    reuse,
    workspace_data,
)

SCALE: dict[str, Any] = {
    "workspace": {
        "lessons": 3000,
        "sessions": 1_000_000,
        "per_session": 10,
        "grades": 50_000,
        "pending": 0.10,
        "format": "lesson-credit-record",
    },
    "runs": {"status_cold": 2, "status_warm": 5, "status_base": 1, "regrade": (20, 3), "commit": 3, "tui": (3, 2)},
    "tui_workspace": FULL["workspace"],  # the dashboard cases also open the 100k workspace of `bench.run`
    "flat": {"lessons": 3000, "small": 10_000, "big": 1_000_000, "rounds": 5, "commits": 5},  # bench/flat.py
}
SCALE_SMOKE: dict[
    str, Any
] = {  # every scale case once on tiny data (`bench.run --smoke`); 3,500 sessions pass the 4 MB cache mark
    "workspace": {**SCALE["workspace"], "lessons": 40, "sessions": 3500, "grades": 100},
    "runs": {"status_cold": 1, "status_warm": 1, "status_base": 1, "regrade": (1, 1), "commit": 1, "tui": (1, 1)},
    "tui_workspace": SMOKE["workspace"],
    "flat": {"lessons": 20, "small": 100, "big": 600, "rounds": 1, "commits": 1},
}
MEMORY_TARGET_MB = 1536.0  # "peak memory stays under 1.5 GB"
CATEGORIES = ["bugfix", "feature", "autonomous-run", "refactor", "review", "docs", "ops"]
MB = 1024 * 1024


def log_path(root: Path) -> Path:
    return root / "state" / "lesson-thompson" / "sessions.jsonl"


# ------------------------------------------------------------------ data


def sample_distinct(rng: np.random.Generator, cdf: np.ndarray, rows: int, per: int, draws: int = 40) -> np.ndarray:
    """`per` distinct indices per row, drawn by weight without replacement.

    Draw with replacement and keep the first `per` distinct values of each row: that is
    successive sampling without replacement, the same distribution as Gumbel top-k, at
    O(draws) per row instead of O(lessons). Rows with too few distinct draws are redrawn.
    """
    out = np.empty((rows, per), dtype=np.int64)
    todo = np.arange(rows)
    while len(todo):
        picks = np.minimum(np.searchsorted(cdf, rng.random((len(todo), draws)), side="right"), len(cdf) - 1)
        order = np.argsort(picks, axis=1, kind="stable")
        ranked = np.take_along_axis(picks, order, axis=1)
        first_sorted = np.ones_like(ranked, dtype=bool)
        first_sorted[:, 1:] = ranked[:, 1:] != ranked[:, :-1]
        first = np.empty_like(first_sorted)
        np.put_along_axis(first, order, first_sorted, axis=1)
        keep = first & (np.cumsum(first, axis=1) <= per)
        ok = keep.sum(axis=1) == per
        out[todo[ok]] = picks[ok][keep[ok]].reshape(-1, per)
        todo = todo[~ok]
    return out


def scale_workspace_data(params: dict[str, Any]) -> Path:
    """A workspace with `lessons` lesson files and `sessions` session records in this tool's format."""
    path, full = params_dir("scale", params)
    if reuse(path, full):
        return path
    t0 = time.perf_counter()
    free = shutil.disk_usage(DATA).free
    need = params["sessions"] * params["per_session"] * 160  # bytes, generous
    if free < 2 * need:
        raise RuntimeError(f"{free / 1e9:.1f} GB free in {DATA}: the scale workspace needs ~{need / 1e9:.1f} GB")
    print(f"generating scale workspace {path.name} (a few minutes) ...", file=sys.stderr, flush=True)
    shutil.rmtree(path, ignore_errors=True)
    rng = np.random.default_rng(SEED + 2)
    n_lessons, n_sessions, per = params["lessons"], params["sessions"], params["per_session"]
    ids = [f"cat{i % 8}/lesson-{i}.md" for i in range(n_lessons)]

    vocab = TECH_WORDS + pseudo_words(rng, 1500)
    n_keywords = rng.integers(3, 8, size=n_lessons)  # 3-7 keywords: saliences like 2/7 in full precision
    phrases = make_phrases(rng, vocab, int(n_keywords.sum()))
    starts = np.concatenate([[0], np.cumsum(n_keywords)])
    keywords = [phrases[starts[i] : starts[i + 1]] for i in range(n_lessons)]
    for i, lesson_id in enumerate(ids):
        file = path / "lessons" / lesson_id
        file.parent.mkdir(parents=True, exist_ok=True)
        kws = keywords[i]
        body = f"## Rule\nWhen you see {kws[0]!r}, check {kws[-1]!r} first.\n\n## Context\n" + " ".join(
            rng.choice(vocab, size=60)
        )
        file.write_text(lesson_file(f"Lesson {i}", kws, f"Generated lesson {i}.", body))
    print(f"  {n_lessons:,} lesson files ({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)

    popularity = 1.0 / (np.arange(n_lessons) + 20.0) ** 0.9
    weights = rng.permutation(popularity / popularity.sum())
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    graded = rng.random(n_sessions) >= params["pending"]
    base = np.round(rng.beta(2.0, 2.0, size=n_sessions), 3)
    session_ids = [f"s{i:07d}-{int(x):08x}" for i, x in enumerate(rng.integers(0, 2**32, size=n_sessions))]
    epoch = np.datetime64("2025-01-01T00:00:00", "s")
    category = rng.integers(0, len(CATEGORIES), size=n_sessions)

    n_grades = params["grades"]
    grade_at = np.sort(rng.integers(0, n_sessions, size=n_grades))
    grade_target = (rng.random(n_grades) * (grade_at + 1)).astype(np.int64)
    grade_value = np.round(rng.random(n_grades), 2)
    grade_by = rng.choice(["manual", "judge"], size=n_grades)

    log = log_path(path)
    log.parent.mkdir(parents=True, exist_ok=True)
    encode = (
        msgspec.json.encode
    )  # what lesson_credit.core.log.events.encode writes: compact JSON, floats in full precision
    counted = [len(k) for k in keywords]
    doubled = [k + k for k in keywords]
    g = 0
    chunk = 50_000
    with open(log, "wb") as out:
        for begin in range(0, n_sessions, chunk):
            stop = min(n_sessions, begin + chunk)
            rows = stop - begin
            chosen = sample_distinct(rng, cdf, rows, per).tolist()
            hit_p = rng.beta(2.0, 4.0, size=(rows, per))  # sessions differ in how much of a lesson they touch
            hits_n = rng.binomial(np.asarray(counted)[np.asarray(chosen)], hit_p).tolist()
            offset = rng.integers(0, 7, size=(rows, per)).tolist()
            stamps = np.datetime_as_string(epoch + 300 * np.arange(begin, stop), unit="s", timezone="UTC").tolist()
            lines = []
            for r in range(rows):
                i = begin + r
                b = float(base[i]) if graded[i] else None
                entries = []
                for j in range(per):
                    lesson = chosen[r][j]
                    k, h = counted[lesson], hits_n[r][j]
                    salience = h / k
                    w = 0.3 + 0.7 * salience
                    start = offset[r][j] % k
                    entries.append(
                        {
                            "path": ids[lesson],
                            "salience": salience,
                            "reward": None if b is None else b * w,
                            "keywords": k,
                            "hits": doubled[lesson][start : start + h],
                        }
                    )
                record = {
                    "type": "session",
                    "session_id": session_ids[i],
                    "timestamp": stamps[r],
                    "outcome": b,
                    "base_reward": b,
                    "lessons": entries,
                    "category": CATEGORIES[category[i]],
                    "strategy": "seed",
                    "floor": 0.3,
                    "grader": "heuristic" if b is not None else None,
                }
                lines.append(encode(record))
                while g < n_grades and grade_at[g] == i:
                    grade = {
                        "type": "grade",
                        "session_id": session_ids[grade_target[g]],
                        "base_reward": float(grade_value[g]),
                        "grader": str(grade_by[g]),
                        "timestamp": stamps[r],
                    }
                    lines.append(encode(grade))
                    g += 1
            out.write(b"\n".join(lines) + b"\n")
            if stop % 200_000 == 0 or stop == n_sessions:
                print(
                    f"  {stop:,} / {n_sessions:,} sessions, {out.tell() / 1e6:,.0f} MB "
                    f"({time.perf_counter() - t0:.0f} s)",
                    file=sys.stderr,
                    flush=True,
                )
    (path / "log-bytes.txt").write_text(f"{log.stat().st_size}\n")
    finish(path, full)
    print(f"  done in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return path


def check_log_unchanged(root: Path) -> None:
    """The cases append nothing (the commit case truncates its grade away again): fail loudly if they did."""
    expected = int((root / "log-bytes.txt").read_text())
    actual = log_path(root).stat().st_size
    if actual != expected:
        raise RuntimeError(f"{log_path(root)} is {actual} bytes, generated as {expected}: delete {root} to regenerate")


def cache_file(root: Path) -> Path:
    return root / "state" / "lesson-thompson" / ".cache" / "derived-log.sqlite"


def cache_valid(root: Path) -> bool:
    """Whether the engine as it is now would use the cache on disk (not one of an older cache version)."""
    from lesson_credit.core.log.cache import LogCache
    from lesson_credit.core.log.store import EventLog

    return cache_file(root).exists() and LogCache(EventLog(log_path(root))).load() is not None


def ensure_cache(root: Path) -> None:
    """Leave the workspace as every read after the first finds it: with a valid parsed-log cache."""
    if not cache_valid(root):
        print(f"  writing the parsed-log cache of {root.name} (untimed) ...", file=sys.stderr, flush=True)
        drop_index_cache(root)
        run_measured([*lesson_credit_cmd(), "status", "--json", "--workspace", str(root)])


def generate(names: list[str], sizes: dict[str, Any]) -> None:
    """Generate (or reuse) every data set the selected cases need, before any timing."""
    scale_workspace_data(sizes["workspace"])
    if "tui" in names:
        workspace_data(sizes["tui_workspace"])


# ------------------------------------------------------------------ measuring


class Run:
    """One child process: wall time, peak RSS (its own, from wait4), output."""

    def __init__(self, seconds: float, rss_mb: float, returncode: int, stdout: bytes, stderr: bytes) -> None:
        self.seconds = seconds
        self.rss_mb = rss_mb
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr


TIME = Path("/usr/bin/time")


def run_measured(cmd: list[str], cwd: Path | None = None) -> Run:
    """Run `cmd`; its wall time and its own peak RSS.

    The RSS comes from GNU time (`-f %M`), which forks the command from its own small process.
    Not from this process's rusage: Python spawns children with vfork, and Linux carries the
    spawning process's RSS high-water mark into the child's ru_maxrss across exec, so a child
    of a bench process that holds the baseline's parsed log (~7 GB) would report ~7 GB.
    Without /usr/bin/time, os.wait4's rusage of the child is used (exact only while this
    process is small, as it is in the status case, which runs first).
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile() as rss:
        wrapped = [str(TIME), "-f", "%M", "-o", rss.name, *cmd] if TIME.exists() else cmd
        start = time.perf_counter()
        proc = subprocess.Popen(wrapped, stdout=out, stderr=err, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        out.seek(0)
        err.seek(0)
        rss_mb = usage.ru_maxrss / 1024
        if TIME.exists():
            text = Path(rss.name).read_text().split()
            rss_mb = int(text[-1]) / 1024 if text and text[-1].isdigit() else math.nan
        run = Run(seconds, rss_mb, proc.returncode, out.read(), err.read())
    if run.returncode != 0:
        tail = run.stderr.decode(errors="replace")[-2000:]
        raise RuntimeError(f"{' '.join(cmd)} exited {run.returncode}: {tail}")
    return run


def peak_rss_self_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_now_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MB


_status_baseline: dict[Path, list[Run]] = {}  # root -> runs of the baseline `status` subprocess
_parsed: dict[Path, tuple[list[dict[str, Any]], dict[str, float]]] = {}  # root -> baselines.read_log
_refold: dict[Path, list[float]] = {}  # root -> times of the baseline's full re-fold after one regrade


def status_baseline(root: Path, runs: int) -> list[Run]:
    """`python -c status_main(log)`: json.loads per line, a per-record fold, a table (GC on, as written)."""
    if root not in _status_baseline:
        script = (
            f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
            "from bench.baselines import status_main; status_main(sys.argv[1])"
        )
        done = []
        for i in range(runs):
            print(f"  baseline status on {root.name} ({i + 1}/{runs}) ...", file=sys.stderr, flush=True)
            done.append(run_measured([sys.executable, "-c", script, str(log_path(root))]))
        _status_baseline[root] = done
    return _status_baseline[root]


def parsed_log(root: Path) -> tuple[list[dict[str, Any]], dict[str, float], float | None]:
    """The baseline's parsed form of the log (list of dicts), parsed once per run; the parse time."""
    if root in _parsed:
        return (*_parsed[root], None)
    for other in list(_parsed):
        del _parsed[other]  # one parsed log at a time: the scale one is ~7 GB of dicts
    print(f"  baseline parse of {root.name} in-process (json.loads per line) ...", file=sys.stderr, flush=True)
    start = time.perf_counter()
    records, grades = baselines.read_log(str(log_path(root)))
    seconds = time.perf_counter() - start
    _parsed[root] = (records, grades)
    return records, grades, seconds


def refold_baseline(root: Path, session_id: str, runs: int) -> tuple[list[float], Any]:
    """The straightforward update after one regrade: the full per-record fold over the parsed dicts."""
    records, grades, _ = parsed_log(root)
    values = iter([0.1 * (1 + i % 9) for i in range(1000)])

    def refold(value: float) -> Any:
        regraded = dict(grades)
        regraded[session_id] = value
        return baselines.fold_records(records, regraded)

    times, arms = best_of(refold, runs, lambda: next(values))
    _refold[root] = times
    return times, arms


def parse_table(text: str) -> dict[str, tuple[int, float, float]]:
    """The baseline status table: lesson -> (n, alpha, beta), alpha and beta to 2 decimals."""
    rows = {}
    for line in text.splitlines()[2:]:
        parts = line.split()
        if len(parts) == 5:
            rows[parts[0]] = (int(parts[1]), float(parts[2]), float(parts[3]))
    return rows


def compare_status(ours: dict[str, Any], table: dict[str, tuple[int, float, float]]) -> list[str]:
    """Where `status --json` and the baseline's table disagree (n exactly, alpha/beta to the table's 2 decimals)."""
    by_path = {row["path"]: row for row in ours["lessons"]}
    bad = []
    for path, (n, alpha, beta) in table.items():
        row = by_path.get(path)
        if row is None or row["n"] != n or abs(row["alpha"] - alpha) > 0.0051 or abs(row["beta"] - beta) > 0.0051:
            bad.append(f"{path}: ours {row and (row['n'], row['alpha'], row['beta'])}, baseline {(n, alpha, beta)}")
    return bad


def compare_arms(rows: dict[str, tuple[int, float, float]], arms: dict[str, baselines.Arm]) -> list[str]:
    """Exact comparison (1e-9 relative) of (n, alpha, beta) per lesson with the baseline's arms."""
    bad = []
    for path, arm in arms.items():
        n, alpha, beta = rows.get(path, (-1, math.nan, math.nan))
        same = math.isclose(alpha, arm.alpha, rel_tol=1e-9) and math.isclose(beta, arm.beta, rel_tol=1e-9)
        if n != arm.n or not same:
            bad.append(f"{path}: ours {(n, alpha, beta)}, baseline {(arm.n, arm.alpha, arm.beta)}")
    return bad


# ------------------------------------------------------------------ phases (run in a child: python -m bench.scale)


def phases(root: Path, cold: bool) -> dict[str, Any]:
    """Where `status` spends its time and memory: (seconds, RSS now, peak RSS) after each step."""
    import gc

    out: dict[str, Any] = {}
    t = time.perf_counter()

    def mark(name: str) -> None:
        nonlocal t
        now = time.perf_counter()
        out[name] = {"s": round(now - t, 4), "rss_mb": round(rss_now_mb()), "peak_mb": round(peak_rss_self_mb())}
        t = time.perf_counter()

    mark("start")
    from lesson_credit.core.model import beta as beta_mod
    from lesson_credit.core.workspace import Workspace

    mark("import lesson_credit.core.workspace")
    if cold:
        from lesson_credit.core.log import logcheck
        from lesson_credit.core.log.cache import LogCache
        from lesson_credit.core.log.events import decode_raw, decode_raw_lines
        from lesson_credit.core.log.index import LogIndex
        from lesson_credit.core.log.store import EventLog

        ws = Workspace(root, use_cache=False)
        log = ws.log
        assert isinstance(log, EventLog)  # the workspace's own JSONL file
        with open(log.path, "rb") as handle:
            raw = handle.read()
        mark("read the log bytes (page cache)")
        pieces = raw.split(b"\n")
        mark("bytes.split into lines")
        del raw, pieces
        mark("free them")
        gc.disable()  # as Workspace.refresh does while it parses
        index = LogIndex()
        for result in log.read_chunks(0, 1, decode=decode_raw, decode_lines=decode_raw_lines):
            index.problems.extend(result.problems + index.add_many(result.events, result.offsets))
            index.end, index.lines = result.end, index.lines + result.lines
        del result
        mark("EventLog.read_chunks + LogIndex.add_many: decode and add 32 MB at a time")
        gc.enable()
        digest = logcheck.digest_of(log, index.end)
        assert digest is not None  # the index ends inside the log it was read from
        LogCache(log).save(index, digest.hexdigest(), False)
        mark("LogCache.save: msgpack encode + write")
        drop_index_cache(root)  # written outside the engine's own path: never left for a timed read
        return out
    ws = Workspace(root)
    ws.refresh()
    mark("Workspace.refresh(): load the parsed-log cache")
    ws.library()
    mark("library(): 3,000 lesson files")
    ws.data()
    mark("data(): LogIndex.snapshot()")
    post = ws.posterior()
    mark("posterior(): fold (arm_stats over the entries)")
    beta_mod.interval(post.alpha, post.beta)
    mark("beta.interval (scipy import + quantiles)")
    # what cmd_status asks for: no reward counts and last sessions (status does not print them)
    table = ws.lesson_table(details=False)
    mark("lesson_table(details=False): rows (interval again)")
    json.dumps(table.as_json(), indent=2)
    mark("json.dumps of the output")
    return out


def run_phases(root: Path, cold: bool) -> tuple[dict[str, Any], float]:
    """The phases, from a child process (it fails the run when the engine's internals they call moved)."""
    cmd = [sys.executable, "-m", "bench.scale", "phases", "--workspace", str(root)] + (["--cold"] if cold else [])
    run = run_measured(cmd, cwd=ROOT)
    line = next(x for x in run.stdout.decode().splitlines() if x.startswith("PHASES "))
    return json.loads(line[len("PHASES ") :]), run.rss_mb


def phases_text(steps: dict[str, Any]) -> str:
    if not steps:
        return "unavailable"
    return "; ".join(f"{name} {fmt_time(v['s'])} (RSS {v['rss_mb']} MB)" for name, v in steps.items() if v["s"] > 0.05)


# ------------------------------------------------------------------ cases


COLD_TARGET_S = 10.0  # a first read of a million sessions (no cache), wall time


def case_scale_status(sizes: dict[str, Any]) -> list[Result]:
    """`lesson-credit status --json` without the cache (cold), with it (warm), and the two outputs compared."""
    root = scale_workspace_data(sizes["workspace"])
    check_log_unchanged(root)
    runs = sizes["runs"]
    log = log_path(root)
    cmd = [*lesson_credit_cmd(), "status", "--json", "--workspace", str(root)]
    what = (
        f"`lesson-credit status --json --workspace WS` subprocess: {sizes['workspace']['lessons']:,} lesson files, "
        f"{sizes['workspace']['sessions']:,} sessions x {sizes['workspace']['per_session']} lessons, "
        f"{sizes['workspace']['grades']:,} grades, {log.stat().st_size / 1e9:.2f} GB log (in the page cache)"
    )

    print("  phases of a cold status (child process) ...", file=sys.stderr, flush=True)
    cold_phases, cold_phases_rss = run_phases(root, cold=True)
    cold = []
    for i in range(runs["status_cold"]):
        drop_index_cache(root)
        print(f"  status, cache deleted ({i + 1}/{runs['status_cold']}) ...", file=sys.stderr, flush=True)
        cold.append(run_measured(cmd))
    cache = cache_file(root)
    failed_cache = [] if cache.exists() else ["no cache written"]
    before = cache.stat()
    warm = [run_measured(cmd) for _ in range(runs["status_warm"])]
    after = cache.stat()
    reused = (before.st_ino, before.st_mtime_ns, before.st_size) == (after.st_ino, after.st_mtime_ns, after.st_size)
    warm_phases, _ = run_phases(root, cold=False)
    base = status_baseline(root, runs["status_base"])
    base_times = [r.seconds for r in base]
    base_rss = max(r.rss_mb for r in base)
    baseline_name = "python -c json.loads loop fold + table"

    outputs = [json.loads(r.stdout) for r in cold + warm]
    differ = [i for i, o in enumerate(outputs) if o != outputs[0]]
    vs_baseline = compare_status(outputs[0], parse_table(base[0].stdout.decode()))
    n_rows = len(outputs[0]["lessons"])
    checks = []
    if n_rows < sizes["workspace"]["lessons"]:
        checks.append(f"{n_rows} rows")
    if vs_baseline:
        checks.append("differs from baseline")
        print("  status vs baseline:", *vs_baseline[:5], sep="\n    ", file=sys.stderr)

    cold_rss = max(r.rss_mb for r in cold)
    warm_rss = max(r.rss_mb for r in warm)
    common = {"baseline_peak_rss_mb": base_rss, "cache_bytes": cache.stat().st_size, "log_bytes": log.stat().st_size}
    over = f" ABOVE the target {fmt_mb(MEMORY_TARGET_MB)}" if cold_rss >= MEMORY_TARGET_MB else ""
    results = [
        Result(
            "scale_status_cold",
            [r.seconds for r in cold],
            base_times,
            baseline_name,
            Target(COLD_TARGET_S),
            f"{what}; parsed-log cache deleted before each run (parse + fold + cache write); peak RSS "
            f"{fmt_mb(cold_rss)}{over}; baseline peak RSS {fmt_mb(base_rss)}. Phases (in a child, peak "
            f"{fmt_mb(cold_phases_rss)}): {phases_text(cold_phases)}",
            {**common, "runs_peak_rss_mb": [r.rss_mb for r in cold], "phases": cold_phases},
            rss_mb=cold_rss,
            failed=checks + failed_cache,
        ),
        Result(
            "scale_status_warm",
            [r.seconds for r in warm],
            base_times,
            baseline_name,
            Target(2.0, max_rss_mb=MEMORY_TARGET_MB),
            f"{what}; cache present ({cache.stat().st_size / 1e6:.0f} MB"
            + (", not rewritten by these runs" if reused else ", REWRITTEN by a warm run")
            + f"). Phases (in a child): {phases_text(warm_phases)}",
            {**common, "runs_peak_rss_mb": [r.rss_mb for r in warm], "phases": warm_phases},
            rss_mb=warm_rss,
            failed=checks + ([] if reused else ["cache rewritten"]),
        ),
        Result(
            "scale_cache_equivalence",
            [r.seconds for r in warm],
            [r.seconds for r in cold],
            "the same command with the cache deleted",
            Target(math.inf, check="identical output"),
            f"`status --json` of {len(cold)} runs without the cache and {len(warm)} with it: "
            + ("byte-for-byte the same numbers (parsed JSON equal, floats exact)" if not differ else "DIFFERENT")
            + f"; {n_rows:,} lessons; also equal to the baseline's table (n exact, alpha/beta to its 2 decimals): "
            + ("yes" if not vs_baseline else f"NO, {len(vs_baseline)} lessons differ"),
            {"identical": not differ},
            failed=(["numbers differ"] if differ else []) + (["differs from baseline"] if vs_baseline else []),
        ),
    ]
    check_log_unchanged(root)
    return results


def measure_preview(root: Path, runs: int) -> dict[str, Any]:
    """Load the workspace (cache warm), then time explain(..., base_reward=x) and regrade() for a pending session."""
    from lesson_credit.core.bandit.fold import regrade
    from lesson_credit.core.workspace import Workspace

    start = time.perf_counter()
    ws = Workspace(root)
    data = ws.data()
    current = ws.posterior()
    table = ws.lesson_table()
    load_s = time.perf_counter() - start
    pending = np.flatnonzero(np.isnan(data.base))
    row = int(pending[len(pending) // 2])
    session_id = ws.session_table().session_ids[row]
    cycle = iter([0.1 * (1 + i % 9) for i in range(10_000)])  # every timed call previews another value
    explain_times, _ = best_of(
        lambda x: ws.explain(session_id, base_reward=x, with_journal=False), runs, lambda: next(cycle)
    )
    regrade_times, _ = best_of(lambda x: regrade(current, row, x), runs, lambda: next(cycle))
    return {
        "session_id": session_id,
        "row": row,
        "load_s": load_s,
        "explain_times": explain_times,
        "regrade_times": regrade_times,
        "explained": ws.explain(session_id, base_reward=0.7, with_journal=False),
        "regraded": regrade(current, row, 0.7),
        "status_rows": {r.path: (r.n, r.alpha, r.beta) for r in table.rows},
    }


def case_scale_regrade(sizes: dict[str, Any]) -> list[Result]:
    """In-process, the log parsed (cache warm): the dashboard's live preview, the fold's regrade, a committed grade."""
    from lesson_credit.core.log.stores import prepare
    from lesson_credit.core.workspace import Workspace

    root = scale_workspace_data(sizes["workspace"])
    check_log_unchanged(root)
    ensure_cache(root)
    log = log_path(root)
    n_ours, n_base = sizes["runs"]["regrade"]
    rss_start = rss_now_mb()
    preview = measure_preview(root, n_ours)
    session_id, row = preview["session_id"], preview["row"]
    explain_times, regrade_times, load_s = preview["explain_times"], preview["regrade_times"], preview["load_s"]
    explained, regraded, status_rows = preview["explained"], preview["regraded"], preview["status_rows"]
    rss_preview = peak_rss_self_mb()

    # A committed grade: append it (Workspace.grade: lock, append, refresh, rewrite bandit-state.json),
    # then what the dashboard shows next: the session's explanation and the lessons table. The log is
    # truncated back afterwards (the cache covers the original bytes, so it stays valid).
    size = log.stat().st_size
    state = root / "state" / "lesson-thompson" / "bandit-state.json"
    commit_times, grade_times = [], []
    after_commit: dict[str, tuple[int, float, float]] = {}
    for i in range(sizes["runs"]["commit"]):
        ws = Workspace(root)
        # what the dashboard has done before a grade is committed: the Lessons table, the Sessions
        # screen, and the session's detail screen (where the grade is typed and committed)
        ws.lesson_table()
        ws.session_table()
        ws.explain(session_id)
        prepare(ws.log)  # the dashboard imports the lock's module at start-up, not on the first grade
        value = round(0.55 + 0.05 * i, 2)
        gc.collect()  # as best_of does before each run: garbage of the steps above is not the grade's
        try:
            t0 = time.perf_counter()
            ws.grade(session_id, value, grader="manual", note="bench")
            t1 = time.perf_counter()
            ws.explain(session_id)
            committed = ws.lesson_table()
            t2 = time.perf_counter()
        finally:
            os.truncate(log, size)
            state.unlink(missing_ok=True)
        grade_times.append(t1 - t0)
        commit_times.append(t2 - t0)
        after_commit = {r.path: (r.n, r.alpha, r.beta) for r in committed.rows}
        del ws, committed
    commit_value = round(0.55 + 0.05 * (sizes["runs"]["commit"] - 1), 2)
    check_log_unchanged(root)
    rss_ours = peak_rss_self_mb()

    records, grades, parse_s = parsed_log(root)
    assert records[row]["session_id"] == session_id, "rows are sessions in file order, as in the baseline's list"
    base_times, _ = refold_baseline(root, session_id, n_base)
    rss_base = peak_rss_self_mb()
    failed = []
    regraded_rows = {
        arm: (int(regraded.n[j]), float(regraded.alpha[j]), float(regraded.beta[j]))
        for j, arm in enumerate(regraded.arm_ids)
    }
    at_07 = baselines.fold_records(records, {**grades, session_id: 0.7})
    bad_fold = compare_arms(regraded_rows, at_07)
    explain_rows = {c.path: (at_07[c.path].n, c.alpha_after, c.beta_after) for c in explained.lessons}
    bad_explain = compare_arms(explain_rows, {c.path: at_07[c.path] for c in explained.lessons})
    bad_status = compare_arms(status_rows, baselines.fold_records(records, grades))
    bad_commit = compare_arms(after_commit, baselines.fold_records(records, {**grades, session_id: commit_value}))
    for name, bad in (("regrade", bad_fold), ("explain", bad_explain), ("status", bad_status), ("commit", bad_commit)):
        if bad:
            failed.append(f"{name} differs from baseline")
            print(f"  {name} vs baseline:", *bad[:5], sep="\n    ", file=sys.stderr)

    parse_text = f"; the baseline's json.loads parse of the log took {parse_s:.0f} s" if parse_s else ""
    context = (
        f"pending session {session_id} (row {row:,} of {len(records):,}), drafts cycling 0.1-0.9; Workspace "
        f"loaded from the cache in {load_s:.1f} s (data + posterior + posteriors); bench process peak RSS "
        f"{fmt_mb(rss_start)} before, {fmt_mb(rss_preview)} after loading and previewing"
    )
    refold_name = "full re-fold over parsed dicts"
    return [
        Result(
            "scale_regrade_explain",
            explain_times,
            base_times,
            refold_name,
            Target(0.100),
            f"Workspace.explain(session, base_reward=x, with_journal=False): the dashboard's live preview; {context}; "
            f"credits checked against the baseline's re-fold{parse_text}",
            {"session_id": session_id, "load_s": load_s, "baseline_parse_s": parse_s},
            rss_mb=rss_preview,
            failed=[f for f in failed if f.startswith(("explain", "status"))],
        ),
        Result(
            "scale_regrade_fold",
            regrade_times,
            base_times,
            refold_name,
            Target(0.100),
            "core.bandit.fold.regrade(posterior, row, x): that session's entries only; checked against the re-fold",
            {"session_id": session_id},
            failed=[f for f in failed if f.startswith("regrade")],
        ),
        Result(
            "scale_grade_commit",
            commit_times,
            base_times,
            refold_name + " (append not counted)",
            Target(0.100),
            "after posteriors(), session_table() and explain(session) (the dashboard's Lessons, Sessions and "
            "detail screens), Workspace.grade(session, x) (lock, append, refresh, fold, write bandit-state.json; "
            f"{fmt_time(min(grade_times))} of it) + explain(session) + posteriors(): a committed grade until "
            "the dashboard's detail and lessons views are current; log truncated back after each run; "
            f"table checked against the re-fold; bench process peak RSS {fmt_mb(rss_ours)} before the baseline's "
            f"parse, {fmt_mb(rss_base)} after",
            {"grade_s": grade_times},
            failed=[f for f in failed if f.startswith("commit")],
        ),
    ]


def tui_available() -> str | None:
    """None when the dashboard can be benchmarked, else why not."""
    app = ROOT / "tui" / "app.py"
    if not app.exists() or "class LessonCreditApp" not in app.read_text():
        return "tui/app.py has no LessonCreditApp"
    try:
        import textual  # noqa: F401
    except ImportError:
        return "textual is not installed"
    return None


def case_tui(sizes: dict[str, Any]) -> list[Result]:
    """The dashboard, headless in a child process (bench/tui_probe.py): open, sessions, a draft grade keypress."""
    reason = tui_available()
    if reason is not None:
        print(f"  tui cases skipped: {reason}", file=sys.stderr)
        return []
    results = []
    big_runs, scale_runs = sizes["runs"]["tui"]
    for label, root, runs in (
        ("", workspace_data(sizes["tui_workspace"]), big_runs),
        ("_scale", scale_workspace_data(sizes["workspace"]), scale_runs),
    ):
        ensure_cache(root)
        probes = []
        for i in range(runs):
            print(f"  dashboard on {root.name} ({i + 1}/{runs}) ...", file=sys.stderr, flush=True)
            cmd = [sys.executable, "-m", "bench.tui_probe", "--workspace", str(root), "--t0", str(time.perf_counter())]
            run = run_measured(cmd, cwd=ROOT)
            line = next(x for x in run.stdout.decode().splitlines() if x.startswith("TUI-PROBE "))
            probes.append((json.loads(line[len("TUI-PROBE ") :]), run.rss_mb))
        rss = max(r for _, r in probes)
        base = status_baseline(root, 1)
        base_times = [r.seconds for r in base]
        n_sessions = probes[0][0]["sessions_in_view"]
        where = f"{probes[0][0]['lessons_rows']:,} lessons, {n_sessions:,} sessions, cache warm"

        def stall(key: str, probes: list[tuple[dict[str, Any], float]] = probes) -> list[str]:
            longest = max(p[key] for p, _ in probes)
            return [f"UI blocked {longest:.2f} s"] if longest >= STALL_LIMIT_S else []

        def worst(key: str, probes: list[tuple[dict[str, Any], float]] = probes) -> str:
            return fmt_time(max(p[key] for p, _ in probes))

        results.append(
            Result(
                "tui_open" + label,
                [p["open_from_launch"] for p, _ in probes],
                base_times,
                "status baseline subprocess (json.loads loader)",
                Target(3.0, max_rss_mb=MEMORY_TARGET_MB),
                f"{where}: `python -m bench.tui_probe` launched until the Lessons table shows its first rows "
                f"(run_test headless, 200x60); from App() {fmt_time(min(p['open_from_app'] for p, _ in probes))}, "
                f"until idle {fmt_time(min(p['open_idle_from_app'] for p, _ in probes))}, every row in the table "
                f"{fmt_time(min(p.get('filled_from_app', math.nan) for p, _ in probes))}; longest event-loop stall "
                f"while opening {worst('open_stall')} (responsive: < {fmt_time(STALL_LIMIT_S)}); peak RSS of the "
                "dashboard process over the whole probe (open, sessions, detail, drafts)",
                {"probes": [p for p, _ in probes], "probe_peak_rss_mb": [r for _, r in probes]},
                rss_mb=rss,
                failed=stall("open_stall"),
            )
        )
        results.append(
            Result(
                "tui_sessions_open" + label,
                [p["sessions_open"] for p, _ in probes],
                base_times,
                "status baseline subprocess (json.loads loader)",
                Target(3.0),
                f"{where}: `s` pressed until the Sessions table has rows (WorkspaceSource.sessions_view: one "
                f"SessionSummary per session); longest stall {worst('sessions_stall')}; detail screen of a pending "
                f"session opened in {fmt_time(min(p['detail_open'] for p, _ in probes))} "
                f"(stall {worst('detail_stall')})",
                rss_mb=rss,
                failed=stall("sessions_stall"),
            )
        )
        if not all("keypress" in p for p, _ in probes):
            print(f"  keypress skipped on {root.name}: {probes[0][0].get('keypress_skipped')}", file=sys.stderr)
            continue
        session_id = probes[0][0]["detail_session"]
        refold_times = _refold.get(root) or refold_baseline(root, session_id, 3)[0]
        presses = [k for p, _ in probes for k in p["keypress"]]
        results.append(
            Result(
                "tui_grade_keypress" + label,
                [k["credits"] for k in presses],
                refold_times,
                "full re-fold over parsed dicts",
                Target(0.100),
                f"{where}: session detail of pending {session_id}; a digit pressed (pilot.press) until the credits "
                f"table shows that draft's rewards ({len(presses)} presses over {len(probes)} runs); longest stall "
                f"{worst('keypress_stall')}",
                rss_mb=rss,
            )
        )
        results.append(
            Result(
                "tui_grade_plot" + label,
                [k["plot"] for k in presses],
                refold_times,
                "full re-fold over parsed dicts",
                Target(0.250),
                f"{where}: the same presses until the Beta plot's render() ran with the draft's after-curve",
                rss_mb=rss,
            )
        )
    return results


STALL_LIMIT_S = 0.25  # "stays responsive": the event loop never blocked this long


def _read_pg_scale(sizes: dict[str, Any]) -> list[Result]:
    from bench.pg import case_read_pg_scale  # psycopg and a server only when this case runs

    results: list[Result] = case_read_pg_scale(scale_workspace_data(sizes["workspace"]))
    return results


SCALE_CASES = {
    "scale_status": case_scale_status,  # scale_status_cold, scale_status_warm, scale_cache_equivalence
    "scale_regrade": case_scale_regrade,  # scale_regrade_explain, scale_regrade_fold, scale_grade_commit
    "tui": case_tui,  # tui_open, tui_sessions_open, tui_grade_keypress, tui_grade_plot (100k and _scale)
    "scale_read_pg": lambda sizes: _read_pg_scale(sizes),  # the 1M log read from PostgreSQL vs the file
}  # (bench.run adds bench/flat.py's flat and tui_live: 10k against 1M sessions)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench.scale", description="helpers of the scale cases")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("phases", help="time the steps of `status` in this process; prints PHASES {json}")
    p.add_argument("--workspace", required=True, type=Path)
    p.add_argument("--cold", action="store_true", help="the parse path, without the cache (deletes it)")
    sub.add_parser("generate", help="generate (or reuse) the scale workspace; prints its path")
    args = parser.parse_args(argv)
    if args.command == "phases":
        print("PHASES " + json.dumps(phases(args.workspace.resolve(), args.cold)))
    else:
        print(scale_workspace_data(SCALE["workspace"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
