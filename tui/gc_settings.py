"""The dashboard process's garbage-collector settings (imports nothing: the CLI calls `start` first).

A Textual frame allocates tens of thousands of short-lived objects (segments, styles, strips,
messages). With CPython's default thresholds (700, 10, 10) that is a young collection every 700
allocations and, every hundred of those, a full one that walks every object the imports created
(textual, rich, numpy, the engine: about half a million) although none of them is garbage.

* `start` (before the dashboard's imports): no collection until `freeze`, and then a young
  collection every 10,000 allocations. Imports make next to no garbage (modules, classes and
  functions live on), yet with the collector on, a dashboard's imports (textual, numpy, the engine)
  ran 10 young collections over their own objects: ~50 ms of the ~600 ms of CPU to the demo's first
  paint (2-core machine, load 10). Garbage in cycles waits longer, so more memory is held between
  collections (a test process running 51 dashboard tests: 139 MB peak with the defaults, 179 MB
  with this).
* `freeze` (once they are imported, before the app starts): what exists then moves to the
  permanent generation (`gc.freeze`), which later collections skip, and the collector runs again.

Measured on the 2-core machine: one dashboard test file run serially (tests/tui/test_tui_flows.py) took
41-42 s of CPU with the defaults and 36-37 s with these settings; to the demo's first paint, 4% fewer
instructions (valgrind). The suite runs with the same settings (tests/conftest.py).
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 10_000  # allocations between young collections (CPython's default: 700)
OLDER_THRESHOLDS = (10, 10)  # CPython's defaults for the two older generations


def start() -> None:
    """No collection while the dashboard is imported, young objects collected less often after:
    call before importing the dashboard, and `freeze` before the app starts."""
    gc.set_threshold(YOUNG_THRESHOLD, *OLDER_THRESHOLDS)
    gc.disable()


def freeze() -> None:
    """Keep everything allocated so far (the imported modules) out of later collections, and
    collect again from now on."""
    gc.freeze()
    gc.enable()
