"""export-gptme to another file (gptme's own bandit in another folder), gptme's sessions there, import-gptme of
that file: the log alone says what the export wrote (an export event), so only what gptme added since is
logged, whatever local files are gone (`state/lesson-thompson/exports/` is gitignored: a fresh clone, `git
clean -fdx` or a teammate's machine has none). The numbers of each test are worked out by hand in its comments."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.bandit.increments import written_copy
from lesson_credit.core.log.events import ExportEvent, InvalidEvent, decode_event
from tests.support.cli_run import run_cli
from tests.support.cli_run import run_ok as ok
from tests.support.engine_helpers import BASIC_JOURNAL, BASIC_LESSONS, LOG_REL, STATE_REL, make_workspace

GIT, QUOTE, PLAIN = "tools/git.md", "tools/quote.md", "workflow/plain.md"
S1 = {"type": "session", "session_id": "s1", "base_reward": 0.8, "lessons": [{"path": GIT, "salience": 1.0}]}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A workspace whose log holds s1: git rewarded 0.8 at salience 1, so git is Beta(1.8, 1.2), n 1."""
    return make_workspace(tmp_path, BASIC_LESSONS, events=[S1], journals={"j.txt": BASIC_JOURNAL}, name="ws")


def gptme_update(path: Path, arms: dict[str, tuple[float, float, int, int]], sessions: int = 1) -> None:
    """gptme's bandit saving its sessions on a file: each arm's alpha, beta, total_selections and total_rewards
    go up by the numbers given (an arm it lacks starts at Beta(1, 1)), total_sessions by `sessions`, and it
    saves only its own keys (our stamp is gone)."""
    state = json.loads(path.read_text())
    for key, (a, b, n, r) in arms.items():
        arm = state["arms"].setdefault(key, {"arm_id": key, "alpha": 1.0, "beta": 1.0, "total_selections": 0,
                                             "total_rewards": 0, "last_updated": ""})  # fmt: skip
        arm.update(alpha=arm["alpha"] + a, beta=arm["beta"] + b)
        arm["total_selections"] += n
        arm["total_rewards"] += r
    state["total_sessions"] += sessions
    path.write_text(json.dumps({k: state[k] for k in ("arms", "total_sessions", "created", "last_updated")}))


def forget_local_copies(root: Path) -> None:
    """What a fresh clone lacks: the gitignored `exports/` and `.cache/` beside the log."""
    for name in ("exports", ".cache"):
        shutil.rmtree(root / STATE_REL.parent / name, ignore_errors=True)


def posteriors(root: Path) -> dict[str, tuple[float, float, int]]:
    out = ok("status", "--workspace", str(root), "--json")
    return {r["path"]: (r["alpha"], r["beta"], r["n"]) for r in json.loads(out)["lessons"] if r["n"]}


def events(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (root / LOG_REL).read_text().splitlines()]


def test_an_export_imported_back_without_its_copy_counts_the_logs_evidence_once(root: Path, tmp_path: Path) -> None:
    """With `exports/` gone the import took the exported file for another bandit's and logged all of it as a
    prior: s1's evidence, already in it, counted twice (git Beta(3.6, 1.4) n 3)."""
    out_file = tmp_path / "gptme" / "bandit-state.json"
    out_file.parent.mkdir()
    ok("export-gptme", "--workspace", str(root), str(out_file.parent))
    gptme_update(out_file, {GIT: (1.0, 0.0, 1, 1)})  # one session of gptme's there, git rewarded
    forget_local_copies(root)
    ok("import-gptme", "--workspace", str(root), str(out_file))
    # s1: Beta(1.8, 1.2) n 1; gptme's +1/+0 and one selection: Beta(2.8, 1.2) n 2
    assert posteriors(root) == {GIT: pytest.approx((2.8, 1.2, 2))}
    assert json.loads((root / STATE_REL).read_text())["total_sessions"] == 2  # s1 and gptme's one


