"""A bandit-state.json saved by a third gptme process from one load, which no rule can take (docs/format.md §7, *Two
saves of one load*), is kept as it is until the user replaces it; meanwhile gptme's later saves onto it are logged,
over the file as it was kept, and whichever way the user then goes (`export-gptme` onto it, deleting it, or nothing)
no session of theirs is counted twice or dropped from the log. Each save is written as gptme-sessions' `Bandit.save`
writes it (tests/cli/test_gptme_sibling_saves.py: `update_and_save`). The numbers are worked by hand in each test.

The kept file, in every test: s1 (0.9, git and quote salience 1) gives git and quote Beta(1.9, 1.1) n 1, 1 session,
the file W0. P2 and P3 load W0; P1 saves git +1.0 (logged: git Beta(2.9, 1.1) n 2); P2 saves quote +1.0 (logged:
quote Beta(2.9, 1.1) n 2; 3 sessions); P3 saves git +1.0 twice from W0: git Beta(3.9, 1.1) n 3, quote Beta(1.9, 1.1)
n 1, total_sessions 3: P1's save plus one session or W0 plus two. Kept, nothing logged."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest

from lesson_credit.core.workspace import Workspace
from tests.cli.test_gptme_sibling_saves import (
    GIT,
    PLAIN,
    QUOTE,
    T1,
    T2,
    T3,
    T4,
    arm,
    increments,
    load,
    near,
    ok,
    rows,
    sessions,
    update_and_save,
)
from tests.support.engine_helpers import BASIC_JOURNAL, BASIC_LESSONS, STATE_REL, make_workspace, session

T5, T6, T7 = (f"2026-12-07T13:0{i}:00.00000{i}+00:00" for i in range(5, 8))
LOGGED = {GIT: (2.9, 1.1, 2), QUOTE: (2.9, 1.1, 2)}  # the log when P3's save is kept
REMEDY = "replace it with the log's posteriors (`lesson-credit export-gptme` onto it, or delete it"


def kept_save(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The workspace with P3's save kept (the module's docstring)."""
    events = [session("s1", 0.8, {GIT: 1.0, QUOTE: 1.0}), session("s2", None, {GIT: 1.0})]
    root = make_workspace(tmp_path, BASIC_LESSONS, events=events, journals={"j.txt": BASIC_JOURNAL})
    ok(capsys, "grade", "s1", "0.9", "--workspace", str(root))
    p2, p3 = load(root), load(root)
    update_and_save(root, load(root), 1.0, [GIT], T1)
    ok(capsys, "status", "--workspace", str(root))
    update_and_save(root, p2, 1.0, [QUOTE], T2)
    ok(capsys, "status", "--workspace", str(root))
    update_and_save(root, update_and_save(root, p3, 1.0, [GIT], T3), 1.0, [GIT], T4)
    err = ok(capsys, "status", "--workspace", str(root))
    assert f"{GIT} may hold the update" in err and REMEDY in err, err
    assert rows(capsys, root) == near(LOGGED) and len(increments(root)) == 2
    return root


def logged_sessions(root: Path) -> int:
    return int(Workspace(root).posterior().total_sessions)


def test_later_saves_onto_the_kept_file_are_logged_and_an_export_then_counts_each_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """P4 saves plain +1.0 from P3's save (made at Beta(1, 1): Beta(2, 1) n 1; total_sessions 4): logged, the file
    left as it is (it holds P3's one or two sessions, which the log lacks). It was not logged: every save onto the
    kept file held P3's too. P5 saves quote +0.0 from P4's (the file's quote Beta(1.9, 1.1) n 1 -> Beta(1.9, 2.1) n 2):
    logged over P4's, quote 2.9, 1.1 + 1 = 2.1, n 3. The log: git (2.9, 1.1) n 2, quote (2.9, 2.1) n 3, plain (2, 1)
    n 1; 5 sessions (s1, P1, P2, P4, P5). export-gptme onto it writes those, total_sessions 5 (the file's 1 + 2 + 1 +
    1, the log's 5), and gptme's next session (git +1.0 from it) is logged as any: git (3.9, 1.1) n 3, 6 sessions."""
    root = kept_save(tmp_path, capsys)
    update_and_save(root, load(root), 1.0, [PLAIN], T5)
    before = (root / STATE_REL).read_bytes()
    err = ok(capsys, "status", "--workspace", str(root))
    assert "its increments to 1 arm" in err and REMEDY in err and err.count("\n") == 1, err
    assert (root / STATE_REL).read_bytes() == before
    assert rows(capsys, root) == near({**LOGGED, PLAIN: (2.0, 1.0, 1)}) and logged_sessions(root) == 4
    err = ok(capsys, "status", "--workspace", str(root))  # (nothing new: kept, nothing logged)
    assert REMEDY in err and len(increments(root)) == 3 and (root / STATE_REL).read_bytes() == before, err
    update_and_save(root, load(root), 0.0, [QUOTE], T6)
    ok(capsys, "status", "--workspace", str(root))
    want = {GIT: (2.9, 1.1, 2), QUOTE: (2.9, 2.1, 3), PLAIN: (2.0, 1.0, 1)}
    assert rows(capsys, root) == near(want) and logged_sessions(root) == 5 and len(increments(root)) == 4
    ok(capsys, "export-gptme", str(root / STATE_REL), "--workspace", str(root))
    assert arm(root, QUOTE) == pytest.approx((2.9, 2.1, 3, 2)) and sessions(root) == 5
    update_and_save(root, load(root), 1.0, [GIT], T7)
    assert "left as it is" not in ok(capsys, "status", "--workspace", str(root))
    assert rows(capsys, root) == near({**want, GIT: (3.9, 1.1, 3)}) and logged_sessions(root) == 6
    assert arm(root, GIT) == pytest.approx((3.9, 1.1, 3, 3)) and sessions(root) == 6


