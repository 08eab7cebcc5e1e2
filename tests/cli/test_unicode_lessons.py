"""A lesson named in another Unicode form than its file's: `café.md` with é as one code point (NFC, U+00E9)
and with an e and a combining accent (NFD, U+0065 U+0301) look alike, so a lesson typed in either form is
the library's lesson (a record logs the library's id and says so)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli_run import run
from tests.support.engine_helpers import LOG_REL

NFC = "caf\u00e9.md"
NFD = "cafe\u0301.md"


def workspace(tmp_path: Path, file_name: str) -> Path:
    (tmp_path / "lessons").mkdir()
    (tmp_path / "lessons" / file_name).write_text("---\nmatch:\n  keywords: [deploy]\n---\n# Café\n", encoding="utf-8")
    (tmp_path / "j.md").write_text("deployed\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(("library", "typed"), [(NFC, NFD), (NFD, NFC)], ids=["file-NFC", "file-NFD"])
def test_record_logs_the_librarys_id_for_a_lesson_typed_in_the_other_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], library: str, typed: str
) -> None:
    ws = workspace(tmp_path, library)
    argv = ["record", "-w", str(ws), "--session-id", "s1", "--journal", str(ws / "j.md"), "--reward", "0.5"]
    code, _, err = run(capsys, *argv, "--lessons", typed)
    assert code == 0, err
    (event,) = [json.loads(line) for line in (ws / LOG_REL).read_text(encoding="utf-8").splitlines()]
    assert [entry["path"] for entry in event["lessons"]] == [library]  # the library's code points, not the typed
    typed_form, library_form = ("NFD", "NFC") if library == NFC else ("NFC", "NFD")
    assert (
        f"warning: lesson {typed!r} ({typed_form}) is logged as the library's {library!r} ({library_form}): "
        "the same name in another Unicode form"
    ) in err


def test_a_lesson_in_both_forms_in_the_library_is_taken_as_typed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # two files whose names differ only in form (a file system that keeps names as given): each its own lesson
    ws = workspace(tmp_path, NFC)
    (ws / "lessons" / NFD).write_text("---\nmatch:\n  keywords: [deploy]\n---\n# Other\n", encoding="utf-8")
    argv = ["record", "-w", str(ws), "--session-id", "s1", "--journal", str(ws / "j.md"), "--reward", "0.5"]
    code, _, err = run(capsys, *argv, "--lessons", NFD)
    assert (code, "warning" in err) == (0, False), err
    (event,) = [json.loads(line) for line in (ws / LOG_REL).read_text(encoding="utf-8").splitlines()]
    assert [entry["path"] for entry in event["lessons"]] == [NFD]


def test_sessions_and_explain_find_a_lesson_typed_in_the_other_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = workspace(tmp_path, NFC)
    argv = ["record", "-w", str(ws), "--session-id", "s1", "--journal", str(ws / "j.md"), "--reward", "0.5"]
    assert run(capsys, *argv, "--lessons", NFC)[0] == 0
    code, out, err = run(capsys, "sessions", "-w", str(ws), "--lesson", NFD, "--json")
    assert code == 0, err
    assert [row["session_id"] for row in json.loads(out)["sessions"]] == ["s1"]
    code, out, err = run(capsys, "explain", "s1", "-w", str(ws), "--lesson", NFD.removesuffix(".md"))
    assert code == 0, err
    assert f"{NFC}: salience" in out
