"""A lesson's effect and credit over session order (core.analysis.over_time): the windows' joint
effects against differences of means worked out directly and against refits of each window's
sessions, and the credit posterior after each window against a Beta fold done by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from lesson_credit.core.analysis.claims import fit_columns, lesson_claims
from lesson_credit.core.analysis.joint import Design
from lesson_credit.core.analysis.over_time import LEVEL, MAX_WINDOWS, PER_WINDOW, window_count
from lesson_credit.core.log.cache import LogCache
from lesson_credit.core.log.store import EventLog
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import fixed_clock, make_workspace, session

A, B, C, RARE = "a.md", "b.md", "c.md", "rare.md"
CATEGORIES = ("code", "ops")


def design_of(x: np.ndarray, reward: np.ndarray, category: np.ndarray) -> Design:
    n, p = x.shape
    rows, arms = np.nonzero(x)
    return Design(np.arange(n), reward.astype(np.float64), category, 2, rows, arms, np.ones(len(rows)), p)


def test_window_count() -> None:
    assert [window_count(n) for n in (0, 9, 10, 29, 30, 79, 80, 5000)] == [1, 1, 1, 2, 3, 7, 8, 8]
    assert (PER_WINDOW, MAX_WINDOWS) == (10, 8)


def centred_slope(x: np.ndarray, y: np.ndarray, category: np.ndarray) -> float:
    """Least-squares slope of y on x with a baseline per category (both centred within category)."""
    xc, yc = x.copy(), y.copy()
    for c in np.unique(category):
        inside = category == c
        xc[inside] -= x[inside].mean()
        yc[inside] -= y[inside].mean()
    return float(xc @ yc / (xc @ xc))


@pytest.mark.usefixtures("whole_lessons")
def test_a_lone_lessons_windows_are_within_window_differences_of_means() -> None:
    # one lesson whose effect climbs over the log: in each window the estimate is the window's own
    # slope of reward on injection with category baselines (the fit's residual slope adds exactly that)
    rng = np.random.default_rng(11)
    n = 300
    x = (rng.random(n) < 0.4).astype(float)
    category = rng.integers(0, 2, n)
    effect = np.linspace(-0.2, 0.3, n)
    reward = 0.4 + 0.1 * category + effect * x + rng.normal(0, 0.05, n)
    design = design_of(x[:, None], reward, category)
    fitted = fit_columns(design)
    assert fitted.fit is not None
    from lesson_credit.core.analysis.one_step import interval_of, windows

    count = window_count(int(x.sum()))
    estimate, var, n_with, n_without, ends = windows(fitted.op, fitted.fit, np.array([count]))
    injected = np.flatnonzero(x > 0)
    # window w ends at the ceil(k (w + 1) / count)-th injection (1-based)
    cuts = [injected[-(-len(injected) * (w + 1) // count) - 1] for w in range(count - 1)] + [n - 1]
    assert ends[0, :count].tolist() == cuts
    first = 0
    for w, last in enumerate(cuts):
        inside = slice(first, last + 1)
        xs, ys, cs = x[inside], reward[inside], category[inside]
        assert estimate[0, w] == pytest.approx(centred_slope(xs, ys, cs), abs=1e-9)
        assert (n_with[0, w], n_without[0, w]) == (xs.sum(), len(xs) - xs.sum())
        interval = interval_of(estimate[0, w], var[0, w], n_with[0, w], n_without[0, w])
        assert interval is not None
        first = last + 1
    slopes = estimate[0, :count]
    assert slopes[0] < 0 < slopes[-1]  # the climb shows: -0.2 early, +0.3 late
    # two windows are the drifting flag's halves
    column = lesson_claims(design).of(0)
    assert column is not None and column.earlier is not None and column.later is not None
    halves, _, _, _, _ = windows(fitted.op, fitted.fit, np.array([2]))
    assert (halves[0, 0], halves[0, 1]) == pytest.approx((column.earlier.estimate, column.later.estimate), abs=1e-12)


def events_world(n: int = 240) -> tuple[list[dict[str, object]], np.ndarray, np.ndarray, np.ndarray]:
    """Three lessons injected independently (salience known), a fourth in three sessions, two
    categories; A helps more and more, B hurts, C does nothing."""
    rng = np.random.default_rng(12)
    x = rng.random((n, 3)) < 0.35
    salience = np.round(rng.uniform(0.0, 1.0, (n, 3)), 2)
    category = rng.integers(0, 2, n)
    effect_a = np.linspace(0.0, 0.3, n)
    reward = np.clip(0.45 + 0.1 * category + effect_a * x[:, 0] - 0.15 * x[:, 1] + rng.normal(0, 0.05, n), 0, 1)
    reward = np.round(reward, 2)
    events: list[dict[str, object]] = []
    for i in range(n):
        lessons: dict[str, float | None] = {lid: float(salience[i, j]) for j, lid in enumerate((A, B, C)) if x[i, j]}
        if i in (5, 50, 150):
            lessons[RARE] = 0.5
        if not lessons:
            lessons[C] = float(salience[i, 2])
            x[i, 2] = True
        events.append(session(f"s{i:03d}", float(reward[i]), lessons, category=CATEGORIES[category[i]]))
    return events, x, salience, reward


def workspace(tmp_path: Path) -> tuple[Workspace, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    events, x, salience, reward = events_world()
    lessons = {lid: ([lid.removesuffix(".md")], "active") for lid in (A, B, C, RARE)}
    root = make_workspace(tmp_path, lessons, events)
    category = np.array([CATEGORIES.index(str(e["category"])) for e in events])
    return Workspace(root, clock=fixed_clock), x, salience, reward, category


@pytest.mark.usefixtures("whole_lessons")
def test_the_credit_posterior_after_each_window_is_a_fold_done_by_hand(tmp_path: Path) -> None:
    ws, x, salience, reward, _ = workspace(tmp_path)
    over = ws.lesson_over_time(A)
    assert over.identified and over.injected == int(x[:, 0].sum()) and over.graded == len(reward)
    assert len(over.windows) == window_count(over.injected) >= 3
    floor = ws.settings.floor
    assert ws.settings.strategy == "seed"
    for window in over.windows:
        # seed credit (docs/format.md §4): alpha += w r, beta += 1 - w r, w = floor + (1 - floor) s
        upto = np.arange(len(reward)) < window.last
        w = floor + (1 - floor) * salience[upto & x[:, 0], 0]
        r = reward[upto & x[:, 0]]
        alpha, beta = 1.0 + float((w * r).sum()), 1.0 + float((1 - w * r).sum())
        assert window.credit_mean == pytest.approx(alpha / (alpha + beta), abs=1e-9)
        tail = (1 - LEVEL) / 2
        assert window.credit_low == pytest.approx(stats.beta.ppf(tail, alpha, beta), abs=1e-7)
        assert window.credit_high == pytest.approx(stats.beta.ppf(1 - tail, alpha, beta), abs=1e-7)
    post = ws.posterior()
    arm = post.arm_ids.index(A)
    assert over.windows[-1].credit_mean == pytest.approx(float(post.mean[arm]), abs=1e-12)  # the last is today's
    assert over.windows[-1].last == len(reward) and over.windows[-1].last_session == f"s{len(reward) - 1:03d}"
    assert [w.first for w in over.windows[1:]] == [w.last + 1 for w in over.windows[:-1]]


def test_each_windows_effect_agrees_with_a_refit_of_its_sessions(tmp_path: Path) -> None:
    # a second computation: the injection model refitted on the window's sessions alone (three
    # independent lessons, category baselines, plain least squares). The one-step estimate keeps the
    # other lessons at their whole-log effects where the refit re-estimates them from 20-50 sessions,
    # so the two differ by sampling noise: measured here, at most 1.2 of the window's se, 0.4 on average
    ws, x, _, reward, category = workspace(tmp_path)
    gaps = []
    for lesson, column in ((A, 0), (B, 1)):
        over = ws.lesson_over_time(lesson)
        assert over.identified and over.reason is None and over.group == ()
        for window in over.windows:
            inside = slice(window.first - 1, window.last)
            design = np.column_stack([np.eye(2)[category[inside]], x[inside].astype(float)])
            coef = np.linalg.lstsq(design, reward[inside], rcond=None)[0]
            assert window.effect is not None
            low, high = window.effect.bounds(LEVEL)
            assert low < window.effect.estimate < high
            gaps.append(abs(window.effect.estimate - coef[2 + column]) / window.effect.se)
    assert max(gaps) < 1.5 and float(np.mean(gaps)) < 0.6
    a = [w.effect.estimate for w in ws.lesson_over_time(A).windows if w.effect is not None]
    b = [w.effect.estimate for w in ws.lesson_over_time(B).windows if w.effect is not None]
    assert a[0] < 0.1 < 0.2 < a[-1]  # A's effect climbs from 0 to 0.3: the series shows it
    assert all(-0.25 < e < -0.05 for e in b)  # B's stays near -0.15


def test_what_cannot_be_known_shows_no_effect(tmp_path: Path) -> None:
    ws, *_ = workspace(tmp_path)
    rare = ws.lesson_over_time(RARE)
    assert not rare.identified and rare.reason is not None and "too few sessions" in rare.reason
    assert len(rare.windows) == 1 and rare.windows[0].effect is None
    assert rare.windows[0].credit_mean == pytest.approx(float(ws.posterior().mean[ws.data().arm_ids.index(RARE)]))
    missing = ws.lesson_over_time("never.md")
    assert missing.windows == () and missing.reason == "not injected in any graded session"
    assert missing.as_json()["windows"] == []


def test_an_update_logged_mid_log_counts_from_the_window_it_was_logged_in(tmp_path: Path) -> None:
    # gptme's update of bandit-state.json, logged after session 101 as an increments event (+5 alpha, +1
    # beta for A): the credit after a window that ended before it is the dashboard's mean then, without
    # it; from the window it was logged in on, with it. Before, every window had it.
    events, x, salience, reward = events_world()
    update = {"type": "prior", "increments": True, "source": "gptme-bandit", "sessions": 1}
    update["arms"] = {A: {"alpha": 5.0, "beta": 1.0, "n": 1, "rewards": 1}}
    lessons = {lid: ([lid.removesuffix(".md")], "active") for lid in (A, B, C, RARE)}
    root = make_workspace(tmp_path, lessons, [*events[:101], update, *events[101:]])
    ws = Workspace(root, clock=fixed_clock)
    over = ws.lesson_over_time(A)
    floor = ws.settings.floor
    assert over.windows[0].last < 101 <= over.windows[-1].last
    for window in over.windows:
        upto = np.arange(len(reward)) < window.last
        w = floor + (1 - floor) * salience[upto & x[:, 0], 0]
        r = reward[upto & x[:, 0]]
        alpha, beta = 1.0 + float((w * r).sum()), 1.0 + float((1 - w * r).sum())
        if window.last >= 101:  # the update was logged after the window's 101st session or earlier
            alpha, beta = alpha + 5.0, beta + 1.0
        assert window.credit_mean == pytest.approx(alpha / (alpha + beta), abs=1e-9), window.last
    post = ws.posterior()
    assert over.windows[-1].credit_mean == pytest.approx(float(post.mean[post.arm_ids.index(A)]), abs=1e-12)


def test_one_window_is_the_whole_logs_headline(tmp_path: Path) -> None:
    # a lesson injected in fewer than 2 * PER_WINDOW graded sessions has one window, the whole log: its
    # effect is the joint effect `loo` and the Analysis screen show for it, not a second estimate of the
    # same sessions (before, the one-step estimate: -0.054 beside the headline's -0.031 on the demo)
    rng = np.random.default_rng(5)
    n = 160
    x = rng.random((n, 3)) < np.array([0.4, 0.4, 0.1])
    x[:, 2] &= np.arange(n) % 9 != 0  # D: about 14 sessions
    category = rng.integers(0, 2, n)
    reward = np.round(
        np.clip(0.5 + 0.1 * category + 0.1 * x[:, 0] - 0.1 * x[:, 1] + 0.05 * x[:, 2] + rng.normal(0, 0.1, n), 0, 1), 2
    )
    events = []
    for i in range(n):
        lessons = {lid: 0.5 for j, lid in enumerate((A, B, "d.md")) if x[i, j]} or {C: 0.5}
        events.append(session(f"s{i:03d}", float(reward[i]), lessons, category=CATEGORIES[category[i]]))
    lessons_of = {lid: ([lid.removesuffix(".md")], "active") for lid in (A, B, C, "d.md")}
    ws = Workspace(make_workspace(tmp_path, lessons_of, events), clock=fixed_clock)
    over = ws.lesson_over_time("d.md")
    assert 5 <= over.injected < 2 * PER_WINDOW and over.identified and len(over.windows) == 1
    effect = over.windows[0].effect
    joint = next(r.joint for r in ws.loo(write=False) if r.path == "d.md")
    assert effect is not None and joint is not None and joint.ci_low is not None and joint.ci_high is not None
    assert effect.estimate == pytest.approx(joint.estimate, abs=1e-12)
    assert effect.bounds(0.95) == pytest.approx((joint.ci_low, joint.ci_high), abs=1e-12)
    assert (effect.n_with, effect.n_without) == (over.injected, n - over.injected)


def test_an_update_logged_after_a_pending_session_at_the_end_is_in_todays_window(tmp_path: Path) -> None:
    # the log ends on a session not graded yet, then gptme's update (+5 alpha, +1 beta for A) logged after
    # it: the last window ends at the last graded session, and its posterior is today's, update included.
    # Before, the update was left out of every window (it was logged after 241 sessions, the last window
    # ends at the 240th): the last window's mean was below the Lessons table's.
    events, x, salience, reward = events_world()
    update = {"type": "prior", "increments": True, "source": "gptme-bandit", "sessions": 1}
    update["arms"] = {A: {"alpha": 5.0, "beta": 1.0, "n": 1, "rewards": 1}}
    lessons = {lid: ([lid.removesuffix(".md")], "active") for lid in (A, B, C, RARE)}
    pending = session("later", None, {A: 0.5})
    root = make_workspace(tmp_path, lessons, [*events, pending, update])
    ws = Workspace(root, clock=fixed_clock)
    over = ws.lesson_over_time(A)
    last = over.windows[-1]
    assert last.last == len(reward) and last.last_session == f"s{len(reward) - 1:03d}"
    w = ws.settings.floor + (1 - ws.settings.floor) * salience[x[:, 0], 0]
    r = reward[x[:, 0]]
    alpha, beta = 1.0 + float((w * r).sum()) + 5.0, 1.0 + float((1 - w * r).sum()) + 1.0
    assert last.credit_mean == pytest.approx(alpha / (alpha + beta), abs=1e-9)
    post = ws.posterior()
    assert last.credit_mean == pytest.approx(float(post.mean[post.arm_ids.index(A)]), abs=1e-12)
    # an earlier window, ended long before the update, still leaves it out
    first = over.windows[0]
    upto = np.arange(len(reward)) < first.last
    w0 = ws.settings.floor + (1 - ws.settings.floor) * salience[upto & x[:, 0], 0]
    r0 = reward[upto & x[:, 0]]
    a0, b0 = 1.0 + float((w0 * r0).sum()), 1.0 + float((1 - w0 * r0).sum())
    assert first.credit_mean == pytest.approx(a0 / (a0 + b0), abs=1e-9)


@pytest.mark.usefixtures("whole_lessons")
def test_a_prior_imported_mid_log_starts_the_windows_from_the_one_in_force_then(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # import-gptme logged after session 50 (A starts at Beta(20, 2)), and again after session 150 with
    # another file (Beta(3, 9) replaces it): the credit after a window that ended before the first import
    # starts from Beta(1, 1), as the dashboard's mean did then; between them from Beta(20, 2); from the
    # window the second was logged in on, from Beta(3, 9). Before, every window started from Beta(3, 9).
    events, x, salience, reward = events_world()
    first = {"type": "prior", "arms": {A: {"alpha": 20.0, "beta": 2.0, "n": 10, "rewards": 9}}}
    second = {"type": "prior", "created": "2026-12-01T00:00:00Z", "arms": {A: {"alpha": 3.0, "beta": 9.0}}}
    lessons = {lid: ([lid.removesuffix(".md")], "active") for lid in (A, B, C, RARE)}
    root = make_workspace(tmp_path, lessons, [*events[:50], first, *events[50:150], second, *events[150:]])
    monkeypatch.setattr("lesson_credit.core.log.cache.MIN_NEW_BYTES", 0)  # this read writes the parsed-log cache
    cold = Workspace(root, clock=fixed_clock)
    parsed = cold.lesson_over_time(A)
    assert isinstance(cold.log, EventLog) and LogCache(cold.log).path.exists()
    ws = Workspace(root, clock=fixed_clock)  # reads the log from the cache: the imports' places come back from it
    over = ws.lesson_over_time(A)
    assert over == parsed
    floor = ws.settings.floor
    lasts = [window.last for window in over.windows]
    assert lasts[0] < 50 and any(50 <= last < 150 for last in lasts) and lasts[-1] >= 150
    for window in over.windows:
        upto = np.arange(len(reward)) < window.last
        w = floor + (1 - floor) * salience[upto & x[:, 0], 0]
        r = reward[upto & x[:, 0]]
        start = (1.0, 1.0) if window.last < 50 else (20.0, 2.0) if window.last < 150 else (3.0, 9.0)
        alpha, beta = start[0] + float((w * r).sum()), start[1] + float((1 - w * r).sum())
        assert window.credit_mean == pytest.approx(alpha / (alpha + beta), abs=1e-9), window.last
    post = ws.posterior()
    assert over.windows[-1].credit_mean == pytest.approx(float(post.mean[post.arm_ids.index(A)]), abs=1e-12)


def test_too_few_graded_sessions_to_fit_says_how_many_there_are(tmp_path: Path) -> None:
    # one graded session (and one pending) injected with A: nothing can be fitted (a baseline and A's column
    # leave no residual degree of freedom); it said "no graded sessions to compare"
    events = [session("s0", 0.6, {A: 0.5}), session("s1", None, {A: 0.5})]
    root = make_workspace(tmp_path, {A: (["alpha"], "active")}, events)
    over = Workspace(root, clock=fixed_clock).lesson_over_time(A)
    assert (over.graded, over.windows) == (1, ())
    assert over.reason == "only 1 graded session: too few to fit"


def test_a_lessons_windows_are_its_sessions_after_its_first_ones(tmp_path: Path) -> None:
    # A (99 graded sessions) has its first min(20, 99 // 3) = 20 set apart in the claims fit (core.analysis.early):
    # its windows are cut among its 79 later sessions, the first window starting at the graded session after its
    # 20th; the credit posterior is still every session's (the last window's is today's)
    ws, x, _, reward, category = workspace(tmp_path)
    over = ws.lesson_over_time(A)
    with_a = np.flatnonzero(x[:, 0])
    assert len(with_a) == 99 and over.injected == 79 and over.apart == 20 and over.graded == len(reward)
    assert len(over.windows) == window_count(79)
    assert over.windows[0].first == 1  # the windows still cover the whole log
    # its first 20 sessions fall in the first window: neither with it nor without it there (they counted as without).
    # A window's sessions are counted in the baselines' groups (category x time block of 40 sessions: 240 sessions,
    # 6 blocks) where its later sessions are: the sessions without it are those that share a category and a block
    # with one of them and do not inject it
    first = over.windows[0]
    assert first.effect is not None and first.last >= with_a[19] + 1 and len(reward) == 240
    in_window = np.arange(first.first - 1, first.last)
    later = set(with_a[20:].tolist())
    cell = category * 6 + np.arange(240) // 40
    cells = {int(cell[r]) for r in in_window if r in later}
    without = [r for r in in_window if cell[r] in cells and not x[r, 0]]
    assert (first.effect.n_with, first.effect.n_without) == (len([r for r in in_window if r in later]), len(without))
    assert ws.lesson_over_time(B).group == ()  # no first sessions' column named as a lesson's partner
