"""The app's stylesheet: Textual's, re-parsed only when the CSS variables change.

Textual re-parses every CSS source whenever it refreshes the CSS, and it refreshes it each time
a screen is first shown (twice for a new mode's screen, textual 8.2.8), though the variables the
parse substitutes (the theme's colours) did not change. Parsing is a pure function of a source
and the variables, and a Stylesheet caches each source's parse until its variables are set. So
this one keeps the cache while Textual sets the same variables again, and its `reparse` is a
`parse`: the new sources are parsed, the rest come from the cache. New variables (a theme
change) empty the cache, so everything is parsed again, as before. Opening Sessions for the
first time: 60 source parses before, 3 after (tests/tui/test_tui_stylesheet.py).
"""

from __future__ import annotations

from textual.css.stylesheet import Stylesheet


class ThemeStylesheet(Stylesheet):
    """A `Stylesheet` that keeps its parses while the CSS variables stay the same."""

    def __init__(self, *, variables: dict[str, str] | None = None) -> None:
        super().__init__(variables=variables)
        self._set_variables = dict(variables or {})

    def set_variables(self, variables: dict[str, str]) -> None:
        """Textual passes the theme's variables at every CSS refresh: the same ones change nothing."""
        if variables == self._set_variables:
            return
        self._set_variables = dict(variables)
        super().set_variables(variables)  # empties the parse cache

    def reparse(self) -> None:
        """Parse every source with the current variables: a source parsed with them before comes from
        the cache. As with Textual's reparse, a source with errors raises and the rules stay as they were."""
        self.parse()
