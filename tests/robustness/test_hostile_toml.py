"""config.toml and gptme.toml nested past what a parser should be asked to read: arrays or inline tables
inside each other (Python's recursion limit: a traceback, exit 70, before) and dotted keys thousands of
parts deep (the parser's time and memory go as the square of a key's depth) are one line, nothing written."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from lesson_credit.core.base import safe_toml
from tests.support.cli_run import run_cli
from tests.support.engine_helpers import BASIC_LESSONS, CONFIG_REL, LOG_REL, make_workspace, session

DEEP_ARRAY = "a = " + "[" * 5_000 + "]" * 5_000 + "\n"  # 10 KB: tomllib recursed past the limit
DEEP_INLINE = "x = " + "{a=" * 3_000 + "1" + "}" * 3_000 + "\n"
DOTTED = "a" + ".a" * 2_000 + " = 1\n"  # 2,000 dots: 2,000^2 = 4,000,000 > 1,000,000


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path, BASIC_LESSONS, events=[session("s1", 0.8, {"tools/git.md": 0.5})])


@pytest.mark.parametrize(("text", "said"), [(DEEP_ARRAY, "nested"), (DEEP_INLINE, "nested"), (DOTTED, "2,000 dots")])
def test_config_nested_too_deeply_is_one_line_and_changes_nothing(ws: Path, text: str, said: str) -> None:
    (ws / CONFIG_REL).write_text(text)
    log = (ws / LOG_REL).read_bytes()
    for argv in (["status"], ["grade", "s1", "0.5"]):
        code, out, err = run_cli("--workspace", str(ws), *argv)
        assert code == 1 and out == "", (argv, code, err[-600:])
        assert len(err.strip().splitlines()) == 1 and "config.toml" in err and said in err, err[-600:]
    assert (ws / LOG_REL).read_bytes() == log


@pytest.mark.parametrize("text", ["[lessons]\ndirs = " + DEEP_ARRAY[4:], "[lessons" + ".a" * 2_000 + "]\n"])
def test_gptme_toml_nested_too_deeply_is_a_warning_naming_it(ws: Path, text: str) -> None:
    (ws / "gptme.toml").write_text(text)
    code, _, err = run_cli("--workspace", str(ws), "status")
    assert code == 0 and "Traceback" not in err, err[-600:]
    assert "gptme.toml: not valid TOML (" in err and "nested too deeply" in err, err


def test_the_dots_bound_by_hand() -> None:
    # squares of the dots per line, against 1,000,000: 1,000 dots on one line is 1,000,000 (read);
    # 1,001 is 1,002,001 (refused); 1,100 lines of 30 dots is 1,100 * 900 = 990,000 (read), 1,112 lines
    # 1,000,800 (refused, naming the first of the lines with the most dots)
    safe_toml.check_shape("a = '" + "." * 1_000 + "'")
    with pytest.raises(tomllib.TOMLDecodeError, match="line 1 has 1,001 dots"):
        safe_toml.check_shape("a = '" + "." * 1_001 + "'")
    line = "'" + "." * 30 + "' = 1"
    safe_toml.check_shape("\n".join([line] * 1_100))
    with pytest.raises(tomllib.TOMLDecodeError, match="line 2 has 30 dots"):
        safe_toml.check_shape("\n".join(["x = 1", *[line] * 1_112]))


def test_an_ordinary_config_still_reads() -> None:
    assert safe_toml.loads('floor = 0.25\n[tools."my.tool"]\n"a.b" = 1.5\n') == {
        "floor": 0.25,
        "tools": {"my.tool": {"a.b": 1.5}},
    }
