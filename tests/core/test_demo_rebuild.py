"""The README promises that `scripts/make_demo.py` rebuilds the tracked demo `state/` byte for byte.

The README also opens the dashboard on that demo, where a grade changes state/: the rebuild is then
compared with the demo as committed (git's HEAD) as well as with the working copy, and either may match.
A generator changed without the demo rebuilt matches neither (the working copy's demo is then HEAD's);
a demo rebuilt and not yet committed matches the working copy.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _demo_files(state: Path) -> list[Path]:
    """The demo's files, without what any run leaves beside them (the parsed-log cache, lock files)."""
    return sorted(
        p.relative_to(state)
        for p in state.rglob("*")
        if p.is_file() and ".cache" not in p.relative_to(state).parts and p.suffix != ".lock"
    )


def _git(*args: str, stdin: bytes | None = None) -> str | None:
    """git's output in the repository, or None without git or outside a repository."""
    try:
        proc = subprocess.run(["git", *args], cwd=ROOT, input=stdin, capture_output=True, timeout=60)
    except OSError:
        return None
    return proc.stdout.decode() if proc.returncode == 0 else None


def _committed_blobs() -> dict[Path, str] | None:
    """state/'s files in HEAD (relative to state/) -> their blob ids; None when git cannot tell."""
    listing = _git("ls-tree", "-r", "-z", "HEAD", "--", "state")
    if not listing:
        return None
    blobs = {}
    for entry in listing.split("\0"):
        if entry:
            meta, path = entry.split("\t", 1)
            blobs[Path(path).relative_to("state")] = meta.split()[2]
    return blobs


def _blob_ids(root: Path, files: list[Path]) -> dict[Path, str] | None:
    """Each file's git blob id (its bytes as git would store them, without filters)."""
    paths = "".join(f"{root / rel}\n" for rel in files).encode()
    ids = _git("hash-object", "--no-filters", "--stdin-paths", stdin=paths)
    return None if ids is None else dict(zip(files, ids.split(), strict=True))


def _differing(rebuilt: Path, demo: Path) -> list[str]:
    """What differs between two demo state/ folders: files only in one, then files of other bytes."""
    ours, theirs = _demo_files(rebuilt), _demo_files(demo)
    only = [f"{rel} (only in one)" for rel in sorted(set(ours) ^ set(theirs))]
    return only + [
        str(rel) for rel in ours if rel in theirs and (rebuilt / rel).read_bytes() != (demo / rel).read_bytes()
    ]


def test_make_demo_rebuilds_the_tracked_state_byte_for_byte(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_demo.py"), "--out", str(out)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    rebuilt = out / "state"
    against_working_copy = _differing(rebuilt, ROOT / "state")
    if not against_working_copy:
        return
    committed = _committed_blobs()
    assert committed is not None, (
        f"the rebuild differs from state/ (no git to read the committed demo): {against_working_copy}"
    )
    ours = _blob_ids(rebuilt, _demo_files(rebuilt))
    assert ours is not None
    against_head = sorted({str(rel) for rel in set(ours) | set(committed) if ours.get(rel) != committed.get(rel)})
    assert against_head == [], f"the rebuild differs from state/ as committed and as it is: {against_working_copy}"


def test_a_demo_file_changed_is_found(tmp_path: Path) -> None:
    # the comparison that decides the test above, on two small folders: one file differs, one is extra
    (tmp_path / "a" / "x").mkdir(parents=True)
    (tmp_path / "b" / "x").mkdir(parents=True)
    for folder, log in (("a", "1\n"), ("b", "1\n2\n")):
        (tmp_path / folder / "x" / "log.jsonl").write_text(log)
        (tmp_path / folder / "same.md").write_text("same")
    (tmp_path / "a" / "extra.json").write_text("{}")
    (tmp_path / "a" / "x" / "run.lock").write_text("")  # left by a run: not the demo's
    assert _differing(tmp_path / "a", tmp_path / "b") == ["extra.json (only in one)", "x/log.jsonl"]
