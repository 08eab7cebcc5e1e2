"""`lesson-credit completion bash|zsh`: scripts generated from the parser."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from lesson_credit.cli.main import build_parser, main, subcommands


def script(shell: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["completion", shell]) == 0
    return capsys.readouterr().out


@pytest.mark.smoke
def test_bash_script_completes_every_command_and_option(capsys: pytest.CaptureFixture[str]) -> None:
    text = script("bash", capsys)
    assert "complete" in text and "lesson-credit" in text
    for name, sub in subcommands(build_parser()).items():
        assert name in text
        for action in sub._actions:
            for option in action.option_strings:
                assert option in text, (name, option)
    assert "--fail-on" in text


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
@pytest.mark.smoke
def test_bash_completes_commands_and_choices(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "lc.bash").write_text(script("bash", capsys), encoding="utf-8")
    probe = (
        f"source {tmp_path / 'lc.bash'}\n"
        'COMP_WORDS=(lesson-credit ses); COMP_CWORD=1; _shtab_lesson_credit; echo "${COMPREPLY[*]}"\n'
        'COMP_WORDS=(lesson-credit lint --fail-on ""); COMP_CWORD=3; _shtab_lesson_credit; echo "${COMPREPLY[*]}"\n'
    )
    proc = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["sessions", "error warning"]


@pytest.mark.smoke
def test_zsh_script(capsys: pytest.CaptureFixture[str]) -> None:
    text = script("zsh", capsys)
    assert text.startswith("#compdef lesson-credit")
    assert "sessions" in text and "--lessons-file" in text


def test_unknown_shell_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["completion", "fish"])
    assert info.value.code == 2
