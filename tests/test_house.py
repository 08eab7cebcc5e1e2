"""The house rules the code can check about itself.

Rooms that fit in a head: no production module (core/, cli/, tui/) over 600 lines and no function over
80, unless it is listed below with the reason it is allowed to be bigger. Lengths are measured on the
syntax tree: a function runs from its `def` line to its last line, nested functions included (a
decorator above the `def` does not count). A listed module or function that has come back under its
limit fails too, so the list only ever holds what is still over it.

References that ship: code cites docs/format.md (formats and formulas) or says its reason in words, never a
specification or an issue tracker that does not ship with the project.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).parents[1]
PACKAGES = ("core", "cli", "tui")
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80

# path -> why it may be longer than MAX_MODULE_LINES
BIG_MODULES: dict[str, str] = {}

# "path:qualified.name" -> why the function may be longer than MAX_FUNCTION_LINES
LONG_FUNCTIONS: dict[str, str] = {
    "core/sim/world.py:make_world": "draws a world's arrays from one random stream in a fixed order; split, "
    "the order (and every seeded result and documented table) would be at the mercy of call order",
    "core/analysis/effects.py:leave_one_out": "assembles each lesson's row from the dozen per-arm estimates it "
    "computes first; pieces of it would pass all of them as arguments",
}


def production_files() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (REPO / package).rglob("*.py"))


def relative(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def function_lengths(source: str) -> dict[str, int]:
    """Every function and method of a module by qualified name (`Class.method`, `outer.inner`): its lines
    from `def` to its last line."""
    lengths: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = prefix + child.name
                assert child.end_lineno is not None
                lengths[name] = child.end_lineno - child.lineno + 1
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return lengths


def module_lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_function_lengths_are_measured_from_def_to_last_line() -> None:
    # counted by hand: f is lines 1-4, C.m lines 6-8, f.g lines 2-3 (nested), h line 10 (decorated: from `def`)
    source = "def f():\n    def g():\n        pass\n    return 1\nclass C:\n    def m(self):\n        x = 1\n"
    source += "        return x\n@decorator\nasync def h(): pass\n"
    assert function_lengths(source) == {"f": 4, "f.g": 2, "C.m": 3, "h": 1}


def test_no_production_module_over_the_limit() -> None:
    over = {relative(p): n for p in production_files() if (n := module_lines(p)) > MAX_MODULE_LINES}
    unexplained = {path: n for path, n in over.items() if path not in BIG_MODULES}
    assert unexplained == {}, f"modules over {MAX_MODULE_LINES} lines: split them or list them with a reason"


def test_no_production_function_over_the_limit() -> None:
    over = {
        f"{relative(p)}:{name}": n
        for p in production_files()
        for name, n in function_lengths(p.read_text(encoding="utf-8")).items()
        if n > MAX_FUNCTION_LINES
    }
    unexplained = {key: n for key, n in over.items() if key not in LONG_FUNCTIONS}
    assert unexplained == {}, f"functions over {MAX_FUNCTION_LINES} lines: split them or list them with a reason"


@pytest.mark.parametrize("path", sorted(BIG_MODULES))
def test_a_listed_module_is_still_over_the_limit(path: str) -> None:
    assert BIG_MODULES[path].strip()
    assert (REPO / path).is_file(), f"{path} is gone: take it off BIG_MODULES"
    assert module_lines(REPO / path) > MAX_MODULE_LINES, f"{path} fits now: take it off BIG_MODULES"


@pytest.mark.parametrize("key", sorted(LONG_FUNCTIONS))
def test_a_listed_function_is_still_over_the_limit(key: str) -> None:
    assert LONG_FUNCTIONS[key].strip()
    path, name = key.split(":")
    lengths = function_lengths((REPO / path).read_text(encoding="utf-8")) if (REPO / path).is_file() else {}
    assert name in lengths, f"{key} is gone: take it off LONG_FUNCTIONS"
    assert lengths[name] > MAX_FUNCTION_LINES, f"{key} fits now: take it off LONG_FUNCTIONS"


CITING = ("core", "cli", "tui", "tests", "bench", "scripts")
# a reference to the old specification ("SPEC 5") or to a numbered issue ("issue 13", "issues 12 and 14")
UNSHIPPED_REFERENCE = re.compile(r"\bSP" + r"EC\b|\b[Ii]ssues? #?\d+")


def unshipped_references(text: str) -> list[int]:
    return [number for number, line in enumerate(text.splitlines(), 1) if UNSHIPPED_REFERENCE.search(line)]


def test_the_reference_pattern() -> None:
    text = "a\n(SP" + "EC 6)\n(issue 13: x)\nIssues 12 and 14\nthe issue's log\nSPECTRUM\n(docs/format.md §5)\n"
    assert unshipped_references(text) == [2, 3, 4]


def test_code_cites_only_what_ships() -> None:
    found = [
        f"{relative(p)}:{number}"
        for folder in CITING
        for p in sorted((REPO / folder).rglob("*.py"))
        if p.resolve() != Path(__file__).resolve()
        for number in unshipped_references(p.read_text(encoding="utf-8"))
    ]
    assert found == [], "cite docs/format.md (or say the reason in words), not the spec or an issue number"


# Paths named in code, tests and docs point at files that exist: a comment citing a module that has moved
# sends its reader nowhere. A path is named from the repository's root (`core/log/cache.py`, not
# `lesson_credit/core/...` or a test folder's `tests/core/...`); `git show <commit>:docs/x.md` names history.
MENTIONED_PATH = re.compile(r"(?<![\w./:-])(?:(?:core|cli|tui|bench)/[\w/]*\w\.py|docs/[\w/-]*\w\.md)\b")
# a mention that is not a file of the repository -> what it is
NOT_FILES = {"docs/readme-first.md": "a lesson id of the dashboard tests' library (tests/tui/tui_fixture.py)"}


def mentioned_paths(text: str) -> list[tuple[int, str]]:
    return [(n, m) for n, line in enumerate(text.splitlines(), 1) for m in MENTIONED_PATH.findall(line)]


def test_the_mentioned_path_pattern() -> None:
    text = "see core/log/cache.py and cli/main.py.\n(docs/format.md#fold) `bench/run.py`\n"
    text += "lesson_credit/core/x.py tests/core/test_x.py core/log/pg*.py core/ git show 1a2b:docs/old.md\n"
    assert mentioned_paths(text) == [
        (1, "core/log/cache.py"),
        (1, "cli/main.py"),
        (2, "docs/format.md"),
        (2, "bench/run.py"),
    ]


def test_mentioned_paths_exist() -> None:
    sources = [p for folder in CITING for p in sorted((REPO / folder).rglob("*.py"))]
    sources += sorted((REPO / "docs").rglob("*.md")) + sorted(REPO.glob("*.md")) + [REPO / "pyproject.toml"]
    missing = [
        f"{path}  (named at {relative(p)}:{number})"
        for p in sources
        if p.resolve() != Path(__file__).resolve()
        for number, path in mentioned_paths(p.read_text(encoding="utf-8"))
        if path not in NOT_FILES and not (REPO / path).is_file()
    ]
    assert missing == [], "paths named that are not files of the repository:\n" + "\n".join(missing)


# The dashboard's private Textual names live in one module, each with its reason.
TEXTUAL_PRIVATE = REPO / "tui" / "textual_private.py"


def private_names_used(sources: dict[str, str]) -> dict[str, list[str]]:
    """Per module: imports of a private Textual module, and `x._name` accesses whose name no module of
    `sources` defines (as a function, method, class, or an assigned name or attribute): someone else's
    private name, i.e. Textual's."""
    trees = {path: ast.parse(text) for path, text in sources.items()}
    ours: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                ours.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                ours.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                ours.add(node.id)
    found: dict[str, list[str]] = {}
    for path, tree in trees.items():
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] if node.module.split(".")[0] == "textual" and "._" in node.module else []
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names if a.name.split(".")[0] == "textual" and "._" in a.name]
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                private = node.attr.startswith("_") and not node.attr.startswith("__")
                names = [node.attr] if private and node.attr not in ours else []
            if names:
                found.setdefault(path, []).extend(names)
    return found


