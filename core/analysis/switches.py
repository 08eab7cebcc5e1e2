"""A column identified only by time (`core.analysis.claims`, "Identified only by time"): within the
baseline groups its only variation is one switch in log order, at one moment per time block, or the baselines
take all of it (`in_baselines`); and where that switch happens, for the reasons `loo` prints and the policy's
`joint_posterior.time_only`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from lesson_credit.core.analysis.steps import KEPT_MIN

IntArray = npt.NDArray[np.int64]
Factors = tuple[IntArray, "IntArray | None"]  # each session's category and agent (None: one agent)

BASELINE_CHUNK = 64  # columns told against the baselines at a time (`in_baselines`: cells x columns each)
BASELINE_LEVELS = 512  # categories, agents and blocks `in_baselines` tells columns against at most (a square of them)
GROUP_SHARE = 0.9  # lessons together in at least this share of each one's sessions form a group (`loo`'s groups)


def switched_in(x: Any, group: IntArray, block: IntArray | None = None) -> npt.NDArray[np.bool_]:
    """Per column of `x` (sessions x columns, scipy.sparse; `group`: each session's baseline group): its
    only variation within the baseline groups is one switch in log order, at one moment per time block
    (`block`: each session's; None: one block). In each block, among the sessions of the groups where
    the column varies (neither always nor never nonzero in the group), those with it all come before
    those without, or all after; True when that holds in every block where it varies (and there is
    one). Groups split by category or agent switch at the same moment."""
    return switches(x, group, block).timed


@dataclass(frozen=True)
class Switches:
    """Per column: `timed` (`switched_in`), the time blocks it varies in, and for a timed column that
    varies in one block the session (position) where the switch happens, the first on the later side
    (`at`, -1 otherwise), and whether it is injected from there on (`on`) or before it."""

    timed: npt.NDArray[np.bool_]
    blocks: IntArray
    at: IntArray
    on: npt.NDArray[np.bool_]
    edge: npt.NDArray[np.bool_] | None = None  # switched where a time block starts (`with_edges`)
    # timed though not one clean switch per block: the baseline's steps left too little of its precision
    # (`joint_posterior.time_labels`), and per column that share
    strays: npt.NDArray[np.bool_] | None = None
    share: npt.NDArray[np.float64] | None = None


def switches(x: Any, group: IntArray, block: IntArray | None = None) -> Switches:
    """`switched_in`, with where each column switches (`Switches`)."""
    n, p = x.shape
    if n == 0 or p == 0:
        none = np.zeros(p, dtype=np.int64)
        return Switches(np.zeros(p, dtype=bool), none, none - 1, np.zeros(p, dtype=bool))
    order = np.argsort(group, kind="stable")  # sessions by group, in log order within each
    size = np.bincount(group).astype(np.int64)
    start = np.concatenate([[0], np.cumsum(size)[:-1]])
    # rows put in group order: each column's entries then come sorted by group, and by place within it
    by_column = x[order].tocsc()
    by_column.eliminate_zeros()
    by_column.sort_indices()  # (tocsc gives them sorted already: this only checks)
    row = by_column.indices.astype(np.int64)  # start of the entry's group + its place there
    col_of = np.repeat(np.arange(p, dtype=np.int64), np.diff(by_column.indptr))
    group_of = group[order][row]
    place = row - start[group_of]
    # cells: (column, group) pairs holding entries, in that order; each entry's index within its cell
    new = np.ones(len(row), dtype=bool)
    new[1:] = (col_of[1:] != col_of[:-1]) | (group_of[1:] != group_of[:-1])
    first = np.flatnonzero(new)
    cell = np.cumsum(new) - 1
    col, g = col_of[first], group_of[first]
    cells = len(first)
    k = np.diff(np.append(first, len(row)))
    index = np.arange(len(row)) - first[cell]
    from_end = k[cell] - 1 - index
    # places rise within a cell: those at their index are a leading run, and the first place without the
    # column is its length (k when none is missing); those at size - 1 - from_end are a trailing run
    low_off = np.bincount(cell, weights=place == index, minlength=cells).astype(np.int64)
    top = np.bincount(cell, weights=place == size[g][cell] - 1 - from_end, minlength=cells).astype(np.int64)
    high_off = size[g] - 1 - top  # the last place without it
    low_on, high_on = place[first], place[first + k - 1]
    varies = k < size[g]

    def session(cells: IntArray, q: IntArray) -> IntArray:  # the session at place q of each cell's group
        out: IntArray = order[start[g[cells]] + np.clip(q, 0, size[g[cells]] - 1)]
        return out

    time = np.zeros(n, dtype=np.int64) if block is None else block
    n_blocks = int(time.max()) + 1
    cb = (
        col * n_blocks + time[session(np.arange(cells), np.zeros(cells, dtype=np.int64))]
    )  # groups lie within one block
    cb, v = cb[varies], np.flatnonzero(varies)
    uniq, which = np.unique(cb, return_inverse=True)
    m = len(uniq)
    on_first, on_last = np.full(m, n), np.full(m, -1)
    off_first, off_last = np.full(m, n), np.full(m, -1)
    np.minimum.at(on_first, which, session(v, low_on[v]))
    np.maximum.at(on_last, which, session(v, high_on[v]))
    np.minimum.at(off_first, which, session(v, low_off[v]))
    np.maximum.at(off_last, which, session(v, high_off[v]))
    one_step = (on_last < off_first) | (on_first > off_last)
    owner = uniq // n_blocks
    varying = np.bincount(owner, minlength=p)
    steps = np.bincount(owner[one_step], minlength=p)
    timed: npt.NDArray[np.bool_] = (varying > 0) & (steps == varying)
    single = one_step & (varying[owner] == 1)  # the one block a column varies in, when it switches there
    at, on = np.full(p, -1, dtype=np.int64), np.zeros(p, dtype=bool)
    at[owner[single]] = np.where(on_last < off_first, off_first, on_first)[single]
    on[owner[single]] = (on_first > off_last)[single]
    return Switches(timed, varying.astype(np.int64), at, on)


def with_edges(found: Switches, x: Any, group: IntArray, block: IntArray, factors: Factors) -> Switches:
    """`found` (per time block) with the columns that vary in no block but switch once over the whole log
    (`group`: the baseline groups without the blocks; `block`: each session's time block; `factors`: each one's
    category and agent, the baselines the fit adds to the blocks'): the switch falls where
    a block starts, and the blocks' baselines take all of it. They are timed too, `at` their switch (`edge` says
    which). So are those that vary in no block but more often over the log, when the baselines take all of that
    too (`in_baselines`: on in every session of some blocks and in none of the others, say), `at` -1."""
    still = np.flatnonzero(found.blocks == 0)  # only these can be (read only their injections)
    csc = x.tocsc()
    whole = switches(csc[:, still], group)
    edge = np.zeros(len(found.timed), dtype=bool)
    edge[still] = whole.timed
    more = still[(whole.blocks > 0) & ~whole.timed]  # varying over the log, not in one switch
    if len(more):
        edge[more[in_baselines(csc[:, more], factors[0], factors[1], block)]] = True
    at, on = found.at.copy(), found.on.copy()
    at[still] = np.where(whole.timed, whole.at, at[still])
    on[still] = np.where(whole.timed, whole.on, on[still])
    return replace(found, timed=found.timed | edge, at=at, on=on, edge=edge)


def in_baselines(x: Any, category: IntArray, agent: IntArray | None, block: IntArray) -> npt.NDArray[np.bool_]:
    """Per column of `x` (sessions x columns, scipy.sparse), injected (nonzero) in every session of some cells (a
    category, an agent and a time block: `category`, `agent`, `block`, each session's) and in none of the others:
    whether the baselines take all of it, its column of injections a sum of the categories', the agents' and the
    blocks' indicator columns (core/analysis/joint_ops.py `indicators`: the fit's baselines, added together), so no
    fit with them can tell the lesson's effect from theirs. Told on the cells the log has (a column constant in
    each is in that span exactly when its values over the cells are): least squares on the cells' indicators
    (their Gram matrix's pseudo-inverse) leaves nothing of it. A few columns at a time; with more than
    BASELINE_LEVELS categories, agents and blocks together, none is (the older rules only)."""
    from scipy import sparse

    agents = agent if agent is not None else np.zeros(len(category), dtype=np.int64)
    codes = np.stack([category, agents, block], axis=1).astype(np.int64)
    cells, first = np.unique(codes, axis=0, return_index=True)
    sizes = np.max(codes, axis=0) + 1
    if int(sizes.sum()) > BASELINE_LEVELS:
        return np.zeros(x.shape[1], dtype=bool)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    rows = np.repeat(np.arange(len(cells)), 3)
    z = sparse.csr_matrix((np.ones(len(rows)), (rows, (cells + offsets).ravel())), shape=(len(cells), sizes.sum()))
    solve = np.linalg.pinv((z.T @ z).toarray(), rcond=1e-10, hermitian=True)
    csc = x.tocsc()
    out = np.zeros(x.shape[1], dtype=bool)
    for lo in range(0, x.shape[1], BASELINE_CHUNK):
        on = (abs(csc[first, lo : lo + BASELINE_CHUNK]) > 0).astype(np.float64).toarray()
        left = on - z @ (solve @ (z.T @ on))
        out[lo : lo + BASELINE_CHUNK] = np.all(np.abs(left) < 1e-6, axis=0)
    return out


def timed_reason(switch: Switches | None, c: int, name: str | None, label: Callable[[int], str]) -> str:
    """Why column c, identified only by time, claims nothing (`switch`: where the columns switch; `name`: the sessions
    it switches among when not all (`scopes`: "category y", ...); `label`: how to name a graded session by its
    position)."""
    graded = "a graded session" + (f" of {name}" if name is not None else "")
    edge = switch is not None and switch.edge is not None and bool(switch.edge[c])
    if switch is not None and switch.strays is not None and bool(switch.strays[c]):
        return stray_reason(switch, c)
    if switch is not None and switch.at[c] >= 0:
        session = label(int(switch.at[c]))
        side = (
            f"never injected in {graded} before it and in every one from it on"
            if switch.on[c]
            else f"injected in every {graded[2:]} before it and in none from it on"
        )
        where = "at the start of a time block" if edge else "within its time block"
        return (
            f"identified only by time: it switched at {session} ({side}, {where}), so a change "
            "in the baseline at that session would look the same"
        )
    if edge:  # on and off more than once, each time where a block starts, as the baselines are (`in_baselines`)
        return (
            f"identified only by time: it was injected in every {graded[2:]} of some time blocks and in none of the "
            "others (within its category and agent), which the time blocks' baselines take all of, so a change in "
            "the baseline between blocks would look the same"
        )
    if switch is not None and not switch.timed[c]:  # a group holding such a lesson (`claims._holds_timed`)
        return (
            "identified only by time: a lesson of the group was never injected in a graded session before one "
            "session and in every one from it on (or the reverse), so a change in the baseline then would look the "
            "same as the group's effect"
        )
    blocks = int(switch.blocks[c]) if switch is not None else 0
    where = f"in each of the {blocks} time blocks where it varies" if blocks > 1 else "within its time blocks"
    return (
        f"identified only by time: {where} it was never injected in {graded} before one session and always "
        "after it (or the reverse), so a change in the baseline at those moments would look the same"
    )


def stray_reason(switch: Switches, c: int) -> str:
    """Why column c, timed for what the baseline's steps left of it (`joint_posterior.time_labels`), claims
    nothing."""
    share = float(switch.share[c]) if switch.share is not None else 0.0
    return (
        "identified only by time: nearly all its variation within the time blocks is where it switches inside "
        f"them (the baseline steps there, and what is left holds {share:.0%} of what the data say of it; it needs "
        f"{KEPT_MIN:.0%}), so a change in the baseline at those moments would look much the same"
    )


def scopes(
    x: Any, group: IntArray, factors: Factors, columns: IntArray, names: tuple[tuple[str, ...], tuple[str, ...]]
) -> dict[int, str]:
    """Per column in `columns`: the sessions its switch is told among (the groups where it varies, neither always nor
    never injected: `group`, each session's baseline group, every one within one category and one agent), named for
    a reason when they are not all: "category y", "agent a1", "categories x and y and agent a1", or "the categories
    (and agents) where it varies" when no such words say which (`factors`: each session's category and agent codes;
    `names`: the codes' names)."""
    category, agent = factors
    csc = x.tocsc()
    size = np.bincount(group)
    category_of, agent_of = np.zeros(len(size), dtype=np.int64), np.zeros(len(size), dtype=np.int64)
    category_of[group] = category
    if agent is not None:
        agent_of[group] = agent
    kinds = (("category", "categories", category_of, names[0]), ("agent", "agents", agent_of, names[1]))
    every = {(int(a), int(b)) for a, b in zip(category_of, agent_of, strict=True)}
    where = " and ".join(many for _, many, code_of, _ in kinds if len(np.unique(code_of)) > 1) or "groups"
    out: dict[int, str] = {}
    for c in columns.tolist():
        span = slice(csc.indptr[c], csc.indptr[c + 1])
        k = np.bincount(group[csc.indices[span][csc.data[span] != 0]], minlength=len(size))
        varies = (k > 0) & (k < size)
        pairs = {(int(a), int(b)) for a, b in zip(category_of[varies], agent_of[varies], strict=True)}
        if pairs == every:
            continue
        levels = [sorted({pair[f] for pair in pairs}) for f in (0, 1)]
        parts = []
        for (one, many, code_of, labels), found in zip(kinds, levels, strict=True):
            if len(found) < len(np.unique(code_of)):
                said = [(labels[code] if code < len(labels) else str(code)) or "(none)" for code in found]
                parts.append(f"{one if len(said) == 1 else many} {' and '.join(said)}")
        product = {pair for pair in every if pair[0] in levels[0] and pair[1] in levels[1]}
        shown = parts and pairs == product and len(parts[0]) < 120
        out[c] = " and ".join(parts) if shown else f"the {where} where it varies"
    return out


def timed_switches(x: Any, group: IntArray, block: IntArray | None, whole: IntArray, factors: Factors) -> Switches:
    """Where each column switches (`switches`, within the baseline groups `group` and the time blocks `block`),
    with the columns switched where a block starts (`with_edges`; `whole`: the groups without the blocks; `factors`:
    each session's category and agent): what `loo` (core/analysis/claims.py) and the joint policy
    (`joint_posterior.time_only`) both read as a lesson switched once in time."""
    found = switches(x, group, block)
    return with_edges(found, x, whole, block, factors) if block is not None else found


def groups_without_blocks(category: IntArray, agent: IntArray | None, n_agents: int) -> IntArray:
    """Each graded session's baseline group without the time blocks: its category and agent."""
    agents = agent if agent is not None else np.zeros(len(category), dtype=np.int64)
    key = category.astype(np.int64) * (max(n_agents, 1) + 1) + agents
    group: IntArray = np.unique(key, return_inverse=True)[1].astype(np.int64)
    return group


def with_groups(
    timed: npt.NDArray[np.bool_], entries: Callable[[], Iterable[tuple[IntArray, IntArray]]]
) -> npt.NDArray[np.bool_]:
    """`timed` (per arm) with every arm grouped with a timed one as `loo` groups lessons (linked, in chains,
    when together in >= GROUP_SHARE of both arms' sessions, each in 2 or more): the group's effect cannot be
    told from the switch, and a member's own rests on the few sessions that part them. `entries()` yields each
    span's (session within the span, arm) pairs; two passes (none when no arm is timed): each arm's sessions,
    then the sessions together of each pair of arms in two or more (`Design.repeated_co_occurrence`'s pairs),
    whose links' connected sets holding a timed arm join it. (It walked the links from the timed arms, a pass
    over the log per link: a chain of 3,000 lessons, one group, took ~100 passes, more the longer the chain.)"""
    from scipy import sparse
    from scipy.sparse import csgraph

    n_arms = len(timed)
    if not timed.any():
        return timed.copy()
    n_with = np.zeros(n_arms)
    for row, arm in entries():
        if len(row):
            n_with += np.asarray(_once(row, arm, n_arms).sum(axis=0), dtype=np.float64).ravel()
    repeated = n_with >= 2  # a lesson in one session links to none
    co = sparse.csr_matrix((n_arms, n_arms))
    for row, arm in entries():
        keep = repeated[arm]
        if keep.any():
            x = _once(row[keep], arm[keep], n_arms)
            co = co + (x.T @ x).tocsr()
    pairs = co.tocoo()
    i, j = pairs.row, pairs.col
    linked = (i != j) & (pairs.data >= GROUP_SHARE * np.maximum(n_with[i], n_with[j]))
    graph = sparse.csr_matrix((np.ones(int(linked.sum())), (i[linked], j[linked])), shape=(n_arms, n_arms))
    _, label = csgraph.connected_components(graph, directed=False)
    out: npt.NDArray[np.bool_] = np.isin(label, label[timed])
    return out


def _once(row: IntArray, arm: IntArray, n_arms: int) -> Any:
    """The sessions x arms indicator of a span's (session, arm) pairs, a session counted once per arm."""
    from scipy import sparse

    x = sparse.csr_matrix((np.ones(len(row)), (row, arm)), shape=(int(row.max()) + 1, n_arms))
    x.data[:] = 1.0
    return x