def test_a_fresh_clone_of_the_workspace_imports_only_gptmes_update(root: Path, tmp_path: Path) -> None:
    """A teammate's clone (no `exports/`, no `.cache/`), the gptme file copied to another path there: the
    export event in the log, found by the file's `created` (gptme keeps it), is the base."""
    out_file = tmp_path / "out.json"
    ok("export-gptme", "--workspace", str(root), str(out_file))
    gptme_update(out_file, {GIT: (0.0, 1.0, 1, 0), QUOTE: (1.0, 0.0, 1, 1)})  # QUOTE: a new arm, from Beta(1, 1)
    clone = tmp_path / "clone"
    shutil.copytree(root, clone, ignore=shutil.ignore_patterns("exports", ".cache"))
    elsewhere = tmp_path / "teammate.json"
    shutil.copy(out_file, elsewhere)
    ok("import-gptme", "--workspace", str(clone), str(elsewhere))
    # git: Beta(1.8, 1.2) n 1 + (0, 1, 1) = Beta(1.8, 2.2) n 2; quote: Beta(1, 1) + (1, 0, 1) = Beta(2, 1) n 1
    assert posteriors(clone) == {GIT: pytest.approx((1.8, 2.2, 2)), QUOTE: pytest.approx((2.0, 1.0, 1))}


def test_two_imports_after_two_updates_log_each_increment_once(root: Path, tmp_path: Path) -> None:
    out_file = tmp_path / "out.json"
    ok("export-gptme", "--workspace", str(root), str(out_file))
    forget_local_copies(root)
    gptme_update(out_file, {GIT: (0.1, 0.0, 1, 0)})
    ok("import-gptme", "--workspace", str(root), str(out_file))
    forget_local_copies(root)
    gptme_update(out_file, {GIT: (0.2, 0.7, 1, 0), PLAIN: (1.0, 0.0, 1, 1)}, sessions=2)
    ok("import-gptme", "--workspace", str(root), str(out_file))
    log_before = (root / LOG_REL).read_bytes()
    out = ok("import-gptme", "--workspace", str(root), str(out_file))  # nothing new: nothing logged
    assert "nothing new" in out and (root / LOG_REL).read_bytes() == log_before
    added = [(e["arms"], e.get("sessions")) for e in events(root) if e.get("increments")]
    assert added == [
        ({GIT: {"alpha": pytest.approx(0.1), "beta": 0.0, "n": 1, "rewards": 0}}, 1),
        (
            {
                GIT: {"alpha": pytest.approx(0.2), "beta": pytest.approx(0.7), "n": 1, "rewards": 0},
                PLAIN: {"alpha": 1.0, "beta": 0.0, "n": 1, "rewards": 1},
            },
            2,
        ),
    ]
    # git: Beta(1.8, 1.2) n 1 + (0.1, 0, 1) + (0.2, 0.7, 1) = Beta(2.1, 1.9) n 3; plain: Beta(2, 1) n 1
    assert posteriors(root) == {GIT: pytest.approx((2.1, 1.9, 3)), PLAIN: pytest.approx((2.0, 1.0, 1))}
    assert json.loads((root / STATE_REL).read_text())["total_sessions"] == 4  # s1, gptme's 1 and 2


def test_an_export_over_gptmes_unimported_updates_is_refused_without_the_copy(root: Path, tmp_path: Path) -> None:
    out_file = tmp_path / "out.json"
    ok("export-gptme", "--workspace", str(root), str(out_file))
    gptme_update(out_file, {GIT: (1.0, 0.0, 1, 1)})
    forget_local_copies(root)
    before = out_file.read_bytes()
    code, out, err = run_cli("export-gptme", "--workspace", str(root), str(out_file))
    assert code == 1 and len(err.strip().splitlines()) == 1 and "import-gptme" in err, (out, err)
    assert out_file.read_bytes() == before
    ok("import-gptme", "--workspace", str(root), str(out_file))
    ok("export-gptme", "--workspace", str(root), str(out_file))  # imported: written again, from the log
    assert json.loads(out_file.read_text())["arms"][GIT]["alpha"] == pytest.approx(2.8)  # 1.8 + gptme's 1


