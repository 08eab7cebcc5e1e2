"""The sessions imported files' bandits counted, as the log's prior events tell them (docs/format.md
§5.5): each file's latest count, added up. A file is known by its `created` (gptme keeps it), which
the prior event names; one without (another tool's file, a log of before) is taken for an earlier
event's file when it replaces every prior that event still had in force (a file imported again
names the same arms or more)."""

from __future__ import annotations

from typing import Any


class PriorCounts:
    """Per prior event whose file still counts (by its line): that file's count and its `created`."""

    def __init__(self) -> None:
        self.files: dict[int, tuple[int, str | None]] = {}
        self.earlier: dict[int, str | None] = {}  # an earlier import of a file imported again: its `created`

    def total(self) -> int:
        return sum(count for count, _ in self.files.values())

    def created_of(self, line: int) -> str | None:
        """The `created` of the file the prior event at `line` imported, its latest import or an earlier one (an
        arm's prior may still come from that: a file imported again naming fewer arms). None: none said, or no
        such event."""
        return self.files[line][1] if line in self.files else self.earlier.get(line)

    def of(self, line: int) -> int:
        """The count of the file the prior event at `line` imported (0: none, or replaced since)."""
        return self.files.get(line, (0, None))[0]

    def imported(self, line: int, sessions: int, created: str | None, before: set[int], after: set[int]) -> None:
        """A prior event at `line` of a file that counted `sessions` (`created`: the file's, if it said);
        `before` and `after`: the lines some arm's prior came from before it and comes from now. The
        earlier events of the same file are replaced by it, the most of their counts and its own kept
        (a count never goes back); another file's count stays, whether or not its priors do."""

        def same_file(at: int, was: str | None) -> bool:
            if created is not None and was is not None:
                return was == created
            return at in before and at not in after  # (wholly replaced by this one)

        same = [at for at, (_, was) in self.files.items() if same_file(at, was)]
        counts = []
        for at in same:
            count, self.earlier[at] = self.files.pop(at)
            counts.append(count)
        self.files[line] = (max([sessions, *counts]), created)

    def plain(self) -> list[Any]:
        """As plain values (the parsed-log cache's head)."""
        files = [[line, count, created] for line, (count, created) in self.files.items()]
        return [files, [[line, created] for line, created in self.earlier.items()]]

    @classmethod
    def of_plain(cls, plain: list[Any]) -> PriorCounts:
        """The `plain()` values back (TypeError, ValueError... when they are not)."""
        counts = cls()
        files, earlier = plain
        for line, count, created in files:
            counts.files[int(line)] = (int(count), None if created is None else str(created))
        for line, created in earlier:
            counts.earlier[int(line)] = None if created is None else str(created)
        return counts
