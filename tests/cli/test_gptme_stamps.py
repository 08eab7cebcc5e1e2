"""Each arm's `last_updated` in bandit-state.json, as gptme-sessions' `prune` reads it. Its `prune_stale` parses the
stamp with `datetime.fromisoformat` and subtracts it from `datetime.now(timezone.utc)`: on Python 3.10 (which it
supports) that parse refuses a `Z`, and a naive time makes the subtraction a TypeError, so `gptme-sessions bandit
prune` crashed on a file of ours whenever the log's sessions had such times (we copied each as logged). Ours is
now the session's time as gptme writes one (an aware isoformat), and a file of ours is still known by its stamps:
as written now, or as versions before wrote them."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_run import run_cli
from tests.support.engine_helpers import BASIC_JOURNAL, BASIC_LESSONS, LOG_REL, STATE_REL, make_workspace, session
from tests.support.gptme_timed import GPTME_KEYS
from tests.support.two_arms import GPTME_TIME, LESSONS, A, B, ok

GIT, QUOTE, OTHER = "tools/git.md", "tools/quote.md", "tools/other.md"
# What Python 3.10's `datetime.fromisoformat` accepts (its documentation: "YYYY-MM-DD[*HH[:MM[:SS[.fff[fff]]]]
# [+HH:MM[:SS[.ffffff]]]]", any one character for `*`); a `Z` is not among them (3.11 added it).
PY310_ISO = re.compile(
    r"\d{4}-\d\d-\d\d(.\d\d(:\d\d(:\d\d(\.\d{3}(\d{3})?)?)?)?([+-]\d\d:\d\d(:\d\d(\.\d{6})?)?)?)?", re.S
)


def ok_out(*argv: str) -> str:
    code, out, err = run_cli(*argv)
    assert code == 0, err
    return out


def prune_age_days(stamp: str) -> int:
    """gptme-sessions' `prune_stale` on an arm's `last_updated`, as it runs on Python 3.10: the stamp parsed by
    `fromisoformat` (ValueError: a form 3.10 refuses), then subtracted from an aware now (TypeError: naive)."""
    if PY310_ISO.fullmatch(stamp) is None:
        raise ValueError(f"Invalid isoformat string: {stamp!r}")
    return (dt.datetime.now(dt.UTC) - dt.datetime.fromisoformat(stamp)).days


def written_stamps(tmp_path: Path, logged: str) -> dict[str, Any]:
    """The arms' stamps of the file `export-gptme` writes for one session at time `logged` naming a (graded 1.0)
    and one without a time naming b: a's is that session's, b's the time of the write."""
    events = [session("s1", 1.0, {A: 1.0}, timestamp=logged), session("s2", 1.0, {B: 1.0})]
    root = make_workspace(tmp_path, LESSONS, events=events)
    ok("export-gptme", str(root / STATE_REL), "-w", str(root))
    arms = json.loads((root / STATE_REL).read_text())["arms"]
    return {key: arm["last_updated"] for key, arm in arms.items()}


@pytest.mark.parametrize(
    ("logged", "written"),
    [
        ("2026-11-01T10:00:00Z", "2026-11-01T10:00:00+00:00"),  # `record`'s form: Z is UTC
        ("2026-11-01T10:00:00", "2026-11-01T10:00:00+00:00"),  # naive (another tool's): read as UTC
        ("2026-11-01 10:00:00.5Z", "2026-11-01T10:00:00.500000+00:00"),  # a space, a fraction of one digit
        ("2026-11-01T12:00:00+02:00", "2026-11-01T12:00:00+02:00"),  # an offset is kept: aware already
        ("2026-11-01T10:00:00.123456+00:00", "2026-11-01T10:00:00.123456+00:00"),  # gptme-sessions' own: as it is
    ],
    ids=["z", "naive", "space-fraction", "offset", "gptme-form"],
)
def test_gptmes_prune_reads_every_stamp_we_write(tmp_path: Path, logged: str, written: str) -> None:
    stamps = written_stamps(tmp_path, logged)
    for stamp in stamps.values():
        prune_age_days(stamp)  # before: ValueError (`Z`, a space and 1 digit) or TypeError (naive)
    assert stamps[A] == written  # before: `logged` as it is
    # b: no session with a time credits it: the time of the write, aware (before: `...Z`)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", stamps[B]), stamps[B]


