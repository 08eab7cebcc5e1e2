"""Reads never need to write: a cache that cannot be written, read or replaced (a read-only or full
disk; a directory, FIFO or symlink in its place) is set aside with one notice, and the command works
from the log. A write command's event is still appended, and it exits 0 (docs/trust.md)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.log import logcheck
from lesson_credit.core.workspace import Workspace
from tests.support.cli_run import ROOT, process_env, run_cli
from tests.support.engine_helpers import BASIC_JOURNAL, BASIC_LESSONS, LOG_REL, make_workspace, session

CACHE_REL = LOG_REL.parent / ".cache"
DEMO = ROOT  # the repository's root is the demo workspace (lessons/, state/)
DEMO_SESSION = "2026-10-18-142"  # a graded session of the demo log


@pytest.fixture(autouse=True)
def every_cache_in_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small logs take the parsed-log cache too (the threshold is 4 MB in use), and a log is sealed
    however recently it changed (a reader waits for 2 s of quiet in use): every cache is read and written."""
    monkeypatch.setattr("lesson_credit.core.log.cache.MIN_NEW_BYTES", 0)
    monkeypatch.setattr(logcheck, "QUIET_S", 0.0)


def _demo_copy(tmp_path: Path) -> Path:
    root = tmp_path / "demo"
    shutil.copytree(DEMO / "lessons", root / "lessons")
    shutil.copytree(DEMO / "state", root / "state", ignore=shutil.ignore_patterns(".cache", "loo-results.json"))
    (root / "context.txt").write_text("git worktree rebase, run the tests before claiming\n")
    return root


