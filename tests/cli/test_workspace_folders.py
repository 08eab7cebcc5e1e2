"""Which folder a command works on (docs/cli.md, docs/format.md §2): gptme.toml's lesson folders beside
`lessons/`, a folder that is not a workspace (a hook run from the wrong place), and the bare
command without a terminal."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli_run import ROOT, process_env, run_cli
from tests.support.engine_helpers import LOG_REL, lesson_text, log_bytes, make_workspace, session

# ---------------------------------------------------------------- item 5


def test_select_finds_the_lessons_folder_beside_gptme_toml_dirs(tmp_path: Path) -> None:
    """`dirs = ["gptme-contrib/lessons"]` replaced `lessons/`: select found nothing in the
    workspace's own lessons, and picked a template file from the contrib folder."""
    root = make_workspace(
        tmp_path, {"tools/mypy.md": (["mypy"], "active")}, [session("s1", 1.0, {"tools/mypy.md": 1.0})]
    )
    contrib = root / "gptme-contrib" / "lessons"
    contrib.mkdir(parents=True)
    (contrib / "ruff.md").write_text(lesson_text(["mypy ruff"]))
    (contrib / "lesson-template.md").write_text(lesson_text(["mypy"]))
    (root / "gptme.toml").write_text('[lessons]\ndirs = ["gptme-contrib/lessons"]\n')
    (root / "ctx.txt").write_text("mypy ruff errors")
    code, out, err = run_cli("select", "-w", str(root), "--context", str(root / "ctx.txt"), "--json", "--k", "5")
    assert code == 0, err
    picked = set(json.loads(out)["selected"])
    assert picked == {"tools/mypy.md", "ruff.md"}
    code, out, err = run_cli("lint", "-w", str(root), "--json")
    assert "ghost-arms" not in {f["code"] for f in json.loads(out)["findings"]}, out  # "prune" advised


# ---------------------------------------------------------------- item 6


def _select_from_stdin(monkeypatch: pytest.MonkeyPatch, *argv: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO("mypy"))
    return run_cli("select", "--context", "-", *argv)


def test_a_hook_in_an_empty_folder_starts_no_second_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    monkeypatch.chdir(empty)
    code, out, err = _select_from_stdin(monkeypatch)
    assert code == 1 and out == ""
    assert (
        err.count("\n") == 1 and str(empty) in err and "--workspace" in err and "not a lesson-credit workspace" in err
    )
    assert list(empty.iterdir()) == []  # no state/lesson-thompson/sessions.jsonl


def test_a_subfolder_of_a_workspace_is_refused_naming_the_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_workspace(
        tmp_path, {"tools/mypy.md": (["mypy"], "active")}, [session("s1", 1.0, {"tools/mypy.md": 1.0})]
    )
    before = log_bytes(root)
    for argv in (("-w", str(root / "lessons")), ("-w", str(root / "lessons" / "tools"))):
        code, _out, err = _select_from_stdin(monkeypatch, *argv)
        assert code == 1 and err.count("\n") == 1, err
        assert f"{root} is one" in err and "--workspace" in err
        code, _out, err = run_cli("grade", "s1", "0.5", *argv)
        assert code == 1 and f"{root} is one" in err
    assert log_bytes(root) == before
    assert not (root / "lessons" / "state").exists()
    # a read command is refused the same way (it printed an empty table), naming where the workspace is
    code, out, err = run_cli("status", "-w", str(root / "lessons"))
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and f"{root} is one" in err and "add" not in err
    assert not (root / "lessons" / "state").exists()  # nor did the read write anything there


# what each command reads in a folder: a journal for record, a gptme file for import-gptme (the folder's only files)
READERS = (
    ("status",), ("status", "--json"), ("replay", "--strategy", "evidence"), ("sessions",), ("sessions", "--json"),
    ("show", "s1"), ("explain", "s1"), ("select", "--dry-run", "--context", "journal.md"),
    ("select", "--context", "journal.md"), ("prune", "--dry-run"), ("prune",), ("loo", "--no-write"), ("loo",),
    ("lint",), ("lint", "--json"), ("agreement",), ("grade", "s1", "1"), ("undo", "s1"),
    ("record", "--session-id", "s1", "--journal", "journal.md", "--lessons"),
    ("import-gptme", "bandit-state.json"), ("export-gptme", "out.json"), ("store", "push"),
)  # fmt: skip
# (`store pull` reads a database and writes the file it is given, from any folder: tests/pg)


