"""The lesson library: gptme-format lesson files, their ids, and the problems found loading them."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from msgspec import Struct

from lesson_credit.core.base.errors import UserError
from lesson_credit.core.base.ids import normalize_id as normalize_id
from lesson_credit.core.base.safe_read import (
    LESSON_MAX_BYTES,
    SETTINGS_MAX_BYTES,
    UnsafeFile,
    read_regular,
    resolve_path,
)
from lesson_credit.core.library.gptme_reading import (
    NOTE,
    ShapeError,
    category_list,
    frontmatter_note,
    meta_notes,
    shown_value,
    str_list,
)
from lesson_credit.core.library.patterns import PATTERN_MAX_PER_LESSON, PatternError, compile_pattern, patterns_past_cap

STATUSES = ("active", "automated", "deprecated", "archived")
MISSING = "missing"  # status shown for arms in the log that the library does not have

# kinds of LessonProblem
BROKEN = "broken"  # a lesson file that cannot be loaded (skipped)
OVERRIDDEN = "overridden"  # a second file for an id: the first library folder wins, as in gptme (skipped)
IGNORED = "ignored"  # a pattern or keyword of a loaded lesson is not used (invalid, too costly); the rest is used
CONFIG = "config"  # gptme.toml cannot be read, or names a folder that cannot be read: the library is incomplete
SKIPPED = "skipped"  # a path that looks like a lesson or a folder of them and is not read: a folder named *.md,
# a symbolic link to a folder (not followed, as in gptme)
GPTME = "gptme"  # a loaded lesson that gptme reads otherwise (no frontmatter, a file it cannot load): all of it used
ALIASED = "aliased"  # a lesson file already loaded under another id (a link, a hard link): loaded again, a second arm


class LessonError(UserError):
    """A lesson file that cannot be used; the message says why."""


class Lesson(Struct, frozen=True):
    id: str
    title: str
    category: str
    status: str
    description: str
    keywords: tuple[str, ...]
    patterns: tuple[str, ...]
    body: str = ""
    path: str = ""  # absolute file path, "" for lessons built in memory
    # match.session_categories: the kinds of work it is for (none: any); `select` leaves it out of the others
    session_categories: tuple[str, ...] = ()


class LessonProblem(Struct, frozen=True):
    path: str
    reason: str
    lesson_id: str | None = None  # the id the file would have (None for gptme.toml itself)
    kind: str = BROKEN

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"

    @property
    def broken(self) -> bool:
        """Whether this is a lesson file that could not be loaded (the other kinds are not)."""
        return self.kind == BROKEN


class Library(Struct, frozen=True):
    lessons: tuple[Lesson, ...]
    problems: tuple[LessonProblem, ...] = ()
    roots: tuple[str, ...] = ()

    def by_id(self) -> dict[str, Lesson]:
        return {lesson.id: lesson for lesson in self.lessons}

    def get(self, lesson_id: str) -> Lesson | None:
        return self.by_id().get(normalize_id(lesson_id))

    def config_problem(self) -> LessonProblem | None:
        """The first problem with gptme.toml's library (unreadable, or a folder it names that is
        missing or not allowed): the library is then not the one configured."""
        return next((p for p in self.problems if p.kind == CONFIG), None)


def category_of(lesson_id: str) -> str:
    parts = PurePosixPath(lesson_id).parts
    return parts[0] if len(parts) > 1 else ""


def _title(body: str, fallback: str) -> str:
    in_fence = False
    for line in body.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            in_fence = not in_fence
        elif not in_fence and stripped.startswith("# "):
            return stripped[2:].strip()
    return fallback


def parse_lesson(text: str, lesson_id: str, path: str = "") -> Lesson:
    """Parse one lesson's text. Pure: raises LessonError with the reason when it cannot."""
    return parse_lesson_checked(text, lesson_id, path)[0]


