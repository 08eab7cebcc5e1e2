"""Two gptme bandits saving to two copies of one exported bandit-state.json, the copy taken after a session of the
first: that session is in both files. gptme's bandit stamps each arm it updates with its clock's isoformat, to the
microsecond (`+00:00`): an arm of one file that is exactly a state an import of the other file saw (its four numbers
and that stamp) is that same update, logged already; the same numbers under another stamp are another session (two
bandits each rewarding one lesson once). Every session counts once, whichever file is imported first. The numbers of
each test are worked out by hand in its comments."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.log.events import InvalidEvent, PriorEvent, decode_event
from tests.cli.test_gptme_exports import GIT, PLAIN, QUOTE, S1
from tests.support.cli_run import run_cli
from tests.support.cli_run import run_ok as ok
from tests.support.engine_helpers import BASIC_JOURNAL, BASIC_LESSONS, LOG_REL, STATE_REL, make_workspace

T1, T2, T3, T4 = (f"2026-12-06T10:0{i}:00.{i}00001+00:00" for i in range(1, 5))  # gptme's clock, one per session


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A workspace whose log holds s1: git rewarded 0.8 at salience 1, so git is Beta(1.8, 1.2), n 1, 1 session;
    quote and plain have no evidence (Beta(1, 1), n 0)."""
    return make_workspace(tmp_path, BASIC_LESSONS, events=[S1], journals={"j.txt": BASIC_JOURNAL}, name="ws")


def gptme_session(path: Path, key: str, reward: float, stamp: str) -> None:
    """gptme's bandit saving one session on the file: the arm's alpha += reward, beta += 1 - reward, one selection
    (a reward when > 0.5), stamped with its clock (`stamp`); total_sessions + 1; its own keys only."""
    state = json.loads(path.read_text())
    arm = state["arms"].setdefault(key, {"arm_id": key, "alpha": 1.0, "beta": 1.0, "total_selections": 0,
                                         "total_rewards": 0})  # fmt: skip
    arm.update(alpha=arm["alpha"] + reward, beta=arm["beta"] + 1 - reward, last_updated=stamp)
    arm["total_selections"] += 1
    arm["total_rewards"] += int(reward > 0.5)
    state["total_sessions"] += 1
    path.write_text(json.dumps({k: state[k] for k in ("arms", "total_sessions", "created", "last_updated")}))


def two_files(tmp_path: Path) -> tuple[Path, Path]:
    gx, gy = tmp_path / "gx" / "bandit-state.json", tmp_path / "gy" / "bandit-state.json"
    gx.parent.mkdir()
    gy.parent.mkdir()
    return gx, gy


def posteriors(root: Path) -> dict[str, tuple[float, float, int]]:
    out = ok("status", "--workspace", str(root), "--json")
    return {r["path"]: (r["alpha"], r["beta"], r["n"]) for r in json.loads(out)["lessons"] if r["n"]}


def sessions(root: Path) -> int:
    """The sessions the log counts: the workspace's own file's total_sessions, written from it by `status`."""
    ok("status", "--workspace", str(root))
    counted: int = json.loads((root / STATE_REL).read_text())["total_sessions"]
    return counted


def log_lines(root: Path) -> list[str]:
    return (root / LOG_REL).read_text().splitlines()