def test_every_command_that_reads_a_workspace_refuses_a_folder_that_is_not_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outside a workspace, the commands that only read warned and printed an empty table, exit 0 (`status`,
    `sessions`, `replay`, `lint`'s findings on stdout, `select --dry-run`...), or said a session was unknown
    (`show`, `explain`), while the dashboard and the writes refused; `select --dry-run` saved a cache under
    state/lesson-thompson/ there, which made the folder a workspace for every command after it.
    Each is refused now: exit 1, nothing on stdout, one line naming the folder and --workspace, nothing written."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "journal.md").write_text("mypy\n")
    (elsewhere / "bandit-state.json").write_text("{}\n")
    monkeypatch.chdir(elsewhere)
    for argv in READERS:
        code, out, err = run_cli(*argv)
        assert (code, out) == (1, ""), (argv, out, err)
        assert err.count("\n") == 1 and f"{elsewhere} is not a lesson-credit workspace" in err, (argv, err)
        assert "--workspace" in err, (argv, err)
        assert sorted(p.name for p in elsewhere.iterdir()) == ["bandit-state.json", "journal.md"], argv


def test_a_workspace_needs_lessons_or_a_log_not_both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lessons_only = make_workspace(tmp_path, {"tools/mypy.md": (["mypy"], "active")}, name="new")
    code, out, err = _select_from_stdin(monkeypatch, "-w", str(lessons_only))
    assert code == 0 and "tools/mypy.md" in out, err
    assert (lessons_only / LOG_REL).is_file()  # the first selection starts the log
    log_only = make_workspace(tmp_path, None, [session("s1", None, {"gone.md": 1.0})], name="old")
    (log_only / "lessons").rmdir()
    code, _out, err = run_cli("grade", "s1", "1", "-w", str(log_only))
    assert code == 0, err
    toml_only = tmp_path / "toml"
    (toml_only / "shared").mkdir(parents=True)
    (toml_only / "gptme.toml").write_text('[lessons]\ndirs = ["shared"]\n')
    (toml_only / "journal.md").write_text("nothing\n")
    code, _out, err = run_cli(
        "record", "--session-id", "s9", "--journal", str(toml_only / "journal.md"), "--lessons", "-w", str(toml_only)
    )
    assert code == 0, err


def test_an_empty_workspace_name_is_a_usage_error(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, {"tools/mypy.md": (["mypy"], "active")})
    done = subprocess.run(
        [sys.executable, "-m", "lesson_credit.cli.main", "select", "--context", "-", "--workspace", ""],
        cwd=root, env=process_env(), input="mypy", capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and "--workspace" in done.stderr and "empty" in done.stderr, done.stderr
    assert log_bytes(root) is None  # `-w ""` used to mean `.`


# ---------------------------------------------------------------- item 7


def test_no_command_without_a_terminal_exits_2_at_once(tmp_path: Path) -> None:
    """`lesson-credit -w ws > out.txt < /dev/null` (a cron job that forgot the command) started the
    dashboard and never ended; here it would time out (a generous bound, far past the ~1 s it takes)."""
    root = make_workspace(tmp_path, {"tools/mypy.md": (["mypy"], "active")})
    out = tmp_path / "out.txt"
    with out.open("w") as stdout:
        done = subprocess.run(
            [sys.executable, "-m", "lesson_credit.cli.main", "-w", str(root)],
            cwd=ROOT,
            env=process_env(),
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "no command" in done.stderr and "--help" in done.stderr
    assert out.read_text() == ""


def test_the_dashboard_without_a_terminal_says_so_and_exits_1(tmp_path: Path) -> None:
    """`lesson-credit tui < /dev/null > out.txt` drew the dashboard's escape codes on stderr and never
    ended (here it would time out: a generous bound, far past the ~1 s it takes). It needs a terminal:
    one line, exit 1, nothing on stdout, nothing written."""
    root = make_workspace(tmp_path, {"tools/mypy.md": (["mypy"], "active")})
    out = tmp_path / "out.txt"
    with out.open("w") as stdout:
        done = subprocess.run(
            [sys.executable, "-m", "lesson_credit.cli.main", "tui", "-w", str(root)],
            cwd=ROOT,
            env=process_env(),
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 1 and out.read_text() == ""
    assert done.stderr.count("\n") == 1 and "\x1b" not in done.stderr, done.stderr[:300]
    assert done.stderr.startswith("lesson-credit: the dashboard needs a terminal"), done.stderr
    assert log_bytes(root) is None
