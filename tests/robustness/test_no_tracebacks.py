"""No input ends in a traceback or exhausts memory: JSON nested 100,000 deep,
`simulate` asked for billions of sessions, extreme priors in config.toml, and cache files far
larger than their log (refused by their size before a byte is read)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from lesson_credit.core.base.sealed import seal, unseal
from lesson_credit.core.log.cache import CACHE_MAGIC, MIN_NEW_BYTES
from tests.support import derived_cache
from tests.support.cli_run import process_env, run_process
from tests.support.derived_cache import DB_NAME
from tests.support.engine_helpers import BASIC_LESSONS, CONFIG_REL, STATE_REL, make_workspace, session

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
def test_simulate_caps_its_size_with_a_usage_error(tmp_path: Path, argv: list[str], said: str) -> None:
    done = run_process("simulate", *argv, cwd=tmp_path)  # an option's value out of range: the command line
    assert done.returncode == 2 and "Traceback" not in done.stderr, (done.returncode, done.stderr[-2000:])
    assert done.stderr.startswith("usage: lesson-credit simulate ")
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("lesson-credit simulate: error: ") and said in line and "at most" in line


@pytest.mark.parametrize("prior", ["alpha = 1e308", "beta = 1e308", "alpha = inf", "alpha = 0", "beta = -1"])
def test_extreme_priors_in_config_are_refused_with_one_line(ws: Path, prior: str) -> None:
    (ws / CONFIG_REL).parent.mkdir(parents=True, exist_ok=True)
    (ws / CONFIG_REL).write_text(f"[prior]\n{prior}\n")
    for command in ("status", "lint"):
        line = one_line_refusal(run_process(command, cwd=ws))
        assert "config.toml" in line and "prior" in line


@pytest.mark.parametrize("name", [DB_NAME, "lessons.msgpack"])
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
    if name == DB_NAME:  # the parsed-log cache says why it is rebuilt
        assert DB_NAME in done.stderr and "larger than" in done.stderr, done.stderr


def _cached_workspace(tmp_path: Path) -> Path:
    """A 5 MB log whose parsed-log cache (head, parts and block sums) a first `status` wrote."""
    events = [session(f"s{i}", 0.5, {"tools/git.md": 0.5}, timestamp="2026-03-01T00:00:00Z") for i in range(40_000)]
    root = make_workspace(tmp_path, BASIC_LESSONS, events=events)
    assert run_process("status", cwd=root).returncode == 0
    return root


def _peak_rss_mb(root: Path, *argv: str) -> float:
    """`lesson-credit ARGV` in a fresh process: its peak resident memory in MB. VmHWM belongs to the
    process's own address space (ru_maxrss would carry the forking pytest worker's peak across exec)."""
    script = (
        f"import re, sys; from lesson_credit.cli.main import main; code = main({list(argv)!r}); "
        "hwm = re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status').read()); "
        "sys.stderr.write('RSS %s\\n' % hwm.group(1)); sys.exit(code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=root, env=process_env(), capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    return int(done.stderr.rsplit("RSS ", 1)[1]) / 1024


def test_oversized_block_sums_are_refused_by_their_size(tmp_path: Path) -> None:
    """The parsed-log cache (block sums and all) grown to a sparse 900 MB beside a 5 MB log: far past
    what a cache of this log can be (64 MB + 4 x 5 MB); a sums file that size once took 900 MB of memory."""
    root = _cached_workspace(tmp_path)
    with open(root / STATE_REL.parent / ".cache" / DB_NAME, "r+b") as handle:
        handle.truncate(900 << 20)
    assert _peak_rss_mb(root, "status", "--json") < 400


def test_a_part_whose_head_claims_a_huge_section_is_refused(tmp_path: Path) -> None:
    """The head is sealed by a checksum, not a signature: a head rewritten to give every section of a
    block 8 GB must not make a read allocate 8 GB; the block is derived again from the log."""
    root = _cached_workspace(tmp_path)
    want = run_process("show", "s39999", "--json", cwd=root).stdout
    db = root / STATE_REL.parent / ".cache" / DB_NAME
    p = msgspec.msgpack.decode(unseal(CACHE_MAGIC, derived_cache.meta(db)["head"]))
    part = p["parts"][0]
    for section in part["sections"].values():
        section[1] = 8 << 30
    derived_cache.put_meta(db, "head", seal(CACHE_MAGIC, msgspec.msgpack.encode(p)))
    done = run_process("show", "s39999", "--json", cwd=root)
    assert done.returncode == 0 and "MemoryError" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert done.stdout == want
    assert _peak_rss_mb(root, "show", "s39999", "--json") < 400
