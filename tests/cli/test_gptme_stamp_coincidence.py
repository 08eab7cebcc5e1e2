"""The workspace's own bandit-state.json with no copy of what we wrote left, and a session of the log whose time is
exactly the stamp gptme's bandit gave an arm: that session, logged after the file was written, is no sign of when our
write was. The numbers are worked out by hand in each test's comments."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_run import run, run_cli
from tests.support.engine_helpers import BASIC_JOURNAL, BASIC_LESSONS, LOG_REL, STATE_REL, event_line, make_workspace
from tests.support.engine_helpers import session as session_event
from tests.support.gptme_timed import rows

GIT, QUOTE, PLAIN = "tools/git.md", "tools/quote.md", "workflow/plain.md"
GPTME_KEYS = ("arms", "total_sessions", "created", "last_updated")  # what gptme's bandit saves
# gptme's clock (`datetime.now(timezone.utc).isoformat()`), after our writes' `created`
GIT_STAMP, PLAIN_STAMP = "2027-01-01T00:00:00.000001+00:00", "2027-01-01T00:00:05.000002+00:00"


def ok(*argv: str) -> str:
    code, _, err = run_cli(*argv)
    assert code == 0, err
    return err


def append(root: Path, event: dict[str, Any]) -> None:
    with (root / LOG_REL).open("ab") as log:
        log.write(event_line(event))


@pytest.mark.parametrize("verdict", [True, False], ids=["verdict-kept", "checked-again"])
def test_a_session_logged_at_gptmes_stamp_of_another_arm_does_not_date_our_write(tmp_path: Path, verdict: bool) -> None:
    """s1 (0.8; git salience 1: w 1, +0.8/+0.2; quote 0.5: w 0.65, +0.52/+0.48) is graded and we write the file W1:
    git Beta(1.8, 1.2) n 1 and quote Beta(1.52, 1.48) n 1, both stamped with s1's time. gptme's bandit loads W1.
    s2 (0.4; git salience 0: w 0.3, +0.12/+0.88) is graded: we write W2, git Beta(1.92, 2.08) n 2. gptme's process
    then saves what it loaded plus its sessions: git +1/+0 (Beta(2.8, 1.2) n 2, restamped), plain made at Beta(1, 1)
    and updated +0.8/+0.2 (Beta(1.8, 1.2) n 1), and two sessions that moved no arm: total_sessions 1 + 4 = 5, W1's
    `created`. `.cache` is deleted: no copy of W1 is left, and git's Beta(2.8, 1.2) n 2 is W1's git plus one update
    or (pruned and made again) two updates from Beta(1, 1) over W2: which cannot be told, the file is kept.

    A hook then logs gptme's plain session as s3 (0.8, plain salience 1: +0.8/+0.2) under the time gptme's bandit
    stamped plain with. Taken for the stamp our write gave plain, s3 made our write later than s3, so later than s2:
    git could not be W1's, and was logged as made again from Beta(1, 1), +1.8/+0.2 and 2 selections: Beta(3.72,
    2.28) n 4, s1's +0.8/+0.2 counted a second time (the truth: W1's git plus one update, Beta(2.92, 2.08) n 3).
    The file is kept, whether the verdict is kept or checked again; plain is the log's s3, Beta(1.8, 1.2) n 1."""
    s1 = session_event("s1", 0.8, {GIT: 1.0, QUOTE: 0.5}, timestamp="2026-11-01T10:00:00Z")
    root = make_workspace(tmp_path, BASIC_LESSONS, events=[s1], journals={"j.txt": BASIC_JOURNAL}, name="ws")
    ok("grade", "s1", "0.8", "--workspace", str(root))
    loaded = json.loads((root / STATE_REL).read_text())  # W1, as gptme's bandit loads it
    assert loaded["arms"][GIT]["alpha"] == pytest.approx(1.8) and loaded["total_sessions"] == 1
    append(root, session_event("s2", 0.4, {GIT: 0.0}, timestamp="2026-11-02T10:00:00Z"))
    ok("grade", "s2", "0.4", "--workspace", str(root))
    git = loaded["arms"][GIT]
    git.update(alpha=git["alpha"] + 1.0, last_updated=GIT_STAMP)
    git["total_selections"] += 1
    git["total_rewards"] += 1
    loaded["arms"][PLAIN] = {"arm_id": PLAIN, "alpha": 1.8, "beta": 1.2, "total_selections": 1, "total_rewards": 1}
    loaded["arms"][PLAIN]["last_updated"] = PLAIN_STAMP
    loaded["total_sessions"] += 4
    (root / STATE_REL).write_text(json.dumps({key: loaded[key] for key in GPTME_KEYS}))
    saved = (root / STATE_REL).read_bytes()
    cache = root / STATE_REL.parent / ".cache"
    shutil.rmtree(cache)
    err = ok("status", "--workspace", str(root))
    assert "left as it is" in err and f"{GIT} is not the log's" in err, err
    append(root, session_event("s3", 0.8, {PLAIN: 1.0}, timestamp=PLAIN_STAMP))
    if not verdict:
        shutil.rmtree(cache)
    err = ok("status", "--workspace", str(root))
    assert "left as it is" in err and f"{GIT} is not the log's" in err, err
    assert (root / STATE_REL).read_bytes() == saved
    expected = {GIT: (1.92, 2.08, 2), QUOTE: (1.52, 1.48, 1), PLAIN: (1.8, 1.2, 1)}
    assert rows(root) == {key: pytest.approx(value) for key, value in expected.items()}


