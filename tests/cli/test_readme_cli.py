"""The README's CLI examples run as written on a fresh copy of the demo.

The bash block of README.md's `## The CLI` section is run line by line, in order (as someone
pasting it would), in a copy of the repository's demo workspace (lessons/ and state/), with
`lesson-credit` being the tree under test. Every line must exit 0; the repository's own state/
is left as it was."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli_run import ROOT, process_env

README = ROOT / "README.md"
LINE_LIMIT_S = 60.0  # "it finished": generous for a loaded machine, never a speed assertion


def cli_block(text: str) -> list[str]:
    """The command lines of the first ```bash block under `## The CLI`."""
    section = text.split("\n## The CLI", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert block is not None, "README.md: no bash block under '## The CLI'"
    return [line for line in block.group(1).splitlines() if line.strip() and not line.lstrip().startswith("#")]


def tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and ".cache" not in p.parts):
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@pytest.mark.long
def test_every_readme_cli_example_runs_on_a_fresh_demo(tmp_path: Path) -> None:
    lines = cli_block(README.read_text(encoding="utf-8"))
    assert len(lines) >= 5 and all("lesson-credit" in line for line in lines)
    demo = tmp_path / "demo"
    shutil.copytree(ROOT / "lessons", demo / "lessons")
    shutil.copytree(ROOT / "state", demo / "state", ignore=shutil.ignore_patterns(".cache", "*.lock"))
    before = tree_digest(ROOT / "state")
    # `lesson-credit` is the tree under test, whatever the environment has installed
    prelude = 'set -o pipefail; lesson-credit() { "$PYTHON" -m lesson_credit.cli.main "$@"; }\n'
    env = process_env(PYTHON=sys.executable)
    failures = []
    for line in lines:
        try:
            done = subprocess.run(
                ["bash", "-c", prelude + line],
                cwd=demo, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=LINE_LIMIT_S,
            )  # fmt: skip
        except subprocess.TimeoutExpired:  # the dashboard (`lesson-credit` alone) never ends on its own
            failures.append(f"{line}\n  still running after {LINE_LIMIT_S} s")
            continue
        if done.returncode != 0:
            failures.append(f"{line}\n  exit {done.returncode}: {done.stderr.strip()[:300]}")
    assert failures == [], "\n".join(failures)
    assert tree_digest(ROOT / "state") == before
