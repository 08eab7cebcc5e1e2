"""`lesson-credit sessions` and `show`, and session id prefixes.

The clock is fixed at 2026-03-05T16:30Z. Sessions, by hand:
  a1  15:00Z on 03-05 (1.5 h ago)   pending          feature  git
  a2  20:00Z on 03-04 (20.5 h ago)  0.8 judge        bugfix   git, quote
  b1  00:00Z on 03-01               0.3, regraded 0.6 by manual   feature  quote
  b2  18:00+02:00 on 03-05 = 16:00Z (30 min ago)  pending  (no category)  quote
  c1  (no timestamp)                0.5 heuristic    feature  (no lessons)
"""

from __future__ import annotations

import datetime as dt
import math
import random
from pathlib import Path

import pytest

from lesson_credit.core.query import QueryError, epoch_seconds, parse_sort, parse_time
from tests.cli.cli_fixtures import log_bytes, make_ws, run, run_json, session

GIT, QUOTE = "tools/git.md", "tools/quote.md"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    events = [
        session("a1", None, {GIT: 1.0}, timestamp="2026-03-05T15:00:00Z", category="feature"),
        session("a2", 0.8, {GIT: 0.5, QUOTE: 0.0}, timestamp="2026-03-04T20:00:00Z", category="bugfix", grader="judge"),
        session("b1", 0.3, {QUOTE: 1.0}, timestamp="2026-03-01T00:00:00Z", category="feature"),
        session("b2", None, {QUOTE: 0.5}, timestamp="2026-03-05T18:00:00+02:00"),
        session("c1", 0.5, {}, category="feature"),
        {"type": "grade", "session_id": "b1", "base_reward": 0.6, "grader": "manual", "note": "rework"},
    ]
    return make_ws(tmp_path, lessons={GIT: ["git"], QUOTE: ["quote"], "tools/idle.md": ["idle"]}, events=events)


def ids(capsys: pytest.CaptureFixture[str], ws: Path, *argv: str) -> list[str]:
    payload = run_json(capsys, "sessions", "-w", str(ws), *argv)
    return [s["session_id"] for s in payload["sessions"]]


def test_the_operators_question_in_one_command(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # pending within the last day: a1 and b2; of those, only a1 injected git
    assert ids(capsys, ws, "--since", "1d", "--pending") == ["a1", "b2"]
    assert ids(capsys, ws, "--since", "1d", "--pending", "--lesson", GIT) == ["a1"]
    assert ids(capsys, ws, "--since", "1d", "--pending", "--lesson", "lessons/" + GIT) == ["a1"]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], ["a1", "a2", "b1", "b2", "c1"]),
        (["--since", "2h"], ["a1", "b2"]),
        (["--since", "30m"], ["b2"]),  # exactly 30 minutes ago: inclusive
        (["--since", "29m"], []),
        (["--until", "2026-03-02"], ["b1"]),
        (["--since", "2026-03-04T20:00:00Z", "--until", "2026-03-05T15:00"], ["a2"]),  # until is exclusive
        (["--min-reward", "0.5"], ["a2", "b1", "c1"]),  # b1 counts with its latest grade, 0.6
        (["--max-reward", "0.5"], ["c1"]),
        (["--min-reward", "0.55", "--max-reward", "0.7"], ["b1"]),
        (["--graded"], ["a2", "b1", "c1"]),
        (["--grader", "manual"], ["b1"]),
        (["--grader", "judge"], ["a2"]),
        (["--grader", "heuristic"], ["c1"]),
        (["--category", "feature"], ["a1", "b1", "c1"]),
        (["--lesson", QUOTE], ["a2", "b1", "b2"]),
        (["--lesson", "tools/idle.md"], []),  # in the library, never injected
        (["--pending", "--graded"], []),
        (["--sort", "reward:desc"], ["a2", "b1", "c1", "a1", "b2"]),  # pending last either way
        (["--sort", "reward"], ["c1", "b1", "a2", "a1", "b2"]),
        (["--sort", "time:desc"], ["b2", "a1", "a2", "b1", "c1"]),  # b2 is 16:00Z; c1 has no time
        (["--sort", "time"], ["b1", "a2", "a1", "b2", "c1"]),
        (["--sort", "category"], ["a2", "a1", "b1", "c1", "b2"]),  # ties in log order, no category last
        (["--sort", "category:desc"], ["a1", "b1", "c1", "a2", "b2"]),
        (["--sort", "id:desc"], ["c1", "b2", "b1", "a2", "a1"]),
        (["--sort", "lessons:desc"], ["a2", "a1", "b1", "b2", "c1"]),
        (["--sort", "salience"], ["a2", "b2", "a1", "b1", "c1"]),  # means .25, .5, 1, 1; c1 has no lesson: last
        (["--sort", "line:desc"], ["c1", "b2", "b1", "a2", "a1"]),
        (["--sort", "reward:desc", "--limit", "2"], ["a2", "b1"]),
    ],
)
def test_filters_and_sorting(
    ws: Path, capsys: pytest.CaptureFixture[str], argv: list[str], expected: list[str]
) -> None:
    assert ids(capsys, ws, *argv) == expected


