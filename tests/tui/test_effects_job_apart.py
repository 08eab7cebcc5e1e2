"""The dashboard's fits' child answers the effects and P(top-k) together under the joint policy; one of them
failing (the policy's posterior out of memory, say) failed both: the Lessons screen lost its effects for a fault
in the posterior. Each is now answered on its own, the other's failure told to its asker alone."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui import effects_job


def run_child(monkeypatch: pytest.MonkeyPatch, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """The child's `main` in this process: its exit code and what it wrote."""
    out = io.StringIO()
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(request)))
    monkeypatch.setattr("sys.stdout", out)
    code = effects_job.main()
    return code, json.loads(out.getvalue())


def test_a_failing_posterior_leaves_the_effects(analysis_workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    root = analysis_workspace.root
    expected = Workspace(root, use_cache=False).effects()

    def out_of_memory(self: Workspace, seed: int = 0) -> dict[str, float]:
        raise MemoryError("posterior too big")

    monkeypatch.setattr(Workspace, "p_top_k", out_of_memory)
    monkeypatch.setattr("os.nice", lambda _n: 0)  # (this process is the test's)
    request = effects_job.both({"root": str(root), "store": None}, 0)
    code, answers = run_child(monkeypatch, request)
    assert code == 0
    assert answers["effects"] == pytest.approx(expected, abs=1e-12)
    assert answers["errors"] == {"p_top_k": "MemoryError: posterior too big"}
    assert "p_top_k" not in answers


def test_each_asker_gets_its_own_answer_or_its_own_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    """The parent's side: the effects' asker gets the effects; the P(top-k) asker of the same request and log
    version gets the child's line (nothing was kept for it: it runs a child of its own, which may succeed)."""
    children: list[dict[str, Any]] = []

    def child(job: effects_job.EffectsJob, request: dict[str, Any]) -> Any:
        children.append(request)
        return {"effects": {"a.md": 0.25}}, {"p_top_k": "MemoryError: posterior too big"}

    monkeypatch.setattr(effects_job.EffectsJob, "_run", child)
    job = effects_job.EffectsJob()
    request = effects_job.both({"root": "/w", "store": None}, 3)
    assert job.run(request, "effects", 7) == {"a.md": 0.25}
    with pytest.raises(RuntimeError, match=r"^joint fit failed: MemoryError: posterior too big$"):
        job.run(request, "p_top_k", 7)
    assert len(children) == 2
