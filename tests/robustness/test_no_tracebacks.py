"""No input ends in a traceback or exhausts memory: JSON nested 100,000 deep,
`simulate` asked for billions of sessions, extreme priors in config.toml, and cache files far
larger than their log (refused by their size before a byte is read)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from cli_run import run_process
from engine_helpers import BASIC_LESSONS, CONFIG_REL, STATE_REL, make_workspace, session

from lesson_credit.core.log.cache import MIN_NEW_BYTES

DEEP = b'{"arms": {"a.md": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}"


def one_line_refusal(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return str(lines[0])


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path, BASIC_LESSONS, events=[session("s1", 0.8, {"tools/git.md": 0.5})])


def test_import_of_json_nested_100000_deep(ws: Path, tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_bytes(DEEP)
    line = one_line_refusal(run_process("import-gptme", str(deep), cwd=ws))
    assert "deep.json" in line and "nested too deeply" in line


def test_a_deeply_nested_state_file_is_a_warning_not_a_traceback(ws: Path) -> None:
    (ws / STATE_REL).parent.mkdir(parents=True, exist_ok=True)
    for argv in (["lint"], ["status"]):
        (ws / STATE_REL).write_bytes(DEEP)
        done = run_process(*argv, cwd=ws)
        assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr[-2000:]
        assert "bandit-state.json" in done.stderr + done.stdout


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--sessions", "99999999999"], "sessions"),
        (["--seeds", "99999999999"], "seeds"),
        (["--lessons", "99999999999"], "lessons"),
        (["--lessons", "10000", "--sessions", "1000000"], "lessons x sessions"),
        (["--k", "99999999999"], "k"),
    ],
)
def test_simulate_caps_its_size_with_one_line(tmp_path: Path, argv: list[str], said: str) -> None:
    line = one_line_refusal(run_process("simulate", *argv, cwd=tmp_path))
    assert said in line and "at most" in line


@pytest.mark.parametrize("prior", ["alpha = 1e308", "beta = 1e308", "alpha = inf", "alpha = 0", "beta = -1"])
def test_extreme_priors_in_config_are_refused_with_one_line(ws: Path, prior: str) -> None:
    (ws / CONFIG_REL).parent.mkdir(parents=True, exist_ok=True)
    (ws / CONFIG_REL).write_text(f"[prior]\n{prior}\n")
    for command in ("status", "lint"):
        line = one_line_refusal(run_process(command, cwd=ws))
        assert "config.toml" in line and "prior" in line


@pytest.mark.parametrize("name", ["log-index.msgpack", "lessons.msgpack"])
def test_an_oversized_cache_is_refused_by_its_size(tmp_path: Path, name: str) -> None:
    """A sparse 8 GB cache beside a 5 MB log (big enough for the parsed-log cache to be used): read
    whole, it would exceed the subprocess's 3 GB address space (a MemoryError); refused by its size,
    the command works as without a cache."""
    events = [session(f"s{i}", 0.5, {"tools/git.md": 0.5}, timestamp="2026-03-01T00:00:00Z") for i in range(40_000)]
    root = make_workspace(tmp_path, BASIC_LESSONS, events=events)
    assert (root / "state" / "lesson-thompson" / "sessions.jsonl").stat().st_size > MIN_NEW_BYTES
    cache = root / "state" / "lesson-thompson" / ".cache"
    cache.mkdir(parents=True)
    with open(cache / name, "wb") as handle:
        handle.truncate(8 << 30)
    done = run_process("status", "--json", cwd=root)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "MemoryError" not in done.stderr and "Traceback" not in done.stderr
    if name == "log-index.msgpack":  # the parsed-log cache says why it is rebuilt
        assert "log-index.msgpack" in done.stderr and "larger than" in done.stderr, done.stderr