def parse_lesson_checked(text: str, lesson_id: str, path: str = "") -> tuple[Lesson, list[str]]:
    """`parse_lesson`, with what of the frontmatter is ignored (keyword entries that are not text), one line each."""
    import frontmatter  # python-frontmatter; imported here to keep CLI start-up light
    import yaml
    from frontmatter.default_handlers import YAMLHandler

    if "\x00" in text:
        raise LessonError("file contains NUL bytes")
    original, text = text, text.lstrip("\ufeff")
    _refuse_cr_only(text)
    handler = frontmatter.detect_format(text.strip(), frontmatter.handlers)
    meta: Any = {}
    body = text
    raw_meta = None
    if handler is not None:
        try:
            raw_meta, body = handler.split(text.strip())
        except ValueError:
            raw_meta, body = None, text  # no closing delimiter: no frontmatter at all
        try:
            if raw_meta is not None:
                if isinstance(handler, YAMLHandler):
                    _refuse_aliases(raw_meta)
                meta = handler.load(raw_meta)
        except LessonError:
            raise
        except yaml.YAMLError as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise LessonError(f"invalid YAML frontmatter: {first}") from None
        except ValueError as exc:  # read, but a value could not be built: 2026-02-30, a 5,000-digit integer
            first = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            raise LessonError(f"invalid frontmatter value: {first}; no setting of the file is used") from None
        except (TypeError, AttributeError, RecursionError) as exc:
            raise LessonError(f"invalid frontmatter: {type(exc).__name__}") from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise LessonError(f"frontmatter must be a mapping, got {type(meta).__name__}")
    match = meta.get("match")
    if match is None:
        match = {}
    if not isinstance(match, dict):
        raise LessonError(f"'match' must be a mapping, got {type(match).__name__}")
    raw_keywords = match.get("keywords")
    top_level = raw_keywords is None
    if top_level:
        raw_keywords = meta.get("keywords")
    ignored: list[str] = []
    try:
        keywords = str_list(raw_keywords, "keywords", ignored, top_level)
        patterns = str_list(match.get("patterns"), "patterns", ignored)
        session_categories = category_list(match.get("session_categories"), ignored)
    except ShapeError as exc:
        raise LessonError(str(exc)) from None
    note = frontmatter_note(original, raw_meta, isinstance(handler, YAMLHandler))
    ignored += ([note] if note else []) + meta_notes(meta, meta.get("match"))
    status = meta.get("status", "active")
    if status is None:
        status = "active"
    if not isinstance(status, str) or status not in STATUSES:
        raise LessonError(f"unknown status {shown_value(status)} (expected one of {', '.join(STATUSES)})")
    description = meta.get("description") or ""
    if not isinstance(description, str):
        description = str(description)
    body = body.strip()
    fallback = PurePosixPath(lesson_id).stem.replace("-", " ")
    lesson = Lesson(
        id=lesson_id,
        title=_title(body, fallback),
        category=category_of(lesson_id),
        status=status,
        description=description.strip(),
        keywords=keywords,
        patterns=patterns,
        body=body,
        path=path,
        session_categories=session_categories,
    )
    return lesson, ignored


def _refuse_cr_only(text: str) -> None:
    """A file whose lines end in a bare CR (classic Mac) has no line that is only `---` to gptme or
    to the frontmatter parser: it would load with no settings at all, so it is refused with why."""
    if "\r" in text and ("\n" not in text or text.startswith("---\r") and not text.startswith("---\r\n")):
        raise LessonError("CR-only line endings (classic Mac): the frontmatter cannot be read; convert them to LF")


def _refuse_aliases(raw_meta: str) -> None:
    """YAML aliases expand: nine nested ones make a billion nodes ("billion laughs") and hang
    every command, since every command loads the library. Frontmatter needs none: refuse them
    while only parsing events, before anything is built."""
    if "*" not in raw_meta:  # an alias is written `*name`: without a star there is none to look for
        return
    import yaml
    from frontmatter.default_handlers import SafeLoader

    for event in yaml.parse(raw_meta, Loader=SafeLoader):
        if isinstance(event, yaml.AliasEvent):
            raise LessonError(f"YAML alias *{event.anchor} in the frontmatter (aliases are not allowed)")


OUTSIDE_HINT = "set LESSON_CREDIT_ALLOW_OUTSIDE=1 (or pass --allow-outside) to read it"


