"""Randomized lesson dropout (gptme's `LESSON_DROPOUT_EPSILON`): read and write its logs, estimate effects.

gptme's lesson auto-include withholds each matched lesson with probability epsilon and logs
`state/lesson-dropout/<session_id>.jsonl`, one JSON object per auto-include call:
`{"ts", "session_id", "epsilon", "withheld": [{"path", "title", ...}], "matched": [...]}`, where
`matched` lists the lessons that were *kept* (docs/format.md §6). Paths are as gptme saw them (usually
absolute); the caller maps them to library ids. A file's lines are its session's (a line naming another
session is skipped: `_belongs`); over them, a lesson counts as the first line naming it decided (kept or
withheld; a line naming it on both sides: kept), at that line's epsilon.

Whether a matched lesson was kept is decided by a coin, so among graded sessions where a lesson
matched and its coin had one epsilon, mean reward when kept minus mean reward when withheld estimates its
effect without confounding; the epsilons' differences are combined (core/analysis/stratified.py: an
epsilon that changed with the baseline confounds the pooled difference). Only the first coin: gptme offers
a withheld lesson again when its keywords come up again, and a session going badly brings them up more, so
"kept in any call" would gather the bad sessions on the kept side. The interval is a Welch t interval on
moderated variances (as `lesson_credit.core.analysis.effects`).

A session with a line without `matched` (gptme-contrib's Claude Code hook logs only what it withheld) is
no trial: which lessons its calls kept is not known (docs/format.md §6).

Reading is bounded: regular files only (no symlinks, FIFOs or devices), at most
`MAX_FILE_BYTES` per file and `MAX_FILES` files; anything else is reported and skipped.
"""

from __future__ import annotations

import errno
import json
import math
import os
import stat
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt

from lesson_credit.core.analysis.estimates import Randomized
from lesson_credit.core.analysis.stratified import stratified_difference
from lesson_credit.core.base.files import StoreError, WriteGuard, open_append
from lesson_credit.core.base.numbers import counted, listed, signed
from lesson_credit.core.base.safe_json import JsonError, decode_json

if TYPE_CHECKING:
    from lesson_credit.core.bandit.select import Selection

FloatArray = npt.NDArray[np.float64]

DROPOUT_DIR = Path("state") / "lesson-dropout"
MAX_FILE_BYTES = 1 << 20
MAX_FILES = 200_000
MIN_SIDE = 2  # sessions kept and withheld before an estimate is shown (the headline needs MIN_RANDOMIZED)
BOM = b"\xef\xbb\xbf"  # a UTF-8 byte order mark (an editor on Windows saves one): no data at a file's start


class Coin(NamedTuple):
    """A lesson's dropout coin as the first trial line naming it decided it."""

    kept: bool
    epsilon: float | None  # that line's epsilon (None: it names none in [0, 1]): P(withheld) when it was flipped


@dataclass(frozen=True)
class DropoutSession:
    session_id: str
    coins: Mapping[str, Coin]  # each lesson's first coin, with the epsilon of the line that flipped it

    @property
    def kept(self) -> frozenset[str]:
        return frozenset(lesson for lesson, coin in self.coins.items() if coin.kept)

    @property
    def withheld(self) -> frozenset[str]:  # withheld by the first line naming it
        return frozenset(lesson for lesson, coin in self.coins.items() if not coin.kept)


@dataclass(frozen=True)
class DropoutLog:
    sessions: Mapping[str, DropoutSession]
    problems: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.sessions)


