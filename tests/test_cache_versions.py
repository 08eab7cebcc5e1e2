"""A derived cache's format version moves with the code that computes what it holds.

Each cache in a workspace's `.cache` folder is used only when its version is the one the code expects
(the parsed-log cache, the lesson cache, the joint fit's cache, the rankings, the intervals). The version is
set by hand: a change to how a cached value is computed, without a new version, would serve every existing
workspace the old values, with no error. So this test keeps, per cache, a fingerprint of every module its module can
import (its code without comments, docstrings or formatting) beside the version it was recorded at:
when that code changes, the test fails until someone has decided whether the version must move and
recorded the fingerprints again:

    LESSON_CREDIT_RECORD_FINGERPRINTS=1 python -m pytest tests/test_cache_versions.py
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest

FINGERPRINTS = Path(__file__).with_name("cache_fingerprints.json")
RECORD = os.environ.get("LESSON_CREDIT_RECORD_FINGERPRINTS") == "1"
RECORD_COMMAND = "LESSON_CREDIT_RECORD_FINGERPRINTS=1 python -m pytest tests/test_cache_versions.py"

# the module that reads and writes a cache -> the name of its version constant
CACHES = {
    "lesson_credit.core.log.cache": "CACHE_VERSION",
    "lesson_credit.core.library.lessons": "LESSON_CACHE_VERSION",
    "lesson_credit.core.analysis.joint_posterior_cache": "CACHE_VERSION",
    "lesson_credit.core.analysis.ranking": "EFFECTS_VERSION",  # the Lessons screen's rankings (effects.msgpack)
    "lesson_credit.core.model.intervals": "MAGIC",  # its version is the number in its first line
    # the verdict on an own bandit-state.json whose arm cannot be told apart (.cache/bandit-state-kept): it is
    # computed and kept by earlier_copies; its version is the number in kept_verdict's magic line
    "lesson_credit.core.workspace.earlier_copies": "verdicts.VERDICT_MAGIC",
}


def _source(module: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(module)
    except ModuleNotFoundError:  # a name imported from a module, not a module
        return None
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin)


def _imported(tree: ast.AST, module: str) -> set[str]:
    """The project's modules `tree` imports, at its top or inside a function (each name imported from a
    package may be a module of its own)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = module.rsplit(".", node.level)[0]
            target = f"{base}.{node.module}" if node.module else base
        elif isinstance(node, ast.ImportFrom):
            target = node.module or ""
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names if a.name.startswith("lesson_credit."))
            continue
        else:
            continue
        if target.startswith("lesson_credit"):
            names.add(target)
            names.update(f"{target}.{a.name}" for a in node.names)
    return names


def _without_docstrings(tree: ast.Module) -> ast.Module:
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    node.body = body[1:] or [ast.Pass()]
    return tree


def code_fingerprint(text: str) -> str:
    """A module's code without its comments, docstrings and layout."""
    tree = _without_docstrings(ast.parse(text))
    return hashlib.sha256(ast.dump(tree).encode()).hexdigest()[:16]


def fingerprints(module: str) -> dict[str, str]:
    """Every module of the project `module` can import, directly or through others: its fingerprint."""
    found: dict[str, str] = {}
    todo = [module]
    while todo:
        name = todo.pop()
        if name in found:
            continue
        path = _source(name)
        if path is None:
            continue
        text = path.read_text(encoding="utf-8")
        found[name] = code_fingerprint(text)
        todo.extend(_imported(ast.parse(text), name) - found.keys())
    return dict(sorted(found.items()))


def test_the_fingerprint_ignores_comments_docstrings_and_layout() -> None:
    plain = "def f(x):\n    return x + 1\n"
    dressed = '"""A module."""\n\n\ndef f(x):  # one more\n    """Add one."""\n    return (x +\n            1)\n'
    assert code_fingerprint(plain) == code_fingerprint(dressed)
    assert code_fingerprint(plain) != code_fingerprint("def f(x):\n    return x + 2\n")
    assert code_fingerprint("class C:\n    'doc'\n") == code_fingerprint("class C:\n    pass\n")


def test_imports_are_followed_at_any_depth_and_inside_functions() -> None:
    tree = ast.parse(
        "from lesson_credit.core.base import files\n"
        "def f():\n    from lesson_credit.core.log.events import encode\n    import numpy\n"
    )
    assert _imported(tree, "lesson_credit.core.x") == {
        "lesson_credit.core.base",
        "lesson_credit.core.base.files",
        "lesson_credit.core.log.events",
        "lesson_credit.core.log.events.encode",
    }
    found = fingerprints("lesson_credit.core.log.cache")
    assert "lesson_credit.core.log.snapshot" in found  # the per-block sums the cache keeps
    assert "lesson_credit.core.model.credit" in found  # the credit those sums add up


def _changes(recorded: dict[str, str], now: dict[str, str]) -> str:
    changed = [name for name in now if name in recorded and recorded[name] != now[name]]
    added, gone = sorted(now.keys() - recorded.keys()), sorted(recorded.keys() - now.keys())
    parts = [f"{what}: {', '.join(names)}" for what, names in (("changed", changed), ("new", added), ("gone", gone))]
    return "; ".join(part for part, names in zip(parts, (changed, added, gone), strict=True) if names)


def _version(module: str) -> int | str:
    version: Any = importlib.import_module(module)
    for name in CACHES[module].split("."):  # (a constant of a module it imports: "verdicts.VERDICT_MAGIC")
        version = getattr(version, name)
    return version.decode() if isinstance(version, bytes) else version


def _record() -> None:
    """Write every cache's fingerprints (the same file whichever test process writes it)."""
    everything = {module: {"version": _version(module), "modules": fingerprints(module)} for module in CACHES}
    scratch = FINGERPRINTS.with_name(f".{FINGERPRINTS.name}.{os.getpid()}")
    scratch.write_text(json.dumps(everything, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    scratch.replace(FINGERPRINTS)


@pytest.mark.parametrize("module", sorted(CACHES))
def test_a_cache_version_is_recorded_with_the_code_it_caches(module: str) -> None:
    if RECORD:
        _record()
    version, now = _version(module), fingerprints(module)
    recorded = json.loads(FINGERPRINTS.read_text(encoding="utf-8")).get(module, {"version": None, "modules": {}})
    how = f"then record the fingerprints again: {RECORD_COMMAND}"
    assert recorded["version"] == version, (
        f"{module}.{CACHES[module]} is {version!r}, recorded at {recorded['version']!r}: {how}"
    )
    assert recorded["modules"] == now, (
        f"the code whose results {module} caches changed since {CACHES[module]} {version!r} was recorded "
        f"({_changes(recorded['modules'], now)}): if a value it stores is now computed or laid out "
        f"differently, change {CACHES[module]}; {how}"
    )
