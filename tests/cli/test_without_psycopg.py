"""Without the `pg` extra (a plain `pip install -e .`), the commands that only make sense on a
database store say what they need in one line, exit 1, instead of a bug's traceback."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.cli_run import run


@pytest.fixture
def no_psycopg(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "psycopg" or m.startswith(("psycopg.", "lesson_credit.core.log.pg"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "psycopg", None)  # `import psycopg` raises ImportError


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["store", "push"], "lesson-credit: store push needs a database store"),
        (["store", "pull", "copy.jsonl"], "lesson-credit: store pull needs a database store"),
        (["status", "--written-by", "bob"], "lesson-credit: --written-by needs a database store"),
        (["loo", "--no-write", "--written-by", "bob"], "lesson-credit: --written-by needs a database store"),
    ],
)
@pytest.mark.usefixtures("no_psycopg")
def test_database_only_commands_on_the_file_say_so_without_psycopg(
    basic_ws: Path, capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    before = sorted((p.relative_to(basic_ws), p.read_bytes()) for p in basic_ws.rglob("*") if p.is_file())
    code, out, err = run(capsys, *argv, "-w", str(basic_ws))
    assert (code, out) == (1, "")
    assert err.startswith(says) and err.count("\n") == 1, err
    assert not (basic_ws / "copy.jsonl").exists()
    assert sorted((p.relative_to(basic_ws), p.read_bytes()) for p in basic_ws.rglob("*") if p.is_file()) == before
