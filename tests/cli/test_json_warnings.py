"""Every --json output carries the warnings the table forms print: a hook that
reads JSON learns that log lines are being skipped. The existing keys stay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli_run import run
from tests.support.engine_helpers import BASIC_JOURNAL, BASIC_LESSONS, make_workspace, session
from tests.support.gptme_files import gptme_state, write_json

BAD = "line 2: "  # the log's second line is not JSON


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(
        tmp_path,
        BASIC_LESSONS,
        events=[session("s1", 0.8, {"tools/git.md": 0.5}), "{not json\n", session("s2", None, {"tools/git.md": 0.2})],
        journals={"j.txt": BASIC_JOURNAL},
    )


def _commands(ws: Path, tmp_path: Path) -> list[tuple[list[str], set[str]]]:
    """(argv, keys that must still be there) for every command with --json that reads the workspace."""
    context = tmp_path / "context.txt"
    context.write_text("git worktree")
    state = write_json(tmp_path / "gptme-state.json", gptme_state(ws))
    w = ["--workspace", str(ws)]
    return [
        (["status", *w], {"lessons", "sessions", "strategy", "floor"}),
        (["replay", *w, "--floor", "0.5"], {"lessons", "written", "decay"}),
        (["sessions", *w], {"sessions", "matched"}),
        (["show", "s1", *w], {"session_id", "grades", "lessons"}),
        (["explain", "s1", *w], {"session_id", "lessons", "base_reward"}),
        (["select", *w, "--context", str(context), "--session-id", "sel1"], {"selected", "candidates"}),
        (
            ["record", *w, "--session-id", "s3", "--journal", str(ws / "j.txt"), "--lessons", "tools/git.md"],
            {"session_id", "lessons"},
        ),  # fmt: skip
        (["grade", "s2", "0.4", *w], {"session_id", "history", "grader"}),
        (["prune", *w, "--dry-run"], {"retired", "written"}),
        (["loo", *w, "--no-write"], {"meta", "results"}),
        (["loo", *w], {"meta", "results"}),
        (["import-gptme", str(state), *w], {"imported", "arms"}),
        (["agreement", *w], {"pairs", "by_category"}),  # said nothing of the bad line, nor on stderr
    ]


def test_every_json_output_lists_the_bad_line(ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv, keys in _commands(ws, tmp_path):
        code, out, err = run(capsys, *argv, "--json")
        assert code == 0, (argv, err)
        payload = json.loads(out)
        assert keys <= set(payload), (argv, sorted(payload))
        warnings = payload.get("warnings")
        assert isinstance(warnings, list), argv
        assert any(BAD in w and "sessions.jsonl" in w for w in warnings), (argv, warnings)


def test_json_warnings_are_the_lines_the_table_form_prints(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "status", "--workspace", str(ws))
    assert code == 0
    table_warnings = [line.removeprefix("warning: ") for line in err.splitlines() if line.startswith("warning: ")]
    code, out, _ = run(capsys, "status", "--workspace", str(ws), "--json")
    assert json.loads(out)["warnings"] == table_warnings != []


def test_a_clean_workspace_has_an_empty_warnings_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_workspace(tmp_path, BASIC_LESSONS, events=[session("s1", 0.8, {"tools/git.md": 0.5})])
    code, out, _ = run(capsys, "status", "--workspace", str(root), "--json")
    assert code == 0 and json.loads(out)["warnings"] == []


def test_select_warns_of_the_bad_line_on_stderr_once_as_a_comment(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`select` without --json said nothing of the log's bad line (its --json and every other command do). It says
    so once on stderr, as a `#` comment: a hook that saves stdout and stderr to one file hands it to `record
    --lessons-file`, which reads what is not a comment as lesson ids."""
    context = tmp_path / "context.txt"
    context.write_text("git worktree")
    argv = ["--workspace", str(ws), "--session-id", "sel1"]
    code, out, err = run(capsys, "select", *argv, "--context", str(context))
    assert code == 0, err
    said = [line for line in err.splitlines() if BAD in line]
    assert len(said) == 1 and said[0].startswith("# warning: sessions.jsonl line 2: "), err
    assert all(line.startswith("#") for line in err.splitlines()), err
    saved = tmp_path / "selected.txt"
    saved.write_text(out + err, encoding="utf-8")
    code, _, err = run(capsys, "record", *argv, "--journal", str(ws / "j.txt"), "--lessons-file", str(saved))
    assert code == 0, err