def test_gptmes_save_while_an_export_writes_its_file_is_not_replaced(root: Path, tmp_path: Path) -> None:
    """gptme's bandit there saved the exported file after `export-gptme` had checked it held nothing
    unimported, while the export logged its event: the export replaced it, and gptme's session was gone.
    It now says so in one line and leaves gptme's file; an import logs the session, then the export runs."""
    from lesson_credit.core.base.errors import UserError
    from lesson_credit.core.workspace import Workspace

    out_file = tmp_path / "out.json"
    ok("export-gptme", "--workspace", str(root), str(out_file))
    exporter = Workspace(root)
    log_export = exporter._log_export

    def gptme_saves_meanwhile(numbers: Any) -> None:
        log_export(numbers)
        gptme_update(out_file, {GIT: (1.0, 0.0, 1, 1)})

    exporter._log_export = gptme_saves_meanwhile  # type: ignore[method-assign]
    with pytest.raises(UserError, match="saved by another tool"):
        exporter.export_gptme(out_file)
    assert json.loads(out_file.read_text())["arms"][GIT]["alpha"] == pytest.approx(2.8)  # 1.8 + gptme's 1
    ok("import-gptme", "--workspace", str(root), str(out_file))
    ok("export-gptme", "--workspace", str(root), str(out_file))
    # s1: Beta(1.8, 1.2) n 1, plus gptme's +1/+0 and one selection
    assert posteriors(root) == {GIT: pytest.approx((2.8, 1.2, 2))}


def test_the_commands_say_what_they_did_in_json(root: Path, tmp_path: Path) -> None:
    out_file = tmp_path / "out.json"
    out = ok("export-gptme", "--workspace", str(root), str(out_file), "--json")
    assert json.loads(out) == {"wrote": str(out_file), "logged": True, "warnings": []}
    exported = events(root)[-1]
    assert (exported["type"], exported["path"], exported["sessions"]) == ("export", str(out_file.resolve()), 1)
    assert exported["arms"][GIT] == {"alpha": pytest.approx(1.8), "beta": pytest.approx(1.2), "n": 1, "rewards": 1}
    assert exported["created"] == json.loads(out_file.read_text())["created"]
    gptme_update(out_file, {GIT: (1.0, 0.0, 1, 1)})
    report = json.loads(ok("import-gptme", "--workspace", str(root), str(out_file), "--json"))
    assert report["imported"] == 0 and report["arms"] == [] and report["warnings"] == []
    assert (
        report["skipped"] == f"{out_file} was exported from this log: its updates since, to 1 arm, logged as increments"
    )
    assert events(root)[-1]["seen"]["arms"] == {
        GIT: {"alpha": pytest.approx(2.8), "beta": pytest.approx(1.2), "n": 2, "rewards": 2}
    }
    own = json.loads(ok("export-gptme", "--workspace", str(root), str(root / STATE_REL), "--json"))
    assert own == {"wrote": str(root / STATE_REL), "logged": False, "warnings": []}


def test_an_export_event_moves_no_number(root: Path, tmp_path: Path) -> None:
    before = posteriors(root)
    ok("export-gptme", "--workspace", str(root), str(tmp_path / "out.json"))
    assert events(root)[-1]["type"] == "export"
    assert posteriors(root) == before == {GIT: pytest.approx((1.8, 1.2, 1))}


