"""What `export-gptme` wrote to files other than the workspace's own, as the log tells it (export
events, docs/format.md §5.8): per file, the numbers it holds as far as the log knows, the base an
import of that file takes gptme's increments from. And what the log knows of the workspace's own
`bandit-state.json` as gptme's bandit saved it (an increments event's `seen`, §5.5)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec import Struct

from lesson_credit.core.log.events import FileNumbers


class OtherNames(Struct, frozen=True):
    """How the file being imported stands to another path the log names for its `created` (each asked of a
    path other than its own): `same`, that path names this very file (a hard link, a bind mount of its
    folder); `gone`, nothing is there now (the file moved from there, or a copy there was deleted)."""

    same: Callable[[str], bool]
    gone: Callable[[str], bool]


class Exports:
    """Per exported file, by (its `created`, its path): the line of its export event and the numbers it
    wrote. `saves`: per file imported since (an exported file, a copy of one or of the workspace's own
    file, the workspace's own), by the same key, the numbers of the keys the increments events logged from
    it saw changed, the latest of each, and its total_sessions then. A copy of an exported file is known
    by its `created` too, and keeps its own record: what an import of it saw is not the original's."""

    def __init__(self) -> None:
        self.files: dict[tuple[str, str], tuple[int, FileNumbers]] = {}
        self.saves: dict[tuple[str, str], tuple[int, FileNumbers]] = {}

    def __bool__(self) -> bool:
        return bool(self.files or self.saves)

    def exported(self, line: int, numbers: FileNumbers) -> None:
        """An export event: the file holds its numbers (another export to that file replaces them)."""
        self.files[numbers.created, numbers.path] = (line, numbers)

    def seen(self, line: int, seen: FileNumbers) -> None:
        """An import of a file logged its increments: the numbers of the keys it saw changed (and the file's
        total_sessions) are that file's from now on (absolute, never summed again)."""
        key = (seen.created, seen.path)
        if key in self.saves:
            seen = FileNumbers(seen.path, seen.created, {**self.saves[key][1].arms, **seen.arms}, seen.sessions)
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
        arms = {key: counts for _, n in logged for key, counts in n.arms.items()}
        return logged[-1][0], FileNumbers(path, created, arms, logged[-1][1].sessions)

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
            moved = FileNumbers(path, created, {**mine.arms, **n.arms}, n.sessions)
            if grew_from(moved):
                return moved
        return mine

    def base(
        self,
        created: str,
        path: str,
        grew_from: Callable[[FileNumbers], bool],
        names: OtherNames | None = None,
    ) -> tuple[FileNumbers, frozenset[str]] | None:
        """The numbers of the file at `path` whose `created` (gptme keeps it) is an export's, as the log tells
        them: the export's (of the one to `path` when exports to several files wrote one `created`, in one
        second, else of the latest), with those the imports of that file saw (`saved_elsewhere`: of the file
        at `path`, else the latest import of a file of that `created` elsewhere whose numbers it holds,
        `grew_from`: moved here, or copied from there after that import; `names`: as `saved_elsewhere`). With them, the
        keys an import saw. None: no export wrote it."""
        if (created, path) in self.files:
            exported = self.files[created, path][1]
        else:
            found = [(line, numbers) for (stamp, _), (line, numbers) in self.files.items() if stamp == created]
            if not found:
                return None
            exported = max(found, key=lambda item: item[0])[1]

        def over(seen: FileNumbers) -> FileNumbers:
            return FileNumbers(path, created, {**exported.arms, **seen.arms}, seen.sessions)

        saved = self.saved_elsewhere(created, path, lambda _: True, lambda seen: grew_from(over(seen)), names)
        if saved is None:
            return FileNumbers(path, created, exported.arms, exported.sessions), frozenset()
        return over(saved), frozenset(saved.arms)

    def plain(self) -> list[Any]:
        """As plain values (the parsed-log cache's head): a row per file, exported or not."""
        return [
            [line, n.path, n.created, {key: list(counts) for key, counts in n.arms.items()}, n.sessions, exported]
            for exported, files in ((True, self.files), (False, self.saves))
            for line, n in files.values()
        ]

    @classmethod
    def of(cls, plain: list[Any]) -> Exports:
        """The `plain()` values back (TypeError, ValueError... when they are not)."""
        exports = cls()
        for line, path, created, arms, sessions, exported in plain:
            counts = {str(key): (float(a), float(b), int(n), int(r)) for key, (a, b, n, r) in arms.items()}
            numbers = FileNumbers(str(path), str(created), counts, int(sessions))
            (exports.files if exported is True else exports.saves)[numbers.created, numbers.path] = (int(line), numbers)
        return exports