@pytest.mark.parametrize("order", ["gx-first", "gy-first"])
@pytest.mark.parametrize("variant", ["quote-both-ways", "plain-and-quote"])
def test_a_session_saved_before_the_copy_counts_once(root: Path, tmp_path: Path, order: str, variant: str) -> None:
    """gx saves session 1 (git +1), is copied to gy, then gy saves session 2 (quote +1) and gx session 3 (quote +0,
    or plain +1). Both files hold session 1's git, stamped T1. gy's import took the export's numbers as its base (it
    did not grow whole from what gx's import saw: its quote went another way), so git was logged twice: Beta(3.8,
    1.2) n 3, 5 sessions. Right: three gptme sessions over s1.
    git: Beta(1.8, 1.2) n 1 + session 1's (1, 0, 1) = Beta(2.8, 1.2) n 2;
    quote-both-ways: quote Beta(1, 1) + session 2's (1, 0, 1) + session 3's (0, 1, 1) = Beta(2, 2) n 2;
    plain-and-quote: quote Beta(1, 1) + (1, 0, 1) = Beta(2, 1) n 1, plain Beta(1, 1) + (1, 0, 1) = Beta(2, 1) n 1;
    sessions: s1 + 3 = 4."""
    gx, gy = two_files(tmp_path)
    ok("export-gptme", "--workspace", str(root), str(gx))
    gptme_session(gx, GIT, 1.0, T1)
    shutil.copy(gx, gy)
    gptme_session(gy, QUOTE, 1.0, T2)
    if variant == "quote-both-ways":
        gptme_session(gx, QUOTE, 0.0, T3)
        expected = {GIT: (2.8, 1.2, 2), QUOTE: (2.0, 2.0, 2)}
    else:
        gptme_session(gx, PLAIN, 1.0, T3)
        expected = {GIT: (2.8, 1.2, 2), QUOTE: (2.0, 1.0, 1), PLAIN: (2.0, 1.0, 1)}
    for path in (gx, gy, gx, gy) if order == "gx-first" else (gy, gx, gy, gx):  # each once, however often
        ok("import-gptme", "--workspace", str(root), str(path))
    assert posteriors(root) == {key: pytest.approx(numbers) for key, numbers in expected.items()}
    assert sessions(root) == 4


@pytest.mark.parametrize("order", ["gx-first", "gy-first"])
def test_a_session_in_two_copies_of_the_workspaces_own_file_counts_once(root: Path, tmp_path: Path, order: str) -> None:
    """The same with the workspace's own bandit-state.json copied to gx (known by the copy of it kept in `.cache`):
    gy's import took our copy's numbers for its base and logged session 1 again (git Beta(3.8, 1.2) n 3).
    git: Beta(1.8, 1.2) n 1 + (1, 0, 1) = Beta(2.8, 1.2) n 2; quote: Beta(1, 1) + (1, 0, 1) + (0, 1, 1) = Beta(2, 2)
    n 2; sessions: s1 + 3 = 4."""
    gx, gy = two_files(tmp_path)
    ok("grade", "s1", "0.8", "--workspace", str(root))  # (its grade again): the own file written, its copy kept
    shutil.copy(root / STATE_REL, gx)
    gptme_session(gx, GIT, 1.0, T1)
    shutil.copy(gx, gy)
    gptme_session(gy, QUOTE, 1.0, T2)
    gptme_session(gx, QUOTE, 0.0, T3)
    for path in (gx, gy, gx, gy) if order == "gx-first" else (gy, gx, gy, gx):
        ok("import-gptme", "--workspace", str(root), str(path))
    assert posteriors(root) == {GIT: pytest.approx((2.8, 1.2, 2)), QUOTE: pytest.approx((2.0, 2.0, 2))}
    assert sessions(root) == 4


@pytest.mark.parametrize("order", ["gx-first", "gy-first"])
def test_two_bandits_rewarding_one_lesson_alike_both_count(root: Path, tmp_path: Path, order: str) -> None:
    """A copy taken right after the export; each bandit saves one session rewarding git 1 (the same numbers, each
    stamped by its own clock). The second import took the first's numbers for its base (the file grew from them),
    and its session was lost: Beta(2.8, 1.2) n 2. Right: git Beta(1.8, 1.2) n 1 + (1, 0, 1) twice = Beta(3.8, 1.2)
    n 3; sessions: s1 + 2 = 3."""
    gx, gy = two_files(tmp_path)
    ok("export-gptme", "--workspace", str(root), str(gx))
    shutil.copy(gx, gy)
    gptme_session(gx, GIT, 1.0, T1)
    gptme_session(gy, GIT, 1.0, T2)
    for path in (gx, gy, gx, gy) if order == "gx-first" else (gy, gx, gy, gx):
        ok("import-gptme", "--workspace", str(root), str(path))
    assert posteriors(root) == {GIT: pytest.approx((3.8, 1.2, 3))}
    assert sessions(root) == 3