def test_a_copy_an_earlier_version_kept_in_exports_is_logged_and_used(root: Path, tmp_path: Path) -> None:
    """A workspace from before export events: its log holds no export, `exports/` its copy. The import
    takes the copy as the base, logs it as an export event, and deletes it."""
    out_file = tmp_path / "out.json"
    ok("export-gptme", "--workspace", str(root), str(out_file))
    lines = (root / LOG_REL).read_text().splitlines(keepends=True)
    (root / LOG_REL).write_text("".join(lines[:-1]))  # the export event, as an earlier version wrote none
    forget_local_copies(root)
    digest = hashlib.sha256(str(out_file.resolve()).encode()).hexdigest()[:32]
    legacy = root / STATE_REL.parent / "exports" / digest
    legacy.parent.mkdir()
    legacy.write_bytes(written_copy(json.loads(out_file.read_text())))
    gptme_update(out_file, {GIT: (1.0, 0.0, 1, 1)})
    ok("import-gptme", "--workspace", str(root), str(out_file))
    assert not legacy.exists()
    assert [e["type"] for e in events(root)][-2:] == ["export", "prior"]
    forget_local_copies(root)
    gptme_update(out_file, {GIT: (0.0, 1.0, 1, 0)})
    ok("import-gptme", "--workspace", str(root), str(out_file))
    # git: Beta(1.8, 1.2) n 1 + (1, 0, 1) + (0, 1, 1) = Beta(2.8, 2.2) n 3
    assert posteriors(root) == {GIT: pytest.approx((2.8, 2.2, 3))}


def test_two_bandits_files_add_their_sessions_and_one_imported_again_does_not(root: Path, tmp_path: Path) -> None:
    """The sessions imported files counted were the most any prior event named: a second bandit's file (other
    arms) added none of its own. Each file's counts now, a file imported again counting once."""

    def bandit(name: str, arm: str, total: int) -> Path:
        path = tmp_path / name
        entry = {"arm_id": arm, "alpha": 2.0, "beta": 1.0, "total_selections": 1, "total_rewards": 1}
        path.write_text(json.dumps({"arms": {arm: entry}, "total_sessions": total, "created": name}))
        return path

    first, second = bandit("a.json", QUOTE, 40), bandit("b.json", PLAIN, 7)
    ok("import-gptme", "--workspace", str(root), str(first))
    ok("import-gptme", "--workspace", str(root), str(second))
    assert json.loads((root / STATE_REL).read_text())["total_sessions"] == 48  # s1, 40 and 7
    again = bandit("a.json", QUOTE, 42)  # the first bandit counted 2 more sessions, no arm moved
    ok("import-gptme", "--workspace", str(root), str(again))
    assert json.loads((root / STATE_REL).read_text())["total_sessions"] == 50  # s1, 42 and 7


def test_an_export_event_that_is_not_one_is_a_bad_line() -> None:
    good = {"type": "export", "path": "/x.json", "created": "c", "sessions": 2,
            "arms": {GIT: {"alpha": 1.8, "beta": 1.2, "n": 1, "rewards": 1}}}  # fmt: skip
    event = decode_event(json.dumps(good))
    assert isinstance(event, ExportEvent) and event.numbers.arms == {GIT: (1.8, 1.2, 1, 1)}
    for bad in ({"path": None}, {"created": 3}, {"sessions": -1}, {"arms": {GIT: {"alpha": -1, "beta": 1}}}):
        with pytest.raises(InvalidEvent):
            decode_event(json.dumps({**good, **bad}))
    prior = {"type": "prior", "arms": {GIT: {"alpha": 2, "beta": 1}}}
    assert decode_event(json.dumps({**prior, "created": "c"})).created == "c"  # type: ignore[union-attr]
    for created in (3, ""):
        with pytest.raises(InvalidEvent):
            decode_event(json.dumps({**prior, "created": created}))
    with pytest.raises(InvalidEvent):  # an increments event names no file
        decode_event(json.dumps({**prior, "increments": True, "created": "c"}))
    seen = {"path": "/x.json", "created": "c", "arms": {}, "sessions": 1.5}
    with pytest.raises(InvalidEvent):
        decode_event(json.dumps({"type": "prior", "increments": True, "arms": {}, "sessions": 1, "seen": seen}))


