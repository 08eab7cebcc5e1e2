"""The propensity a `select` logs when the session's dropout log already decided some coins (a hook run
twice, or gptme's auto-include before our select): P(injected) = P(chosen) * (1 - epsilon), with the
epsilon of the trial that flipped the lesson's coin, not the epsilon of this select."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.workspace import Workspace
from tests.support.cli_run import run_cli
from tests.support.dropout_logs import LESSONS, A, B, C, gptme_line, write_logs
from tests.support.engine_helpers import fixed_clock, make_workspace

DROPOUT = Path("state") / "lesson-dropout"


def _select(root: Path, context: Path, sid: str, seed: int, *extra: str) -> dict[str, Any]:
    args = ("-w", str(root), "--context", str(context), "--session-id", sid, "--seed", str(seed), "--json")
    code, out, err = run_cli("select", *args, *extra)
    assert code == 0, err
    payload: dict[str, Any] = json.loads(out)
    return payload


def _logged_propensity(root: Path, sid: str) -> dict[str, float]:
    """The propensities of the session's latest selection event in the log."""
    log = root / "state" / "lesson-thompson" / "sessions.jsonl"
    events = [json.loads(line) for line in log.read_text().splitlines()]
    latest: dict[str, float] = [e for e in events if e.get("type") == "selection" and e["session_id"] == sid][-1][
        "propensity"
    ]
    return latest


