"""Randomized dropout through the CLI: `select --dropout` writes gptme's log format (and refuses ids
that cannot name a log file); `loo --json` carries the randomized estimate where dropout logs exist."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core import attribution
from lesson_credit.core.workspace import Workspace
from tests.support.cli_run import run_cli
from tests.support.dropout_logs import LESSONS, A, B, C, dropout_workspace, gptme_line, write_logs
from tests.support.engine_helpers import fixed_clock, make_workspace, session


def test_loo_json_carries_randomized_only_where_dropout_logs_exist(tmp_path: Path) -> None:
    root = dropout_workspace(tmp_path)
    code, out, err = run_cli("loo", "--workspace", str(root), "--json")
    assert code == 0, err
    rows = {r["lesson"]: r for r in json.loads(out)["results"]}
    # kept 0.8 0.6, withheld 0.7 0.4 0.5 (tests/support/dropout_logs.py): 0.7 - 0.5333
    assert rows[A]["randomized"]["estimate"] == pytest.approx(0.7 - 1.6 / 3)
    assert set(rows[A]["randomized"]) == {
        "estimate", "ci_low", "ci_high", "n_kept", "n_withheld", "p_value", "n_unused", "strata"
    }  # fmt: skip
    assert (rows[A]["randomized"]["n_unused"], rows[A]["randomized"]["strata"]) == (0, 1)  # (every line at 0.3)
    plain = make_workspace(tmp_path, lessons=LESSONS, events=[session("x", 0.5, {A: 0.5})], name="plain")
    code, out, _ = run_cli("loo", "--workspace", str(plain), "--json", "--no-write")
    assert code == 0
    assert all("randomized" not in r for r in json.loads(out)["results"])


def test_select_dropout_writes_gptmes_format(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, lessons=LESSONS)
    context = tmp_path / "ctx.txt"
    context.write_text("alpha beta gamma")
    code, out, err = run_cli(
        "select", "-w", str(root), "--context", str(context), "--session-id", "t1", "--seed", "3", "--dropout", "1",
        "--json",
    )  # fmt: skip
    assert code == 0, err
    payload = json.loads(out)
    assert payload["selected"] == [] and sorted(payload["withheld"]) == sorted([A, B, C])
    assert all(p == 0.0 for p in payload["propensity"].values())  # withheld for sure: never injected
    line = json.loads((root / "state" / "lesson-dropout" / "t1.jsonl").read_text())
    assert line["session_id"] == "t1" and line["epsilon"] == 1.0 and line["matched"] == []
    assert sorted(w["path"] for w in line["withheld"]) == sorted([A, B, C])
    assert {w["title"] for w in line["withheld"]} == {f"Lesson {p}" for p in (A, B, C)}
    assert isinstance(line["ts"], float)
    ws = Workspace(root, clock=fixed_clock)
    assert attribution.dropout_log(ws.root, ws.library()).sessions["t1"].withheld == {A, B, C}
    # epsilon 0.5 over many draws: about half withheld, the selection event shows only the kept ones
    withheld = kept = 0
    for i in range(40):
        code, out, err = run_cli(
            "select", "-w", str(root), "--context", str(context), "--session-id", f"h{i}", "--seed", str(i),
            "--dropout", "0.5", "--json",
        )  # fmt: skip
        assert code == 0, err
        payload = json.loads(out)
        withheld += len(payload["withheld"])
        kept += len(payload["selected"])
        assert math.isclose(sum(payload["propensity"].values()), 3 * 0.5, rel_tol=1e-9)  # k >= 3: all chosen
    assert kept + withheld == 120 and 40 < withheld < 80
    assert not (root / "state" / "lesson-dropout" / "nodrop.jsonl").exists()
    code, _, _ = run_cli("select", "-w", str(root), "--context", str(context), "--session-id", "nodrop")
    assert code == 0 and not (root / "state" / "lesson-dropout" / "nodrop.jsonl").exists()


@pytest.mark.parametrize("bad", ["a/b", "..", "x\\y"])
def test_select_dropout_refuses_ids_that_cannot_name_a_file(tmp_path: Path, bad: str) -> None:
    root = make_workspace(tmp_path, lessons=LESSONS)
    context = tmp_path / "ctx.txt"
    context.write_text("alpha")
    log = root / "state" / "lesson-thompson" / "sessions.jsonl"
    args = ("--context", str(context), "--session-id", bad, "--dropout", "0.2")
    code, out, err = run_cli("select", "-w", str(root), *args)
    assert code == 1 and "dropout log" in err and len(err.strip().splitlines()) == 1
    assert not log.exists() or b"selection" not in log.read_bytes()
    with pytest.raises(SystemExit) as usage:
        run_cli("select", "-w", str(root), "--context", str(context), "--dropout", "1.5")
    assert usage.value.code == 2


def test_a_failed_select_leaves_no_trial_line_and_its_retry_leaves_one(tmp_path: Path) -> None:
    """A `select --dropout` whose selection event is not written leaves no trial line (a retried
    hook would otherwise log the session's trial twice, kept in one draw and withheld in another)."""
    root = make_workspace(tmp_path, lessons=LESSONS, events=[session("x", 0.5, {A: 0.5})])
    context = tmp_path / "ctx.txt"
    context.write_text("alpha beta gamma")
    log = root / "state" / "lesson-thompson" / "sessions.jsonl"
    trial = root / "state" / "lesson-dropout" / "t1.jsonl"
    outside = tmp_path / "elsewhere.jsonl"  # the log linked out of the workspace: read, but never appended to
    outside.write_bytes(log.read_bytes())
    log.unlink()
    log.symlink_to(outside)
    args = ("select", "-w", str(root), "--context", str(context), "--session-id", "t1", "--seed", "3",
            "--dropout", "0.5", "--json")  # fmt: skip
    for _ in range(2):  # the hook retries while the failure lasts
        code, out, err = run_cli(*args)
        assert code == 1 and "outside the workspace" in err and len(err.strip().splitlines()) == 1, err
        assert not trial.exists()  # no trial line, not even an empty file
        assert b"t1" not in outside.read_bytes()
    log.unlink()
    log.write_bytes(outside.read_bytes())  # the failure passes: the retry writes one trial and one event
    code, out, err = run_cli(*args)
    assert code == 0, err
    lines = trial.read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["session_id"] == "t1"
    assert log.read_text().count('"t1"') == 1


def test_loo_and_lint_say_which_dropout_lines_were_not_used(tmp_path: Path) -> None:
    root = dropout_workspace(tmp_path)
    folder = root / "state" / "lesson-dropout"
    with (folder / "s2.jsonl").open("a", encoding="utf-8") as handle:
        handle.write("not json\n")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    code, out, err = run_cli("loo", "--workspace", str(root), "--no-write")
    assert code == 0
    assert "s2.jsonl:2" in err and err.count("\n") == len(err.splitlines())  # one line each, on stderr
    code, out, _ = run_cli("loo", "--workspace", str(root), "--json", "--no-write")
    assert code == 0 and any("s2.jsonl:2" in w for w in json.loads(out)["warnings"])
    code, out, _ = run_cli("lint", "--workspace", str(root), "--json")
    findings = {f["code"]: f for f in json.loads(out)["findings"]}
    assert "s2.jsonl:2" in json.dumps(findings["dropout-lines-skipped"])
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # read, never changed


def test_a_select_run_twice_for_a_session_keeps_the_first_trials_coins(tmp_path: Path) -> None:
    """A hook run twice: two `select --dropout 0.5 --session-id x`, then `record` with the second draw's
    lessons. The dropout log counts each lesson's first coin, so on the old code a lesson withheld by the
    first draw and kept by the second was injected (the record's) yet counted withheld. Every seed pair below
    is tried: the second draw now withholds exactly what the first withheld and keeps what it kept (the coins
    of lessons the first did not name are its own), and loo's count of kept and withheld agrees with what the
    record injected."""
    root = make_workspace(tmp_path, lessons=LESSONS)
    context = tmp_path / "ctx.txt"
    context.write_text("alpha beta gamma")
    for first, second in ((1, 7), (2, 5), (3, 4), (6, 9)):
        sid = f"x{first}"
        drawn = []
        for seed in (first, second):
            args = ["-w", str(root), "--context", str(context), "--session-id", sid, "--seed", str(seed)]
            code, out, err = run_cli("select", *args, "--dropout", "0.5", "--json")
            assert code == 0, err
            payload = json.loads(out)
            drawn.append((set(payload["selected"]), set(payload["withheld"])))
        (kept1, withheld1), (kept2, withheld2) = drawn
        assert kept1 | withheld1 == kept2 | withheld2 == {A, B, C}  # k >= 3: every lesson matched, each a coin
        assert (kept2, withheld2) == (kept1, withheld1)
        ws = Workspace(root, clock=fixed_clock)
        trial = attribution.dropout_log(ws.root, ws.library()).sessions[sid]
        assert (set(trial.kept), set(trial.withheld)) == (kept2, withheld2)


def test_a_select_without_dropout_after_a_trial_keeps_the_trials_coins(tmp_path: Path) -> None:
    """A hook run twice with its epsilon changed: `select --dropout 0.5`, then `select` (epsilon 0) for the same
    session. The dropout log still holds the first trial, so a lesson it withheld counts as withheld in loo's
    randomized estimate; on the old code the second select (no trial of its own) injected it anyway. It now keeps
    the coins the log decided, whatever its own epsilon, and adds no trial line (epsilon 0 is no trial)."""
    root = make_workspace(tmp_path, lessons=LESSONS)
    context = tmp_path / "ctx.txt"
    context.write_text("alpha beta gamma")
    withheld_seen = 0
    for seed in (1, 2, 3, 6):
        sid = f"e{seed}"
        args = ["-w", str(root), "--context", str(context), "--session-id", sid, "--seed", str(seed), "--json"]
        code, out, err = run_cli("select", *args, "--dropout", "0.5")
        assert code == 0, err
        first = json.loads(out)
        log_file = root / "state" / "lesson-dropout" / f"{sid}.jsonl"
        lines = log_file.read_bytes()
        code, out, err = run_cli("select", *args)
        assert code == 0, err
        second = json.loads(out)
        assert log_file.read_bytes() == lines  # no trial line of its own
        ws = Workspace(root, clock=fixed_clock)
        trial = attribution.dropout_log(ws.root, ws.library()).sessions[sid]
        assert set(trial.kept) == set(first["selected"]) and set(trial.withheld) == set(first["withheld"])
        assert set(second["selected"]) == set(trial.kept)  # k >= 3: every lesson chosen both times
        assert set(second["withheld"]) == set(trial.withheld)
        withheld_seen += len(trial.withheld)
    assert withheld_seen > 0  # some seed withheld a lesson (else nothing above could differ)


def test_an_offline_select_after_a_trial_keeps_the_trials_coins(tmp_path: Path) -> None:
    """`select --offline-ok` with the store unreachable draws from the last known posteriors, without a trial of
    its own; for a session whose first select logged a trial it injected what that trial withheld (counted
    withheld in loo), as a second select without --dropout did. It keeps the log's coins as well."""
    from lesson_credit.core.offline import select_offline

    root = make_workspace(tmp_path, lessons=LESSONS)
    ws = Workspace(root, clock=fixed_clock)
    withheld_seen = 0
    for seed in (1, 2, 3, 6):
        sid = f"o{seed}"
        first = ws.select("alpha beta gamma", k=3, seed=seed, session_id=sid, dropout=0.5)
        offline = select_offline(ws, "alpha beta gamma", k=3, seed=seed + 10, session_id=sid)
        trial = attribution.dropout_log(ws.root, ws.library()).sessions[sid]
        assert (set(trial.kept), set(trial.withheld)) == (set(first.selected), set(first.withheld))
        # every lesson matched and k = 3: the offline draw chooses all three, then leaves out what the log withheld
        assert (set(offline.selected), set(offline.withheld)) == (set(trial.kept), set(trial.withheld))
        withheld_seen += len(trial.withheld)
    assert withheld_seen > 0


def test_a_select_whose_dropout_log_is_a_symbolic_link_is_refused(tmp_path: Path) -> None:
    """The dropout logs are read as regular files only (a link is skipped), but `select --dropout` wrote its
    trial through a link to another log of the folder, where it counts under its session_id: a second select
    for the session found no coins at the link's name and drew new ones, so the record injected lessons the
    log counted withheld. A trial the reader would not find at its name is not written: one line, nothing
    logged (neither the trial nor the selection)."""
    root = make_workspace(tmp_path, lessons=LESSONS)
    context = tmp_path / "ctx.txt"
    context.write_text("alpha beta gamma")
    folder = root / "state" / "lesson-dropout"
    folder.mkdir(parents=True)
    (folder / "real.jsonl").write_bytes(b"")
    (folder / "x.jsonl").symlink_to("real.jsonl")
    log = root / "state" / "lesson-thompson" / "sessions.jsonl"
    log_before = log.read_bytes() if log.exists() else b""
    args = ["-w", str(root), "--context", str(context), "--session-id", "x", "--seed", "1", "--dropout", "0.5"]
    code, out, err = run_cli("select", *args)
    assert code == 1 and len(err.strip().splitlines()) == 1 and "x.jsonl" in err, (out, err)
    assert (folder / "real.jsonl").read_bytes() == b""
    assert (log.read_bytes() if log.exists() else b"") == log_before


def test_two_selects_for_a_session_at_once_keep_the_coins_logged_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two hooks selecting for one session at once: the other's trial is logged between this select's draw
    (its coins read then: none) and its own logging. On the old code this one logged fresh coins and its
    selection, the one the record takes, injected lessons the log's first line withheld. The coins are read
    again under the log's lock, where the trial is appended."""
    from lesson_credit.core import selection_draw

    root = make_workspace(tmp_path, lessons=LESSONS)
    original = selection_draw.log_draw
    differed = 0
    for first, second in ((1, 7), (2, 5), (3, 4), (6, 9)):
        sid = f"r{first}"
        armed = [True]

        def racing(*args: Any, sid: str = sid, second: int = second, armed: list[bool] = armed, **kwargs: Any) -> Any:
            if armed.pop() if armed else False:  # the other hook's select lands first
                other = Workspace(root, clock=fixed_clock)
                other.select("alpha beta gamma", k=3, seed=second, session_id=sid, dropout=0.5)
            return original(*args, **kwargs)

        monkeypatch.setattr(selection_draw, "log_draw", racing)
        ws = Workspace(root, clock=fixed_clock)
        selection = ws.select("alpha beta gamma", k=3, seed=first, session_id=sid, dropout=0.5)
        trial = attribution.dropout_log(ws.root, ws.library()).sessions[sid]
        assert (set(selection.selected), set(selection.withheld)) == (set(trial.kept), set(trial.withheld))
        alone = Workspace(make_workspace(tmp_path / sid, lessons=LESSONS), clock=fixed_clock)  # its coins, no race
        differed += alone.select("alpha beta gamma", k=3, seed=first, session_id=sid, dropout=0.5).withheld != (
            selection.withheld
        )
    assert differed  # some pair's own coins differ from the first logged (else nothing above could fail)


@pytest.mark.parametrize("earlier", [False, True], ids=["first-line", "after-a-line"])
def test_a_failed_select_takes_back_its_own_trial_line_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, earlier: bool
) -> None:
    """gptme's auto-include appends to the session's dropout log without our lock: a line it appended
    while `select --dropout` was between its trial line and its (failing) selection event stays; only the
    select's own line is taken out (the file was cut back to its size before, or removed, with gptme's line)."""
    from lesson_credit.core.log.eventstore import JsonlStore
    from lesson_credit.core.log.store import StoreError

    root = make_workspace(tmp_path, lessons=LESSONS, events=[session("x", 0.5, {A: 0.5})])
    trial = root / "state" / "lesson-dropout" / "t1.jsonl"
    before = json.dumps(gptme_line("t1", [A], [])) + "\n" if earlier else ""
    if earlier:
        trial.parent.mkdir(parents=True)
        trial.write_text(before)
    theirs = json.dumps(gptme_line("t1", [B], [C])) + "\n"

    def gptme_then_fail(self: JsonlStore, line: bytes) -> None:
        with open(trial, "a") as handle:  # as gptme's _log_dropout appends, mid-select
            handle.write(theirs)
        raise StoreError("the disk is full (a test)")

    monkeypatch.setattr(JsonlStore, "append", gptme_then_fail)
    with pytest.raises(StoreError):
        Workspace(root, clock=fixed_clock).select("alpha beta gamma", session_id="t1", seed=3, dropout=0.5)
    assert trial.read_text() == before + theirs  # ours gone, gptme's kept, in order