def test_an_export_refused_at_its_target_logs_nothing(root: Path, tmp_path: Path) -> None:
    """A symbolic link at the path is refused (one line, nothing written); the export event was logged
    before the refusal, so the log said an export was written that never was."""
    real = tmp_path / "real.json"
    real.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    log_before = (root / LOG_REL).read_bytes()
    code, out, err = run_cli("export-gptme", "--workspace", str(root), str(link))
    assert code == 1 and len(err.strip().splitlines()) == 1 and "symbolic link" in err, (out, err)
    assert (root / LOG_REL).read_bytes() == log_before and real.read_text() == "{}"


def test_two_agents_files_of_one_library_add_their_sessions(root: Path, tmp_path: Path) -> None:
    """Two gptme agents with the same lesson library: their files name the same arms, so the second import
    replaced every prior of the first and was taken for the first file imported again (the larger count
    kept, 40). Their `created` (gptme keeps it) tells them apart: each agent's sessions count, and an agent's
    file imported again, having counted on, replaces its own count only."""

    def agent(name: str, total: int, alpha: float = 2.0) -> Path:
        path = tmp_path / f"{name}.json"
        entry = {"arm_id": QUOTE, "alpha": alpha, "beta": 1.0, "total_selections": 1, "total_rewards": 1}
        path.write_text(json.dumps({"arms": {QUOTE: entry}, "total_sessions": total, "created": f"{name} created"}))
        return path

    ok("import-gptme", "--workspace", str(root), str(agent("a", 40)))
    ok("import-gptme", "--workspace", str(root), str(agent("b", 7, alpha=3.0)))
    assert json.loads((root / STATE_REL).read_text())["total_sessions"] == 48  # s1, a's 40 and b's 7
    ok("import-gptme", "--workspace", str(root), str(agent("a", 45)))  # a counted 5 more, no arm moved
    assert json.loads((root / STATE_REL).read_text())["total_sessions"] == 53  # s1, a's 45 and b's 7


@pytest.mark.parametrize(
    ("target", "says"),
    [
        (LOG_REL, "the workspace's event log"),
        ("lessons/tools/git.md", "not JSON"),
        ("j.txt", "not JSON"),
        ("state/lesson-thompson/config.toml", "not JSON"),
        ("other.json", "a JSON object without an 'arms' object"),
    ],
)
def test_an_export_never_replaces_a_file_that_is_not_a_bandit_state(root: Path, target: str, says: str) -> None:
    """`export-gptme` onto the event log replaced it with bandit-state JSON (exit 0: every session
    lost), and onto a lesson, a journal or config.toml replaced those: a typo in PATH destroyed a file.
    Now a file there that is not a gptme bandit-state.json is refused: one line, nothing written."""
    (root / "state/lesson-thompson/config.toml").write_text("floor = 0.3\n")
    (root / "other.json").write_text('{"type": "session", "session_id": "x"}\n')
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and ".cache" not in p.parts}
    code, out, err = run_cli("export-gptme", "--workspace", str(root), str(root / target))
    assert (code, out) == (1, "")
    assert len(err.strip().splitlines()) == 1 and says in err and "not replaced" in err, err
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and ".cache" not in p.parts} == before


@pytest.mark.parametrize("content", [None, "", "{}", '{"arms": {}}'])
def test_an_export_writes_a_new_empty_or_bandit_state_file(root: Path, tmp_path: Path, content: str | None) -> None:
    """What an export may write over: nothing yet, an empty file (mktemp's) or a gptme state file. (An empty
    file changed within the last seconds may be a save caught half-way, refused for now: tests/cli/test_slow_save.py;
    these are an hour old.)"""
    target = tmp_path / "gptme.json"
    if content is not None:
        target.write_text(content)
        os.utime(target, (time.time() - 3600, time.time() - 3600))
    ok("export-gptme", "--workspace", str(root), str(target))
    # s1: reward 0.8 at salience 1 (weight 1) from Beta(1, 1): alpha 1 + 0.8
    assert json.loads(target.read_text())["arms"][GIT]["alpha"] == pytest.approx(1.8)


