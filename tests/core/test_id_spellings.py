"""`lint`'s prefixed-ids: every lesson entry of the log spelled otherwise than its library id is counted (a
`lessons/` prefix, gptme's absolute paths in any of their spellings, backslashes, surrounding spaces, a bare
id string), and an absolute path that names no `lessons` folder is told apart: it is an arm of its own."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from lesson_credit.core.health import Finding, lint
from lesson_credit.core.id_spellings import Spellings, entry_spellings
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import fixed_clock, make_workspace, session
from tests.support.health_logs import LESSONS, clean_events


def finding(root: Path) -> Finding:
    return next(f for f in lint(Workspace(root, clock=fixed_clock)) if f.code == "prefixed-ids")


def test_every_spelling_of_a_library_id_is_counted(tmp_path: Path) -> None:
    # each of these is read as a.md or tools/c.md (core/base/ids.py normalize_id): 6 entries, one per spelling
    spelled = {
        "\\\\server\\share\\lessons\\a.md": 1.0,  # a UNC path
        "lessons\\tools\\c.md": 1.0,  # backslashes, relative
    }
    bare = {"type": "session", "session_id": "p3", "base_reward": 0.5, "lessons": [".\\lessons\\a.md"]}
    events: list[dict[str, Any] | str] = [
        *clean_events(),
        session("p1", 0.5, spelled),
        session("p2", 0.6, {" lessons/a.md": 1.0, "././lessons/tools/c.md": 1.0}),
        json.dumps(bare) + "\n",
        session("p4", 0.6, {"/home/agent/lessons/a.md": 1.0}),
    ]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    got = finding(root)
    assert got.message.startswith("6 lesson entries") and "absolute path" in got.message
    ws = Workspace(root, clock=fixed_clock)
    assert set(ws.lesson_usage()) == set(LESSONS)  # every spelling is one of the library's arms


def test_an_absolute_path_outside_a_lessons_folder_is_said_to_be_an_arm_of_its_own(tmp_path: Path) -> None:
    events = [
        *clean_events(),
        session("p1", 0.5, {"/srv/guidance/a.md": 1.0, "lessons/b.md": 1.0}),
    ]
    got = finding(make_workspace(tmp_path, lessons=LESSONS, events=events))
    # lessons/b.md is b.md; /srv/guidance/a.md is read as itself, never a.md
    assert got.message.startswith("1 lesson entry ")
    assert "; 1 more names a lesson by an absolute path with no `lessons` folder" in got.message
    assert "import-gptme" in got.advice


@pytest.mark.parametrize(
    "entry",
    [
        "tools/c.md ",  # a trailing space
        "a.md\t",  # an escaped tab after the id (json writes it \t)
        "\ta.md",  # ... and before it
        "a.md\u00a0",  # a no-break space: str.strip() removes it too (json writes \u00a0, msgspec the raw bytes)
        "\u3000tools/c.md",  # an ideographic space before it
    ],
)
@pytest.mark.parametrize("encode", [lambda e: json.dumps(e).encode(), msgspec.json.encode])
def test_whitespace_around_an_id_is_counted_on_either_side(entry: str, encode: Callable[[Any], bytes]) -> None:
    # the reader strips the id (normalize_id): each of these is a library id spelled otherwise, one entry;
    # as an object's path and as a bare string, whichever way the line was encoded
    assert entry.strip() != entry and entry.strip() in ("a.md", "tools/c.md")
    lines = [
        encode({"type": "session", "session_id": "p1", "lessons": [{"path": entry, "salience": 1.0}]}) + b"\n",
        encode({"type": "session", "session_id": "p2", "lessons": ["b.md", entry]}) + b"\n",
        encode({"type": "session", "session_id": "p3", "lessons": [{"path": "a.md", "note": "x "}]}) + b"\n",
    ]
    assert entry_spellings(lines) == Spellings(other=2)


def test_what_lint_says_agrees_with_its_counts() -> None:
    assert Spellings(other=2, unmapped=1).said() == (
        "2 lesson entries in the log use a 'lessons/' prefix, an absolute path or another spelling of a library id; "
        "1 more names a lesson by an absolute path with no `lessons` folder, read as an arm of its own"
    )
    assert Spellings(unmapped=2).said() == (
        "2 lesson entries name lessons by absolute paths with no `lessons` folder, read as arms of their own"
    )


def test_a_line_skipped_as_invalid_adds_no_spelling(tmp_path: Path) -> None:
    """Line 7 names `lessons/a.md` but is skipped as invalid (an `included` that is neither before nor during), so
    no entry of it is read; line 8 names `lessons/b.md` and is read: one entry spelled otherwise (it said 2)."""
    bad = session("p1", 0.5, {"lessons/a.md": 1.0})
    bad["lessons"][0]["included"] = "sometimes"
    events = [*clean_events(), bad, session("p2", 0.6, {"lessons/b.md": 1.0})]  # lines 7 and 8
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    findings = {f.code: f for f in lint(Workspace(root, clock=fixed_clock))}
    assert findings["log-unreadable-lines"].items == ("line 7",)
    assert findings["prefixed-ids"].message.startswith("1 lesson entry in the log uses a 'lessons/' prefix")