def test_a_second_select_whose_coins_were_all_decided_writes_no_trial_line(tmp_path: Path) -> None:
    """A hook run twice with its epsilon raised: `select --dropout 0.5`, then `select --dropout 0.9` for the same
    session, both choosing all three lessons (k >= 3), so the second keeps every coin the first flipped and flips
    none. Before, it still appended a line naming no lesson at epsilon 0.9: a trial at an epsilon at which no coin
    was flipped. The log now holds the first line alone."""
    root = make_workspace(tmp_path, lessons=LESSONS)
    context = tmp_path / "ctx.txt"
    context.write_text("alpha beta gamma")
    args = ["-w", str(root), "--context", str(context), "--session-id", "d1", "--json"]
    code, out, err = run_cli("select", *args, "--seed", "1", "--dropout", "0.5")
    assert code == 0, err
    log_file = root / "state" / "lesson-dropout" / "d1.jsonl"
    lines = log_file.read_bytes()
    assert lines.count(b"\n") == 1
    code, out, err = run_cli("select", *args, "--seed", "7", "--dropout", "0.9")
    assert code == 0, err
    assert set(json.loads(out)["selected"]) | set(json.loads(out)["withheld"]) == {A, B, C}
    assert log_file.read_bytes() == lines
    # a first trial that chose nothing writes its line (gptme's auto-include logs a call that matched nothing)
    context.write_text("nothing matches here")
    code, out, err = run_cli("select", "-w", str(root), "--context", str(context), "--session-id", "d2",
                             "--dropout", "0.5", "--json")  # fmt: skip
    assert code == 0 and json.loads(out)["selected"] == [], err
    line = json.loads((root / "state" / "lesson-dropout" / "d2.jsonl").read_text())
    assert (line["matched"], line["withheld"], line["epsilon"]) == ([], [], 0.5)


