"""Which keywords are matched (docs/format.md §3): the limits on a keyword's length, a wildcard's literal parts, a
lesson's wildcards and the work of matching one journal's wildcards, and the one-line reasons given for a keyword
not matched. Plain Python: the library, its salience and `record` read these without numpy, which the matching of
wildcards (core/library/wildcard.py) uses.
"""

from __future__ import annotations

import re

_STARS = re.compile(r"\*+")
WILDCARD_MAX_PARTS = 4  # literal parts between stars: matching costs a pass over the journal per part
# Wildcard keywords one lesson counts (the first ones, in its order): each costs work in proportion to its parts'
# occurrences in the journal (~0.1 s of CPU over an 8 MB journal of one-letter parts), so 2,000 of them ran for
# minutes; gptme's own lessons use none.
WILDCARD_MAX_PER_LESSON = 16
# The work of matching one journal's wildcard keywords (one scan: a command's lessons, or select's library): the
# occurrences their parts have, each part counted as often as a wildcard has it (its matching works through each,
# ~10-16 ns an occurrence), at most WILDCARD_WORK_PER_CHAR a character of journal (and WILDCARD_WORK_FLOOR whatever
# its length). Past it the next wildcards are not matched (`work_budget`): 64 wildcards of one-letter parts over
# a MB of `a`s took 22 s. Any four wildcards fit (a part occurs at most once a character).
WILDCARD_WORK_PER_CHAR = 4 * WILDCARD_MAX_PARTS
WILDCARD_WORK_FLOOR = 1 << 20
# Characters of a keyword matched (gptme's own lessons: 53 at most). The salience automaton's pass over a journal
# costs, at each character, the length of the keyword prefix it ends in (pyahocorasick follows the failure links
# down to the root for outputs): a keyword of 100 over a journal repeating its start is ~0.4 s per MB.
KEYWORD_MAX_CHARS = 100


def collapse_stars(key: str) -> str:
    """The keyword with every run of `*` made one `*` (it matches the same spans)."""
    return _STARS.sub("*", key)


def literal_parts(key: str) -> int:
    """How many literal parts a keyword's stars separate (`git*tree` 2, `*ok*` 1)."""
    return sum(1 for piece in _STARS.split(key) if piece)


def keyword_problem(keyword: str) -> str | None:
    """Why a keyword is not matched (one line), or None: a wildcard of more than WILDCARD_MAX_PARTS literal parts,
    each a pass over every journal (`a*a*...*b` of 400 parts took minutes and GBs); a keyword longer than
    KEYWORD_MAX_CHARS, which the automaton's pass costs up to its length at each character of a journal that
    repeats its start (`a` x 30,000 over 300 KB of `a`s: 40 s a command)."""
    if "*" in keyword and (parts := literal_parts(keyword)) > WILDCARD_MAX_PARTS:
        return (
            f"keyword {_shown(keyword)} has {parts} literal parts between its '*'s (at most {WILDCARD_MAX_PARTS} are "
            "matched); keyword ignored"
        )
    if len(keyword) > KEYWORD_MAX_CHARS:
        return (
            f"keyword {_shown(keyword)} is {len(keyword):,} characters long (at most {KEYWORD_MAX_CHARS}); "
            "keyword ignored"
        )
    return None


def _shown(keyword: str) -> str:
    return repr(keyword) if len(keyword) <= 60 else repr(keyword[:57]) + "..."


def past_cap_reason(beyond: int, over: str = "journal") -> str:
    """Why `beyond` wildcard keywords of one list (a lesson's, a category's) are not counted: one line."""
    return (
        f"{beyond} wildcard keyword{'s' if beyond > 1 else ''} past the first {WILDCARD_MAX_PER_LESSON} "
        f"(each a pass over the {over}); ignored"
    )


def work_budget(n: int) -> int:
    """The most work (occurrences of parts) matching wildcards over a journal of `n` characters is given."""
    return max(WILDCARD_WORK_FLOOR, WILDCARD_WORK_PER_CHAR * (n + 1))


def unmatched_reason(unmatched: int) -> str:
    """Why `unmatched` wildcard keywords of a lesson were not matched in a journal: one line."""
    return (
        f"{unmatched} wildcard keyword{'s' if unmatched > 1 else ''} not matched (counted as missed): matching "
        "the wildcard keywords of the lessons read with it over this journal would go through more than "
        f"{WILDCARD_WORK_PER_CHAR} occurrences of their parts a character of it"
    )


def select_unmatched_reason(unmatched: int) -> str:
    """Why `unmatched` wildcard keywords of the library were not matched over a select's context: one line."""
    return (
        f"{unmatched} wildcard keyword{'s' if unmatched > 1 else ''} of the library not matched over this context: "
        f"matching them would go through more than {WILDCARD_WORK_PER_CHAR} occurrences of their parts a character "
        "of it (docs/format.md §3)"
    )


_PAST_CAP = re.compile(r"(\d+) (?:wildcard keywords?|patterns?) past the first ")  # (and patterns.patterns_past_cap)


def keywords_of_reason(reason: str) -> int:
    """How many keywords or patterns a reason `past_cap_reason` or another gave names: its number, else one."""
    found = _PAST_CAP.match(reason)
    return int(found[1]) if found else 1
