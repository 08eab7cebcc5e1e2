"""Another process holding the log's writers' lock (filelock) while a test runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import TracebackType


class LockHolder:
    """`with LockHolder(lock) as holder:` another process holds `lock` until `holder.release()` or the
    end of the block (it has the lock once `__enter__` returns)."""

    def __init__(self, lock: Path) -> None:
        self.lock = lock
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> LockHolder:
        # (the lock is kept in a name: a FileLock dropped is released)
        code = "import filelock, sys; lock = filelock.FileLock(sys.argv[1]); lock.acquire(); "
        code += "print('held', flush=True); sys.stdin.read()"
        self._process = subprocess.Popen(
            [sys.executable, "-c", code, str(self.lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self._process.stdout is not None and self._process.stdout.readline() == "held\n"
        return self

    def release(self) -> None:
        if self._process is not None and self._process.stdin is not None and not self._process.stdin.closed:
            self._process.stdin.close()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.release()
        if self._process is not None:
            self._process.wait(timeout=60)