def test_an_arm_updated_again_after_the_copy_is_refused(root: Path, tmp_path: Path) -> None:
    """gy, copied from gx after session 1 (git +1, T1), saves session 2 (quote +1) and session 4 (git +1, T4); gx
    saves session 3 (quote +0) and is imported: git Beta(2.8, 1.2) n 2, quote Beta(1, 2) n 1. gy's git, Beta(3.8,
    1.2) n 3 stamped T4, holds either session 1 and one of its own, or two of its own (copied before session 1):
    the numbers and stamps cannot tell. Taking the export's git as its base counted session 1 twice; taking gx's
    would lose a session of gy's if it was copied before. Refused, one line naming gy, the arm and gx, nothing
    logged. The way out given (delete gy, export onto it again) counts nothing twice: the log stays as it was."""
    gx, gy = two_files(tmp_path)
    ok("export-gptme", "--workspace", str(root), str(gx))
    gptme_session(gx, GIT, 1.0, T1)
    shutil.copy(gx, gy)
    gptme_session(gy, QUOTE, 1.0, T2)
    gptme_session(gx, QUOTE, 0.0, T3)
    gptme_session(gy, GIT, 1.0, T4)
    ok("import-gptme", "--workspace", str(root), str(gx))
    before = log_lines(root)
    code, out, err = run_cli("import-gptme", "--workspace", str(root), str(gy))
    assert (code, out) == (1, "")
    (line,) = err.strip().splitlines()
    assert str(gy) in line and GIT in line and str(gx.resolve()) in line and "nothing logged" in line, err
    assert log_lines(root) == before
    code, _, err = run_cli("export-gptme", "--workspace", str(root), str(gy))
    assert code == 1 and len(err.strip().splitlines()) == 1 and str(gx.resolve()) in err, err
    assert log_lines(root) == before
    gy.unlink()
    ok("export-gptme", "--workspace", str(root), str(gy))
    assert posteriors(root) == {GIT: pytest.approx((2.8, 1.2, 2)), QUOTE: pytest.approx((1.0, 2.0, 1))}


def seen_event(arm: dict[str, Any]) -> bytes:
    seen = {"path": "/x/bandit-state.json", "created": "c", "arms": {GIT: arm}, "sessions": 3}
    event = {"type": "prior", "increments": True, "source": "gptme-bandit", "arms": {GIT: {"alpha": 1, "beta": 0,
             "n": 1, "rewards": 1}}, "seen": seen}  # fmt: skip
    return json.dumps(event).encode()


def test_seen_stamps_are_optional_and_checked() -> None:
    """An increments event of before (no stamp in `seen`) reads as it did; a stamp that is not a non-empty string
    makes the line a bad line."""
    numbers = {"alpha": 2.8, "beta": 1.2, "n": 2, "rewards": 2}
    old = decode_event(seen_event(numbers))
    assert isinstance(old, PriorEvent) and old.seen is not None and old.seen.stamps == {}
    new = decode_event(seen_event({**numbers, "stamp": T1}))
    assert isinstance(new, PriorEvent) and new.seen is not None and new.seen.stamps == {GIT: T1}
    for bad in (5, "", None):
        with pytest.raises(InvalidEvent):
            decode_event(seen_event({**numbers, "stamp": bad}))


def test_a_backup_of_an_exported_file_adds_nothing(root: Path, tmp_path: Path) -> None:
    """gx saves session 1 (git +1, T1) and is backed up (early), saves session 2 (git +0, T2), is imported (its git
    Beta(2.8, 2.2) n 3 stamped T2) and backed up again (late). late's git is exactly what that import saw: nothing
    new. early's git, Beta(2.8, 1.2) n 2 stamped T1, is no state an import saw: a backup holding session 1 (in gx's
    import too), or a copy with a session of its own; it is refused, nothing logged (before: the export's numbers
    were its base, git +1 logged again, session 1 counted twice: Beta(3.8, 2.2) n 4).
    git: Beta(1.8, 1.2) n 1 + (1, 0, 1) + (0, 1, 1) = Beta(2.8, 2.2) n 3; sessions s1 + 2 = 3."""
    gx, early = two_files(tmp_path)
    late = tmp_path / "late.json"
    ok("export-gptme", "--workspace", str(root), str(gx))
    gptme_session(gx, GIT, 1.0, T1)
    shutil.copy(gx, early)
    gptme_session(gx, GIT, 0.0, T2)
    ok("import-gptme", "--workspace", str(root), str(gx))
    shutil.copy(gx, late)
    before = log_lines(root)
    assert "holds nothing new" in ok("import-gptme", "--workspace", str(root), str(late))
    code, _, err = run_cli("import-gptme", "--workspace", str(root), str(early))
    assert code == 1 and len(err.strip().splitlines()) == 1 and str(gx.resolve()) in err, err
    assert log_lines(root) == before
    assert posteriors(root) == {GIT: pytest.approx((2.8, 2.2, 3))}
    assert sessions(root) == 3


