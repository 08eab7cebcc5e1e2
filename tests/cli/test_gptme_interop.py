"""gptme interop through the CLI: `import-gptme` logs a bandit-state.json as a prior, `export-gptme`
writes posteriors in its exact shape (docs/format.md §7, core.bandit.interop); the engine side is
tests/core/test_interop.py."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.bandit.interop import EXPORT_ARM_KEYS, InteropError, read_bandit_state
from lesson_credit.core.workspace import Workspace
from tests.support.cli_run import run_cli
from tests.support.engine_helpers import (
    BASIC_LESSONS,
    LOG_REL,
    STATE_REL,
    fixed_clock,
    log_bytes,
    make_workspace,
    row_of,
    session,
)
from tests.support.gptme_files import GIT, OLD, PLAIN, QUOTE, STYLE, gptme_state, write_json

ARM_KEYS = {"arm_id", "alpha", "beta", "total_selections", "total_rewards", "last_updated"}
# gptme's four top-level keys, and our stamp: its loader reads the four with .get() and ignores any other
TOP_KEYS = {"arms", "total_sessions", "created", "last_updated", "lesson_credit_written"}


def status_rows(root: Path) -> dict[str, dict[str, Any]]:
    code, out, err = run_cli("status", "--workspace", str(root), "--json")
    assert code == 0, err
    return {row["path"]: row for row in json.loads(out)["lessons"]}


# ---------------------------------------------------------------- import


def test_import_logs_one_prior_event_and_the_status_shows_it(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, lessons=BASIC_LESSONS)
    source = write_json(tmp_path / "bandit-state.json", gptme_state(root))
    code, out, err = run_cli("import-gptme", "--workspace", str(root), str(source))
    assert code == 0, err
    assert "imported 5 arms" in out
    assert "no lesson in the library for 'tools/nowhere.md'" in out
    assert out.count("no lesson in the library") == 1

    (event,) = [json.loads(line) for line in (root / LOG_REL).read_text().splitlines()]
    assert event["type"] == "prior"
    assert event["arms"] == {
        GIT: {"alpha": 3.2, "beta": 1.9, "n": 4, "rewards": 3},
        QUOTE: {"alpha": 2.0, "beta": 5.0, "n": 5, "rewards": 1},
        PLAIN: {"alpha": 1.5, "beta": 2.5, "n": 2, "rewards": 0},
        STYLE: {"alpha": 4.0, "beta": 2.0, "n": 4, "rewards": 2},
        "tools/nowhere.md": {"alpha": 1.1, "beta": 2.2, "n": 2, "rewards": 0},
    }

    rows = status_rows(root)
    expected = {
        GIT: (3.2, 1.9, 4),
        QUOTE: (2.0, 5.0, 5),
        PLAIN: (1.5, 2.5, 2),
        STYLE: (4.0, 2.0, 4),
        "tools/nowhere.md": (1.1, 2.2, 2),
        OLD: (1.0, 1.0, 0),
    }
    for path, (a, b, n) in expected.items():
        assert (rows[path]["alpha"], rows[path]["beta"], rows[path]["n"]) == pytest.approx((a, b, n)), path
        assert rows[path]["mean"] == pytest.approx(a / (a + b))
    assert rows["tools/nowhere.md"]["status"] == "missing"
    assert rows[GIT]["status"] == "active"
    # bandit-state.json is rewritten from the fold
    state = json.loads((root / STATE_REL).read_text())
    assert state["arms"][GIT]["alpha"] == pytest.approx(3.2)
    assert state["arms"][GIT]["total_rewards"] == 3


def test_import_json_report(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, lessons=BASIC_LESSONS)
    source = write_json(tmp_path / "bandit-state.json", gptme_state(root))
    code, out, err = run_cli("import-gptme", "--workspace", str(root), str(source), "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["imported"] == 5
    assert payload["unmatched"] == ["tools/nowhere.md"]
    arms = {a["source"]: a for a in payload["arms"]}
    assert arms[QUOTE]["path"] == QUOTE  # the legacy lesson_path key names the arm
    assert arms["lessons/" + PLAIN]["path"] == PLAIN
    assert arms[str(root / "lessons" / STYLE)]["path"] == STYLE
    assert arms[str(root / "lessons" / STYLE)]["matched"] is True
    assert arms["tools/nowhere.md"]["matched"] is False


def test_import_twice_does_not_double_count(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, lessons=BASIC_LESSONS)
    source = write_json(tmp_path / "bandit-state.json", gptme_state(root))
    for _ in range(2):
        code, out, err = run_cli("import-gptme", "--workspace", str(root), str(source))
        assert code == 0, err
    assert "in the log already; nothing imported" in out  # the second time: the same priors, skipped
    assert len((root / LOG_REL).read_text().splitlines()) == 1
    rows = status_rows(root)
    assert (rows[GIT]["alpha"], rows[GIT]["beta"], rows[GIT]["n"]) == pytest.approx((3.2, 1.9, 4))
    state = json.loads((root / STATE_REL).read_text())
    assert state["arms"][GIT]["total_rewards"] == 3  # not 6

    # a newer file: the latest prior wins
    newer = gptme_state(root)
    newer["arms"][GIT].update(alpha=6.0, beta=2.0, total_selections=7, total_rewards=5)
    code, _, err = run_cli("import-gptme", "--workspace", str(root), str(write_json(tmp_path / "newer.json", newer)))
    assert code == 0, err
    rows = status_rows(root)
    assert (rows[GIT]["alpha"], rows[GIT]["beta"], rows[GIT]["n"]) == pytest.approx((6.0, 2.0, 7))
    assert (rows[QUOTE]["alpha"], rows[QUOTE]["beta"], rows[QUOTE]["n"]) == pytest.approx((2.0, 5.0, 5))


# ---------------------------------------------------------------- refusals


def bad_files(root: Path) -> dict[str, tuple[str, str]]:
    """name -> (file text, what the one-line reason says)."""
    two_same = {
        "arms": {
            GIT: {"arm_id": GIT, "alpha": 2, "beta": 2},
            "lessons/" + GIT: {"arm_id": "lessons/" + GIT, "alpha": 3, "beta": 1},
        }
    }
    return {
        "not-json": ('{"arms": {', "not valid JSON"),
        "no-arms": (json.dumps({"arms": {}}), "no arms"),
        "no-arms-key": (json.dumps({"total_sessions": 3}), "'arms'"),
        "list": (json.dumps([1, 2]), "'arms'"),
        "negative-alpha": (json.dumps({"arms": {GIT: {"arm_id": GIT, "alpha": -1.0, "beta": 2.0}}}), "positive"),
        "zero-beta": (json.dumps({"arms": {GIT: {"arm_id": GIT, "alpha": 1.0, "beta": 0}}}), "positive"),
        "string-alpha": (json.dumps({"arms": {GIT: {"arm_id": GIT, "alpha": "3", "beta": 2.0}}}), "finite number"),
        "negative-count": (
            json.dumps({"arms": {GIT: {"arm_id": GIT, "alpha": 1, "beta": 1, "total_selections": -2}}}),
            "negative",
        ),
        "two-same": (json.dumps(two_same), "several arms map to the same lesson: tools/git.md"),
        "arm-not-object": (json.dumps({"arms": {GIT: 3}}), "not an object"),
    }


@pytest.mark.parametrize(
    "name",
    [
        "not-json",
        "no-arms",
        "no-arms-key",
        "list",
        "negative-alpha",
        "zero-beta",
        "string-alpha",
        "negative-count",
        "two-same",
        "arm-not-object",
    ],
)
def test_bad_files_are_refused_and_the_log_is_unchanged(tmp_path: Path, name: str) -> None:
    root = make_workspace(tmp_path, lessons=BASIC_LESSONS, events=[session("s1", 0.7, {GIT: 1.0})])
    Workspace(root, clock=fixed_clock).write_state()
    text, reason = bad_files(root)[name]
    source = tmp_path / f"{name}.json"
    source.write_text(text, encoding="utf-8")
    an_hour_ago = time.time() - 3600  # (half a JSON object changed within seconds is a save in progress: exit 75)
    os.utime(source, (an_hour_ago, an_hour_ago))
    log_before, state_before = log_bytes(root), (root / STATE_REL).read_bytes()
    for extra in ((), ("--json",)):
        code, out, err = run_cli("import-gptme", "--workspace", str(root), str(source), *extra)
        assert code == 1
        assert out == ""
        assert err.count("\n") == 1 and err.startswith("lesson-credit: ")
        assert reason in err
        assert "Traceback" not in err
    assert log_bytes(root) == log_before
    assert (root / STATE_REL).read_bytes() == state_before


def test_missing_file_is_refused(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, lessons=BASIC_LESSONS)
    code, _, err = run_cli("import-gptme", "--workspace", str(root), str(tmp_path / "nope.json"))
    assert code == 1 and "not found" in err and err.count("\n") == 1
    assert log_bytes(root) is None
    with pytest.raises(InteropError, match="not found"):
        read_bandit_state(tmp_path / "nope.json", set(), ())


# ---------------------------------------------------------------- export


HISTORY = [
    session("s1", 0.8, {GIT: 1.0, QUOTE: 0.5}, timestamp="2026-03-01T00:00:00Z"),
    session("s2", 0.6, {GIT: 0.0, "retired/gone.md": 1.0}, timestamp="2026-03-02T00:00:00Z"),
    session("s3", None, {GIT: 1.0, PLAIN: 1.0}, timestamp="2026-03-03T00:00:00Z"),
]


def test_export_writes_exactly_the_gptme_keys(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, lessons=BASIC_LESSONS, events=HISTORY)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    code, out, err = run_cli("export-gptme", "--workspace", str(root), str(out_dir))
    assert code == 0, err
    target = out_dir / "bandit-state.json"
    assert str(target) in out
    payload = json.loads(target.read_text())
    assert set(payload) == TOP_KEYS
    assert set(EXPORT_ARM_KEYS) == ARM_KEYS
    assert set(payload["arms"]) == {GIT, QUOTE, "retired/gone.md", PLAIN}
    for arm_id, arm in payload["arms"].items():
        assert set(arm) == ARM_KEYS, arm_id
        assert arm["arm_id"] == arm_id
        assert isinstance(arm["total_selections"], int) and isinstance(arm["total_rewards"], int)
    assert payload["total_sessions"] == 2  # s3 is pending
    arms = payload["arms"]
    # git: s1 w 1, r 0.8 -> +0.8/+0.2; s2 salience 0 -> w 0.3, r 0.18 -> +0.18/+0.82
    assert (arms[GIT]["alpha"], arms[GIT]["beta"]) == pytest.approx((1.98, 2.02))
    assert (arms[GIT]["total_selections"], arms[GIT]["total_rewards"]) == (2, 1)  # 0.8 > 0.5, 0.18 is not
    assert arms[GIT]["last_updated"] == "2026-03-02T00:00:00+00:00"  # s2's time (logged `Z`), as gptme writes one
    # quote: w 0.65, r 0.52 -> Beta(1.52, 1.48), and 0.52 > 0.5 counts as a reward
    assert (arms[QUOTE]["alpha"], arms[QUOTE]["beta"]) == pytest.approx((1.52, 1.48))
    assert (arms[QUOTE]["total_selections"], arms[QUOTE]["total_rewards"]) == (1, 1)
    assert arms[QUOTE]["last_updated"] == "2026-03-01T00:00:00+00:00"
    # plain: only a pending session -> the prior
    assert (arms[PLAIN]["alpha"], arms[PLAIN]["beta"], arms[PLAIN]["total_selections"]) == (1.0, 1.0, 0)


def test_export_to_a_file_and_to_a_missing_folder(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, lessons=BASIC_LESSONS, events=HISTORY)
    target = tmp_path / "custom-name.json"
    code, _, err = run_cli("export-gptme", "--workspace", str(root), str(target))
    assert code == 0, err
    assert set(json.loads(target.read_text())) == TOP_KEYS
    code, out, err = run_cli("export-gptme", "--workspace", str(root), str(tmp_path / "no" / "such" / "x.json"))
    assert code == 1 and out == ""
    assert err.startswith("lesson-credit: folder not found") and err.count("\n") == 1


def per_arm(payload: dict[str, Any]) -> dict[str, tuple[float, float, int, int]]:
    return {
        arm_id: (arm["alpha"], arm["beta"], arm["total_selections"], arm["total_rewards"])
        for arm_id, arm in payload["arms"].items()
    }


def test_round_trip_export_import_export(tmp_path: Path) -> None:
    first = make_workspace(tmp_path, lessons=BASIC_LESSONS, events=HISTORY, name="first")
    exported = tmp_path / "first.json"
    assert run_cli("export-gptme", "--workspace", str(first), str(exported))[0] == 0
    fresh = make_workspace(tmp_path, lessons=BASIC_LESSONS, name="fresh")
    code, out, err = run_cli("import-gptme", "--workspace", str(fresh), str(exported))
    assert code == 0, err
    assert "retired/gone.md" in out  # not in the library: reported, kept under its id
    again = tmp_path / "again.json"
    assert run_cli("export-gptme", "--workspace", str(fresh), str(again))[0] == 0
    before, after = per_arm(json.loads(exported.read_text())), per_arm(json.loads(again.read_text()))
    assert set(before) == set(after)
    for arm_id in before:
        assert after[arm_id] == pytest.approx(before[arm_id]), arm_id
    assert before[GIT] == pytest.approx((1.98, 2.02, 2, 1))


def test_round_trip_with_a_moved_lesson(tmp_path: Path) -> None:
    # old.md was moved to workflow/old.md: the log has evidence under both ids (lint calls the old one a ghost)
    events = [session("s1", 0.8, {"old.md": 0.5}), session("s2", 0.7, {OLD: 0.5, GIT: 1.0})]
    first = make_workspace(tmp_path, lessons=BASIC_LESSONS, events=events, name="first")
    exported = tmp_path / "first.json"
    assert run_cli("export-gptme", "--workspace", str(first), str(exported))[0] == 0
    fresh = make_workspace(tmp_path, lessons=BASIC_LESSONS, name="fresh")
    code, _, err = run_cli("import-gptme", "--workspace", str(fresh), str(exported))
    assert code == 0, err
    again = tmp_path / "again.json"
    assert run_cli("export-gptme", "--workspace", str(fresh), str(again))[0] == 0
    assert per_arm(json.loads(again.read_text())) == pytest.approx(per_arm(json.loads(exported.read_text())))


# ---------------------------------------------------------------- values the log cannot hold


def test_import_refuses_counts_beyond_int64(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, lessons=BASIC_LESSONS, events=[session("s1", 0.7, {GIT: 1.0})])
    source = write_json(
        tmp_path / "big.json", {"arms": {GIT: {"arm_id": GIT, "alpha": 2, "beta": 2, "total_selections": 10**30}}}
    )
    before = log_bytes(root)
    code, _, err = run_cli("import-gptme", "--workspace", str(root), str(source))
    assert code == 1 and err.startswith("lesson-credit: ") and err.count("\n") == 1
    assert log_bytes(root) == before
    assert run_cli("status", "--workspace", str(root))[0] == 0


def test_reader_skips_a_prior_with_a_count_beyond_int64(tmp_path: Path) -> None:
    events = [
        session("s1", 0.7, {GIT: 1.0}),
        {"type": "prior", "arms": {QUOTE: {"alpha": 2.0, "beta": 2.0, "n": 10**30}}},
    ]
    root = make_workspace(tmp_path, lessons=BASIC_LESSONS, events=events)
    code, out, err = run_cli("status", "--workspace", str(root))
    assert code == 0
    assert "line 2" in err


def test_import_refuses_priors_the_reader_would_reject(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, lessons=BASIC_LESSONS)
    source = write_json(tmp_path / "huge.json", {"arms": {GIT: {"arm_id": GIT, "alpha": 1e308, "beta": 1e308}}})
    code, _, _ = run_cli("import-gptme", "--workspace", str(root), str(source))
    if code == 0:  # accepted: then it must be what the workspace now believes
        ws = Workspace(root, clock=fixed_clock)
        assert ws.log_problems() == []
        assert row_of(ws.lesson_table(), GIT).alpha == pytest.approx(1e308)
    else:
        assert log_bytes(root) is None


def test_import_refuses_an_arm_id_that_is_empty_once_stripped(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, lessons=BASIC_LESSONS)
    source = write_json(tmp_path / "empty.json", {"arms": {"lessons/": {"alpha": 2.0, "beta": 2.0}}})
    code, _, err = run_cli("import-gptme", "--workspace", str(root), str(source))
    assert code == 1 and err.count("\n") == 1
    assert log_bytes(root) is None
