"""What gptme's lesson parser (gptme/lessons/parser.py) makes of a lesson's frontmatter, where it is not
what we read: the keyword and pattern values we take as it takes them, and notes for `lint` where we
read a file otherwise (docs/format.md §2 says which and why).

gptme reads frontmatter only when the file's text starts with `---` (a byte order mark or a blank line
first: none) and ends it at the next `---` anywhere in the text. It reads `match.keywords` and
`match.patterns` by iterating them and keeping the text items: a list's text entries, a mapping's text
keys, one string as itself; a number or null raises, and its index then skips the file. A top-level
`keywords` it never reads; a `globs` key makes the file a Cursor rule (keywords from the globs); it
includes only lessons whose status is exactly `active`."""

from __future__ import annotations

from typing import Any

from lesson_credit.core.base.errors import UserError
from lesson_credit.core.base.numbers import listed

NOTE = "gptme "  # every note starts so: how the library tells a note (a warning) from a part not used


class ShapeError(UserError):
    """A keyword or pattern value no reader can use (lessons.py makes it a LessonError)."""


def str_list(value: Any, what: str, ignored: list[str], top_level: bool = False) -> tuple[str, ...]:
    """The text items of a `keywords` or `patterns` value as gptme's parser keeps them: a list's text
    entries, a mapping's text keys, one string; what is dropped is said in `ignored`. A value gptme
    cannot iterate (a number, true) raises ShapeError, as gptme then skips the file, unless it is a
    `top_level` keywords (which gptme never reads): then it is ignored and said."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if top_level and not isinstance(value, list):
        shown = _shown(value)
        ignored.append(f"top-level keywords that are not a list or text are ignored: {shown} (gptme reads none)")
        return ()
    if isinstance(value, dict):
        keys = [key for key in value if isinstance(key, str)]
        ignored.append(
            f"{what} is a mapping: its text keys are read as the {what}, as gptme reads them, its values ignored "
            f"({', '.join(shown_value(key) for key in keys[:3]) or 'none'}); write a list"
        )
        return tuple(keys)
    if isinstance(value, list):
        others = [item for item in value if not isinstance(item, str)]
        if others:
            shown = listed([_shown(item) for item in others[:3]], 3, total=len(others))
            why = f"{what[:-1]} entries that are not text are ignored, as gptme ignores them"
            ignored.append(f"{why}: {shown} (quote one to match it)")
        return tuple(item for item in value if isinstance(item, str))
    raise ShapeError(
        f"{what} must be a list of strings, got {type(value).__name__}; gptme cannot load it either (it skips the file)"
    )


def category_list(value: Any, ignored: list[str]) -> tuple[str, ...]:
    """`match.session_categories` (gptme-contrib's lesson hook reads it; gptme's parser does not): the
    kinds of work a lesson is for, a list or one string, each kept as written, stripped. The hook iterates
    the value: a mapping gives its keys (`{code, research}` is one), a set its items (sorted: a set has no
    order), which are read and said. What else it holds is ignored and said, the lesson kept (for any
    kind of work when nothing is left)."""
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else None
    if isinstance(value, dict | set | frozenset):
        kind, what = ("a mapping", "keys") if isinstance(value, dict) else ("a set", "items")
        texts = sorted(item for item in value if isinstance(item, str))
        items = list(value) if isinstance(value, dict) else texts + [i for i in value if not isinstance(i, str)]
        ignored.append(
            f"match.session_categories is {kind}: its text {what} are read as the kinds of work, as "
            "gptme-contrib's hook reads them; write a list"
        )
    if items is None:
        ignored.append(f"match.session_categories must be a list of kinds of work, got {_shown(value)}: ignored")
        return ()
    others = [item for item in items if not isinstance(item, str) or not item.strip()]
    if others:
        shown = ", ".join(shown_value(item) for item in others[:3])
        ignored.append(f"match.session_categories entries that are not kinds of work are ignored: {shown}")
    kept = dict.fromkeys(item.strip() for item in items if isinstance(item, str) and item.strip())
    return tuple(kept)


def shown_value(item: Any) -> str:
    """A frontmatter value for a one-line message: text quoted, cut after 40 characters; others by `_shown`."""
    if isinstance(item, str):
        return repr(item) if len(item) <= 40 else repr(item[:37]) + "..."
    return _shown(item)


def _shown(item: Any) -> str:
    """A non-text YAML value, as its YAML reads (a collection by its kind: a set's items come in no set order)."""
    if item is None or isinstance(item, bool):
        return {None: "null", True: "true", False: "false"}[item]
    if isinstance(item, list | tuple | dict | set | frozenset):
        return "a mapping" if isinstance(item, dict) else "a set" if isinstance(item, set | frozenset) else "a list"
    return str(item)[:40]


def frontmatter_note(text: str, raw_meta: str | None, yaml: bool) -> str | None:
    """Why gptme reads other frontmatter than we do in `text` (the file's text, a byte order mark
    kept), `raw_meta` being what we read as frontmatter (None: none) in the `yaml` format; None when it
    reads the same."""
    if raw_meta is None:
        return None
    if not text.startswith("---") or not yaml:
        if text.startswith("\ufeff"):
            why = "the file starts with a UTF-8 byte order mark"
        elif yaml:
            why = _before_dashes(text[: text.find("---")]) + " before the opening `---`"
        else:
            why = "its frontmatter is not YAML between `---` lines"
        return (
            f"{NOTE}reads no frontmatter in this file ({why}): gptme never matches its keywords or patterns "
            "and takes it as active; start the file with `---`"
        )
    parts = text.split("---", 2)
    if len(parts) == 3 and parts[1].strip() == raw_meta.strip():
        return None
    line = text.count("\n", 0, len(parts[0]) + 3 + len(parts[1])) + 1
    return (
        f"{NOTE}ends the frontmatter at the first `---` after the opening one, on line {line}, not at the "
        "closing `---` line: gptme reads other settings or cannot load the file; write no `---` inside the "
        "frontmatter"
    )


def _before_dashes(before: str) -> str:
    """What `before` (blank lines, then what stands before `---` on its line) is, with its verb."""
    blank, indent = before.count("\n"), before[before.rfind("\n") + 1 :]
    lines = f"{blank} blank line{'s' if blank != 1 else ''}" if blank else ""
    rest = "spaces" if indent.strip(" ") == "" else "whitespace"
    if not indent:
        return f"{lines} {'comes' if blank == 1 else 'come'}"
    return f"{lines} and {rest} come" if lines else f"{rest} {'come' if rest == 'spaces' else 'comes'}"


def meta_notes(meta: dict[str, Any], match: Any) -> list[str]:
    """Settings of a frontmatter mapping that gptme cannot use as we do."""
    notes = []
    if "match" in meta and meta["match"] is None:
        notes.append(f"{NOTE}cannot load this lesson: `match:` is empty (null); remove it or give it keywords")
    if isinstance(match, dict):
        notes += [
            f"{NOTE}cannot load this lesson: match.{key} is empty (null); remove it or give it a list"
            for key in ("keywords", "patterns")
            if key in match and match[key] is None
        ]
    if "status" in meta and meta["status"] is None:
        notes.append(f"{NOTE}never includes this lesson: `status:` is empty (null), not active to gptme")
    if "globs" in meta:
        notes.append(
            f"{NOTE}reads this file as a Cursor rule (it has `globs`): its keywords come from the globs, its "
            "match and status are ignored; remove `globs`"
        )
    return notes
