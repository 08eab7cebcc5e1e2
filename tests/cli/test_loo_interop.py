"""gptme-contrib's two readers of `loo-results.json` find our results.

The readers, as they parse the file (gptme-contrib, read from its source, not imported):
- gptme-dashboard (`gptme_dashboard/generate.py`, scan_kpi_data): a JSON list of objects with
  `lesson` and `delta`, or else a JSON object whose every value `float()` accepts is one lesson
  (`{name: delta}`); values float() refuses (TypeError, ValueError) are skipped.
- the lessons MCP server (`scripts/gptme-lessons-mcp.py`, load_lessons/load_lesson): an object
  with a `results` list maps each entry's string `path` to its numeric `delta`; a lesson file
  `<lessons-dir>/.../<folder>/<stem>.md` looks itself up as `<folder>/<stem>`, then as `<stem>`.
The file keeps our own fields (`meta`, every per-result field, the lesson id in `lesson`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_run import run_cli
from tests.support.crafted_loo import A, B, C, D, crafted_events
from tests.support.engine_helpers import make_workspace, session

NESTED, ROOT_LEVEL = "tools/git/worktree.md", "plain.md"
LESSONS = {
    A: (["alpha"], "active"),
    B: (["beta"], "active"),
    C: (["gamma"], "active"),
    D: (["delta"], "active"),
    NESTED: (["worktree"], "active"),
    ROOT_LEVEL: (["plain"], "active"),
}


def dashboard_reads(data: Any) -> dict[str, float]:
    """gptme-dashboard's reading: {name: delta}."""
    items: dict[str, float] = {}
    if isinstance(data, list):
        for item in data:
            if isinstance(item, dict) and "lesson" in item and "delta" in item:
                try:
                    items[str(item["lesson"])] = float(item["delta"])
                except (ValueError, TypeError):
                    continue
    elif isinstance(data, dict):
        for key, value in data.items():
            try:
                items[str(key)] = float(value)
            except (ValueError, TypeError):
                continue
    return items


def mcp_reads(data: Any, lessons_dir: Path) -> dict[str, float]:
    """The lessons MCP server's reading: each lesson file's effectiveness score, by file."""
    if "results" in data and isinstance(data["results"], list):
        scores = {
            r["path"]: r["delta"]
            for r in data["results"]
            if isinstance(r.get("path"), str) and isinstance(r.get("delta"), int | float)
        }
    else:
        scores = {k: v for k, v in data.items() if isinstance(v, int | float)}
    found: dict[str, float] = {}
    for md in sorted(lessons_dir.rglob("*.md")):
        score = scores.get(f"{md.parent.name}/{md.stem}")
        if score is None:
            score = scores.get(md.stem)
        if score is not None:
            found[md.relative_to(lessons_dir).as_posix()] = score
    return found