def test_what_imports_saw_comes_back_from_the_parsed_log_cache() -> None:
    """Every import's `seen` (with gptme's stamps and the sessions its event logged) is kept in log order, and read
    back from the cache's plain values as it was."""
    from lesson_credit.core.log.events import FileNumbers
    from lesson_credit.core.log.exports import Exports

    exports = Exports()
    exports.exported(3, FileNumbers("/gx", "c", {GIT: (1.8, 1.2, 1, 1)}, 1))
    exports.seen(5, FileNumbers("/gx", "c", {GIT: (2.8, 1.2, 2, 2)}, 2, {GIT: T1}), 1)
    exports.seen(9, FileNumbers("/gy", "c", {QUOTE: (2.0, 1.0, 1, 1)}, 3, {QUOTE: T2}), 1)
    exports.seen(12, FileNumbers("/gx", "c", {GIT: (2.8, 2.2, 3, 2)}, 3), 1)  # (a `seen` of before: no stamp)
    back = Exports.of_plain(json.loads(json.dumps(exports.plain())))
    assert back.history == exports.history and back.files == exports.files and back.saves == exports.saves
    assert back.saves["c", "/gx"][1].stamps == {}  # (the later numbers of git came without a stamp)


def test_a_copy_refused_over_an_import_logged_without_stamps_says_so(root: Path, tmp_path: Path) -> None:
    """An import logged by a version that kept no gptme stamps (its `seen` without them): gy's git is exactly the
    state that import saw, but nothing tells it is the same update (two bandits rewarding git once each reach those
    numbers too). Refused as an arm that cannot be told, and the line says why: before, it said gy's git had been
    updated after that import, which is false."""
    gx, gy = two_files(tmp_path)
    ok("export-gptme", "--workspace", str(root), str(gx))
    gptme_session(gx, GIT, 1.0, T1)
    shutil.copy(gx, gy)
    gptme_session(gy, QUOTE, 1.0, T2)
    gptme_session(gx, QUOTE, 0.0, T3)
    ok("import-gptme", "--workspace", str(root), str(gx))
    lines = (root / LOG_REL).read_text().splitlines()
    event = json.loads(lines[-1])
    for numbers in event["seen"]["arms"].values():  # as the version before stamps logged it
        numbers.pop("stamp", None)
    (root / LOG_REL).write_text("\n".join([*lines[:-1], json.dumps(event)]) + "\n")
    shutil.rmtree(root / "state/lesson-thompson/.cache", ignore_errors=True)
    code, _, err = run_cli("import-gptme", "--workspace", str(root), str(gy))
    assert code == 1 and "that import was logged by a version that kept no stamps" in err, err
    assert "nothing logged" in err and str(gx.resolve()) in err, err


def moved_no_arm(path: Path) -> None:
    """gptme's bandit saving a session that moved no arm: total_sessions + 1, nothing else."""
    state = json.loads(path.read_text())
    state["total_sessions"] += 1
    path.write_text(json.dumps(state))


def first_file(root: Path, gx: Path, lineage: str) -> None:
    """gx as an export of the log, or as a copy of the workspace's own file (known by our copy in `.cache`)."""
    if lineage == "export":
        ok("export-gptme", "--workspace", str(root), str(gx))
    else:
        ok("grade", "s1", "0.8", "--workspace", str(root))  # (its grade again): the own file written, its copy kept
        shutil.copy(root / STATE_REL, gx)


