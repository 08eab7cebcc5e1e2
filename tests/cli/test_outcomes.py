"""gptme-sessions' string outcomes read as rewards.

Records in the published shape (no "type", no base_reward), seed strategy, floor 0.3:
  p1 productive  git salience 1   -> reward 1, w 1:    git alpha +1
  p2 noop        git salience 0   -> reward 0, w 0.3:  git beta +1 (seed: beta += 1 - base*w)
  p3 unknown     quote            -> pending: moves nothing
  p4 "weird"     quote            -> not mapped: pending, and lint reports it
So git is Beta(2, 2) with n 2 and quote stays Beta(1, 1) with n 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lesson_credit.core.bandit.config import ConfigError, load_config
from lesson_credit.core.log.cache import LogCache
from lesson_credit.core.log.store import EventLog
from lesson_credit.core.workspace import Workspace
from tests.cli.cli_fixtures import CONFIG_REL, make_ws, run_plain

GIT, QUOTE = "tools/git.md", "tools/quote.md"


def published(session_id: str, outcome: object, lesson: str, salience: float) -> dict[str, object]:
    return {
        "session_id": session_id,
        "outcome": outcome,
        "lessons": [{"path": "lessons/" + lesson, "salience": salience}],
    }


EVENTS = [
    published("p1", "productive", GIT, 1.0),
    published("p2", "noop", GIT, 0.0),
    published("p3", "unknown", QUOTE, 1.0),
    published("p4", "weird", QUOTE, 1.0),
]


def arms(ws: Workspace) -> dict[str, tuple[float, float, int]]:
    post = ws.posterior()
    return {arm: (post.alpha[i], post.beta[i], int(post.n[i])) for i, arm in enumerate(post.arm_ids)}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_ws(tmp_path, lessons={GIT: ["git"], QUOTE: ["quote"]}, events=EVENTS)


def test_default_mapping_fresh_fold(ws: Path) -> None:
    got = arms(Workspace(ws, use_cache=False))
    assert got[GIT] == pytest.approx((2.0, 2.0, 2))
    assert got[QUOTE] == pytest.approx((1.0, 1.0, 0))
    table = Workspace(ws, use_cache=False).session_table()
    assert [None if b != b else b for b in table.base.tolist()] == [1.0, 0.0, None, None]


def test_mapping_from_config_and_the_cached_path_agree(ws: Path) -> None:
    # cache_threshold=0: the parsed-log cache is written (and read) even for a tiny log
    assert arms(Workspace(ws, cache_threshold=0))[GIT] == pytest.approx((2.0, 2.0, 2))
    log = Workspace(ws).log
    assert isinstance(log, EventLog)
    cache = LogCache(log)
    assert cache.path.exists() and cache.load() is not None
    # noop = 0.5: p2 credits git 0.5 * 0.3 = 0.15 -> alpha 2.15, beta 1 + 0 + 0.85 = 1.85
    (ws / CONFIG_REL).parent.mkdir(parents=True, exist_ok=True)
    (ws / CONFIG_REL).write_text("[outcomes]\nnoop = 0.5\nweird = 1\n", encoding="utf-8")
    cached = Workspace(ws, cache_threshold=0)
    assert cached.refresh()
    got = arms(cached)
    # weird = 1: p4 credits quote 1 * 1 -> Beta(2, 1)
    assert got[GIT] == pytest.approx((2.15, 1.85, 2))
    assert got[QUOTE] == pytest.approx((2.0, 1.0, 1))
    assert arms(Workspace(ws, use_cache=False)) == pytest.approx(got)


def test_unknown_stays_pending_and_unmapped_strings_are_linted(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_plain(capsys, "sessions", "-w", str(ws), "--pending", "--json")
    assert code == 0, err
    assert [s["session_id"] for s in json.loads(out)["sessions"]] == ["p3", "p4"]
    code, out, _ = run_plain(capsys, "lint", "-w", str(ws), "--json")
    found = {f["code"]: f for f in json.loads(out)["findings"]}
    assert found["unmapped-outcomes"]["severity"] == "warning"
    assert found["unmapped-outcomes"]["items"] == [{"item": "weird", "reason": "1 session"}]
    shown = json.loads(run_plain(capsys, "show", "-w", str(ws), "p1", "--json")[1])
    assert (shown["outcome"], shown["base_reward"], shown["grader"]) == ("productive", 1.0, "imported")
    assert [(g["base_reward"], g["grader"]) for g in shown["grades"]] == [(1.0, "imported")]  # the outcome is its grade
    assert json.loads(run_plain(capsys, "show", "-w", str(ws), "p3", "--json")[1])["grades"] == []


def test_a_grade_overrides_the_outcome(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_plain(capsys, "grade", "-w", str(ws), "p1", "0.5")
    assert code == 0, err
    # git: p1 now 0.5 * 1 -> alpha 1 + 0.5 = 1.5, beta 1 + 0.5 + 1 = 2.5
    assert arms(Workspace(ws, use_cache=False))[GIT] == pytest.approx((1.5, 2.5, 2))


@pytest.mark.parametrize(
    ("table", "needle"),
    [
        ("[outcomes]\nunknown = 0.5\n", "always leaves a session pending"),
        ("[outcomes]\nnoop = 2\n", "must map to a number in [0, 1]"),
        ('[outcomes]\nnoop = "half"\n', "must map to a number in [0, 1]"),
        ("outcomes = 3\n", "[outcomes] must be a table"),
    ],
)
def test_bad_outcome_tables_are_refused(tmp_path: Path, table: str, needle: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(table, encoding="utf-8")
    with pytest.raises(ConfigError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        load_config(path)


def test_replay_write_keeps_the_outcomes_table(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (ws / CONFIG_REL).parent.mkdir(parents=True, exist_ok=True)
    (ws / CONFIG_REL).write_text('[outcomes]\nnoop = 0.25\n"needs review" = 0.5\n', encoding="utf-8")
    code, _, err = run_plain(capsys, "replay", "-w", str(ws), "--floor", "0.5", "--write")
    assert code == 0, err
    config = load_config(ws / CONFIG_REL)
    assert config.outcome_overrides == {"noop": 0.25, "needs review": 0.5}
    assert config.credit.floor == 0.5
