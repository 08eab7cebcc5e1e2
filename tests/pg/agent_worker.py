"""One agent of a fleet, run as its own process by test_pg_fleet.py: its own workspace, a shared
database. Waits for the start signal, then records its sessions, tries to record the contested
ids, and grades its sessions; prints what succeeded as JSON.

usage: agent_worker.py ROOT URL AGENT N_OWN GO_FILE CONTESTED_ID...
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.log.eventstore import DuplicateSession
from lesson_credit.core.log.pgstore import PgStore
from lesson_credit.core.workspace import Workspace

LESSONS = ["tools/git.md", "tools/quote.md", "style.md"]
START_WAIT_S = 60


def main() -> None:
    root, url, agent, n_own, go = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]), Path(sys.argv[5])
    contested = sys.argv[6:]
    ws = Workspace(root, store=PgStore(url, agent=agent))
    ws.data()  # connected and read before the start, so that the agents really overlap
    deadline = time.monotonic() + START_WAIT_S
    while not go.exists():
        if time.monotonic() > deadline:
            raise SystemExit("no start signal")
        time.sleep(0.01)
    recorded, won, lost, graded = [], [], [], []
    own = [f"{agent}-{i}" for i in range(n_own)]
    for i, sid in enumerate(own):
        ws.record(sid, root / "j.txt", LESSONS, reward=(i % 5) / 4)
        recorded.append(sid)
        if i < len(contested):  # interleave the contested ids with the agent's own sessions
            try:
                ws.record(contested[i], root / "j.txt", LESSONS[:1], reward=0.5)
                won.append(contested[i])
            except (WorkspaceError, DuplicateSession) as exc:
                assert "already recorded" in str(exc), exc
                lost.append(contested[i])
    for i, sid in enumerate(own):
        ws.grade(sid, ((i + 2) % 5) / 4, grader=agent)
        graded.append(sid)
    print(json.dumps({"recorded": recorded, "won": won, "lost": lost, "graded": graded}))


if __name__ == "__main__":
    main()