def test_a_session_scored_after_a_later_grade_at_a_stamp_before_created_does_not_date_our_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As above, but gptme's clock is behind ours when it stamps plain: its stamp, 2026-11-30T12:00:00.000002+00:00, is
    earlier than W1's `created` (our clock: s1 graded at 2026-12-01T00:00:00Z), so "a stamp later than created" does
    not set it apart. s2 is graded at 01:00:00Z, after W1 was written (its grade's time, our clock, is later than
    W1's `created`); the hook logs gptme's plain session as s3 under plain's stamp after that grade, so s3 was never
    scored when W1 was written and no stamp of W1 names it. Taken for one, it made W1 later than s2 and git "made
    again": Beta(3.72, 2.28) n 4, s1 counted twice. git stays what cannot be told (the file kept), plain the log's s3,
    Beta(1.8, 1.2) n 1 (numbers as above)."""
    s1 = session_event("s1", 0.8, {GIT: 1.0, QUOTE: 0.5}, timestamp="2026-11-01T10:00:00Z")
    root = make_workspace(tmp_path, BASIC_LESSONS, events=[s1], journals={"j.txt": BASIC_JOURNAL}, name="ws")

    def at(hour: int) -> Any:
        return lambda: dt.datetime(2026, 12, 1, hour, 0, 0, tzinfo=dt.UTC)

    def ok_at(hour: int, *argv: str) -> str:
        code, _, err = run(capsys, *argv, "--workspace", str(root), clock=at(hour))
        assert code == 0, err
        return err

    ok_at(0, "grade", "s1", "0.8")
    loaded = json.loads((root / STATE_REL).read_text())  # W1, as gptme's bandit loads it
    assert loaded["created"].startswith("2026-12-01T00:00:00")
    append(root, session_event("s2", 0.4, {GIT: 0.0}, timestamp="2026-11-02T10:00:00Z"))
    ok_at(1, "grade", "s2", "0.4")
    git = loaded["arms"][GIT]
    git.update(alpha=git["alpha"] + 1.0, last_updated=GIT_STAMP)
    git["total_selections"] += 1
    git["total_rewards"] += 1
    behind = "2026-11-30T12:00:00.000002+00:00"
    loaded["arms"][PLAIN] = {"arm_id": PLAIN, "alpha": 1.8, "beta": 1.2, "total_selections": 1, "total_rewards": 1}
    loaded["arms"][PLAIN]["last_updated"] = behind
    loaded["total_sessions"] += 4
    (root / STATE_REL).write_text(json.dumps({key: loaded[key] for key in GPTME_KEYS}))
    saved = (root / STATE_REL).read_bytes()
    cache = root / STATE_REL.parent / ".cache"
    shutil.rmtree(cache)
    err = ok_at(2, "status")
    assert "left as it is" in err and f"{GIT} is not the log's" in err, err
    append(root, session_event("s3", 0.8, {PLAIN: 1.0}, timestamp=behind))
    shutil.rmtree(cache)
    err = ok_at(3, "status")
    assert "left as it is" in err and f"{GIT} is not the log's" in err, err
    assert (root / STATE_REL).read_bytes() == saved
    expected = {GIT: (1.92, 2.08, 2), QUOTE: (1.52, 1.48, 1), PLAIN: (1.8, 1.2, 1)}
    assert rows(root) == {key: pytest.approx(value) for key, value in expected.items()}
