"""Analysis and selection policy: the joint fit, its effects, leave-one-out, P(top-k).

The fits of one read of the log live in a `Fits` (one per log version: a new read starts an empty
one), never in attributes that outlive the read they were made from.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from msgspec import Struct

from lesson_credit.core.analysis.limits import BROAD_KEYWORD_SHARE, MIN_WITH, MIN_WITHOUT
from lesson_credit.core.model.settings import CreditSettings
from lesson_credit.core.workspace.reading import Reading

if TYPE_CHECKING:  # imported where used: the analysis and the joint fit are not needed to show posteriors
    from lesson_credit.core.analysis.claims import Fitted
    from lesson_credit.core.analysis.effects import Candidacy, LooResult
    from lesson_credit.core.analysis.joint import Design, JointFit
    from lesson_credit.core.analysis.joint_posterior import JointPosterior
    from lesson_credit.core.analysis.over_time import OverTime


class Fits(Struct):
    """The fits made from one read of the log (`version`): the analysis' joint fit and the policy's
    joint posterior (each for the last salience floor asked), the injection design's fit."""

    version: int
    joint_fit: tuple[float, JointFit] | None = None
    joint_posterior: tuple[float, JointPosterior] | None = None
    columns: tuple[Design, Fitted] | None = None
    timed: tuple[float, npt.NDArray[np.bool_]] | None = None  # the lessons identified only by time (`fit_both`)


