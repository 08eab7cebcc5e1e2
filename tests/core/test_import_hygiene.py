"""core/ and the headless CLI never pull in the dashboard stack (STYLE: the split), nor scipy.stats."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).parents[2]
CORE_MODULES = sorted(
    "lesson_credit." + ".".join(p.relative_to(REPO).with_suffix("").parts)
    for p in (REPO / "core").rglob("*.py")
    if p.stem != "__init__"
)
FORBIDDEN = ("textual", "rich", "plotext", "textual_plotext")


def forbidden(module: str) -> bool:
    """A module of the dashboard stack: Textual and its renderers, or our own dashboard."""
    return module.split(".")[0] in FORBIDDEN or module.startswith(("lesson_credit.tui.", "lesson_credit.tui"))


def loaded_after(code: str, cwd: Path = REPO) -> set[str]:
    """Top-level names in sys.modules after running `code` in a fresh interpreter."""
    script = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    proc = subprocess.run([sys.executable, "-c", script], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stdout.splitlines()[-1]))


def test_our_packages_install_under_one_name_of_our_own(tmp_path: Path) -> None:
    # An unrelated `import core`, `import tui` or `import cli` must never find our code: run from an
    # empty folder (no repository on sys.path), only `lesson_credit` is ours.
    code = (
        "import importlib.util, json, lesson_credit\n"
        "spec = {n: getattr(importlib.util.find_spec(n), 'origin', None) for n in ('core', 'tui', 'cli')}\n"
        "print(json.dumps([lesson_credit.__file__, spec]))"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    if proc.returncode != 0 and "No module named 'lesson_credit'" in proc.stderr:
        pytest.skip("the project is not installed in this interpreter")
    assert proc.returncode == 0, proc.stderr
    ours, found = json.loads(proc.stdout)
    repo = str(Path(ours).resolve().parents[1])
    assert {name: origin for name, origin in found.items() if origin and origin.startswith(repo)} == {}


def test_core_modules_found() -> None:
    # guard against the glob silently finding nothing
    assert {
        "lesson_credit.core.model.credit",
        "lesson_credit.core.library.salience",
        "lesson_credit.core.bandit.fold",
        "lesson_credit.core.log.store",
        "lesson_credit.core.workspace.base",
    } <= set(CORE_MODULES)


def test_no_core_or_cli_module_imports_the_dashboard_stack() -> None:
    # What one interpreter loads importing every module is the union of what each loads alone (an import
    # loads the same modules whatever was loaded before it), so one run checks them all; a leak is then
    # traced to its modules one interpreter each, for the message.
    modules = [*CORE_MODULES, "lesson_credit.cli.main", "lesson_credit.cli.render"]
    loaded = loaded_after("\n".join(f"import {module}" for module in modules))
    assert set(modules) <= loaded
    if any(forbidden(m) for m in loaded):
        leaks = {module: leaked_by(module) for module in modules}
        assert {module: leaked for module, leaked in leaks.items() if leaked} == {}


def leaked_by(module: str) -> list[str]:
    """The dashboard-stack modules importing `module` alone loads."""
    return sorted(m for m in loaded_after(f"import {module}") if forbidden(m))


def test_cli_main_does_not_import_scipy_stats() -> None:
    modules = loaded_after("import lesson_credit.cli.main")
    assert "scipy.stats" not in modules


def test_headless_commands_stay_headless(tmp_path: Path) -> None:
    # running real commands (which load the library, fold, compute intervals) must not import
    # the dashboard either, nor scipy.stats (~1.5 s of start-up a session hook cannot afford), nor,
    # on the file store, the database driver
    lessons = tmp_path / "lessons" / "tools"
    lessons.mkdir(parents=True)
    (lessons / "git.md").write_text("---\nmatch:\n  keywords: [git]\n---\n# Git\n")
    (tmp_path / "j.txt").write_text("git push")
    code = f"""
import contextlib, io
from lesson_credit.cli.main import main
root = {str(tmp_path)!r}
with contextlib.redirect_stdout(io.StringIO()):
    assert main(["record", "-w", root, "--session-id", "s1", "--journal", root + "/j.txt",
                 "--lessons", "tools/git.md", "--reward", "0.5"]) == 0
    assert main(["status", "-w", root, "--json"]) == 0
    assert main(["grade", "-w", root, "s1", "0.7"]) == 0
    assert main(["explain", "-w", root, "s1"]) == 0
    assert main(["replay", "-w", root, "--strategy", "uniform"]) == 0
    assert main(["select", "-w", root, "--context", root + "/j.txt", "--seed", "1", "--dry-run"]) == 0
"""
    modules = loaded_after(code)
    assert sorted(m for m in modules if forbidden(m)) == []
    assert "scipy.stats" not in modules
    # nor the database driver (~90 ms): only a command on a database store imports psycopg
    assert sorted(m for m in modules if m.split(".")[0] in ("psycopg", "psycopg_binary")) == []
    assert sorted(m for m in modules if m.startswith("lesson_credit.core.log.pg")) == []


def test_import_layering_contracts_hold(tmp_path: Path) -> None:
    # pyproject.toml's import-linter contracts: bench -> cli -> tui -> core, core's own layers,
    # no dashboard stack in core, no import cycle among a package's modules (CI runs lint-imports too).
    # grimp reads the package as it installs, from links (scripts/typecheck_tree.py), here in tmp_path
    pytest.importorskip("importlinter")
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        from typecheck_tree import make_tree
    finally:
        sys.path.remove(str(REPO / "scripts"))
    make_tree(tmp_path)
    config = str(REPO / "pyproject.toml")
    code = "import sys\nfrom importlinter.cli import lint_imports\n"
    code += f"sys.exit(lint_imports(config_filename={config!r}, no_cache=True, no_logo=True))"
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # after tmp_path (the working folder): bench
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout


def test_opening_a_workspace_does_not_import_the_analysis() -> None:
    # the dashboard's first paint needs the posteriors, not the leave-one-out analysis or the
    # joint fit (lesson_credit.core.workspace imported them at module level: ~20 ms before the first rows);
    # (the dashboard opens the workspace after its first frame: both imported here, one interpreter checks both)
    modules = loaded_after("import lesson_credit.tui.app\nimport lesson_credit.core.workspace")
    assert {"lesson_credit.tui.app", "lesson_credit.core.workspace"} <= modules
    analysis = {
        "lesson_credit.core.analysis.effects",
        "lesson_credit.core.analysis.joint",
        "lesson_credit.core.attribution",
        "lesson_credit.core.analysis.candidacy",
        "lesson_credit.core.analysis.coverage",
    }
    assert sorted(modules & analysis) == []


def test_the_analysis_entry_points_still_work(tmp_path: Path) -> None:
    # the imports moved into the methods: each method still runs (on an empty workspace)
    code = f"""
from lesson_credit.core.workspace import Workspace
ws = Workspace({str(tmp_path)!r})
assert ws.candidacies() == [] and ws.broad_keywords() == {{}} and ws.loo(write=False) == []
"""
    modules = loaded_after(code)
    assert {
        "lesson_credit.core.analysis.effects",
        "lesson_credit.core.analysis.joint",
        "lesson_credit.core.attribution",
    } <= modules
