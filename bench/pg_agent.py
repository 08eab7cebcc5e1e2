"""One agent of bench/pg_write.py's fleet, run as its own process: connects, says `ready`, waits for
`go` on stdin, makes its writes, prints what each took as JSON.

    python -m bench.pg_agent plain|append|follow URL AGENT N_WRITES TAG

`append`: the store's write path for one session event (`PgStore.append`, no lock: core/log/stores.py `record_lock`):
the event validated as the reader validates it, its columns and digest, one INSERT that the table's
constraints check (a second session event for the id is refused there, whoever wrote the first),
committed on return with its position known. `follow`: the same append between two reads of what is
new, as a Workspace that keeps its fold current makes them (what a `LogReader` refresh asks of the
store: its size, then the events after the last read, decoded; the id checked against them; the
read after the append brings our own event back): each write also reads every other agent's events
written since, so its cost grows with the fleet. The engine's own work on what was read (adding it
to the log index) is the same on either store and is left out. `plain`: one autocommit INSERT of the
same row (the same column values, computed before timing) into a table with only a primary key.
"""

from __future__ import annotations

import json
import sys
import time

PLAIN_INSERT = (
    "INSERT INTO bench_plain (type, session_id, event_time, event, raw, agent, digest, occurrence)"
    " VALUES (%s, %s, %s, %s::jsonb, %s, %s, %s, 0)"
)
PLAIN_TABLE = (
    "CREATE TABLE IF NOT EXISTS bench_plain (id bigserial PRIMARY KEY, type text, session_id text, event_time text,"
    " event jsonb, raw text, agent text, committed_at timestamptz NOT NULL DEFAULT now(), digest bytea,"
    " occurrence integer)"
)
LESSONS = [f"tools/lesson-{k}.md" for k in range(10)]


def event(session_id: str) -> bytes:
    """A session event the size of a real record: 10 lessons with salience and reward."""
    record = {
        "type": "session",
        "session_id": session_id,
        "timestamp": "2026-03-05T16:30:00Z",
        "base_reward": 0.8,
        "grader": "heuristic",
        "strategy": "seed",
        "floor": 0.3,
        "journal_path": "journals/bench-session.md",
        "lessons": [{"path": path, "salience": 0.1 * k, "reward": 0.5, "hits": k} for k, path in enumerate(LESSONS)],
    }
    return json.dumps(record).encode() + b"\n"


def main() -> None:
    mode, url, agent, n_writes, tag = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
    lines = [event(f"{tag}-{agent}-{i}") for i in range(n_writes)]
    latencies: list[float] = []
    if mode == "plain":
        import psycopg

        from lesson_credit.core.log.pgschema import row_fields

        rows = []
        for text in lines:
            f = row_fields(text.strip())
            rows.append((f["type"], f["session_id"], f["event_time"], f["event"], f["raw"], agent, f["digest"]))
        conn = psycopg.connect(url, autocommit=True)
        print("ready", flush=True)
        sys.stdin.readline()
        start = time.monotonic()
        for row in rows:
            began = time.monotonic()
            conn.execute(PLAIN_INSERT, row)
            latencies.append(time.monotonic() - began)
        end = time.monotonic()
        conn.close()
    else:
        from lesson_credit.core.log.events import decode_raw, decode_raw_lines
        from lesson_credit.core.log.pgstore import PgStore

        store = PgStore(url, agent=agent)
        seen: set[str] = set()
        position, number = 0, 1

        def read_new() -> None:  # what LogReader.refresh asks of the store, with the events decoded
            nonlocal position, number
            if store.size() == position:
                return
            for result in store.read_since(position, number, decode=decode_raw, decode_lines=decode_raw_lines):
                seen.update(str(raw.session_id) for _, raw in result.events)
                position, number = result.end, number + result.lines

        if mode == "follow":
            read_new()  # a follower starts current; a writer needs no read (the constraints check)
        else:
            store.size()  # connected, the schema checked
        print("ready", flush=True)
        sys.stdin.readline()
        start = time.monotonic()
        follow = mode == "follow"
        for i, text in enumerate(lines):
            began = time.monotonic()
            if follow:
                read_new()
                assert f"{tag}-{agent}-{i}" not in seen
            store.append(text)
            if follow:
                read_new()
            latencies.append(time.monotonic() - began)
        end = time.monotonic()
        store.close()
    print(json.dumps({"latencies": latencies, "start": start, "end": end}), flush=True)


if __name__ == "__main__":
    main()
