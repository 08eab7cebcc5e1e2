"""Every command and option documented, `help COMMAND`, and docs/cli.md's generated reference."""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from lesson_credit.cli.common import HelpFormatter
from lesson_credit.cli.main import build_parser, main, subcommands

ROOT = Path(__file__).resolve().parents[2]


def reference_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cli_reference", ROOT / "scripts" / "cli_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if not isinstance(a, argparse._HelpAction | argparse._SubParsersAction)]


def test_every_option_of_every_command_has_help_text() -> None:
    parser = build_parser()
    commands = subcommands(parser)
    assert len(commands) >= 17
    missing = []
    for name, sub in [("lesson-credit", parser), *commands.items()]:
        for action in options(sub):
            text = action.help
            if not text or text == argparse.SUPPRESS or not text.strip():
                missing.append(f"{name} {action.option_strings or action.dest}")
    assert missing == []


def test_every_default_is_stated() -> None:
    unstated = []
    for name, sub in subcommands(build_parser()).items():
        for action in options(sub):
            if action.default not in (None, False, argparse.SUPPRESS) and "default" not in str(action.help):
                unstated.append(f"{name} {action.option_strings}")
    assert unstated == []


def test_every_command_has_a_description_and_examples() -> None:
    for name, sub in subcommands(build_parser()).items():
        assert sub.description and len(sub.description) > 20, name
        assert sub.formatter_class is HelpFormatter, name  # a description's indented lines stay lines
        epilog = sub.epilog or ""
        assert epilog.startswith("examples:\n"), name
        examples = [line for line in epilog.splitlines()[1:] if line.strip()]
        assert 1 <= len(examples) <= 3, name
        assert all(line.strip().startswith(("lesson-credit", "echo", "mkdir -p")) for line in examples), name


@pytest.mark.parametrize("command", ["sessions", "record", "lint", "replay"])
def test_help_command_prints_the_reference(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["help", command]) == 0
    via_help = capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    assert capsys.readouterr().out == via_help
    assert "examples:" in via_help and f"usage: lesson-credit {command}" in via_help


