"""Issue 10, hostile files: nothing a workspace holds can hang us, exhaust memory or brick it.

Each case runs the real command in a subprocess with a generous limit and asserts that it
finished with the expected one-line message; none asserts speed.
"""

from __future__ import annotations

import re
from pathlib import Path

from hostile_helpers import lesson, make_ws, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.salience import KeywordMatcher

PROPERTY = settings(
    max_examples=400, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)


def _reference_spans(key: str, text: str) -> list[tuple[int, int]]:
    """SPEC 4 read literally: `*` is `\\w*`, leftmost non-overlapping matches (re.finditer)."""
    regex = re.compile(r"\w*".join(re.escape(part) for part in key.split("*")))
    return [m.span() for m in regex.finditer(text) if m.end() > m.start()]


@PROPERTY
@given(
    st.text(alphabet="ab-* ", min_size=1, max_size=8).filter(lambda k: "*" in k and k.replace("*", "").strip()),
    st.text(alphabet="abAB_- .\né", max_size=80),
)
def test_wildcard_matches_equal_a_regex_reference(keyword: str, text: str) -> None:
    """Several stars, runs of stars, leading/trailing ones and literal parts with non-word
    characters: the linear matcher gives exactly finditer's spans (on lower-cased text)."""
    key = keyword.strip().lower()
    found = KeywordMatcher([keyword]).scan(text).get(key, [])
    assert found == _reference_spans(key, text.lower())


def test_a_wildcard_with_a_run_of_stars_does_not_backtrack(tmp_path: Path) -> None:
    ws = make_ws(tmp_path, {"w.md": lesson(["a****b", "a*b"])})
    (ws / "j.md").write_text("a" + "c" * 3000 + " " + "a" * 80_000)
    done = run_cli("record", "--session-id", "s1", "--journal", "j.md", "--lessons", "w.md", "--json", cwd=ws)
    assert done.returncode == 0, done.stderr
    assert '"salience": 0.0' in done.stdout
