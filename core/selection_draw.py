"""One `select`: the checked inputs, the Thompson draw among the matching lessons, gptme's
randomized dropout on top of it, and logging the draw (the dropout record, then the selection event).

`core.bandit.select` holds the pure selection and `core.analysis.dropout` the trial; this module puts them in the
order a `select` needs (every input checked before anything is read or drawn, the dropout record
written under the log lock before the event, so a logged selection never lacks its trial).
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from lesson_credit.core import commands
from lesson_credit.core.analysis import dropout as dropout_mod
from lesson_credit.core.analysis.joint_posterior import JointPosterior
from lesson_credit.core.bandit import policy as policy_mod
from lesson_credit.core.bandit import select as select_mod
from lesson_credit.core.bandit.fold import Posterior
from lesson_credit.core.bandit.select import Selection
from lesson_credit.core.base.clock import iso
from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.base.files import StoreError, WriteGuard
from lesson_credit.core.library.lessons import Lesson
from lesson_credit.core.log.events import encode
from lesson_credit.core.log.eventstore import EventStore
from lesson_credit.core.model.settings import CreditSettings


@dataclass(frozen=True)
class Draw:
    selection: Selection
    dropout: float  # the trial's epsilon (0: no trial)
    titles: dict[str, str]  # candidate id -> title, for the dropout record
    # the selection again with the coins the session's dropout log holds then (`log_draw`, under its lock)
    again: Callable[[], Selection] | None = None


def draw(
    context: str,
    lessons: Callable[[], Sequence[Lesson]],
    posterior: Callable[[CreditSettings], Posterior],
    settings: CreditSettings,
    *,
    k: int,
    seed: int | None,
    session_id: str | None,
    clock: Callable[[], dt.datetime],
    draws: int,
    dropout: float,
    policy: str | None = None,
    joint: Callable[[], JointPosterior] | None = None,
    category: str | None = None,
    categories: dict[str, tuple[str, ...]] | None = None,
    coins: Callable[[str], dict[str, dropout_mod.Coin]] | None = None,
) -> Draw:
    """Thompson top-k among the lessons matching `context` that are for the session's `category` (a
    lesson's match.session_categories: select.for_category) (`lessons` and the posterior are asked for
    only once every input is checked); with `dropout` epsilon each chosen lesson is then withheld
    with that probability. Without a seed, a fresh one; without an id, one from the clock.

    `policy` (core.bandit.policy; default: `settings`' strategy): a credit strategy draws from
    `posterior(settings with that strategy)`, `joint` from `joint()`, each lesson's effect in the
    session's `category` (without one: the category `categories`, config.toml's keyword map, finds
    in the context, else none: every lesson's overall effect). The category is logged with the draw."""
    try:
        policy = policy_mod.check_policy(settings.strategy if policy is None else policy)
    except ValueError as exc:
        raise WorkspaceError(str(exc)) from None
    if policy == policy_mod.JOINT and joint is None:
        raise WorkspaceError("the joint policy needs the joint estimate")
    k = select_mod.check_k(k)
    seed = select_mod.check_seed(secrets.randbelow(2**31) if seed is None else seed)
    session_id = commands.selection_id(session_id, clock)
    if problem := dropout_mod.check_trial(dropout, session_id):
        raise WorkspaceError(problem)
    commands.check_category(category)
    if category is None and categories:
        category = select_mod.category_of(context, categories)
    notes: list[str] = []  # what matching the context left undone (the selection's `notes`)
    candidates, left_out = select_mod.split_candidates(lessons(), context, category, notes)
    rng, propensity_rng = np.random.default_rng(seed), np.random.default_rng([seed, 1])
    if policy == policy_mod.JOINT and joint is not None:
        post = joint()
        mean, sd = post.in_category(category)
        normal = policy_mod.NormalPosterior(post.arm_ids, mean, sd, post.prior_sd)
        selection = policy_mod.joint_select(session_id, candidates, normal, k, seed, rng, propensity_rng, draws)
    else:
        credit = settings.with_(strategy=policy)
        selection = select_mod.thompson_select(
            session_id, candidates, posterior(credit), credit, k, seed, rng, propensity_rng, draws
        )
    if category is not None:
        selection = replace(selection, category=category, left_out=tuple(lesson.id for lesson in left_out))
    if notes:
        selection = replace(selection, notes=tuple(notes))
    chosen, seeded = selection, seed

    def withheld(decided: dict[str, dropout_mod.Coin]) -> Selection:
        # an earlier trial's coins (a hook run twice) are kept whatever this select's epsilon: the dropout log
        # counts them, so a lesson it withheld is not injected by a second select without a trial of its own;
        # their propensities are weighed by the epsilon they were flipped at
        if dropout > 0 or decided:
            return dropout_mod.apply_dropout(chosen, dropout, np.random.default_rng([seeded, 2]), decided)
        return chosen

    titles = {c.id: c.title for c in candidates}
    if coins is None:
        return Draw(withheld({}), dropout, titles)
    return Draw(withheld(coins(session_id)), dropout, titles, lambda: withheld(coins(session_id)))


def log_draw(
    log: EventStore,
    drawn: Draw,
    root: Path,
    clock: Callable[[], dt.datetime],
    check_new: Callable[[str], None],
    guard: WriteGuard | None = None,
) -> Selection:
    """Under the log lock: refuse an id already recorded (`check_new`), draw the coins again from the session's
    dropout log as it is now (`Draw.again`: another select for the session may have logged its trial since
    the draw), append the trial's record to the dropout log when there is a trial, then the selection event;
    the selection logged is returned. When the event fails, the
    trial's record is taken back out: a failed `select` leaves no trial line (its retry would add
    a second). A lost connection mid-commit may still have stored the event; its selection then
    lacks its trial and counts as no trial, which loses a session but biases nothing."""
    with log.locked():
        check_new(drawn.selection.session_id)
        selection = drawn.again() if drawn.again is not None else drawn.selection
        take_back: Callable[[], None] | None = None
        if drawn.dropout > 0:
            try:
                take_back = dropout_mod.log_trial(
                    root, selection, drawn.dropout, drawn.titles, clock().timestamp(), guard
                )
            except StoreError as exc:
                raise WorkspaceError(str(exc)) from None
            except OSError as exc:
                raise WorkspaceError(f"cannot write the dropout log: {exc}") from None
        try:
            log.append(encode(selection.event(iso(clock()))))
        except BaseException as failure:
            if take_back is not None:
                _take_back_trial(take_back, selection.session_id, failure)
            raise
    return selection


def _take_back_trial(take_back: Callable[[], None], session_id: str, failure: BaseException) -> None:
    """Remove a trial's record whose selection event failed; if even that fails, say where it is."""
    try:
        take_back()
    except (OSError, StoreError) as exc:
        raise StoreError(
            f"{failure}; and the dropout record could not be removed ({exc}): "
            f"delete this select's line from {dropout_mod.DROPOUT_DIR / session_id}.jsonl"
        ) from None
