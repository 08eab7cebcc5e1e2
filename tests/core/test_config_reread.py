"""A workspace that stays open (the dashboard) follows config.toml: what `replay --write`, an editor or
another dashboard set there since it opened is what its numbers, and the bandit-state.json its next
write rewrites, are of. A config.toml that cannot be read any more keeps the settings read before and
says why, until it can. Its library is read again every few seconds."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.bandit import config as config_module
from lesson_credit.core.bandit.config import SETTLE_S
from lesson_credit.core.workspace import Workspace, base
from tests.support.engine_helpers import CONFIG_REL, lesson_text, make_workspace, session

STATE_REL = Path("state/lesson-thompson/bandit-state.json")
LESSONS = {"a.md": (["git"], "active"), "b.md": (["pytest"], "active")}
EVENTS = [
    session("s1", 1.0, {"a.md": 0.0, "b.md": 1.0}),
    session("s2", 0.0, {"a.md": 0.0}),
    session("s3", None, {"a.md": 1.0, "b.md": 1.0}),
]


def _arms(root: Path) -> dict[str, tuple[float, float]]:
    arms = json.loads((root / STATE_REL).read_text())["arms"]
    return {arm: (round(v["alpha"], 9), round(v["beta"], 9)) for arm, v in arms.items()}


def _table(ws: Workspace) -> dict[str, tuple[float, float]]:
    return {row.path: (round(row.alpha, 9), round(row.beta, 9)) for row in ws.lesson_table().rows}


def test_a_floor_set_in_config_toml_while_open_is_the_one_the_numbers_and_the_state_file_use(tmp_path: Path) -> None:
    """The dashboard opened at floor 0.3; `replay --floor 0.6 --write` then set 0.6. Its next grade
    rewrote bandit-state.json at 0.3 (gptme's selection read those numbers until the next `status`),
    and its views kept showing 0.3's numbers."""
    root = make_workspace(tmp_path, LESSONS, EVENTS, config="floor = 0.3\n")
    open_ws = Workspace(root)
    open_ws.refresh()
    (root / CONFIG_REL).write_text("floor = 0.6\n")
    open_ws.refresh()
    assert open_ws.settings.floor == 0.6
    open_ws.grade("s3", 1.0)
    # by hand, the seed rule (r = base * w, alpha += r, beta += 1 - r), w = 0.6 + 0.4 x salience (floor 0.6),
    # Beta(1, 1): a.md: s1 w 0.6 r 0.6 -> +0.6/+0.4; s2 w 0.6 r 0 -> +0/+1; s3 w 1 r 1 -> +1/+0:
    # alpha 2.6, beta 2.4 (at floor 0.3: alpha 2.3, beta 2.7); b.md: s1 and s3 +1/+0: alpha 3, beta 1
    assert _arms(root) == {"a.md": (2.6, 2.4), "b.md": (3.0, 1.0)}
    # the same numbers a workspace opened now folds (the second way)
    assert _table(Workspace(root)) == _arms(root) == _table(open_ws)


def test_an_outcome_mapping_set_while_open_scores_the_sessions_it_maps(tmp_path: Path) -> None:
    """`[outcomes]` maps gptme's outcome words to rewards; a mapping changed while the workspace is open
    is the one its numbers use (they kept the old one)."""
    record = {key: value for key, value in session("s1", None, {"a.md": 1.0}).items() if key != "base_reward"}
    events = [{**record, "outcome": "noop"}]  # the outcome counts where base_reward is absent
    root = make_workspace(tmp_path, LESSONS, events, config="[outcomes]\nnoop = 0.0\n")
    open_ws = Workspace(root)
    assert _table(open_ws)["a.md"] == (1.0, 2.0)  # by hand: noop is 0, salience 1: +0/+1 on Beta(1, 1)
    (root / CONFIG_REL).write_text("[outcomes]\nnoop = 0.5\n")
    open_ws.refresh()
    assert _table(open_ws)["a.md"] == (1.5, 1.5)  # by hand: reward 0.5: +0.5/+0.5


def test_a_config_toml_broken_while_open_keeps_the_settings_read_before_and_says_why(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, LESSONS, EVENTS, config="floor = 0.6\n")
    open_ws = Workspace(root)
    open_ws.refresh()
    (root / CONFIG_REL).write_text("floor = [\n")  # an editor's half-saved file
    assert open_ws.refresh()  # something to say
    assert not open_ws.refresh()  # said
    assert open_ws.settings.floor == 0.6
    problem = open_ws.config_problem
    assert problem is not None and "config.toml" in problem and "\n" not in problem
    assert problem.endswith("the settings read before stay in force")
    (root / CONFIG_REL).write_text("floor = 0.2\n")
    assert open_ws.refresh()
    assert open_ws.settings.floor == 0.2 and open_ws.config_problem is None


def test_a_config_toml_read_mid_save_is_not_taken_for_the_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editor that saves in place truncates the file, then writes it: a read between the two sees an
    empty config.toml, a valid one (the defaults). The open workspace folded at floor 0.3 for a poll
    (and a grade then would have rewritten bandit-state.json at it)."""
    root = make_workspace(tmp_path, LESSONS, EVENTS, config="floor = 0.6\n")
    open_ws = Workspace(root)
    open_ws.refresh()
    saved = "floor = 0.6\n# the floor we chose\n"
    (root / CONFIG_REL).write_text(saved)
    reads = iter(["", saved])  # the first read lands between the truncation and the write

    def read_mid_save(path: Path) -> str | None:
        return next(reads, saved)

    monkeypatch.setattr(base, "read_config_text", read_mid_save)
    open_ws.refresh()
    assert open_ws.settings.floor == 0.6
    assert open_ws.config_problem is None
    # by hand at floor 0.6 (as in the first test, before the grade of s3): a.md alpha 1.6, beta 2.4
    assert _table(open_ws)["a.md"] == (1.6, 2.4)


def test_a_config_toml_read_empty_at_opening_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command (a hook's grade) that opens the workspace between an editor's truncation and its write
    read the empty file, the defaults, and folded (and rewrote bandit-state.json) at floor 0.3."""
    root = make_workspace(tmp_path, LESSONS, EVENTS, config="floor = 0.6\n")
    reads = iter(["", "floor = 0.6\n"])
    monkeypatch.setattr(config_module, "read_config_text", lambda path: next(reads))
    ws = Workspace(root)
    assert ws.settings.floor == 0.6
    assert _table(ws)["a.md"] == (1.6, 2.4)  # by hand, as in the test above


def test_a_config_toml_that_stays_broken_is_not_read_twice_at_every_poll(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The two reads 20 ms apart are for a changed text: a broken file left as it is cost every
    dashboard poll a 20 ms pause (and a parse) for as long as it stayed broken."""
    root = make_workspace(tmp_path, LESSONS, EVENTS, config="floor = 0.6\n")
    open_ws = Workspace(root)
    (root / CONFIG_REL).write_text("floor = [\n")
    pauses: list[float] = []
    monkeypatch.setattr(time, "sleep", pauses.append)
    assert open_ws.refresh()  # something to say
    assert pauses == [SETTLE_S]
    for _ in range(3):
        assert not open_ws.refresh()
    assert pauses == [SETTLE_S]  # not once per poll
    assert open_ws.settings.floor == 0.6 and open_ws.config_problem is not None
    (root / CONFIG_REL).write_text("floor = 0.2\n")
    assert open_ws.refresh()
    assert open_ws.settings.floor == 0.2 and open_ws.config_problem is None
    assert pauses == [SETTLE_S] * 2


def test_an_unchanged_config_toml_changes_nothing(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, LESSONS, EVENTS, config="floor = 0.6\n")
    open_ws = Workspace(root)
    open_ws.refresh()
    version = open_ws.version
    (root / CONFIG_REL).write_text("floor = 0.6\n")  # rewritten with the same text
    assert not open_ws.refresh()
    assert open_ws.version == version


def test_a_library_kept_open_is_read_again_every_few_seconds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A lesson written while the dashboard was open never showed (nor one archived, nor a file broken)
    until it was opened again: the workspace kept the library it read first."""
    from lesson_credit.core.workspace import base

    root = make_workspace(tmp_path, LESSONS, EVENTS)
    open_ws = Workspace(root)
    assert [row.path for row in open_ws.lesson_table().rows if row.n == 0] == []
    (root / "lessons" / "c.md").write_text(lesson_text(["docker"], "active", title="Lesson c.md"))
    assert not open_ws.refresh()  # read a moment ago: not again yet
    monkeypatch.setattr(base, "LIBRARY_RECHECK_S", 0.0, raising=False)
    assert open_ws.refresh()
    assert [row.path for row in open_ws.lesson_table().rows if row.n == 0] == ["c.md"]
    assert not open_ws.refresh()  # read again, the same: nothing changed


def test_a_library_slow_to_read_again_is_read_again_less_often(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Read again every 5 s, a library of 30,000 lessons (0.5-0.7 s a reread, its cache a stat per file)
    kept the dashboard's workspace busy a tenth of the time, and a view asked for meanwhile waited for
    it. A reread that took d seconds is the last for at least 50 d."""
    import time

    from lesson_credit.core.library.lessons import Library, load_library
    from lesson_credit.core.workspace import base

    reads: list[float] = []

    def slow_load(*args: Any, **kwargs: Any) -> Library:
        reads.append(time.monotonic())
        time.sleep(0.2)  # a reread of 0.2 s: the next one no sooner than 10 s later
        return load_library(*args, **kwargs)

    root = make_workspace(tmp_path, LESSONS, EVENTS)
    open_ws = Workspace(root)
    open_ws.lesson_table()
    monkeypatch.setattr(base, "LIBRARY_RECHECK_S", 0.1, raising=False)
    monkeypatch.setattr(base, "load_library", slow_load)
    time.sleep(0.15)
    open_ws.refresh()  # 0.15 s after the first read: read again (it took 0.2 s)
    assert len(reads) == 1
    time.sleep(0.15)
    open_ws.refresh()  # 0.15 s later: more than LIBRARY_RECHECK_S, less than 50 x 0.2 s
    assert len(reads) == 1
    (root / "lessons" / "c.md").write_text(lesson_text(["docker"], "active", title="Lesson c.md"))
    open_ws.library(reload=True)  # a read asked for is made whatever the last one cost
    assert len(reads) == 2
