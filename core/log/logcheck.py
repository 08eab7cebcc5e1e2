"""What a reader knows of the log bytes it has read, and whether they are still there.

A long-lived reader (the dashboard, a Workspace kept across commands) reads the log
incrementally: it keeps an xxh3-64 hash of every byte it has consumed. Before trusting that
prefix again it hashes it anew, so an edit anywhere in it (a same-length rewrite, a
`git checkout`, a copy over the file) makes it start over, never print stale numbers.

A big log is hashed again only when its stat changed since the last check (a poll of an
idle log then costs a `stat`); a small one (under ALWAYS_VERIFY_BYTES) every time, since two
same-length writes within one tick of the file system's clock leave the stat unchanged.
"""

from __future__ import annotations

import xxhash

from lesson_credit.core.log.store import EventLog

ALWAYS_VERIFY_BYTES = 16 * 1024 * 1024

Signature = tuple[int, int, int, int, int]


class PrefixCheck:
    def __init__(self, log: EventLog) -> None:
        self.log = log
        self.hasher = xxhash.xxh3_64()  # of the bytes consumed so far, [0, end)
        self._seen: Signature | None = None  # the log's stat when they were last known intact
        self._trusted = False

    def signature(self) -> Signature | None:
        st = self.log.stat()  # StoreError for a FIFO, a device, a directory
        if st is None:
            return None
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def reset(self) -> None:
        self.hasher = xxhash.xxh3_64()
        self._seen = None
        self._trusted = False

    def adopt(self, hasher: xxhash.xxh3_64) -> None:
        """Continue from a hasher already verified against the log (a loaded cache's)."""
        self.hasher = hasher

    def trust_once(self) -> None:
        """The next check passes without hashing: the caller appended under the writers' lock
        and nobody else (no writer of ours) touched the prefix meanwhile."""
        self._trusted = True

    def intact(self, end: int, signature: Signature | None) -> bool:
        """Whether the log's first `end` bytes are still those that were hashed, and still end its lines."""
        trusted, self._trusted = self._trusted, False
        if end <= 0 or trusted:
            return True
        if self.log.continued(end):  # the same bytes, but the last of them now begin a longer line
            return False
        if signature is not None and signature == self._seen and end > ALWAYS_VERIFY_BYTES:
            return True
        again = self.log.hash_prefix(end)
        return again is not None and again.intdigest() == self.hasher.intdigest()

    def checked(self, signature: Signature | None) -> None:
        """The prefix was found intact with the log at this stat (taken before reading on)."""
        self._seen = signature
        self._trusted = False