def test_a_randomized_estimate_of_a_lesson_in_no_logged_session_is_said(tmp_path: Path) -> None:
    """gptme's auto-include keeps or withholds lessons our log may not list (a hook that records only what `select`
    chose): `loo` gave results for the log's lessons only, so such a lesson's randomized estimate was shown nowhere.
    By hand: B withheld in s1 s2 (0.8 0.6), kept in s3 s4 (0.7 0.4): 0.55 - 0.7 = -0.150, 2 kept, 2 withheld."""
    rewards = {"s1": 0.8, "s2": 0.6, "s3": 0.7, "s4": 0.4}
    root = make_workspace(tmp_path, lessons=LESSONS, events=[session(s, r, {A: 0.5}) for s, r in rewards.items()])
    folder = root / "state" / "lesson-dropout"
    folder.mkdir(parents=True)
    for sid, kept, withheld in (("s1", [A], [B]), ("s2", [A], [B]), ("s3", [A, B], []), ("s4", [A, B], [])):
        (folder / f"{sid}.jsonl").write_text(json.dumps(gptme_line(sid, kept, withheld)) + "\n", encoding="utf-8")
    code, out, err = run_cli("loo", "--workspace", str(root), "--json", "--no-write")
    assert code == 0, err
    payload = json.loads(out)
    assert B not in {r["lesson"] for r in payload["results"]}  # no row: the log has no session of it
    (said,) = [w for w in payload["warnings"] if B in w]
    # one line that says plainly why there is no row, the folder named as in the workspace
    assert said == (
        f"state/lesson-dropout: 1 lesson has a randomized estimate but no session of the log names it, so `loo` has "
        f"no row for it: {B} -0.150 (2 kept, 2 withheld); record the lessons gptme includes (`record --during`)"
    )
    assert said in payload["meta"]["dropout_problems"]
    code, _, err = run_cli("loo", "--workspace", str(root), "--no-write")
    assert code == 0 and said in err


