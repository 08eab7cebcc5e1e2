"""Reward sources (docs/records.md): per source the latest event, the priority picks the score in force, every
source stays visible, and a changed priority re-folds like a changed strategy."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lesson_credit.core.bandit.config import ConfigError, load_config, save_config
from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.model.sources import (
    DEFAULT_PRIORITY,
    HEURISTIC,
    HUMAN,
    JUDGE,
    OUTCOME,
    check_priority,
    parse_priority,
    source_of,
)
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import PROPERTY, grade, make_workspace, session

LESSONS = {"a.md": (["alpha"], "active")}


def numbers(ws: Workspace, **kwargs: Any) -> tuple[float, float, int]:
    row = ws.lesson_table(**kwargs).row("a.md")
    assert row is not None
    return round(row.alpha, 12), round(row.beta, 12), row.n


@pytest.mark.parametrize(
    ("grader", "source"),
    [
        ("manual", HUMAN), ("alice", HUMAN), ("judge", JUDGE), ("llm_judge", JUDGE), ("judge:haiku", JUDGE),
        ("heuristic", HEURISTIC), ("trajectory", HEURISTIC), (None, HEURISTIC), ("", HEURISTIC),
        ("imported", HEURISTIC), ("outcome", OUTCOME), ("Judge", JUDGE),
    ],
)  # fmt: skip
def test_each_grader_belongs_to_one_source(grader: str | None, source: str) -> None:
    assert source_of(grader) == source


@pytest.mark.parametrize(
    ("grader", "source"),
    [
        ("llm judge", JUDGE), ("LLM Judge", JUDGE), ("gpt-4-judge", JUDGE), ("claude_llm", JUDGE),
        ("trajectory grade", HEURISTIC), ("auto grader", HEURISTIC), ("judge:gpt-4-auto", JUDGE),
        ("alice", HUMAN), ("judgement day", HUMAN),
    ],
)  # fmt: skip
def test_a_judge_like_name_is_the_judge_not_a_person(grader: str, source: str) -> None:
    # `--grader 'llm judge'` was a person's grade and outranked the judge
    assert source_of(grader) == source


def test_the_llm_judge_grade_does_not_outrank_the_judge_and_two_sources_in_one_name_are_refused(
    tmp_path: Path,
) -> None:
    events = [session("s1", 0.5, {"a.md": 1.0}), grade("s1", 0.3, "llm judge"), grade("s1", 0.9, "judge")]
    ws = Workspace(make_workspace(tmp_path, LESSONS, events))
    summary = ws.session("s1")  # both grades are the judge's: its latest, 0.9, is in force (no person graded)
    assert (summary.base_reward, summary.grader) == (0.9, "judge")
    assert {s.source for s in ws.reward_sources("s1")} == {JUDGE, HEURISTIC}
    assert numbers(ws) == (1.9, 1.1, 1)  # seed, salience 1 -> w 1: alpha 1 + 0.9, beta 1 + 0.1
    before = ws.log.path.read_bytes()  # type: ignore[attr-defined]
    with pytest.raises(WorkspaceError, match="names 2 reward sources"):
        ws.grade("s1", 0.8, grader="llm heuristic")
    assert ws.log.path.read_bytes() == before  # type: ignore[attr-defined]


def test_a_priority_names_known_sources_once() -> None:
    assert parse_priority("judge, human") == (JUDGE, HUMAN)
    for bad in ("", "human human", "people", "human,,robot"):
        with pytest.raises(ValueError):
            parse_priority(bad)
    with pytest.raises(ValueError):
        check_priority("human")


def test_the_latest_person_outranks_a_later_judge(tmp_path: Path) -> None:
    # the person's 0.9 (line 2) is in force although the judge's 0.2 (line 3) came later
    events = [session("s1", 0.5, {"a.md": 1.0}), grade("s1", 0.9), grade("s1", 0.2, "judge")]
    ws = Workspace(make_workspace(tmp_path, LESSONS, events))
    summary = ws.session("s1")
    assert (summary.base_reward, summary.grader) == (0.9, "manual")
    # seed, salience 1 -> w 1: alpha 1 + 0.9, beta 1 + 0.1
    assert numbers(ws) == (1.9, 1.1, 1)
    shown = {s.source: (s.score, s.grader, s.line, s.in_force) for s in ws.reward_sources("s1")}
    assert shown == {
        HUMAN: (0.9, "manual", 2, True),
        JUDGE: (0.2, "judge", 3, False),
        HEURISTIC: (0.5, "heuristic", 1, False),
    }


def test_changing_the_priority_refolds_and_changing_it_back_undoes_it(tmp_path: Path) -> None:
    events = [session("s1", 0.5, {"a.md": 1.0}), grade("s1", 0.9), grade("s1", 0.2, "judge")]
    root = make_workspace(tmp_path, LESSONS, events)
    ws = Workspace(root)
    before = numbers(ws)
    # a what-if: the judge first -> alpha 1 + 0.2, beta 1 + 0.8; nothing written
    what_if = ws.replay(priority=(JUDGE, HUMAN))
    row = what_if.row("a.md")
    assert row is not None and (round(row.alpha, 12), round(row.beta, 12)) == (1.2, 1.8)
    assert numbers(Workspace(root)) == before
    ws.replay(priority=(JUDGE, HUMAN), write=True)
    assert load_config(root / "state/lesson-thompson/config.toml").reward_priority == (JUDGE, HUMAN)
    assert numbers(Workspace(root)) == (1.2, 1.8, 1)
    state = json.loads((root / "state/lesson-thompson/bandit-state.json").read_text())
    assert round(state["arms"]["a.md"]["alpha"], 12) == 1.2
    Workspace(root).replay(priority=DEFAULT_PRIORITY, write=True)
    assert numbers(Workspace(root)) == before
    # a priority without any source that scored the session leaves it pending
    assert numbers(Workspace(root), base=Workspace(root).priority_base((OUTCOME,))) == (1.0, 1.0, 0)


def test_the_priority_is_saved_with_the_other_settings(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('strategy = "evidence"\n[rewards]\npriority = ["judge", "human"]\n[store]\nurl = "x"\n')
    config = load_config(path)
    assert config.reward_priority == (JUDGE, HUMAN) and config.credit.strategy == "evidence"
    save_config(path, config)
    again = load_config(path)
    assert again == config and again.extra == {"store": {"url": "x"}}
    for bad in ('[rewards]\npriority = ["robot"]\n', '[rewards]\npriority = "human"\n', "[rewards]\norder = []\n"):
        path.write_text(bad)
        with pytest.raises(ConfigError, match=r"\[rewards\]"):
            load_config(path)


EVENT = st.one_of(
    st.tuples(st.just("grade"), st.sampled_from(["manual", "bob", "judge", "heuristic", "outcome"]),
              st.one_of(st.none(), st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]))),
)  # fmt: skip
PRIORITIES = st.permutations(list(DEFAULT_PRIORITY)).flatmap(lambda p: st.integers(1, 4).map(lambda k: tuple(p[:k])))


@PROPERTY
@given(
    st.lists(st.tuples(st.integers(0, 2), EVENT), max_size=12),
    st.lists(st.one_of(st.none(), st.sampled_from([0.2, 0.6])), min_size=3, max_size=3),
    PRIORITIES,
)
def test_the_folded_scores_are_the_per_session_rule(
    tmp_path_factory: pytest.TempPathFactory,
    grades: list[tuple[int, tuple[str, str, float | None]]],
    own: list[float | None],
    priority: tuple[str, ...],
) -> None:
    """The snapshot's vectorised rule equals the rule written for one session (views.source_breakdown):
    same score in force, same source, same grader, for any events and any priority."""
    root = tmp_path_factory.mktemp("ws")
    events: list[dict[str, object]] = [session(f"s{i}", own[i], {"a.md": 0.5}) for i in range(3)]
    events += [grade(f"s{i}", value, grader) for i, (_, grader, value) in grades]
    config = f"[rewards]\npriority = {json.dumps(list(priority))}\n"
    ws = Workspace(make_workspace(root, LESSONS, events, config=config))
    data = ws.data()
    for i in range(3):
        sources = ws.reward_sources(f"s{i}")
        in_force = [s for s in sources if s.in_force]
        value = float(data.base[i])
        if math.isnan(value):
            assert in_force == []
            assert ws.session(f"s{i}").grader is None
        else:
            (chosen,) = in_force
            assert chosen.score == value and chosen.source in priority
            assert ws.session(f"s{i}").grader == chosen.grader
        assert np.isnan(ws.priority_base(priority)[i]) == math.isnan(value)


def test_the_parsed_log_cache_keeps_every_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sources are columns of the cache (its parts and head): a workspace read from the cache has the
    same scores, sources and graders as one that parsed the log."""
    monkeypatch.setattr("lesson_credit.core.log.cache.MIN_NEW_BYTES", 0)  # the cache path on a tiny log too
    events: list[dict[str, object]] = [session(f"s{i}", 0.5 if i % 2 else None, {"a.md": 0.5}) for i in range(6)]
    events += [grade("s0", 0.9), grade("s1", 0.2, "judge"), grade("s2", 0.7, "judge"), grade("s2", 0.4, "bob")]
    events += [grade("s3", 0.1, "outcome"), {"type": "grade", "session_id": "s1", "base_reward": None, "grader": "x"}]
    root = make_workspace(tmp_path, LESSONS, events)
    parsed = Workspace(root, use_cache=False)
    Workspace(root).data()  # writes the cache
    assert any((root / "state/lesson-thompson/.cache").iterdir())
    cached = Workspace(root)
    for ws in (parsed, cached):
        data = ws.data()
        # s0 person 0.9; s1 judge 0.2 (x withdrew a person's score it never had); s2 bob 0.4 over the judge;
        # s3 the record's heuristic 0.5 over the outcome's 0.1; s4 pending; s5 heuristic 0.5
        assert np.allclose(data.base, [0.9, 0.2, 0.4, 0.5, np.nan, 0.5], equal_nan=True)
        assert data.graders == ("manual", "judge", "bob", "heuristic", None, "heuristic")
        assert data.scores().values[OUTCOME][3] == 0.1
