"""One seed's ground truth (`World`) and how it is drawn from a scenario (`make_world`).

Everything a session offers every policy is drawn here once per seed (common random numbers):
categories, relevance, candidate sets, keyword mentions, noise. What depends on the selection
(the reward, and salience where it rises with the reward) is computed from these draws by the
loop (`World.reward_of`, `World.salience_of`), so every policy meets the same luck.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from lesson_credit.core.sim.scenario import Scenario

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class World:
    """One seed's ground truth and everything the sessions draw from it (shared by all policies)."""

    effect: FloatArray  # (L,) effect in the lesson's home category, before any flip
    final_effect: FloatArray  # (L,) after the flip (= effect without one)
    flip_session: int  # first session with the final effects (n_sessions without a flip)
    relevance_freq: FloatArray  # (L,) P(relevant) averaged over categories
    p_relevant_given_candidate: FloatArray  # (L,)
    n_keywords: IntArray  # (L,)
    home: IntArray  # (L,) home category
    partner: IntArray  # (L,) always-paired partner, -1 for none
    baseline: FloatArray  # (C,)
    session_category: IntArray  # (T,)
    relevant: BoolArray  # (T, L)
    candidates: tuple[IntArray, ...]  # per session, candidate lesson indices (ascending)
    salience: FloatArray  # (T, L) salience the journal would give each lesson if it were injected
    noise: FloatArray  # (T,) Gaussian reward noise (its sd by the session's category)
    best: FloatArray  # (T,) best achievable gain per session
    acts: BoolArray | None = None  # (T, L) the effect acts when injected; None: where relevant
    effect_scale: FloatArray | None = None  # (C, L) effect multiplier per category; None: 1 everywhere
    acts_given_candidate: FloatArray | None = None  # (C, L) P(acts | candidate, category)
    candidacy: FloatArray | None = None  # (C, L) P(candidate | category)
    binary: bool = False  # rewards are 0/1 draws
    reward_u: FloatArray | None = None  # (T,) the uniform behind each binary reward
    outcome_mention: float = 0.0  # extra P(keyword mentioned) per unit of reward
    mention_p: FloatArray | None = None  # (T, L) P(keyword mentioned) before the outcome's share
    mention_u: npt.NDArray[np.float32] | None = None  # (T, L, K) uniforms deciding each keyword's mention
    shift: FloatArray | None = None  # (T,) what moves each session's reward besides the lessons: drift and trouble
    pulled: BoolArray | None = None  # (T, L) lessons trouble's words would pull in mid-session (auto-include)
    echo: BoolArray | None = None  # (L,) lessons whose keywords echo the outcome; None: every lesson's do

    @property
    def n_lessons(self) -> int:
        return len(self.effect)

    @property
    def n_sessions(self) -> int:
        return len(self.noise)

    @property
    def value(self) -> FloatArray:
        """True value (what an estimate should rank by): the final effect's average gain per candidacy."""
        if self.effect_scale is None and self.acts is None:
            result: FloatArray = self.final_effect * self.p_relevant_given_candidate
            return result
        return self._value

    @property
    def helpful(self) -> BoolArray:
        result: BoolArray = self.value > 0 if self.effect_scale is not None else self.final_effect > 0
        return result

    @property
    def harmful(self) -> BoolArray:
        result: BoolArray = self.value < 0 if self.effect_scale is not None else self.final_effect < 0
        return result

    def effect_at(self, session: int) -> FloatArray:
        return self.effect if session < self.flip_session else self.final_effect

    def gain(self, session: int) -> FloatArray:
        """(L,) true gain of injecting each lesson in this session: its effect where it acts, else 0."""
        effect = self.effect_at(session)
        if self.effect_scale is not None:
            effect = effect * self.effect_scale[self.session_category[session]]
        acts = self.relevant[session] if self.acts is None else self.acts[session]
        result: FloatArray = effect * acts
        return result

    def oracle_value(self, session: int) -> FloatArray:
        """(L,) expected gain of injecting each lesson given it is a candidate in this session's category."""
        effect = self.effect_at(session)
        category = self.session_category[session]
        if self.effect_scale is not None:
            effect = effect * self.effect_scale[category]
        acts = (
            self.p_relevant_given_candidate
            if self.acts_given_candidate is None
            else self.acts_given_candidate[category]
        )
        result: FloatArray = effect * acts
        return result

    def reward_of(self, session: int, gain: float, baseline: float) -> float:
        """The session's reward: baseline + gain + noise clipped to [0, 1], or a 0/1 draw with that chance."""
        mean = baseline + gain + (0.0 if self.shift is None else float(self.shift[session]))
        if self.binary:
            assert self.reward_u is not None
            return 1.0 if self.reward_u[session] < min(1.0, max(0.0, mean)) else 0.0
        return min(1.0, max(0.0, mean + float(self.noise[session])))

    def included_during(self, session: int, chosen: IntArray) -> IntArray:
        """The lessons trouble's words pulled in during the session (not those chosen before it):
        logged with `"included": "during"`, credited by the posteriors, adding nothing to the reward."""
        if self.pulled is None:
            return np.zeros(0, dtype=np.int64)
        pulled = self.pulled[session].copy()
        pulled[chosen] = False
        return np.flatnonzero(pulled).astype(np.int64)

    def salience_of(self, session: int, lessons: IntArray, reward: float) -> FloatArray:
        """Salience of the injected `lessons` in the session's journal, given its reward."""
        if self.mention_u is None or self.mention_p is None:
            result: FloatArray = self.salience[session, lessons]
            return result
        echo = np.full(len(lessons), self.outcome_mention * reward)
        if self.echo is not None:
            echo = np.where(self.echo[lessons], echo, 0.0)
        p = 1.0 - (1.0 - self.mention_p[session, lessons]) * (1.0 - echo)
        n_kw = self.n_keywords[lessons]
        used = np.arange(self.mention_u.shape[2])[None, :] < n_kw[:, None]
        hits = ((self.mention_u[session, lessons] < p[:, None]) & used).sum(axis=1)
        return np.asarray(hits / n_kw, dtype=np.float64)

    @property
    def _value(self) -> FloatArray:
        assert self.candidacy is not None
        scale = np.ones_like(self.candidacy) if self.effect_scale is None else self.effect_scale
        acts = self.acts_given_candidate if self.acts_given_candidate is not None else np.ones_like(scale)
        total = self.candidacy.sum(axis=0)  # categories are equally likely
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(total > 0, (self.candidacy * acts * scale).sum(axis=0) / total, 0.0)
        result: FloatArray = self.final_effect * share
        return result


