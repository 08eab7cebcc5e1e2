"""A lesson named in another Unicode form than its file's: `café.md` with é as one code point (NFC, U+00E9)
and with an e and a combining accent (NFD, U+0065 U+0301) look alike, so a lesson typed in either form is
the library's lesson (a record logs the library's id and says so), and a lesson logged in both forms is one arm."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lesson_credit.core.workspace import Workspace
from tests.support.cli_run import run, run_json
from tests.support.engine_helpers import LOG_REL, make_workspace, session

NFC = "caf\u00e9.md"
NFD = "cafe\u0301.md"


def workspace(tmp_path: Path, file_name: str) -> Path:
    (tmp_path / "lessons").mkdir()
    (tmp_path / "lessons" / file_name).write_text("---\nmatch:\n  keywords: [deploy]\n---\n# Café\n", encoding="utf-8")
    (tmp_path / "j.md").write_text("deployed\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(("library", "typed"), [(NFC, NFD), (NFD, NFC)], ids=["file-NFC", "file-NFD"])
def test_record_logs_the_librarys_id_for_a_lesson_typed_in_the_other_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], library: str, typed: str
) -> None:
    ws = workspace(tmp_path, library)
    argv = ["record", "-w", str(ws), "--session-id", "s1", "--journal", str(ws / "j.md"), "--reward", "0.5"]
    code, _, err = run(capsys, *argv, "--lessons", typed)
    assert code == 0, err
    (event,) = [json.loads(line) for line in (ws / LOG_REL).read_text(encoding="utf-8").splitlines()]
    assert [entry["path"] for entry in event["lessons"]] == [library]  # the library's code points, not the typed
    typed_form, library_form = ("NFD", "NFC") if library == NFC else ("NFC", "NFD")
    assert (
        f"warning: lesson {typed!r} ({typed_form}) is logged as the library's {library!r} ({library_form}): "
        "the same name in another Unicode form"
    ) in err


def test_a_lesson_in_both_forms_in_the_library_is_taken_as_typed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # two files whose names differ only in form (a file system that keeps names as given): each its own lesson
    ws = workspace(tmp_path, NFC)
    (ws / "lessons" / NFD).write_text("---\nmatch:\n  keywords: [deploy]\n---\n# Other\n", encoding="utf-8")
    argv = ["record", "-w", str(ws), "--session-id", "s1", "--journal", str(ws / "j.md"), "--reward", "0.5"]
    code, _, err = run(capsys, *argv, "--lessons", NFD)
    assert (code, "warning" in err) == (0, False), err
    (event,) = [json.loads(line) for line in (ws / LOG_REL).read_text(encoding="utf-8").splitlines()]
    assert [entry["path"] for entry in event["lessons"]] == [NFD]


def test_sessions_and_explain_find_a_lesson_typed_in_the_other_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = workspace(tmp_path, NFC)
    argv = ["record", "-w", str(ws), "--session-id", "s1", "--journal", str(ws / "j.md"), "--reward", "0.5"]
    assert run(capsys, *argv, "--lessons", NFC)[0] == 0
    code, out, err = run(capsys, "sessions", "-w", str(ws), "--lesson", NFD, "--json")
    assert code == 0, err
    assert [row["session_id"] for row in json.loads(out)["sessions"]] == ["s1"]
    code, out, err = run(capsys, "explain", "s1", "-w", str(ws), "--lesson", NFD.removesuffix(".md"))
    assert code == 0, err
    assert f"{NFC}: salience" in out


def logged_in_both_forms(tmp_path: Path, library: str) -> Path:
    """A library holding tools/`library`, and a log where s1 injected it as tools/café.md in NFC and s2 in NFD,
    each session rewarded 0.8 at salience 1 (a log written on a Mac, where HFS+ gives NFD names, read here)."""
    events = [session("s1", 0.8, {f"tools/{NFC}": 1.0}), session("s2", 0.8, {f"tools/{NFD}": 1.0})]
    return make_workspace(tmp_path, lessons={f"tools/{library}": (["deploy"], "active")}, events=events)


@pytest.mark.parametrize("library", [NFC, NFD], ids=["file-NFC", "file-NFD"])
def test_a_lesson_logged_in_two_unicode_forms_is_one_arm_keyed_by_the_librarys_spelling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], library: str
) -> None:
    # seed, floor 0.3, salience 1: w = 1, so each session credits 0.8 to alpha and 0.2 to beta:
    # Beta(1 + 0.8 + 0.8, 1 + 0.2 + 0.2) = Beta(2.6, 1.4), n 2 (two rows of n 1, Beta(1.8, 1.2), before)
    ws = logged_in_both_forms(tmp_path, library)
    rows = run_json(capsys, "status", "-w", str(ws), "--json")["lessons"]
    assert [(r["path"], r["status"], r["n"]) for r in rows] == [(f"tools/{library}", "active", 2)]
    assert (rows[0]["alpha"], rows[0]["beta"]) == pytest.approx((2.6, 1.4))
    # a grade of s2 at the reward it has (the numbers stay) rewrites the state file gptme's bandit reads
    assert run(capsys, "grade", "-w", str(ws), "s2", "0.8")[0] == 0
    state = json.loads((ws / "state" / "lesson-thompson" / "bandit-state.json").read_text(encoding="utf-8"))
    assert list(state["arms"]) == [f"tools/{library}"]  # the library's code points: gptme opens that file
    assert (state["arms"][f"tools/{library}"]["alpha"], state["arms"][f"tools/{library}"]["beta"]) == pytest.approx(
        (2.6, 1.4)
    )
    for session_id in ("s1", "s2"):  # each session's lesson is the library's, however that session logged it
        assert [e["path"] for e in run_json(capsys, "show", "-w", str(ws), session_id)["lessons"]] == [
            f"tools/{library}"
        ]
    code, _, err = run(capsys, "export-gptme", "-w", str(ws), str(tmp_path / "export.json"))
    assert code == 0, err
    exported = json.loads((tmp_path / "export.json").read_text(encoding="utf-8"))["arms"]
    assert list(exported) == [f"tools/{library}"] and exported[f"tools/{library}"]["total_selections"] == 2


def test_a_lesson_the_library_lacks_logged_in_two_forms_is_one_arm_spelled_as_first_logged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # s1 logs gone/café.md in NFD, s2 in NFC, 0.8 at salience 1 each: one missing arm, Beta(2.6, 1.4) as above,
    # shown as the log first spelled it (NFD), the library having no spelling of its own
    events = [session("s1", 0.8, {f"gone/{NFD}": 1.0}), session("s2", 0.8, {f"gone/{NFC}": 1.0})]
    ws = make_workspace(tmp_path, lessons={"tools/git.md": (["git"], "active")}, events=events)
    rows = run_json(capsys, "status", "-w", str(ws), "--json")["lessons"]
    missing = [(r["path"], r["n"], r["alpha"], r["beta"]) for r in rows if r["status"] == "missing"]
    assert missing == [(f"gone/{NFD}", 2, pytest.approx(2.6), pytest.approx(1.4))]


def test_the_parsed_log_cache_keeps_one_arm_and_the_librarys_spelling(tmp_path: Path) -> None:
    # as the first test (NFD library): read once to write the parsed-log cache, then from it
    ws = logged_in_both_forms(tmp_path, NFD)
    for _ in range(2):
        table = Workspace(ws, cache_threshold=1).lesson_table()
        assert [(row.path, row.n) for row in table.rows] == [(f"tools/{NFD}", 2)]
        assert (table.rows[0].alpha, table.rows[0].beta) == pytest.approx((2.6, 1.4))
    assert list((ws / "state" / "lesson-thompson" / ".cache").iterdir())  # the second read was the cache's


@pytest.mark.parametrize("library", [NFC, NFD], ids=["file-NFC", "file-NFD"])
def test_a_gptme_file_imported_again_is_known_whatever_form_the_library_spells_its_lesson_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], library: str
) -> None:
    # gptme's file keys the arm as the library spells the file: Beta(3, 2) after 3 selections, 2 rewarded
    ws = make_workspace(tmp_path, lessons={f"tools/{library}": (["deploy"], "active")})
    source = tmp_path / "bandit-state.json"
    arm = {"alpha": 3.0, "beta": 2.0, "total_selections": 3, "total_rewards": 2}
    file = {"arms": {f"tools/{library}": arm}, "total_sessions": 3, "created": "2026-11-01T00:00:00Z"}
    source.write_text(json.dumps(file), encoding="utf-8")
    assert run(capsys, "import-gptme", "-w", str(ws), str(source))[0] == 0
    code, out, err = run(capsys, "import-gptme", "-w", str(ws), str(source))
    assert code == 0, err
    assert "in the log already; nothing imported" in out  # the same priors: no second prior event
    assert len((ws / LOG_REL).read_text(encoding="utf-8").splitlines()) == 1
    (row,) = run_json(capsys, "status", "-w", str(ws))["lessons"]
    assert (row["path"], row["n"], row["alpha"], row["beta"]) == (f"tools/{library}", 3, 3.0, 2.0)
    # a session later, an export onto that file: its evidence is the log's (imported), so it is replaced
    with (ws / LOG_REL).open("a", encoding="utf-8") as log:
        log.write(json.dumps(session("s1", 0.8, {f"tools/{library}": 1.0})) + "\n")
    code, _, err = run(capsys, "export-gptme", "-w", str(ws), str(source))
    assert code == 0, err
    # Beta(3, 2) and one session at 0.8, salience 1: Beta(3.8, 2.2), 4 selections
    exported = json.loads(source.read_text(encoding="utf-8"))["arms"][f"tools/{library}"]
    assert (exported["alpha"], exported["beta"], exported["total_selections"]) == pytest.approx((3.8, 2.2, 4))


def test_a_dropout_log_naming_a_lesson_the_library_lacks_in_the_other_form_is_that_lessons_trial(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # s0..s7 rewarded 0.2..0.9; gone/café.md (NFC in the log, NFD in gptme's dropout log) kept in the even
    # ones (0.2, 0.4, 0.6, 0.8: mean 0.5), withheld in the odd ones (0.3, 0.5, 0.7, 0.9: mean 0.6): -0.1, 4 and 4
    kept = [i % 2 == 0 for i in range(8)]
    events = [
        session(f"s{i}", 0.2 + 0.1 * i, {"tools/git.md": 1.0, **({f"gone/{NFC}": 1.0} if kept[i] else {})})
        for i in range(8)
    ]
    ws = make_workspace(tmp_path, lessons={"tools/git.md": (["git"], "active")}, events=events)
    trials = ws / "state" / "lesson-dropout"
    trials.mkdir(parents=True)
    for i in range(8):
        named = [{"path": f"gone/{NFD}", "title": "Café"}]
        line = {"ts": 1.0, "session_id": f"s{i}", "epsilon": 0.5, "matched": named if kept[i] else []}
        (trials / f"s{i}.jsonl").write_text(json.dumps({**line, "withheld": [] if kept[i] else named}) + "\n")
    rows = {row["lesson"]: row for row in run_json(capsys, "loo", "-w", str(ws))["results"]}
    randomized = rows[f"gone/{NFC}"]["randomized"]
    assert (randomized["n_kept"], randomized["n_withheld"]) == (4, 4)
    assert randomized["estimate"] == pytest.approx(-0.1)


@pytest.mark.parametrize(("selected_as", "file_now"), [(NFD, NFC), (NFC, NFD)], ids=["NFD-then-NFC", "NFC-then-NFD"])
def test_record_finds_the_selections_lesson_spelled_in_the_other_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], selected_as: str, file_now: str
) -> None:
    """`select` on a machine whose file name is in one form logs the lesson so; `record` where the checkout has it
    in the other (a Mac's NFD, Linux's NFC) names the library's spelling. Before, the record matched the
    selection's lessons by exact spelling: the lesson got no propensity and no `included: before` mark, and
    `--during` took a lesson the selection chose as one included during the session (out of the effect
    estimates' treatment). By hand: the only candidate, chosen with k 1, has propensity 1."""
    ws = workspace(tmp_path, selected_as)
    (ws / "ctx.txt").write_text("deploy\n", encoding="utf-8")
    select = ["select", "-w", str(ws), "--context", str(ws / "ctx.txt"), "--k", "1", "--seed", "1"]
    chosen = run_json(capsys, *select, "--session-id", "s1")
    assert chosen["selected"] == [selected_as] and chosen["propensity"] == {selected_as: 1.0}
    run_json(capsys, *select, "--session-id", "s2")
    (ws / "lessons" / selected_as).rename(ws / "lessons" / file_now)
    argv = ["record", "-w", str(ws), "--journal", str(ws / "j.md"), "--reward", "0.5"]
    code, _, err = run(capsys, *argv, "--session-id", "s1", "--lessons", file_now)
    assert code == 0, err
    event = json.loads((ws / LOG_REL).read_text(encoding="utf-8").splitlines()[-1])
    assert event["lessons"][0]["path"] == file_now
    assert (event["lessons"][0].get("propensity"), event["lessons"][0].get("included")) == (1.0, "before")
    code, out, err = run(capsys, *argv, "--session-id", "s2", "--lessons", "--during", file_now)
    assert (code, out) == (1, "") and "chosen before the session by its select event" in err, (code, out, err)
