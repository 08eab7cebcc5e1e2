"""The randomized (dropout) estimate when epsilon changes over the log: each coin's epsilon is a stratum, the
strata's kept-minus-withheld differences are combined (core/analysis/stratified.py, docs/estimates.md "The
randomized estimate"); and which session a dropout line belongs to, the same for `loo` and a second `select`."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from lesson_credit.core.analysis.dropout import (
    Coin,
    DropoutLog,
    DropoutSession,
    randomized_effects,
    read_dropout_logs,
    session_coins,
)
from lesson_credit.core.workspace import Workspace
from tests.support.dropout_logs import LESSONS, A, B, C, gptme_line, write_logs
from tests.support.engine_helpers import fixed_clock, make_workspace, session


def to_id(raw: str) -> str:
    return raw.rsplit("lessons/", 1)[-1]


def world(
    seed: int, eps: tuple[float, float] = (0.1, 0.5), base: tuple[float, float] = (0.3, 0.7), n: int = 200
) -> list[tuple[str, float, float, bool]]:
    """(session, reward, A's epsilon, A kept) for n sessions: the first half at eps[0] and baseline base[0], the
    second at eps[1] and base[1]; A does nothing."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        late = i >= n // 2
        reward = float(np.clip(round(base[late] + rng.normal(0, 0.1), 3), 0.0, 1.0))
        epsilon = eps[late]
        out.append((f"s{i:03d}", reward, epsilon, bool(rng.random() >= epsilon)))
    return out


def by_hand(sessions: list[tuple[str, float, float, bool]]) -> tuple[list[float], float]:
    """Each epsilon's kept-minus-withheld difference, and their combination weighted by sessions."""
    diffs, weights = [], []
    for epsilon in sorted({e for _, _, e, _ in sessions}):
        kept = [r for _, r, e, k in sessions if e == epsilon and k]
        withheld = [r for _, r, e, k in sessions if e == epsilon and not k]
        diffs.append(sum(kept) / len(kept) - sum(withheld) / len(withheld))
        weights.append(len(kept) + len(withheld))
    return diffs, sum(d * w for d, w in zip(diffs, weights, strict=True)) / sum(weights)


def test_an_epsilon_raised_as_the_baseline_rose_credits_a_lesson_without_effect_with_nothing(tmp_path: Path) -> None:
    """gptme's auto-include withholds A with epsilon 0.1 for 100 sessions and 0.5 after, when the baseline moves
    from 0.3 to 0.7. Pooled, the withheld side is mostly late (high) sessions: -0.17 with p 0.000, the headline.
    Within each epsilon the difference is about 0; combined (100 and 100 sessions: half each) it is their mean,
    and its interval covers 0. Every session also has a second line (`select --dropout` at 0.3) keeping or
    withholding B after A's: A's stratum is its own coin's epsilon, not the session's last line's."""
    sessions = world(11)
    events, logs = [], {}
    for sid, reward, epsilon, kept in sessions:
        events.append(session(sid, reward, {C: 0.5, **({A: 0.5} if kept else {})}))
        second = gptme_line(sid, [B], [], eps=0.3) if int(sid[1:]) % 2 else gptme_line(sid, [], [B], eps=0.3)
        logs[sid] = [gptme_line(sid, [A] if kept else [], [] if kept else [A], eps=epsilon), second]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    write_logs(root, logs)
    kept_r = [r for _, r, _, k in sessions if k]
    withheld_r = [r for _, r, _, k in sessions if not k]
    pooled = sum(kept_r) / len(kept_r) - sum(withheld_r) / len(withheld_r)
    assert pooled < -0.15  # (the world bites: what pooling the epsilons read)
    diffs, combined = by_hand(sessions)
    assert all(abs(d) < 0.06 for d in diffs)  # (sd at 0.1: about 0.1 * sqrt(1/10 + 1/90) = 0.033)
    a = {r.path: r for r in Workspace(root, clock=fixed_clock).loo(write=False)}[A].randomized
    assert a is not None and a.estimate is not None and a.ci_low is not None and a.ci_high is not None
    assert a.estimate == pytest.approx(combined, abs=1e-12)
    assert a.ci_low < 0.0 < a.ci_high
    assert (a.n_kept, a.n_withheld, a.n_unused, a.strata) == (len(kept_r), len(withheld_r), 0, 2)
    assert a.p_value is not None and a.p_value > 0.05


def test_the_epsilons_differences_are_combined_with_their_sessions_as_weights_by_hand(tmp_path: Path) -> None:
    """At epsilon 0.3 A is kept in 0.8 0.6 and withheld in 0.7 0.5 (+0.1); at 0.5 kept in 0.4 0.2, withheld in
    0.3 0.1 0.2 (+0.1); at 0.9 kept in 0.9 0.9 and never withheld: that epsilon says nothing (2 unused sessions).
    Pooled, 0.5 - 0.36 = +0.14; combined 4/9 * 0.1 + 5/9 * 0.1 = +0.1."""
    rewards = {"k1": 0.8, "k2": 0.6, "w1": 0.7, "w2": 0.5, "k3": 0.4, "k4": 0.2, "w3": 0.3, "w4": 0.1, "w5": 0.2}
    rewards |= {"k5": 0.9, "k6": 0.9}
    epsilon = {"k1": 0.3, "k2": 0.3, "w1": 0.3, "w2": 0.3, "k5": 0.9, "k6": 0.9}
    sessions = {sid: DropoutSession(sid, {A: Coin(sid.startswith("k"), epsilon.get(sid, 0.5))}) for sid in rewards}
    rows = {sid: i for i, sid in enumerate(rewards)}
    base = np.array(list(rewards.values()))
    (a,) = randomized_effects(DropoutLog(sessions), rows.get, base).values()
    assert (a.n_kept, a.n_withheld, a.n_unused, a.strata) == (4, 5, 2, 2)
    assert a.estimate == pytest.approx(0.1, abs=1e-12)
    # The moderating variance is the rewards' spread within sessions of one epsilon: at 0.3 around 0.65, squares
    # 0.0225 + 0.0025 + 0.0025 + 0.0225 = 0.05 (3 df); at 0.5 around 0.24, 0.0256 + 0.0016 + 0.0036 + 0.0196 +
    # 0.0016 = 0.052 (4 df); at 0.9, 0 (1 df): 0.102 / 8 = 0.01275 (all 11 sessions' variance, 0.0849, would count
    # the levels' difference as spread). Each side of 2 has variance 0.02 (1 df), moderated (0.02 + 4 * 0.01275) / 5
    # = 0.0142 (5 df); the withheld side at 0.5 has 0.01 (2 df): (0.02 + 0.051) / 6 = 0.0118333 (6 df).
    # Parts w^2 v / n: (4/9)^2 * 0.0142 / 2 = 0.00140247 twice; (5/9)^2 * 0.0142 / 2 = 0.00219136;
    # (5/9)^2 * 0.0118333 / 3 = 0.00121742. Sum 0.00621372, se 0.0788271;
    # df = 0.00621372^2 / (2 * 0.00140247^2 / 5 + 0.00219136^2 / 5 + 0.00121742^2 / 6) = 19.361.
    half = stats.t.ppf(0.975, 19.361) * 0.0788271
    assert a.ci_low == pytest.approx(0.1 - half, rel=1e-4)
    assert a.ci_high == pytest.approx(0.1 + half, rel=1e-4)
    assert a.p_value == pytest.approx(2 * stats.t.sf(0.1 / 0.0788271, 19.361), rel=1e-3)


def simulate(eps: tuple[float, float], base: tuple[float, float], worlds: int = 200) -> tuple[float, float, float]:
    """(mean estimate, its standard error, share of intervals covering A's true 0) over seeded worlds."""
    estimates, covered = [], 0
    for seed in range(worlds):
        sessions = world(seed, eps, base)
        log = DropoutLog({sid: DropoutSession(sid, {A: Coin(kept, e)}) for sid, _, e, kept in sessions})
        rows = {sid: i for i, (sid, *_) in enumerate(sessions)}
        base_rewards = np.array([r for _, r, _, _ in sessions])
        a = randomized_effects(log, rows.get, base_rewards)[A]
        assert a.estimate is not None and a.ci_low is not None and a.ci_high is not None
        estimates.append(a.estimate)
        covered += a.ci_low <= 0.0 <= a.ci_high
    return float(np.mean(estimates)), float(np.std(estimates, ddof=1) / np.sqrt(worlds)), covered / worlds


def test_over_200_worlds_an_epsilon_change_with_the_baseline_leaves_the_estimate_unbiased_and_its_interval_honest() -> (
    None
):
    # Pooled, the estimate was about -0.17 in every world and no interval covered 0. 95% intervals cover 0 in
    # about 190 of 200 worlds (binomial sd 3): 180 to 198 is far from chance either way. (Moderated toward all the
    # sessions' variance, the baseline's move counted as spread, they covered it in all 200: too wide.)
    mean, se, coverage = simulate((0.1, 0.5), (0.3, 0.7))
    assert abs(mean) < 4 * se and abs(mean) < 0.01
    assert 0.9 <= coverage <= 0.99


def test_a_baseline_that_moves_under_a_constant_epsilon_leaves_the_estimate_unbiased() -> None:
    """Time does not matter beyond epsilon: with one epsilon each coin keeps A with the same probability early and
    late, so kept and withheld sessions are alike in when they ran; the baseline's move adds spread to both sides
    (the Welch variance carries it), no difference."""
    mean, se, coverage = simulate((0.3, 0.3), (0.3, 0.7))
    assert abs(mean) < 4 * se and abs(mean) < 0.01
    assert 0.9 <= coverage <= 0.99


def test_a_line_naming_another_session_is_no_coin_of_either_for_loo_and_select_alike(tmp_path: Path) -> None:
    """gptme writes each line to the file of the session id it names (`<session_id>.jsonl`), so a line in s001.jsonl
    naming s009 was moved or copied there. Before, `loo` read it as s009's first coin (s001.jsonl is read first):
    A withheld, though s009's own file, which a second `select` for s009 reads, keeps A first. Now it is skipped
    for both, and said."""
    folder = write_logs(
        tmp_path,
        {
            "s001": [gptme_line("s001", [B], []), gptme_line("s009", [], [A], eps=0.5)],
            "s009": [gptme_line("s009", [A], [], eps=0.5)],
        },
    )
    log = read_dropout_logs(folder, to_id)
    assert (log.sessions["s009"].kept, log.sessions["s009"].withheld) == (frozenset({A}), frozenset())
    assert session_coins(folder, "s009", to_id) == {A: Coin(True, 0.5)}
    assert (log.sessions["s001"].kept, log.sessions["s001"].withheld) == (frozenset({B}), frozenset())
    assert session_coins(folder, "s001", to_id) == {B: Coin(True, 0.3)}
    (problem,) = log.problems
    assert problem.startswith(f"{folder / 's001.jsonl'}: 1 line names another session than the file's (s009)")
    (folder / "s002.jsonl").write_text(json.dumps(gptme_line("s003", [A], [])) + "\n", encoding="utf-8")
    assert "s002" not in read_dropout_logs(folder, to_id).sessions  # nothing of its own: no session in the trial


def test_a_line_naming_its_file_in_another_unicode_form_is_the_files(tmp_path: Path) -> None:
    """A file system that stores names decomposed (macOS's HFS+) gives gptme's `café.jsonl` an NFD name while its
    lines name the session in the NFC form it was given: they are the file's, under the line's spelling (the event
    log's id)."""
    nfc, nfd = unicodedata.normalize("NFC", "café"), unicodedata.normalize("NFD", "café")
    folder = tmp_path / "lesson-dropout"
    folder.mkdir()
    (folder / f"{nfd}.jsonl").write_text(json.dumps(gptme_line(nfc, [A], [C])) + "\n", encoding="utf-8")
    log = read_dropout_logs(folder, to_id)
    assert log.problems == ()
    assert log.sessions[nfc].coins == {A: Coin(True, 0.3), C: Coin(False, 0.3)}
    assert session_coins(folder, nfd, to_id) == log.sessions[nfc].coins


def test_strata_of_one_side_only_give_no_estimate_even_with_no_minimum() -> None:
    """Two strata, each with treated units only or control units only: no stratum compares, so there is no
    estimate whatever the minimum asked (with none asked, the empty combination divided by zero)."""
    from lesson_credit.core.analysis.stratified import stratified_difference

    out = stratified_difference([([0.5, 0.7], []), ([], [0.4])], pooled_var=0.01, min_side=0)
    assert (out.estimate, out.p_value, out.strata) == (None, None, 0)
    assert (out.n_treated, out.n_control, out.n_unused) == (0, 0, 3)