def test_the_prune_check_here_is_python_310s() -> None:
    """The check above against what Python 3.10 is documented to do (3.11 parses `Z`; 3.10 does not)."""
    with pytest.raises(ValueError):
        prune_age_days("2026-11-01T10:00:00Z")
    with pytest.raises(TypeError):
        prune_age_days("2026-11-01T10:00:00")
    assert prune_age_days("2026-11-01T10:00:00+00:00") >= 0
    assert prune_age_days("2026-11-01T10:00:00.123456+00:00") >= 0


def timed(tmp_path: Path, times: tuple[str, str]) -> Path:
    """s1 (0.8; git salience 1, quote 0.5) and s2 (0.4; git salience 0) at `times`, the seed strategy, floor 0.3:
    git Beta(1.92, 2.08) n 2 stamped with s2's time, quote Beta(1.52, 1.48) n 1 with s1's (tests/support/gptme_timed
    works them out by hand); bandit-state.json written by the grade."""
    events = [
        session("s1", 0.8, {GIT: 1.0, QUOTE: 0.5}, timestamp=times[0]),
        session("s2", 0.4, {GIT: 0.0}, timestamp=times[1]),
    ]
    root = make_workspace(tmp_path, BASIC_LESSONS, events=events, journals={"j.txt": BASIC_JOURNAL}, name="timed")
    ok("grade", "s2", "0.4", "--workspace", str(root))
    return root


def as_versions_before_wrote_it(root: Path, times: tuple[str, str]) -> dict[str, Any]:
    """The workspace's file with each arm stamped as versions before this one stamped it: its session's time as
    logged (git s2's, quote s1's), our stamp gone with the edit."""
    state: dict[str, Any] = json.loads((root / STATE_REL).read_text())
    state["arms"][GIT]["last_updated"], state["arms"][QUOTE]["last_updated"] = times[1], times[0]
    return state


def as_written(root: Path, times: tuple[str, str]) -> dict[str, Any]:
    """The workspace's file as this version writes it (each stamp its session's time as gptme writes one)."""
    state: dict[str, Any] = json.loads((root / STATE_REL).read_text())
    return state


def gptme_saved(state: dict[str, Any], key: str, added: tuple[float, float, int, int], sessions: int) -> str:
    """gptme's bandit's save after `sessions` of its own that made the arm `key` (from Beta(1, 1), up by `added`:
    alpha, beta, total_selections, total_rewards), stamped with its clock; its own keys only (our stamp gone)."""
    a, b, n, r = added
    arm = {"arm_id": key, "alpha": 1.0 + a, "beta": 1.0 + b, "total_selections": n, "total_rewards": r}
    state["arms"][key] = {**arm, "last_updated": GPTME_TIME}
    state["total_sessions"] += sessions
    return json.dumps({key: state[key] for key in GPTME_KEYS})


def lesson_rows(root: Path) -> dict[str, tuple[float, float, int]]:
    code, out, err = run_cli("status", "--json", "-w", str(root))
    assert code == 0, err
    return {row["path"]: (row["alpha"], row["beta"], row["n"]) for row in json.loads(out)["lessons"] if row["n"]}


TIMES = {
    "z": ("2026-11-01T10:00:00Z", "2026-11-02T10:00:00Z"),  # `record`'s
    "naive": ("2026-11-01T10:00:00", "2026-11-02T10:00:00"),  # another tool's
    "gptme": ("2026-11-01T10:00:00.123456+00:00", "2026-11-02T10:00:00.5+00:00"),  # gptme-sessions' (and 1 digit)
    "offset-space": ("2026-11-01 12:00:00+02:00", "2026-11-02 10:00:00.000-00:00"),
}
STAMPED = {"before": as_versions_before_wrote_it, "now": as_written}


@pytest.mark.parametrize("stamped", sorted(STAMPED))
@pytest.mark.parametrize("form", sorted(TIMES))
def test_a_backup_of_ours_is_known_by_its_stamps(tmp_path: Path, form: str, stamped: str) -> None:
    """A backup of the file as this version writes it or as versions before wrote it (each stamp a session's time
    as logged), where gptme's bandit then made an arm (five sessions, four rewarded), and no copy of ours left: known
    by its stamps as an earlier copy of ours, git and quote as we wrote them, so only gptme's arm is logged, once.
    Taken for another bandit's file, git and quote would count twice."""
    times = TIMES[form]
    root = timed(tmp_path, times)
    backup = tmp_path / "backup.json"
    backup.write_text(gptme_saved(STAMPED[stamped](root, times), OTHER, (4.0, 1.0, 5, 4), sessions=5))
    shutil.rmtree(root / STATE_REL.parent / ".cache")
    out = ok_out("import-gptme", "--workspace", str(root), str(backup))
    assert "increments" in out, out
    # by hand: git and quote as the fixture left them; gptme's arm Beta(1, 1) + (4, 1) = (5, 2) n 5
    expected = {GIT: (1.92, 2.08, 2), QUOTE: (1.52, 1.48, 1), OTHER: (5.0, 2.0, 5)}
    assert lesson_rows(root) == {key: pytest.approx(value) for key, value in expected.items()}
    log = (root / LOG_REL).read_bytes()
    assert "nothing" in ok_out("import-gptme", "--workspace", str(root), str(backup))  # again: nothing logged
    assert (root / LOG_REL).read_bytes() == log