def _effects(sc: Scenario, rng: np.random.Generator) -> tuple[FloatArray, FloatArray]:
    """(sign, effect): a fixed number of helpful and harmful lessons at random positions."""
    n_l = sc.n_lessons
    n_help = round(sc.helpful_share * n_l)
    n_harm = min(round(sc.harmful_share * n_l), n_l - n_help)
    sign = np.zeros(n_l)
    order = rng.permutation(n_l)
    sign[order[:n_help]] = 1.0
    sign[order[n_help : n_help + n_harm]] = -1.0
    return sign, sign * sc.effect_size * rng.uniform(0.5, 1.5, n_l)


def _pairs(
    sc: Scenario, sign: FloatArray, freq: FloatArray, n_keywords: IntArray, home: IntArray, rng: np.random.Generator
) -> IntArray:
    """Always-paired couples: each lesson with an effect first takes a null partner, then nulls pair up.
    The follower copies what decides relevance and matching (in place)."""
    n_l = sc.n_lessons
    partner = np.full(n_l, -1, dtype=np.int64)
    n_pairs = int(sc.paired_share * n_l) // 2
    if not n_pairs:
        return partner
    active = list(rng.permutation(np.flatnonzero(sign != 0)))
    nulls = list(rng.permutation(np.flatnonzero(sign == 0)))
    couples: list[tuple[int, int]] = []
    while len(couples) < n_pairs and active and nulls:
        couples.append((int(active.pop()), int(nulls.pop())))
    rest = nulls + active
    while len(couples) < n_pairs and len(rest) >= 2:
        couples.append((int(rest.pop()), int(rest.pop())))
    for lead, follower in couples:
        partner[lead], partner[follower] = follower, lead
        freq[follower], n_keywords[follower], home[follower] = freq[lead], n_keywords[lead], home[lead]
    return partner


