"""Terminal safety: text from journals, lesson files and the log never reaches the terminal as control codes.

An escape sequence in a journal (or a lesson's name, a keyword, a session id, a grader) must come out
escaped (`\\x1b`), and markup-looking text such as `[red]boom[/]` must come out literally.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lesson_credit.core.workspace import Workspace
from tests.support.cli_run import process_env, run_cli
from tests.support.engine_helpers import LOG_REL, fixed_clock, log_bytes, make_workspace, session

ESC, BEL, CSI8 = "\x1b", "\x07", "\x9b"  # CSI8: the 8-bit (C1) form of ESC [
RED = "\x1b[31m"
MARKUP = "[red]boom[/]"
EVIL_LESSON = f"tools/evil-{RED}-{BEL}-{MARKUP}.md"
PLAIN_LESSON = "tools/plain.md"
EVIL_SESSION = f"s-{RED}x{BEL}"
EVIL_KEYWORDS = [f"{RED}alert", MARKUP, f"bell{BEL}", "never-there"]
JOURNAL = f"start {RED}alert{BEL} and {MARKUP} then bell{BEL} and a C1 {CSI8}2J end\n"


def assert_terminal_safe(text: str) -> None:
    assert ESC not in text, repr(text)
    assert BEL not in text, repr(text)
    assert CSI8 not in text, repr(text)


@pytest.fixture
def evil(tmp_path: Path) -> Path:
    """A workspace whose lesson name, title, keywords, journal, session id and category carry control codes."""
    root = make_workspace(
        tmp_path,
        lessons={EVIL_LESSON: (EVIL_KEYWORDS, "active"), PLAIN_LESSON: (["start"], "active")},
        journals={"j.txt": JOURNAL},
    )
    ws = Workspace(root, clock=fixed_clock)
    assert ws.library().get(EVIL_LESSON) is not None, ws.lesson_problems()
    # The evil session id and category come from another tool's line: our writers refuse them.
    # The saliences are what `record` computes: 3 of the evil lesson's 4 keywords, `start` for the plain one.
    evil_session = session(EVIL_SESSION, 0.8, {EVIL_LESSON: 0.75, PLAIN_LESSON: 1.0}, category=f"cat{RED}")
    evil_session.update(journal_path="j.txt", timestamp="2026-03-05T16:30:00Z")
    # a pending session and a ghost arm, so that lint names the evil ids (the log's folder made here: a read of a
    # folder of lessons alone writes nothing into it)
    (root / LOG_REL).parent.mkdir(parents=True, exist_ok=True)
    with (root / LOG_REL).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(evil_session) + "\n")
        handle.write(json.dumps(session(f"pending-{RED}", None, {f"gone/{RED}{MARKUP}.md": 0.5})) + "\n")
    return root


def test_fixture_really_carries_control_codes(evil: Path) -> None:
    """Guard: the evil strings survive into the library and the log, so the checks below mean something."""
    ws = Workspace(evil, clock=fixed_clock)
    exp = ws.explain(EVIL_SESSION)
    assert exp.session.session_id == EVIL_SESSION
    evil_credit = next(c for c in exp.lessons if c.path == EVIL_LESSON)
    assert evil_credit.breakdown is not None
    hits = {k.keyword for k in evil_credit.breakdown.keywords if k.hit}
    assert hits == {f"{RED}alert", MARKUP, f"bell{BEL}"}  # 3 of 4 -> salience 0.75
    assert evil_credit.salience == pytest.approx(0.75)


def test_explain_output_is_escaped(evil: Path) -> None:
    code, out, err = run_cli("explain", "--workspace", str(evil), EVIL_SESSION)
    assert code == 0, err
    assert_terminal_safe(out)
    assert_terminal_safe(err)
    assert "\\x1b[31m" in out  # visible, not interpreted
    assert "\\x07" in out
    assert "\\x9b" in out  # the journal snippet's C1 control
    assert MARKUP in out  # markup-looking text is printed as it is
    assert "session s-\\x1b[31mx\\x07" in out
    assert "category cat\\x1b[31m" in out


def test_explain_single_lesson_output_is_escaped(evil: Path) -> None:
    code, out, err = run_cli("explain", "--workspace", str(evil), EVIL_SESSION, "--lesson", EVIL_LESSON)
    assert code == 0, err
    assert_terminal_safe(out)
    assert "tools/evil-\\x1b[31m-\\x07-[red]boom[/].md" in out


def test_status_output_is_escaped(evil: Path) -> None:
    code, out, err = run_cli("status", "--workspace", str(evil))
    assert code == 0, err
    assert_terminal_safe(out)
    assert_terminal_safe(err)
    assert "tools/evil-\\x1b[31m-\\x07-[red]boom[/].md" in out
    assert "gone/\\x1b[31m[red]boom[/].md" in out


def test_json_output_has_no_raw_escape(evil: Path) -> None:
    for argv in (("status",), ("explain", EVIL_SESSION), ("lint",)):
        code, out, err = run_cli(argv[0], "--workspace", str(evil), *argv[1:], "--json")
        assert code in (0, 1), err
        assert ESC not in out and BEL not in out
        json.loads(out)  # and the strings come back intact from the JSON
    payload = json.loads(run_cli("status", "--workspace", str(evil), "--json")[1])
    assert EVIL_LESSON in {row["path"] for row in payload["lessons"]}


def test_lint_output_is_escaped(evil: Path) -> None:
    code, out, err = run_cli("lint", "--workspace", str(evil))
    assert code == 0, err  # a pending session and a ghost arm are warnings
    assert_terminal_safe(out)
    assert_terminal_safe(err)
    assert "pending-\\x1b[31m" in out
    assert "gone/\\x1b[31m[red]boom[/].md" in out


def test_loo_and_select_output_is_escaped(evil: Path) -> None:
    code, out, err = run_cli("loo", "--workspace", str(evil), "--no-write")
    assert code == 0, err
    assert_terminal_safe(out)
    assert "tools/evil-\\x1b[31m" in out
    context = evil / "context.txt"
    context.write_text(f"{RED}alert", encoding="utf-8")
    code, out, err = run_cli("select", "--workspace", str(evil), "--context", str(context), "--dry-run", "--seed", "1")
    assert code == 0, err
    assert_terminal_safe(out)
    assert_terminal_safe(err)
    assert "tools/evil-\\x1b[31m" in out


def test_warnings_about_broken_lessons_and_log_lines_are_escaped(evil: Path) -> None:
    broken = evil / "lessons" / f"broken-{RED}.md"
    broken.write_text("---\nstatus: [unclosed\n---\n", encoding="utf-8")
    with (evil / LOG_REL).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"type": f"weird{RED}", "session_id": f"x{BEL}"}) + "\n")
        handle.write(json.dumps(session(EVIL_SESSION, 0.1, {PLAIN_LESSON: 0.5})) + "\n")  # a duplicate id
    code, out, err = run_cli("status", "--workspace", str(evil))
    assert code == 0
    assert_terminal_safe(out)
    assert_terminal_safe(err)
    assert "broken-\\x1b[31m.md" in err
    assert "weird\\x1b[31m" in err
    code, out, err = run_cli("lint", "--workspace", str(evil))
    assert code == 1
    assert_terminal_safe(out)
    assert "broken-\\x1b[31m.md" in out


@pytest.mark.parametrize(
    "argv",
    [
        ("explain", f"nope-{RED}{BEL}"),
        ("grade", f"nope-{RED}{BEL}", "0.5"),
        ("explain", EVIL_SESSION, "--lesson", f"other-{RED}.md"),
        ("record", "--session-id", "new", "--journal", "j.txt", "--lessons", f"{RED}{BEL}.md"),
        ("record", "--session-id", EVIL_SESSION, "--journal", "j.txt", "--lessons", PLAIN_LESSON),
        ("import-gptme", f"missing-{RED}.json"),
    ],
)
def test_refusals_on_stderr_are_escaped(evil: Path, argv: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(evil)
    before = log_bytes(evil)
    code, out, err = run_cli(argv[0], "--workspace", str(evil), *argv[1:])
    assert code == 1
    assert out == ""
    assert err.startswith("lesson-credit: ") and err.count("\n") == 1
    assert_terminal_safe(err)
    assert "\\x1b" in err  # the id is shown, escaped
    assert log_bytes(evil) == before


def test_real_process_output_bytes_are_safe(evil: Path) -> None:
    for argv in (["explain", EVIL_SESSION], ["status"], ["lint"], ["explain", f"nope-{RED}"]):
        proc = subprocess.run(
            [sys.executable, "-m", "lesson_credit.cli.main", argv[0], "-w", str(evil), *argv[1:]],
            capture_output=True,
            timeout=60,
            env=process_env(),
        )
        assert proc.returncode in (0, 1), proc.stderr
        for stream in (proc.stdout, proc.stderr):
            assert b"\x1b" not in stream and b"\x07" not in stream and b"\xc2\x9b" not in stream
        assert b"Traceback" not in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "lesson_credit.cli.main", "explain", "-w", str(evil), EVIL_SESSION],
        capture_output=True,
        timeout=60,
        env=process_env(),
    )
    assert MARKUP.encode() in proc.stdout


def test_explain_escapes_the_grader(evil: Path) -> None:
    # the CLI refuses such a grader; another writer of the log may still use one
    Workspace(evil).grade(EVIL_SESSION, 0.6, grader=f"judge{RED}{BEL}")
    code, out, err = run_cli("explain", "--workspace", str(evil), EVIL_SESSION)
    assert code == 0, err
    assert_terminal_safe(out)
    assert "judge\\x1b[31m\\x07" in out
