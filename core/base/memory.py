"""Room left under an address-space limit (`ulimit -v`, RLIMIT_AS), and scipy.linalg imported only
when it fits: its first import starts scipy's own OpenBLAS, whose allocation of its buffer (32 MB and
a new malloc arena) is retried forever when it fails. Measured on the demo: `loo` under
`ulimit -v 260000` (100 MB left at that import) hung; under 270000 a library failed to map (an
ImportError); under 280000 (120 MB left) it ran."""

from __future__ import annotations

import os
import resource
import sys
from types import ModuleType

LINALG_ROOM_BYTES = 128 << 20  # the address space scipy.linalg's first import needs left


def address_space_left() -> int | None:
    """Bytes the process may still map under its RLIMIT_AS; None when unlimited (or not known)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            mapped = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None
    return soft - mapped


def scipy_linalg(what: str) -> ModuleType:
    """scipy.linalg for `what` (named in the message); MemoryError when an address-space limit leaves
    less than LINALG_ROOM_BYTES for its first import (which would hang, see the module docstring)."""
    if "scipy.linalg" not in sys.modules:
        left = address_space_left()
        if left is not None and left < LINALG_ROOM_BYTES:
            raise MemoryError(
                f"{what} needs {LINALG_ROOM_BYTES >> 20} MB of address space left under the limit (`ulimit -v`)"
            )
    import importlib

    return importlib.import_module("scipy.linalg")