def test_help_without_a_command_and_with_an_unknown_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["help"]) == 0
    out = capsys.readouterr().out
    assert "sessions" in out and "completion" in out and "exit status" in out
    with pytest.raises(SystemExit) as info:  # a usage error, as `lesson-credit frobnicate` is
        main(["help", "frobnicate"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.startswith("usage: lesson-credit help ")
    assert err.splitlines()[-1].startswith("lesson-credit help: error: unknown command 'frobnicate'")


def test_lint_help_lists_its_checks(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["help", "lint"]) == 0
    out = capsys.readouterr().out
    for check in ("duplicate session ids", "ghost arms", "pending sessions", "--fail-on"):
        assert check in " ".join(out.split()), check


def test_sessions_help_says_what_the_information_column_is(capsys: pytest.CaptureFixture[str]) -> None:
    # --order informative prints a column the help never named nor said the meaning of (now `shift`, the root
    # of --json's `information`)
    assert main(["help", "sessions"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "a column `shift`: how far a person's grade is expected to move" in out, out
    assert "the square root of `information` in --json, the sum over the session's lessons of the expected" in out


def _leaves(parser: argparse.ArgumentParser, name: str = "") -> dict[str, argparse.ArgumentParser]:
    """Every command's parser by its name (`store push` for a command of a command)."""
    nested = subcommands(parser)
    if not nested:
        return {name: parser}
    return {k: v for sub_name, sub in nested.items() for k, v in _leaves(sub, f"{name} {sub_name}".strip()).items()}


def test_every_command_takes_workspace_as_the_readme_says(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the README: "Every command takes `--workspace DIR`"; `help` and `completion` refused it (exit 2)
    leaves = _leaves(build_parser())
    assert "store push" in leaves and "help" in leaves  # (the walk reaches every command)
    without = [name for name, p in leaves.items() if not any("--workspace" in a.option_strings for a in p._actions)]
    assert without == []
    assert main(["help", "status", "--workspace", str(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith("usage: lesson-credit status")
    assert main(["completion", "bash", "-w", str(tmp_path)]) == 0
    assert "lesson-credit" in capsys.readouterr().out


def test_docs_reference_matches_the_parser() -> None:
    script = reference_script()
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert script.START in page and script.END in page
    section = page.split(script.START, 1)[1].split(script.END, 1)[0]
    generated = script.render()
    assert script.START + section + script.END == generated, "run: python scripts/cli_reference.py"
    # and it really lists every option of every command
    for name, sub in subcommands(build_parser()).items():
        assert f"<code>lesson-credit {name}</code>" in generated
        for action in options(sub):
            assert f"`{script._option(action)}`" in generated, (name, action.dest)


def test_reference_script_replaces_between_the_markers() -> None:
    script = reference_script()
    stale = "intro\n" + script.START + "\nold text\n" + script.END + "\noutro\n"
    assert script.replaced(stale, script.render()) == "intro\n" + script.render() + "\noutro\n"
    with pytest.raises(SystemExit):
        script.replaced("no markers", script.render())


def test_no_reference_row_lacks_its_text() -> None:
    """`store`'s ACTION read "None (required)": a positional without help text."""
    rows = [line for line in reference_script().render().splitlines() if line.startswith("| `")]
    assert rows and [row for row in rows if "| None" in row] == []


def test_the_completion_examples_work_in_a_fresh_home(tmp_path: Path) -> None:
    """The examples redirected into folders a fresh account does not have: bash refused them."""
    import shlex
    import subprocess
    import sys

    from tests.support.cli_run import process_env

    examples = [line.strip() for line in (subcommands(build_parser())["completion"].epilog or "").splitlines()[1:]]
    command = f"{shlex.quote(sys.executable)} -m lesson_credit.cli.main"
    for line in examples:
        done = subprocess.run(
            ["bash", "-c", line.replace("lesson-credit completion", f"{command} completion")],
            env=process_env(HOME=str(tmp_path)), capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 0, (line, done.stderr)
    bash = tmp_path / ".local" / "share" / "bash-completion" / "completions" / "lesson-credit"
    assert (
        "lesson-credit" in bash.read_text()
        and "#compdef lesson-credit" in (tmp_path / ".zfunc" / "_lesson-credit").read_text()
    )


def test_the_simulate_examples_are_small() -> None:
    """docs/cli.md's simulate example ran 72 CPU-seconds with no progress shown: the examples
    simulate at most 1,000 sessions in all (seeds x sessions per run; the default world has 1,500)."""
    from lesson_credit.core.sim.simulate import scenario

    examples = [line.strip() for line in (subcommands(build_parser())["simulate"].epilog or "").splitlines()[1:]]
    assert examples
    for line in examples:
        args = build_parser().parse_args(line.split()[1:])
        sessions = args.sessions or scenario(args.scenario).n_sessions
        assert args.seeds * sessions <= 1000, line


@pytest.mark.parametrize(
    ("argv", "prog", "extra"),
    [
        (["loo", "--no-write", "--min-sessions", "3"], "lesson-credit loo", "--min-sessions 3"),
        (["status", "--jsn"], "lesson-credit status", "--jsn"),
        (["help", "status", "--json"], "lesson-credit help", "--json"),
        (["store", "push", "--bogus"], "lesson-credit store push", "--bogus"),
    ],
)
def test_an_unknown_option_is_reported_by_its_command(
    argv: list[str], prog: str, extra: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`lesson-credit loo --min-sessions 3` printed the top-level usage (`lesson-credit [-h] ... COMMAND
    ...`) and `lesson-credit: error: unrecognized arguments`: nothing said which command's options to
    look up. Now the command's own usage and name, as for its other usage errors."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: {prog} "), err
    assert err.rstrip("\n").splitlines()[-1] == f"{prog}: error: unrecognized arguments: {extra}"


def help_text(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as info:
        main([*argv, "--help"])
    assert info.value.code == 0
    return capsys.readouterr().out


def test_every_help_fits_80_columns(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The descriptions were written wrapped at 90-100 columns and printed as written: an 80-column
    terminal broke them mid-word, as it did `simulate`'s usage line (every scenario's name, 266
    columns). Only the examples, commands to copy whole, may be wider."""
    monkeypatch.setenv("COLUMNS", "80")
    names = [[], *([name] for name in subcommands(build_parser())), ["store", "push"], ["store", "pull"]]
    wide = []
    for argv in names:
        text = help_text(argv, capsys)
        body = text.split("\nexamples:\n", 1)[0]
        wide += [f"{' '.join(argv) or 'lesson-credit'}: {line}" for line in body.splitlines() if len(line) > 80]
    assert wide == []


def test_a_fitted_description_keeps_its_list_and_breaks_no_word(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    text = help_text(["replay"], capsys)
    starts = [line.split(":")[0] for line in text.splitlines() if line.startswith("  ") and ": alpha +=" in line]
    assert starts == ["  seed", "  evidence", "  uniform"]  # one strategy a line, as written
    text = help_text(["select"], capsys)
    assert "state/lesson-dropout/<session-id>.jsonl" in text  # not broken at its hyphen
    assert "--json" in text and "(default: a table)" not in text  # select prints ids, not a table
