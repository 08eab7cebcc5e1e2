"""What `export-gptme` wrote to files other than the workspace's own, as the log tells it (export
events, docs/format.md §5.8): per file, the numbers it holds as far as the log knows, the base an
import of that file takes gptme's increments from. And what the log knows of the workspace's own
`bandit-state.json` as gptme's bandit saved it (an increments event's `seen`, §5.5)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from msgspec import Struct

from lesson_credit.core.log.events import FileCounts, FileNumbers

NEW_ARM: FileCounts = (1.0, 1.0, 0, 0)  # an arm gptme's bandit creates starts at Beta(1, 1)


class OtherNames(Struct, frozen=True):
    """How the file being imported stands to another path the log names for its `created` (each asked of a
    path other than its own): `same`, that path names this very file (a hard link, a bind mount of its
    folder); `gone`, nothing is there now (the file moved from there, or a copy there was deleted)."""

    same: Callable[[str], bool]
    gone: Callable[[str], bool]


class Untold(Struct, frozen=True):
    """An arm of the file being imported whose update cannot be told from one an import of `other` (a file of the
    same `created`: a copy) logged: it may hold that update, or not (`Exports.base`)."""

    key: str
    other: str
    unstamped: bool = False  # the state that import saw has no gptme stamp (logged by a version before stamps)


class Exports:
    """Per exported file, by (its `created`, its path): the line of its export event and the numbers it
    wrote. `saves`: per file imported since (an exported file, a copy of one or of the workspace's own
    file, the workspace's own), by the same key, the numbers of the keys the increments events logged from
    it saw changed, the latest of each, and its total_sessions then. A copy of an exported file is known
    by its `created` too, and keeps its own record: what an import of it saw is not the original's."""

    def __init__(self) -> None:
        self.files: dict[tuple[str, str], tuple[int, FileNumbers]] = {}
        self.saves: dict[tuple[str, str], tuple[int, FileNumbers]] = {}
        self.history: list[tuple[int, FileNumbers, int]] = []  # every `seen`, in log order, its event's sessions

    def __bool__(self) -> bool:
        return bool(self.files or self.saves)

    def exported(self, line: int, numbers: FileNumbers) -> None:
        """An export event: the file holds its numbers (another export to that file replaces them)."""
        self.files[numbers.created, numbers.path] = (line, numbers)

    def seen(self, line: int, seen: FileNumbers, logged: int = 0) -> None:
        """An import of a file logged its increments (`logged`: the sessions it counted): the numbers of the keys
        it saw changed (and the file's total_sessions) are that file's from now on (absolute, never summed again)."""
        self.history.append((line, seen, logged))
        key = (seen.created, seen.path)
        if key in self.saves:
            seen = _over(self.saves[key][1], seen, seen.path, seen.sessions)
        self.saves[key] = (line, seen)

    def saved(self, created: str, path: str, names: OtherNames | None = None) -> FileNumbers | None:
        """What the increments events logged from the file at `path` (no export's) whose `created` is
        `created` saw there: the latest numbers of each key they saw changed, and its total_sessions
        (the numbers of other keys are those of the file of ours it grew from). None: none logged.
        `names`: what imports by other names of that very file (`OtherNames.same`) saw is the file's too, the
        latest of each key whichever name logged it."""
        own = self._own(created, path, None if names is None else names.same)
        return None if own is None else own[1]

    def _own(self, created: str, path: str, same: Callable[[str], bool] | None) -> tuple[int, FileNumbers] | None:
        """`saved`, with the line of the latest import it holds."""
        found = self.saves.get((created, path))
        logged = [found] if found is not None else []
        if same is not None:
            logged += [
                item
                for (stamp, where), item in self.saves.items()
                if stamp == created and where != path and same(where)
            ]
        if not logged:
            return None
        logged.sort(key=lambda item: item[0])  # in log order: a later import's numbers replace an earlier one's
        merged = FileNumbers(path, created, {}, 0)
        for _, n in logged:
            merged = _over(merged, n, path, n.sessions)
        return logged[-1][0], merged

    def saved_elsewhere(
        self,
        created: str,
        path: str,
        other: Callable[[str], bool],
        grew_from: Callable[[FileNumbers], bool],
        names: OtherNames | None = None,
    ) -> FileNumbers | None:
        """`saved(created, path)`, else the latest of what the increments events logged from another file of
        that `created` (a path `other` accepts) saw there that the file at `path` grew from (`grew_from`: it
        holds those numbers, and gptme's updates since): the file moved here since, or copied from there after
        that import (gptme keeps its `created`). None: none logged, or none it grew from. `names` (among the
        paths `other` accepts): as `saved`; and a later import than those by a name where nothing is now
        (`OtherNames.gone`) whose numbers, over those, the file grew from is the file's own: it was there then
        (its folder renamed and back), as a copy there deleted since cannot be told from it."""
        same = None if names is None else (lambda where: other(where) and names.same(where))
        own = self._own(created, path, same)
        if own is None:
            logged = [
                (line, n) for (stamp, where), (line, n) in self.saves.items() if stamp == created and other(where)
            ]
            return next((n for _, n in sorted(logged, key=lambda item: -item[0]) if grew_from(n)), None)
        after, mine = own
        if names is None:
            return mine
        later = [
            (line, n)
            for (stamp, where), (line, n) in self.saves.items()
            if stamp == created and line > after and where != path and other(where) and names.gone(where)
        ]
        for _, n in sorted(later, key=lambda item: -item[0]):
            moved = _over(mine, n, path, n.sessions)
            if grew_from(moved):
                return moved
        return mine

    def export_of(self, created: str, path: str) -> FileNumbers | None:
        """The numbers the export of the file at `path` whose `created` is `created` wrote (of the one to `path` when
        exports to several files wrote one `created`, in one second, else of the latest). None: no export wrote it."""
        if (created, path) in self.files:
            return self.files[created, path][1]
        found = [(line, numbers) for (stamp, _), (line, numbers) in self.files.items() if stamp == created]
        return max(found, key=lambda item: item[0])[1] if found else None

    def base(
        self,
        created: str,
        path: str,
        grew_from: Callable[[FileNumbers], bool],
        names: OtherNames | None = None,
        file: FileNumbers | None = None,
    ) -> tuple[FileNumbers, frozenset[str]] | None:
        """The numbers of the file at `path` whose `created` (gptme keeps it) is an export's, as the log tells
        them: the export's (of the one to `path` when exports to several files wrote one `created`, in one
        second, else of the latest), with those the imports of that file saw (`saved_elsewhere`: of the file
        at `path`, else the latest import of a file of that `created` elsewhere whose numbers it holds,
        `grew_from`: moved here, or copied from there after that import; `names`: as `saved_elsewhere`). With them, the
        keys an import saw. None: no export wrote it. `file` (the file's numbers, every key, with gptme's stamps):
        an import whose numbers it holds under other stamps than that import saw is not one it grew from."""
        exported = self.export_of(created, path)
        if exported is None:
            return None

        def over(seen: FileNumbers) -> FileNumbers:
            return _over(exported, seen, path, seen.sessions)

        def grown(seen: FileNumbers) -> bool:
            return stamped_alike(file, seen) and counted_since(file, over(seen)) and grew_from(over(seen))

        saved = self.saved_elsewhere(created, path, lambda _: True, grown, names)
        if saved is None:
            return FileNumbers(path, created, exported.arms, exported.sessions), frozenset()
        return over(saved), frozenset(saved.arms)

    def per_arm(
        self,
        base: FileNumbers,
        carried: frozenset[str],
        file: FileNumbers,
        origin: int,
        held: str | None = None,
        untold_as_base: bool = False,
        apart: Callable[[FileNumbers], bool] | None = None,
    ) -> tuple[FileNumbers, frozenset[str]] | Untold:
        """`base` (and `carried`, the keys an import saw: what `base` gave) of the file `file` (every key, with
        gptme's stamps; its path resolved; `origin`: the total_sessions of the file of ours its `created` names, the
        export's or our copy's; `held`: a path whose imports' sessions `origin` counts already, the own file's when
        our copy is the file as gptme saved it, its save logged), arm by arm against every state an import of its
        `created` saw (any path): an arm exactly a state one saw (the four numbers and gptme's stamp, to the
        microsecond: that very update) is logged already; its base is what the file holds (carried on). Then no arm
        may share, with a state an import saw, an update past its base (a gptme update adds one selection, so the
        common part of two arms' histories is no longer than the shorter; of two at one count under other stamps,
        shorter still): that update may be logged already, or not (Untold: which arm, which path; with
        `untold_as_base`, that arm keeps `base`'s numbers instead, the others told). Counted: `_counted`. `apart`: the
        states the file did not grow from (another save of the one load, docs/format.md §7), left out."""
        states = [
            (n, logged)
            for _, n, logged in self.history
            if n.created == file.created and (apart is None or not apart(n))
        ]
        if not states:
            return base, carried
        saw: dict[str, list[tuple[FileCounts, str | None, str]]] = {}  # per key: each state seen, its stamp, path
        for n, _ in states:
            for key, counts in n.arms.items():
                saw.setdefault(key, []).append((counts, n.stamps.get(key), n.path))
        arms, stamps, keys = dict(base.arms), dict(base.stamps), set(carried)
        for key, counts in file.arms.items():
            stamp = file.stamps.get(key)
            if stamp is None or key not in saw or _same(arms.get(key, NEW_ARM), counts):
                continue
            if any(told == stamp and _same(seen, counts) for seen, told, _ in saw[key]):
                arms[key], stamps[key] = counts, stamp
                keys.add(key)
        for key, counts in file.arms.items():
            for seen, told, where in saw.get(key, ()):
                if _shares_past(counts, file.stamps.get(key), seen, told, arms.get(key, NEW_ARM)[2]):
                    if not untold_as_base:
                        return Untold(key, where, told is None)
                    break  # (the arm keeps the base's numbers: its update is logged from there, maybe again)
        counted = _counted(file, base.sessions, origin, arms, [(n, count) for n, count in states if n.path != held])
        return FileNumbers(base.path, base.created, arms, file.sessions - counted, stamps), frozenset(keys)

    def plain(self) -> list[Any]:
        """As plain values (the parsed-log cache's head): a row per export, and per import in log order."""
        return [
            [
                line,
                n.path,
                n.created,
                {key: list(counts) for key, counts in n.arms.items()},
                n.sessions,
                exported,
                n.stamps,
                logged,
            ]
            for exported, rows in (
                (True, [(line, n, 0) for line, n in self.files.values()]),
                (False, self.history),
            )
            for line, n, logged in rows
        ]

    @classmethod
    def of_plain(cls, plain: list[Any]) -> Exports:
        """The `plain()` values back (TypeError, ValueError... when they are not)."""
        exports = cls()
        for line, path, created, arms, sessions, exported, stamps, logged in plain:
            counts = {str(key): (float(a), float(b), int(n), int(r)) for key, (a, b, n, r) in arms.items()}
            told = {str(key): str(stamp) for key, stamp in stamps.items()}
            numbers = FileNumbers(str(path), str(created), counts, int(sessions), told)
            if exported is True:
                exports.files[numbers.created, numbers.path] = (int(line), numbers)
            else:
                exports.seen(int(line), numbers, int(logged))
        return exports


def _counted(
    file: FileNumbers, since: int, origin: int, bases: dict[str, FileCounts], states: list[tuple[FileNumbers, int]]
) -> int:
    """The sessions of `file` an import counts (docs/format.md §5.8): the imports of its `created` (`states`, each
    with the sessions it logged) counted `logged` of the `held` sessions its copies held past the file of ours they
    all grew from (`origin` sessions), never one twice; the file holds `file.sessions - origin` of them. An arm's
    updates an import saw past the file's base for it (`bases`: no arm shares with a state an import saw an update
    past its base) are sessions the file does not hold (`apart`, the most of any arm). So at most `logged - apart`
    of the file's are counted already: it counts the rest, no fewer than its own arms' updates past their base show
    (`own`: each a session no import saw), no more than its sessions since `since` (its base's count: those before
    are counted)."""
    held, logged = file.sessions - origin, sum(count for _, count in states)
    apart = max([0, *(seen[2] - bases.get(key, NEW_ARM)[2] for n, _ in states for key, seen in n.arms.items())])
    own = max([0, *(counts[2] - bases.get(key, NEW_ARM)[2] for key, counts in file.arms.items())])
    return max(0, min(file.sessions - since, max(own, held - logged + apart)))


def stamped_alike(file: FileNumbers | None, seen: FileNumbers) -> bool:
    """Whether no arm of `file` (None: not known) is at the numbers an import `seen` under another stamp than that
    import saw (gptme's: another session's update, so the file did not grow from what that import saw)."""
    return file is None or all(
        key not in file.arms or not _same(file.arms[key], counts) or file.stamps.get(key) == seen.stamps[key]
        for key, counts in seen.arms.items()
        if key in seen.stamps
    )


def counted_since(file: FileNumbers | None, below: FileNumbers) -> bool:
    """Whether `file` (None: not known) counts sessions enough over `below` (the numbers and total_sessions an import
    saw, over those of the file of ours) to have grown from it: each update of gptme's since is a session (its
    total_sessions + 1) adding one selection, so it counts at least as many as any one arm's updates since."""
    if file is None:
        return True
    updates = max([0, *(n - below.arms.get(key, NEW_ARM)[2] for key, (_, _, n, _) in file.arms.items())])
    return file.sessions - below.sessions >= updates


def _over(below: FileNumbers, above: FileNumbers, path: str, sessions: int) -> FileNumbers:
    """The numbers of `below` with those of `above` over them, key by key (a key's stamp goes with its numbers)."""
    stamps = {key: stamp for key, stamp in below.stamps.items() if key not in above.arms}
    return FileNumbers(path, below.created, {**below.arms, **above.arms}, sessions, {**stamps, **above.stamps})


def _same(a: FileCounts, b: FileCounts) -> bool:
    """Whether two arms' numbers are one (alpha and beta as `increments` compares them, the counts exactly)."""
    close = all(math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-12) for x, y in zip(a[:2], b[:2], strict=True))
    return close and a[2:] == b[2:]


def _under(a: FileCounts, b: FileCounts) -> bool:
    """Whether `b` may be `a` and gptme's updates since (no number lower, one selection or more added)."""
    return b[2] > a[2] and all(
        y >= x or math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-12) for x, y in zip(a, b, strict=True)
    )


def _shares_past(mine: FileCounts, stamp: str | None, seen: FileCounts, told: str | None, base: int) -> bool:
    """Whether an arm at `mine` (gptme's stamp `stamp`, None: not one) and one an import saw at `seen` (`told`) may
    have gptme's updates in common past `base` selections: the longest history they may share is the shorter one
    when it may be the other's start (`_under`), else one update less; two at one count are one state only under one
    stamp (both known and the numbers the same: that is no sharing past it), so under two, one update less."""
    if stamp is not None and told == stamp and _same(mine, seen):
        return False
    if mine[2] == seen[2]:
        top = mine[2] if _same(mine, seen) and (stamp is None or told is None) else mine[2] - 1
    else:
        low, high = (seen, mine) if seen[2] < mine[2] else (mine, seen)
        top = low[2] if _under(low, high) else low[2] - 1
    return top > base
