"""A warm `status` prints the last full run's output from `.cache/status-summary` (cli/status_summary.py)
only while everything it was derived from is unchanged: after a change to the log, a lesson, the library's
folders, config.toml, gptme.toml or bandit-state.json it prints what a run without the summary prints."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.cli import status_summary
from lesson_credit.cli.commands import posteriors
from lesson_credit.cli.common import open_workspace
from lesson_credit.core.workspace import STATE_DIR, Workspace
from tests.support.cli_run import process_env, run_cli
from tests.support.engine_helpers import make_workspace

LESSONS = {"tools/git.md": (["git"], "active"), "tools/shell.md": (["shell"], "active")}


def record(root: Path, session_id: str, reward: str, *lessons: str) -> None:
    args = ["record", "-w", str(root), "--session-id", session_id, "--journal", "journal.md"]
    code, _, err = run_cli(*args, "--lessons", *lessons, "--reward", reward)
    assert code == 0, err


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = make_workspace(tmp_path, LESSONS, journals={"journal.md": "git commit, then a shell loop\n"})
    record(root, "s1", "0.9", "tools/git.md")
    record(root, "s2", "0.2", "tools/git.md", "tools/shell.md")
    return root


def summary(root: Path) -> Path:
    return root / STATE_DIR / ".cache" / "status-summary"


def status(root: Path, *options: str) -> tuple[str, str]:
    code, out, err = run_cli("status", "-w", str(root), *options)
    assert code == 0, err
    return out, err


def without_summary(root: Path, *options: str) -> tuple[str, str]:
    """`status` on a copy of the workspace without its summary (the other caches kept: one of them,
    bandit-state-written, decides how another tool's edit of bandit-state.json is taken)."""
    copy = root.parent / "fresh"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root, copy, symlinks=True)
    summary(copy).unlink(missing_ok=True)
    out, err = status(copy, *options)
    return out.replace(str(copy), str(root)), err.replace(str(copy), str(root))


