"""gptme's counters, keys and fields in the shared bandit-state.json. gptme-sessions' bandit (read from its source, not
imported) loads `total_sessions`, adds 1 per session it updates arms for, and saves it back with its
arms, `created`, `last_updated` and `contextual_arms` (its per-context arms, when it has any). Our
rewrites of the file count its sessions as the log does, plus the sessions gptme counted (the file
imported, then each update of gptme's logged as increments), so gptme never sees its counter go
back, and the number is the same when the file is deleted and written again from the log. gptme finds
its arms under the keys it wrote them by, and its own fields (`contextual_arms`) stay."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.base.sealed import seal
from lesson_credit.core.log.events import InvalidEvent, PriorEvent, decode_event
from tests.support.cli_run import run_cli
from tests.support.engine_helpers import BASIC_JOURNAL, BASIC_LESSONS, LOG_REL, STATE_REL, make_workspace

GIT, QUOTE = "tools/git.md", "tools/quote.md"


def gptme_file(total_sessions: int = 9) -> dict[str, Any]:
    """A bandit-state.json gptme's bandit wrote before lesson-credit came: two arms, 9 sessions counted."""
    arms = {GIT: (3.0, 2.0, 3, 2), QUOTE: (1.5, 2.5, 2, 0)}
    return {
        "arms": {
            key: {"arm_id": key, "alpha": a, "beta": b, "total_selections": n, "total_rewards": r,
                  "last_updated": "2026-09-01T00:00:00+00:00"}
            for key, (a, b, n, r) in arms.items()
        },
        "total_sessions": total_sessions,
        "created": "2026-08-01T00:00:00+00:00",
        "last_updated": "2026-09-01T00:00:00+00:00",
    }  # fmt: skip


def gptme_session(root: Path, arms: tuple[str, ...] = (GIT,), reward: float = 1.0) -> None:
    """gptme's bandit updating one session: each active arm += reward, total_sessions += 1, saved with
    its own keys only (and contextual_arms when the file had them)."""
    path = root / STATE_REL
    state = json.loads(path.read_text())
    for key in arms:  # an arm it lacks starts at Beta(1, 1), as gptme's get_or_create_arm makes it
        arm = state["arms"].setdefault(key, {"arm_id": key, "alpha": 1.0, "beta": 1.0, "total_selections": 0,
                                             "total_rewards": 0, "last_updated": ""})  # fmt: skip
        arm.update(alpha=arm["alpha"] + reward, beta=arm["beta"] + 1.0 - reward)
        arm["total_selections"] += 1
        arm["total_rewards"] += int(reward > 0.5)
    saved = {k: state[k] for k in ("arms", "total_sessions", "created", "last_updated")}
    saved["total_sessions"] += 1
    if "contextual_arms" in state:
        saved["contextual_arms"] = state["contextual_arms"]
    path.write_text(json.dumps(saved, indent=2) + "\n")


def on_disk(root: Path) -> dict[str, Any]:
    state: dict[str, Any] = json.loads((root / STATE_REL).read_text())
    return state


def ok(*argv: str) -> str:
    code, out, err = run_cli(*argv)
    assert code == 0, err
    return err


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    """A gptme workspace whose own bandit-state.json gptme wrote (9 sessions), no log yet."""
    root = make_workspace(tmp_path, BASIC_LESSONS, journals={"j.txt": BASIC_JOURNAL}, name="agent")
    (root / STATE_REL).parent.mkdir(parents=True)
    (root / STATE_REL).write_text(json.dumps(gptme_file()))
    return root


def record(root: Path, session_id: str, *lessons: str, reward: str = "0.8") -> None:
    argv = ["record", "--workspace", str(root), "--session-id", session_id, "--journal", str(root / "j.txt"),
            "--lessons", *lessons, "--reward", reward]  # fmt: skip
    ok(*argv)


def test_importing_gptmes_own_file_keeps_its_session_count_and_counts_on_from_it(agent: Path) -> None:
    ok("import-gptme", "--workspace", str(agent), str(agent / STATE_REL))
    assert on_disk(agent)["total_sessions"] == 9  # the 9 sessions gptme counted (it was 0)
    gptme_session(agent)  # gptme: 10
    ok("status", "--workspace", str(agent))  # its update logged as increments
    assert on_disk(agent)["total_sessions"] == 10
    record(agent, "s1", GIT)  # one graded session of ours: 11
    assert on_disk(agent)["total_sessions"] == 11
    gptme_session(agent, (GIT, QUOTE))  # 12, then one more of ours: 13
    record(agent, "s2", QUOTE)
    assert on_disk(agent)["total_sessions"] == 13
    (agent / STATE_REL).unlink()  # derived: written again from the log by the next write, the same count
    ok("grade", "s2", "0.5", "--workspace", str(agent))  # (a session graded again is still one session)
    assert on_disk(agent)["total_sessions"] == 13


