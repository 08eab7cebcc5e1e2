"""What explain and record say of each keyword hit (how often, the first five offsets; explain --json: the offsets)
is worked out without holding every offset: keywords nested in one another (`a`, `aa`, ... up to the 100-character
cap) over a journal of `a`s occur about 5 times a character in all, and a tuple of every offset of each took 533 MB
over 2 MB (17 GB at the 64 MB journal cap), explain --json listing every one 7 GB and 900 MB of output over 8 MB.
Measured in a child process under an address-space limit, so that the old way fails there, not on the machine."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

from lesson_credit.tui.text import JOURNAL_DISPLAY_LIMIT
from tests.support.cli_run import process_env

LIMIT_BYTES = 1 << 30  # the child's address space
PEAK_BYTES = 300 << 20  # the child's peak RSS: ~100 MB here (the interpreter and numpy ~45 MB of it)
FINISHED_S = 300.0  # "it finished" (a few seconds): never a speed assertion
N = 1 << 21  # the journal: 2 MB of `a`s

CHILD = """
import io, json, resource, sys
from contextlib import redirect_stdout
from lesson_credit.cli.main import main

def run(*argv):
    out = io.StringIO()
    with redirect_stdout(out):
        assert main([*argv, "-w", sys.argv[1]]) == 0
    return out.getvalue()

hits = lambda text: [line[: line.index(": ")] for line in text.splitlines() if line.startswith("  hit")]
record = run("record", "--session-id", "s", "--journal", "journal.md", "--lessons", "t/nested.md", "--reward", "1")
text = run("explain", "s")
payload = json.loads(run("explain", "s", "--json"))
(lesson,) = payload["lessons"]
listed = payload.get("offsets_listed")
print(json.dumps({
    "record": hits(record), "text": hits(text), "listed": listed,
    "counts": [k["count"] for k in lesson["keywords"]],
    "offsets": [k["offsets"] for k in lesson["keywords"][:: 99]],
    "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10,
}))
"""


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))


def test_explain_and_record_of_nested_keywords_over_a_journal_of_as_hold_no_offsets_list(tmp_path: Path) -> None:
    (tmp_path / "lessons" / "t").mkdir(parents=True)
    (tmp_path / "state").mkdir()
    keywords = "".join(f'  - "{"a" * k}"\n' for k in range(1, 101))
    (tmp_path / "lessons" / "t" / "nested.md").write_text(f"---\nmatch:\n  keywords:\n{keywords}---\n\n# Nested\n")
    (tmp_path / "journal.md").write_text("a" * N)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)], env=process_env(), capture_output=True, text=True,
        timeout=FINISHED_S, check=False, preexec_fn=_limited, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout)
    # `a` * k occurs N // k times without overlapping, from 0, k apart; the text lists the first five
    lines = [f"  hit   '{'a' * k}' x{N // k} at {', '.join(str(k * i) for i in range(5))} ..." for k in range(1, 101)]
    assert got["record"] == lines
    assert got["text"] == lines
    assert got["counts"] == [N // k for k in range(1, 101)]
    # the JSON lists the first 1,000 offsets of each (every keyword here occurs more often: 2 MB // 100 = 20,971)
    assert got["listed"] == 1000
    assert got["offsets"] == [list(range(1000)), list(range(0, 100_000, 100))]
    assert got["peak"] < PEAK_BYTES, got["peak"]


DASHBOARD_CHILD = """
import json, resource
from lesson_credit.core.library.salience import salience_breakdowns
from lesson_credit.tui.highlights import highlights

(breakdown,) = salience_breakdowns("a" * (1 << 21) + "b", [("l.md", ["a" * k for k in range(1, 101)] + ["b"])])
found = highlights([("l.md", breakdown)])
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10
print(json.dumps({"spans": found.spans, "note": found.note(), "peak": peak}))
"""


def test_the_dashboards_highlights_of_nested_keywords_hold_no_span_of_each_match() -> None:
    done = subprocess.run(
        [sys.executable, "-c", DASHBOARD_CHILD], env=process_env(), capture_output=True, text=True,
        timeout=FINISHED_S, check=False, preexec_fn=_limited,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout)
    # the view shows the first JOURNAL_DISPLAY_LIMIT characters (2,000,000 of these N + 1): `a` alone matches at each
    # of them, 2,000,000 x SPAN_CHARS (600) = 1.2e9 past the budget (2^30 = 1,073,741,824): no keyword is highlighted
    # (the matches taken before that was known: at most 2^30 / 600 = 1,789,569, 16 bytes each), and the pane says so
    assert JOURNAL_DISPLAY_LIMIT * 600 > 1 << 30
    assert got["spans"] == []
    assert got["note"] == "highlights: first 0 of 101 keywords shown, the rest too slow to find"
    assert got["peak"] < PEAK_BYTES, got["peak"]