@pytest.mark.parametrize("form", ["naive", "z"])
def test_the_own_file_written_before_this_version_agrees_with_the_log(tmp_path: Path, form: str) -> None:
    """The workspace's own file as versions before this one wrote it, with no copy of ours left: at the log's
    numbers, each arm stamped as a write of ours stamped it then. Nothing is said of it and nothing logged."""
    times = TIMES[form]
    root = timed(tmp_path, times)
    (root / STATE_REL).write_text(json.dumps(as_versions_before_wrote_it(root, times)))
    shutil.rmtree(root / STATE_REL.parent / ".cache")
    log = (root / LOG_REL).read_bytes()
    code, _, err = run_cli("status", "-w", str(root))
    assert code == 0 and "another tool" not in err, err  # (an arm restamped by another tool would be said)
    assert (root / LOG_REL).read_bytes() == log


def test_gptmes_key_for_a_lesson_of_sessions_gptme_sessions_timed(tmp_path: Path) -> None:
    """Sessions logged with gptme-sessions' own times (isoformat, `+00:00`, to the microsecond): our arm's stamp
    has gptme's form (as written before too: as logged), but it is the time of the lesson's session. gptme's
    bandit made `lessons/tools/a.md` (it did not find `tools/a.md`): the lesson is written under gptme's key. Before,
    the form alone took our arm for gptme's, ours was kept and gptme's dropped: gptme drew a from Beta(1, 1)."""
    logged = "2026-11-01T10:00:00.123456+00:00"
    root = make_workspace(tmp_path, LESSONS, events=[session("s1", 0.5, {A: 1.0, B: 1.0}, timestamp=logged)])
    ok("export-gptme", str(root / STATE_REL), "-w", str(root))  # a and b: (1.5, 1.5) n 1, stamped `logged`
    path = root / STATE_REL
    state = json.loads(path.read_text())
    assert state["arms"][A]["last_updated"] == logged
    made = {"arm_id": "lessons/" + A, "alpha": 2.0, "beta": 1.0, "total_selections": 1, "total_rewards": 1}
    state["arms"]["lessons/" + A] = {**made, "last_updated": GPTME_TIME}  # from Beta(1, 1): +1 / +0
    state["total_sessions"] += 1
    path.write_text(json.dumps({key: state[key] for key in GPTME_KEYS}))
    ok("status", "-w", str(root))
    arms = json.loads(path.read_text())["arms"]
    assert "lessons/" + A in arms and A not in arms, sorted(arms)
    # by hand: a = the log's (1.5, 1.5) n 1 + gptme's +1 / +0, n + 1 = (2.5, 1.5) n 2
    assert (arms["lessons/" + A]["alpha"], arms["lessons/" + A]["beta"]) == (2.5, 1.5)


@pytest.mark.parametrize("form", sorted(TIMES))
def test_the_own_file_gptme_saved_unchanged_agrees_with_the_log(tmp_path: Path, form: str) -> None:
    """gptme-sessions' `prune` on the workspace's own file with nothing to prune, then its save (its own keys: our
    stamp gone), and no copy of ours left: every arm at the log's numbers and stamped as we stamp it (its session's
    time as gptme writes one), so the file agrees with the log. `import-gptme` of it has nothing to import."""
    times = TIMES[form]
    root = timed(tmp_path, times)
    state = json.loads((root / STATE_REL).read_text())
    (root / STATE_REL).write_text(json.dumps({key: state[key] for key in GPTME_KEYS}))
    shutil.rmtree(root / STATE_REL.parent / ".cache")
    log = (root / LOG_REL).read_bytes()
    out = ok_out("import-gptme", "--workspace", str(root), str(root / STATE_REL))
    assert "nothing to import" in out, out
    assert (root / LOG_REL).read_bytes() == log
