"""A session's kind of work, one spelling-blind name for it: shared by the estimates (core/analysis/joint.py
groups sessions by it), the writes (core/workspace/writing.py compares a record's category with its
selection's) and every place one session is shown (its kind's name, `KindNames`). Plain strings, no numpy: the
record path imports it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from lesson_credit.core.base.ids import one_form


def kind_of(category: str | None) -> str:
    """A session's kind of work as the estimates group it: its category stripped of spaces around,
    lower-cased with str.lower and put in Unicode's composed form (NFC: `café` typed with a combining accent
    is `café`), as `select` compares it with a lesson's match.session_categories (core/bandit/select.py
    `names_kind`): `Code`, `code` and ` code ` are one kind; "" for none."""
    return one_form((category or "").strip().lower())


def kind_spellings(counts: Mapping[str | None, int]) -> dict[str, str]:
    """Each kind of work (`kind_of`) of the spellings in `counts` (spelling -> sessions logged with it) -> the
    spelling most of its sessions use (a tie: the first in sorted order), as logged. Sessions without a kind
    (no category, a blank one) are left out. The kind's name is that spelling in `one_form`."""
    best: dict[str, str] = {}
    for spelling in sorted(c for c in counts if c):
        kind = kind_of(spelling)
        if kind and (kind not in best or counts[spelling] > counts[best[kind]]):
            best[kind] = spelling
    return best


class KindNames:
    """The kinds of work of a growing log's sessions, counted once and then for the sessions appended since
    (a log read again from its start, a new `generation`, is counted again): each kind's spelling most of its
    sessions use (`spelling`, what `select` logs) and the name a session's category is shown by (`name`)."""

    def __init__(self) -> None:
        self._generation = -1
        self._counted = 0
        self._counts: Counter[str | None] = Counter()
        self._best: dict[str, str] | None = None
        self._names: dict[str | None, str | None] = {}

    def update(self, generation: int, n: int, counted: Callable[[int, int], Mapping[str | None, int]]) -> None:
        """Count the first `n` sessions' categories (`counted(start, stop)`: how many of the sessions [start,
        stop) in log order have each category)."""
        if generation != self._generation or n < self._counted:
            self._generation, self._counted, self._counts = generation, 0, Counter()
        if n > self._counted:
            self._counts.update(counted(self._counted, n))
            self._counted, self._best, self._names = n, None, {}

    def spellings(self) -> dict[str, str]:
        """Each kind counted -> its spelling most used (`kind_spellings`)."""
        if self._best is None:
            self._best = kind_spellings(self._counts)
        return self._best

    def spelling(self, category: str) -> str:
        """The spelling the log uses for `category`'s kind; `category` itself for a kind it has not."""
        return self.spellings().get(kind_of(category), category)

    def name(self, category: str | None) -> str | None:
        """The name `category`'s kind is shown by: its spelling most used, in the composed Unicode form people
        type (`one_form`), whatever the session's own spelling; None for none or a blank one."""
        if category in self._names:
            return self._names[category]
        kind = kind_of(category)
        name = one_form(self.spellings().get(kind, category or "")) if kind else None
        self._names[category] = name
        return name

    def names(self, categories: Sequence[str | None]) -> Sequence[str | None]:
        """`name` of each of `categories`: `categories` itself when each is its kind's name already."""
        distinct = {category: self.name(category) for category in set(categories)}
        if all(category == name for category, name in distinct.items()):
            return categories
        return tuple(map(distinct.__getitem__, categories))