def test_json_rows_and_pending_reward_is_null(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    payload = run_json(capsys, "sessions", "-w", str(ws), "--sort", "reward:desc", "--limit", "4")
    assert payload["matched"] == 5
    rows = {s["session_id"]: s for s in payload["sessions"]}
    assert rows["b1"] == {
        "session_id": "b1",
        "timestamp": "2026-03-01T00:00:00Z",
        "category": "feature",
        "recorded_category": "feature",
        "base_reward": 0.6,
        "outcome": None,
        "grader": "manual",
        "lessons": 1,
        "mean_salience": 1.0,
        "line": 3,
    }
    assert rows["a1"]["base_reward"] is None and rows["a1"]["grader"] is None


def test_a_session_without_lessons_has_no_mean_salience(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """c1 injected no lesson: its mean salience is missing (null, "-", sorted last either way), not 0.0, which
    would read as lessons none of whose keywords the journal mentioned. The others' means, by hand: a1 1.0,
    a2 (0.5 + 0.0) / 2 = 0.25, b1 1.0, b2 0.5."""
    rows = {s["session_id"]: s for s in run_json(capsys, "sessions", "-w", str(ws))["sessions"]}
    assert {sid: row["mean_salience"] for sid, row in rows.items()} == {
        "a1": 1.0,
        "a2": 0.25,
        "b1": 1.0,
        "b2": 0.5,
        "c1": None,
    }
    assert ids(capsys, ws, "--sort", "salience:desc") == ["a1", "b1", "b2", "a2", "c1"]
    code, out, err = run(capsys, "sessions", "-w", str(ws), "--sort", "salience")
    assert code == 0, err
    (row,) = [line.split() for line in out.splitlines() if line.startswith("c1 ")]
    assert row[-3:] == ["heuristic", "0", "-"]  # grader, lessons, salience


def test_table_output(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "sessions", "-w", str(ws), "--pending")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["session", "time", "category", "reward", "grader", "lessons", "salience"]
    assert lines[2].split() == ["a1", "2026-03-05T15:00:00Z", "feature", "pending", "-", "1", "1.000"]
    assert lines[-1] == "2 of 5 sessions match"


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--since", "yesterday"], "not a time"),
        (["--sort", "colour"], "cannot sort by 'colour'"),
        (["--sort", "reward:up"], "asc or desc"),
        (["--min-reward", "x"], "reward must be a number"),
        (["--max-reward", "1.5"], "reward must be in [0, 1]"),
    ],
)
def test_a_bad_query_option_is_a_usage_error(
    ws: Path, capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    with pytest.raises(SystemExit) as info:
        run(capsys, "sessions", "-w", str(ws), *argv)
    out, err = capsys.readouterr()
    assert (info.value.code, out) == (2, "")
    assert err.splitlines()[-1].startswith("lesson-credit sessions: error: argument ") and needle in err


def test_a_lesson_in_neither_the_library_nor_the_log_is_bad_input(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "sessions", "-w", str(ws), "--lesson", "tools/nope.md")
    assert (code, out) == (1, "")
    assert len(err.splitlines()) == 1 and "neither in the library nor in the log" in err


def test_parse_time_forms() -> None:
    now = dt.datetime(2026, 3, 5, 16, 30, tzinfo=dt.UTC)
    t = now.timestamp()
    assert parse_time("2h", now) == t - 7200
    assert parse_time("30m", now) == t - 1800
    assert parse_time("7d", now) == t - 7 * 86400
    assert parse_time("90s", now) == t - 90
    assert parse_time("2w", now) == t - 14 * 86400
    assert parse_time("1.5h", now) == t - 5400
    # 2026-03-01 is 20513 days after 1970-01-01 (56 years, 14 of them leap: 56*365+14 = 20454; + Jan 31 + Feb 28)
    assert parse_time("2026-03-01", now) == 20513 * 86400
    assert parse_time("2026-03-01T01:00:00+01:00", now) == 20513 * 86400
    with pytest.raises(QueryError):
        parse_time("", now)
    with pytest.raises(QueryError):
        parse_time("-2h", now)


def test_epoch_seconds_reads_every_iso_form() -> None:
    day = 20513 * 86400  # 2026-03-01T00:00Z, as above
    got = epoch_seconds(["2026-03-01T00:00:00Z", "2026-03-01T02:00:00+02:00", "2026-03-01T00:00:00.5Z", None, "soon"])
    assert got[:3].tolist() == [day, day, day + 0.5]
    assert all(math.isnan(v) for v in got[3:])  # NaN: missing and unreadable never match a time filter
    assert math.isnan(epoch_seconds(["2026-13-01T00:00:00Z"])[0])  # looks canonical, is not a date


def test_epoch_seconds_agrees_with_datetime_on_valid_and_invalid_stamps() -> None:
    # the vectorised reading of YYYY-MM-DDTHH:MM:SSZ against datetime.fromisoformat, stamp by stamp,
    # over fields drawn past their ranges (month 13, day 32, hour 25, Feb 29 of non-leap years, ...)
    rng = random.Random(12)
    stamps = [
        f"{rng.randint(1, 9999):04d}-{rng.randint(0, 13):02d}-{rng.randint(0, 32):02d}"
        f"T{rng.randint(0, 25):02d}:{rng.randint(0, 61):02d}:{rng.randint(0, 61):02d}Z"
        for _ in range(3000)
    ]
    stamps += ["2024-02-29T12:00:00Z", "2100-02-29T12:00:00Z", "0000-01-01T00:00:00Z", "2026-0/-01T00:00:00Z"]
    got = epoch_seconds(stamps).tolist()
    for stamp, value in zip(stamps, got, strict=True):
        try:
            expected = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        except ValueError:
            assert math.isnan(value), stamp
        else:
            assert value == expected, stamp
    assert not math.isnan(got[-4]) and math.isnan(got[-3])  # 2024 is a leap year, 2100 is not


def test_parse_sort() -> None:
    assert parse_sort("reward") == ("reward", False)
    assert parse_sort("time:desc") == ("time", True)
    assert parse_sort("ID:ASC") == ("id", False)


# ---------------------------------------------------------------- id prefixes


def test_unique_prefix_works_wherever_a_session_id_does(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_json(capsys, "explain", "-w", str(ws), "c")["session_id"] == "c1"
    assert run_json(capsys, "show", "-w", str(ws), "c")["session_id"] == "c1"
    graded = run_json(capsys, "grade", "-w", str(ws), "c", "0.9")
    assert (graded["session_id"], graded["base_reward"]) == ("c1", 0.9)


@pytest.mark.parametrize("command", ["explain", "show", "grade"])
def test_ambiguous_prefix_is_refused_listing_the_matches(
    ws: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    before = log_bytes(ws)
    argv = [command, "-w", str(ws), "a"] + (["0.5"] if command == "grade" else [])
    code, out, err = run(capsys, *argv)
    assert (code, out) == (1, "")
    assert err.splitlines() == ["lesson-credit: session id prefix 'a' is ambiguous: 2 sessions match (a1, a2)"]
    assert log_bytes(ws) == before


def test_unknown_session_and_exact_id_that_prefixes_another(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_ws(
        tmp_path,
        lessons={GIT: ["git"]},
        events=[session("x3", 0.5, {GIT: 1.0}), session("x3-js-1", 0.7, {GIT: 1.0})],
    )
    assert run_json(capsys, "show", "-w", str(root), "x3")["session_id"] == "x3"  # exact id wins
    assert run_json(capsys, "show", "-w", str(root), "x3-")["session_id"] == "x3-js-1"
    code, _, err = run(capsys, "explain", "-w", str(root), "zz")
    assert code == 1 and err.strip() == "lesson-credit: unknown session 'zz'"


def test_an_id_typed_in_another_unicode_form_names_the_logged_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """'café' typed (one code point for é, NFC, as most keyboards give it) names the session a tool logged
    as 'cafe' + a combining acute (NFD, as macOS file names give it): the two look the same on every
    screen. A log holding both forms keeps each exact id its own."""
    nfd, nfc = "cafe\u0301-1", "caf\u00e9-1"
    root = make_ws(tmp_path, lessons={GIT: ["git"]}, events=[session(nfd, 0.5, {GIT: 1.0})])
    assert run_json(capsys, "show", "-w", str(root), nfc)["session_id"] == nfd
    graded = run_json(capsys, "grade", "-w", str(root), nfc, "0.9")
    assert (graded["session_id"], graded["base_reward"]) == (nfd, 0.9)
    assert run_json(capsys, "show", "-w", str(root), "caf\u00e9")["session_id"] == nfd  # a prefix too
    events = [session(nfd, 0.5, {GIT: 1.0}), session(nfc, 0.7, {GIT: 1.0})]
    both = make_ws(tmp_path, lessons={GIT: ["git"]}, events=events, name="both")
    assert run_json(capsys, "show", "-w", str(both), nfc)["session_id"] == nfc
    assert run_json(capsys, "show", "-w", str(both), nfd)["session_id"] == nfd


def test_an_id_logged_in_another_unicode_form_comes_before_a_longer_id_it_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """'café' typed (NFC) in a log holding 'café' in NFD (0.2) and 'café-1' in NFC (0.3): the typed text is the
    first id in another form and only a prefix of the second, so it names the first, as 'café' typed in NFD
    does; it graded café-1, a session the person did not mean."""
    nfd, nfc_longer = "cafe\u0301", "caf\u00e9-1"
    events = [session(nfd, 0.2, {GIT: 1.0}), session(nfc_longer, 0.3, {GIT: 1.0})]
    root = make_ws(tmp_path, lessons={GIT: ["git"]}, events=events)
    for typed in ("caf\u00e9", nfd):
        assert run_json(capsys, "show", "-w", str(root), typed)["session_id"] == nfd
    graded = run_json(capsys, "grade", "-w", str(root), "caf\u00e9", "0.9")
    assert (graded["session_id"], graded["base_reward"]) == (nfd, 0.9)
    assert run_json(capsys, "show", "-w", str(root), nfc_longer)["base_reward"] == 0.3  # untouched


def test_a_start_two_ids_share_in_two_unicode_forms_is_ambiguous(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """'café' typed (NFC) where 'café-1' is logged in NFC and 'café-2' in NFD: both look as if they start with
    it, so it names neither (it graded café-1, never asking)."""
    events = [session("caf\u00e9-1", 0.2, {GIT: 1.0}), session("cafe\u0301-2", 0.3, {GIT: 1.0})]
    root = make_ws(tmp_path, lessons={GIT: ["git"]}, events=events)
    before = log_bytes(root)
    code, _, err = run(capsys, "grade", "-w", str(root), "caf\u00e9", "0.9")
    assert code == 1 and "is ambiguous: 2 sessions match" in err
    assert log_bytes(root) == before


# ---------------------------------------------------------------- show


def test_show_json(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    payload = run_json(capsys, "show", "-w", str(ws), "b1")
    assert payload["session_id"] == "b1"
    assert (payload["base_reward"], payload["grader"], payload["category"]) == (0.6, "manual", "feature")
    assert [(g["base_reward"], g["grader"], g["note"]) for g in payload["grades"]] == [
        (0.3, "heuristic", None),
        (0.6, "manual", "rework"),
    ]
    # seed, floor 0.3: quote has salience 1 -> w = 1, credited 0.6; alpha +0.6, beta +0.4
    (quote,) = payload["lessons"]
    assert quote["path"] == QUOTE
    assert (quote["weight"], quote["reward"]) == pytest.approx((1.0, 0.6))
    assert (quote["alpha_delta"], quote["beta_delta"]) == pytest.approx((0.6, 0.4))
    assert payload["journal_changed"] is None  # no journal recorded


def test_show_pending_text(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "show", "-w", str(ws), "b2")
    assert code == 0, err
    assert "grade     pending" in out
    assert "grade history: none (pending)" in out
    row = next(line for line in out.splitlines() if line.startswith(QUOTE))
    # salience 0.5 -> w = 0.3 + 0.7 * 0.5 = 0.65; pending: no reward, no change
    assert row.split() == [QUOTE, "0.500", "0.650", "-", "-", "-"]


# ---------------------------------------------------------------- a lesson argument by its name


def test_a_lesson_argument_is_resolved_by_its_unique_basename(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`explain S --lesson test-doubles.md` said the lesson was not injected; it was,
    as patterns/test-doubles.md. A unique tail names it; several name no one (one line listing them)."""
    doubles, other = "patterns/test-doubles.md", "testing/test-doubles.md"
    root = make_ws(
        tmp_path,
        lessons={doubles: ["double"], other: ["double"], GIT: ["git"]},
        events=[session("s1", 0.8, {doubles: 1.0, GIT: 0.5}), session("s2", 0.4, {other: 1.0})],
    )
    for name in ("test-doubles.md", "test-doubles", "patterns/test-doubles.md", "lessons/patterns/test-doubles.md"):
        (entry,) = run_json(capsys, "explain", "-w", str(root), "s1", "--lesson", name)["lessons"]
        assert entry["path"] == doubles, name
    (entry,) = run_json(capsys, "explain", "-w", str(root), "s1", "--lesson", "git.md")["lessons"]
    assert entry["path"] == GIT
    # in the session s2 only testing/test-doubles.md was injected: the name is unique there
    (entry,) = run_json(capsys, "explain", "-w", str(root), "s2", "--lesson", "test-doubles.md")["lessons"]
    assert entry["path"] == other
    # `sessions --lesson` looks among every lesson: two end in test-doubles.md
    code, out, err = run(capsys, "sessions", "-w", str(root), "--lesson", "test-doubles.md")
    assert (code, out) == (1, "")
    assert err.splitlines() == [
        f"lesson-credit: lesson 'test-doubles.md' is ambiguous: 2 lessons match ({doubles}, {other})"
    ]
    assert ids(capsys, root, "--lesson", "patterns/test-doubles.md") == ["s1"]
    assert ids(capsys, root, "--lesson", "git") == ["s1"]
    code, _, err = run(capsys, "explain", "-w", str(root), "s2", "--lesson", "git.md")
    assert code == 1 and "was not injected in session 's2'" in err


def test_explain_of_a_lesson_not_in_the_session_names_the_lessons_that_were(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`explain a2 --lesson idle` said only that the lesson was not injected: which were, the question a person
    asking why a lesson got no credit goes on to, took another command. (a2 injected GIT and QUOTE, c1 none.)"""
    code, out, err = run(capsys, "explain", "-w", str(ws), "a2", "--lesson", "idle")
    assert (code, out) == (1, "")
    assert err == f"lesson-credit: lesson 'idle' was not injected in session 'a2'; its lessons: {GIT}, {QUOTE}\n"
    code, _, err = run(capsys, "explain", "-w", str(ws), "c1", "--lesson", "idle")
    assert (code, err) == (1, "lesson-credit: lesson 'idle' was not injected in session 'c1'; it injected none\n")
    # ten lessons: the first eight named, in the session's order, and how many more
    many = {f"t/l{i}.md": 0.5 for i in range(10)}
    root = make_ws(tmp_path, {lid: ["k"] for lid in [*many, "t/x.md"]}, [session("m", 0.5, many)], name="many")
    code, _, err = run(capsys, "explain", "-w", str(root), "m", "--lesson", "t/x.md")
    named = ", ".join(f"t/l{i}.md" for i in range(8))
    assert err == f"lesson-credit: lesson 't/x.md' was not injected in session 'm'; its lessons: {named} and 2 more\n"


def test_a_sessions_lessons_count_is_the_entries_explain_lists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`lessons` in sessions --json counts the lesson entries of the session's event, the list explain shows:
    one included during the session counts, and one listed twice (another tool's line) counts twice, as
    the fold credits it."""
    entries = [
        {"path": GIT, "salience": 1.0},
        {"path": GIT, "salience": 1.0},
        {"path": QUOTE, "salience": 0.0, "included": "during"},
    ]
    event = {"type": "session", "session_id": "d1", "base_reward": 0.8, "grader": "manual", "lessons": entries}
    root = make_ws(tmp_path, lessons={GIT: ["git"], QUOTE: ["quote"]}, events=[event])
    (row,) = run_json(capsys, "sessions", "-w", str(root))["sessions"]
    listed = run_json(capsys, "explain", "d1", "-w", str(root))["lessons"]
    assert row["lessons"] == len(listed) == 3