def test_a_warm_status_opens_no_workspace(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = status(root)
    assert summary(root).is_file()
    assert first == without_summary(root)

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("the workspace was opened")

    monkeypatch.setattr(posteriors, "open_workspace", refuse)
    assert status(root) == first


def test_a_warm_status_loads_neither_numpy_nor_the_workspace(root: Path) -> None:
    status(root)
    script = (
        "import json, sys\nfrom lesson_credit.cli.main import main\ncode = main(sys.argv[1:])\n"
        "print(json.dumps([code, sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'scipy') "
        "or m.startswith('lesson_credit.core.workspace'))]), file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, "status", "-w", str(root)], env=process_env(), capture_output=True, text=True
    )
    assert json.loads(proc.stderr.splitlines()[-1]) == [0, []]
    assert proc.stdout == status(root)[0]


def append_session(root: Path) -> None:
    record(root, "s3", "1", "tools/shell.md")


def rewrite_the_log_tail(root: Path) -> None:
    """The last reward 1 -> 0, same length, the mtime put back (only the ctime tells)."""
    log = root / STATE_DIR / "sessions.jsonl"
    before = log.stat()
    data = log.read_bytes()
    at = data.rindex(b'"base_reward":0.2')
    log.write_bytes(data[:at] + data[at:].replace(b"0.2", b"0.7", 1))
    os.utime(log, ns=(before.st_atime_ns, before.st_mtime_ns))


def deprecate_a_lesson(root: Path) -> None:
    path = root / "lessons" / "tools" / "shell.md"
    path.write_text(path.read_text().replace("status: active", "status: deprecated"))


def add_a_lesson(root: Path) -> None:
    (root / "lessons" / "tools" / "new.md").write_text("---\nmatch:\n  keywords: [new]\n---\n# New\n")


def add_a_folder(root: Path) -> None:
    (root / "lessons" / "more").mkdir()
    (root / "lessons" / "more" / "extra.md").write_text("---\nmatch:\n  keywords: [extra]\n---\n# Extra\n")


def change_the_strategy(root: Path) -> None:
    (root / STATE_DIR / "config.toml").write_text('strategy = "uniform"\n')


def add_a_library_folder(root: Path) -> None:
    (root / "skills" / "x").mkdir(parents=True)
    (root / "skills" / "x" / "skill.md").write_text("---\nmatch:\n  keywords: [skill]\n---\n# Skill\n")
    (root / "gptme.toml").write_text('[lessons]\ndirs = ["skills"]\n')


def edit_the_state_file(root: Path) -> None:
    """Another tool's update of bandit-state.json: status warns that it disagrees with the log."""
    state = root / STATE_DIR / "bandit-state.json"
    payload = json.loads(state.read_text())
    payload["arms"]["tools/git.md"]["alpha"] += 1
    state.write_text(json.dumps(payload))


CHANGES: list[Callable[[Path], None]] = [
    append_session,
    rewrite_the_log_tail,
    deprecate_a_lesson,
    add_a_lesson,
    add_a_folder,
    change_the_strategy,
    add_a_library_folder,
    edit_the_state_file,
]


@pytest.mark.parametrize("change", CHANGES, ids=[c.__name__ for c in CHANGES])
@pytest.mark.parametrize("options", [[], ["--json"], ["--sort", "n", "--all"]], ids=["table", "json", "sorted"])
def test_after_a_change_status_says_what_a_run_without_the_summary_says(
    root: Path, change: Callable[[Path], None], options: list[str]
) -> None:
    before = status(root, *options)
    assert summary(root).is_file()
    change(root)
    expected = without_summary(root, *options)
    assert status(root, *options) == expected
    assert expected != before  # the change shows (else this test could not fail)
    assert status(root, *options) == without_summary(root, *options)  # and the summary written since agrees


def test_a_damaged_summary_is_run_in_full(root: Path) -> None:
    first = status(root)
    data = bytearray(summary(root).read_bytes())
    data[-5] ^= 0xFF
    summary(root).write_bytes(bytes(data))
    assert status(root) == first


def test_a_summary_printed_by_other_code_is_not_used(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An upgrade or an edit of the code (another stat of any module) runs status in full."""
    first = status(root)
    opened: list[Path] = []
    real = open_workspace

    def spy(args: argparse.Namespace, **kwargs: Any) -> Workspace:
        opened.append(Path(args.workspace))
        return real(args, **kwargs)

    monkeypatch.setattr(posteriors, "open_workspace", spy)
    assert status(root) == first and opened == []  # the same code: the summary
    monkeypatch.setattr(status_summary, "_code", lambda: "another version")
    assert status(root) == first and opened == [root]


def test_a_change_of_the_grading_weights_is_not_hidden_by_the_summary(root: Path) -> None:
    """A record's per-dimension grades score a pending session through state/grading-weights.json: new
    weights move the posteriors, so a warm status must not print the old ones."""
    code, _, err = run_cli(
        "record", "-w", str(root), "--session-id", "s3", "--journal", "journal.md", "--lessons", "tools/git.md"
    )
    assert code == 0, err
    records = root / "state" / "sessions" / "session-records.jsonl"
    records.parent.mkdir(parents=True, exist_ok=True)
    records.write_text(json.dumps({"session_id": "s3", "grades": {"productivity": 0.9, "alignment": 0.1}}) + "\n")
    status(root, "--json")  # warns that bandit-state.json follows the record's score now: not kept
    before = status(root, "--json")
    assert summary(root).is_file()
    # default weights 0.40 / 0.35: (0.9 * 0.40 + 0.1 * 0.35) / 0.75 = 0.5267; productivity alone: 0.9
    (root / "state" / "grading-weights.json").write_text('{"productivity": 1.0}\n')
    expected = without_summary(root, "--json")
    assert status(root, "--json") == expected
    assert expected != before


def test_a_records_file_named_through_home_is_the_one_read_now(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`[records] path = "~/..."` follows $HOME: with another HOME (sudo, a cron job) the same config.toml
    names another records file. A warm status printed the numbers of the file the last run read."""
    code, _, err = run_cli(
        "record", "-w", str(root), "--session-id", "s3", "--journal", "journal.md", "--lessons", "tools/git.md"
    )
    assert code == 0, err
    homes = {}
    for name, score in (("one", 0.8), ("two", 0.2)):
        homes[name] = tmp_path / name
        (homes[name] / "sessions").mkdir(parents=True)
        records = json.dumps({"session_id": "s3", "llm_judge_score": score}) + "\n"
        (homes[name] / "sessions" / "session-records.jsonl").write_text(records)
    (root / STATE_DIR / "config.toml").write_text('[records]\npath = "~/sessions/session-records.jsonl"\n')
    monkeypatch.setenv("HOME", str(homes["one"]))
    status(root, "--json")  # the judge's score moves the posteriors: bandit-state.json rewritten, a warning
    status(root, "--json")
    assert summary(root).is_file()
    monkeypatch.setenv("HOME", str(homes["two"]))
    expected = without_summary(root, "--json")
    # tools/git.md by hand (salience 1, weight 1): s1 0.9, s2 0.2, s3 the judge's 0.2 of the second file:
    # alpha 1 + 0.9 + 0.2 + 0.2 = 2.3, beta 1 + 0.1 + 0.8 + 0.8 = 2.7 (the first file's 0.8: 2.9, 2.1)
    git = next(row for row in json.loads(expected[0])["lessons"] if row["path"] == "tools/git.md")
    assert (git["alpha"], git["beta"]) == pytest.approx((2.3, 2.7))
    assert status(root, "--json")[0] == expected[0]


def test_a_summary_is_printed_only_at_the_width_it_was_fitted_to(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A status fitted to a terminal (cli/render.py) is no output for a pipe, nor for another width."""
    monkeypatch.setenv("COLUMNS", "60")
    narrow, _ = status(root)
    assert summary(root).exists() and max(len(line) for line in narrow.splitlines()) <= 60
    monkeypatch.delenv("COLUMNS")
    full, _ = status(root)
    assert full != narrow and full == without_summary(root)[0]
    monkeypatch.setenv("COLUMNS", "60")
    assert status(root)[0] == narrow
