"""Which lessons help, from a workspace's parts: the joint effect and LOO (`loo`), the
randomized-dropout logs it reads, the candidacies behind IPW and the broad-keyword flag.

Functions over explicit inputs (the log reader, the library, the folder), so the Workspace
facade only gathers them; the statistics live in core.analysis.effects, core.analysis.joint and core.analysis.dropout.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lesson_credit.core.analysis.candidacy import candidacies_of
from lesson_credit.core.analysis.coverage import broad_keywords, keyword_coverage
from lesson_credit.core.analysis.effects import LooResult, leave_one_out, loo_payload
from lesson_credit.core.base.files import WriteGuard, write_json
from lesson_credit.core.library.gptme_server import server_names
from lesson_credit.core.library.lessons import Lesson, Library
from lesson_credit.core.log.snapshot import FoldData

if TYPE_CHECKING:
    from lesson_credit.core.analysis.dropout import Coin, DropoutLog
    from lesson_credit.core.analysis.joint import Design, JointFit
    from lesson_credit.core.reader import LogReader

__all__ = ["broad_keywords_of", "candidacies_of", "dropout_log", "loo", "saved_effects", "save_effects", "write_loo"]

EFFECTS_MAGIC = b"lesson-credit effects 1\n"
EFFECTS_MAX_BYTES = 64 * 1024 * 1024


def saved_effects(path: Path, key: str) -> dict[str, float] | None:
    """The joint effects saved at `path` for the log version `key` (None: none, another version's,
    or a file that does not check out). The joint fit is the slowest thing the dashboard shows:
    kept per log version, a restart on an unchanged log shows it without fitting again."""
    import msgspec

    from lesson_credit.core.base.files import read_cache
    from lesson_credit.core.base.safe_read import UnsafeFile
    from lesson_credit.core.base.sealed import unseal

    try:
        raw = read_cache(path, EFFECTS_MAX_BYTES)
        stored = None if raw is None else msgspec.msgpack.decode(unseal(EFFECTS_MAGIC, raw))
    except (OSError, UnsafeFile, ValueError, msgspec.DecodeError):
        return None
    if not isinstance(stored, dict) or stored.get("key") != key or not isinstance(stored.get("effects"), dict):
        return None
    effects = stored["effects"]
    if not all(isinstance(k, str) and isinstance(v, float) for k, v in effects.items()):
        return None
    return dict(effects)


def save_effects(path: Path, key: str, effects: Mapping[str, float]) -> None:
    """Best effort, no fsync (a lost file is fitted again); set aside when it cannot be written."""
    import msgspec

    from lesson_credit.core.base.files import write_cache
    from lesson_credit.core.base.sealed import seal

    payload = msgspec.msgpack.encode({"key": key, "effects": {k: float(v) for k, v in effects.items()}})
    write_cache(path, seal(EFFECTS_MAGIC, payload))


def broad_keywords_of(
    lessons: Sequence[Lesson],
    journals: Iterable[str | None],
    read_text: Callable[[str | None], str | None],
    share: float,
) -> dict[str, str]:
    """Lessons with a keyword that hits more than `share` of the journals read (newest first)."""
    read, coverage = keyword_coverage(lessons, journals, read_text)
    return broad_keywords(lessons, read, coverage, share)


def dropout_log(root: Path, library: Library, shown: Callable[[str], str] | None = None) -> DropoutLog:
    """gptme's randomized-dropout logs under `root` (state/lesson-dropout/*.jsonl), ids mapped to library ids;
    `shown` (LogIndex.shown): a lesson the library lacks, to its arm's id in whatever Unicode form it names it."""
    from lesson_credit.core.analysis.dropout import DROPOUT_DIR, read_dropout_logs
    from lesson_credit.core.bandit.interop import ArmMapper

    mapper = ArmMapper((lesson.id for lesson in library.lessons), library.roots)
    if shown is None:
        return read_dropout_logs(root / DROPOUT_DIR, lambda raw: mapper.map(raw)[0])
    return read_dropout_logs(root / DROPOUT_DIR, lambda raw: shown(mapper.map(raw)[0]))


def session_coins(root: Path, library: Library, session_id: str) -> dict[str, Coin]:
    """The dropout coins the session's trial lines already decided, with the epsilon each was flipped at
    (core/analysis/dropout.py), by library id."""
    from lesson_credit.core.analysis.dropout import DROPOUT_DIR
    from lesson_credit.core.analysis.dropout import session_coins as coins
    from lesson_credit.core.bandit.interop import ArmMapper

    mapper = ArmMapper((lesson.id for lesson in library.lessons), library.roots)
    return coins(root / DROPOUT_DIR, session_id, lambda raw: mapper.map(raw)[0])


def loo(
    data: FoldData,
    reader: LogReader,
    library: Library,
    root: Path,
    broad: Mapping[str, str],
    floor: float,
    min_with: int,
    min_without: int,
    joint: JointFit | None = None,
    design: Design | None = None,
) -> tuple[list[LooResult], dict[str, Any]]:
    """Joint effect and leave-one-out lift per lesson, and the counts behind them (sessions
    without logged propensities, sessions with a dropout record). `joint`: the log's joint fit when
    the caller has it (`Workspace.joint_fit`); `design`: the log's design (`build_design` at `floor`)."""
    from lesson_credit.core.analysis.claims import lesson_claims
    from lesson_credit.core.analysis.dropout import DROPOUT_DIR, randomized_effects, unlogged_problem
    from lesson_credit.core.analysis.joint import build_design

    candidacies = candidacies_of(reader.index, data)
    agents = reader.session_agents(data.n_sessions)
    design = design if design is not None else build_design(data, reader.session_categories(), floor, agents)
    claims = lesson_claims(design, session_ids=reader.session_ids(), arm_ids=data.arm_ids)
    dropout = dropout_log(root, library, reader.index.shown)
    randomized = randomized_effects(dropout, reader.row_of, data.base) if len(dropout) else None
    results = leave_one_out(
        data,
        reader.session_categories(),
        candidacies.items,
        min_with=min_with,
        min_without=min_without,
        existing={lesson.id for lesson in library.lessons},
        broad_keywords=dict(broad),
        floor=floor,
        randomized=randomized,
        agents=agents,
        joint=joint,
        claims=claims,
        design=design,
        session_ids=reader.session_ids(),
    )
    unlogged = unlogged_problem(DROPOUT_DIR, randomized or {}, data.arm_ids)
    meta: dict[str, Any] = {
        "sessions_without_propensity": candidacies.sessions_without,
        "dropout_sessions": len(dropout),
        "dropout_problems": (*dropout.problems, *([unlogged] if unlogged else [])),
        "effect_method": None if joint is None else joint.method(),
        "gptme_files": server_names(library.roots),  # the files gptme's lessons MCP server reads
    }
    return results, meta


def write_loo(
    state_dir: Path,
    results: Sequence[LooResult],
    now: str,
    min_with: int,
    min_without: int,
    meta: Mapping[str, Any],
    guard: WriteGuard | None = None,
) -> None:
    """Write `loo-results.json` (docs/format.md §8) in the workspace's state folder, atomically."""
    write_json(state_dir / "loo-results.json", loo_payload(results, now, min_with, min_without, **meta), guard=guard)
