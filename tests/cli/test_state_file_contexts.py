"""A real gptme `bandit-state.json` whose contextual arms accumulated is read, and every contextual arm is kept as
gptme wrote it.

gptme-sessions' bandit (gptme_sessions/thompson_sampling.py, `Bandit.save`) writes `json.dumps(data, indent=2)` of
`arms`, `total_sessions`, `created`, `last_updated` and, once an update named a context, `contextual_arms`: per arm id,
per context key (the context tuple as `json.dumps(list(context))`, `["code", "opus"]`), an arm of the same six keys.
A busy agent's 300 lessons under 12 categories x 11 models (132 contexts) take 11 MB: past the byte bound a state
file had (4 MB and 4 KB an arm), every command left the file as it was, refused, and deleting it (what the warning
offered) lost the contextual arms, which the log does not hold. The numbers below are counted by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.derived_state import check_state
from lesson_credit.core.workspace import Workspace
from tests.cli.cli_fixtures import log_bytes, make_ws, run
from tests.support.engine_helpers import STATE_REL

CATEGORIES = ["code", "triage", "infrastructure", "content", "research", "review", "planning", "docs", "ops"]
CATEGORIES += ["cleanup", "strategic", "self-review"]
MODELS = ["opus", "sonnet", "haiku", "gpt-5", "gpt-5-mini", "o3", "gemini-2.5-pro", "gemini-2.5-flash", "grok-4"]
MODELS += ["kimi-k2", "deepseek-v3"]
STAMP = "2026-11-30T09:12:44.518233+00:00"  # gptme's clock: isoformat, +00:00, to the microsecond


def gptme_arm(key: str, alpha: float, beta: float, n: int, rewards: int) -> dict[str, Any]:
    """An arm as gptme's `asdict(BanditArm)` has it, its keys in that order."""
    return {
        "arm_id": key,
        "alpha": alpha,
        "beta": beta,
        "total_selections": n,
        "total_rewards": rewards,
        "last_updated": STAMP,
    }


def gptme_file(path: Path, lessons: list[str], contexts: int) -> bytes:
    """Write at `path` the file gptme's bandit saves after sessions that credited each lesson under `contexts`
    contexts (category x model, its `update(..., context=(category, model))`); returns its `contextual_arms`' text as
    the file holds it (indent 2, one level in: what a rewrite must keep)."""
    named = [json.dumps([c, m]) for c in CATEGORIES for m in MODELS]
    named += [json.dumps([c, m, "autonomous"]) for c in CATEGORIES for m in MODELS]  # (past 132: a third element)
    keys = [f"lessons/{lesson}" for lesson in lessons]
    data: dict[str, Any] = {
        "arms": {key: gptme_arm(key, 1.0 + contexts / 2, 1.0 + contexts / 2, contexts, contexts // 2) for key in keys},
        "total_sessions": contexts,
        "created": "2025-12-01T10:00:00.000001+00:00",
        "last_updated": STAMP,
        "contextual_arms": {
            key: {c: gptme_arm(key, 1.5, 1.5, 1, i % 2) for i, c in enumerate(named[:contexts])} for key in keys
        },  # fmt: skip
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")
    return contextual_text(path.read_bytes())


def contextual_text(raw: bytes) -> bytes:
    """The text of the file's `contextual_arms` value, from its key to the end of its object (indent 2: the next
    line that is two spaces and a closing brace)."""
    start = raw.index(b'\n  "contextual_arms": {\n')
    end = raw.index(b"\n  }", start)
    return raw[start + 1 : end + 4]


def warnings(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return [w for w in json.loads(out).get("warnings", []) if "bandit-state.json" in w]


@pytest.mark.parametrize(("lessons", "contexts"), [(300, 150), (1_000, 200)])
def test_a_gptme_file_with_many_contextual_arms_is_read_and_they_are_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lessons: int, contexts: int
) -> None:
    names = [f"tools/l{i}.md" for i in range(lessons)]
    ws = make_ws(tmp_path, {name: [f"kw{i}"] for i, name in enumerate(names)}, events=[])
    own = ws / STATE_REL
    kept = gptme_file(own, names, contexts)
    # 300 x 150 contextual arms of about 250 bytes (shorter paths than a real agent's): 11.4 MB, past the 4 MB +
    # 4 KB x (300 + 300 + 1,000) = 10.7 MB the bound had; 1,000 x 200: 51 MB
    assert own.stat().st_size > 4 * 2**20 + 4_096 * (2 * lessons + 1_000)
    assert warnings(capsys, "import-gptme", "-w", str(ws), str(own)) == []  # (the workspace's own file: adopted)
    assert contextual_text(own.read_bytes()) == kept  # rewritten, the contextual arms as gptme wrote them
    assert json.loads(own.read_bytes())["arms"]["lessons/tools/l0.md"]["total_selections"] == contexts
    assert warnings(capsys, "status", "-w", str(ws)) == []
    journal = ws / "j.txt"
    journal.write_text("worked\n")
    before = log_bytes(ws) or b""
    said = warnings(capsys, "record", "-w", str(ws), "--session-id", "s1", "--journal", str(journal),
                    "--lessons", names[0], "--reward", "1")  # fmt: skip
    assert said == []
    assert b'"session_id":"s1"' in (log_bytes(ws) or b"")[len(before) :].replace(b" ", b"")
    raw = own.read_bytes()
    assert contextual_text(raw) == kept
    assert json.loads(raw)["arms"]["lessons/tools/l0.md"]["total_selections"] == contexts + 1  # (the session s1)
    # the dashboard's reads of the file: the check of it against the log and the records its rewards came from
    workspace = Workspace(ws)
    assert (check_state(workspace), workspace.records_missing()) == (None, None)


def test_gptmes_session_on_the_big_file_is_logged_and_its_new_contextual_arm_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = [f"tools/l{i}.md" for i in range(300)]
    ws = make_ws(tmp_path, {name: [f"kw{i}"] for i, name in enumerate(names)}, events=[])
    own = ws / STATE_REL
    gptme_file(own, names, 150)
    assert warnings(capsys, "import-gptme", "-w", str(ws), str(own)) == []
    # gptme's next session: l1 under a new context, (code, opus-5), reward 1; its save drops our keys
    state = json.loads(own.read_bytes())
    key = "lessons/tools/l1.md"
    state["arms"][key].update(alpha=state["arms"][key]["alpha"] + 1, total_selections=151, total_rewards=76)
    state["contextual_arms"][key][json.dumps(["code", "opus-5"])] = gptme_arm(key, 2.0, 1.0, 1, 1)
    state["total_sessions"] += 1
    state = {name: state[name] for name in ("arms", "total_sessions", "created", "last_updated", "contextual_arms")}
    own.write_text(json.dumps(state, indent=2) + "\n")
    kept = contextual_text(own.read_bytes())
    before = log_bytes(ws) or b""
    said = warnings(capsys, "status", "-w", str(ws))
    assert len(said) == 1 and "its increments to 1 arm" in said[0], said
    assert b"increments" in (log_bytes(ws) or b"")[len(before) :]
    assert contextual_text(own.read_bytes()) == kept  # (rewritten from the log: the new contextual arm too)
    # l1: 1 + 75 + 1 from the import and gptme's session
    assert json.loads(own.read_bytes())["arms"][key]["alpha"] == 77.0
