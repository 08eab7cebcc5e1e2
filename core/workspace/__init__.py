"""The one service object the CLI and the dashboard use: a workspace's lessons, log and posteriors.

`Workspace(root)` opens one, choosing its event store as the CLI does (`--store` aside: the
`store` argument; else $LESSON_CREDIT_STORE, else config.toml's `[store] url`, else the JSONL
file). Its methods come in rooms, each a module that delegates to the code that does the work:

- `base`: the folder, settings, event store and the log as read so far (`lesson_credit.core.reader`);
- `reading`: tables, sessions, grades, explanations (`core.views`);
- `analysis`: the joint fit, effects, leave-one-out, P(top-k) (`core.analysis`, `core.attribution`);
- `state_file`: gptme's `bandit-state.json` after each write (`core.bandit.interop`);
- `gptme_files`: `export-gptme` (an export to another file logged) and `import-gptme`;
- `writing`: selections (`core.selection_draw`), sessions (`core.commands`), grades and undo
  (`core.grading`), priors and settings, each appended under the log's lock.
"""

from __future__ import annotations

from lesson_credit.core.workspace.base import STATE_DIR
from lesson_credit.core.workspace.writing import Writing

__all__ = ["STATE_DIR", "Workspace"]


class Workspace(Writing):
    """A workspace folder: lessons, the event log, settings. See docs/format.md §1."""
