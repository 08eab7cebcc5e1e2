"""A warm `status` from a verified summary: what the last full `status` printed, shown again only while
nothing it was derived from has changed (docs/format.md §10).

A full `status` on the workspace's log file that printed no warning writes `.cache/status-summary` beside
the log: its output and what vouches for it. The log is vouched for as its seal does (core/log/logcheck.py:
the stat the run read it at, the seal's own stat of it, the log's last change in an earlier tick than the
seal). Every other input is vouched for by its stat (mtime, ctime, size, inode, device): config.toml,
gptme.toml, the gptme-sessions records file (with the rotated files beside it and their folder), the grading
weights (which score its records' grades), bandit-state.json, and every file and folder under the library
folders (a folder's stat moves when an entry is added, removed or renamed in it); one changed within RACY_NS
of the run (a coarse clock may not have ticked since) by its content digest too. The records file is the one
config.toml names now: a `~` in its `[records] path` follows $HOME, which no stat shows. A later `status` with
the same options and environment, run by the same code (the stat of every module), prints the summary when all
of that holds, else runs in full.
The summary is derived: deleting it changes no output, only the time.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lesson_credit.cli.render import output_width
from lesson_credit.core.base.errors import UserError
from lesson_credit.core.base.safe_read import UnsafeFile, read_regular

if TYPE_CHECKING:
    from lesson_credit.core.workspace import Workspace

STATE_DIR = Path("state") / "lesson-thompson"  # core.workspace's (which imports numpy: not on this path)
SUMMARY_NAME = "status-summary"
SUMMARY_MAGIC = b"lesson-credit status-summary 1\n"
SUMMARY_MAX_BYTES = 64 * 1024 * 1024
RACY_NS = 2_000_000_000  # as the lesson cache's (core/library/lessons.py): a coarse clock's tick, with margin
# what else decides what `status` reads: the store, where gptme-sessions' records are, what may be read
ENVIRONMENT = ("LESSON_CREDIT_STORE", "GPTME_SESSIONS_DIR", "LESSON_CREDIT_ALLOW_OUTSIDE")
Stamp = list[int] | None


def _stamp(path: str) -> Stamp:
    """The stat that vouches for a file or folder; None when it does not exist."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:  # a symlink loop (ELOOP), a file it may not stat: the link's own stat vouches for it
        try:
            st = os.lstat(path)
        except OSError:
            return None
    return [st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_dev]


def _digest(path: str) -> str:
    """A file's content digest, or a folder's names (what a same-tick change could hide behind its stat)."""
    import xxhash

    if os.path.isdir(path):
        return xxhash.xxh3_64_hexdigest("\n".join(sorted(os.listdir(path))).encode("utf-8", "surrogateescape"))
    return xxhash.xxh3_64_hexdigest(read_regular(path, SUMMARY_MAX_BYTES))


