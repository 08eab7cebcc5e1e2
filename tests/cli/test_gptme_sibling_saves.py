"""Two gptme processes saving the workspace's own bandit-state.json from the same load (docs/format.md §7, *Two
saves of one load*). gptme-sessions holds a Bandit loaded at a session's start and saves it at its end, so two
overlapping agent sessions each save a file grown from the one file they loaded: P2 loads, P1 updates and saves, our
command logs P1's session and rewrites the file, P2 saves (grown from what it loaded, not from P1's save). Each save
is written as gptme-sessions' `Bandit.save` writes it (`json.dumps(data, indent=2) + "\\n"`, its own keys, each arm
as `asdict(BanditArm)`, every update stamped with its clock's aware isoformat to the microsecond)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_run import run
from tests.support.engine_helpers import BASIC_JOURNAL, BASIC_LESSONS, LOG_REL, STATE_REL, make_workspace, session

GIT, QUOTE, PLAIN = "tools/git.md", "tools/quote.md", "workflow/plain.md"


@pytest.fixture
def ws(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    events = [session("s1", 0.8, {GIT: 1.0, QUOTE: 1.0})]
    root = make_workspace(tmp_path, BASIC_LESSONS, events=events, journals={"j.txt": BASIC_JOURNAL})
    ok(capsys, "grade", "s1", "0.9", "--workspace", str(root))
    # salience 1 -> w 1, seed reward 0.9: git and quote each Beta(1.9, 1.1), n 1, 1 reward; 1 session
    assert arm(root, GIT) == arm(root, QUOTE) == pytest.approx((1.9, 1.1, 1, 1))
    return root


def ok(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, _, err = run(capsys, *args)
    assert code == 0, err
    return err


def load(root: Path) -> dict[str, Any]:
    """What gptme-sessions' `Bandit._load_state` keeps of the file (its own keys; the rest is dropped at save)."""
    data: dict[str, Any] = json.loads((root / STATE_REL).read_text())
    arms = {key: {name: arm[name] for name in ARM_KEYS} for key, arm in data["arms"].items()}
    return {"arms": arms, "total_sessions": data["total_sessions"], "created": data["created"],
            "last_updated": data["last_updated"]}  # fmt: skip


ARM_KEYS = ("arm_id", "alpha", "beta", "total_selections", "total_rewards", "last_updated")


def update_and_save(root: Path, held: dict[str, Any], reward: float, keys: list[str], now: str) -> dict[str, Any]:
    """gptme's `Bandit.update(keys, reward)` on what it holds, then `save`: per arm alpha + r, beta + 1 - r, one
    selection, a reward when r > 0.5, stamped `now`; total_sessions + 1, the file's last_updated `now`."""
    state = copy.deepcopy(held)
    for key in keys:
        arm = state["arms"].setdefault(key, {"arm_id": key, "alpha": 1.0, "beta": 1.0, "total_selections": 0,
                                             "total_rewards": 0, "last_updated": ""})  # fmt: skip
        arm["alpha"] += reward
        arm["beta"] += 1.0 - reward
        arm["total_selections"] += 1
        arm["total_rewards"] += int(reward > 0.5)
        arm["last_updated"] = now
    state["total_sessions"] += 1
    state["last_updated"] = now
    (root / STATE_REL).write_text(json.dumps(state, indent=2) + "\n")
    return state


def arm(root: Path, key: str) -> tuple[float, float, int, int]:
    entry = json.loads((root / STATE_REL).read_text())["arms"][key]
    return entry["alpha"], entry["beta"], entry["total_selections"], entry["total_rewards"]


def rows(capsys: pytest.CaptureFixture[str], root: Path) -> dict[str, tuple[float, float, int]]:
    code, out, err = run(capsys, "status", "--workspace", str(root), "--json")
    assert code == 0, err
    return {r["path"]: (r["alpha"], r["beta"], r["n"]) for r in json.loads(out)["lessons"] if r["n"]}


def near(want: dict[str, tuple[float, float, int]]) -> Any:
    """Rows as `rows` gives them, each number approximately."""

    class Near:
        def __eq__(self, got: object) -> bool:
            return (
                isinstance(got, dict)
                and got.keys() == want.keys()
                and all(got[key] == pytest.approx(value) for key, value in want.items())
            )

        def __repr__(self) -> str:
            return repr(want)

    return Near()