def test_importing_another_gptme_file_counts_its_sessions_once(agent: Path, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere.json"
    other.write_text(json.dumps(gptme_file(total_sessions=40)))
    (agent / STATE_REL).unlink()
    record(agent, "s1", GIT)
    for _ in range(2):  # the second import of the same file logs nothing
        ok("import-gptme", "--workspace", str(agent), str(other))
    assert on_disk(agent)["total_sessions"] == 41  # its 40, and s1
    assert sum(1 for line in (agent / LOG_REL).read_text().splitlines() if '"prior"' in line) == 1


def test_a_session_gptme_counts_without_moving_an_arm_is_never_taken_back(agent: Path) -> None:
    """gptme's bandit counts a session whose active arms were none (total_sessions += 1, no arm moved):
    our next write logs that count (an increments event naming no arm), so it counts on from it. It
    was not logged: our rewrite kept the file's 10 and a session of ours made it 10 again, not 11."""
    ok("import-gptme", "--workspace", str(agent), str(agent / STATE_REL))
    gptme_session(agent, arms=())  # 10, no arm changed
    record(agent, "s1", GIT)
    assert on_disk(agent)["total_sessions"] == 11  # 9 imported, gptme's 1, and s1
    ok("status", "--workspace", str(agent))
    assert on_disk(agent)["total_sessions"] == 11
    (agent / STATE_REL).unlink()  # derived: written again from the log, the same count
    ok("grade", "s1", "0.5", "--workspace", str(agent))
    assert on_disk(agent)["total_sessions"] == 11


def test_status_logs_a_session_gptme_counted_alone_so_the_file_can_be_written_again(agent: Path) -> None:
    ok("import-gptme", "--workspace", str(agent), str(agent / STATE_REL))
    gptme_session(agent, arms=())  # 10, no arm changed
    ok("status", "--workspace", str(agent))
    added = json.loads((agent / LOG_REL).read_text().splitlines()[-1])
    assert (added["increments"], added["arms"], added["sessions"]) == (True, {}, 1)
    (agent / STATE_REL).unlink()
    code, _, err = run_cli("record", "--workspace", str(agent), "--session-id", "s1", "--journal",
                           str(agent / "j.txt"), "--lessons", GIT)  # fmt: skip
    assert code == 0, err
    assert on_disk(agent)["total_sessions"] == 10  # 9 imported and gptme's 1 (s1 is pending)


@pytest.mark.parametrize("sessions", [-1, 1.5, True, "9", 2**53])
def test_a_prior_event_naming_sessions_that_are_not_a_count_is_a_bad_line(sessions: Any) -> None:
    line = json.dumps({"type": "prior", "arms": {GIT: {"alpha": 2, "beta": 1}}, "sessions": sessions})
    with pytest.raises(InvalidEvent, match="sessions"):
        decode_event(line)


@pytest.mark.parametrize("total", [-1, 2.5, "9", None])
def test_importing_a_file_whose_total_sessions_is_not_a_count_is_refused(agent: Path, total: Any) -> None:
    (agent / STATE_REL).write_text(json.dumps({**gptme_file(), "total_sessions": total}))
    code, out, err = run_cli("import-gptme", "--workspace", str(agent), str(agent / STATE_REL))
    assert (code, out) == (1, "") and err.count("\n") == 1 and "total_sessions" in err, err
    assert not (agent / LOG_REL).exists()


def test_a_copy_kept_before_copies_held_the_count_still_logs_gptmes_update(agent: Path) -> None:
    """A workspace whose copy of what we wrote holds arms only (kept by an earlier lesson-credit): gptme's
    update is still logged, and its count kept, though the sessions it added cannot be told."""
    ok("import-gptme", "--workspace", str(agent), str(agent / STATE_REL))
    arms = on_disk(agent)["arms"]
    numbers = {key: [a["alpha"], a["beta"], a["total_selections"], a["total_rewards"]] for key, a in arms.items()}
    copy = (agent / STATE_REL).parent / ".cache" / "bandit-state-written"  # where an earlier one kept it
    shutil.rmtree(copy.parent / "bandit-state-copies")  # (an earlier lesson-credit kept no copies by `created`)
    copy.write_bytes(seal(b"lesson-credit state-written 1\n", json.dumps(numbers).encode()))
    gptme_session(agent)  # git +1/+0, one selection, one reward; 10 sessions
    ok("status", "--workspace", str(agent))
    added = json.loads((agent / LOG_REL).read_text().splitlines()[-1])
    assert (added["increments"], added["arms"][GIT]["n"], "sessions" in added) == (True, 1, False)
    assert on_disk(agent)["total_sessions"] == 10
    assert on_disk(agent)["arms"][GIT]["alpha"] == 4.0  # imported 3.0, plus gptme's 1


def test_gptme_finds_its_arms_under_the_keys_it_wrote_after_our_rewrites(agent: Path) -> None:
    """gptme's bandit keys arms by the paths it is given (`lessons/tools/git.md`) and looks them up so:
    renamed to our ids, gptme would start the arm over at Beta(1, 1) at every session."""
    state = gptme_file()
    state["arms"] = {"lessons/" + key: {**arm, "arm_id": "lessons/" + key} for key, arm in state["arms"].items()}
    (agent / STATE_REL).write_text(json.dumps(state))
    ok("import-gptme", "--workspace", str(agent), str(agent / STATE_REL))
    assert set(on_disk(agent)["arms"]) == {"lessons/" + GIT, "lessons/" + QUOTE}
    gptme_session(agent, ("lessons/" + GIT,))  # finds its arm: imported Beta(3, 2) n 3, +1/+0
    ok("status", "--workspace", str(agent))
    arm = on_disk(agent)["arms"]["lessons/" + GIT]
    assert (arm["arm_id"], arm["alpha"], arm["beta"], arm["total_selections"]) == ("lessons/" + GIT, 4.0, 2.0, 4)
    assert arm["last_updated"] == "2026-09-01T00:00:00+00:00"  # no session of ours credited it: the file's
    code, out, err = run_cli("status", "--workspace", str(agent), "--json")
    assert code == 0, err
    assert {(r["path"], r["alpha"], r["n"]) for r in json.loads(out)["lessons"] if r["n"]} == {
        (GIT, 4.0, 4),
        (QUOTE, 1.5, 2),
    }


def test_gptme_updating_one_lesson_under_two_keys_in_one_save_counts_both(agent: Path) -> None:
    """One save of gptme's moved the arm we wrote (tools/git.md) and created another key for the same
    lesson (lessons/tools/git.md, from Beta(1, 1)): both updates are logged, neither replaces the other."""
    ok("import-gptme", "--workspace", str(agent), str(agent / STATE_REL))  # our file: tools/git.md Beta(3, 2)
    gptme_session(agent, (GIT, "lessons/" + GIT))  # +1/+0 to each
    ok("status", "--workspace", str(agent))
    added = json.loads((agent / LOG_REL).read_text().splitlines()[-1])
    assert added["arms"] == {GIT: {"alpha": 2.0, "beta": 0.0, "n": 2, "rewards": 2}}
    assert added["sessions"] == 1
    arm = on_disk(agent)["arms"][GIT]
    assert (arm["alpha"], arm["beta"], arm["total_selections"]) == (5.0, 2.0, 5)


def test_export_onto_the_own_file_keeps_what_gptme_keeps_beside_the_arms(agent: Path) -> None:
    """export-gptme replaces the arms with the log's, each with exactly gptme-sessions' six keys; gptme's
    per-context arms and its session count stay (gptme's loader reads them, its save writes them)."""
    state = gptme_file()
    context = {"arm_id": GIT, "alpha": 2.0, "beta": 1.0, "total_selections": 1, "total_rewards": 1, "last_updated": ""}
    state["contextual_arms"] = {GIT: {'["code"]': context}}
    (agent / STATE_REL).write_text(json.dumps(state))
    ok("import-gptme", "--workspace", str(agent), str(agent / STATE_REL))
    gptme_session(agent, arms=())  # 10 sessions, no arm moved
    on_disk_before = on_disk(agent)
    ok("export-gptme", "--workspace", str(agent), str(agent / STATE_REL))
    exported = on_disk(agent)
    assert exported["contextual_arms"] == {GIT: {'["code"]': context}}
    assert exported["total_sessions"] == 10
    assert exported["created"] > on_disk_before["created"]  # a file of its own: gptme's next save names it
    six = {"arm_id", "alpha", "beta", "total_selections", "total_rewards", "last_updated"}
    assert all(set(arm) == six for arm in exported["arms"].values())


def test_a_file_exported_from_this_log_and_updated_by_gptme_imports_only_gptmes_update(tmp_path: Path) -> None:
    """export-gptme to gptme's own bandit (another folder), gptme's sessions there, then import-gptme of
    that file: its arms hold the log's evidence already, so only what gptme added since is logged."""
    events = [{"type": "session", "session_id": "s1", "base_reward": 0.8, "lessons": [{"path": GIT, "salience": 1.0}]}]
    root = make_workspace(tmp_path, BASIC_LESSONS, events=events, journals={"j.txt": BASIC_JOURNAL})
    elsewhere = tmp_path / "gptme-state"
    elsewhere.mkdir()
    ok("export-gptme", "--workspace", str(root), str(elsewhere))
    record(root, "s2", QUOTE)  # the log moves on meanwhile
    exported = elsewhere / "bandit-state.json"
    state = json.loads(exported.read_text())
    arm = state["arms"][GIT]  # gptme's session on it: +1/+0, saved with its own keys
    arm.update(alpha=arm["alpha"] + 1.0, total_selections=arm["total_selections"] + 1)
    saved = {
        **{k: state[k] for k in ("arms", "created", "last_updated")},
        "total_sessions": state["total_sessions"] + 1,
    }
    exported.write_text(json.dumps(saved))
    for _ in range(2):  # the second import finds nothing new
        ok("import-gptme", "--workspace", str(root), str(exported))
    code, out, err = run_cli("status", "--workspace", str(root), "--json")
    assert code == 0, err
    rows = {r["path"]: (r["alpha"], r["beta"], r["n"]) for r in json.loads(out)["lessons"] if r["n"]}
    # git: s1 0.8 at salience 1 -> Beta(1.8, 1.2) n 1, plus gptme's +1/+0: not s1 twice (3.6, 1.4, 3)
    assert rows[GIT] == pytest.approx((2.8, 1.2, 2))
    assert rows[QUOTE][2] == 1  # s2, once
    assert on_disk(root)["total_sessions"] == 3  # s1, s2 and gptme's one


def test_a_file_exported_from_this_log_imported_unchanged_adds_nothing(tmp_path: Path) -> None:
    events = [{"type": "session", "session_id": "s1", "base_reward": 0.8, "lessons": [{"path": GIT, "salience": 1.0}]}]
    root = make_workspace(tmp_path, BASIC_LESSONS, events=events, journals={"j.txt": BASIC_JOURNAL})
    exported = tmp_path / "out.json"
    ok("export-gptme", "--workspace", str(root), str(exported))
    record(root, "s2", GIT)  # the log moves on: the exported file no longer agrees with it
    log_before = (root / LOG_REL).read_bytes()
    code, out, err = run_cli("import-gptme", "--workspace", str(root), str(exported))
    assert code == 0 and "nothing" in out, (out, err)
    assert (root / LOG_REL).read_bytes() == log_before


def test_another_bandits_file_where_an_export_was_is_imported_as_any_file(tmp_path: Path) -> None:
    """export-gptme wrote out.json; another gptme bandit's file (its own `created`) later took its place.
    Its import was refused for ever ("would count the log's evidence twice"): the copy kept of the export
    compared it with numbers it had nothing to do with. It is imported as any gptme file is."""
    events = [{"type": "session", "session_id": "s1", "base_reward": 0.8, "lessons": [{"path": GIT, "salience": 1.0}]}]
    root = make_workspace(tmp_path, BASIC_LESSONS, events=events, journals={"j.txt": BASIC_JOURNAL})
    out_file = tmp_path / "out.json"
    ok("export-gptme", "--workspace", str(root), str(out_file))
    other = gptme_file()
    del other["arms"][GIT]  # an arm the export wrote is not in it (the export's check would refuse it)
    out_file.write_text(json.dumps(other))
    ok("import-gptme", "--workspace", str(root), str(out_file))
    code, out, err = run_cli("status", "--workspace", str(root), "--json")
    assert code == 0, err
    rows = {r["path"]: (r["alpha"], r["beta"], r["n"]) for r in json.loads(out)["lessons"] if r["n"]}
    # by hand: quote's prior from the file, Beta(1.5, 2.5) n 2; git as the log says, s1 0.8: Beta(1.8, 1.2) n 1
    assert rows == {GIT: pytest.approx((1.8, 1.2, 1)), QUOTE: pytest.approx((1.5, 2.5, 2))}


def test_exporting_again_over_gptmes_updates_refuses_until_they_are_imported(tmp_path: Path) -> None:
    """export-gptme onto a file it wrote before and gptme's bandit updated since overwrote gptme's
    sessions there without a word. It refuses (one line, nothing written) until they are imported."""
    events = [{"type": "session", "session_id": "s1", "base_reward": 0.8, "lessons": [{"path": GIT, "salience": 1.0}]}]
    root = make_workspace(tmp_path, BASIC_LESSONS, events=events, journals={"j.txt": BASIC_JOURNAL})
    out_file = tmp_path / "out.json"
    ok("export-gptme", "--workspace", str(root), str(out_file))
    ok("export-gptme", "--workspace", str(root), str(out_file))  # unchanged since: written again
    state = json.loads(out_file.read_text())
    arm = state["arms"][GIT]  # gptme's session there (1.0: alpha + 1, a selection, a reward)
    arm.update(alpha=arm["alpha"] + 1.0, total_selections=arm["total_selections"] + 1)
    arm.update(total_rewards=arm["total_rewards"] + 1)
    state["total_sessions"] += 1
    out_file.write_text(json.dumps(state))
    before = out_file.read_bytes()
    code, out, err = run_cli("export-gptme", "--workspace", str(root), str(out_file))
    assert code == 1 and len(err.strip().splitlines()) == 1 and "import-gptme" in err, (out, err)
    assert out_file.read_bytes() == before
    ok("import-gptme", "--workspace", str(root), str(out_file))
    ok("export-gptme", "--workspace", str(root), str(out_file))
    # by hand: s1 0.8 -> Beta(1.8, 1.2), plus gptme's +1/+0 logged as increments: alpha 2.8
    assert json.loads(out_file.read_text())["arms"][GIT]["alpha"] == pytest.approx(2.8)


@pytest.mark.parametrize("own_keys_only", [True, False])
def test_a_session_gptme_counts_on_an_export_without_moving_an_arm_is_never_taken_back(
    tmp_path: Path, own_keys_only: bool
) -> None:
    """gptme's bandit, on a file export-gptme wrote in another folder, counts a session whose active arms
    were none (total_sessions += 1, no arm moved), saved with its own keys (our stamp gone) or all of
    them. import-gptme logged nothing ("holds nothing new", or "agrees with the log"), and the next
    export wrote the count back down."""
    events = [{"type": "session", "session_id": "s1", "base_reward": 0.8, "lessons": [{"path": GIT, "salience": 1.0}]}]
    root = make_workspace(tmp_path, BASIC_LESSONS, events=events, journals={"j.txt": BASIC_JOURNAL})
    out_file = tmp_path / "out.json"
    ok("export-gptme", "--workspace", str(root), str(out_file))
    state = json.loads(out_file.read_text())
    assert state["total_sessions"] == 1  # s1
    state["total_sessions"] += 1  # gptme's session that moved no arm: 2
    if own_keys_only:
        state = {k: state[k] for k in ("arms", "total_sessions", "created", "last_updated")}
    out_file.write_text(json.dumps(state))
    ok("import-gptme", "--workspace", str(root), str(out_file))
    ok("import-gptme", "--workspace", str(root), str(out_file))  # imported again: counted once
    ok("export-gptme", "--workspace", str(root), str(out_file))
    assert json.loads(out_file.read_text())["total_sessions"] == 2
    record(root, "s2", QUOTE)  # one more graded session of ours: 3
    assert on_disk(root)["total_sessions"] == 3


def test_exporting_again_over_a_session_gptme_counted_alone_refuses_until_it_is_imported(tmp_path: Path) -> None:
    events = [{"type": "session", "session_id": "s1", "base_reward": 0.8, "lessons": [{"path": GIT, "salience": 1.0}]}]
    root = make_workspace(tmp_path, BASIC_LESSONS, events=events, journals={"j.txt": BASIC_JOURNAL})
    out_file = tmp_path / "out.json"
    ok("export-gptme", "--workspace", str(root), str(out_file))
    state = json.loads(out_file.read_text())
    state["total_sessions"] += 1  # gptme's session there, no arm moved
    out_file.write_text(json.dumps(state))
    before = out_file.read_bytes()
    code, out, err = run_cli("export-gptme", "--workspace", str(root), str(out_file))
    assert code == 1 and len(err.strip().splitlines()) == 1 and "import-gptme" in err, (out, err)
    assert out_file.read_bytes() == before


def test_increments_of_sessions_alone_name_no_arm_and_other_priors_still_need_arms() -> None:
    counted = decode_event(json.dumps({"type": "prior", "increments": True, "arms": {}, "sessions": 2}))
    assert isinstance(counted, PriorEvent) and (counted.arms, counted.sessions) == ({}, 2)
    for bad in ({"increments": True, "arms": {}}, {"arms": {}, "sessions": 2}, {"increments": True, "sessions": 0}):
        with pytest.raises(InvalidEvent, match="arms"):
            decode_event(json.dumps({"type": "prior", **bad}))


def test_an_export_imported_back_after_the_caches_were_deleted_counts_once(tmp_path: Path) -> None:
    """The copy of what export-gptme wrote was kept under .cache/, which the format says may be deleted at
    any time: deleted between the export and the import of gptme's update of that file, the import took the
    file for another bandit's and counted the log's evidence in it twice (git Beta(3.6, 1.4) n 3)."""
    import shutil

    events = [{"type": "session", "session_id": "s1", "base_reward": 0.8, "lessons": [{"path": GIT, "salience": 1.0}]}]
    root = make_workspace(tmp_path, BASIC_LESSONS, events=events, journals={"j.txt": BASIC_JOURNAL})
    out_file = tmp_path / "out.json"
    ok("export-gptme", "--workspace", str(root), str(out_file))
    shutil.rmtree(root / STATE_REL.parent / ".cache", ignore_errors=True)
    state = json.loads(out_file.read_text())
    state["arms"][GIT].update(alpha=state["arms"][GIT]["alpha"] + 1.0, total_selections=2)  # gptme's session
    state["total_sessions"] += 1
    out_file.write_text(json.dumps({k: state[k] for k in ("arms", "total_sessions", "created", "last_updated")}))
    ok("import-gptme", "--workspace", str(root), str(out_file))
    code, out, err = run_cli("status", "--workspace", str(root), "--json")
    assert code == 0, err
    rows = {r["path"]: (r["alpha"], r["beta"], r["n"]) for r in json.loads(out)["lessons"] if r["n"]}
    # by hand: s1 0.8 at salience 1 -> Beta(1.8, 1.2) n 1, plus gptme's +1/+0 and one selection
    assert rows == {GIT: pytest.approx((2.8, 1.2, 2))}


def test_an_export_changed_otherwise_is_refused_and_the_message_names_the_way_out(tmp_path: Path) -> None:
    """A file export-gptme wrote, changed since in a way gptme's bandit's updates do not (a number gone down, its
    `created` kept: gptme's `decay`, or its `prune` then a session making the arm again): importing it is refused in
    one line, nothing logged. The refusal said to remove its `created` and import it as another bandit's file: the
    file grew from our export, so that counted the log's evidence twice (git's prior Beta(1.0, 1.2) n 1, the export
    holding s1, then s1 again: Beta(1.8, 1.4) n 2 for one session). It now says to delete the file and export to it
    again, which counts nothing twice: git Beta(1.8, 1.2) n 1 (s1 0.8 at salience 1), the file the same."""
    events = [{"type": "session", "session_id": "s1", "base_reward": 0.8, "lessons": [{"path": GIT, "salience": 1.0}]}]
    root = make_workspace(tmp_path, BASIC_LESSONS, events=events, journals={"j.txt": BASIC_JOURNAL})
    out_file = tmp_path / "out.json"
    ok("export-gptme", "--workspace", str(root), str(out_file))
    state = json.loads(out_file.read_text())
    state["arms"][GIT]["alpha"] = 1.0  # down from 1.8: not an update on top of the export
    out_file.write_text(json.dumps(state))
    log = (root / LOG_REL).read_bytes()
    code, out, err = run_cli("import-gptme", "--workspace", str(root), str(out_file))
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1, (out, err)
    assert "delete the file and export to it again" in err and "counting ours twice" in err, err
    assert (root / LOG_REL).read_bytes() == log
    out_file.unlink()  # as the message says
    ok("export-gptme", "--workspace", str(root), str(out_file))
    code, out, err = run_cli("status", "--workspace", str(root), "--json")
    rows = {r["path"]: (r["alpha"], r["beta"], r["n"]) for r in json.loads(out)["lessons"] if r["n"]}
    assert rows == {GIT: pytest.approx((1.8, 1.2, 1))}, err
    arm = json.loads(out_file.read_text())["arms"][GIT]
    assert (arm["alpha"], arm["beta"], arm["total_selections"]) == pytest.approx((1.8, 1.2, 1))