def _context(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_second_select_logs_each_lessons_propensity_at_the_epsilon_of_its_coin(tmp_path: Path) -> None:
    """`select --dropout 0.5` for "alpha beta" (A and B), then `select --dropout 0.1` for "alpha beta gamma"
    (A, B and C). k is 10, above the number of candidates, so every candidate is chosen: P(chosen) = 1. A and B
    keep the coins flipped at 0.5: P(injected) = 1 * (1 - 0.5) = 0.5; C's coin is the second trial's:
    1 * (1 - 0.1) = 0.9. On the old code A and B were logged at 0.9 too. The second trial's line names only
    the coin it flipped (C), so the epsilon of every line is the epsilon of the coins on it."""
    root = make_workspace(tmp_path, lessons=LESSONS)
    first = _select(root, _context(tmp_path, "ab.txt", "alpha beta"), "x", 1, "--dropout", "0.5")
    assert first["propensity"] == {A: 0.5, B: 0.5}
    second = _select(root, _context(tmp_path, "abc.txt", "alpha beta gamma"), "x", 7, "--dropout", "0.1")
    assert second["propensity"] == pytest.approx({A: 0.5, B: 0.5, C: 0.9})
    assert _logged_propensity(root, "x") == pytest.approx({A: 0.5, B: 0.5, C: 0.9})
    lines = [json.loads(line) for line in (root / DROPOUT / "x.jsonl").read_text().splitlines()]
    assert [line["epsilon"] for line in lines] == [0.5, 0.1]
    assert {e["path"] for e in lines[0]["matched"] + lines[0]["withheld"]} == {A, B}
    assert {e["path"] for e in lines[1]["matched"] + lines[1]["withheld"]} == {C}
    # A and B as the first trial decided them, whatever the second drew
    assert set(second["selected"]) & {A, B} == set(first["selected"])
    assert set(second["withheld"]) & {A, B} == set(first["withheld"])


def test_a_select_without_dropout_after_a_trial_logs_the_trials_epsilon_for_its_coins(tmp_path: Path) -> None:
    """`select --dropout 0.5` for "alpha" (A), then `select` (no trial) for "alpha beta". A's coin was flipped
    at 0.5: P(injected) = 1 * (1 - 0.5) = 0.5 (the old code logged 1.0: no trial of its own); B has no coin,
    injected whenever chosen: 1.0. No trial line is added. The record then stores A's 0.5 when A was kept,
    and the estimates read it: the candidacy of (y, A) is 0.5 (the old code logged 1.0)."""
    root = make_workspace(tmp_path, lessons=LESSONS)
    first = _select(root, _context(tmp_path, "a.txt", "alpha"), "y", 2, "--dropout", "0.5")
    assert first["selected"] == [A]  # (seed 2 keeps it: the record injects it, so A is an arm of the log)
    before = (root / DROPOUT / "y.jsonl").read_bytes()
    second = _select(root, _context(tmp_path, "ab.txt", "alpha beta"), "y", 5)
    assert set(second["selected"]) == {A, B}
    assert second["propensity"] == {A: 0.5, B: 1.0}
    assert _logged_propensity(root, "y") == {A: 0.5, B: 1.0}
    assert (root / DROPOUT / "y.jsonl").read_bytes() == before
    journal = _context(root, "j.md", "alpha beta done")
    code, _, err = run_cli(
        "record", "-w", str(root), "--session-id", "y", "--journal", str(journal), "--lessons", *second["selected"],
        "--reward", "0.7",
    )  # fmt: skip
    assert code == 0, err
    ws = Workspace(root, clock=fixed_clock)
    found = {ws.data().arm_ids[c.arm]: c.propensity for c in ws.candidacies()}
    assert found == {A: 0.5, B: 1.0}


def test_a_trial_line_without_a_usable_epsilon_leaves_its_coins_propensity_unknown(tmp_path: Path) -> None:
    """gptme's line for the session names A withheld but carries no epsilon (or one outside [0, 1]): A keeps
    that coin (withheld), and with no epsilon to weigh it by, no propensity is logged for A (an IPW estimate
    leaves the pair out rather than use a wrong weight); B, flipped by this select at 0.2, gets 0.8."""
    root = make_workspace(tmp_path, lessons=LESSONS)
    for sid, eps in (("n1", None), ("n2", 1.5), ("n3", True)):
        line = gptme_line(sid, [], [A])
        line["epsilon"] = eps
        write_logs(root, {sid: [line]})
        second = _select(root, _context(tmp_path, "ab.txt", "alpha beta"), sid, 3, "--dropout", "0.2")
        assert A in second["withheld"]
        assert second["propensity"] == pytest.approx({B: 0.8})


def test_ipw_weighs_a_hook_run_twice_by_the_epsilon_of_each_coin(tmp_path: Path) -> None:
    """loo's propensity-weighted lift of A over ten graded sessions where A was a candidate (k 10, one candidate:
    P(chosen) = 1):
    - t1..t3: gptme's auto-include kept A at epsilon 0.5, then `select --dropout 0.2`: p = 0.5 (old: 0.8);
      rewards 0.9;
    - t4, t5: `select` alone (no trial): p = 1, clipped to 0.99; rewards 0.3;
    - u1..u5: gptme withheld A at 0.5, then `select --dropout 0.2`: p = 0.5, not injected; rewards 0.5.
    Hajek, by hand: mu1 = (3 * 0.9 / 0.5 + 2 * 0.3 / 0.99) / (3 / 0.5 + 2 / 0.99) = 6.006061 / 8.020202 =
    0.748866; mu0 = 0.5 (one weight); lift 0.248866 (the old code's weights, 1 / 0.8, gave 0.189930)."""
    root = make_workspace(tmp_path, lessons=LESSONS)
    write_logs(root, {f"t{i}": [gptme_line(f"t{i}", [A], [], eps=0.5)] for i in (1, 2, 3)})
    write_logs(root, {f"u{i}": [gptme_line(f"u{i}", [], [A], eps=0.5)] for i in range(1, 6)})
    context, journal = _context(tmp_path, "a.txt", "alpha"), _context(root, "j.md", "alpha done")
    treated = [(f"t{i}", 0.9, ("--dropout", "0.2")) for i in (1, 2, 3)] + [(f"t{i}", 0.3, ()) for i in (4, 5)]
    untreated = [(f"u{i}", 0.5, ("--dropout", "0.2")) for i in range(1, 6)]
    plan = [step for pair in zip(treated, untreated, strict=True) for step in pair]  # (not told apart by time)
    for n, (sid, reward, extra) in enumerate(plan):
        chosen = _select(root, context, sid, n, *extra)
        assert chosen["selected"] == ([] if sid.startswith("u") else [A])
        args = ("-w", str(root), "--session-id", sid, "--journal", str(journal), "--reward", str(reward))
        code, _, err = run_cli("record", *args, "--lessons", *chosen["selected"])
        assert code == 0, err
    code, out, err = run_cli("loo", "-w", str(root), "--json", "--no-write")
    assert code == 0, err
    row = next(r for r in json.loads(out)["results"] if r["lesson"] == A)
    assert (row["n_ipw_treated"], row["n_ipw_untreated"]) == (5, 5)
    assert row["delta_ipw"] == pytest.approx(0.748866 - 0.5, abs=1e-6)


def test_an_offline_select_after_a_trial_weighs_its_coins_by_the_trials_epsilon(tmp_path: Path) -> None:
    """`select --offline-ok` (no trial of its own) for a session whose first select flipped A, B and C at 0.3:
    every lesson is chosen (k 3 of 3 candidates, P(chosen) = 1), so each P(injected) = 1 * (1 - 0.3) = 0.7
    (the old code printed 1.0, as if no coin had been flipped)."""
    from lesson_credit.core.offline import select_offline

    ws = Workspace(make_workspace(tmp_path, lessons=LESSONS), clock=fixed_clock)
    ws.select("alpha beta gamma", k=3, seed=4, session_id="o", dropout=0.3)
    offline = select_offline(ws, "alpha beta gamma", k=3, seed=9, session_id="o")
    assert offline.propensity == pytest.approx({A: 0.7, B: 0.7, C: 0.7})