@pytest.mark.parametrize("there", [True, False])
def test_an_export_never_replaces_the_event_logs_lock_file(root: Path, there: bool) -> None:
    """The writers' lock file is empty, so it passed for a file an export may replace: the export renamed
    its JSON over the lock it held itself, and a writer waiting on the old file and one opening the new
    could then both hold "the" lock. Refused whether it is there yet or not: one line, nothing written."""
    lock = root / (str(LOG_REL) + ".lock")
    if there:
        lock.write_bytes(b"")
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and ".cache" not in p.parts}
    code, out, err = run_cli("export-gptme", "--workspace", str(root), str(lock))
    assert (code, out) == (1, "")
    assert len(err.strip().splitlines()) == 1 and "lock" in err and "not replaced" in err, err
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and ".cache" not in p.parts} == before


def test_a_copy_of_an_imported_export_and_the_export_each_log_their_own_sessions(root: Path, tmp_path: Path) -> None:
    """The exported file copied to a second gptme bandit after one of its sessions was imported; the copy saves a
    session (quote), then the first file another (git). Each file's sessions are logged once, whichever is
    imported when. The copy's import was taken for the exported file's numbers: the first file, as it was, was
    then refused ('it lacks tools/quote.md, which lesson-credit wrote'), and its next session could not be
    logged at all."""
    first, second = tmp_path / "a" / "bandit-state.json", tmp_path / "b" / "bandit-state.json"
    first.parent.mkdir()
    second.parent.mkdir()
    ok("export-gptme", "--workspace", str(root), str(first))
    gptme_update(first, {GIT: (1.0, 0.0, 1, 1)})
    ok("import-gptme", "--workspace", str(root), str(first))
    shutil.copy(first, second)
    gptme_update(second, {QUOTE: (1.0, 0.0, 1, 1)})  # a new arm there, from Beta(1, 1)
    for path in (second, first, second):  # each once, however often
        ok("import-gptme", "--workspace", str(root), str(path))
    # git: Beta(1.8, 1.2) n 1 + the first's (1, 0, 1) = Beta(2.8, 1.2) n 2; quote: Beta(1, 1) + (1, 0, 1)
    assert posteriors(root) == {GIT: pytest.approx((2.8, 1.2, 2)), QUOTE: pytest.approx((2.0, 1.0, 1))}
    gptme_update(first, {GIT: (0.0, 1.0, 1, 0)})
    for path in (first, second, first):
        ok("import-gptme", "--workspace", str(root), str(path))
    assert posteriors(root) == {GIT: pytest.approx((2.8, 2.2, 3)), QUOTE: pytest.approx((2.0, 1.0, 1))}


def test_a_copy_taken_before_the_exports_first_import_takes_the_exports_numbers(root: Path, tmp_path: Path) -> None:
    """The exported file copied to a second bandit before any import; each saves a session (the first on git,
    the second on quote); the first is imported, then the second: the second holds the export's git, not the
    number the first's import saw (taken as its base, git 'went down' and the file was refused)."""
    first, second = tmp_path / "a" / "bandit-state.json", tmp_path / "b" / "bandit-state.json"
    first.parent.mkdir()
    second.parent.mkdir()
    ok("export-gptme", "--workspace", str(root), str(first))
    shutil.copy(first, second)
    gptme_update(first, {GIT: (1.0, 0.0, 1, 1)})
    gptme_update(second, {QUOTE: (1.0, 0.0, 1, 1)})
    for path in (first, second, first, second):
        ok("import-gptme", "--workspace", str(root), str(path))
    # git: Beta(1.8, 1.2) n 1 + the first's (1, 0, 1); quote: Beta(1, 1) + the second's (1, 0, 1)
    assert posteriors(root) == {GIT: pytest.approx((2.8, 1.2, 2)), QUOTE: pytest.approx((2.0, 1.0, 1))}


