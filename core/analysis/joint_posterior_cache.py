"""The cache of the joint policy's posterior (`core.analysis.joint_posterior`).

**Cache** (`state/lesson-thompson/.cache/joint-posterior.msgpack`): the fit is reused while its
inputs are the same. The file is sealed (a checksum of its payload) and carries a fingerprint
(xxh3-128) of everything the fit reads: each session's reward in force, every injection (session,
lesson, salience, whether it was included during the session), the categories, the agents, the
floor and the prior floor. It is used only when the seal holds and the fingerprint equals the
current log's; otherwise the fit runs again and the file is rewritten. Appending a selection event
(every `select` does) leaves the fingerprint as it was, so the next `select` reuses the fit; a new
record or grade changes it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import msgspec
import numpy as np
import xxhash

from lesson_credit.core.analysis.joint_posterior import POLICY_TAU_MIN, FloatArray, JointPosterior, joint_posterior
from lesson_credit.core.base.files import read_cache, write_cache
from lesson_credit.core.base.safe_read import UnsafeFile
from lesson_credit.core.base.sealed import seal, unseal
from lesson_credit.core.log.snapshot import FoldData

CACHE_NAME = "joint-posterior.msgpack"
CACHE_VERSION = 25  # 2: time blocks, `--during` lessons left out; 3: per-category deviations; 4: read within blocks
# and agents; 5: baselines refitted with them; 6: solved to their fixed point; 7: `Code` is `code`; 8: time-only
# lessons from the prior; 9: blocks from 24 graded sessions; 10: NFC kinds and graders; 11: kinds printed NFC; 12: a
# switch at a block's start is time-only; 13: kinds named by all sessions' spelling; 14: 3 blocks at 50-70 sessions;
# 15: a tau per lesson differing by category, each cell's noise its own; 16: grouped with a time-only one is too; 17:
# a lesson constant in its groups is no one's neighbour; 18: beyond 4,096 lessons, neighbours only from its sessions;
# 19: beyond 600 lessons, neighbours tied in correlation by their sessions; 20: on in whole blocks only: time-only;
# 21: a cell without an estimate keeps its deviation's prior variance; 22: nearly one switch (a stray, a gap):
# time-only; 23: the baseline steps where the design switches inside a block, time-only what they leave little of;
# 24: a category's own time blocks, steps at a lesson's best split and at a new lesson's first injection
# 25: time blocks per category and agent
CACHE_MAGIC = b"lesson-credit joint-posterior 1\n"
CACHE_MAX_BYTES = 1 << 30


def fingerprint(
    data: FoldData, categories: Sequence[str | None], agents: Sequence[str | None], floor: float, tau_min: float
) -> str:
    """xxh3-128 of everything `joint_posterior` reads (see the module docstring)."""
    h = xxhash.xxh3_128()
    h.update(f"{CACHE_VERSION}|{floor!r}|{tau_min!r}|{data.n_sessions}|".encode())
    h.update("\x00".join(data.arm_ids).encode("utf-8", "surrogatepass"))
    for part in ("base", "session", "arm", "salience", "during"):  # (each column's bytes, the entries' read in pieces)
        h.update(b"|")
        whole = part in ("base", "during")
        for piece in [getattr(data, part)] if whole else data.entry_pieces(part):
            h.update(np.ascontiguousarray(piece).data)
    for names in (categories, agents):
        h.update(f"|{len(names)}|".encode())
        h.update("\x00".join("\x01" if name is None else name for name in names).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def encode(key: str, post: JointPosterior) -> bytes:
    payload = {
        "version": CACHE_VERSION,
        "fingerprint": key,
        "arm_ids": list(post.arm_ids),
        "mean": post.mean.astype(np.float64).tobytes(),
        "sd": post.sd.astype(np.float64).tobytes(),
        "n": post.n.astype(np.int64).tobytes(),
        "prior_sd": post.prior_sd,
        "categories": list(post.categories),
        "baselines": post.baselines.astype(np.float64).tobytes(),
        "noise_sd": post.noise_sd,
        "n_sessions": post.n_sessions,
        "deviation": _matrix(post.deviation, post),
        "deviation_var": _matrix(post.deviation_var, post),
        "category_sd": post.category_sd,
    }
    return seal(CACHE_MAGIC, msgspec.msgpack.encode(payload))


def _matrix(values: FloatArray | None, post: JointPosterior) -> bytes:
    shape = (len(post.categories), len(post.arm_ids))
    return (np.zeros(shape) if values is None else values).astype(np.float64).tobytes()


def decode(data: bytes, key: str) -> JointPosterior:
    """The posterior in a cache file written for `key`; ValueError when it is not usable."""
    try:
        p = msgspec.msgpack.decode(unseal(CACHE_MAGIC, data))
    except msgspec.DecodeError as exc:
        raise ValueError(f"unreadable cache: {exc}") from None
    if not isinstance(p, dict) or p.get("version") != CACHE_VERSION:
        raise ValueError("cache from another version")
    if p.get("fingerprint") != key:
        raise ValueError("stale")
    try:
        arm_ids = tuple(str(a) for a in p["arm_ids"])
        mean = np.frombuffer(p["mean"], dtype=np.float64)
        sd = np.frombuffer(p["sd"], dtype=np.float64)
        n = np.frombuffer(p["n"], dtype=np.int64)
        baselines = np.frombuffer(p["baselines"], dtype=np.float64)
        categories = tuple(str(c) for c in p["categories"])
        prior_sd, noise_sd, n_sessions = float(p["prior_sd"]), float(p["noise_sd"]), int(p["n_sessions"])
        shape = (len(categories), len(arm_ids))
        deviation = np.frombuffer(p["deviation"], dtype=np.float64).reshape(shape)
        deviation_var = np.frombuffer(p["deviation_var"], dtype=np.float64).reshape(shape)
        category_sd = float(p["category_sd"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"malformed cache: {exc}") from None
    if not len(mean) == len(sd) == len(n) == len(arm_ids) or len(baselines) != len(categories):
        raise ValueError("inconsistent cache")
    if not (np.isfinite(mean).all() and (np.isfinite(sd) & (sd > 0)).all() and prior_sd > 0):
        raise ValueError("inconsistent cache")
    if not (np.isfinite(deviation).all() and (np.isfinite(deviation_var) & (deviation_var >= 0)).all()):
        raise ValueError("inconsistent cache")
    return JointPosterior(
        arm_ids,
        mean,
        sd,
        n,
        prior_sd,
        categories,
        baselines,
        noise_sd,
        n_sessions,
        deviation,
        deviation_var,
        category_sd,
    )


def cached_joint_posterior(
    data: FoldData,
    categories: Sequence[str | None],
    floor: float,
    agents: Sequence[str | None] = (),
    *,
    cache_dir: Path | None = None,
    tau_min: float = POLICY_TAU_MIN,
    notice: bool = True,
    compute: Callable[[], JointPosterior] | None = None,
) -> JointPosterior:
    """`joint_posterior`, read from the cache in `cache_dir` when it was written for these very
    inputs, else computed and (best effort) written there. Without `cache_dir`, always computed.
    `compute`: how the caller computes `joint_posterior` of these very inputs (sharing passes over
    the log with another fit), else `joint_posterior` itself."""
    if compute is None:
        compute = lambda: joint_posterior(data, categories, floor, agents, tau_min=tau_min)  # noqa: E731
    if cache_dir is None:
        return compute()
    path = cache_dir / CACHE_NAME
    key = fingerprint(data, categories, agents, floor, tau_min)
    try:
        raw = read_cache(path, CACHE_MAX_BYTES)  # None: none, or set aside (a directory in its place, ...)
        if raw is not None:
            return decode(raw, key)
    except (OSError, UnsafeFile) as exc:
        _say(notice, path, f"cannot be read ({exc})")
    except ValueError as exc:
        if str(exc) != "stale":  # a stale cache is the normal case after a new record: refit quietly
            _say(notice, path, f"is damaged or from another version ({exc})")
    post = compute()
    write_cache(path, encode(key, post), sync=True)  # set aside when it cannot be written
    return post


def _say(notice: bool, path: Path, why: str) -> None:
    if notice:
        print(f"lesson-credit: note: {path.name} {why}; refitting the joint estimate", file=sys.stderr)