def test_select_s_stderr_is_comments_also_where_a_cache_notes_it_is_rebuilt(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cache's note (`lesson-credit: note: joint-posterior.msgpack is damaged ...`, printed on the first `select`
    after an upgrade changes a cache's version) was a bare line on select's stderr: a hook saving stdout and stderr
    to one file handed it to `record --lessons-file`, which refused `lesson-credit:` as a lesson id and logged no
    session. Every line select writes on stderr (not a terminal) is a `#` comment."""
    context = tmp_path / "context.txt"
    context.write_text("git worktree")
    argv = ["--workspace", str(ws), "--context", str(context), "--policy", "joint"]
    assert run(capsys, "select", *argv, "--dry-run")[0] == 0  # writes the joint posterior's cache
    cache = ws / "state" / "lesson-thompson" / ".cache" / "joint-posterior.msgpack"
    cache.write_bytes(b"lesson-credit joint-posterior 0\n")  # another version's
    code, out, err = run(capsys, "select", *argv, "--session-id", "sel1")
    assert code == 0, err
    assert any("joint-posterior.msgpack" in line for line in err.splitlines()), err
    assert all(line.startswith("#") for line in err.splitlines()), err
    saved = tmp_path / "selected.txt"
    saved.write_text(out + err, encoding="utf-8")
    argv = ["--workspace", str(ws), "--session-id", "sel1", "--journal", str(ws / "j.txt")]
    code, _, err = run(capsys, "record", *argv, "--lessons-file", str(saved))
    assert code == 0, err


def test_a_failed_select_s_one_line_is_a_comment_too_and_exits_non_zero(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """select's own error line (a context file not there) was printed bare after its warnings were comments: a hook
    saving stdout and stderr to one file (`2>&1`) handed `record --lessons-file` a line it refused as lesson ids,
    and the session was not logged. It is a `#` comment as the rest (stderr not a terminal), one line, exit 1: the
    record logs the session with no lessons, as none were injected. With --json it stays a bare line."""
    argv = ["--workspace", str(ws), "--session-id", "sel1"]
    code, out, err = run(capsys, "select", *argv, "--context", str(tmp_path / "gone.txt"))
    assert (code, out) == (1, "")
    assert err.splitlines() == [f"# lesson-credit: context file not found: {tmp_path / 'gone.txt'}"], err
    saved = tmp_path / "selected.txt"
    saved.write_text(out + err, encoding="utf-8")
    code, _, err = run(capsys, "record", *argv, "--journal", str(ws / "j.txt"), "--lessons-file", str(saved))
    assert code == 0, err  # before: 'not in the lesson library: lesson-credit:, context, file, ...'
    code, out, err = run(capsys, "select", *argv, "--context", str(tmp_path / "gone.txt"), "--json")
    assert (code, out, err) == (1, "", f"lesson-credit: context file not found: {tmp_path / 'gone.txt'}\n")


def test_a_select_usage_error_is_comments_too(ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A usage error (`--k "$K"` with K unset) is said by argparse while the command line is read, before the
    command runs: its usage lines and its error line were bare, and `record --lessons-file` of the `2>&1` file
    refused them as lesson ids ('usage:, lesson-credit, select, ...'), the session not logged. Every line is a
    comment (stderr not a terminal), exit 2 as before."""
    argv = ["--workspace", str(ws), "--session-id", "sel2"]
    with pytest.raises(SystemExit) as exited:
        run(capsys, "select", *argv, "--context", str(ws / "j.txt"), "--k", "")
    out, err = capsys.readouterr()
    assert exited.value.code == 2 and out == "", out
    assert err.splitlines() and all(line.startswith("# ") for line in err.splitlines()), err
    assert "select: error: argument --k" in err, err
    saved = tmp_path / "selected.txt"
    saved.write_text(out + err, encoding="utf-8")
    code, _, err = run(capsys, "record", *argv, "--journal", str(ws / "j.txt"), "--lessons-file", str(saved))
    assert code == 0, err  # before: 'not in the lesson library: usage:, lesson-credit, select, ...'