def _relevance(
    sc: Scenario, freq: FloatArray, n_keywords: IntArray, home: IntArray
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """(P(relevant), P(matched by accident), P(candidate and relevant), P(candidate)), per (lesson,
    category) but the second: the home category boosted, the average over categories = freq."""
    n_c = sc.n_categories
    if n_c > 1:
        p_home = np.minimum(1.0, freq * (1.0 + sc.category_affinity * (n_c - 1)))
        p_other = freq * (1.0 - sc.category_affinity)
        p_rel = np.where(np.arange(n_c)[None, :] == home[:, None], p_home[:, None], p_other[:, None])
    else:
        p_rel = freq[:, None].copy()
    spurious = np.asarray(1.0 - (1.0 - sc.keyword_breadth) ** n_keywords, dtype=np.float64)  # matched by accident
    cand_rel: FloatArray = p_rel * sc.context_recall
    cand_all: FloatArray = cand_rel + (1.0 - p_rel) * spurious[:, None]
    return np.asarray(p_rel, dtype=np.float64), spurious, cand_rel, cand_all


def _best(gain: npt.NDArray[Any], matched: BoolArray, k: int) -> FloatArray:
    """(T,) the k largest gains among each session's candidates (fewer when it has fewer)."""
    masked = np.where(matched, gain, -np.inf)
    top = -np.sort(-masked, axis=1)[:, :k]
    result: FloatArray = np.where(np.isfinite(top), top, 0.0).sum(axis=1)
    return result


def make_world(sc: Scenario, seed: int) -> World:
    """Draw one seed's world. Deterministic in (scenario, seed)."""
    rng = np.random.default_rng([seed, 0])
    n_l, n_t, n_c = sc.n_lessons, sc.n_sessions, sc.n_categories
    sign, effect = _effects(sc, rng)
    freq = rng.beta(sc.relevance_a, sc.relevance_b, n_l)
    n_keywords = rng.integers(sc.keywords_min, sc.keywords_max + 1, n_l).astype(np.int64)
    home = rng.integers(0, n_c, n_l).astype(np.int64)
    partner = _pairs(sc, sign, freq, n_keywords, home, rng)

    p_rel, spurious, cand_rel_c, cand_all_c = _relevance(sc, freq, n_keywords, home)
    cand_rel, cand_all = cand_rel_c.mean(axis=1), cand_all_c.mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_rel_cand = np.where(cand_all > 0, cand_rel / cand_all, 0.0)
        p_rel_cand_c = np.where(cand_all_c > 0, cand_rel_c / cand_all_c, 0.0)

    baseline = (
        np.linspace(sc.baseline_mean - sc.baseline_spread / 2, sc.baseline_mean + sc.baseline_spread / 2, n_c)
        if n_c > 1
        else np.array([sc.baseline_mean])
    )
    session_category = rng.integers(0, n_c, n_t).astype(np.int64)
    relevant = rng.random((n_t, n_l)) < p_rel.T[session_category]
    matched = np.where(relevant, rng.random((n_t, n_l)) < sc.context_recall, False)
    matched |= ~relevant & (rng.random((n_t, n_l)) < spurious[None, :])
    followers = np.flatnonzero((partner >= 0) & (np.arange(n_l) > partner))
    if len(followers):
        leads = partner[followers]
        relevant[:, followers] = relevant[:, leads]
        matched[:, followers] = matched[:, leads]
    # salience: each keyword mentioned with mention_prob when relevant, or by accident
    p_mention = np.where(relevant, 1.0 - (1.0 - sc.mention_prob) * (1.0 - sc.keyword_breadth), sc.keyword_breadth)
    # salience is only ever read for injected lessons, so the echo of the injection applies to every entry
    if sc.injection_mention > 0:
        p_mention = 1.0 - (1.0 - p_mention) * (1.0 - sc.injection_mention)
    hits = rng.binomial(np.broadcast_to(n_keywords, (n_t, n_l)), p_mention)
    salience = hits / n_keywords[None, :]
    noise = rng.normal(0.0, sc.noise, n_t) if sc.noise > 0 else np.zeros(n_t)
    if sc.noise_spread > 0 and n_c > 1:
        noise = noise * (1.0 + sc.noise_spread * np.linspace(-1.0, 1.0, n_c))[session_category]

    # what the new worlds add is drawn from a second stream, so the worlds above stay as they were
    extra = np.random.default_rng([seed, 0, 1])
    reward_u = extra.random(n_t) if sc.reward_kind == "binary" else None
    mention_u = None
    if sc.outcome_mention > 0:
        mention_u = extra.random((n_t, n_l, int(n_keywords.max())), dtype=np.float32)

    scale = None
    if sc.category_effect > 0:
        scale = np.where(np.arange(n_c)[:, None] == home[None, :], 1.0, 1.0 - 2.0 * sc.category_effect)
    # the lesson-specific echo draws from a stream of its own (the worlds above unchanged)
    echo = None
    if sc.echo_share > 0:
        nulls = np.flatnonzero(effect == 0)
        echo = np.zeros(n_l, dtype=bool)
        echo[np.random.default_rng([seed, 0, 2]).permutation(nulls)[: round(sc.echo_share * len(nulls))]] = True
    acts = np.ones((n_t, n_l), dtype=bool) if sc.always_acts else None
    acts_cand = np.ones((n_c, n_l)) if sc.always_acts else p_rel_cand_c.T.copy()

    shift, pulled = _moving(sc, seed, n_t, n_l)
    flip_session = n_t if sc.flip_at is None else int(round(sc.flip_at * n_t))
    final_effect = effect if sc.flip_at is None else -effect
    times = np.arange(n_t)[:, None]
    gain = np.where(times < flip_session, effect[None, :], final_effect[None, :])
    if scale is not None:
        gain = gain * scale[session_category]
    best = _best(gain * (relevant if acts is None else acts), matched, sc.k)

    return World(
        effect=effect,
        final_effect=final_effect,
        flip_session=flip_session,
        relevance_freq=p_rel.mean(axis=1),
        p_relevant_given_candidate=p_rel_cand,
        n_keywords=n_keywords,
        home=home,
        partner=partner,
        baseline=baseline,
        session_category=session_category,
        relevant=relevant,
        candidates=tuple(np.flatnonzero(row).astype(np.int64) for row in matched),
        salience=salience,
        noise=noise,
        best=best,
        acts=acts,
        effect_scale=scale,
        acts_given_candidate=acts_cand,
        candidacy=cand_all_c.T.copy(),
        binary=sc.reward_kind == "binary",
        reward_u=reward_u,
        outcome_mention=sc.outcome_mention,
        mention_p=p_mention if mention_u is not None else None,
        mention_u=mention_u,
        shift=shift,
        pulled=pulled,
        echo=echo,
    )


def _moving(sc: Scenario, seed: int, n_t: int, n_l: int) -> tuple[FloatArray | None, BoolArray | None]:
    """A world that moves, from a stream of its own (the other worlds stay as they were): each
    session's reward shift (the drift, and -trouble_cost in troubled sessions) and the lessons
    trouble pulls in."""
    if sc.drift == 0 and sc.trouble == 0:
        return None, None
    rng = np.random.default_rng([seed, 0, 2])
    troubled = rng.random(n_t) < sc.trouble
    shift = sc.drift * (np.arange(n_t) / max(n_t - 1, 1) - 0.5) - sc.trouble_cost * troubled
    pulled = troubled[:, None] & (rng.random((n_t, n_l)) < sc.auto_include) if sc.auto_include > 0 else None
    return shift.astype(np.float64), pulled