class Analysis(Reading):
    """Which lessons help (core.analysis, core.attribution) and what a selection policy would draw."""

    _fits: Fits | None = None  # the fits of the log as last read (`_fits_now`)

    @property
    def policy(self) -> str:
        """The selection policy in force: config.toml's [select] policy, else `joint`; but a log with an
        imported prior (gptme's bandit-state: the joint estimate does not read priors) keeps the credit
        strategy's Beta posteriors until [select] says otherwise (docs/policy.md)."""
        if self.config.policy is not None:
            return self.config.policy
        return self.settings.strategy if bool(np.isfinite(self.data().prior_alpha).any()) else "joint"

    def p_top_k(
        self,
        settings: CreditSettings | None = None,
        k: int | None = None,
        seed: int = 0,
        draws: int = 2000,
        policy: str | None = None,
    ) -> dict[str, float]:
        """P(each active lesson lands in a top-k Thompson draw among all active lessons) under `policy`
        (default: `settings`' strategy when given, else the policy in force)."""
        return self.p_top_k_later(settings, k, seed, draws, policy)()

    def p_top_k_later(
        self,
        settings: CreditSettings | None = None,
        k: int | None = None,
        seed: int = 0,
        draws: int = 2000,
        policy: str | None = None,
    ) -> Callable[[], dict[str, float]]:
        """`p_top_k()` in two steps, for a caller that holds a lock while it reads: the posterior is
        taken now (a snapshot), the Monte Carlo draws (most of the time) run when the result is called."""
        from lesson_credit.core.bandit import policy as policy_mod
        from lesson_credit.core.bandit import select as select_mod

        policy = policy or (settings.strategy if settings is not None else self.policy)
        k, lessons = k or self.config.k, self.library().lessons
        if policy == policy_mod.JOINT:
            joint = self.joint_posterior()
            normal = policy_mod.NormalPosterior(joint.arm_ids, joint.mean, joint.sd, joint.prior_sd)
            return policy_mod.p_top_k_active_later(normal, lessons, k, seed, draws)
        credit = (settings or self.settings).with_(strategy=policy)
        return select_mod.p_top_k_later(self.posterior(credit), credit, lessons, k, seed, draws)

    def effects(self) -> dict[str, float]:
        """Each lesson's ranking (core.analysis.ranking: the joint estimate, a lesson identified only by time
        at the prior's 0), without LOO or flags. Kept in .cache per log version (`saved_effects`)."""
        from lesson_credit.core.analysis.ranking import effects_by_lesson

        inputs = self.analysis_data(), self.session_categories(), self.settings.floor, self.session_agents()
        fit, timed = self.joint_fit(), self._fits_now().timed
        effects = effects_by_lesson(*inputs, fit=fit, timed=timed[1] if timed and timed[0] == inputs[2] else None)
        self.remember_effects(effects)
        return effects

    def fit_both(self) -> None:
        """Make the analysis' joint fit and the policy's joint posterior of the log as read together, for a
        caller that asks for both next (`effects` and `p_top_k`: the dashboard's fits' child). They read the
        same log: one pass of its sums serves both fits (they differ only in their prior floor), the lessons
        identified only by time are found once; each the same numbers as alone. A posterior in its verified
        cache is read, not fitted (the analysis' fit is then left to `joint_fit`)."""
        from lesson_credit.core.analysis.joint import fit_sums
        from lesson_credit.core.analysis.joint_posterior import POLICY_TAU_MIN, Stream, joint_posterior, time_only
        from lesson_credit.core.analysis.joint_posterior_cache import cached_joint_posterior

        data, fits, floor = self.analysis_data(), self._fits_now(), self.settings.floor
        if fits.joint_posterior is not None and fits.joint_posterior[0] == floor:
            return
        categories, agents = self.session_categories(), self.session_agents()

        def together() -> JointPosterior:
            stream = Stream.of_log(data, categories, floor, agents)
            st = stream.sums_and_cells()  # (the posterior's cells tallied in the same pass)
            analysis = fit_sums(st, stream.sessions)  # as `joint_fit` fits it (`fit_log`: these sums)
            policy = fit_sums(st, stream.sessions, tau_min=POLICY_TAU_MIN)  # as `posterior_of` fits it
            del st  # (beyond joint_ops.CROSS_DENSE_MAX lessons: one number per injection)
            timed = time_only(stream)
            fits.joint_fit, fits.timed = (floor, analysis), (floor, timed)
            return joint_posterior(data, categories, floor, agents, shared=(stream, policy, timed))

        cache_dir = self.state_dir / ".cache" if self._reader.caches else None
        post = cached_joint_posterior(data, categories, floor, agents, cache_dir=cache_dir, compute=together)
        fits.joint_posterior = (floor, post)

    def effects_later(self) -> Callable[[], dict[str, float]]:
        """`effects()` in two steps, for a caller that holds a lock while it reads: the log's inputs are
        taken now (a snapshot: later appends do not change them), the fit runs when the result is called."""
        from lesson_credit.core.analysis.ranking import effects_by_lesson

        inputs = self.analysis_data(), self.session_categories(), self.settings.floor, self.session_agents()
        return lambda: effects_by_lesson(*inputs)

    def remember_effects(self, effects: dict[str, float]) -> None:
        """Save joint effects fitted on the log as read now (`saved_effects` gives them back)."""
        from lesson_credit.core import attribution

        key = self._effects_key()
        if key is not None:
            attribution.save_effects(self.state_dir / ".cache" / "effects.msgpack", key, effects)

    def saved_effects(self) -> dict[str, float] | None:
        """The joint effects `effects()` saved for the log as it is now read (None: none yet)."""
        from lesson_credit.core import attribution

        key = self._effects_key()
        return None if key is None else attribution.saved_effects(self.state_dir / ".cache" / "effects.msgpack", key)

    def _effects_key(self) -> str | None:
        """The log as read, the floor, the rewards in force (config.toml's priority and outcomes, the
        records and their weights move them, not a byte of the log), the arms' ids (how a version reads the
        log's lesson paths), the version of what is kept and the analysis code."""
        import xxhash

        from lesson_credit.core.analysis.ranking import EFFECTS_VERSION

        data = self.data()
        content = self._reader.content_key()
        if content is None:
            return None
        rewards = xxhash.xxh3_64_hexdigest(np.ascontiguousarray(data.base, dtype=np.float64).tobytes())
        arms = xxhash.xxh3_64_hexdigest("\x00".join(data.arm_ids).encode("utf-8", "surrogatepass"))
        return f"{content}:{self.settings.floor!r}:{rewards}:{arms}:{EFFECTS_VERSION}:{_fit_version()}"

    def joint_fit(self, floor: float | None = None, design: Design | None = None) -> JointFit:
        """The analysis' joint fit of the log as read (core.analysis.joint, the analysis' prior floor),
        reused by `effects` and `loo` until the log or the floor changes. `floor`: the salience floor
        of the weights (default: the configured one; 1.0 weighs every injection 1, whatever its journal
        says); `design`: the log's `build_design` at that floor when the caller has it (fitted from it,
        the same numbers, without reading the log again). The selection policy's posterior is
        `joint_posterior` (its own prior floor)."""
        from lesson_credit.core.analysis.joint import fit_joint, fit_log

        data = self.analysis_data()
        floor = self.settings.floor if floor is None else floor
        fits = self._fits_now()
        if fits.joint_fit is None or fits.joint_fit[0] != floor:
            fit = (
                fit_joint(design)
                if design is not None
                else fit_log(data, self.session_categories(), floor, self.session_agents())
            )
            fits.joint_fit = (floor, fit)
        return fits.joint_fit[1]

    def joint_posterior(self) -> JointPosterior:
        """The joint estimate as a posterior per lesson (core.analysis.joint_posterior): kept per log
        version in memory, and on disk in the verified cache `.cache/joint-posterior.msgpack`."""
        from lesson_credit.core.analysis.joint_posterior_cache import cached_joint_posterior

        data = self.analysis_data()
        fits, floor = self._fits_now(), self.settings.floor
        if fits.joint_posterior is None or fits.joint_posterior[0] != floor:
            cache_dir = self.state_dir / ".cache" if self._reader.caches else None
            post = cached_joint_posterior(
                data, self.session_categories(), floor, self.session_agents(), cache_dir=cache_dir
            )
            fits.joint_posterior = (floor, post)
        return fits.joint_posterior[1]

    def lesson_over_time(self, lesson_id: str) -> OverTime:
        """A lesson's joint effect by window of the log and its credit posterior after each
        (core.analysis.over_time); the injection design's fit is reused until the log changes."""
        from lesson_credit.core.analysis.claims import fit_columns
        from lesson_credit.core.analysis.joint import build_design
        from lesson_credit.core.analysis.over_time import lesson_over_time

        data = self.analysis_data()
        fits = self._fits_now()
        if fits.columns is None:
            design = build_design(data, self.session_categories(), 1.0, self.session_agents())
            fits.columns = (design, fit_columns(design))
        design, fitted = fits.columns
        return lesson_over_time(data, self._reader.session_ids(), design, fitted, self.settings, lesson_id)

    def broad_keywords(self, share: float = BROAD_KEYWORD_SHARE) -> dict[str, str]:
        """Lessons with a keyword that hits more than `share` of the latest 2,000 journals, with the reason."""
        from lesson_credit.core import attribution

        self.data()
        journals = reversed(self._reader.session_journals())
        return attribution.broad_keywords_of(self.library().lessons, journals, lambda p: self._journal(p)[0], share)

    def candidacies(self) -> list[Candidacy]:
        """(session, lesson, propensity): one selection per session (the last before its record)."""
        from lesson_credit.core import attribution

        return list(attribution.candidacies_of(self._reader.index, self.analysis_data()).items)

    def loo(self, *, min_with: int = MIN_WITH, min_without: int = MIN_WITHOUT, write: bool = True) -> list[LooResult]:
        """Joint effect and leave-one-out lift per lesson; written to loo-results.json (docs/format.md §8)
        unless write=False."""
        return self.loo_run(min_with=min_with, min_without=min_without, write=write)[0]

    def loo_run(
        self, *, min_with: int = MIN_WITH, min_without: int = MIN_WITHOUT, write: bool = True
    ) -> tuple[list[LooResult], dict[str, Any]]:
        """`loo`'s results and the counts behind them (sessions without propensities, dropout
        sessions, the effect method: attribution.loo)."""
        from lesson_credit.core import attribution
        from lesson_credit.core.analysis.joint import build_design

        library, floor, data = self.library(), self.settings.floor, self.analysis_data()
        design = build_design(data, self.session_categories(), floor, self.session_agents())  # read once
        broad, joint = self.broad_keywords(), self.joint_fit(design=design)
        results, meta = attribution.loo(
            data, self._reader, library, self.root, broad, floor, min_with, min_without, joint, design
        )
        if write:
            attribution.write_loo(self.state_dir, results, self.now_iso(), min_with, min_without, meta, self.guard)
        return results, meta

    def _fits_now(self) -> Fits:
        """The fits of the log as read now: a new, empty one once the log changed."""
        if self._fits is None or self._fits.version != self.version:
            self._fits = Fits(self.version)
        return self._fits


@functools.cache
def _fit_version() -> str:
    """A digest of the analysis code: effects saved by another version of the fit are not reused."""
    import xxhash

    from lesson_credit.core import analysis

    digest = xxhash.xxh3_64()
    for path in sorted(Path(analysis.__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()