def library_roots_checked(workspace: Path, allow_outside: bool = False) -> tuple[list[Path], list[LessonProblem]]:
    """(library folders, problems), searched as gptme's lesson index does: the workspace's
    `lessons/` always, then gptme.toml's `[lessons] dirs` in order (relative to the workspace); a
    lesson id found in an earlier folder wins. gptme's user and global folders are not read: a
    workspace's numbers depend on the workspace only. A folder that resolves outside the workspace
    is skipped and reported unless `allow_outside`: `dirs = ["/"]` would otherwise walk the whole
    filesystem. LessonError when gptme.toml cannot be read (`load_library` still loads `lessons/`)."""
    workspace = Path(workspace).resolve()
    roots = [workspace / "lessons"]
    config = workspace / "gptme.toml"
    if not config.exists():
        return roots, []
    import tomllib  # here: most workspaces have no gptme.toml

    from lesson_credit.core.base import safe_toml

    try:
        data = safe_toml.loads(read_regular(config, SETTINGS_MAX_BYTES).decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise LessonError(f"{config}: not valid TOML ({exc})") from None
    except UnsafeFile as exc:  # a directory, FIFO or device, or past the cap: its message names the file
        raise LessonError(str(exc)) from None
    except OSError as exc:
        raise LessonError(f"{config}: cannot read: {exc.strerror or exc}") from None
    dirs = data.get("lessons", {}).get("dirs") if isinstance(data.get("lessons"), dict) else None
    if not dirs:
        return roots, []
    if not isinstance(dirs, list) or not all(isinstance(d, str) for d in dirs):
        raise LessonError(f"{config}: [lessons] dirs must be a list of paths")
    problems: list[LessonProblem] = []
    for d in dirs:
        try:
            root = resolve_path(workspace / d)
        except UnsafeFile:
            reason = f"[lessons] dir {d!r} is a symbolic link loop; its lessons are not loaded"
            problems.append(LessonProblem(str(config), reason, kind=CONFIG))
            continue
        if root in roots:
            continue  # `dirs = ["lessons"]`: the folder is searched once
        if not (allow_outside or root.is_relative_to(workspace)):
            reason = f"[lessons] dir {d!r} is outside the workspace; not read ({OUTSIDE_HINT})"
            problems.append(LessonProblem(str(config), reason, kind=CONFIG))
        elif not root.is_dir():
            what = "is not a folder" if root.exists() else "does not exist"
            reason = f"[lessons] dir {d!r} {what} ({root}); its lessons are not loaded"
            problems.append(LessonProblem(str(config), reason, kind=CONFIG))
        else:
            roots.append(root)
    return roots, problems


# Files in a library folder that are not lessons, as gptme's lesson index skips them: its READMEs,
# templates and to-do lists (gptme's own test is looser, any name with "template" in it; this
# is the conservative part of it, so a lesson about templates is not lost).
NOT_LESSONS = frozenset({"TEMPLATE.md", "template.md", "todo.md", "TODO.md"})


_LINE_BREAK = re.compile("[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")  # where str.splitlines breaks a line
LINE_BREAK_NAME = "a path with a line break is no lesson id (an id is one line wherever ids are listed): not read"


def is_lesson_file(name: str) -> bool:
    """Whether a file name in a library folder is a lesson: `*.md`, but not README.md (any case),
    TEMPLATE.md, template.md, todo.md, TODO.md, nor a name whose stem starts with `_` or ends
    with `-template`."""
    if not name.endswith(".md") or name.lower() == "readme.md" or name in NOT_LESSONS:
        return False
    stem = name[: -len(".md")]
    return not (stem.startswith("_") or stem.endswith("-template"))


def _lesson_files(
    root: Path, skipped: list[LessonProblem] | None = None, roots: Sequence[Path] = ()
) -> Iterable[tuple[str, str]]:
    """(path, lesson id) of each lesson file under `root`, in order. Strings, not Path objects: a
    library of 30,000 lessons spent most of its cached reload making and relating Paths. Folders
    that are not read or look like lesson files go into `skipped`, when given (a link to a folder
    in one of `roots`, the library's folders, is not: its lessons are read there)."""
    top = os.fspath(root)
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        if skipped is not None:
            skipped.extend(_skipped_folders(dirpath, dirnames, roots))
        folder = os.path.relpath(dirpath, top).replace(os.sep, "/")
        prefix = "" if folder == "." else folder + "/"
        for name in sorted(filenames):
            if is_lesson_file(name) and _LINE_BREAK.search(prefix + name):  # (other control codes are shown escaped)
                if skipped is not None:
                    shown = _LINE_BREAK.sub(lambda m: f"\\x{ord(m.group()):02x}", os.path.join(dirpath, name))
                    skipped.append(LessonProblem(shown, LINE_BREAK_NAME, kind=SKIPPED))
            elif is_lesson_file(name):
                yield os.path.join(dirpath, name), prefix + name
            elif skipped is not None and (gone := _dangling_folder(os.path.join(dirpath, name))) is not None:
                skipped.append(gone)


def _dangling_folder(path: str) -> LessonProblem | None:
    """A link to nothing among a folder's files that is no lesson's name: a linked folder not there (a
    shared library's submodule not checked out), whose lessons are missing without a word."""
    if not os.path.islink(path) or os.path.exists(path):
        return None
    try:
        target = os.readlink(path)
    except OSError:
        target = "?"
    return LessonProblem(path, f"a symbolic link to {target}, which does not exist; not read", kind=SKIPPED)


LINKED_FOLDER = (
    "a symbolic link to a folder ({target}); linked folders are not read (nor by gptme): "
    "name the folder in gptme.toml [lessons] dirs to read it"
)


def _skipped_folders(dirpath: str, dirnames: list[str], roots: Sequence[Path] = ()) -> Iterable[LessonProblem]:
    """What a walk of one folder passes over without a word: a link to a folder (os.walk lists it and
    does not enter it; one lstat per folder, none per file) unless it leads into one of `roots`, whose
    lessons are read, and a folder named like a lesson file."""
    for name in dirnames:
        path = os.path.join(dirpath, name)
        if os.path.islink(path):
            if roots and any(Path(os.path.realpath(path)).is_relative_to(root) for root in roots):
                continue  # (gptme.toml names the folder, or it is in the library already)
            try:
                target = os.readlink(path)
            except OSError:
                target = "?"
            yield LessonProblem(path, LINKED_FOLDER.format(target=target), kind=SKIPPED)
        elif is_lesson_file(name):
            yield LessonProblem(path, "a folder, not a lesson file (the lessons inside it are read)", kind=SKIPPED)


def lesson_file_ids(workspace: Path, allow_outside: bool = False) -> list[str]:
    """The ids of the library's lesson files, none read (what a screen lists before `load_library`
    has run); a file that will not load is listed too, as its id."""
    roots, _ = _roots(workspace, allow_outside)
    return sorted({lesson_id for root in roots if root.is_dir() for _, lesson_id in _lesson_files(root)})


LESSON_CACHE_VERSION = 11  # what its reasons say: 11 patterns past a lesson's first 16 ignored; 10 keywords over
# 100 characters; 9 wildcards past a lesson's first 16; 8 frontmatter text cut to 40 characters, session_categories
# as a mapping or set; 7 match.session_categories; 6 what gptme reads otherwise; 5 keyword entries not text; 4 a
# file's ctime and digest; 3 patterns too big, wildcards of too many parts; 2 partial frontmatter, CR-only files
LESSON_CACHE_MAGIC = b"lesson-credit lessons 8\n"
RACY_NS = 2_000_000_000  # a file changed this close to the cache's write is checked by content (coarse clocks)
LESSON_CACHE_MAX_BYTES = 256 * 1024 * 1024  # a bigger lesson cache is refused by its size, never read


def _read_lesson_file(file: Path, lesson_id: str, raw: bytes | None = None) -> tuple[Lesson | None, list[str]]:
    """(lesson or None, problem reasons) for one file (`raw`: its bytes, if already read): the uncached path."""
    try:
        raw = read_regular(file, LESSON_MAX_BYTES) if raw is None else raw
        try:
            text = raw.decode("utf-8")  # a byte order mark kept: gptme reads no frontmatter after one
        except UnicodeDecodeError as exc:
            raise LessonError(f"not valid UTF-8 (byte {exc.start})") from None
        lesson, reasons = parse_lesson_checked(text, lesson_id, str(file))
    except LessonError as exc:
        return None, [str(exc)]
    except UnsafeFile as exc:
        return None, [str(exc).removeprefix(f"{file}: ")]
    except FileNotFoundError:
        return None, [_dangling(file)]
    except OSError as exc:
        return None, [f"cannot read: {exc.strerror}"]
    from lesson_credit.core.library.keyword_limits import keyword_problem, past_cap_reason
    from lesson_credit.core.library.salience import wildcards_beyond  # (not before the dashboard's first frame)

    reasons += [why for keyword in lesson.keywords if (why := keyword_problem(keyword.strip()))]
    if beyond := wildcards_beyond(lesson.keywords):
        reasons.append(past_cap_reason(beyond))
    for pattern in lesson.patterns[:PATTERN_MAX_PER_LESSON]:
        try:
            compile_pattern(pattern)
        except PatternError as exc:
            reasons.append(f"{exc}; pattern ignored")
    return lesson, reasons + ([why] if (why := patterns_past_cap(lesson.patterns)) else [])


def _kind(broken: bool, reason: str) -> str:
    """The kind of problem a reason `_read_lesson_file` gave is: the file's (not loaded), a note on how
    gptme reads it otherwise, or a part of it not used."""
    return BROKEN if broken else GPTME if reason.startswith(NOTE) else IGNORED


def _dangling(file: Path) -> str:
    """Why a file the folder lists cannot be opened: a link to nothing (a `ls` shows it), or gone meanwhile."""
    try:
        return f"a symbolic link to {os.readlink(file)}, which does not exist; not read"
    except OSError:
        return "cannot read: No such file or directory"


def _load_cache(path: Path | None) -> tuple[dict[str, Any], int]:
    """(the cached files, when the cache was written: its mtime in ns)."""
    if path is None:
        return {}, 0
    import msgspec

    from lesson_credit.core.base.files import read_cache
    from lesson_credit.core.base.safe_read import UnsafeFile
    from lesson_credit.core.base.sealed import unseal

    try:
        written_ns = os.stat(path).st_mtime_ns  # before the read: a cache replaced meanwhile only looks older
        raw = read_cache(path, LESSON_CACHE_MAX_BYTES)
        data = None if raw is None else msgspec.msgpack.decode(unseal(LESSON_CACHE_MAGIC, raw))
    except (OSError, UnsafeFile, ValueError, msgspec.DecodeError):
        return {}, 0  # missing, unreadable or damaged: no cache, every file is parsed again
    if not isinstance(data, dict) or data.get("version") != LESSON_CACHE_VERSION:
        return {}, 0
    files = data.get("files")
    return (files, written_ns) if isinstance(files, dict) else ({}, 0)


def _digest(raw: bytes) -> str:
    import xxhash

    return xxhash.xxh3_64_hexdigest(raw)


def _cached(entry: Any, stamp: list[int], written_ns: int, key: str) -> tuple[Any, list[str], str, bool] | None:
    """A cache entry's (fields, reasons, digest, racy) when it still describes the file: the same
    stat (mtime, ctime, size, inode, device: an edit that restores mtime and size still moves ctime)
    and, for a file changed within RACY_NS of the cache's write (racy: a coarse clock may not have
    ticked since), the same bytes."""
    if not (isinstance(entry, list) and len(entry) == 4 and entry[0] == stamp):
        return None
    racy = stamp[1] >= written_ns - RACY_NS
    if racy:
        try:
            if _digest(read_regular(key, LESSON_MAX_BYTES)) != entry[3]:
                return None
        except (OSError, UnsafeFile):
            return None
    return entry[1], entry[2], entry[3], racy


def _save_cache(path: Path, files: dict[str, Any]) -> None:
    import msgspec

    from lesson_credit.core.base.files import write_cache
    from lesson_credit.core.base.sealed import seal

    payload = msgspec.msgpack.encode({"version": LESSON_CACHE_VERSION, "files": files})
    write_cache(path, seal(LESSON_CACHE_MAGIC, payload), sync=True)  # set aside when it cannot be written


def _roots(workspace: Path, allow_outside: bool) -> tuple[list[Path], list[LessonProblem]]:
    """`library_roots_checked`, with a gptme.toml that cannot be read as a problem: `lessons/` is
    still the library's first folder."""
    try:
        return library_roots_checked(workspace, allow_outside)
    except LessonError as exc:
        toml = str(workspace.resolve() / "gptme.toml")
        problem = LessonProblem(toml, str(exc).removeprefix(f"{toml}: "), kind=CONFIG)
        return [workspace.resolve() / "lessons"], [problem]


def _fields_of(lesson: Lesson) -> list[Any]:
    """A lesson as the cache keeps it (`_from_fields` reads it back)."""
    return [
        lesson.id,
        lesson.title,
        lesson.category,
        lesson.status,
        lesson.description,
        list(lesson.keywords),
        list(lesson.patterns),
        lesson.body,
        list(lesson.session_categories),
    ]


def _from_fields(fields: list[Any], path: str) -> Lesson:
    return Lesson(
        id=fields[0],
        title=fields[1],
        category=fields[2],
        status=fields[3],
        description=fields[4],
        keywords=tuple(fields[5]),
        patterns=tuple(fields[6]),
        body=fields[7],
        path=path,
        session_categories=tuple(fields[8]),
    )


def _second_path(
    loaded: dict[tuple[int, int], tuple[str, str]], file: tuple[int, int], key: str, lesson_id: str
) -> LessonProblem | None:
    """The problem of a lesson file loaded already under another id (a symbolic or hard link): it is
    still loaded, a second arm, since a log may hold both ids (gptme reads such a file once)."""
    first, first_id = loaded.setdefault(file, (key, lesson_id))
    if first_id == lesson_id:
        return None
    reason = f"the same file as {first} (id {first_id!r}): one lesson counted as two arms"
    return LessonProblem(key, reason, lesson_id, kind=ALIASED)


def load_library(workspace: Path | str, cache_path: Path | None = None, allow_outside: bool = False) -> Library:
    """Load every lesson under the workspace's library roots; broken files become problems.

    With `cache_path`, parsed lessons are kept there keyed by file and validated by their stat
    (`_cached`): a library of thousands reloads without parsing YAML again. Library folders outside
    the workspace are read only with `allow_outside`.
    """
    roots, problems = _roots(Path(workspace), allow_outside)
    cached, written_ns = _load_cache(cache_path)
    fresh: dict[str, Any] = {}
    changed = False
    lessons: dict[str, Lesson] = {}
    seen: set[str] = set()
    loaded: dict[tuple[int, int], tuple[str, str]] = {}  # (device, inode) -> (path, id) of a lesson loaded
    real_roots = [Path(os.path.realpath(root)) for root in roots]  # (where a linked folder leads is real)
    for root in roots:
        if not root.is_dir():
            continue
        for key, lesson_id in _lesson_files(root, problems, real_roots):
            if key in seen:  # a [lessons] dir inside another: the same file, found once
                continue
            seen.add(key)
            try:
                st = os.stat(key)
                stamp = [st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_dev]
            except OSError:
                stamp = None
            entry = cached.get(key)
            hit = None if stamp is None else _cached(entry, stamp, written_ns, key)
            lesson: Lesson | None
            digest = None if hit is None else hit[2]
            if hit is not None:
                fields, reasons = hit[0], hit[1]
                # a racy entry is checked by content until a cache written well after the change holds it
                changed = changed or (hit[3] and stamp is not None and time.time_ns() - RACY_NS > stamp[1])
                lesson = None if fields is None else _from_fields(fields, key)
                lesson = lesson if lesson is None or lesson.id == lesson_id else None
                if lesson is None and fields is not None:
                    lesson, reasons = _read_lesson_file(Path(key), lesson_id)
                    changed = True
                else:
                    fresh[key] = entry  # as it was: the same stat, fields, reasons and digest
            else:
                try:
                    raw: bytes | None = read_regular(key, LESSON_MAX_BYTES)
                except (OSError, UnsafeFile):
                    raw = None  # (reported by the read below)
                digest = None if raw is None else _digest(raw)
                lesson, reasons = _read_lesson_file(Path(key), lesson_id, raw)
                if raw is None and isinstance(entry, list) and entry[1:] == [None, reasons, None]:
                    fresh[key] = entry  # unreadable as before (its stat may change at every look: /proc/self/mem)
                else:
                    changed = True
            if stamp is not None and key not in fresh:
                fresh[key] = [stamp, None if lesson is None else _fields_of(lesson), reasons, digest]
            if reasons:
                problems.extend(
                    LessonProblem(key, reason, lesson_id, kind=_kind(lesson is None, reason)) for reason in reasons
                )
            if lesson is None:
                continue
            if lesson_id in lessons:
                winner = lessons[lesson_id].path
                reason = f"id {lesson_id!r} is also {winner}, which wins (lessons/, then [lessons] dirs in order)"
                problems.append(LessonProblem(key, reason, lesson_id, kind=OVERRIDDEN))
                continue
            if stamp is not None and (twin := _second_path(loaded, (stamp[4], stamp[3]), key, lesson_id)):
                problems.append(twin)
            lessons[lesson_id] = lesson
    if cache_path is not None and (changed or set(fresh) != set(cached)):
        _save_cache(cache_path, fresh)
    return Library(tuple(lessons.values()), tuple(problems), tuple(str(r) for r in roots))
