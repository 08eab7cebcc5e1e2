"""Health checks (core.health.lint): each finding on a workspace crafted to show it (`lint`: tests/cli)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.health import PROBLEM, WARNING, Finding, lint
from lesson_credit.core.id_spellings import Spellings
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import fixed_clock, grade, make_workspace, session
from tests.support.health_logs import LESSONS, VARIED, clean_events


def findings(root: Path) -> list[Finding]:
    return lint(Workspace(root, clock=fixed_clock))


def by_code(root: Path) -> dict[str, Finding]:
    found = findings(root)
    codes = [f.code for f in found]
    assert len(codes) == len(set(codes)), codes
    return {f.code: f for f in found}


# ---------------------------------------------------------------- a clean workspace


def test_clean_workspace_has_no_findings(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, lessons=LESSONS, events=clean_events())
    assert findings(root) == []


def test_empty_workspace_has_no_findings(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, lessons=LESSONS)
    assert findings(root) == []


# ---------------------------------------------------------------- pending sessions


def test_sessions_never_graded_are_a_warning(tmp_path: Path) -> None:
    # fixed clock: 2026-03-05T16:30Z. old: 13 days earlier; recent: 1 day earlier
    events = [
        *clean_events(),
        session("old", None, {"a.md": 1.0}, timestamp="2026-02-20T10:00:00Z"),
        session("recent", None, {"a.md": 1.0}, timestamp="2026-03-04T16:30:00Z"),
    ]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    f = by_code(root)["sessions-never-graded"]
    assert f.severity == WARNING  # pending is normal for a fresh session; lint fails on it only with --fail-on warning
    assert f.items == ("old",)
    assert "old" in f.message and "7+ days" in f.message


def test_pending_staleness_boundary_is_seven_days(tmp_path: Path) -> None:
    # exactly 7 days before 2026-03-05T16:30Z is stale; one second later is not
    events = [
        *clean_events(),
        session("seven", None, {"a.md": 1.0}, timestamp="2026-02-26T16:30:00Z"),
        session("almost", None, {"a.md": 1.0}, timestamp="2026-02-26T16:30:01Z"),
    ]
    f = by_code(make_workspace(tmp_path, lessons=LESSONS, events=events))["sessions-never-graded"]
    assert f.items == ("seven",)


def test_recent_pending_sessions_are_a_warning(tmp_path: Path) -> None:
    events = [
        *clean_events(),
        session("recent", None, {"a.md": 1.0}, timestamp="2026-03-04T16:30:00Z"),
        session("undated", None, {"a.md": 1.0}),
        session("graded-later", None, {"a.md": 1.0}, timestamp="2026-01-01T00:00:00Z"),
        grade("graded-later", 0.6),
    ]
    found = by_code(make_workspace(tmp_path, lessons=LESSONS, events=events))
    assert "sessions-never-graded" not in found
    f = found["sessions-pending"]
    assert f.severity == WARNING
    assert f.items == ("recent", "undated")
    assert "2 sessions waiting" in f.message


def test_a_session_whose_grade_was_undone_is_pending_again_not_never_graded(tmp_path: Path) -> None:
    """An undo of a session's only grade makes it pending again: lint listed it under "sessions pending
    for 7+ days" (`sessions-never-graded`) or "waiting for a grade" as well as under `grades-retracted`.
    It was graded: it is listed once, as pending again. Fixed clock 2026-03-05T16:30Z: "old" and
    "undone-old" 13 days before it, "undone-new" 1 day before."""
    events = [
        *clean_events(),
        session("old", None, {"a.md": 1.0}, timestamp="2026-02-20T10:00:00Z"),
        session("undone-old", None, {"a.md": 1.0}, timestamp="2026-02-20T10:00:00Z"),
        session("undone-new", None, {"a.md": 1.0}, timestamp="2026-03-04T16:30:00Z"),
        grade("undone-old", 0.6),
        grade("undone-new", 0.3),
        grade("undone-old", None),  # what `lesson-credit undo` appends for a first grade
        grade("undone-new", None),
    ]
    found = by_code(make_workspace(tmp_path, lessons=LESSONS, events=events))
    assert found["sessions-never-graded"].items == ("old",)
    assert found["sessions-never-graded"].message == "1 session never graded, pending for 7+ days: old"
    assert "sessions-pending" not in found
    assert found["grades-retracted"].items == ("undone-old", "undone-new")


# ---------------------------------------------------------------- rewards


@pytest.mark.parametrize("value", [0.0, 1.0])
def test_rewards_constant(tmp_path: Path, value: float) -> None:
    events = [session(f"s{i}", value, {"a.md": 1.0, "b.md": 0.0}) for i in range(5)]
    f = by_code(make_workspace(tmp_path, lessons=LESSONS, events=events))["rewards-constant"]
    assert f.severity == PROBLEM
    assert f.message == f"all 5 graded rewards are {int(value)}"


def test_rewards_constant_counts_latest_grades_and_needs_five(tmp_path: Path) -> None:
    # logged as 0.5, then all regraded to 0: the grades are what counts
    events: list[Any] = [session(f"s{i}", 0.5, {"a.md": 1.0}) for i in range(5)]
    events += [grade(f"s{i}", 0.0) for i in range(5)]
    assert "rewards-constant" in by_code(make_workspace(tmp_path, lessons=LESSONS, events=events))
    four = [session(f"s{i}", 0.0, {"a.md": 1.0}) for i in range(4)]
    assert "rewards-constant" not in by_code(make_workspace(tmp_path, lessons=LESSONS, events=four, name="four"))


def test_binary_rewards_are_a_warning_not_constant(tmp_path: Path) -> None:
    events = [session(f"s{i}", float(i % 2), {"a.md": 1.0, "b.md": 0.0}) for i in range(6)]
    found = by_code(make_workspace(tmp_path, lessons=LESSONS, events=events))
    assert "rewards-constant" not in found
    assert found["rewards-binary"].severity == WARNING
    assert "100%" in found["rewards-binary"].message


# ---------------------------------------------------------------- posteriors


FIVE = {f"l{i}.md": ([f"kw{i}"], "active") for i in range(5)}


def test_posteriors_collapsed(tmp_path: Path) -> None:
    # every lesson in the same 5 sessions with the same salience 0.5 -> identical posteriors.
    # seed, w = 0.65, sum(base) = 2.5: alpha = 1 + 0.65*2.5 = 2.625, beta = 1 + 5 - 1.625 = 4.375,
    # mean = 2.625 / 7 = 0.375
    rewards = [0.2, 0.4, 0.6, 0.8, 0.5]
    events = [session(f"s{i}", r, {lid: 0.5 for lid in FIVE}) for i, r in enumerate(rewards)]
    f = by_code(make_workspace(tmp_path, lessons=FIVE, events=events))["posteriors-collapsed"]
    assert f.severity == PROBLEM
    assert "5 lessons" in f.message and "0.375" in f.message


def test_posteriors_not_collapsed_when_salience_differs_or_too_few(tmp_path: Path) -> None:
    rewards = [0.2, 0.4, 0.6, 0.8, 0.5]
    # salience 0, 0.25, ..., 1: means 1+2.5*w over 7, w from 0.3 to 1 -> spread well above 0.01
    spread = [session(f"s{i}", r, {f"l{j}.md": j / 4 for j in range(5)}) for i, r in enumerate(rewards)]
    assert "posteriors-collapsed" not in by_code(make_workspace(tmp_path, lessons=FIVE, events=spread))
    # identical, but only 4 lessons have 5+ sessions
    four = [session(f"s{i}", r, {f"l{j}.md": 0.5 for j in range(4)}) for i, r in enumerate(rewards)]
    assert "posteriors-collapsed" not in by_code(make_workspace(tmp_path, lessons=FIVE, events=four, name="four"))


# ---------------------------------------------------------------- arms and ids


def test_ghost_arms_with_moved_hint(tmp_path: Path) -> None:
    lessons = {
        **LESSONS,
        "workflow/renamed.md": (["x"], "active"),
        "x/dup.md": ([], "active"),
        "y/dup.md": ([], "active"),
    }
    events = [
        *clean_events(),
        session("g1", 0.5, {"tools/renamed.md": 0.5, "vanished.md": 0.5, "z/dup.md": 0.5}),
    ]
    f = by_code(make_workspace(tmp_path, lessons=lessons, events=events))["ghost-arms"]
    assert f.severity == WARNING
    assert f.items == ("tools/renamed.md", "vanished.md", "z/dup.md")
    assert "tools/renamed.md (moved to workflow/renamed.md?)" in f.message
    assert "vanished.md (moved" not in f.message
    assert "z/dup.md (moved" not in f.message  # two candidates with that name: no guess
    assert f.message.startswith("3 lessons in the log are not in the library: ")


def test_prefixed_ids(tmp_path: Path) -> None:
    events = [
        *clean_events(),
        session("p1", 0.5, {"lessons/a.md": 1.0, "./lessons/b.md": 1.0}),
        session("p2", 0.6, {"lessons/tools/c.md": 1.0}, journal_path="lessons/notes.txt"),
    ]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    found = by_code(root)
    f = found["prefixed-ids"]
    assert f.severity == WARNING
    assert f.message.startswith("3 lesson entries")  # journal_path is not a lesson entry
    assert "ghost-arms" not in found  # the prefixed ids name the library's arms


def test_never_injected_needs_thirty_sessions(tmp_path: Path) -> None:
    lessons = {**LESSONS, "old.md": (["old"], "archived")}
    events = [session(f"s{i}", VARIED[i % 7], {"a.md": 1.0}) for i in range(30)]
    f = by_code(make_workspace(tmp_path, lessons=lessons, events=events))["never-injected"]
    assert f.severity == WARNING
    assert f.items == ("b.md", "tools/c.md")  # sorted, active only: old.md is archived
    assert "30 sessions" in f.message
    fewer = make_workspace(tmp_path, lessons=lessons, events=events[:29], name="fewer")
    assert "never-injected" not in by_code(fewer)


def _lesson_for(kinds: list[str], keyword: str) -> str:
    return (
        f"---\nmatch:\n  keywords: [{keyword}]\n  session_categories: {kinds}\nstatus: active\n---\n# For some kinds\n"
    )


def test_never_injected_says_when_a_lesson_is_for_kinds_of_work_no_session_had(tmp_path: Path) -> None:
    # 30 sessions injecting a.md only, logged with kinds " Code " (15) and "research" (15); b.md and tools/c.md
    # (no kinds) are never injected as before; infra.md names only infra and ops: no session had either;
    # mixed.md names ops and CODE: "CODE".lower() == " Code ".strip().lower(), so its kinds are not the reason
    kinds = [" Code ", "research"]
    events = [session(f"s{i}", VARIED[i % 7], {"a.md": 1.0}, category=kinds[i % 2]) for i in range(30)]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    (root / "lessons" / "infra.md").write_text(_lesson_for(["infra", "ops"], "deploy"), encoding="utf-8")
    (root / "lessons" / "mixed.md").write_text(_lesson_for(["ops", "CODE"], "merge"), encoding="utf-8")
    f = by_code(root)["never-injected"]
    assert f.items == ("b.md", "infra.md", "mixed.md", "tools/c.md")
    assert f.message == (
        "4 active lessons never injected in 30 sessions: b.md, infra.md, mixed.md, tools/c.md; "
        "1 of them for kinds of work no session had (match.session_categories): infra.md"
    )
    plain = "4 active lessons never injected in 30 sessions: b.md, infra.md, mixed.md, tools/c.md"
    assert f.reasons == (
        plain,
        "its match.session_categories (infra, ops) name none of the sessions' kinds of work (Code, research): "
        "`select --category` leaves it out",
        plain,
        plain,
    )
    assert "`select --category`" in f.advice


def test_never_injected_names_each_kind_of_work_once(tmp_path: Path) -> None:
    # 30 sessions of two kinds of work, each spelt two ways: `Code` 10 and `code` 5; café composed (NFC) 10
    # and with a combining accent (NFD) 5. Each kind is listed once, in the spelling most of its sessions use
    nfc, nfd = "caf\u00e9", "cafe\u0301"
    kinds = ["Code", "code", "Code", nfc, nfd, nfc]
    events = [session(f"s{i}", VARIED[i % 7], {"a.md": 1.0}, category=kinds[i % 6]) for i in range(30)]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    (root / "lessons" / "infra.md").write_text(_lesson_for(["infra"], "deploy"), encoding="utf-8")
    f = by_code(root)["never-injected"]
    assert f.reasons[f.items.index("infra.md")] == (
        f"its match.session_categories (infra) name none of the sessions' kinds of work (Code, {nfc}): "
        "`select --category` leaves it out"
    )


def test_never_injected_without_kinds_of_work_on_record_keeps_its_words(tmp_path: Path) -> None:
    # the same library, 30 sessions logged without a kind of work: select drew from every lesson
    events = [session(f"s{i}", VARIED[i % 7], {"a.md": 1.0}) for i in range(30)]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    (root / "lessons" / "infra.md").write_text(_lesson_for(["infra", "ops"], "deploy"), encoding="utf-8")
    f = by_code(root)["never-injected"]
    assert f.message == "3 active lessons never injected in 30 sessions: b.md, infra.md, tools/c.md"
    assert [item["reason"] for item in f.as_json()["items"]] == [f.message] * 3
    assert f.advice == "Their keywords may never match a session context; widen them or archive the lesson."


def test_never_salient(tmp_path: Path) -> None:
    # a: 5 sessions at salience 0 -> flagged; b: 4 sessions at 0 -> too few; c: 5 sessions, salient once
    events = []
    for i in range(5):
        lessons = {"a.md": 0.0, "tools/c.md": 0.5 if i == 0 else 0.0}
        if i < 4:
            lessons["b.md"] = 0.0
        events.append(session(f"s{i}", VARIED[i], lessons))
    f = by_code(make_workspace(tmp_path, lessons=LESSONS, events=events))["never-salient"]
    assert f.severity == WARNING
    assert f.items == ("a.md",)


def test_missing_salience(tmp_path: Path) -> None:
    events = [*clean_events(), session("m1", 0.5, {"a.md": None, "b.md": None, "tools/c.md": 0.5})]
    f = by_code(make_workspace(tmp_path, lessons=LESSONS, events=events))["missing-salience"]
    assert f.severity == WARNING
    assert f.message.startswith("2 lesson entries")
    assert "0.5" in f.message


def test_broad_keywords(tmp_path: Path) -> None:
    lessons = {
        "broad.md": (["the", "rare-phrase"], "active"),
        "half.md": (["sixer"], "active"),
        "fine.md": (["rare-phrase"], "active"),
    }
    journals, events = {}, []
    for i in range(12):
        text = ("The build passed. " if i < 10 else "") + ("sixer " if i < 6 else "") + "done"
        journals[f"j/{i}.md"] = text
        events.append(session(f"s{i}", VARIED[i % 7], {"fine.md": 0.0}, journal_path=f"j/{i}.md"))
    f = by_code(make_workspace(tmp_path, lessons=lessons, events=events, journals=journals))["broad-keywords"]
    assert f.severity == WARNING
    assert f.items == ("broad.md",)  # 'the' in 10 of 12 journals; 'sixer' in exactly half
    assert "broad.md (keyword 'the' matches 83% of journals" in f.message


def test_broad_keywords_need_ten_journals(tmp_path: Path) -> None:
    lessons = {"broad.md": (["the"], "active")}
    journals = {f"j/{i}.md": "the end" for i in range(9)}
    events = [session(f"s{i}", VARIED[i % 7], {"broad.md": 1.0}, journal_path=f"j/{i}.md") for i in range(9)]
    # two sessions pointing at a missing journal do not count as read
    events += [session(f"x{i}", 0.5, {"broad.md": 1.0}, journal_path="j/missing.md") for i in range(2)]
    root = make_workspace(tmp_path, lessons=lessons, events=events, journals=journals)
    assert "broad-keywords" not in by_code(root)


# ---------------------------------------------------------------- files that cannot be read


def test_log_unreadable_lines(tmp_path: Path) -> None:
    events: list[Any] = [
        session("s0", 0.3, {"a.md": 1.0}),
        "this is not json\n",
        session("s1", 0.6, {"a.md": 1.0}),
        {"type": "bogus", "session_id": "s1"},
        session("s2", 0.4, {"a.md": 1.0}),
        '{"type": "session", "session_id": "s3", "base_r',  # a crash mid-append: no newline
    ]
    f = by_code(make_workspace(tmp_path, lessons=LESSONS, events=events))["log-unreadable-lines"]
    assert f.severity == PROBLEM
    assert f.items == ("line 2", "line 4", "line 6")
    assert f.message.startswith("3 lines of the log could not be used: ")
    assert "line 2" in f.message


def test_duplicate_session_ids(tmp_path: Path) -> None:
    events = [*clean_events(), session("s1", 0.9, {"b.md": 1.0})]  # s1 is clean_events' second line
    found = by_code(make_workspace(tmp_path, lessons=LESSONS, events=events))
    f = found["duplicate-session-ids"]
    assert f.severity == PROBLEM
    assert f.items == ("line 7",)
    assert "log-unreadable-lines" not in found


def test_broken_lessons(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, lessons=LESSONS, events=clean_events())
    bad_yaml = root / "lessons" / "tools" / "bad.md"
    bad_yaml.write_text("---\nmatch: [unclosed\n---\n# Bad\n", encoding="utf-8")
    bad_status = root / "lessons" / "weird.md"
    bad_status.write_text("---\nstatus: sometimes\n---\n# Weird\n", encoding="utf-8")
    f = by_code(root)["broken-lessons"]
    assert f.severity == PROBLEM
    assert set(f.items) == {str(bad_yaml), str(bad_status)}
    assert f.message.startswith("2 lesson files could not be loaded: ")


def test_findings_are_sorted_problems_first(tmp_path: Path) -> None:
    events: list[Any] = [
        *clean_events(),
        "garbage\n",
        session("ghost", 0.5, {"gone.md": 0.5}),
        session("s0", 0.5, {"a.md": 0.5}),
    ]
    found = findings(make_workspace(tmp_path, lessons=LESSONS, events=events))
    keys = [(f.severity != PROBLEM, f.code) for f in found]
    assert keys == sorted(keys)
    assert [f.code for f in found] == ["duplicate-session-ids", "log-unreadable-lines", "ghost-arms"]


def test_counts_of_one_agree_with_their_noun(tmp_path: Path) -> None:
    """lint (and the dashboard's Health screen: the same messages) said `1 line(s) of the log`, `1 session
    id(s)`, `1 lesson(s) in the log are not in the library`. One of each here: garbage on line 7, s0
    logged again (clean_events' first session), gone.md in no lesson file."""
    events: list[Any] = [
        *clean_events(),
        "garbage\n",
        session("ghost", 0.5, {"gone.md": 0.5}),
        session("s0", 0.5, {"a.md": 0.5}),
    ]
    found = by_code(make_workspace(tmp_path, lessons=LESSONS, events=events))
    assert found["log-unreadable-lines"].message.startswith("1 line of the log could not be used: line 7")
    assert found["duplicate-session-ids"].message == "1 session id logged more than once; only the first counts"
    assert found["ghost-arms"].message == "1 lesson in the log is not in the library: gone.md"
    assert all("(s)" not in f.message for f in found.values())


def test_a_lesson_listed_twice_in_a_session_is_reported(tmp_path: Path) -> None:
    events = clean_events(4)
    events[1]["lessons"].append({"path": "a.md", "salience": 0.2})  # s1 lists a.md twice
    events[3]["lessons"] += [{"path": "b.md", "salience": 0.1}, {"path": "lessons/b.md", "salience": 0.3}]  # 3 times
    found = by_code(make_workspace(tmp_path, lessons=LESSONS, events=events))
    finding = found["lesson-listed-twice"]
    assert finding.severity == WARNING
    assert finding.items == ("s1", "s3")
    assert finding.message.startswith("2 lessons listed more than once in a session record, in 2 sessions: ")
    clean = make_workspace(tmp_path, lessons=LESSONS, events=clean_events(4), name="ok")
    assert "lesson-listed-twice" not in by_code(clean)


def test_checks_run_on_gathered_data_without_a_workspace() -> None:
    import numpy as np

    from lesson_credit.core.health import HealthData, constant_rewards, run_checks

    # six graded sessions all rewarded 1.0 and nothing else wrong: only the stuck grader shows
    data = HealthData(
        log_problems=(),
        lesson_problems=(),
        sessions=(),
        now=fixed_clock(),
        rewards=np.ones(6),
        n=np.zeros(0, dtype=np.int64),
        mean=np.zeros(0),
        arm_ids=(),
        n_sessions=6,
        known=frozenset({"a.md"}),  # a library (without one, no-lessons is an error too)
        active=frozenset(),
        usage={},
        prefixed_ids=Spellings(),
        missing_salience=0,
        broad_keywords={},
        root="ws",
        retired=frozenset(),
        outcome_labels=(),
        outcomes={},
    )
    assert [(f.code, f.severity) for f in run_checks(data)] == [("rewards-constant", PROBLEM)]
    assert constant_rewards(data)[0].message == "all 6 graded rewards are 1"


def test_lesson_entries_named_by_absolute_paths_are_reported_with_the_prefixed(tmp_path: Path) -> None:
    # gptme names a lesson by its file's absolute path; such entries name the library's arm (the part
    # after the last `lessons` folder) as prefixed ones do, and lint says so the same way: 2 + 1 entries
    events = [
        *clean_events(),
        session("p1", 0.5, {"/home/agent/lessons/a.md": 1.0, "C:\\agent\\lessons\\b.md": 1.0}),
        session("p2", 0.6, {"lessons/tools/c.md": 1.0}),
    ]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    found = by_code(root)
    f = found["prefixed-ids"]
    assert f.message.startswith("3 lesson entries") and "absolute path" in f.message
    assert "ghost-arms" not in found