def test_private_name_finder() -> None:
    sources = {
        "a.py": "from textual._context import active_app\nimport textual._wait\nclass A:\n"
        "    def __init__(self):\n        self._mine = 1\n    def _helper(self):\n"
        "        return self._mine, self.app._notifications, self._helper(), self.__class__\n",
    }
    assert private_names_used(sources) == {"a.py": ["textual._context", "textual._wait", "_notifications"]}


def test_the_dashboard_uses_textual_private_names_in_one_module_only() -> None:
    sources = {relative(p): p.read_text(encoding="utf-8") for p in sorted((REPO / "tui").rglob("*.py"))}
    used = private_names_used(sources)
    assert relative(TEXTUAL_PRIVATE) in used, "textual_private.py uses no private name: delete it"
    del used[relative(TEXTUAL_PRIVATE)]
    assert used == {}, "use Textual's public API, or add the name to tui/textual_private.py with its reason"


# Honest dependencies: every runtime dependency has a lower bound, which CI installs (.ci/run).
def min_constraints_script() -> Any:
    spec = importlib.util.spec_from_file_location("min_constraints", REPO / "scripts" / "min_constraints.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("requirement", "pin"),
    [
        ("numpy>=1.25.2", ("numpy", "1.25.2")),
        ("plotext>=5.3.2,<6", ("plotext", "5.3.2")),
        ("textual <9, >= 6.3.0", ("textual", "6.3.0")),
        ("psycopg[binary]>=3.2", ("psycopg", "3.2")),
        ("rich==14.0.0", ("rich", "14.0.0")),
        ("tomli>=2; python_version < '3.11'", ("tomli", "2")),
    ],
)
def test_lower_bound_of_a_requirement(requirement: str, pin: tuple[str, str]) -> None:
    assert min_constraints_script().lower_bound(requirement) == pin


