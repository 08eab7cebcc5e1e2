"""What a lesson-credit process sets before it imports the engine (and numpy with it)."""

from __future__ import annotations

import os

# numpy's OpenBLAS starts one thread per CPU when numpy is imported, and those threads spin before they
# sleep: on the 2-CPU machine `lesson-credit status` on the demo took 0.47 s of CPU, 0.27 s with one
# thread, and an agent's hook pays that on every command. The engine's linear algebra is small (the
# joint fit's 1,000-lesson eigen-decomposition: 458 ms with the threads, 428 ms without, `python -m
# bench.run --only analysis`). A value the user set wins.


def limit_blas_threads() -> None:
    """One BLAS thread unless the environment says otherwise; only takes effect before numpy is imported."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
