"""Randomized dropout (lesson_credit.core.analysis.dropout): gptme's log format read into per-lesson kept-minus-withheld
estimates, by hand; bounded reading. `select --dropout` and `loo --json` are in tests/cli/test_dropout_cli.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from scipy import stats

from lesson_credit.core.analysis import dropout as dropout_mod
from lesson_credit.core.analysis.dropout import read_dropout_logs
from lesson_credit.core.workspace import Workspace
from tests.support.dropout_logs import LESSONS, A, B, C, dropout_workspace, gptme_line, write_logs
from tests.support.engine_helpers import fixed_clock, make_workspace, session


def test_dropout_log_in_gptmes_shape_gives_the_hand_computed_estimate(tmp_path: Path) -> None:
    root = dropout_workspace(tmp_path)
    ws = Workspace(root, clock=fixed_clock)
    rows = {r.path: r for r in ws.loo(write=False)}
    a = rows[A].randomized
    assert a is not None
    assert (a.n_kept, a.n_withheld) == (2, 3)
    # kept 0.8 0.6 (mean 0.7, variance 0.02); withheld 0.7 0.4 0.5 (s3's first call withheld A; mean
    # 0.53333, variance 0.023333) -> +0.16667
    assert a.estimate == pytest.approx(0.7 - 1.6 / 3)
    # moderated variances: pooled over the five graded dropout sessions (mean 0.6) = 0.1 / 4 = 0.025
    # kept (0.02 + 4 * 0.025) / 5 = 0.024, /2 = 0.012; withheld (2 * 0.023333 + 0.1) / 6 = 0.024444, /3 = 0.0081481
    # se = sqrt(0.0201481) = 0.141944; df = 0.0201481^2 / (0.012^2 / 5 + 0.0081481^2 / 6) = 10.183
    half = stats.t.ppf(0.975, 10.183) * 0.141944
    assert a.ci_low == pytest.approx(0.7 - 1.6 / 3 - half, rel=1e-4)
    assert a.ci_high == pytest.approx(0.7 - 1.6 / 3 + half, rel=1e-4)
    b = rows.get(B)
    assert b is None or b.randomized is None or (b.randomized.estimate is None and b.randomized.n_withheld == 1)
    c_trial = rows[C].randomized
    assert c_trial is not None and c_trial.n_withheld == 0
    # 2 kept against 3 withheld: too few for the trial to be the headline (MIN_RANDOMIZED each); it stays beside it
    joint = rows[A].joint
    a_effect = rows[A].effect
    assert joint is not None and a_effect is not None and a_effect.method == "joint"
    assert rows[A].headline == joint.estimate
    assert ws.loo_run(write=False)[1]["dropout_sessions"] == 7


def test_a_lesson_withheld_at_first_and_kept_when_trouble_came_is_a_withheld_session(tmp_path: Path) -> None:
    # gptme logs a line per auto-include call and offers a withheld lesson again when its keywords come
    # up again: in a session going badly, A gets more coins, and one of them keeps it. No effect here:
    # four good sessions (0.8), one call each, A kept in two and withheld in two; four in trouble (0.2),
    # A's first coin kept it in two and withheld it in two, and a later call in trouble kept it in those
    # two. The first coins: kept 0.8 0.8 0.2 0.2 against withheld 0.8 0.8 0.2 0.2, a difference of 0.
    # Counting a lesson kept in any call kept: 0.8 0.8 0.2 0.2 0.2 0.2 (mean 0.4) against 0.8 0.8: -0.4.
    good, bad = ["g1", "g2", "g3", "g4"], ["t1", "t2", "t3", "t4"]
    injected = {"g1", "g2", *bad}  # the sessions A was in, by some call
    events = [session(sid, 0.8 if sid in good else 0.2, {A if sid in injected else C: 0.5}) for sid in good + bad]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    write_logs(
        root,
        {
            "g1": [gptme_line("g1", [A], [])],
            "g2": [gptme_line("g2", [A], [])],
            "g3": [gptme_line("g3", [], [A])],
            "g4": [gptme_line("g4", [], [A])],
            "t1": [gptme_line("t1", [A], [])],
            "t2": [gptme_line("t2", [A], [])],
            "t3": [gptme_line("t3", [], [A]), gptme_line("t3", [], [A]), gptme_line("t3", [A], [])],
            "t4": [gptme_line("t4", [], [A]), gptme_line("t4", [A], [])],
        },
    )
    a = {r.path: r for r in Workspace(root, clock=fixed_clock).loo(write=False)}[A].randomized
    assert a is not None and (a.n_kept, a.n_withheld) == (4, 4)
    assert a.estimate == pytest.approx(0.0, abs=1e-12)


def test_reading_is_bounded_and_reports_bad_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "drop"
    folder.mkdir()
    (folder / "ok.jsonl").write_text(json.dumps(gptme_line("ok", ["a.md"], ["b.md"])) + "\nnot json\n[1]\n")
    (folder / "big.jsonl").write_text(json.dumps(gptme_line("big", ["a.md"], [])) + "\n" + " " * 600)
    (folder / "notes.txt").write_text("ignored: not .jsonl")
    target = tmp_path / "elsewhere.jsonl"
    target.write_text(json.dumps(gptme_line("link", ["a.md"], [])) + "\n")
    os.symlink(target, folder / "link.jsonl")
    os.mkfifo(folder / "fifo.jsonl")
    monkeypatch.setattr(dropout_mod, "MAX_FILE_BYTES", 400)
    log = read_dropout_logs(folder, lambda raw: raw.rsplit("lessons/", 1)[-1])
    assert set(log.sessions) == {"ok"}
    assert log.sessions["ok"].kept == {"a.md"} and log.sessions["ok"].withheld == {"b.md"}
    text = "\n".join(log.problems)
    for name in ("big.jsonl", "link.jsonl", "fifo.jsonl", "ok.jsonl:2", "ok.jsonl:3"):
        assert name in text
    # a link is said to be one (O_NOFOLLOW's ELOOP read "Too many levels of symbolic links": no loop here)
    assert f"{folder / 'link.jsonl'}: a symbolic link, not followed; skipped" in log.problems
    assert read_dropout_logs(tmp_path / "missing", str).sessions == {}


def test_a_session_whose_lines_name_no_kept_lessons_is_not_a_trial(tmp_path: Path) -> None:
    # gptme-contrib's Claude Code hook logs only what it withheld (no `matched`), and flips a coin again for a
    # lesson it injected at an earlier call: a lesson kept then withheld later reads as withheld first. Its
    # sessions have no kept side either, so in a log beside gptme's they would fill only the withheld side.
    hook = {k: v for k, v in gptme_line("h1", [], [A]).items() if k != "matched"}
    folder = write_logs(tmp_path, {"g1": [gptme_line("g1", [A], [B])], "h1": [hook, hook]})
    log = read_dropout_logs(folder, lambda raw: raw.rsplit("lessons/", 1)[-1])
    assert set(log.sessions) == {"g1"}
    (problem,) = log.problems
    assert "1 session" in problem and "matched" in problem and "h1" in problem


def test_a_second_selects_coins_are_the_lines_the_reader_counts_for_the_session(tmp_path: Path) -> None:
    """A line in `x.jsonl` whose session_id is not a string (a number) counts for the file's session, `x`, as
    a line without one does; the coins a second select keeps skipped it, so the select drew its own for
    lessons the log already counts withheld."""
    from lesson_credit.core.analysis.dropout import session_coins

    folder = tmp_path / "lesson-dropout"
    folder.mkdir()
    line = {"session_id": 123, "epsilon": 0.5, "withheld": [{"path": "a.md"}], "matched": [{"path": "b.md"}]}
    (folder / "x.jsonl").write_text(json.dumps(line) + "\n")
    read = read_dropout_logs(folder, lambda raw: raw).sessions["x"]
    assert (set(read.kept), set(read.withheld)) == ({"b.md"}, {"a.md"})
    assert session_coins(folder, "x", lambda raw: raw) == {"a.md": (False, 0.5), "b.md": (True, 0.5)}  # (kept, epsilon)


@pytest.mark.parametrize("earlier", [False, True], ids=["first-line", "after-a-line"])
def test_taking_back_a_trial_line_finds_it_after_a_line_gptme_appended_just_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, earlier: bool
) -> None:
    """gptme's auto-include appends without our lock: a line of its landing between our opening the log and
    our (O_APPEND) write puts ours after it, not where the file ended when we opened it. Taking ours back
    removes ours and keeps gptme's."""
    directory = tmp_path / "lesson-dropout"
    log = directory / "t1.jsonl"
    before = (json.dumps(gptme_line("t1", [A], [])) + "\n").encode() if earlier else b""
    if earlier:
        directory.mkdir()
        log.write_bytes(before)
    theirs = (json.dumps(gptme_line("t1", [B], [C])) + "\n").encode()
    ours = dropout_mod.dropout_record("t1", 0.5, [(A, "a")], [(B, "b")], 1764500001.0)
    real_write = os.write
    raced: list[bool] = []

    def gptme_first(fd: int, data: bytes) -> int:
        if not raced:  # (once: the take-back writes too)
            raced.append(True)
            with open(log, "ab") as handle:  # gptme's line, just before ours
                handle.write(theirs)
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", gptme_first)
    take_back = dropout_mod.append_dropout_record(directory, "t1", ours)
    assert log.read_bytes() == before + theirs + ours  # (ours landed after gptme's)
    take_back()
    assert log.read_bytes() == before + theirs  # ours gone, gptme's kept, in order


