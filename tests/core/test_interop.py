"""gptme interop in the engine: arm ids mapped to library ids, an imported prior with sessions
folded on top, and published-shape session lines written by other tools (docs/format.md §5, §7,
lesson_credit.core.bandit.interop).
The `import-gptme` / `export-gptme` commands are tested in tests/cli/test_gptme_interop.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.bandit.interop import map_arm_id
from lesson_credit.core.id_spellings import Spellings, prefixed_id_count
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import BASIC_LESSONS, LOG_REL, fixed_clock, make_workspace, session
from tests.support.gptme_files import GIT, PLAIN, QUOTE, STYLE, gptme_state, write_json


def test_map_arm_id() -> None:
    library = {GIT, QUOTE, PLAIN, STYLE}
    roots = ("/ws/lessons", "/ws/more")
    assert map_arm_id(GIT, library, roots) == (GIT, True)
    assert map_arm_id("lessons/" + GIT, library, roots) == (GIT, True)
    assert map_arm_id("./lessons/" + GIT, library, roots) == (GIT, True)
    assert map_arm_id("lessons\\tools\\git.md", library, roots) == (GIT, True)
    assert map_arm_id("/ws/lessons/" + GIT, library, roots) == (GIT, True)
    assert map_arm_id("/ws/more/" + STYLE, library, roots) == (STYLE, True)
    # another machine's checkout: the part after the last 'lessons' folder
    assert map_arm_id("/home/bob/agent/lessons/" + QUOTE, library, roots) == (QUOTE, True)
    # last resort: a unique path suffix
    assert map_arm_id("vendor/tools/git.md", library, roots) == (GIT, True)
    assert map_arm_id("/ws/lessons/tools/gone.md", library, roots) == ("tools/gone.md", False)
    assert map_arm_id("tools/nowhere.md", library, roots) == ("tools/nowhere.md", False)


def test_map_arm_id_takes_an_id_in_another_unicode_form_for_the_librarys_lesson() -> None:
    nfc, nfd = "tools/caf\u00e9.md", "tools/cafe\u0301.md"  # é as one code point; e and a combining accent
    for library, other in ((nfc, nfd), (nfd, nfc)):
        ids = {library, GIT}
        assert map_arm_id(other, ids, ("/ws/lessons",)) == (library, True)
        assert map_arm_id("/ws/lessons/" + other, ids, ("/ws/lessons",)) == (library, True)  # under a root
        assert map_arm_id("/home/bob/lessons/" + other, ids, ()) == (library, True)
        assert map_arm_id("vendor/" + other, ids, ()) == (library, True)  # by its path's end
    # a library holding both (two files): each is its own lesson, named as given
    assert map_arm_id(nfd, {nfc, nfd}, ()) == (nfd, True)
    assert map_arm_id(nfc, {nfc, nfd}, ()) == (nfc, True)


def test_prior_then_sessions_fold_on_top(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, lessons=BASIC_LESSONS)
    ws = Workspace(root, clock=fixed_clock)
    ws.import_gptme(write_json(tmp_path / "bandit-state.json", gptme_state(root)))
    with (root / LOG_REL).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(session("s1", 0.8, {GIT: 1.0}, timestamp="2026-03-02T00:00:00Z")) + "\n")
    arms = Workspace(root, clock=fixed_clock).state_payload()["arms"]
    # seed, w = 1: alpha 3.2 + 0.8 = 4.0, beta 1.9 + 0.2 = 2.1, n 4 + 1, rewards 3 + 1 (0.8 > 0.5)
    assert (arms[GIT]["alpha"], arms[GIT]["beta"]) == pytest.approx((4.0, 2.1))
    assert (arms[GIT]["total_selections"], arms[GIT]["total_rewards"]) == (5, 4)
    assert arms[GIT]["last_updated"] == "2026-03-02T00:00:00+00:00"  # s1's time, as gptme writes one


def test_published_shape_lines_fold(tmp_path: Path) -> None:
    lines: list[dict[str, Any]] = [
        # no "type"; a prefixed path; outcome without base_reward; a lesson without salience;
        # a stored per-lesson reward that the fold ignores (it recomputes from salience)
        {
            "session_id": "x1",
            "timestamp": "2026-03-01T00:00:00Z",
            "outcome": 0.8,
            "lessons": [{"path": "lessons/" + GIT, "salience": 1.0, "reward": 0.99}, {"path": QUOTE}],
        },
        # base_reward wins over outcome; an arm_id instead of a path
        {
            "session_id": "x2",
            "outcome": 0.1,
            "base_reward": 0.9,
            "lessons": [{"path": GIT, "salience": 0.0}, {"arm_id": PLAIN, "salience": 0.0}],
        },
        # an outcome that is not a number: pending
        {"session_id": "x3", "outcome": "success", "lessons": [{"path": GIT, "salience": 1.0}]},
        # a numeric session id and an integer outcome
        {"session_id": 42, "outcome": 1, "lessons": [{"path": "lessons/" + STYLE, "salience": 0.5}]},
    ]
    root = make_workspace(tmp_path, lessons=BASIC_LESSONS, events=lines)
    ws = Workspace(root, clock=fixed_clock)
    assert ws.log_problems() == []
    rows = {row.path: row for row in ws.lesson_table().rows}
    # git: x1 w 1 r 0.8 -> +0.8/+0.2; x2 w 0.3 r 0.27 -> +0.27/+0.73 -> Beta(2.07, 1.93), n 2 (x3 pending)
    assert (rows[GIT].alpha, rows[GIT].beta, rows[GIT].n) == pytest.approx((2.07, 1.93, 2))
    # quote: no salience -> 0.5, w 0.65, r 0.52 -> Beta(1.52, 1.48)
    assert (rows[QUOTE].alpha, rows[QUOTE].beta, rows[QUOTE].n) == pytest.approx((1.52, 1.48, 1))
    # plain: base 0.9, w 0.3 -> r 0.27 -> Beta(1.27, 1.73)
    assert (rows[PLAIN].alpha, rows[PLAIN].beta, rows[PLAIN].n) == pytest.approx((1.27, 1.73, 1))
    # style: base 1, w 0.65 -> Beta(1.65, 1.35)
    assert (rows[STYLE].alpha, rows[STYLE].beta, rows[STYLE].n) == pytest.approx((1.65, 1.35, 1))
    assert "lessons/" + GIT not in {row.path for row in ws.lesson_table().rows}
    sessions = {s.session_id: s for s in ws.sessions()}
    assert set(sessions) == {"x1", "x2", "x3", "42"}
    assert sessions["x3"].pending and sessions["x1"].base_reward == 0.8 and sessions["x2"].base_reward == 0.9
    assert ws.grade_history("x1")[0].grader == "imported"
    assert ws.missing_salience_count() == 1
    assert prefixed_id_count(ws.log) == Spellings(other=2)
    exp = ws.explain("x1")
    quote = next(c for c in exp.lessons if c.path == QUOTE)
    assert quote.salience_missing and quote.salience == 0.5


def test_disagreement_holds_math_isclose_and_names_the_arm(tmp_path: Path) -> None:
    # all arms are compared at once (one array), arm by arm only to say which: the same verdicts as
    # math.isclose(rel_tol=1e-9, abs_tol=1e-12) per number, booleans and strings never numbers
    from lesson_credit.core.bandit.interop import disagreement

    events = [session(f"s{i}", 0.1 * i, {GIT: 0.5, QUOTE: 1.0}) for i in range(1, 4)]
    ws = Workspace(make_workspace(tmp_path, BASIC_LESSONS, events=events))
    post = ws.posterior()
    state = ws.state_payload()
    assert disagreement(state, post) is None

    def changed(key: str, value: Any) -> str | None:
        arms = {arm: dict(entry) for arm, entry in state["arms"].items()}
        arms[QUOTE][key] = value(arms[QUOTE][key])
        return disagreement({**state, "arms": arms}, post)

    # s1-s3: rewards 0.1, 0.2, 0.3; quote salience 1 (weight 1): alpha 1 + 0.6 = 1.6
    assert state["arms"][QUOTE]["alpha"] == pytest.approx(1.6)
    assert changed("alpha", lambda a: a * (1 + 1e-10)) is None  # within rel_tol 1e-9
    assert "quote.md alpha 1.6 in the file" in str(changed("alpha", lambda a: a * (1 + 1e-8)))
    assert "total_selections True in the file" in str(changed("total_selections", lambda n: True))
    assert "beta '2.4' in the file" in str(changed("beta", lambda b: "2.4"))