def _paths(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    out = []
    for item in value:
        path = item.get("path") if isinstance(item, dict) else item
        if isinstance(path, str) and path.strip():
            out.append(path)
    return out


def _read_regular(path: Path) -> bytes:
    """The bytes of a regular file (no symlink followed), refusing files over the size cap."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:  # O_NOFOLLOW at a link is ELOOP, "Too many levels of symbolic links": no loop, a link
        if exc.errno == errno.ELOOP and os.path.islink(path):
            raise OSError("a symbolic link, not followed") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError("not a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise OSError(f"larger than {MAX_FILE_BYTES} bytes")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        raise OSError(f"larger than {MAX_FILE_BYTES} bytes")
    return data


def _file_lines(raw: bytes) -> list[bytes]:
    """A dropout file's lines; a byte order mark at its start is no data (its first line starts after it). One
    anywhere else stays part of its line, which is then no JSON. NUL bytes leading a line with more after them are
    no data either: a crash mid-append can leave the tail NUL padding (the size written, not the data), and gptme
    appends its next line right after it, no newline first (docs/format.md §6). A line of NULs alone stays one."""
    return [line.lstrip(b"\0") or line for line in raw.removeprefix(BOM).splitlines()]


def read_dropout_logs(directory: Path, map_id: Callable[[str], str]) -> DropoutLog:
    """Every `<session_id>.jsonl` under `directory` (not recursive), each the trial of the session it names
    (`_belongs`); empty when there is none."""
    try:
        info = directory.lstat()
    except OSError:
        return DropoutLog({})
    if not stat.S_ISDIR(info.st_mode):
        return DropoutLog({}, (f"{directory}: not a directory; dropout logs ignored",))
    decided: dict[str, dict[str, Coin]] = {}  # per session, each lesson's first coin
    problems: list[str] = []
    unknown_kept: dict[str, None] = {}  # sessions with a line that names no kept lessons (no `matched`), in order
    with os.scandir(directory) as entries:
        names = sorted(e.name for e in entries if e.name.endswith(".jsonl"))
    if len(names) > MAX_FILES:
        problems.append(f"{directory}: {len(names)} files; only the first {MAX_FILES} read")
        names = names[:MAX_FILES]
    for name in names:
        path = directory / name
        try:
            trial = _read_trial(path, name[: -len(".jsonl")], map_id)
        except OSError as exc:
            problems.append(f"{path}: {exc.strerror or exc}; skipped")
            continue
        problems.extend(trial.problems)
        if not trial.lines:  # (nothing of its own: no trial)
            continue
        if trial.unknown_kept:
            unknown_kept[trial.session_id] = None
        coins = decided.setdefault(trial.session_id, {})
        for lesson, coin in trial.coins.items():
            coins.setdefault(lesson, coin)
    sessions = {sid: DropoutSession(sid, coins) for sid, coins in decided.items() if sid not in unknown_kept}
    if unknown_kept:
        problems.append(_unknown_kept_problem(directory, list(unknown_kept)))
    return DropoutLog(sessions, tuple(problems))


class _Trial(NamedTuple):
    session_id: str  # as a line spells it (the event log's id), else the file's name
    coins: dict[str, Coin]
    unknown_kept: bool  # a line without `matched`
    problems: list[str]
    lines: int  # the session's own lines read


def _belongs(named: object, stem: str) -> bool:
    """Whether a line whose `session_id` is `named` is part of the trial of `<stem>.jsonl`'s session. gptme's
    auto-include writes each line to the file of the session id the line names (as `select --dropout` does), so a
    line naming another session was moved or copied there: its place in the file is no order of that session's
    calls, and it is no coin of either session (skipped, and said). A line without a session id (or with one
    that is no string) is the file's; one naming it in another Unicode form is too (a file system that stores
    names decomposed, as macOS's HFS+ does)."""
    if not isinstance(named, str) or not named or named == stem:
        return True
    return unicodedata.normalize("NFC", named) == unicodedata.normalize("NFC", stem)


def _read_trial(path: Path, stem: str, map_id: Callable[[str], str]) -> _Trial:
    """One session's dropout file: each lesson's first coin over the lines of that session, in file order (the
    order gptme appended them); OSError when the file cannot be read."""
    raw = _read_regular(path)
    coins: dict[str, Coin] = {}
    problems: list[str] = []
    others: dict[str, None] = {}
    moved, own, named, unknown_kept = 0, 0, None, False
    for number, line in enumerate(_file_lines(raw), start=1):
        if not line.strip():
            continue
        try:
            record = decode_json(line, path, number)
        except JsonError as exc:
            problems.append(f"{path}:{number}: {exc.reason}; skipped")
            continue
        if not isinstance(record, dict):
            problems.append(f"{path}:{number}: not an object; skipped")
            continue
        sid = record.get("session_id")
        if not _belongs(sid, stem):
            moved += 1
            others[str(sid)] = None
            continue
        own += 1
        if isinstance(sid, str) and sid and named is None:
            named = sid
        unknown_kept = unknown_kept or "matched" not in record
        eps = _line_epsilon(record)
        for lesson, kept in _line_coins(record, map_id).items():
            coins.setdefault(lesson, Coin(kept, eps))
    if moved:
        problems.append(
            f"{path}: {counted(moved, 'line')} {'names' if moved == 1 else 'name'} another session than the "
            f"file's ({listed(list(others), 3)}), where gptme writes only the file's session's lines: skipped"
        )
    return _Trial(named or stem, coins, unknown_kept, problems, own)


def _unknown_kept_problem(directory: Path, sessions: Sequence[str]) -> str:
    """Why sessions with a line that names no kept lessons are no trials: gptme-contrib's Claude Code hook
    logs only what it withheld, and flips a coin again for a lesson injected at an earlier call, so a
    lesson's first coin cannot be read (kept then is not named); nor has such a session a kept side."""
    shown = listed(sessions, 3)
    return (
        f"{directory}: {counted(len(sessions), 'session')} {'has' if len(sessions) == 1 else 'have'} lines that do "
        "not list their kept lessons (no `matched`, as "
        f"the Claude Code hook writes them), so no lesson's first coin is known: not used ({shown})"
    )


def unlogged_problem(directory: Path, randomized: Mapping[str, Randomized], logged: Sequence[str]) -> str | None:
    """The lessons with a randomized estimate that no logged session names (gptme's auto-include kept and withheld
    them; the hook recorded only what `select` chose): `loo` has a row for the log's lessons only, so their
    estimates are said here, or nowhere. `directory`: the dropout folder as the line names it (relative to the
    workspace: the line stays short)."""
    arms = set(logged)
    lost = [
        (lesson, r, r.estimate)
        for lesson, r in sorted(randomized.items())
        if r.estimate is not None and lesson not in arms
    ]
    if not lost:
        return None
    shown = [f"{lesson} {signed(estimate)} ({r.n_kept} kept, {r.n_withheld} withheld)" for lesson, r, estimate in lost]
    has, them = ("has", "it") if len(lost) == 1 else ("have", "them")
    return (
        f"{directory.as_posix()}: {counted(len(lost), 'lesson')} {has} a randomized estimate but no session of the "
        f"log names {them}, so `loo` has no row for {them}: {listed(shown, 3, '; ')}; record the lessons gptme "
        "includes (`record --during`)"
    )


def randomized_effects(
    log: DropoutLog, row_of: Callable[[str], int | None], base: FloatArray, min_side: int = MIN_SIDE
) -> dict[str, Randomized]:
    """Per lesson, among graded sessions where it matched: mean reward when its first coin kept it minus when
    that coin withheld it, per epsilon the coin was flipped at (each coin's own: its line's), the epsilons'
    differences combined weighted by their sessions (`stratified_difference`), with a 95% interval; lessons with
    fewer than `min_side` on a side (at epsilons with both sides) get counts only. Pooling the epsilons credited
    a lesson with whatever changed with epsilon: withheld at 0.1 while rewards were low and at 0.5 once they rose,
    a lesson without effect read -0.17. Each side's variance is moderated toward the rewards' spread within
    sessions of the same epsilons (`_spread`)."""
    groups: dict[str, dict[float | None, tuple[list[float], list[float]]]] = {}
    graded: dict[frozenset[float | None], list[float]] = {}  # graded sessions' rewards by their coins' epsilons
    for session in log.sessions.values():
        row = row_of(session.session_id)
        if row is None or not (0 <= row < len(base)) or math.isnan(float(base[row])):
            continue
        reward = float(base[row])
        graded.setdefault(frozenset(coin.epsilon for coin in session.coins.values()), []).append(reward)
        for lesson, coin in session.coins.items():
            sides = groups.setdefault(lesson, {}).setdefault(coin.epsilon, ([], []))
            sides[0 if coin.kept else 1].append(reward)
    pooled = _spread(graded.values())
    out: dict[str, Randomized] = {}
    for lesson, strata in sorted(groups.items()):
        r = stratified_difference(list(strata.values()), pooled, min_side)
        out[lesson] = Randomized(
            r.estimate, r.ci_low, r.ci_high, r.n_treated, r.n_control, r.p_value, r.n_unused, r.strata
        )
    return out


def _spread(groups: Iterable[Sequence[float]]) -> float:
    """The rewards' variance around their group's mean (pooled over groups: sum of squares over sessions less
    groups), 0 without a degree of freedom. The groups are sessions whose coins had the same epsilons: with one
    epsilon throughout, the graded sessions' variance; a baseline that moved when epsilon changed is no spread
    of a session's reward, and counted as one it widened every interval (most the small sides')."""
    squares, df = 0.0, 0
    for rewards in groups:
        values = np.asarray(rewards, dtype=np.float64)
        squares += float(np.sum((values - values.mean()) ** 2))
        df += len(values) - 1
    return squares / df if df > 0 else 0.0


def _line_coins(record: dict[str, Any], map_id: Callable[[str], str]) -> dict[str, bool]:
    """What one line decided: each lesson it names, kept (True) or withheld (a lesson on both sides: kept)."""
    coins = {map_id(p): False for p in _paths(record.get("withheld"))}
    coins.update((map_id(p), True) for p in _paths(record.get("matched")))
    return coins


def _line_epsilon(record: dict[str, Any]) -> float | None:
    """The line's epsilon when it is a probability (a number in [0, 1]), else None."""
    eps = record.get("epsilon")
    if isinstance(eps, int | float) and not isinstance(eps, bool) and 0.0 <= eps <= 1.0:
        return float(eps)
    return None


def session_coins(directory: Path, session_id: str, map_id: Callable[[str], str]) -> dict[str, Coin]:
    """The coins the session's trial lines already decided, each lesson's first, as `read_dropout_logs`
    counts them (the lines of `<session_id>.jsonl` that are the session's: `_belongs`), with the epsilon they
    were flipped at: a second `select --dropout` for the session (a hook
    run twice) keeps them, so the lessons its record injects are the ones the log says were kept, and
    weighs them by that epsilon (`apply_dropout`). Empty without a readable log."""
    if check_dropout_session_id(session_id) is not None:
        return {}
    try:
        return _read_trial(directory / f"{session_id}.jsonl", session_id, map_id).coins
    except OSError:
        return {}


def check_dropout_session_id(session_id: str) -> str | None:
    """Why a session id cannot name a dropout log file, or None when it can."""
    if session_id in (".", "..") or any(ch in session_id for ch in "/\\\x00\n\r"):
        return f"session id {session_id!r} cannot name a dropout log file (no / \\ or line breaks)"
    if len(session_id.encode("utf-8")) > 200:
        return "session id is too long to name a dropout log file (200 bytes at most)"
    return None


def withhold(
    selected: Sequence[str], epsilon: float, rng: np.random.Generator, decided: Mapping[str, Coin] | None = None
) -> tuple[list[str], list[str]]:
    """Each selected lesson is withheld with probability epsilon, unless its coin was `decided` already:
    (kept, withheld), order kept."""
    if not 0.0 <= epsilon <= 1.0:
        raise ValueError(f"dropout epsilon must be in [0, 1], got {epsilon!r}")
    drawn = (rng.random(len(selected)) < epsilon).tolist()
    decided = decided or {}
    coins = [
        not decided[lesson].kept if lesson in decided else out for lesson, out in zip(selected, drawn, strict=True)
    ]
    kept = [lesson for lesson, out in zip(selected, coins, strict=True) if not out]
    dropped = [lesson for lesson, out in zip(selected, coins, strict=True) if out]
    return kept, dropped


def apply_dropout(
    selection: Selection, epsilon: float, rng: np.random.Generator, decided: Mapping[str, Coin] | None = None
) -> Selection:
    """The selection with each chosen lesson withheld with probability epsilon (or as `decided` already:
    `session_coins`); the propensities become P(injected) = P(chosen) * (1 - epsilon), with the epsilon its
    coin was flipped at: a decided coin's own (an earlier trial's, which may differ from this one's or be 0),
    none logged for a coin flipped at an epsilon the log does not give (a wrong weight is worse than none)."""
    decided = decided or {}
    kept, dropped = withhold(selection.selected, epsilon, rng, decided)
    propensity: dict[str, float] = {}
    for lesson, p in selection.propensity.items():
        eps = decided[lesson].epsilon if lesson in decided else epsilon
        if eps is not None:
            propensity[lesson] = p * (1.0 - eps)
    return replace(
        selection,
        selected=tuple(kept),
        withheld=tuple(dropped),
        propensity=propensity,
        decided=tuple(lesson for lesson in selection.selected if lesson in decided),
    )


def dropout_record(
    session_id: str, epsilon: float, kept: Sequence[tuple[str, str]], withheld: Sequence[tuple[str, str]], ts: float
) -> bytes:
    """One line in gptme's shape; `kept` / `withheld` are (path, title) pairs."""
    record = {
        "ts": ts,
        "session_id": session_id,
        "epsilon": epsilon,
        "withheld": [{"path": path, "title": title} for path, title in withheld],
        "matched": [{"path": path, "title": title} for path, title in kept],
    }
    return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")


def append_dropout_record(
    directory: Path, session_id: str, line: bytes, guard: WriteGuard | None = None
) -> Callable[[], None]:
    """Append one record to `<directory>/<session_id>.jsonl` in a single write: never through a
    symlink that leads out of `guard`'s root (default: the folder's parent), nor through one at that
    name (the reader skips it), never to anything but a regular file (StoreError, naming the path).
    Returns what takes the record back out (`_cut_out`: the record alone, or the file when it was all
    of it), for a caller whose next write failed; a newline that ended a line cut mid-write before it stays,
    so that no line appended later joins that one. The record is found again at the offset the append
    left it at (the descriptor's position after the write, less its length), so a line gptme's
    auto-include appended before it, or after it, is not taken for it."""
    problem = check_dropout_session_id(session_id)
    if problem:
        raise ValueError(problem)
    guard = guard if guard is not None else WriteGuard.of(directory.parent)
    guard.folder(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{session_id}.jsonl"
    if path.is_symlink():  # read as regular files only: a trial written through it would not count at its name
        raise StoreError(
            f"{path} is a symbolic link (to {os.readlink(path)}), which the dropout logs' reader skips: replace it "
            "with the file; nothing written"
        )
    fd = open_append(path, guard, os.O_RDWR)  # (read: how the file ends)
    try:
        os.write(fd, _after_a_cut_line(fd) + line)
        at = os.lseek(fd, 0, os.SEEK_CUR) - len(line)  # where it landed: after whatever was appended before it
        os.fsync(fd)
    finally:
        os.close(fd)

    def take_back() -> None:
        _cut_out(path, guard, at, line)

    return take_back


def _after_a_cut_line(fd: int) -> bytes:
    """A newline when the file ends in a line without one (gptme killed while appending its line): ours then
    starts a line of its own, where appended to it the two made one line that is no JSON, our coins lost."""
    size = os.fstat(fd).st_size
    return b"\n" if size and os.pread(fd, 1, size - 1) != b"\n" else b""


def _cut_out(path: Path, guard: WriteGuard, at: int, line: bytes) -> None:
    """Take the record `line`, appended at byte `at` of the dropout log `path`, back out. What follows it
    stays: gptme's auto-include appends to the session's log without our lock (its line after ours is
    its trial, not ours to take back; cutting the file back to `at` lost it). A file of the record alone
    is removed. StoreError when the file no longer holds the record there (edited meanwhile: left as it
    is). What follows is read, then written back where the record began; the read is repeated until the
    file's size is the same after it as before, so an append during the read is kept. gptme takes no
    lock: a line it appends in the moment between that check and the cut is lost."""
    if not guard.target(path).is_file():  # (removed meanwhile: nothing to take back, and nothing made)
        return
    back = open_append(path, guard, os.O_RDWR)
    try:
        while True:
            size = os.fstat(back).st_size
            if os.pread(back, len(line), at) != line:
                raise StoreError(f"{path}: the record to take back is no longer at byte {at}")
            after = os.pread(back, size - at - len(line), at + len(line))
            if os.fstat(back).st_size == size:
                break
        if at == 0 and not after:
            os.unlink(guard.target(path))
            return
        os.ftruncate(back, at)
        os.write(back, after)  # (appending: where the record began)
        os.fsync(back)
    finally:
        os.close(back)


def check_trial(epsilon: float, session_id: str) -> str | None:
    """Why a dropout trial cannot run for this session (epsilon outside [0, 1], an id that cannot
    name a log file), or None when it can; epsilon 0 is no trial."""
    if not (isinstance(epsilon, int | float) and 0.0 <= epsilon <= 1.0):
        return f"dropout must be in [0, 1], got {epsilon!r}"
    return check_dropout_session_id(session_id) if epsilon > 0 else None


def log_trial(
    root: Path,
    selection: Selection,
    epsilon: float,
    titles: Mapping[str, str],
    ts: float,
    guard: WriteGuard | None = None,
) -> Callable[[], None]:
    """Append the trial's record (kept and withheld lessons) to the workspace's dropout log.
    Called under the event log's lock before the selection event: a selection logged without
    its record would look like no trial. It names only the coins this trial flipped (not those an earlier
    trial of the session decided: `Selection.decided`), so each line's epsilon is that of every coin on it.
    Returns what takes the record back out, for when the
    selection event then fails: a failed `select` leaves no trial line, so its retry leaves one. A select whose
    every coin an earlier trial decided flips none: it writes no line (an empty one would claim a trial at its
    epsilon, at which no coin was flipped); a first trial that chose nothing writes its empty line, as gptme's
    auto-include does for a call in a trial that matched nothing."""
    earlier = set(selection.decided)
    kept = [(i, titles[i]) for i in selection.selected if i not in earlier]
    withheld = [(i, titles[i]) for i in selection.withheld if i not in earlier]
    if earlier and not kept and not withheld:
        return lambda: None
    line = dropout_record(selection.session_id, epsilon, kept, withheld, ts)
    return append_dropout_record(root / DROPOUT_DIR, selection.session_id, line, guard)