@pytest.mark.parametrize("order", ["gx-first", "gy-first"])
@pytest.mark.parametrize("lineage", ["export", "own-copy"])
def test_the_sessions_of_two_copies_count_alike_in_either_order(
    root: Path, tmp_path: Path, order: str, lineage: str
) -> None:
    """gx saves session 1 (git +1, T1) and is copied to gy; gy saves session 2 (quote +1, T2) and session 4 (plain
    +1, T4), gx session 3 (quote +0, T3). Four gptme sessions over s1: 5, whichever file is imported first (before,
    gx first counted 4: gy's count was cut to its largest increase of one arm, 1).
    gx first: gx holds 2 past the file of ours (total 3 less 1), both logged. gy holds 3 past it; gx's quote update
    (n 1 at T3) is not gy's (gy's quote is another state at n 1), so at most 2 - 1 = 1 of those logged is gy's:
    gy counts 3 - 1 = 2. 1 + 2 + 2 = 5.
    gy first: gy's 3 logged; gx holds 2, gy's quote and plain updates are not gx's: at most 3 - 2 = 1 of them is
    gx's, gx counts 2 - 1 = 1. 1 + 3 + 1 = 5.
    git Beta(1.8, 1.2) n 1 + (1, 0, 1) = Beta(2.8, 1.2) n 2; quote Beta(1, 1) + (1, 0, 1) + (0, 1, 1) = Beta(2, 2)
    n 2; plain Beta(1, 1) + (1, 0, 1) = Beta(2, 1) n 1."""
    gx, gy = two_files(tmp_path)
    first_file(root, gx, lineage)
    gptme_session(gx, GIT, 1.0, T1)
    shutil.copy(gx, gy)
    gptme_session(gy, QUOTE, 1.0, T2)
    gptme_session(gy, PLAIN, 1.0, T4)
    gptme_session(gx, QUOTE, 0.0, T3)
    for path in (gx, gy, gx, gy) if order == "gx-first" else (gy, gx, gy, gx):
        ok("import-gptme", "--workspace", str(root), str(path))
    expected = {GIT: (2.8, 1.2, 2), QUOTE: (2.0, 2.0, 2), PLAIN: (2.0, 1.0, 1)}
    assert posteriors(root) == {key: pytest.approx(numbers) for key, numbers in expected.items()}
    assert sessions(root) == 5


@pytest.mark.parametrize("order", ["gx-first", "gy-first"])
@pytest.mark.parametrize("lineage", ["export", "own-copy"])
def test_a_session_that_moved_no_arm_before_the_copy_counts_once(
    root: Path, tmp_path: Path, order: str, lineage: str
) -> None:
    """gx saves session 1, which moved no arm, and is copied to gy; gx saves session 2 (git +1, T1), gy session 3
    (quote +1, T2). Three gptme sessions over s1: 4 (before: 5 in either order, session 1 counted in each file).
    gx first: 2 logged; gy holds 2, gx's git update is not gy's, so at most 2 - 1 = 1 logged is gy's: it counts 1.
    gy first: the same, mirrored (gy's quote update is not gx's). 1 + 2 + 1 = 4.
    git Beta(2.8, 1.2) n 2; quote Beta(2, 1) n 1."""
    gx, gy = two_files(tmp_path)
    first_file(root, gx, lineage)
    moved_no_arm(gx)
    shutil.copy(gx, gy)
    gptme_session(gx, GIT, 1.0, T1)
    gptme_session(gy, QUOTE, 1.0, T2)
    for path in (gx, gy, gx, gy) if order == "gx-first" else (gy, gx, gy, gx):
        ok("import-gptme", "--workspace", str(root), str(path))
    assert posteriors(root) == {GIT: pytest.approx((2.8, 1.2, 2)), QUOTE: pytest.approx((2.0, 1.0, 1))}
    assert sessions(root) == 4


@pytest.mark.parametrize("order", ["gx-first", "gy-first"])
@pytest.mark.parametrize("lineage", ["export", "own-copy"])
def test_a_session_that_moved_no_arm_after_the_copy_counts(
    root: Path, tmp_path: Path, order: str, lineage: str
) -> None:
    """gx saves session 1 (git +1, T1) and is copied to gy; gy saves session 2, which moved no arm, and gx session 3
    (quote +0, T3). Three gptme sessions over s1: 4 (before: 3 in either order, session 2 taken for one of gx's).
    gx first: 2 logged; gy holds 2, gx's quote update is not gy's, so at most 2 - 1 = 1 logged is gy's: it counts 1.
    gy first: 2 logged (git, session 2); gx holds 2, its quote update no import saw: it counts at least that 1.
    git Beta(2.8, 1.2) n 2; quote Beta(1, 2) n 1."""
    gx, gy = two_files(tmp_path)
    first_file(root, gx, lineage)
    gptme_session(gx, GIT, 1.0, T1)
    shutil.copy(gx, gy)
    moved_no_arm(gy)
    gptme_session(gx, QUOTE, 0.0, T3)
    for path in (gx, gy, gx, gy) if order == "gx-first" else (gy, gx, gy, gx):
        ok("import-gptme", "--workspace", str(root), str(path))
    assert posteriors(root) == {GIT: pytest.approx((2.8, 1.2, 2)), QUOTE: pytest.approx((1.0, 2.0, 1))}
    assert sessions(root) == 4


