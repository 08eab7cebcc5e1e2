"""Nothing is written outside the workspace through a symlink, and nothing but a regular file is
ever replaced. Reading through symlinks stays allowed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lesson_credit.core.base.files import StoreError, atomic_write
from lesson_credit.core.workspace import Workspace
from tests.support.cli_run import run_cli
from tests.support.engine_helpers import (
    BASIC_JOURNAL,
    BASIC_LESSONS,
    LOG_REL,
    STATE_REL,
    fixed_clock,
    make_workspace,
    session,
)

STATE = Path("state") / "lesson-thompson"


def _ws(tmp_path: Path) -> Path:
    return make_workspace(
        tmp_path,
        BASIC_LESSONS,
        events=[session("s1", 0.8, {"tools/git.md": 0.5})],
        journals={"j.txt": BASIC_JOURNAL},
    )


def _record(root: Path, sid: str = "s2", *extra: str) -> tuple[int, str, str]:
    return run_cli(
        "record", "--workspace", str(root), "--session-id", sid, "--journal", str(root / "j.txt"),
        "--lessons", "tools/git.md", "--reward", "0.6", *extra,
    )  # fmt: skip


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


def test_record_refuses_a_log_that_is_a_symlink_out_of_the_workspace(tmp_path: Path) -> None:
    """The issue's case: the log links to a file elsewhere whose last line has no newline.
    Appending there would move that line to `.torn` and write our event into the other file."""
    root = _ws(tmp_path)
    outside = tmp_path / "elsewhere.jsonl"
    content = b'{"keep": 1}\nsomeone else\'s half line'
    outside.write_bytes(content)
    log = root / LOG_REL
    log.unlink()
    log.symlink_to(outside)
    code, _, err = _record(root)
    assert code == 1
    line = _one_line(err)
    assert str(log) in line and "outside the workspace" in line
    assert outside.read_bytes() == content
    assert not (outside.parent / "elsewhere.jsonl.torn").exists()
    assert not (root / STATE / "sessions.jsonl.torn").exists()
    assert log.is_symlink()


def test_torn_file_symlinked_out_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    log = root / LOG_REL
    log.write_bytes(log.read_bytes() + b'{"type": "grade", "sess')  # a torn last line
    before = log.read_bytes()
    outside = tmp_path / "torn-elsewhere"
    outside.write_bytes(b"precious\n")
    (root / STATE / "sessions.jsonl.torn").symlink_to(outside)
    code, _, err = _record(root)
    assert code == 1
    assert "sessions.jsonl.torn" in _one_line(err)
    assert outside.read_bytes() == b"precious\n"
    assert log.read_bytes() == before


def test_lock_file_symlinked_out_is_not_truncated(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    outside = tmp_path / "notes.txt"
    outside.write_bytes(b"not a lock\n")
    (root / STATE / "sessions.jsonl.lock").symlink_to(outside)
    before = (root / LOG_REL).read_bytes()
    code, _, err = _record(root)
    assert code == 1
    line = _one_line(err)
    assert "sessions.jsonl.lock" in line and "outside the workspace" in line
    assert outside.read_bytes() == b"not a lock\n"
    assert (root / LOG_REL).read_bytes() == before


def test_state_folder_linked_out_is_refused(tmp_path: Path) -> None:
    """A folder on the way counts too: state/lesson-thompson itself linking elsewhere."""
    root = _ws(tmp_path)
    elsewhere = tmp_path / "shared-state"
    (root / STATE).rename(elsewhere)
    (root / STATE).symlink_to(elsewhere)
    before = (elsewhere / "sessions.jsonl").read_bytes()
    code, _, err = _record(root)
    assert code == 1
    assert "outside the workspace" in _one_line(err)
    assert (elsewhere / "sessions.jsonl").read_bytes() == before


def test_cache_folder_linked_out_gets_no_cache_and_says_so(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    elsewhere = tmp_path / "cache-elsewhere"
    elsewhere.mkdir()
    (root / STATE / ".cache").symlink_to(elsewhere)
    ws = Workspace(root, cache_threshold=0, clock=fixed_clock)
    assert ws.lesson_table().sessions == 1  # reads (and would write the caches)
    ws.record("s2", root / "j.txt", ["tools/git.md"], reward=0.5)
    assert list(elsewhere.iterdir()) == []
    assert any(".cache" in w and "outside the workspace" in w for w in ws.warnings)
    code, _, err = run_cli("status", "--workspace", str(root))
    assert code == 0
    assert list(elsewhere.iterdir()) == []
    assert sum(".cache" in line for line in err.splitlines()) == 1


def test_cache_file_symlinked_out_is_not_replaced(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    cache = root / STATE / ".cache"
    cache.mkdir()
    outside = tmp_path / "index-elsewhere"
    outside.write_bytes(b"mine")
    (cache / "derived-log.sqlite").symlink_to(outside)
    (cache / "lessons.msgpack").symlink_to(outside)
    ws = Workspace(root, cache_threshold=0, clock=fixed_clock)
    ws.record("s2", root / "j.txt", ["tools/git.md"], reward=0.5)
    assert outside.read_bytes() == b"mine"
    assert (cache / "derived-log.sqlite").is_symlink() and (cache / "lessons.msgpack").is_symlink()


@pytest.mark.parametrize("name", ["bandit-state.json", "loo-results.json", "config.toml"])
def test_derived_and_settings_files_symlinked_out_are_not_written(tmp_path: Path, name: str) -> None:
    root = _ws(tmp_path)
    outside = tmp_path / f"their-{name}"
    outside.write_bytes(b"# theirs\n")  # valid TOML, so config.toml is read as it is
    link = root / STATE / name
    link.unlink(missing_ok=True)
    link.symlink_to(outside)
    log_before = (root / LOG_REL).read_bytes()
    if name == "bandit-state.json":
        code, _, err = _record(root)
        assert code == 0  # the event committed: a success, with a warning naming the derived file
        assert str(link) in err and "outside the workspace" in err
        assert (root / LOG_REL).read_bytes() != log_before
    elif name == "loo-results.json":
        code, _, err = run_cli("loo", "--workspace", str(root))
        assert code == 1
        assert str(link) in _one_line(err)
    else:
        code, _, err = run_cli("replay", "--workspace", str(root), "--floor", "0.5", "--write")
        assert code == 1
        assert str(link) in _one_line(err)
    assert outside.read_bytes() == b"# theirs\n"
    assert link.is_symlink()


def test_dropout_folder_linked_out_is_refused(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    elsewhere = tmp_path / "dropout-elsewhere"
    elsewhere.mkdir()
    (root / "state" / "lesson-dropout").symlink_to(elsewhere)
    context = tmp_path / "ctx.txt"
    context.write_text("git worktree")
    code, _, err = run_cli(
        "select", "--workspace", str(root), "--context", str(context), "--session-id", "d1", "--dropout", "0.5"
    )
    assert code == 1
    assert "outside the workspace" in _one_line(err)
    assert list(elsewhere.iterdir()) == []


def test_writing_out_needs_the_opt_in_and_then_keeps_the_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _ws(tmp_path)
    outside = tmp_path / "shared.jsonl"
    log = root / LOG_REL
    outside.write_bytes(log.read_bytes())
    log.unlink()
    log.symlink_to(outside)
    state = root / STATE_REL
    shared_state = tmp_path / "shared-state.json"
    shared_state.write_text("{}")
    state.unlink(missing_ok=True)
    state.symlink_to(shared_state)
    monkeypatch.setenv("LESSON_CREDIT_WRITE_OUTSIDE", "1")
    code, _, err = _record(root)
    assert code == 0, err
    assert b'"s2"' in outside.read_bytes()
    assert log.is_symlink() and state.is_symlink()  # written through, not replaced
    assert json.loads(shared_state.read_text())["total_sessions"] == 2


def test_symlinks_inside_the_workspace_are_followed(tmp_path: Path) -> None:
    """A workspace may link its own files (a shared folder inside it): writes go to the target."""
    root = _ws(tmp_path)
    shared = root / "shared"
    shared.mkdir()
    log = root / LOG_REL
    (shared / "sessions.jsonl").write_bytes(log.read_bytes())
    log.unlink()
    log.symlink_to(shared / "sessions.jsonl")
    (shared / "bandit-state.json").write_text("{}")
    (root / STATE_REL).unlink(missing_ok=True)
    (root / STATE_REL).symlink_to(shared / "bandit-state.json")
    code, _, err = _record(root)
    assert code == 0 and "warning" not in err, err
    assert b'"s2"' in (shared / "sessions.jsonl").read_bytes()
    assert (root / STATE_REL).is_symlink()
    assert json.loads((shared / "bandit-state.json").read_text())["total_sessions"] == 2


def test_lessons_linked_from_outside_are_still_read(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    library = tmp_path / "library"
    library.mkdir()
    (library / "linked.md").write_text("---\nmatch:\n  keywords: [git]\n---\n# Linked\n")
    (root / "lessons" / "linked.md").symlink_to(library / "linked.md")
    ids = {lesson.id for lesson in Workspace(root).library().lessons}
    assert "linked.md" in ids


# ---------------------------------------------------------------- export-gptme's target (item 2)


def test_export_never_replaces_a_fifo(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    code, _, err = run_cli("export-gptme", "--workspace", str(root), str(fifo))
    assert code == 1
    assert str(fifo) in _one_line(err) and "FIFO" in err
    assert fifo.is_fifo()


def test_export_never_replaces_a_symlink(tmp_path: Path) -> None:
    root = _ws(tmp_path)
    target = tmp_path / "real.json"
    target.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    code, _, err = run_cli("export-gptme", "--workspace", str(root), str(link))
    assert code == 1
    assert str(link) in _one_line(err) and "symbolic link" in err
    assert link.is_symlink() and target.read_text() == "{}"


def test_export_never_replaces_a_device(tmp_path: Path) -> None:
    """`export-gptme /dev/null` as root replaced /dev/null with a plain file. A character device
    of our own (root can make one; otherwise /dev/null itself, which we can then not harm)."""
    root = _ws(tmp_path)
    device = tmp_path / "null"
    try:
        os.mknod(device, 0o666 | 0o020000, os.makedev(1, 3))
    except PermissionError:
        device = Path("/dev/null")
    code, _, err = run_cli("export-gptme", "--workspace", str(root), str(device))
    assert code == 1
    assert str(device) in _one_line(err) and "device" in err
    assert device.is_char_device()


def test_atomic_write_refuses_to_replace_anything_but_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "target")
    for path in (fifo, link):
        with pytest.raises(StoreError, match=str(path)):
            atomic_write(path, b"x")
    assert fifo.is_fifo() and link.is_symlink() and not (tmp_path / "target").exists()
    regular = tmp_path / "plain"
    regular.write_bytes(b"old")
    atomic_write(regular, b"new")
    assert regular.read_bytes() == b"new"


@pytest.mark.parametrize(
    ("derived", "target"),
    [
        ("loo-results.json", "sessions.jsonl"),  # `loo` wrote its results over every session (exit 0)
        ("bandit-state.json", "sessions.jsonl"),
        ("loo-results.json", "config.toml"),
        ("bandit-state.json", "sessions.jsonl.torn"),
    ],
)
def test_a_derived_file_linked_to_the_log_or_the_settings_is_not_written_through(
    tmp_path: Path, derived: str, target: str
) -> None:
    """A link inside the workspace is followed (a shared file), but never onto the event log, what a
    crash cut off it, or config.toml from another file's name: a rewrite of loo-results.json or
    bandit-state.json there would replace the source of truth with derived numbers."""
    root = _ws(tmp_path)
    state = root / STATE
    (state / "config.toml").write_text('strategy = "seed"\n')
    (state / "sessions.jsonl.torn").write_text('{"type": "sess')
    link = state / derived
    link.unlink(missing_ok=True)
    link.symlink_to(target)
    kept = {name: (state / name).read_bytes() for name in ("sessions.jsonl", "config.toml", "sessions.jsonl.torn")}
    command = (
        ("loo", "--workspace", str(root)) if derived == "loo-results.json" else ("status", "--workspace", str(root))
    )
    code, _, err = run_cli(*command)
    assert code == (1 if derived == "loo-results.json" else 0)  # loo's file is its output; the state file a warning
    assert derived in _one_line(err) and target in err, err
    assert {name: (state / name).read_bytes() for name in kept} == kept
    assert link.is_symlink()
    code, out, _ = run_cli("status", "--workspace", str(root), "--json")
    assert code == 0 and json.loads(out)["lessons"][0]["n"] == 1


@pytest.mark.parametrize("target", ["sessions.jsonl", "config.toml"])
@pytest.mark.parametrize("hard", [False, True])
def test_a_dropout_log_linked_to_the_event_log_is_not_appended_through(tmp_path: Path, target: str, hard: bool) -> None:
    """`select --dropout` appends its trial to state/lesson-dropout/<id>.jsonl; one linked to the event log
    put the trial's line into the log (a line no reader can use, exit 0), one linked to config.toml made
    the settings unreadable. Refused in one line, nothing written, the selection not logged either. A hard
    link too: both names are one file, which no comparison of paths sees (the opened file is compared)."""
    root = _ws(tmp_path)
    state = root / STATE
    (state / "config.toml").write_text('strategy = "seed"\n')
    folder = root / "state" / "lesson-dropout"
    folder.mkdir()
    link = folder / "d1.jsonl"
    if hard:
        os.link(state / target, link)
    else:
        link.symlink_to(Path("..") / "lesson-thompson" / target)
    kept = {name: (state / name).read_bytes() for name in ("sessions.jsonl", "config.toml")}
    context = tmp_path / "ctx.txt"
    context.write_text("git worktree")
    code, _, err = run_cli(
        "select", "--workspace", str(root), "--context", str(context), "--session-id", "d1", "--dropout", "0.5"
    )
    assert code == 1
    assert "d1.jsonl" in _one_line(err) and target in err, err
    assert {name: (state / name).read_bytes() for name in kept} == kept
    assert link.is_symlink() != hard
