"""`loo`'s output grows with the lessons, not with the square of a group's size.

A chain makes every lesson one group: lesson j is injected in graded sessions 2j to 2j + 19 (at most ten lessons
a session), so neighbours share 18 of their 20 sessions (90%, linked) and the links chain all of them together.
Each member's reason listed every other member, and `effect` and `joint` each listed the whole group again, per
member: at 3,000 lessons `loo --json` printed 687 MB (39 kB a lesson). Now a reason names three members and
counts the rest, and the JSON lists a group's members once (`meta.groups`, docs/format.md §8); bytes per lesson
stay flat as the chain grows from 200 lessons to 800 (they grew fourfold: 16 bytes a member name, three times,
per member)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from lesson_credit.core.analysis.effects import loo_payload
from lesson_credit.core.analysis.switches import with_groups
from lesson_credit.core.workspace import Workspace
from tests.support.cli_run import run_cli
from tests.support.engine_helpers import fixed_clock, make_workspace, session

WIDTH = 20  # sessions a lesson is in
STEP = 2  # the next lesson starts this many sessions later


def name(j: int) -> str:
    return f"c/L{j:05d}.md"


def chain(tmp_path: Path, lessons: int) -> Path:
    rng = np.random.default_rng(0)
    events = []
    for i in range(STEP * (lessons - 1) + WIDTH):  # the last lesson's 20 sessions too
        injected = [name(j) for j in range(max(0, (i - WIDTH) // STEP + 1), min(lessons, i // STEP + 1))]
        reward = round(float(np.clip(0.5 + rng.normal(0.0, 0.1), 0.0, 1.0)), 4)
        events.append(session(f"s{i:05d}", reward, dict.fromkeys(injected, 0.5)))
    lessons_of = {name(j): ([f"kw{j}"], "active") for j in range(lessons)}
    return make_workspace(tmp_path, lessons_of, events, name=str(lessons))


def outputs(tmp_path: Path, lessons: int) -> tuple[dict[str, object], int, int]:
    """(the --json payload, its bytes, the text table's bytes) of `loo` on a chain of `lessons`."""
    root = chain(tmp_path, lessons)
    ws = Workspace(root, clock=fixed_clock)
    results, meta = ws.loo_run(write=False)
    payload = loo_payload(results, "now", 5, 20, **meta)
    code, text, err = run_cli("loo", "--workspace", str(root), "--no-write", clock=fixed_clock)
    assert code == 0, err
    return payload, len(json.dumps(payload).encode()), len(text.encode())


def test_a_chained_groups_output_grows_linearly_with_its_lessons(tmp_path: Path) -> None:
    small, small_json, small_text = outputs(tmp_path, 200)
    large, large_json, large_text = outputs(tmp_path, 800)
    # bytes per lesson: the old code's grew with the group (per member, its 800 names three times: about 4x)
    assert large_json / 800 < 1.25 * small_json / 200, (small_json, large_json)
    assert large_text / 800 < 1.25 * small_text / 200, (small_text, large_text)
    # every lesson is one group's member (a chain of 200, then of 800: the whole log), its members listed once
    for payload, lessons in ((small, 200), (large, 800)):
        rows = payload["results"]
        assert isinstance(rows, list) and len(rows) == lessons
        # each member lists the group's first 32 members and counts them all
        first = [name(j) for j in range(32)]
        assert all(row["effect"]["group"] == first and row["effect"]["group_size"] == lessons for row in rows)
        assert all(row["joint"]["group"] == first and row["joint"]["group_size"] == lessons for row in rows)
        meta = payload["meta"]
        assert isinstance(meta, dict) and meta["groups"] == {name(0): [name(j) for j in range(lessons)]}


def test_a_big_groups_reason_names_a_few_members_and_counts_the_rest(tmp_path: Path) -> None:
    payload, _, _ = outputs(tmp_path, 200)
    rows = payload["results"]
    assert isinstance(rows, list)
    middle = next(row for row in rows if row["lesson"] == name(100))
    reason = middle["joint"]["reason"]
    # the first three of the 199 others, then the count of the rest (199 - 3 = 196); lesson 100 is in sessions
    # 200-219, each with at least one of its neighbours (99 or 101): 20 of its 20
    assert reason.startswith(
        f"injected with another lesson of its group ({name(0)}, {name(1)}, {name(2)} and 196 more) "
        "in 20 of its 20 graded sessions (100%): one group"
    ), reason
    flags = middle["confound_reason"] or ""
    assert name(150) not in reason and name(150) not in flags


def test_the_lessons_grouped_with_a_timed_one_are_found_in_two_passes_however_long_the_chain() -> None:
    """`with_groups` (the ranking's rule: every lesson grouped with one identified only by time is ranked at the
    prior's 0) walked the links from the timed lesson, a pass over the log per link: 60 passes for this chain of
    60, ~100 for the 3,000 lessons above (a timed lesson every few dozen links). Arms 0-59 chain (arm j in sessions
    2j to 2j + 19, as above), arm 0 timed; arms 60 and 61 ride together in sessions 200-209, apart from the chain."""
    arms = [np.arange(j, j + 1).repeat(WIDTH) for j in range(60)] + [np.array([60] * 10), np.array([61] * 10)]
    rows = [np.arange(STEP * j, STEP * j + WIDTH) for j in range(60)] + [np.arange(200, 210)] * 2
    row, arm = np.concatenate(rows), np.concatenate(arms)
    passes = []

    def entries() -> Iterator[tuple[np.ndarray, np.ndarray]]:
        passes.append(1)
        early = row < 60  # two spans (sessions 0-59, then 60 on), each's sessions counted from its first
        return iter([(row[early], arm[early]), (row[~early] - 60, arm[~early])])

    timed = np.zeros(62, dtype=bool)
    timed[0] = True
    assert np.flatnonzero(with_groups(timed, entries)).tolist() == list(range(60))
    assert len(passes) == 2
