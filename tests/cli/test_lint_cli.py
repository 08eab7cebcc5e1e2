"""`lesson-credit lint`: exit 0 with warnings, 1 with an error, and the --json shape (the checks
themselves: tests/core/test_health.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.cli_run import run_cli
from tests.support.engine_helpers import make_workspace, session
from tests.support.health_logs import LESSONS, clean_events


def test_cli_lint_exit_codes(tmp_path: Path) -> None:
    clean = make_workspace(tmp_path, lessons=LESSONS, events=clean_events(), name="clean")
    code, out, _ = run_cli("lint", "--workspace", str(clean))
    assert (code, out.strip()) == (0, "no problems found")

    warned = make_workspace(
        tmp_path, lessons=LESSONS, events=[*clean_events(), session("g", 0.5, {"gone.md": 0.5})], name="warned"
    )
    code, out, _ = run_cli("lint", "--workspace", str(warned))
    assert code == 0
    assert "warning: [ghost-arms]" in out
    assert "0 errors, 1 warning" in out

    broken = make_workspace(tmp_path, lessons=LESSONS, events=[*clean_events(), "{not json\n"], name="broken")
    code, out, _ = run_cli("lint", "--workspace", str(broken))
    assert code == 1
    assert "error: [log-unreadable-lines]" in out
    assert "  -> " in out
    assert "1 error, 0 warnings" in out


def test_cli_lint_json_shape(tmp_path: Path) -> None:
    events: list[dict[str, Any] | str] = [*clean_events(), "{not json\n", session("g", 0.5, {"gone.md": 0.5})]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    code, out, _ = run_cli("lint", "--workspace", str(root), "--json")
    assert code == 1
    payload = json.loads(out)
    assert set(payload) == {"findings", "errors", "warnings", "fail_on", "failed"}
    assert (payload["errors"], payload["warnings"], payload["failed"]) == (1, 1, True)
    for finding in payload["findings"]:
        assert set(finding) == {"code", "severity", "message", "advice", "items"}
        assert isinstance(finding["items"], list)
    got = {f["code"]: f for f in payload["findings"]}
    assert set(got) == {"log-unreadable-lines", "ghost-arms"}
    assert got["log-unreadable-lines"]["severity"] == "error"
    assert [i["item"] for i in got["log-unreadable-lines"]["items"]] == ["line 7"]
    assert [i["item"] for i in got["ghost-arms"]["items"]] == ["gone.md"]
    assert got["ghost-arms"]["items"][0]["reason"] == "no lesson file"

    clean = make_workspace(tmp_path, lessons=LESSONS, events=clean_events(), name="clean")
    code, out, _ = run_cli("lint", "--workspace", str(clean), "--json")
    expected = {"findings": [], "errors": 0, "warnings": 0, "fail_on": "error", "failed": False}
    assert (code, json.loads(out)) == (0, expected)


def test_lint_counts_findings_not_their_items(tmp_path: Path) -> None:
    """`warnings` is how many warning findings there are (checks that found something), as the text's last
    line says, not how many items they name: one ghost-arms finding naming two arms is 1."""
    ghosts = [session("g1", 0.5, {"gone.md": 0.5}), session("g2", 0.5, {"lost.md": 0.5})]
    root = make_workspace(tmp_path, lessons=LESSONS, events=[*clean_events(), *ghosts])
    code, out, _ = run_cli("lint", "--workspace", str(root), "--json")
    payload = json.loads(out)
    (finding,) = payload["findings"]
    assert (code, finding["code"], len(finding["items"])) == (0, "ghost-arms", 2)
    assert (payload["errors"], payload["warnings"]) == (0, 1)
    code, out, _ = run_cli("lint", "--workspace", str(root))
    assert out.rstrip().endswith("0 errors, 1 warning; passed (--fail-on error)")
