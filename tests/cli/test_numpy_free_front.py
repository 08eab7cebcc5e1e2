"""What a `record` needs before it reads the log imports no numpy: the command line, the library and its salience,
the session event's checks and credit (core.commands), the state file's reading, the workspace's settings and
config.toml, the log's events, store and seal. numpy's import is a third of a `record`'s instructions
(docs/performance.md §7), so a `record` decided before its fold need not pay for it. The full `record` still
imports numpy, and first from `open_workspace` (cli/common.py): imported from deep inside the engine's imports, the
bodies of numpy._typing's modules ran at the end of a chunk of CPython's frame stack, which was mapped and unmapped
~1,500 times.

A fresh interpreter does each and says what it loaded (no timing: the machine may be busy).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli_run import process_env

FRONT = [
    "lesson_credit.cli.main",
    "lesson_credit.cli.common",
    "lesson_credit.cli.commands.writes",
    "lesson_credit.core.library.lessons",
    "lesson_credit.core.library.journals",
    "lesson_credit.core.library.salience",
    "lesson_credit.core.commands",
    "lesson_credit.core.bandit.state_reading",
    "lesson_credit.core.bandit.stamps",
    "lesson_credit.core.bandit.saving",
    "lesson_credit.core.model.settings",
    "lesson_credit.core.bandit.config",
    "lesson_credit.core.log.events",
    "lesson_credit.core.log.store",
    "lesson_credit.core.log.logcheck",
    "lesson_credit.core.base.files",
]

# imports FRONT, reads the workspace's library, state file and config.toml with them, says whether numpy is loaded
READ_FRONT = """
import importlib, json, sys
from pathlib import Path
for name in json.loads(sys.argv[2]):
    importlib.import_module(name)
from lesson_credit.core.bandit.config import load_config
from lesson_credit.core.bandit.state_reading import read_state
from lesson_credit.core.library.lessons import load_library
from lesson_credit.core.model import credit
root = Path(sys.argv[1])
state_dir = root / "state" / "lesson-thompson"
read = [
    sorted(load_library(root).by_id()),
    sorted(read_state(state_dir / "bandit-state.json")["arms"]),
    load_config(state_dir / "config.toml").credit.strategy,
    credit.check_reward(0.8),
]
print(json.dumps([read, "numpy" in sys.modules]))
"""

# runs a full `record`, noting where numpy was first imported from: the first frame past the import machinery
FULL_RECORD = """
import json, os, sys
first = []
class Watch:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy" and not first:
            frame = sys._getframe(1)
            while frame.f_code.co_filename.startswith("<frozen "):
                frame = frame.f_back
            first.append([os.path.basename(frame.f_code.co_filename), frame.f_code.co_name])
        return None
sys.meta_path.insert(0, Watch())
from lesson_credit.cli.main import main
code = main(sys.argv[1:])
print(json.dumps([code, first, "numpy" in sys.modules]))
"""


def run(script: str, *argv: str) -> list[object]:
    proc = subprocess.run(
        [sys.executable, "-c", script, *argv], env=process_env(), capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    found: list[object] = json.loads(proc.stdout.splitlines()[-1])
    return found


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "lessons" / "tools").mkdir(parents=True)
    (tmp_path / "lessons" / "tools" / "git.md").write_text("---\nmatch:\n  keywords: [git, 'work*tree']\n---\n# Git\n")
    (tmp_path / "journal.md").write_text("used git to commit\n")
    return tmp_path


def test_a_full_record_imports_numpy_first_from_open_workspace(workspace: Path) -> None:
    record = ["record", "-w", str(workspace), "--session-id", "s1", "--journal", "journal.md"]
    found = run(FULL_RECORD, *record, "--lessons", "tools/git.md", "--reward", "0.8")
    assert found == [0, [["common.py", "open_workspace"]], True]


def test_what_a_record_needs_before_its_fold_imports_no_numpy(workspace: Path) -> None:
    record = ["record", "-w", str(workspace), "--session-id", "s1", "--journal", "journal.md"]
    assert run(FULL_RECORD, *record, "--lessons", "tools/git.md", "--reward", "0.8")[0] == 0  # the state file
    (workspace / "state" / "lesson-thompson" / "config.toml").write_text('strategy = "evidence"\n')
    found = run(READ_FRONT, str(workspace), json.dumps(FRONT))
    assert found == [[["tools/git.md"], ["tools/git.md"], "evidence", 0.8], False]
