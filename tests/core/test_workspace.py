"""The Workspace service: record, grade, explain, what-if, replay --write, select."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.bandit.fold import CreditSettings
from lesson_credit.core.bandit.select import candidates
from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import (
    BASIC_JOURNAL,
    CONFIG_REL,
    LOG_REL,
    fixed_clock,
    log_bytes,
    row_of,
    session,
)
from tests.support.oracles import session_event

GIT, QUOTE, PLAIN, OLD, STYLE = "tools/git.md", "tools/quote.md", "workflow/plain.md", "workflow/old.md", "style.md"


def ws_at(root: Path) -> Workspace:
    return Workspace(root, clock=fixed_clock)


def log_records(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (root / LOG_REL).read_text().splitlines() if line.strip()]


def state_files(root: Path) -> dict[str, bytes]:
    folder = root / "state"
    return {str(p.relative_to(root)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


# ---------------------------------------------------------------- record


def test_record_computes_salience_from_the_journal(basic_ws: Path) -> None:
    ws = ws_at(basic_ws)
    exp = ws.record("s1", basic_ws / "j.txt", [GIT, "lessons/" + QUOTE, PLAIN, STYLE], reward=0.82)
    got = {c.path: c.salience for c in exp.lessons}
    # journal: "Ran git worktree add ../wt; the reviewer misquoted me."
    # git.md: git + git worktree both hit -> 1; quote.md: quote hits (misquoted), never-mentioned misses -> 1/2;
    # plain.md: no keywords -> 1/2; style.md: indent* misses -> 0
    assert got == {GIT: 1.0, QUOTE: 0.5, PLAIN: 0.5, STYLE: 0.0}
    (event,) = log_records(basic_ws)
    assert event["type"] == "session"
    assert event["session_id"] == "s1"
    assert event["base_reward"] == 0.82
    assert [e["path"] for e in event["lessons"]] == [GIT, QUOTE, PLAIN, STYLE]
    assert event["journal_path"] == "j.txt"
    assert event["journal_sha256"] == hashlib.sha256(BASIC_JOURNAL.encode()).hexdigest()
    assert event["timestamp"] == "2026-03-05T16:30:00Z"
    assert event["lessons"][0]["hits"] == ["git", "git worktree"]
    # stored per-lesson reward (seed, floor 0.3): git 0.82*1; quote 0.82*0.65 = 0.533; style 0.82*0.3 = 0.246
    assert [e["reward"] for e in event["lessons"]] == pytest.approx([0.82, 0.533, 0.533, 0.246])


def test_record_stores_full_precision_salience(tmp_path: Path, make_workspace: Callable[..., Path]) -> None:
    root = make_workspace(
        tmp_path,
        lessons={
            "x.md": (["one", "two", "three"], "active"),
            "y.md": (["a1", "b2", "c3", "d4", "e5", "f6", "g7"], "active"),
        },
        journals={"j.txt": "only one of them, and a1 b2"},
    )
    ws_at(root).record("s1", root / "j.txt", ["x.md", "y.md"], reward=1.0)
    (event,) = log_records(root)
    # 1 of 3 and 2 of 7: not rounded
    assert event["lessons"][0]["salience"] == 1 / 3
    assert event["lessons"][1]["salience"] == 2 / 7


def test_record_pending_then_grade(basic_ws: Path) -> None:
    ws = ws_at(basic_ws)
    exp = ws.record("s1", basic_ws / "j.txt", [GIT])
    assert exp.base_reward is None
    assert log_records(basic_ws)[0]["base_reward"] is None
    assert row_of(ws.lesson_table(), GIT).n == 0
    record = ws.grade("s1", 0.6, note="looked fine")
    assert (record.base_reward, record.grader, record.note) == (0.6, "manual", "looked fine")
    # seed, salience 1 -> (1.6, 1.4)
    row = ws.lesson_table().row(GIT)
    assert row is not None and (row.alpha, row.beta, row.n) == pytest.approx((1.6, 1.4, 1))
    assert [g.base_reward for g in ws.grade_history("s1")] == [0.6]


@pytest.fixture
def logged_ws(basic_ws: Path) -> Path:
    """basic_ws with one recorded session s1 (git + quote, reward 0.5), and its caches as the next command's read
    keeps them: the record made the state folder, after its own read of the library (a folder of lessons alone
    gets no caches, tests/core/test_lessons_only_folder.py)."""
    ws_at(basic_ws).record("s1", basic_ws / "j.txt", [GIT, QUOTE], reward=0.5)
    ws_at(basic_ws).lesson_table()
    return basic_ws


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"reward": 1.5}, "reward"),
        ({"reward": -0.1}, "reward"),
        ({"reward": math.nan}, "reward"),
        ({"reward": math.inf}, "reward"),
        ({"session_id": "s1"}, "already recorded"),
        ({"journal": "missing.txt"}, "journal not found"),
        ({"lessons": [GIT, "tools/nope.md"]}, "tools/nope.md"),
        ({"lessons": [GIT, "lessons/" + GIT]}, "twice"),
        ({"session_id": ""}, "empty"),
        ({"session_id": "a\nb"}, "single line"),
    ],
)
def test_record_refuses_and_leaves_the_log_untouched(logged_ws: Path, kwargs: dict[str, Any], match: str) -> None:
    before = log_bytes(logged_ws)
    state_before = state_files(logged_ws)
    args: dict[str, Any] = {"session_id": "s2", "journal": logged_ws / "j.txt", "lessons": [GIT], "reward": 0.5}
    args.update(kwargs)
    if isinstance(args["journal"], str):
        args["journal"] = logged_ws / args["journal"]
    with pytest.raises(WorkspaceError, match=match):
        ws_at(logged_ws).record(args.pop("session_id"), args.pop("journal"), args.pop("lessons"), **args)
    assert log_bytes(logged_ws) == before
    assert state_files(logged_ws) == state_before


def test_record_refusal_is_a_workspace_error_for_state_problems(logged_ws: Path) -> None:
    with pytest.raises(WorkspaceError):
        ws_at(logged_ws).record("s1", logged_ws / "j.txt", [GIT])


def test_record_after_select_with_same_session_id_is_fine(basic_ws: Path) -> None:
    ws = ws_at(basic_ws)
    ws.select("git things", k=1, seed=1, session_id="s9")
    ws.record("s9", basic_ws / "j.txt", [GIT], reward=1.0)
    assert [r["type"] for r in log_records(basic_ws)] == ["selection", "session"]
    # but a select for an id already recorded is refused
    before = log_bytes(basic_ws)
    with pytest.raises(WorkspaceError, match="already recorded"):
        ws.select("git", k=1, seed=1, session_id="s9")
    assert log_bytes(basic_ws) == before


def test_stale_writer_still_refuses_a_duplicate(basic_ws: Path) -> None:
    first, second = ws_at(basic_ws), ws_at(basic_ws)
    assert second.sessions() == []  # second has read the (empty) log
    first.record("s1", basic_ws / "j.txt", [GIT], reward=1.0)
    before = log_bytes(basic_ws)
    with pytest.raises(WorkspaceError, match="already recorded"):
        second.record("s1", basic_ws / "j.txt", [QUOTE], reward=0.0)
    assert log_bytes(basic_ws) == before
    # and a stale object can grade a session another object recorded
    second.grade("s1", 0.25)
    row = ws_at(basic_ws).lesson_table().row(GIT)
    assert row is not None and (row.alpha, row.beta) == pytest.approx((1.25, 1.75))


# ---------------------------------------------------------------- grade


@pytest.mark.parametrize(
    ("session_id", "reward", "match"),
    [("ghost", 0.5, "unknown session"), ("s1", 1.5, "reward"), ("s1", -0.1, "reward"), ("s1", math.nan, "reward")],
)
def test_grade_refuses(logged_ws: Path, session_id: str, reward: float, match: str) -> None:
    before = log_bytes(logged_ws)
    with pytest.raises(WorkspaceError, match=match):
        ws_at(logged_ws).grade(session_id, reward)
    assert log_bytes(logged_ws) == before


def test_regrade_refolds_without_double_counting(logged_ws: Path) -> None:
    ws = ws_at(logged_ws)
    for value in (1.0, 0.0, 0.9):
        ws.grade("s1", value)
    # only the last grade (0.9) counts; seed, git salience 1 -> (1.9, 1.1), n 1
    row = ws.lesson_table().row(GIT)
    assert row is not None and (row.alpha, row.beta, row.n) == pytest.approx((1.9, 1.1, 1))
    assert [g.base_reward for g in ws.grade_history("s1")] == [0.5, 1.0, 0.0, 0.9]
    assert ws.session("s1").base_reward == 0.9


# ---------------------------------------------------------------- explain


def test_explain_deltas_equal_the_credit_formula(basic_ws: Path) -> None:
    ws = ws_at(basic_ws)
    ws.record("s0", basic_ws / "j.txt", [GIT, QUOTE, STYLE], reward=1.0)  # earlier evidence on the same arms
    ws.record("s1", basic_ws / "j.txt", [GIT, QUOTE, STYLE], reward=0.82)
    exp = ws.explain("s1")
    by_path = {c.path: c for c in exp.lessons}
    # seed, floor 0.3, base 0.82:
    #   git   salience 1   -> w 1,    r 0.82  -> alpha +0.82,  beta +0.18
    #   quote salience 0.5 -> w 0.65, r 0.533 -> alpha +0.533, beta +0.467
    #   style salience 0   -> w 0.3,  r 0.246 -> alpha +0.246, beta +0.754
    expected = {GIT: (1.0, 0.82, 0.82, 0.18), QUOTE: (0.65, 0.533, 0.533, 0.467), STYLE: (0.3, 0.246, 0.246, 0.754)}
    for path, (w, reward, d_alpha, d_beta) in expected.items():
        c = by_path[path]
        assert (c.weight, c.reward, c.alpha_delta, c.beta_delta) == pytest.approx((w, reward, d_alpha, d_beta))
        assert c.alpha_after - c.alpha_before == pytest.approx(d_alpha)
    # after = current posterior: git had s0 (1.0 -> +1, +0) and s1 -> (1 + 1 + 0.82, 1 + 0 + 0.18)
    assert (by_path[GIT].alpha_after, by_path[GIT].beta_after) == pytest.approx((2.82, 1.18))
    # the explanation re-reads the journal: "quote" at offset 44 of BASIC_JOURNAL ("...reviewer mis|quote|d")
    quote_breakdown = by_path[QUOTE].breakdown
    assert quote_breakdown is not None
    quote = {k.keyword: k for k in quote_breakdown.keywords}
    assert quote["quote"].offsets == (44,)
    assert BASIC_JOURNAL[44:49] == "quote"
    assert quote["never-mentioned"].hit is False


def test_explain_under_other_settings_and_preview_grade(logged_ws: Path) -> None:
    ws = ws_at(logged_ws)
    before = state_files(logged_ws)
    exp = ws.explain("s1", base_reward=0.82, settings=CreditSettings(strategy="evidence", floor=0.3))
    quote = next(c for c in exp.lessons if c.path == QUOTE)
    # evidence, quote w 0.65: alpha += 0.65*0.82 = 0.533, beta += 0.65*0.18 = 0.117
    assert (quote.alpha_delta, quote.beta_delta) == pytest.approx((0.533, 0.117))
    assert exp.base_reward == 0.82
    assert state_files(logged_ws) == before
    assert ws.session("s1").base_reward == 0.5  # a preview, not a grade


def test_explain_under_decay_gives_what_the_grade_moves_today(basic_ws: Path) -> None:
    """Under decay a delta is the grade's whole effect on today's posterior: its increment worth
    gamma^(T - t), and the decay step the grade adds (pending sessions decay nothing)."""
    (basic_ws / CONFIG_REL).parent.mkdir(parents=True, exist_ok=True)
    (basic_ws / CONFIG_REL).write_text('strategy = "uniform"\ndecay = 0.5\n')
    ws = ws_at(basic_ws)
    ws.record("s1", basic_ws / "j.txt", [GIT], reward=0.5)
    ws.record("s2", basic_ws / "j.txt", [GIT], reward=1.0)
    # uniform, prior Beta(1, 1), gamma 0.5. Both graded: s1 decays (1, 1) to (1, 1), adds (0.5, 0.5): (1.5, 1.5);
    # s2 decays to (1 + 0.5 * 0.5, same) = (1.25, 1.25), adds (1, 0): (2.25, 1.25).
    # s1 pending: s2 alone: (1, 1) + (1, 0) = (2, 1); s1's deltas (0.25, 0.25), its increment worth 0.5 now.
    # s2 pending: s1 alone: (1.5, 1.5); s2's deltas (0.75, -0.25): beta falls on a reward of 1.
    (first,) = ws.explain("s1").lessons
    (second,) = ws.explain("s2").lessons
    assert (first.alpha_delta, first.beta_delta) == pytest.approx((0.25, 0.25))
    assert (second.alpha_before, second.beta_before) == pytest.approx((1.5, 1.5))
    assert (second.alpha_after, second.beta_after) == pytest.approx((2.25, 1.25))
    assert (second.alpha_delta, second.beta_delta) == pytest.approx((0.75, -0.25))


def test_explain_under_decay_splits_a_lesson_listed_twice(basic_ws: Path) -> None:
    """A lesson another tool listed twice in a session: under decay each listing shows its own increment
    (and an even share of the decay step), as without decay, so its rows add up to the change of its
    posterior; before, each listing showed the change of both."""
    (basic_ws / CONFIG_REL).parent.mkdir(parents=True, exist_ok=True)
    (basic_ws / CONFIG_REL).write_text("decay = 0.5\n")
    listings = [{"path": GIT, "salience": 0.0}, {"path": GIT, "salience": 1.0}]
    twice = {"session_id": "s2", "base_reward": 1.0, "lessons": listings}
    (basic_ws / LOG_REL).write_text(json.dumps(twice) + "\n")
    # seed, floor 0.3, base 1: the listings' increments are (0.3, 0.7) (w 0.3) and (1, 0) (w 1). Alone, s2 decays
    # Beta(1, 1) to itself: each listing's change is its increment, as with no decay.
    first, second = ws_at(basic_ws).explain("s2").lessons
    assert (first.alpha_delta, first.beta_delta) == pytest.approx((0.3, 0.7))
    assert (second.alpha_delta, second.beta_delta) == pytest.approx((1.0, 0.0))
    once = {"session_id": "s1", "base_reward": 1.0, "lessons": [{"path": GIT, "salience": 1.0}]}
    (basic_ws / LOG_REL).write_text(json.dumps(once) + "\n" + json.dumps(twice) + "\n")
    # s1 first: (1, 1) + (1, 0) = (2, 1). s2 decays it to (1.5, 1) and adds (1.3, 0.7): (2.8, 1.7). s2 pending:
    # (2, 1); its change (0.8, 0.7) = increments (1.3, 0.7) + decay step (-0.5, 0), the step halved per listing.
    first, second = ws_at(basic_ws).explain("s2").lessons
    assert (first.alpha_delta, first.beta_delta) == pytest.approx((0.05, 0.7))
    assert (second.alpha_delta, second.beta_delta) == pytest.approx((0.75, 0.0))
    assert (second.alpha_after - second.alpha_before, second.beta_after - second.beta_before) == pytest.approx(
        (0.8, 0.7)
    )
    (alone,) = ws_at(basic_ws).explain("s1").lessons  # listed once: s2 pending, (1, 1) + (1.3, 0.7) = (2.3, 1.7)
    assert (alone.alpha_delta, alone.beta_delta) == pytest.approx((0.5, 0.0))  # its (1, 0) worth 0.5 today


def test_explain_pending_session_has_zero_deltas(basic_ws: Path) -> None:
    ws = ws_at(basic_ws)
    ws.record("p", basic_ws / "j.txt", [GIT])
    (c,) = ws.explain("p").lessons
    assert (c.reward, c.alpha_delta, c.beta_delta) == (0.0, 0.0, 0.0)


def test_explain_refuses_unknown_session_and_lesson(logged_ws: Path) -> None:
    ws = ws_at(logged_ws)
    with pytest.raises(WorkspaceError, match="unknown session"):
        ws.explain("ghost")
    with pytest.raises(WorkspaceError, match="not injected"):
        ws.explain("s1", lesson=PLAIN)
    assert [c.path for c in ws.explain("s1", lesson="lessons/" + QUOTE).lessons] == [QUOTE]


# ---------------------------------------------------------------- what-if and replay --write


def test_what_if_changes_nothing_on_disk(logged_ws: Path) -> None:
    ws = ws_at(logged_ws)
    current = ws.lesson_table()  # a read of the current table may write caches (its intervals: core/model/intervals.py)
    before = state_files(logged_ws)
    what_if = ws.lesson_table(CreditSettings(strategy="uniform", floor=0.3))
    replayed = ws.replay("evidence", 0.0)
    # s1: reward 0.5; quote salience 0.5.
    #   seed floor 0.3: w 0.65, r 0.325 -> (1.325, 1.675); uniform -> (1.5, 1.5);
    #   evidence floor 0: w 0.5 -> (1 + 0.25, 1 + 0.25)
    assert (row_of(current, QUOTE).alpha, row_of(current, QUOTE).beta) == pytest.approx((1.325, 1.675))
    assert (row_of(what_if, QUOTE).alpha, row_of(what_if, QUOTE).beta) == pytest.approx((1.5, 1.5))
    assert (row_of(replayed, QUOTE).alpha, row_of(replayed, QUOTE).beta) == pytest.approx((1.25, 1.25))
    assert state_files(logged_ws) == before
    assert not (logged_ws / CONFIG_REL).exists()
    assert ws.settings == CreditSettings()


def test_replay_write_persists_settings(logged_ws: Path) -> None:
    (logged_ws / CONFIG_REL).write_text('k = 3\ndecay = 0.5\n[prior]\nalpha = 2.0\nbeta = 2.0\n[team]\nname = "blue"\n')
    ws = ws_at(logged_ws)
    log_before = log_bytes(logged_ws)
    ws.replay("uniform", 0.1, write=True)
    assert log_bytes(logged_ws) == log_before  # settings are not events
    later = ws_at(logged_ws)
    assert later.settings.strategy == "uniform"
    assert later.settings.floor == 0.1
    assert (later.settings.prior_alpha, later.settings.prior_beta) == (2.0, 2.0)  # kept
    assert later.config.k == 3
    assert later.settings.decay == 0.5
    assert later.config.extra.get("team") == {"name": "blue"}  # a table we do not know: kept
    # prior (2, 2), uniform, reward 0.5 -> (2.5, 2.5), and the state file agrees
    row = later.lesson_table().row(QUOTE)
    assert row is not None and (row.alpha, row.beta) == pytest.approx((2.5, 2.5))
    state = json.loads((logged_ws / "state" / "lesson-thompson" / "bandit-state.json").read_text())
    assert (state["arms"][QUOTE]["alpha"], state["arms"][QUOTE]["beta"]) == pytest.approx((2.5, 2.5))


def test_replay_refuses_bad_settings(logged_ws: Path) -> None:
    ws = ws_at(logged_ws)
    with pytest.raises(WorkspaceError):
        ws.replay("greedy")
    with pytest.raises(WorkspaceError):
        ws.replay(floor=1.5, write=True)
    assert not (logged_ws / CONFIG_REL).exists()


def test_bad_config_is_a_workspace_error(basic_ws: Path) -> None:
    path = basic_ws / CONFIG_REL
    path.parent.mkdir(parents=True)
    path.write_text("floor = 2.0\n")
    with pytest.raises(WorkspaceError, match="floor"):
        ws_at(basic_ws)


# ---------------------------------------------------------------- status table


def test_posteriors_lists_library_then_missing_arms(tmp_path: Path, make_workspace: Callable[..., Path]) -> None:
    root = make_workspace(
        tmp_path,
        lessons={"a/x.md": (["x"], "active"), "b/y.md": (["y"], "archived")},
        events=[session("s1", 1.0, {"lessons/gone/z.md": 1.0, "a/x.md": 0.0})],
    )
    table = ws_at(root).lesson_table()
    assert [r.path for r in table.rows] == ["a/x.md", "b/y.md", "gone/z.md"]
    assert [r.status for r in table.rows] == ["active", "archived", "missing"]
    assert row_of(table, "gone/z.md").category == "gone"
    y = table.row("b/y.md")
    assert y is not None and (y.alpha, y.beta, y.n) == (1.0, 1.0, 0)
    # Beta(1, 1): mean 0.5, 95% equal-tailed interval (0.025, 0.975)
    assert (y.mean, y.ci_low, y.ci_high) == pytest.approx((0.5, 0.025, 0.975))
    # x: seed, salience 0, reward 1 -> r 0.3 -> Beta(1.3, 1.7)
    x = table.row("a/x.md")
    assert x is not None and (x.alpha, x.beta, x.mean) == pytest.approx((1.3, 1.7, 1.3 / 3.0))
    assert x.ci_low < x.mean < x.ci_high
    assert table.sessions == 1 and table.graded == 1


def test_interval_for_beta_2_1_is_exact() -> None:
    # Beta(2, 1) has cdf x^2, so the 2.5% / 97.5% quantiles are sqrt(0.025), sqrt(0.975)
    import numpy as np

    from lesson_credit.core.model.beta import interval

    low, high = interval(np.array([2.0]), np.array([1.0]))
    assert (low[0], high[0]) == pytest.approx((math.sqrt(0.025), math.sqrt(0.975)))


# ---------------------------------------------------------------- select


SELECT_LESSONS = {
    "a/force.md": ([], "active", ["git (push|pull) --force"]),
    "a/git.md": (["git"], "active"),
    "a/quote.md": (["quote"], "active"),
    "a/none.md": (["unrelated"], "active"),
    "a/badre.md": ([], "active", ["([unclosed"]),
    "b/old.md": (["git"], "archived"),
    "b/dep.md": (["git"], "deprecated"),
    "b/auto.md": (["git"], "automated"),
}
CONTEXT = "I ran git push --force and the reviewer MISQUOTED me"


@pytest.fixture
def select_ws(tmp_path: Path, make_workspace: Callable[..., Path]) -> Path:
    return make_workspace(tmp_path, lessons=SELECT_LESSONS, journals={"j.txt": CONTEXT})


def test_select_candidates_are_active_matching_lessons(select_ws: Path) -> None:
    lessons = ws_at(select_ws).library().lessons
    assert [lesson.id for lesson in candidates(lessons, CONTEXT)] == ["a/force.md", "a/git.md", "a/quote.md"]
    assert candidates(lessons, "nothing relevant") == []
    # a pattern alone makes a candidate; a keyword alone does too
    assert [lesson.id for lesson in candidates(lessons, "GIT PULL --FORCE")] == ["a/force.md", "a/git.md"]


def test_select_respects_k_and_is_deterministic(select_ws: Path) -> None:
    ws = ws_at(select_ws)
    one = ws.select(CONTEXT, k=2, seed=7, session_id="x", log=False)
    two = ws.select(CONTEXT, k=2, seed=7, session_id="x", log=False)
    assert len(one.selected) == 2
    assert set(one.selected) <= set(one.candidates)
    assert one.selected == two.selected
    assert one.propensity == two.propensity
    assert all(0.0 <= p <= 1.0 for p in one.propensity.values())
    # with 3 candidates and k 2, each Monte Carlo draw picks exactly 2: propensities sum to 2
    assert sum(one.propensity.values()) == pytest.approx(2.0, abs=1e-9)
    assert log_bytes(select_ws) is None  # log=False wrote nothing


def test_select_with_fewer_candidates_than_k(select_ws: Path) -> None:
    sel = ws_at(select_ws).select(CONTEXT, k=10, seed=1, log=False)
    assert sorted(sel.selected) == ["a/force.md", "a/git.md", "a/quote.md"]
    assert sel.propensity == {"a/force.md": 1.0, "a/git.md": 1.0, "a/quote.md": 1.0}


def test_select_with_no_candidates(select_ws: Path) -> None:
    sel = ws_at(select_ws).select("nothing relevant", k=3, seed=1, session_id="empty")
    assert sel.selected == () and sel.candidates == () and sel.propensity == {}


def test_select_prefers_strong_posteriors(select_ws: Path) -> None:
    ws = ws_at(select_ws)
    ws.add_prior({"a/git.md": (60.0, 1.0, 0), "a/quote.md": (1.0, 60.0, 0), "a/force.md": (1.0, 60.0, 0)})
    sel = ws.select(CONTEXT, k=1, seed=3, log=False)
    assert sel.selected == ("a/git.md",)
    assert sel.propensity["a/git.md"] > 0.99


def test_select_logs_event_and_record_copies_propensity(select_ws: Path) -> None:
    ws = ws_at(select_ws)
    sel = ws.select(CONTEXT, k=2, seed=11, session_id="run-1")
    (event,) = log_records(select_ws)
    assert event["type"] == "selection"
    assert event["session_id"] == "run-1"
    assert event["candidates"] == list(sel.candidates)
    assert event["selected"] == list(sel.selected)
    assert event["propensity"] == sel.propensity
    assert (event["k"], event["seed"]) == (2, 11)
    assert ws.selections()[0][0] == 1  # line number
    ws.record("run-1", select_ws / "j.txt", ["a/git.md", "a/none.md"], reward=1.0)
    lessons = {e["path"]: e for e in log_records(select_ws)[1]["lessons"]}
    assert lessons["a/git.md"]["propensity"] == sel.propensity["a/git.md"]
    assert "propensity" not in lessons["a/none.md"]  # was not a candidate
    # read back from the log by the index: the candidate's propensity, None for the lesson that was not one
    assert session_event(select_ws, LOG_REL, "run-1").propensities == (sel.propensity["a/git.md"], None)


def test_a_lesson_renamed_between_select_and_record_is_no_candidate_of_that_session(select_ws: Path) -> None:
    """`a/git.md` chosen by the selection (k 3 of 3 candidates: each chosen for sure, propensity 1), then renamed
    `a/git-flow.md` before the record, which names the new file. A lesson's id is its path: the new name is another
    arm, with no propensity. Before, the effect estimates kept `a/git.md` as a candidate of the session that was not
    injected (weighed among the sessions without it at 1 / (1 - p)) though it was injected under its new name; the
    selection's claim is now not counted for it, and `record` says so."""
    ws = ws_at(select_ws)
    ws.record("s0", select_ws / "j.txt", ["a/git.md"], reward=0.5)  # the arm exists before the rename
    sel = ws.select(CONTEXT, k=3, seed=11, session_id="run-1")
    assert sorted(sel.selected) == ["a/force.md", "a/git.md", "a/quote.md"]
    assert sel.propensity == {"a/force.md": 1.0, "a/git.md": 1.0, "a/quote.md": 1.0}
    (select_ws / "lessons" / "a" / "git.md").rename(select_ws / "lessons" / "a" / "git-flow.md")
    ws = ws_at(select_ws)
    ws.record("run-1", select_ws / "j.txt", ["a/force.md", "a/quote.md", "a/git-flow.md"], reward=1.0)
    (said,) = [w for w in ws.warnings if "run-1" in w]
    assert said.startswith("session 'run-1' was selected with 'a/git.md', which the library no longer has and "), said
    lessons = {e["path"]: e.get("propensity") for e in log_records(select_ws)[-1]["lessons"]}
    assert lessons == {"a/force.md": 1.0, "a/quote.md": 1.0, "a/git-flow.md": None}
    arms = ws.data().arm_ids
    # by hand: run-1 is row 1; its candidacies are the two lessons chosen and injected under their names
    assert sorted((c.session_row, arms[c.arm], c.propensity) for c in ws.candidacies()) == [
        (1, "a/force.md", 1.0),
        (1, "a/quote.md", 1.0),
    ]


def test_select_uses_configured_k(select_ws: Path) -> None:
    path = select_ws / CONFIG_REL
    path.parent.mkdir(parents=True)
    path.write_text("k = 1\n")
    sel = ws_at(select_ws).select(CONTEXT, seed=2, log=False)
    assert (sel.k, len(sel.selected)) == (1, 1)
    # 3 candidates, k 1: propensities sum to 1
    assert sum(sel.propensity.values()) == pytest.approx(1.0, abs=1e-9)


def test_select_refuses_bad_k(select_ws: Path) -> None:
    with pytest.raises(WorkspaceError):
        ws_at(select_ws).select(CONTEXT, k=0, seed=1)
    assert log_bytes(select_ws) is None


def test_p_top_k_sums_to_k(select_ws: Path) -> None:
    # 5 active lessons, k 2: every Monte Carlo draw picks exactly 2
    probabilities = ws_at(select_ws).p_top_k(k=2, seed=0, draws=500)
    assert len(probabilities) == 5
    assert sum(probabilities.values()) == pytest.approx(2.0, abs=1e-9)