def _refuse_writes(monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    """The disk refuses writes as a read-only mount (EROFS: no file created, no folder made) or a full
    one (ENOSPC: a file is created, but the rename that would put it in place fails)."""
    real_open, real_mkdir, real_replace = os.open, os.mkdir, os.replace
    writes = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise OSError(code, os.strerror(code))

    def opening(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & writes:
            refused()
        return real_open(path, flags, *args, **kwargs)

    if code == errno.EROFS:
        monkeypatch.setattr(os, "open", opening)
        monkeypatch.setattr(os, "mkdir", refused)
    else:
        monkeypatch.setattr(os, "replace", refused)
    assert (real_open, real_mkdir, real_replace) != (os.open, os.mkdir, os.replace)


def _notices(err: str) -> dict[str, int]:
    """Per file set aside, how many lines of stderr say so."""
    counts: dict[str, int] = {}
    for line in err.splitlines():
        line = line.removeprefix("# ")  # select's stderr lines are comments
        if "set aside" in line:
            assert line.startswith("warning: "), line  # a warning, never an error
            path = line.removeprefix("warning: ").split(":")[0]
            counts[path] = counts.get(path, 0) + 1
    return counts


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


READS = [
    ["status", "--json"],  # first: its "warnings" list has every notice (each is said once per process)
    ["status"],
    ["show", DEMO_SESSION],
    ["sessions"],
    ["lint"],
    ["explain", DEMO_SESSION],
    ["loo", "--no-write"],
    ["select", "--dry-run", "--context", "context.txt"],
    ["select", "--dry-run", "--policy", "joint", "--context", "context.txt"],
]


@pytest.mark.parametrize("code", [errno.EROFS, errno.ENOSPC], ids=["read-only", "full"])
def test_the_demo_reads_on_a_disk_that_refuses_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    root = _demo_copy(tmp_path)
    before = {
        p: (root / p).read_bytes()
        for p in ("state/lesson-thompson/sessions.jsonl", "state/lesson-thompson/bandit-state.json")
    }
    monkeypatch.chdir(root)
    _refuse_writes(monkeypatch, code)
    said: dict[str, int] = {}
    for argv in READS:
        exit_code, out, err = run_cli(*argv, "--workspace", str(root))
        assert exit_code == 0, (argv, err)
        assert "Traceback" not in err
        notices = _notices(err)
        for path, count in notices.items():
            said[path] = said.get(path, 0) + count
        if "--json" in argv:
            assert sum("set aside" in w for w in json.loads(out)["warnings"]) == len(notices) >= 2
    monkeypatch.undo()
    # every cache the reads tried was set aside, each said once for the whole process (in-process runs)
    cache = root / CACHE_REL
    assert str(cache / "log-seal") in said and str(cache / "lessons.msgpack") in said
    assert set(said.values()) == {1}, said
    assert all(cache in Path(path).parents for path in said)  # (copies: .cache/bandit-state-copies)
    assert {p: (root / p).read_bytes() for p in before} == before
    if code == errno.EROFS:
        assert not cache.exists()
    else:
        # each temp file was removed after the rename failed; the parsed-log cache is a SQLite database,
        # written in transactions of its own (not through os.replace, which this refuses)
        assert _files(cache) == ["derived-log.sqlite"]


def test_a_fresh_process_says_it_again_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One notice per file and process: each command on a read-only workspace says it once."""
    root = _demo_copy(tmp_path)
    _refuse_writes(monkeypatch, errno.EROFS)
    code, _, err = run_cli("status", "--workspace", str(root))
    said = _notices(err)
    assert code == 0 and str(root / CACHE_REL / "log-seal") in said and set(said.values()) == {1}
    code, _, err = run_cli("status", "--workspace", str(root))
    assert code == 0 and _notices(err) == {}  # the same process: said already


# ---------------------------------------------------------------- a hostile thing in a cache's place

CACHES = [
    "log-seal",
    "derived-log.sqlite",  # the parsed-log cache
    "lessons.msgpack",
    "joint-posterior.msgpack",
    "effects.msgpack",
    "intervals",
]


def _directory(path: Path, outside: Path) -> Callable[[], bool]:
    path.mkdir()
    (path / "keep").write_bytes(b"x")
    return lambda: path.is_dir() and (path / "keep").read_bytes() == b"x"


def _fifo(path: Path, outside: Path) -> Callable[[], bool]:
    os.mkfifo(path)
    return lambda: stat.S_ISFIFO(os.lstat(path).st_mode)


def _symlink(path: Path, outside: Path) -> Callable[[], bool]:
    outside.write_bytes(b"theirs")
    path.symlink_to(outside)
    return lambda: path.is_symlink() and outside.read_bytes() == b"theirs"


def _dangling(path: Path, outside: Path) -> Callable[[], bool]:
    path.symlink_to(outside)  # nothing there: a write through it would create it
    return lambda: path.is_symlink() and not outside.exists()


KINDS = {"directory": _directory, "fifo": _fifo, "symlink": _symlink, "dangling-symlink": _dangling}


def _hostile_ws(tmp_path: Path) -> Path:
    root = make_workspace(
        tmp_path,
        BASIC_LESSONS,
        events=[session(f"s{i}", 0.1 * i, {"tools/git.md": 0.5, "tools/quote.md": 1.0}) for i in range(6)],
        journals={"j.txt": BASIC_JOURNAL, "context.txt": "git worktree, quote\n"},
    )
    ws = Workspace(root)  # every cache written once, as a workspace in use has them
    ws.lesson_table()
    ws.joint_posterior()
    ws.effects()
    assert {"log-seal", "derived-log.sqlite", "lessons.msgpack"} <= set(_files(root / CACHE_REL))
    return root


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("name", CACHES)
def test_a_hostile_file_in_a_caches_place_is_set_aside(tmp_path: Path, name: str, kind: str) -> None:
    root = _hostile_ws(tmp_path)
    cache = root / CACHE_REL
    path = cache / name
    path.unlink(missing_ok=True)
    intact = KINDS[kind](path, tmp_path / "outside")
    lines = len((root / LOG_REL).read_bytes().splitlines())
    said = 0
    steps = [
        ("select", "--policy", "joint", "--context", str(root / "context.txt"), "--session-id", "new", "--seed", "1"),
        ("record", "--session-id", "new", "--journal", str(root / "j.txt"), "--lessons", "tools/git.md"),
        ("grade", "new", "0.25"),
        ("status",),
    ]  # fmt: skip
    for argv in steps:
        code, _, err = run_cli(*argv, "--workspace", str(root))
        assert code == 0, (argv, err)
        said += sum(name in line for line in err.splitlines())
    ws = Workspace(root)
    assert ws.saved_effects() is None  # (the effects were saved for the log before these events)
    effects = ws.effects()
    said += sum(name in w for w in ws.warnings)
    events = [json.loads(line) for line in (root / LOG_REL).read_bytes().splitlines()]
    assert len(events) == lines + 3
    assert [e["type"] for e in events[-3:]] == ["selection", "session", "grade"]
    assert events[-1]["base_reward"] == 0.25
    # the numbers are those of the log, read without any cache
    fresh = Workspace(root, use_cache=False)
    assert ws.lesson_table().as_json() == fresh.lesson_table().as_json()
    assert effects == fresh.effects()
    assert said == 1  # set aside once (every step ran in this process)
    assert intact()  # left as it was: never replaced, never written through, never removed


def test_a_cache_written_meanwhile_is_used_again(tmp_path: Path) -> None:
    """Set aside means not used while it cannot be: once the directory is gone the cache is written."""
    root = _hostile_ws(tmp_path)
    seal = root / CACHE_REL / "log-seal"
    seal.unlink()
    seal.mkdir()
    assert run_cli("status", "--workspace", str(root))[0] == 0
    seal.rmdir()
    assert run_cli("status", "--workspace", str(root))[0] == 0
    assert seal.is_file()


# ---------------------------------------------------------------- a truly read-only mount, where one can be made


def test_the_demo_on_a_read_only_mount(tmp_path: Path) -> None:
    """As root: the demo in a private mount namespace, bound read-only (unshare + mount); as another
    user: the copy made unwritable. Skipped where neither is possible."""
    root = _demo_copy(tmp_path)
    commands = [" ".join(argv) for argv in READS]
    python = f"{sys.executable} -m lesson_credit.cli.main --workspace {root}"
    script = "; ".join(
        f"{python} {c} >/dev/null 2>{tmp_path}/err{i} || echo {c!r} >>{tmp_path}/failed" for i, c in enumerate(commands)
    )
    if os.geteuid() == 0:
        if shutil.which("unshare") is None:
            pytest.skip("no unshare")
        mount = f"mount --bind {root} {root} && mount -o remount,ro,bind {root} {root}"
        probe = subprocess.run(["unshare", "-m", "sh", "-c", f"{mount} && ! touch {root}/x 2>/dev/null"], check=False)
        if probe.returncode != 0:
            pytest.skip("cannot make a read-only mount here")
        argv = ["unshare", "-m", "sh", "-c", f"{mount} && cd {root} && {script}"]
    else:
        for folder in [root, *root.rglob("*")]:
            if folder.is_dir():
                folder.chmod(0o555)
        argv = ["sh", "-c", f"cd {root} && {script}"]
    try:
        subprocess.run(argv, env=process_env(), check=True, timeout=600)
    finally:
        for folder in [root, *root.rglob("*")]:
            if folder.is_dir():
                folder.chmod(0o755)  # (so that pytest can remove it)
    errs = [(tmp_path / f"err{i}").read_text() for i in range(len(commands))]
    failed = tmp_path / "failed"
    assert not failed.exists(), failed.read_text() + "".join(errs)
    for err in errs:
        assert "Traceback" not in err
        assert set(_notices(err).values()) <= {1}, err  # each file set aside said once in each command
    assert any(f"{root / CACHE_REL / 'lessons.msgpack'}: not writable" in err for err in errs)