@pytest.mark.parametrize("order", ["gx-first", "gy-first"])
def test_sessions_that_moved_no_arm_in_both_copies_count_once(root: Path, tmp_path: Path, order: str) -> None:
    """gx saves session 1 (git +1, T1) and is copied to gy; gx and gy each save a session that moved no arm (2 and 3).
    The files cannot tell this from gy copied after gx's session 2 (the same two files: git at T1, total_sessions 3
    each), where only two sessions happened: counted the safe way, s1 + 2 = 3 (one session of the three short),
    never 4 in the other case. git Beta(2.8, 1.2) n 2."""
    gx, gy = two_files(tmp_path)
    first_file(root, gx, "export")
    gptme_session(gx, GIT, 1.0, T1)
    shutil.copy(gx, gy)
    moved_no_arm(gx)
    moved_no_arm(gy)
    for path in (gx, gy, gx, gy) if order == "gx-first" else (gy, gx, gy, gx):
        ok("import-gptme", "--workspace", str(root), str(path))
    assert posteriors(root) == {GIT: pytest.approx((2.8, 1.2, 2))}
    assert sessions(root) == 3


@pytest.mark.parametrize("then", ["status", "export-gptme"])
def test_a_session_in_the_workspaces_own_file_and_its_copy_counts_once(root: Path, tmp_path: Path, then: str) -> None:
    """gptme's bandit saves session 1 (git +1, T1) on the workspace's own file, which is copied to gy (a second
    bandit); gy saves session 2 (quote +1, T2), the own file session 3 (plain +1, T3). gy is imported first (git and
    quote, 2 sessions); then the own file's update is logged (`status`, or `export-gptme` onto it). Its git is
    exactly what gy's import saw (T1): logged already. Before, it was logged again over our copy (git Beta(3.8, 1.2)
    n 3, 5 sessions). The own file holds 2 sessions past our copy; gy's 2 logged, gy's quote update is not the own
    file's, so at most 1 of them is its: it counts 1, no fewer than its plain update shows.
    git Beta(1.8, 1.2) n 1 + (1, 0, 1) = Beta(2.8, 1.2) n 2; quote Beta(2, 1) n 1; plain Beta(2, 1) n 1; s1 + 3 = 4."""
    gy = tmp_path / "gy" / "bandit-state.json"
    gy.parent.mkdir()
    ok("grade", "s1", "0.8", "--workspace", str(root))  # (its grade again): the own file written, its copy kept
    own = root / STATE_REL
    gptme_session(own, GIT, 1.0, T1)
    shutil.copy(own, gy)
    gptme_session(gy, QUOTE, 1.0, T2)
    gptme_session(own, PLAIN, 1.0, T3)
    ok("import-gptme", "--workspace", str(root), str(gy))
    ok(then, "--workspace", str(root), *([str(own)] if then == "export-gptme" else []))
    expected = {GIT: (2.8, 1.2, 2), QUOTE: (2.0, 1.0, 1), PLAIN: (2.0, 1.0, 1)}
    assert posteriors(root) == {key: pytest.approx(numbers) for key, numbers in expected.items()}
    assert sessions(root) == 4