def sessions(root: Path) -> int:
    count: int = json.loads((root / STATE_REL).read_text())["total_sessions"]
    return count


def increments(root: Path) -> list[dict[str, Any]]:
    return [e for e in map(json.loads, (root / LOG_REL).read_text().splitlines()) if e.get("increments")]


T1, T2, T3, T4 = (f"2026-12-07T13:0{i}:00.00000{i}+00:00" for i in range(1, 5))


def test_a_second_process_saving_the_same_arm_from_the_same_load_is_logged(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """F1: P2 loads; P1 updates git by 1.0 and saves; `status` logs it and rewrites; P2 updates git by 1.0 from what
    it loaded and saves: git Beta(2.9, 1.1) n 2 in it, P1's numbers under another stamp. It was taken for nothing new.
    Right: git 1.9 + 1 + 1 = 2.9 + 1 = 3.9, beta 1.1, n 3; 3 sessions; two increments events."""
    held = load(ws)
    update_and_save(ws, load(ws), 1.0, [GIT], T1)
    ok(capsys, "status", "--workspace", str(ws))
    update_and_save(ws, held, 1.0, [GIT], T2)
    ok(capsys, "status", "--workspace", str(ws))
    assert rows(capsys, ws)[GIT] == pytest.approx((3.9, 1.1, 3))
    assert arm(ws, GIT) == pytest.approx((3.9, 1.1, 3, 3)) and sessions(ws) == 3
    assert len(increments(ws)) == 2
    assert rows(capsys, ws)[QUOTE] == pytest.approx((1.9, 1.1, 1))


def test_a_second_process_saving_another_arm_from_the_same_load_is_logged_and_so_is_the_next(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """F2: as above, P2 updating quote by 0.0 (its git as loaded, below P1's save): the file was kept for good ("git
    alpha went from 2.9 to 1.9"), and every later gptme session there out of the log. Right: git 1.9 + 1 = 2.9, n 2;
    quote 1.9, 1.1 + 1 = 2.1, n 2; 3 sessions; then gptme's next session (plain, 1.0, from the file rewritten):
    plain Beta(2, 1) n 1, 4 sessions."""
    held = load(ws)
    update_and_save(ws, load(ws), 1.0, [GIT], T1)
    ok(capsys, "status", "--workspace", str(ws))
    update_and_save(ws, held, 0.0, [QUOTE], T2)
    err = ok(capsys, "status", "--workspace", str(ws))
    assert "left as it is" not in err, err
    assert rows(capsys, ws) == near({GIT: (2.9, 1.1, 2), QUOTE: (1.9, 2.1, 2)})
    assert sessions(ws) == 3
    update_and_save(ws, load(ws), 1.0, [PLAIN], T3)
    ok(capsys, "status", "--workspace", str(ws))
    assert rows(capsys, ws) == near({GIT: (2.9, 1.1, 2), QUOTE: (1.9, 2.1, 2), PLAIN: (2.0, 1.0, 1)})
    assert sessions(ws) == 4 and len(increments(ws)) == 3


def test_three_saves_of_one_load_each_logged_once(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """P2 and P3 load; P1 saves git +1.0 (logged, rewritten); P2 saves quote +0.0 (logged, rewritten); P3 saves git
    +0.0 and plain +1.0. git 1.9 + 1 = 2.9, beta 1.1 + 1 = 2.1, n 3; quote (1.9, 2.1) n 2; plain (2, 1) n 1; 4
    sessions; nothing twice, whatever order the saves came in."""
    p2, p3 = load(ws), load(ws)
    update_and_save(ws, load(ws), 1.0, [GIT], T1)
    ok(capsys, "status", "--workspace", str(ws))
    update_and_save(ws, p2, 0.0, [QUOTE], T2)
    ok(capsys, "status", "--workspace", str(ws))
    update_and_save(ws, p3, 0.0, [GIT, PLAIN], T3)
    ok(capsys, "status", "--workspace", str(ws))
    # (plain took 0.0 too: one update of gptme's gives every arm it names the one reward)
    assert rows(capsys, ws) == near({GIT: (2.9, 2.1, 3), QUOTE: (1.9, 2.1, 2), PLAIN: (1.0, 2.0, 1)})
    assert sessions(ws) == 4 and len(increments(ws)) == 3


def test_a_process_that_loaded_the_logged_save_is_not_taken_for_a_second_process(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """P1 saves git +1.0; P3 loads that save; `status` logs P1 and rewrites; P3 saves quote +1.0 (git as P1 saved
    it, P1's stamp). Only P3's session is logged: git (2.9, 1.1) n 2, quote (2.9, 1.1) n 2, 3 sessions."""
    update_and_save(ws, load(ws), 1.0, [GIT], T1)
    p3 = load(ws)
    ok(capsys, "status", "--workspace", str(ws))
    update_and_save(ws, p3, 1.0, [QUOTE], T2)
    ok(capsys, "status", "--workspace", str(ws))
    assert rows(capsys, ws) == near({GIT: (2.9, 1.1, 2), QUOTE: (2.9, 1.1, 2)})
    assert sessions(ws) == 3 and len(increments(ws)) == 2


def test_a_held_prune_from_the_earlier_load_loses_nothing(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """a9: P2 loads; P1 saves git +1.0 (logged, rewritten); P2 runs gptme's `prune` (its defaults: it drops arms
    never selected or stamped over 90 days ago; none here) and saves what it loaded. The file was kept for good (git
    below P1's save). Right: nothing to log, the file written again from the log (git (2.9, 1.1) n 2, 2 sessions);
    gptme's next session (quote +1.0) logged: quote (2.9, 1.1) n 2, 3 sessions."""
    held = load(ws)
    update_and_save(ws, load(ws), 1.0, [GIT], T1)
    ok(capsys, "status", "--workspace", str(ws))
    (ws / STATE_REL).write_text(json.dumps(held, indent=2) + "\n")  # (prune: nothing stale, saved as loaded)
    err = ok(capsys, "status", "--workspace", str(ws))
    assert "left as it is" not in err, err
    assert arm(ws, GIT) == pytest.approx((2.9, 1.1, 2, 2)) and sessions(ws) == 2
    update_and_save(ws, load(ws), 1.0, [QUOTE], T2)
    ok(capsys, "status", "--workspace", str(ws))
    assert rows(capsys, ws) == near({GIT: (2.9, 1.1, 2), QUOTE: (2.9, 1.1, 2)})
    assert sessions(ws) == 3


def test_saving_again_and_a_second_process_of_two_sessions_each_logged_once(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """P2 loads; P1 saves git +1.0 and quote +1.0 (logged, rewritten), then saves again from what it holds, git +1.0
    (its save plus one update, as gptme saving again: only that session logged): git (3.9, 1.1) n 3, quote (2.9,
    1.1) n 2, 3 sessions. Then P2 saves two sessions of git +1.0 from the first load (quote as loaded, below P1's
    save; git at P1's numbers under another stamp): grown from neither of P1's saves, so over the file we wrote:
    git +2, 5.9, 1.1, n 5; quote as logged; 5 sessions."""
    held = load(ws)
    p1 = update_and_save(ws, load(ws), 1.0, [GIT, QUOTE], T1)
    ok(capsys, "status", "--workspace", str(ws))
    update_and_save(ws, p1, 1.0, [GIT], T2)
    ok(capsys, "status", "--workspace", str(ws))
    assert rows(capsys, ws) == near({GIT: (3.9, 1.1, 3), QUOTE: (2.9, 1.1, 2)})
    assert sessions(ws) == 3
    p2 = update_and_save(ws, held, 1.0, [GIT], T3)  # (gptme's update saves each time: the last save counts)
    update_and_save(ws, p2, 1.0, [GIT], T4)
    assert arm(ws, GIT) == pytest.approx((3.9, 1.1, 3, 3))  # (P1's numbers, under another stamp)
    ok(capsys, "status", "--workspace", str(ws))
    assert rows(capsys, ws) == near({GIT: (5.9, 1.1, 5), QUOTE: (2.9, 1.1, 2)})
    assert sessions(ws) == 5 and len(increments(ws)) == 3


def test_a_save_that_may_hold_a_logged_update_or_not_is_refused_in_one_line(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """P2 and P3 load; P1 saves git +1.0 (logged, rewritten); P2 saves quote +1.0 (logged, rewritten): git (2.9,
    1.1) n 2, quote (2.9, 1.1) n 2, 3 sessions. P3 saves git twice by 1.0: git Beta(3.9, 1.1) n 3, quote as loaded.
    That is P1's save plus one session (P1's save left quote as loaded too) or the load plus two: one session or
    two, which the numbers cannot tell. Left as it is with one line naming git, nothing logged."""
    p2, p3 = load(ws), load(ws)
    update_and_save(ws, load(ws), 1.0, [GIT], T1)
    ok(capsys, "status", "--workspace", str(ws))
    update_and_save(ws, p2, 1.0, [QUOTE], T2)
    ok(capsys, "status", "--workspace", str(ws))
    assert rows(capsys, ws) == near({GIT: (2.9, 1.1, 2), QUOTE: (2.9, 1.1, 2)}) and sessions(ws) == 3
    log = (ws / LOG_REL).read_bytes()
    update_and_save(ws, update_and_save(ws, p3, 1.0, [GIT], T3), 1.0, [GIT], T4)
    before = (ws / STATE_REL).read_bytes()
    err = ok(capsys, "status", "--workspace", str(ws))
    assert err.count("\n") == 1 and "left as it is" in err and f"{GIT} may hold the update" in err, err
    assert (ws / STATE_REL).read_bytes() == before and (ws / LOG_REL).read_bytes() == log


def test_a_save_that_may_hold_a_logged_update_or_not_says_what_to_do_and_doing_it_loses_no_later_session(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As above: P3's save of git twice by 1.0 (Beta(3.9, 1.1) n 3) is P1's save plus one session or the load plus
    two. The warning, `import-gptme`'s refusal and `lint` say so and what to do: gptme's sessions saved to the file
    after it are logged over it (P4's plain +1.0 here: Beta(2, 1) n 1), but the log's own no longer reach it, so
    replace it, the sooner the better. Done (the export), the file holds the log's git (2.9, 1.1) n 2, quote (2.9,
    1.1) n 2, plain (2, 1) n 1 (P3's one or two sessions lost, none twice) and 4 sessions (the file's 1 + P3's 2 + P4's
    1, the log's s1, P1, P2, P4), and gptme's next session (quote +1.0, from that file) is logged: quote (3.9, 1.1)
    n 3, 5 sessions."""
    p2, p3 = load(ws), load(ws)
    update_and_save(ws, load(ws), 1.0, [GIT], T1)
    ok(capsys, "status", "--workspace", str(ws))
    update_and_save(ws, p2, 1.0, [QUOTE], T2)
    ok(capsys, "status", "--workspace", str(ws))
    update_and_save(ws, update_and_save(ws, p3, 1.0, [GIT], T3), 1.0, [GIT], T4)
    remedy = "replace it with the log's posteriors (`lesson-credit export-gptme` onto it, or delete it"
    later = "from now on are logged over it as it is, but the log's own no longer reach it"
    err = ok(capsys, "status", "--workspace", str(ws))
    assert f"{GIT} may hold the update" in err and later in err and remedy in err, err
    code, out, err = run(capsys, "import-gptme", str(ws / STATE_REL), "--workspace", str(ws))
    assert (code, out) == (1, "") and err.count("\n") == 1 and remedy in err and "no copy" not in err, err
    update_and_save(ws, load(ws), 1.0, [PLAIN], "2026-12-07T13:05:00.000005+00:00")  # P4, from P3's save
    err = ok(capsys, "status", "--workspace", str(ws))
    assert remedy in err and len(increments(ws)) == 3, err
    _, out, _ = run(capsys, "lint", "--workspace", str(ws))  # (its advice as the warning's, not "would lose it")
    assert "replace the file with the log's posteriors" in out and "would lose that update" not in out, out
    ok(capsys, "export-gptme", str(ws / STATE_REL), "--workspace", str(ws))
    assert rows(capsys, ws) == near({GIT: (2.9, 1.1, 2), QUOTE: (2.9, 1.1, 2), PLAIN: (2.0, 1.0, 1)})
    assert sessions(ws) == 4
    update_and_save(ws, load(ws), 1.0, [QUOTE], "2026-12-07T13:06:00.000006+00:00")
    assert "left as it is" not in ok(capsys, "status", "--workspace", str(ws))
    assert rows(capsys, ws) == near({GIT: (2.9, 1.1, 2), QUOTE: (3.9, 1.1, 3), PLAIN: (2.0, 1.0, 1)})
    assert sessions(ws) == 5
