"""A command imports its own group of cli/commands only: `status` and `record` never load the modules of
the other commands (nor what those import), and every command's help reads as the whole parser's.

A fresh interpreter runs the command as `lesson-credit` does and the loaded modules are listed (no timing:
the machine may be busy).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest

from lesson_credit.cli.main import COMMANDS, build_parser, main, subcommands, summary_lines
from tests.support.cli_run import process_env

ALL_GROUPS = ["dashboard", "posteriors", "sessions", "selection", "writes", "analysis", "agreement", "gptme"]
ALL_GROUPS += ["store", "meta"]


def loaded_by(*argv: str) -> set[str]:
    """The modules a fresh `lesson-credit ARGV` process has loaded when the command returns (it must succeed)."""
    script = (
        "import json, sys\nfrom lesson_credit.cli.main import main\ncode = main(sys.argv[1:])\n"
        "print(json.dumps([code, sorted(sys.modules)]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, *argv], env=process_env(), capture_output=True, text=True, timeout=120
    )
    code, modules = json.loads(proc.stdout.splitlines()[-1])
    assert code == 0, proc.stderr
    return set(modules)


def command_modules(modules: set[str]) -> list[str]:
    return sorted(m.rsplit(".", 1)[1] for m in modules if m.startswith("lesson_credit.cli.commands."))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "lessons" / "tools").mkdir(parents=True)
    (tmp_path / "lessons" / "tools" / "git.md").write_text("---\nmatch:\n  keywords: [git]\n---\n# Git\n")
    (tmp_path / "journal.md").write_text("used git to commit\n")
    return tmp_path


def test_status_and_record_load_only_their_own_command_modules(workspace: Path) -> None:
    record = ["record", "-w", str(workspace), "--session-id", "s1", "--journal", "journal.md"]
    modules = loaded_by(*record, "--lessons", "tools/git.md", "--reward", "0.8")
    assert command_modules(modules) == ["sessions", "writes"]  # record prints what `explain` does
    assert not any(m.split(".")[0] in ("textual", "shtab", "psycopg") for m in modules)
    modules = loaded_by("status", "-w", str(workspace))
    assert command_modules(modules) == ["posteriors"]
    # what only other commands use: the health checks (lint), the simulator, the offline selection
    for name in ("lesson_credit.core.health", "lesson_credit.core.sim.simulate", "lesson_credit.core.offline"):
        assert name not in modules


def test_a_record_loads_no_module_it_does_not_use(workspace: Path) -> None:
    """The writers' lock is a flock (the filelock package, ~50 ms of imports, only where there is none);
    the gptme-sessions records' reader, join and trajectories are loaded only where there are records; the
    host's name (socket) only for a database store; TOML only where there is a config.toml or gptme.toml;
    numpy's masked arrays (numpy.ma, which np.unique's first call imports) nowhere; the selection
    policies and their draws (and `secrets`, for a selection's id) only for `select` or a [select] policy; `signal`
    (its enums) only to stop the child of a two-core read (core/log/halves.py); the matching of wildcard keywords
    (core/library/wildcard.py) only for a lesson that has one; `dataclasses` (with `copy` and
    `inspect`'s walk: the engine's value classes are msgspec Structs) and `typing_extensions` (msgspec's, see
    test_msgspec_is_imported_without_typing_extensions) nowhere."""
    record = ["record", "-w", str(workspace), "--session-id", "s1", "--journal", "journal.md"]
    modules = loaded_by(*record, "--lessons", "tools/git.md", "--reward", "0.8")
    assert (workspace / "state" / "lesson-thompson" / "sessions.jsonl").read_text().count('"type":"session"') == 1
    sessions = [f"lesson_credit.core.sessions.{name}" for name in ("join", "locate", "trajectory", "record_file")]
    drawing = ["lesson_credit.core.bandit.policy", "lesson_credit.core.bandit.select", "secrets"]
    wildcards = "lesson_credit.core.library.wildcard"
    for name in ("filelock", "asyncio", "socket", "tomllib", "numpy.ma", "signal", *sessions, *drawing, wildcards):
        assert name not in modules
    assert "dataclasses" not in modules and "typing_extensions" not in modules


def test_msgspec_is_imported_without_typing_extensions(workspace: Path) -> None:
    """msgspec takes from typing_extensions, when it is installed, only what Python 3.11's typing has too, for
    TypedDicts and dataclasses, which the engine never decodes (cli/process.py `msgspec_without_typing_extensions`):
    a command's msgspec is imported without it (a record; a select, whose group imports msgspec while its command
    line is parsed), and the process imports it as ever afterwards (the dashboard's textual does). --version
    imports neither."""
    script = (
        "import json, sys\nfrom lesson_credit.cli.main import main\ntry:\n    code = main(sys.argv[1:])\n"
        "except SystemExit as exc:\n    code = exc.code\n"
        "loaded = [name in sys.modules for name in ('msgspec', 'typing_extensions')]\n"
        "import typing_extensions\nprint(json.dumps([code, loaded, typing_extensions.__name__]))\n"
    )
    (workspace / "context.txt").write_text("git\n")
    record = [
        "record",
        "-w",
        str(workspace),
        "--session-id",
        "s1",
        "--journal",
        "journal.md",
        "--lessons",
        "tools/git.md",
    ]
    select = ["select", "-w", str(workspace), "--context", str(workspace / "context.txt"), "--dry-run"]
    found = []
    for argv in (record, select, ["--version"]):
        proc = subprocess.run(
            [sys.executable, "-c", script, *argv], env=process_env(), capture_output=True, text=True, timeout=120
        )
        found.append(json.loads(proc.stdout.splitlines()[-1]))
    assert found == [
        [0, [True, False], "typing_extensions"],
        [0, [True, False], "typing_extensions"],
        [0, [False, False], "typing_extensions"],
    ]


@pytest.mark.parametrize("group", sorted(set(group for group, _ in COMMANDS.values())))
def test_each_group_parses_in_a_fresh_process_while_typing_extensions_is_hidden(group: str) -> None:
    """A command line is parsed while typing_extensions is hidden (so that a group that imports msgspec then, as
    select's does, imports it without): no group's module needs typing_extensions itself (an ImportError)."""
    name = next(name for name, (of, _) in COMMANDS.items() if of == group)
    proc = subprocess.run(
        [sys.executable, "-m", "lesson_credit.cli.main", name, "--help"],
        env=process_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout.startswith("usage: ")


def test_a_grade_and_a_show_by_a_logged_id_do_not_load_the_query_module(workspace: Path) -> None:
    """The session query's module (sessions' filters and sorts) is for a prefix or an unknown id."""
    record = ["record", "-w", str(workspace), "--session-id", "s1", "--journal", "journal.md"]
    assert "lesson_credit.core.query" not in loaded_by(*record, "--lessons", "tools/git.md", "--reward", "0.8")
    assert "lesson_credit.core.query" not in loaded_by("grade", "-w", str(workspace), "s1", "0.4")
    assert "lesson_credit.core.query" not in loaded_by("show", "-w", str(workspace), "s1")
    assert "lesson_credit.core.query" in loaded_by("show", "-w", str(workspace), "s")  # a prefix: looked up there


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["record", "--help"], ["status", "--help"]])
def test_the_version_and_a_command_s_help_do_not_load_shutil(argv: list[str]) -> None:
    """shutil (with bz2 and lzma: about 2 ms) was loaded by cli/render.py, and by argparse for each parser it
    built, only to read the terminal's width: cli/render.py `terminal_columns` reads it as shutil does."""
    script = (
        "import json, sys\nfrom lesson_credit.cli.main import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit as exc:\n    assert exc.code == 0\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, *argv], env=process_env(), capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    modules = set(json.loads(proc.stdout.splitlines()[-1]))
    assert "lesson_credit.cli.common" in modules and "shutil" not in modules


def test_the_command_list_is_each_group_s_own() -> None:
    """COMMANDS (what a run lists without importing the other groups) says what each module registers,
    in the order of the whole parser's list."""
    listed: dict[str, tuple[str, str]] = {}
    for group in ALL_GROUPS:
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers()
        shared = argparse.ArgumentParser(add_help=False)
        import_module(f"lesson_credit.cli.commands.{group}").register(sub, shared, shared)
        listed |= {name: (group, summary) for name, summary in summary_lines(parser).items()}
    assert list(listed.items()) == list(COMMANDS.items())
    assert list(subcommands(build_parser())) == list(COMMANDS)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_command_s_help_is_the_whole_parser_s(name: str) -> None:
    """`COMMAND --help` run through main (which builds that group alone) prints what the whole parser says."""
    whole = subcommands(build_parser())[name].format_help()
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as stop:
        main([name, "--help"])
    assert stop.value.code == 0
    assert out.getvalue() == whole


def test_the_top_level_help_lists_every_command() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main(["--help"])
    assert out.getvalue() == build_parser().format_help()
    assert all(f"    {name}" in out.getvalue() for name in COMMANDS)


def test_the_engine_s_modules_are_left_out_of_the_collector_s_walks(workspace: Path) -> None:
    """After the engine's import (once per process) its objects are frozen (gc.freeze): the collections
    of a command's own work no longer walk them. The modules alone are thousands of objects. They are
    frozen before the collector runs again: the collection that re-enabling it triggered walked them all."""
    script = (
        "import gc, sys\nfrom lesson_credit.cli.main import main\nbefore = gc.get_freeze_count()\nwalked = []\n"
        "def walks(phase, info):\n"
        "    if phase == 'start' and 'lesson_credit.core.workspace' in sys.modules:\n"
        "        walked.append(gc.get_freeze_count())\n"
        "gc.callbacks.append(walks)\n"
        "code = main(sys.argv[1:])\nprint(code, before, gc.get_freeze_count(), min(walked, default=-1))\n"
    )
    record = ["record", "-w", str(workspace), "--session-id", "s1", "--journal", "journal.md"]
    argv = [*record, "--lessons", "tools/git.md", "--reward", "0.8"]
    proc = subprocess.run(
        [sys.executable, "-c", script, *argv], env=process_env(), capture_output=True, text=True, timeout=120
    )
    code, before, after, first_walk = (int(word) for word in proc.stdout.splitlines()[-1].split())
    assert code == 0, proc.stderr
    assert before == 0 and after > 10_000
    assert first_walk > 10_000  # no collection walked the engine's imports before they were frozen


@pytest.mark.parametrize("prefix", [[], ["-w", "."]])
def test_a_command_s_run_builds_no_parser_of_another_command(prefix: list[str]) -> None:
    """Its parser lists only its own group's commands: the other commands' stubs (16 for `record`, each an
    ArgumentParser) serve the command list, which the top level's help and usage errors show in the first
    pass. Its errors and help are its own parser's as before (the help: the test above)."""
    from lesson_credit.cli.main import _parse

    record = [*prefix, "record", "--journal", "j.md", "--lessons", "a.md", "--reward", "0.5", "--session-id", "s"]
    parser, args = _parse(record)
    writes = [name for name, (group, _) in COMMANDS.items() if group == "writes"]
    assert args.command == "record" and list(subcommands(parser)) == writes == ["record", "grade", "undo", "prune"]
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as stop:
        _parse([*record, "--bogus"])
    assert stop.value.code == 2
    assert err.getvalue().splitlines()[-1] == "lesson-credit record: error: unrecognized arguments: --bogus"