@pytest.fixture
def written(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    events = crafted_events()
    # the nested and root-level lessons ride along with A in its sessions: the same delta as A
    events = [
        {**e, "lessons": [*e["lessons"], {"path": NESTED, "salience": 0.5}, {"path": ROOT_LEVEL, "salience": 0.5}]}
        if any(entry["path"] == A for entry in e["lessons"])
        else e
        for e in events
    ]
    events.append(session("extra", 0.5, {B: 0.5}))
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    code, _, err = run_cli("loo", "--workspace", str(root))
    assert code == 0, err
    return root, json.loads((root / "state" / "lesson-thompson" / "loo-results.json").read_text())


def test_the_dashboard_finds_every_lesson_with_a_delta(written: tuple[Path, dict[str, Any]]) -> None:
    _, data = written
    ours = {r.get("lesson", r["path"]): r["delta"] for r in data["results"] if r["delta"] is not None}
    assert len(ours) >= 4  # A, B, D and the two riding with A at least; C has too few sessions
    assert dashboard_reads(data) == ours


def test_the_mcp_server_finds_every_lesson_file_with_a_delta(written: tuple[Path, dict[str, Any]]) -> None:
    root, data = written
    ours = {r.get("lesson", r["path"]): r["delta"] for r in data["results"] if r["delta"] is not None}
    assert mcp_reads(data, root / "lessons") == ours


def test_our_fields_are_kept(written: tuple[Path, dict[str, Any]]) -> None:
    _, data = written
    assert {"generated", "sessions", "method"} <= set(data["meta"])
    by_lesson = {r["lesson"]: r for r in data["results"]}
    assert set(by_lesson) == set(LESSONS)
    for row in by_lesson.values():
        assert {"delta", "p_value_approx", "n_with", "n_without", "effect", "confounded"} <= set(row)
    assert by_lesson[NESTED]["path"] == "git/worktree" and by_lesson[ROOT_LEVEL]["path"] == "plain"
    assert (by_lesson[A]["path"], by_lesson[C]["path"]) == ("tools/a", "workflow/c")


TWIN = "workflow/git/worktree.md"  # gptme's MCP server names it `git/worktree`, as NESTED


def test_two_lessons_gptme_names_alike_get_no_score_from_the_mcp_server(tmp_path: Path) -> None:
    """The MCP server looks both files up as `git/worktree`: one such key per lesson in `results` gave both files
    the delta of the one listed last (one of them the other's number: +0.3 for a lesson at +0.03, or the reverse)."""
    lessons = {**LESSONS, TWIN: (["worktree"], "active")}

    # NESTED rides with A: with it 6 sessions of mean 0.8, without 25 of mean 0.5, so +0.3. TWIN rides with D:
    # with it 0.9 0.7 0.8 (A's) and 0.6 0.3 0.6 0.4 0.7 0.5 0.3, 5.8 / 10 = 0.58; without it the rest of the
    # 17.3 the 31 add up to, 11.5 / 21
    def ride(event: dict[str, Any]) -> dict[str, Any]:
        named = {x["path"] for x in event["lessons"]}
        extra = [{"path": twin} for lesson, twin in ((A, NESTED), (D, TWIN)) if lesson in named]
        return {**event, "lessons": [*event["lessons"], *extra]}

    events = [ride(e) for e in crafted_events() if e["base_reward"] is not None]
    root = make_workspace(tmp_path, lessons=lessons, events=events)
    code, _, err = run_cli("loo", "--workspace", str(root))
    assert code == 0, err
    data = json.loads((root / "state" / "lesson-thompson" / "loo-results.json").read_text())
    by_lesson = {r["lesson"]: r for r in data["results"]}
    assert by_lesson[NESTED]["delta"] == pytest.approx(0.3)
    assert by_lesson[TWIN]["delta"] == pytest.approx(0.58 - 11.5 / 21)
    # each file the MCP server scores gets its own delta; the two it cannot tell apart get none
    read = mcp_reads(data, root / "lessons")
    assert NESTED not in read and TWIN not in read
    others = {lesson: row["delta"] for lesson, row in by_lesson.items() if lesson not in (NESTED, TWIN)}
    assert read == {lesson: delta for lesson, delta in others.items() if delta is not None}
    # our own fields still name each lesson, and the reader taking the file as one map finds both
    assert by_lesson[NESTED]["path"] == NESTED and by_lesson[TWIN]["path"] == TWIN
    assert dashboard_reads(data)[NESTED] == by_lesson[NESTED]["delta"]


def test_a_root_lesson_is_no_fallback_for_a_lesson_of_its_stem_in_a_folder(tmp_path: Path) -> None:
    """The MCP server looks `tools/plain.md` up as `tools/plain`, then as `plain`: the root lesson `plain.md`'s key.
    A `tools/plain.md` with no delta of its own (here: in no session) read the root lesson's (+0.3)."""
    lessons = {**LESSONS, "tools/plain.md": (["plainer"], "active")}
    # ROOT_LEVEL rides with A: with it 6 sessions of mean 0.8, without 25 of mean 0.5, so +0.3
    events = [
        {**e, "lessons": [*e["lessons"], {"path": ROOT_LEVEL}]} if any(x["path"] == A for x in e["lessons"]) else e
        for e in crafted_events()
        if e["base_reward"] is not None
    ]
    root = make_workspace(tmp_path, lessons=lessons, events=events)
    code, _, err = run_cli("loo", "--workspace", str(root))
    assert code == 0, err
    data = json.loads((root / "state" / "lesson-thompson" / "loo-results.json").read_text())
    by_lesson = {r["lesson"]: r for r in data["results"]}
    assert by_lesson[ROOT_LEVEL]["delta"] == pytest.approx(0.3) and "tools/plain.md" not in by_lesson
    read = mcp_reads(data, root / "lessons")
    assert "tools/plain.md" not in read and ROOT_LEVEL not in read
    others = {lesson: row["delta"] for lesson, row in by_lesson.items() if lesson != ROOT_LEVEL}
    assert read == {lesson: delta for lesson, delta in others.items() if delta is not None}
    assert by_lesson[ROOT_LEVEL]["path"] == ROOT_LEVEL  # named by its id


def _loo_with_riders(
    tmp_path: Path, lessons: dict[str, Any], riders: dict[str, str], files: dict[str, str] | None = None
) -> tuple[Path, dict[str, Any], dict[str, dict[str, Any]]]:
    """`loo` over the crafted graded sessions, each rider in the sessions of its host ({rider: host});
    `files`: more files under lessons/ ({path: text}), written as they are."""

    def ride(event: dict[str, Any]) -> dict[str, Any]:
        named = {x["path"] for x in event["lessons"]}
        return {**event, "lessons": [*event["lessons"], *({"path": r} for r, h in riders.items() if h in named)]}

    root = make_workspace(tmp_path, lessons=lessons, events=[ride(e) for e in crafted_events() if e["base_reward"]])
    for rel, text in (files or {}).items():
        (root / "lessons" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "lessons" / rel).write_text(text, encoding="utf-8")
    code, _, err = run_cli("loo", "--workspace", str(root))
    assert code == 0, err
    data = json.loads((root / "state" / "lesson-thompson" / "loo-results.json").read_text())
    return root, data, {r["lesson"]: r for r in data["results"]}


def test_a_folder_named_like_the_library_is_no_key_for_its_root_lesson(tmp_path: Path) -> None:
    """The MCP server looks the root lesson `plain.md` up as `lessons/plain` first (its folder's name), the name of
    `ext/lessons/plain.md`: the root lesson read that lesson's delta."""
    ext = "ext/lessons/plain.md"
    # ROOT_LEVEL rides with A: +0.3; ext with D: 0.58 - 11.5/21 (as TWIN in the test above)
    root, data, by_lesson = _loo_with_riders(
        tmp_path, {**LESSONS, ext: (["plainer"], "active")}, {ROOT_LEVEL: A, ext: D}
    )
    assert by_lesson[ROOT_LEVEL]["delta"] == pytest.approx(0.3)
    assert by_lesson[ext]["delta"] == pytest.approx(0.58 - 11.5 / 21)
    read = mcp_reads(data, root / "lessons")
    assert ROOT_LEVEL not in read and ext not in read
    others = {lesson: row["delta"] for lesson, row in by_lesson.items() if lesson not in (ROOT_LEVEL, ext)}
    assert read == {lesson: delta for lesson, delta in others.items() if delta is not None}
    assert by_lesson[ext]["path"] == ext


@pytest.mark.parametrize(
    "other",
    [
        # a hidden folder: our library does not read it, the server does
        (".old/git/worktree.md", "---\nstatus: active\n---\n# Old worktree\n"),
        # frontmatter our library refuses (not YAML); the server's own reading of it finds nothing wrong
        ("workflow/git/worktree.md", "---\nmatch: [unclosed\n---\n# Worktree\n"),
    ],
    ids=["hidden-folder", "refused-frontmatter"],
)
def test_a_file_only_the_server_reads_is_a_rival_for_a_name(tmp_path: Path, other: tuple[str, str]) -> None:
    """The server names `other` `git/worktree` too: with NESTED keyed so, it gave that file NESTED's delta."""
    rel, text = other
    root, data, by_lesson = _loo_with_riders(tmp_path, dict(LESSONS), {NESTED: A}, {rel: text})
    assert by_lesson[NESTED]["delta"] == pytest.approx(0.3) and rel not in by_lesson  # as above: with A, +0.3
    read = mcp_reads(data, root / "lessons")
    assert rel not in read and NESTED not in read
    assert by_lesson[NESTED]["path"] == NESTED


def test_a_lesson_gone_from_the_library_takes_no_name_from_a_live_one(tmp_path: Path) -> None:
    """TWIN is in the log but its file was deleted: counted as a rival for `git/worktree`, it cost NESTED its
    score (None from the server) though no file but NESTED's has that name."""
    root, data, by_lesson = _loo_with_riders(tmp_path, dict(LESSONS), {NESTED: A, TWIN: D})
    assert not (root / "lessons" / TWIN).exists()
    assert by_lesson[TWIN]["delta"] == pytest.approx(0.58 - 11.5 / 21)  # (as in the twin test above)
    read = mcp_reads(data, root / "lessons")
    assert read[NESTED] == pytest.approx(0.3)
    assert by_lesson[NESTED]["path"] == "git/worktree" and by_lesson[TWIN]["path"] == TWIN