def test_one_file_imported_by_two_names_counts_each_session_once(root: Path, tmp_path: Path) -> None:
    """The exported file reached by a second name (a hard link: the same file, as a bind mount gives it), each
    name imported in turn while gptme saves sessions there: every session counts once. Each name kept its own
    memory of what its imports saw, so the first name's import took the session the second had logged for new
    (git counted twice: Beta(3.8, 1.2) n 3)."""
    first = tmp_path / "a" / "bandit-state.json"
    first.parent.mkdir()
    ok("export-gptme", "--workspace", str(root), str(first))
    alias = tmp_path / "alias.json"
    alias.hardlink_to(first)
    gptme_update(first, {GIT: (1.0, 0.0, 1, 1)})  # gptme saves in place: both names show it
    for path in (alias, first, alias):
        ok("import-gptme", "--workspace", str(root), str(path))
    # git: Beta(1.8, 1.2) n 1 + gptme's (1, 0, 1) once = Beta(2.8, 1.2) n 2
    assert posteriors(root) == {GIT: pytest.approx((2.8, 1.2, 2))}
    gptme_update(alias, {QUOTE: (1.0, 0.0, 1, 1)})
    for path in (first, alias, first):
        ok("import-gptme", "--workspace", str(root), str(path))
    # quote: Beta(1, 1) + (1, 0, 1) once
    assert posteriors(root) == {GIT: pytest.approx((2.8, 1.2, 2)), QUOTE: pytest.approx((2.0, 1.0, 1))}


def test_a_file_moved_away_and_back_counts_each_session_once(root: Path, tmp_path: Path) -> None:
    """The exported file's folder renamed after an import, a session saved and imported there, and renamed back:
    the session imported from the other name counts once. The first name's own memory of its imports (from
    before the move) was taken as the file's numbers, so the session quote logged under the other name was
    logged again (quote Beta(3, 1) n 2)."""
    first, moved = tmp_path / "a" / "bandit-state.json", tmp_path / "b" / "bandit-state.json"
    first.parent.mkdir()
    ok("export-gptme", "--workspace", str(root), str(first))
    gptme_update(first, {GIT: (1.0, 0.0, 1, 1)})
    ok("import-gptme", "--workspace", str(root), str(first))
    first.parent.rename(moved.parent)
    gptme_update(moved, {QUOTE: (1.0, 0.0, 1, 1)})
    ok("import-gptme", "--workspace", str(root), str(moved))
    moved.parent.rename(first.parent)
    gptme_update(first, {GIT: (0.0, 1.0, 1, 0)})
    for _ in range(2):  # the second finds nothing new
        ok("import-gptme", "--workspace", str(root), str(first))
    # git: Beta(1.8, 1.2) n 1 + (1, 0, 1) + (0, 1, 1) = Beta(2.8, 2.2) n 3; quote: Beta(1, 1) + (1, 0, 1) once
    assert posteriors(root) == {GIT: pytest.approx((2.8, 2.2, 3)), QUOTE: pytest.approx((2.0, 1.0, 1))}


