"""The dashboard's one door to the engine, read from the source (`ast`), independently of import-linter.

Only the door modules (tui/source.py and tui/records_views.py, which make the engine's calls under
the source's lock, and tui/effects_job.py, the joint fit's child process, which opens a Workspace of
its own) import core's modules; every other dashboard module imports core's public types
(lesson_credit.core.api) and nothing else of core, and none reaches through the door to its Workspace.
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).parents[2]
TUI = REPO / "tui"
DOORS = {"source.py", "records_views.py", "effects_job.py"}
API = "lesson_credit.core.api"


def core_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of every import of lesson_credit.core or below, at any depth (functions, TYPE_CHECKING)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("lesson_credit", "lesson_credit.core"):
            modules = [f"{node.module}.{alias.name}" for alias in node.names]  # `from core import views`
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            modules = [node.module]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            continue
        found += [(node.lineno, m) for m in modules if m.startswith("lesson_credit.core")]
    return found


def tui_modules() -> list[Path]:
    return sorted(p for p in TUI.rglob("*.py") if "__pycache__" not in p.parts)


def test_only_the_door_imports_core_beyond_its_public_types() -> None:
    outside = []
    for path in tui_modules():
        if path.relative_to(TUI).as_posix() in DOORS:
            continue
        tree = ast.parse(path.read_text(), str(path))
        outside += [f"{path.relative_to(REPO)}:{line} {m}" for line, m in core_imports(tree) if m != API]
    assert outside == []


def test_no_dashboard_module_reaches_through_the_door_to_its_workspace() -> None:
    reaching = []
    for path in tui_modules():
        if path.relative_to(TUI).as_posix() in DOORS:
            continue
        tree = ast.parse(path.read_text(), str(path))
        reaching += [
            f"{path.relative_to(REPO)}:{node.lineno}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr == "workspace"
        ]
    assert reaching == []


def test_the_checks_see_every_kind_of_core_import() -> None:
    """The walk above finds imports in functions and under TYPE_CHECKING, and `from package import module`."""
    code = (
        "from typing import TYPE_CHECKING\n"
        "from lesson_credit.core.api import LessonRow\n"
        "from lesson_credit.core import views\n"
        "if TYPE_CHECKING:\n    from lesson_credit.core.health import Finding\n"
        "def f():\n    import lesson_credit.core.sim.simulate\n"
        "from lesson_credit.tui.text import fmt\n"
    )
    assert core_imports(ast.parse(code)) == [
        (2, API),
        (3, "lesson_credit.core.views"),
        (5, "lesson_credit.core.health"),
        (7, "lesson_credit.core.sim.simulate"),
    ]


def test_the_public_types_are_each_where_the_type_checker_is_told() -> None:
    """core/api.py names each export twice (its lazy table and its TYPE_CHECKING imports): they agree,
    and each name is the home module's own object."""
    api = importlib.import_module(API)
    tree = ast.parse((REPO / "core" / "api.py").read_text())
    checked = {
        alias.name: node.module
        for block in tree.body
        if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"
        for node in block.body
        if isinstance(node, ast.ImportFrom) and node.module is not None
        for alias in node.names
    }
    assert checked == api._HOME
    for name, home in checked.items():
        assert getattr(api, name) is getattr(importlib.import_module(home), name), name


def test_importing_the_public_types_loads_none_of_their_modules() -> None:
    """The names load when first asked for: the simulator only with the screen that uses it."""
    script = (
        f"import json, sys\nimport {API}\n"
        "before = sorted(m for m in sys.modules if m.startswith('lesson_credit.core.'))\n"
        f"from {API} import SimulationReport\n"
        "print(json.dumps([before, 'lesson_credit.core.sim.simulate' in sys.modules]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    before, simulator = json.loads(proc.stdout.splitlines()[-1])
    assert before == [API]
    assert simulator