@pytest.mark.parametrize("requirement", ["numpy", "numpy<3", "numpy>=1,>=2", "numpy~=1.2"])
def test_a_requirement_without_one_lower_bound_is_refused(requirement: str) -> None:
    with pytest.raises(ValueError, match="lower bound"):
        min_constraints_script().lower_bound(requirement)


def test_every_runtime_dependency_pins_to_its_lower_bound() -> None:
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    project = tomllib.loads(pyproject)["project"]
    dependencies = project["dependencies"] + project["optional-dependencies"]["pg"]
    pins = min_constraints_script().minimum_pins(pyproject)
    assert len(pins) == len(dependencies)
    for pin, dependency in zip(pins, dependencies, strict=True):
        name, version = pin.split("==")
        assert dependency.startswith(name) and f">={version}" in dependency.replace(" ", "")


def test_no_production_module_counts_the_rest_by_hand() -> None:
    # one wording (core/base/numbers.py `listed`): thirteen places each wrote their own " and {n} more"
    # (the Health screen's items without the comma the other dashboard lists have before the ellipsis)
    by_hand = re.compile(r"and \{[^}]*\} more")
    found = [
        relative(path)
        for path in production_files()
        if relative(path) != "core/base/numbers.py" and by_hand.search(path.read_text(encoding="utf-8"))
    ]
    assert found == []


# What the repository's root holds on purpose: a command run in the checkout (a simulation's output, a timing
# log) written here and committed by accident fails this test.
ROOT_FILES = {".gitignore", "CHANGELOG.md", "LICENSE", "MANIFEST.in", "README.md", "pyproject.toml"}


def root_files() -> set[str] | None:
    """The files git tracks at the root (not folders), and those it would add there (untracked, not ignored: a
    stray output is caught before `git add -A` takes it), or None outside a git checkout or without git."""
    git = shutil.which("git")
    if git is None or not (REPO / ".git").exists():
        return None
    argv = [git, "ls-files", "--cached", "--others", "--exclude-standard", "--", "."]
    listed = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=False, timeout=60)
    if listed.returncode != 0:
        return None
    return {name for name in listed.stdout.splitlines() if "/" not in name}


def test_the_root_holds_only_its_own_files() -> None:
    tracked = root_files()
    if tracked is None:
        pytest.skip("not a git checkout")
    assert tracked - ROOT_FILES == set()
