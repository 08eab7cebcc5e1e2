"""lesson-credit: salience-weighted credit for agent lessons.

The repository keeps `core/`, `tui/` and `cli/` at its root; they are installed (and imported)
only as `lesson_credit.core`, `lesson_credit.tui` and `lesson_credit.cli`, so an unrelated
`core` or `tui` package can never shadow ours or be shadowed by it.
"""