def test_an_export_over_another_bandits_sessions_not_in_the_log_is_refused(root: Path, tmp_path: Path) -> None:
    """gptme's own bandit-state.json of another project, with 9 sessions of its own never imported: an export
    there replaced it, and those sessions were gone from everywhere. Refused (one line, nothing written or
    logged) until `import-gptme` logs them; then the export writes the log's posteriors there."""
    target = tmp_path / "other" / "bandit-state.json"
    target.parent.mkdir()
    quote = {"arm_id": QUOTE, "alpha": 6.0, "beta": 4.0, "total_selections": 9, "total_rewards": 5,
             "last_updated": "2026-10-30T12:00:00Z"}  # fmt: skip
    gptme = {"arms": {QUOTE: quote}, "total_sessions": 9, "created": "2026-10-01T08:00:00Z",
             "last_updated": "2026-10-30T12:00:00Z"}  # fmt: skip
    target.write_text(json.dumps(gptme))
    before, log_before = target.read_bytes(), (root / LOG_REL).read_bytes()
    code, out, err = run_cli("export-gptme", "--workspace", str(root), str(target))
    assert (code, out) == (1, ""), err
    assert len(err.strip().splitlines()) == 1 and "9 sessions" in err and "import-gptme" in err, err
    assert target.read_bytes() == before and (root / LOG_REL).read_bytes() == log_before
    ok("import-gptme", "--workspace", str(root), str(target))
    ok("export-gptme", "--workspace", str(root), str(target))
    written = json.loads(target.read_text())["arms"]
    # quote: the imported prior Beta(6, 4), no session of the log on it; git: s1's Beta(1.8, 1.2)
    assert (written[QUOTE]["alpha"], written[QUOTE]["beta"]) == pytest.approx((6.0, 4.0))
    assert written[GIT]["alpha"] == pytest.approx(1.8)


def test_an_export_replaces_another_bandits_file_without_sessions(root: Path, tmp_path: Path) -> None:
    """A gptme file whose arms are all at its prior Beta(1, 1), no session counted: nothing to lose."""
    target = tmp_path / "bandit-state.json"
    fresh = {"arm_id": QUOTE, "alpha": 1.0, "beta": 1.0, "total_selections": 0, "total_rewards": 0, "last_updated": ""}
    target.write_text(json.dumps({"arms": {QUOTE: fresh}, "total_sessions": 0, "created": "2026-10-01T08:00:00Z"}))
    ok("export-gptme", "--workspace", str(root), str(target))
    assert json.loads(target.read_text())["arms"][GIT]["alpha"] == pytest.approx(1.8)  # s1: 1 + 0.8


@pytest.mark.parametrize("between_reads", [True, False])
def test_an_import_of_a_file_gptme_is_saving_reads_it_once(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, between_reads: bool
) -> None:
    """gptme's bandit saves with `write_text`: the file is emptied when opened, then written. `import-gptme` read
    the file twice: found empty the first time (nothing exported there, as far as it knew) and whole the second,
    the whole file was logged as a prior, s1's evidence in it counted twice (git Beta(2.6, 2.4) n 3); found
    empty both times, it was refused as "not valid JSON" (exit 1, bad input). An empty file is read again a
    moment later, and every decision is made on that one reading."""
    from lesson_credit.core.bandit import interop
    from lesson_credit.core.bandit import saving as save_check

    out_file = tmp_path / "out.json"
    ok("export-gptme", "--workspace", str(root), str(out_file))
    gptme_update(out_file, {GIT: (0.0, 1.0, 1, 0)})  # one session of gptme's there, git not rewarded
    theirs = out_file.read_text()
    handle = out_file.open("w")  # gptme's next save has opened (emptied) the file, not written it yet

    def gptme_finishes() -> None:
        if not handle.closed:
            handle.write(theirs)
            handle.close()

    read_import = interop.read_import

    def read_while_saved(*args: Any, **kwargs: Any) -> Any:  # gptme's save lands between two reads of the file
        gptme_finishes()
        return read_import(*args, **kwargs)

    monkeypatch.setattr(save_check, "_wait_for_save", gptme_finishes)
    if between_reads:
        monkeypatch.setattr(interop, "read_import", read_while_saved)
    ok("import-gptme", "--workspace", str(root), str(out_file))
    # s1: Beta(1.8, 1.2) n 1; gptme's +0/+1 and one selection: Beta(1.8, 2.2) n 2
    assert posteriors(root) == {GIT: pytest.approx((1.8, 2.2, 2))}
    assert [e["arms"] for e in events(root) if e["type"] == "prior"] == [
        {GIT: {"alpha": 0.0, "beta": 1.0, "n": 1, "rewards": 0}}
    ]