def test_a_byte_order_mark_at_a_dropout_files_start_is_no_data(tmp_path: Path) -> None:
    """A dropout file saved by an editor on Windows starts with a UTF-8 byte order mark. Before, its first line
    was "invalid JSON": skipped, so the session's first coin for A (withheld) was lost and the second line's
    (kept, after trouble brought A up again) counted, on the kept side; a second select kept that coin too. By
    hand: line 1 withholds A at epsilon 0.3 and keeps B; line 2 keeps A. A is withheld, B kept, nothing skipped.
    A mark anywhere else is no part of the format: that line is still not JSON."""
    from lesson_credit.core.analysis.dropout import session_coins

    folder = tmp_path / "lesson-dropout"
    folder.mkdir()
    first, second = gptme_line("s1", [B], [A]), gptme_line("s1", [A], [])
    (folder / "s1.jsonl").write_bytes(b"\xef\xbb\xbf" + (json.dumps(first) + "\n" + json.dumps(second) + "\n").encode())

    def to_id(raw: str) -> str:
        return raw.rsplit("lessons/", 1)[-1]

    log = read_dropout_logs(folder, to_id)
    assert log.problems == ()
    assert (set(log.sessions["s1"].kept), set(log.sessions["s1"].withheld)) == ({B}, {A})
    assert session_coins(folder, "s1", to_id) == {A: (False, 0.3), B: (True, 0.3)}  # (kept, epsilon)
    (folder / "s2.jsonl").write_bytes((json.dumps(gptme_line("s2", [A], [])) + "\n").encode() + b"\xef\xbb\xbf{}\n")
    (problem,) = read_dropout_logs(folder, to_id).problems
    assert problem.startswith(f"{folder / 's2.jsonl'}:2: "), problem


