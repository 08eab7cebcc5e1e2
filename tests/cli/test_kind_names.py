"""A kind of work spelt two ways has one name in every command: the spelling most of ALL its sessions use,
pending ones included. `agreement` (and `lint`'s kinds) named a kind over every session while the estimates
(`loo`'s by-category effects, the joint policy's baselines) named it over the graded ones only: 13 pending
`code` sessions and 12 graded `Code` ones read `code` in `agreement` and `Code` in `loo`."""

from __future__ import annotations

import json
from pathlib import Path

from lesson_credit.core.workspace import Workspace
from tests.support.cli_run import run_cli
from tests.support.engine_helpers import fixed_clock, grade, make_workspace, session

LESSONS = {"a.md": (["alpha"], "active")}


def two_spellings(tmp_path: Path) -> Path:
    """12 graded `Code` sessions and 12 graded `ops` ones, alternating; a.md (+0.2) in every other session of
    each kind (6 with, 6 without: enough for a by-category effect); a person grades each, the judge 0.05 above
    them; then 13 pending `code` sessions (no reward yet)."""
    events: list[dict[str, object]] = []
    for i in range(24):
        kind, has = ("Code", "ops")[i % 2], (i // 2) % 2 == 0
        reward = 0.4 + 0.2 * has + 0.01 * (i % 5)
        events.append(session(f"s{i:02d}", None, {"a.md": 1.0} if has else {}, category=kind))
        events += [grade(f"s{i:02d}", reward), grade(f"s{i:02d}", reward + 0.05, "judge")]
    events += [session(f"p{i:02d}", None, {"a.md": 1.0}, category="code") for i in range(13)]
    return make_workspace(tmp_path, LESSONS, events)


def test_a_kind_has_one_name_in_agreement_loo_and_the_policy(tmp_path: Path) -> None:
    root = two_spellings(tmp_path)
    # by hand: the kind's sessions are 12 `Code` (graded) and 13 `code` (pending): `code`, the most of all 25
    code, out, err = run_cli("agreement", "--workspace", str(root), "--json", clock=fixed_clock)
    assert code == 0, err
    assert sorted(c["category"] for c in json.loads(out)["by_category"]) == ["code", "ops"]
    code, out, err = run_cli("loo", "--workspace", str(root), "--no-write", "--json", clock=fixed_clock)
    assert code == 0, err
    (a,) = [r for r in json.loads(out)["results"] if r["lesson"] == "a.md"]
    assert sorted(a["joint"]["by_category"]) == ["code", "ops"]  # was ["Code", "ops"]
    post = Workspace(root, clock=fixed_clock).joint_posterior()
    assert sorted(post.categories) == ["code", "ops"]
    assert Workspace(root, clock=fixed_clock).joint_fit().category_names == post.categories