def test_coins_at_an_epsilon_that_never_withheld_are_shown_unused(tmp_path: Path) -> None:
    """A lesson kept by all 25 of its coins at epsilon 0.1, never withheld: no stratum has both, so the estimate counts
    none (0 kept, 0 withheld) and all 25 are unused. The table and the dashboard's panel showed `0/0` and "kept 0,
    withheld 0" alone, as if it had never been flipped for (before the estimate was stratified: 25/0)."""
    from lesson_credit.tui.loo_text import describe

    sessions = [f"s{i:02d}" for i in range(25)]
    events = [session(sid, round(0.3 + 0.02 * i, 2), {A: 0.5, C: 0.5}) for i, sid in enumerate(sessions)]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    write_logs(root, {sid: [gptme_line(sid, [A], [], eps=0.1)] for sid in sessions})
    code, out, err = run_cli("loo", "--workspace", str(root), "--no-write", "--json")
    assert code == 0, err
    row = next(r for r in json.loads(out)["results"] if r["lesson"] == A)
    assert (row["randomized"]["n_kept"], row["randomized"]["n_withheld"], row["randomized"]["n_unused"]) == (0, 0, 25)
    code, out, err = run_cli("loo", "--workspace", str(root), "--no-write")
    assert code == 0, err
    line = next(text for text in out.splitlines() if text.startswith(A))
    assert " 0/0 +25 unused " in line, line
    result = next(r for r in Workspace(root).loo(write=False) if r.path == A)
    text = describe(result).plain
    assert "kept 0, withheld 0, 25 unused (none kept or none withheld at their epsilon)" in text, text