def test_the_own_file_is_not_frozen_when_its_arm_may_hold_its_copys_logged_update(root: Path, tmp_path: Path) -> None:
    """The own file saves session 1 (git +1, T1) and is copied to gy; gy saves session 2 (quote +1, T2) and is
    imported (git Beta(2.8, 1.2) n 2 at T1, quote Beta(2, 1) n 1); the own file saves session 3 (git +1, T3): its git,
    Beta(3.8, 1.2) n 3, holds session 1 and 3, or two of its own (gy copied before session 1 from a file of the same
    `created`): the numbers and stamps cannot tell. For a while the file was then kept as it is, for good: every
    later session gptme saved to it was lost to the log, and ours to gptme (review29). Its update is logged against
    our copy, as before that check (git +2 over our copy's Beta(1.8, 1.2) n 1: Beta(3.8, 1.2) n 3 beside gy's
    session 1, so session 1 counts twice there: git Beta(4.8, 1.2) n 4, the way out of the ambiguity that loses
    nothing); and the next session gptme saves to it, session 4 (git +1, T4), is logged too: Beta(5.8, 1.2) n 5."""
    gy = tmp_path / "gy" / "bandit-state.json"
    gy.parent.mkdir()
    ok("grade", "s1", "0.8", "--workspace", str(root))
    own = root / STATE_REL
    gptme_session(own, GIT, 1.0, T1)
    shutil.copy(own, gy)
    gptme_session(gy, QUOTE, 1.0, T2)
    gptme_session(own, GIT, 1.0, T3)
    code, _, err = run_cli("import-gptme", "--workspace", str(root), str(gy))
    assert code == 0 and "left as it is" not in err, err
    ok("status", "--workspace", str(root))
    assert posteriors(root) == {GIT: pytest.approx((4.8, 1.2, 4)), QUOTE: pytest.approx((2.0, 1.0, 1))}
    gptme_session(own, GIT, 1.0, T4)
    code, _, err = run_cli("status", "--workspace", str(root))
    assert code == 0 and "left as it is" not in err, err
    assert posteriors(root) == {GIT: pytest.approx((5.8, 1.2, 5)), QUOTE: pytest.approx((2.0, 1.0, 1))}


@pytest.mark.parametrize("variant", ["moved-no-arm", "quote"])
def test_a_copy_of_the_own_file_imported_after_its_save_was_logged(root: Path, tmp_path: Path, variant: str) -> None:
    """gptme's bandit saves session 1 (git +1, T1) on the own file, which is copied to gy; `status` logs session 1
    and keeps the file as gptme saved it as our copy under its `created`; gy saves session 2 (moving no arm, or quote
    +1, T2). gy holds 1 session beyond that copy, logged by none: it counts 1 (that copy's count holds session 1, so
    the own file's import is not taken off again: that counted 0 for the session moving no arm).
    git Beta(2.8, 1.2) n 2 (quote Beta(2, 1) n 1); s1 + 2 = 3."""
    gy = tmp_path / "gy" / "bandit-state.json"
    gy.parent.mkdir()
    ok("grade", "s1", "0.8", "--workspace", str(root))
    own = root / STATE_REL
    gptme_session(own, GIT, 1.0, T1)
    shutil.copy(own, gy)
    ok("status", "--workspace", str(root))
    if variant == "quote":
        gptme_session(gy, QUOTE, 1.0, T2)
    else:
        moved_no_arm(gy)
    ok("import-gptme", "--workspace", str(root), str(gy))
    expected = {GIT: (2.8, 1.2, 2), **({QUOTE: (2.0, 1.0, 1)} if variant == "quote" else {})}
    assert posteriors(root) == {key: pytest.approx(numbers) for key, numbers in expected.items()}
    assert sessions(root) == 3


def test_only_the_untold_arm_of_the_own_file_is_logged_against_our_copy(root: Path, tmp_path: Path) -> None:
    """review30: the own file saves session 1 (git +1, T1) and session 2 (quote +0, T2), is copied to gy, then saves
    session 3 (quote +0, T3); gy is imported (sessions 1 and 2: git +1 alpha, quote +1 beta). The own file's git is
    exactly as gy's import saw it (numbers and stamp): logged already. Its quote, two updates past our copy under
    another stamp than gy's, may or may not hold session 2: logged against our copy (+2 beta, session 2 again: the
    documented case). Before, the whole file went against our copy once one arm was untold: git +2 (session 1
    twice). By hand: git +1 alpha n +1; quote +3 beta n +3 (truth +2)."""
    gy = tmp_path / "gy" / "bandit-state.json"
    gy.parent.mkdir()
    ok("grade", "s1", "0.8", "--workspace", str(root))
    before = posteriors(root)
    own = root / STATE_REL
    gptme_session(own, GIT, 1.0, T1)
    gptme_session(own, QUOTE, 0.0, T2)
    shutil.copy(own, gy)
    gptme_session(own, QUOTE, 0.0, T3)
    ok("import-gptme", "--workspace", str(root), str(gy))
    ok("status", "--workspace", str(root))
    git, quote = before.get(GIT, (1.0, 1.0, 0)), before.get(QUOTE, (1.0, 1.0, 0))
    assert posteriors(root)[GIT] == pytest.approx((git[0] + 1, git[1], git[2] + 1))
    assert posteriors(root)[QUOTE] == pytest.approx((quote[0], quote[1] + 3, quote[2] + 3))