def _code() -> str:
    """A digest of the stat of every module of the engine and the CLI: a summary printed by other code
    (an upgrade, another checkout, an edit) is not reused. Stats, not bytes: ~200 files in about a ms."""
    import xxhash

    from lesson_credit import cli, core

    digest = xxhash.xxh3_64()
    for package in (Path(cli.__file__).resolve().parent, Path(core.__file__).resolve().parent):
        for folder, dirs, files in os.walk(package):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(f for f in files if f.endswith(".py")):
                st = os.stat(os.path.join(folder, name))
                digest.update(f"{folder}/{name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode(errors="surrogateescape"))
    return digest.hexdigest()


def _key(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    return {
        "code": _code(),
        "root": str(root),
        "options": [bool(args.json), args.sort, bool(args.all)],
        "width": None if args.json else output_width(),  # a table fitted to a terminal is kept for that width
        "environment": [os.environ.get(name) for name in ENVIRONMENT],
    }


def _usable(args: argparse.Namespace) -> bool:
    """Whether this run may use (and write) a summary: the workspace's log file, every session, the real clock."""
    file = args.store is None and not os.environ.get(ENVIRONMENT[0])
    return file and getattr(args, "written_by", None) is None and args.clock is None


def _log_vouched(log_path: Path, signature: list[int]) -> bool:
    from lesson_credit.core.log.logcheck import Seal, signature_of
    from lesson_credit.core.log.store import EventLog

    log = EventLog(log_path)
    seal = Seal.read(log)
    now = signature_of(log)
    return seal is not None and now is not None and list(now) == signature and seal.vouches(now)


def _same_records_file(root: Path, records: list[str | None]) -> bool:
    """Whether config.toml's `[records] path` as the run read it (config.toml's stat vouches that it still
    says so) names the records file that run read: "~" follows $HOME, which no stat shows."""
    from lesson_credit.core.sessions.records_path import records_path

    configured, read = records
    return str(records_path(root, configured)) == read


def cached_output(args: argparse.Namespace) -> str | None:
    """What the last full `status` printed, when everything it was derived from is as it was; else None."""
    if not _usable(args):
        return None
    root = Path(args.workspace).resolve()
    path = root / STATE_DIR / ".cache" / SUMMARY_NAME
    from lesson_credit.core.base.files import read_cache
    from lesson_credit.core.base.sealed import unseal

    try:
        raw = read_cache(path, SUMMARY_MAX_BYTES)  # never through a symlink; one in its place is set aside
        if raw is None:
            return None
        summary = json.loads(bytes(unseal(SUMMARY_MAGIC, raw)))
        if summary["key"] != _key(args, root):
            return None
        if not _log_vouched(root / STATE_DIR / "sessions.jsonl", summary["log"]):
            return None
        if not _same_records_file(root, summary["records"]):
            return None
        for name, stamp, digest in summary["inputs"]:
            if _stamp(name) != stamp or (digest is not None and _digest(name) != digest):
                return None
        return str(summary["output"])
    except (OSError, UserError, ValueError, KeyError, TypeError):  # (UnsafeFile, StoreError: UserErrors)
        return None  # missing, unreadable or damaged, or a log that is no file: the full run says what it is


def inputs(ws: Workspace) -> list[str]:
    """Every file and folder other than the log that `status` derives its output from ([] when gptme.toml
    cannot be read: that run warns, and is not kept)."""
    from lesson_credit.core.library.lessons import LessonError, library_roots_checked
    from lesson_credit.core.sessions.record_file import WEIGHTS_FILE
    from lesson_credit.core.sessions.records_path import RECORDS_FILE, rotated_names

    records, weights = ws.session_records.path, ws.root / WEIGHTS_FILE  # the weights score records' grades
    names = [str(ws.config_path), str(ws.root / "gptme.toml"), str(records), str(weights), str(ws.state_path)]
    rotated, _ = rotated_names(records)  # the rotated records files beside it, and their folder (one added, one gone)
    if records.name == RECORDS_FILE:
        names += [str(records.parent)] + [str(records.parent / name) for name in rotated]
    try:
        roots, _ = library_roots_checked(ws.root, ws.allow_outside_library)
    except LessonError:
        return []
    for root in roots:
        names.append(str(root))
        for folder, dirs, files in os.walk(root):
            dirs.sort()
            names += [os.path.join(folder, name) for name in sorted(dirs + files)]
    return names


class Recorder:
    """Takes the inputs' stats before a full run reads them; `save` writes the summary when they held."""

    def __init__(self, args: argparse.Namespace, ws: Workspace) -> None:
        from lesson_credit.core.log.logcheck import signature_of
        from lesson_credit.core.log.store import EventLog

        self.args, self.ws = args, ws
        self.file = ws.log if isinstance(ws.log, EventLog) and ws.log.path == ws.state_dir / "sessions.jsonl" else None
        self.started_ns = time.time_ns()
        self.names = inputs(ws) if self.file is not None and _usable(args) else []
        self.stamps = [_stamp(name) for name in self.names]
        self.log = signature_of(self.file) if self.names and self.file is not None else None

    def save(self, output: str) -> None:
        """Write the summary of a run that printed `output` and no warning (a run that warned is not kept)."""
        from lesson_credit.core.base.files import write_cache
        from lesson_credit.core.base.sealed import seal
        from lesson_credit.core.log.logcheck import signature_of

        if not self.names or self.file is None or self.log is None or signature_of(self.file) != self.log:
            return
        if not _log_vouched(self.file.path, list(self.log)):
            return  # no seal (a read-only disk, a log another program appended to): no later run could use it
        if [_stamp(name) for name in self.names] != self.stamps:
            return  # changed while the run read it
        racy = self.started_ns - RACY_NS
        try:
            rows = [
                [name, stamp, _digest(name) if stamp is not None and stamp[1] >= racy else None]
                for name, stamp in zip(self.names, self.stamps, strict=True)
            ]
        except (OSError, UnsafeFile):
            return
        root = Path(self.args.workspace).resolve()
        records = [self.ws.config.records.path, str(self.ws.session_records.path)]
        payload = {
            "key": _key(self.args, root),
            "log": list(self.log),
            "records": records,
            "inputs": rows,
            "output": output,
        }
        data = json.dumps(payload, ensure_ascii=True).encode()
        write_cache(self.ws.state_dir / ".cache" / SUMMARY_NAME, seal(SUMMARY_MAGIC, data))
