"""What `export-gptme` wrote to files other than the workspace's own, as the log tells it (export
events, docs/format.md §5.8): per file, the numbers it holds as far as the log knows, the base an
import of that file takes gptme's increments from."""

from __future__ import annotations

from typing import Any

from lesson_credit.core.log.events import FileNumbers


class Exports:
    """Per exported file, by (its `created`, its path): the line of the latest event telling its numbers,
    and those numbers (the export's, with those a later import of it saw changed)."""

    def __init__(self) -> None:
        self.files: dict[tuple[str, str], tuple[int, FileNumbers]] = {}

    def __bool__(self) -> bool:
        return bool(self.files)

    def exported(self, line: int, numbers: FileNumbers) -> None:
        """An export event: the file holds its numbers (another export to that file replaces them)."""
        self.files[numbers.created, numbers.path] = (line, numbers)

    def seen(self, line: int, seen: FileNumbers) -> None:
        """An import of an exported file logged its increments: the numbers of the keys it saw changed
        (and the file's total_sessions) are that file's from now on (absolute, never summed again)."""
        key = (seen.created, seen.path)
        if key in self.files:
            was = self.files[key][1]
            self.files[key] = (line, FileNumbers(was.path, was.created, {**was.arms, **seen.arms}, seen.sessions))

    def base(self, created: str, path: str) -> FileNumbers | None:
        """The numbers of the exported file whose `created` (gptme keeps it) is `created`: of the one at
        `path` when exports to several files wrote one `created` (in one second), else of the latest.
        None: no export wrote it."""
        if (created, path) in self.files:
            return self.files[created, path][1]
        found = [(line, numbers) for (stamp, _), (line, numbers) in self.files.items() if stamp == created]
        return max(found, key=lambda item: item[0])[1] if found else None

    def plain(self) -> list[Any]:
        """As plain values (the parsed-log cache's head)."""
        return [
            [line, n.path, n.created, {key: list(counts) for key, counts in n.arms.items()}, n.sessions]
            for line, n in self.files.values()
        ]

    @classmethod
    def of(cls, plain: list[Any]) -> Exports:
        """The `plain()` values back (TypeError, ValueError... when they are not)."""
        exports = cls()
        for line, path, created, arms, sessions in plain:
            counts = {str(key): (float(a), float(b), int(n), int(r)) for key, (a, b, n, r) in arms.items()}
            exports.exported(int(line), FileNumbers(str(path), str(created), counts, int(sessions)))
        return exports
