"""A session's kind of work, one spelling-blind name for it: shared by the estimates (core/analysis/joint.py
groups sessions by it) and the writes (core/workspace/writing.py compares a record's category with its
selection's). Plain strings, no numpy: the record path imports it."""

from __future__ import annotations

from lesson_credit.core.base.ids import one_form


def kind_of(category: str | None) -> str:
    """A session's kind of work as the estimates group it: its category stripped of spaces around,
    lower-cased with str.lower and put in Unicode's composed form (NFC: `café` typed with a combining accent
    is `café`), as `select` compares it with a lesson's match.session_categories (core/bandit/select.py
    `names_kind`): `Code`, `code` and ` code ` are one kind; "" for none."""
    return one_form((category or "").strip().lower())
