"""The keyword scan holds what it reports a read of the journal at a time: keywords nested in one another (`a`,
`aa`, ... up to the 100-character cap) over a journal of `a`s make up to 100 matches a character, and the scan
held every one (about 170 bytes a character: 1.3 GB over an 8 MB journal, 11 GB at the 64 MB journal cap).
Wildcards that match at every other character had every match of each worked out and held, though a salience
needs only whether each matches. Measured in a child process under an address-space limit, so that the old way
fails there, not on the machine."""

from __future__ import annotations

import json
import resource
import subprocess
import sys

from tests.support.cli_run import process_env

LIMIT_BYTES = 1 << 30  # the child's address space: the old scan needed ~3.5 GB for the plain case alone
PEAK_BYTES = 400 << 20  # the child's peak RSS: ~110 MB here (the interpreter and numpy ~45 MB of it)
FINISHED_S = 300.0  # "it finished" (about 2 s): never a speed assertion

CHILD = """
import json, resource
from lesson_credit.core.library.salience import salience_breakdowns

n = 1 << 21
# The first sixteenth has none of the keywords (a sample there would take none out): 2 MB of `a`s after it.
(plain,) = salience_breakdowns("b" * (n // 8) + "a" * n, [("plain.md", ["a" * k for k in range(1, 101)])])
# 16 wildcards whose first parts are nested: each `a` of the journal an occurrence of all 16.
text = "b" * (n // 8) + "a" * (n // 8) + "b"
(wild,) = salience_breakdowns(text, [("wild.md", [f"{'a' * k}*b" for k in range(1, 17)])])
# 64 wildcards (`a*`, `a**`, ...: each a keyword of its own; 16 a lesson, the most counted) that match at every
# other character: every match of every one was worked out and held (1.3 GB over these 256 KB).
many = [(f"many{j}.md", ["a" + "*" * (16 * j + k) for k in range(1, 17)]) for j in range(4)]
*_, dense = salience_breakdowns("a " * (n // 16), many)
print(json.dumps({
    "dense": [dense.salience, dense.keywords[15].spans()[:2], dense.keywords[0].count],
    "plain": [plain.salience, plain.keywords[99].spans()[:2]],
    "wild": [wild.salience, [hit.spans() for hit in wild.keywords]],
    "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10,
}))
"""


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))


def test_nested_keywords_over_a_journal_of_as_are_scanned_in_bounded_memory() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD], env=process_env(), capture_output=True, text=True, timeout=FINISHED_S,
        check=False, preexec_fn=_limited,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout)
    n = 1 << 21
    start = n // 8  # the first `a`
    # every keyword occurs: 1.0; the 100-`a` keyword's non-overlapping occurrences from the first `a`, 100 apart
    assert got["plain"] == [1.0, [[start, start + 100], [start + 100, start + 200]]]
    # each wildcard matches once: from the first `a` over the run of `a`s to the `b` after it (n // 8 + 1 long)
    assert got["wild"] == [1.0, [[[start, start + n // 8 + 1]]] * 16]
    # every one matches each `a` (131,072 of them, every other character)
    assert got["dense"] == [1.0, [[0, 1], [2, 3]], n // 16]
    assert got["peak"] < PEAK_BYTES, got["peak"]