def test_deleting_the_kept_file_after_a_later_save_was_logged_keeps_that_save(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """P4's plain +1.0 logged over the kept file, which is then deleted: the next write (our grade of s2, 0.5, git
    salience 1: + 0.5 / + 0.5) writes the log's posteriors, git (3.4, 1.6) n 3, quote as logged, plain (2, 1) n 1, 5
    sessions (a file gone has no count to keep); gptme's next session (quote +1.0 from it) is logged: quote (3.9, 1.1)
    n 3, 6 sessions."""
    root = kept_save(tmp_path, capsys)
    update_and_save(root, load(root), 1.0, [PLAIN], T5)
    ok(capsys, "status", "--workspace", str(root))
    (root / STATE_REL).unlink()
    assert "left as it is" not in ok(capsys, "grade", "s2", "0.5", "--workspace", str(root))
    assert arm(root, PLAIN) == pytest.approx((2.0, 1.0, 1, 1)) and arm(root, GIT)[:3] == pytest.approx((3.4, 1.6, 3))
    assert sessions(root) == 5
    update_and_save(root, load(root), 1.0, [QUOTE], T6)
    assert "left as it is" not in ok(capsys, "status", "--workspace", str(root))
    assert rows(capsys, root) == near({GIT: (3.4, 1.6, 3), QUOTE: (3.9, 1.1, 3), PLAIN: (2.0, 1.0, 1)})
    assert logged_sessions(root) == 6 and sessions(root) == 6


def test_a_cache_from_before_a_later_save_was_logged_never_logs_it_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`.cache` restored from before P4's save was logged (a backup): what it kept of the file is P3's save, and the
    file is P4's, grown from it; but a save of that file is logged since, so that base is not used (P4's plain would
    count twice: Beta(3, 1) n 2). Nothing logged: plain (2, 1) n 1, 4 sessions; the file kept again from here, and
    P5's quote +1.0 logged once over it: quote (3.9, 1.1) n 3, 5 sessions."""
    root = kept_save(tmp_path, capsys)
    cache, saved = root / STATE_REL.parent / ".cache", tmp_path / "cache-then"
    shutil.copytree(cache, saved)
    update_and_save(root, load(root), 1.0, [PLAIN], T5)
    ok(capsys, "status", "--workspace", str(root))
    shutil.rmtree(cache)
    shutil.copytree(saved, cache)
    err = ok(capsys, "status", "--workspace", str(root))
    assert REMEDY in err and len(increments(root)) == 3, err
    assert rows(capsys, root) == near({**LOGGED, PLAIN: (2.0, 1.0, 1)}) and logged_sessions(root) == 4
    update_and_save(root, load(root), 1.0, [QUOTE], T6)
    ok(capsys, "status", "--workspace", str(root))
    assert rows(capsys, root) == near({GIT: (2.9, 1.1, 2), QUOTE: (3.9, 1.1, 3), PLAIN: (2.0, 1.0, 1)})
    assert logged_sessions(root) == 5


ORDERS = list(itertools.permutations(("grade", "p4", "p5", "status")))


@pytest.mark.parametrize("order", ORDERS, ids=["-".join(order) for order in ORDERS])
def test_our_writes_and_gptmes_saves_onto_the_kept_file_in_any_order_count_each_session_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], order: tuple[str, ...]
) -> None:
    """A scripted interleaving of both writers while the file is kept: we grade s2 (pending, git salience 1) 0.5
    (git + 0.5 / + 0.5, n + 1; the file kept: not written), P4 saves plain +1.0 and P5 quote +0.0, each from the file
    as it is then, and `status` runs, in every order. Then `status` and an export onto the file: git (3.4, 1.6) n 3,
    quote (2.9, 2.1) n 3, plain (2, 1) n 1, 6 sessions (s1, P1, P2, s2, P4, P5), in the log and the file (its
    total_sessions 6: gptme's count, 1 + 2 + 1 + 1 = 5, is below the log's)."""
    root = kept_save(tmp_path, capsys)
    for step in order:
        if step in ("grade", "status"):
            ok(capsys, *(("grade", "s2", "0.5") if step == "grade" else ("status",)), "--workspace", str(root))
        else:
            update_and_save(root, load(root), *((1.0, [PLAIN], T5) if step == "p4" else (0.0, [QUOTE], T6)))
    ok(capsys, "status", "--workspace", str(root))
    want = {GIT: (3.4, 1.6, 3), QUOTE: (2.9, 2.1, 3), PLAIN: (2.0, 1.0, 1)}
    assert rows(capsys, root) == near(want) and logged_sessions(root) == 6
    ok(capsys, "export-gptme", str(root / STATE_REL), "--workspace", str(root))
    assert rows(capsys, root) == near(want) and logged_sessions(root) == 6
    assert {key: arm(root, key)[:3] for key in want} == near(want) and sessions(root) == 6