def test_a_trial_line_after_a_line_cut_mid_write_is_a_line_of_its_own(tmp_path: Path) -> None:
    """gptme killed while appending leaves its line cut, without a newline. Our line appended right after it made one
    line of both, not JSON: our coins (A withheld at 0.5, B kept) were lost to `loo` and to a second select, which
    drew new ones. Now ours starts on a line of its own; the cut line alone is skipped (and said). Taking ours back
    keeps the newline that ended the cut line, so no line appended later (gptme's next) joins it."""
    from lesson_credit.core.analysis.dropout import session_coins

    folder = tmp_path / "lesson-dropout"
    folder.mkdir()
    log = folder / "t2.jsonl"
    whole = (json.dumps(gptme_line("t2", [C], [])) + "\n").encode()
    cut = json.dumps(gptme_line("t2", [A], [B])).encode()[:40]
    log.write_bytes(whole + cut)
    ours = dropout_mod.dropout_record("t2", 0.5, [(B, "b")], [(A, "a")], 1764500001.0)
    take_back = dropout_mod.append_dropout_record(folder, "t2", ours)

    def to_id(raw: str) -> str:
        return raw.rsplit("lessons/", 1)[-1]

    read = read_dropout_logs(folder, to_id)
    assert (set(read.sessions["t2"].kept), set(read.sessions["t2"].withheld)) == ({B, C}, {A})
    (problem,) = read.problems
    assert problem.startswith(f"{log}:2: "), problem  # the cut line, alone
    assert session_coins(folder, "t2", to_id) == {A: (False, 0.5), B: (True, 0.5), C: (True, 0.3)}
    take_back()
    assert log.read_bytes() == whole + cut + b"\n"


def test_a_line_gptme_appended_after_a_nul_padded_crashed_tail_keeps_its_coins(tmp_path: Path) -> None:
    """A crash mid-append can leave the file's tail as NUL bytes (the size written, the data not: ext4's delayed
    allocation), and gptme appends its next line right after them, without a newline first. Before, that line read
    as one that is no JSON (its NULs first): its coins lost to `loo`. Its leading NULs are no data now. A tail of
    NULs alone stays a line that is no JSON, said."""
    folder = tmp_path / "lesson-dropout"
    folder.mkdir()
    first = json.dumps(gptme_line("t1", ["a.md"], [])).encode() + b"\n"
    second = json.dumps(gptme_line("t1", ["c.md"], ["b.md"])).encode() + b"\n"
    (folder / "t1.jsonl").write_bytes(first + b"\0" * 64 + second)
    (folder / "t2.jsonl").write_bytes(json.dumps(gptme_line("t2", ["a.md"], ["b.md"])).encode() + b"\n" + b"\0" * 8)
    log = read_dropout_logs(folder, lambda raw: raw.rsplit("lessons/", 1)[-1])
    assert log.sessions["t1"].kept == {"a.md", "c.md"} and log.sessions["t1"].withheld == {"b.md"}
    assert [problem for problem in log.problems if "t1.jsonl" in problem] == []
    assert log.sessions["t2"].withheld == {"b.md"}
    assert [problem.startswith(f"{folder / 't2.jsonl'}:2: ") for problem in log.problems] == [True], log.problems
