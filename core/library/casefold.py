"""How keywords and journals are compared: case-insensitively, character by character (docs/format.md §3).

A journal is lowered as gptme lowers it (`str.lower()`), with the letters a case-insensitive `re` search takes for
one another made one; where lowering changes the text's length (rare scripts) the offsets are mapped back, so that
every offset reported points into the original text.
"""

from __future__ import annotations

import re
from functools import lru_cache


@lru_cache(maxsize=1 << 16)
def casekey(keyword: str) -> str:
    """The case-folded form keywords and journals are compared in (character by character).
    Cached: a library repeats keywords, and every breakdown looks each one up."""
    return lower_same_length(keyword)[0]


# Every Latin-1 character lowers to one Latin-1 character, and none by context: a byte table.
_LATIN1_LOWER = bytes(ord(chr(code).lower()) for code in range(256))

# Lower-case letters a case-insensitive `re` search also takes for one another (gptme matches a keyword
# so in the lowered journal): each group's other members, then the one they are compared as. Python's
# `re` keeps the groups in `re._casefix`; tests/core/test_salience_unicode.py checks this table against
# what `re` does. Each group is compared as its member of lowest code that `\w` matches (a Latin-1
# member is always that one, so the byte table above needs no change).
_SAME_LETTER = dict(
    (other, group.split(">")[1])
    for group in (
        "\u0131>i \u017f>s \u03bc>\xb5 \u0345\u1fbe>\u03b9 \u1fd3>\u0390 \u1fe3>\u03b0 \u03d0>\u03b2 "
        "\u03f5>\u03b5 \u03d1>\u03b8 \u03f0>\u03ba \u03d6>\u03c0 \u03f1>\u03c1 \u03c3>\u03c2 \u03d5>\u03c6 "
        "\u1c80>\u0432 \u1c81>\u0434 \u1c82>\u043e \u1c83>\u0441 \u1c84\u1c85>\u0442 \u1c86>\u044a "
        "\u1c87>\u0463 \ua64b>\u1c88 \u1e9b>\u1e61 \ufb06>\ufb05"
    ).split()
    for other in group.split(">")[0]
)
_SAME_LETTER_FOUND = re.compile("[" + "".join(_SAME_LETTER) + "]")
NOT_WORD_SAME_LETTER = "\u0345"  # the one member `\w` does not match (its group is compared as ι, which it does)


def lower_same_length(text: str, same_letter: bool = True) -> tuple[str, list[int] | None]:
    """Lower-case text character by character, the letters of a `_SAME_LETTER` group made one (unless
    `same_letter` is False); when lowering changes lengths (rare scripts) also map offsets back.
    `str.lower()` lowers character by character but for a final sigma ('ς' at the end of a word,
    'σ' elsewhere): the two are one letter here."""
    if text.isascii():  # known without reading the text
        return text.lower(), None
    try:
        return text.encode("latin-1").translate(_LATIN1_LOWER).decode("latin-1"), None
    except UnicodeEncodeError:  # a character beyond Latin-1
        pass
    lowered, back = text.lower(), None
    if len(lowered) != len(text):
        pieces: list[str] = []
        back = []
        for index, char in enumerate(text):
            low = char.lower()
            pieces.append(low)
            back.extend([index] * len(low))
        back.append(len(text))
        lowered = "".join(pieces)
    if same_letter and _SAME_LETTER_FOUND.search(lowered):
        for other, letter in _SAME_LETTER.items():  # a C-speed pass each (`str.translate` with a dict is 20x slower)
            if other in lowered:
                lowered = lowered.replace(other, letter)
    return lowered, back
