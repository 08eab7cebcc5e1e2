"""`lesson-credit completion bash|zsh` (issue 12, item 8)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from cli.main import build_parser, main, subcommands


def script(shell: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["completion", shell]) == 0
    return capsys.readouterr().out


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
def test_bash_script_is_valid_bash(capsys: pytest.CaptureFixture[str]) -> None:
    proc = subprocess.run(["bash", "-n"], input=script("bash", capsys), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_zsh_script(capsys: pytest.CaptureFixture[str]) -> None:
    text = script("zsh", capsys)
    assert text.startswith("#compdef lesson-credit")
    assert "sessions" in text and "--lessons-file" in text


def test_unknown_shell_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["completion", "fish"])
    assert info.value.code == 2
