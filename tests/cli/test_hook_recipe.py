"""docs/guide.md's hook recipe logs every session, also when `select` chose nothing."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.cli_fixtures import make_ws, run_plain

ROOT = Path(__file__).resolve().parents[2]
GIT = "tools/git.md"
CODE_ONLY = "tools/git-for-code.md"


def recipe() -> str:
    """The bash blocks of docs/guide.md's "Hooking it into an agent" section, in order."""
    guide = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    section = guide.split("## Hooking it into an agent", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    assert len(blocks) >= 2, "the recipe needs a session-start and a session-end block"
    return "".join(blocks)


def guide_blocks(section: str) -> str:
    """The bash blocks of one `## ` section of docs/guide.md, in order."""
    guide = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    text = guide.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return "".join(re.findall(r"```bash\n(.*?)```", text, flags=re.S))


def shim(bin_dir: Path) -> dict[str, str]:
    """An environment whose `lesson-credit` is the tree under test."""
    bin_dir.mkdir(exist_ok=True)
    path = bin_dir / "lesson-credit"
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m lesson_credit.cli.main "$@"\n', encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "PYTHONPATH": str(ROOT)}


def test_the_empty_folder_walkthrough_runs_as_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/guide.md's first section takes a new user from an empty folder to a graded session."""
    folder = tmp_path / "agent"
    folder.mkdir()
    script = guide_blocks("Starting from an empty folder")
    env = shim(tmp_path / "bin")
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=folder, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    code, out, err = run_plain(capsys, "status", "-w", str(folder), "--json")
    assert code == 0, err
    (lesson,) = json.loads(out)["lessons"]
    # both keywords in the journal: salience 1, weight 1; seed strategy: alpha 1 + 0.8, beta 1 + (1 - 0.8)
    assert (lesson["path"], lesson["n"]) == ("tools/git-rebase.md", 1)
    assert (lesson["alpha"], lesson["beta"]) == (pytest.approx(1.8), pytest.approx(1.2))


def run_recipe(tmp_path: Path, ws: Path, session_id: str, task: str) -> subprocess.CompletedProcess[str]:
    work = tmp_path / session_id
    work.mkdir()
    (work / "task.md").write_text(task, encoding="utf-8")
    (ws / "journal").mkdir(exist_ok=True)
    (ws / "journal" / f"{session_id}.md").write_text("Used git to rebase.\n", encoding="utf-8")
    env = {
        **shim(tmp_path / "bin"),
        "WS": str(ws),
        "SESSION": session_id,
        "HEURISTIC_REWARD": "0.7",
        "CATEGORY": "feature",
    }
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", recipe()], cwd=work, env=env, capture_output=True, text=True, timeout=120
    )


def test_recipe_logs_sessions_with_and_without_selected_lessons(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = make_ws(tmp_path, lessons={GIT: ["git"]})
    # gptme-contrib's convention: a lesson for other kinds of work than the session's (feature) is left out
    (ws / "lessons" / CODE_ONLY).write_text("---\nmatch:\n  keywords: [git]\n  session_categories: [code]\n---\n")
    empty = run_recipe(tmp_path, ws, "s-empty", "Write the changelog.\n")  # no lesson matches
    assert empty.returncode == 0, empty.stderr
    chosen = run_recipe(tmp_path, ws, "s-git", "Fix the git history.\n")  # git matches
    assert chosen.returncode == 0, chosen.stderr
    assert f"1 more left out: its match.session_categories do not name feature ({CODE_ONLY})" in chosen.stderr
    code, out, err = run_plain(capsys, "sessions", "-w", str(ws), "--json")
    assert code == 0, err
    rows = {s["session_id"]: s for s in json.loads(out)["sessions"]}
    assert set(rows) == {"s-empty", "s-git"}
    assert (rows["s-empty"]["lessons"], rows["s-empty"]["base_reward"], rows["s-empty"]["category"]) == (
        0,
        0.7,
        "feature",
    )
    # git-for-code.md matches the task too, but is for code sessions alone; the category came from the selection
    assert (rows["s-git"]["lessons"], rows["s-git"]["base_reward"], rows["s-git"]["category"]) == (1, 0.7, "feature")
    # the selection's propensity reached the record: git was the only candidate, so P = 1
    shown = run_plain(capsys, "show", "-w", str(ws), "s-git", "--json")
    assert json.loads(shown[1])["lessons"][0]["path"] == GIT


@pytest.mark.parametrize("how", ["no ids", "empty file", "comments only"])
def test_record_accepts_zero_lessons(tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str) -> None:
    ws = make_ws(tmp_path, lessons={GIT: ["git"]}, journals={"j.md": "nothing\n"})
    (ws / "sel.txt").write_text("" if how == "empty file" else "# nothing selected\n\n", encoding="utf-8")
    lessons = ["--lessons"] if how == "no ids" else ["--lessons-file", str(ws / "sel.txt")]
    argv = ["record", "-w", str(ws), "--session-id", "s1", "--journal", str(ws / "j.md"), *lessons, "--reward", "0.4"]
    code, out, err = run_plain(capsys, *argv, "--json")
    assert code == 0, err
    assert (json.loads(out)["lessons"], json.loads(out)["base_reward"]) == ([], 0.4)
    # a session without lessons moves no arm: git stays at the prior Beta(1, 1)
    status = json.loads(run_plain(capsys, "status", "-w", str(ws), "--json")[1])
    assert status["sessions"] == 1
    assert [(r["path"], r["alpha"], r["beta"], r["n"]) for r in status["lessons"]] == [(GIT, 1.0, 1.0, 0)]


def test_lessons_file_reads_select_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = make_ws(tmp_path, lessons={GIT: ["git"], "tools/b.md": ["b"]}, journals={"j.md": "git\n"})
    (ws / "sel.txt").write_text(f"{GIT}\n# a comment\ntools/b.md  # trailing\n", encoding="utf-8")
    argv = ["record", "-w", str(ws), "--session-id", "s1", "--journal", str(ws / "j.md")]
    code, out, err = run_plain(capsys, *argv, "--lessons-file", str(ws / "sel.txt"), "--json")
    assert code == 0, err
    assert [lesson["path"] for lesson in json.loads(out)["lessons"]] == [GIT, "tools/b.md"]
    code, _, err = run_plain(capsys, *argv[:4], "s2", *argv[5:], "--lessons-file", str(ws / "missing.txt"))
    assert code == 1 and "lessons file not found" in err
