"""The files gptme-contrib's lessons MCP server (`scripts/gptme-lessons-mcp.py`, load_lessons/load_lesson) reads
from a library folder, and the name it looks each up by first in `loo-results.json`.

It reads every `*.md` under the folder but `README.md` (`sorted(folder.rglob("*.md"))`: hidden folders too,
folders linked to not entered), whatever the frontmatter, where our library skips hidden folders, templates and
to-do lists and sets aside a file it cannot load. A file is looked up as `<the name of its folder>/<stem>` (one
at the folder's root under the folder's own name: `lessons/x`), then, with no such key, as `<stem>`."""

from __future__ import annotations

import os
from collections.abc import Iterable


def server_names(roots: Iterable[str]) -> dict[str, str]:
    """{lesson id: the name gptme's lessons server looks that file up by first} for each file it reads in the
    library's folders (`Library.roots`, each as the server would read it were it pointed there), the first
    folder's where two have a file of the same id; a library folder inside another is walked once, as the library
    reads it (`load_library`: the first folder's ids)."""
    names: dict[str, str] = {}
    seen: set[str] = set()  # folders walked, resolved (one inside another, or reached through a link: once)
    for root in roots:
        top = os.fspath(root)
        for dirpath, dirnames, filenames in os.walk(top):  # (links to folders are listed, not entered)
            if (real := os.path.realpath(dirpath)) in seen:
                dirnames.clear()
                continue
            seen.add(real)
            folder = os.path.relpath(dirpath, top).replace(os.sep, "/")
            prefix, parent = ("" if folder == "." else folder + "/"), os.path.basename(dirpath) + "/"
            for name in filenames:
                if name.endswith(".md") and name != "README.md" and _readable(os.path.join(dirpath, name)):
                    names.setdefault(prefix + name, parent + (name[:-3] if len(name) > 3 else name))  # (its stem)
    return names


def _readable(path: str) -> bool:
    """Whether the server reads the file at `path`: one it cannot open (a link to nothing, no permission) it
    passes over."""
    return os.path.isfile(path) and os.access(path, os.R_OK)
