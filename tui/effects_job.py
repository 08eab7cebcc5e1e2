"""The joint fits of a big log, in a process of its own, so the dashboard never holds them.

On a million sessions the joint fit (core.analysis.joint) takes seconds and more memory than the
dashboard itself; in a thread it would share the dashboard's interpreter lock and its memory. The
dashboard starts `python -m lesson_credit.tui.effects_job`, writes where the workspace and its store
are on its stdin (the store's URL goes through the pipe, not the command line), and reads the
effects back as JSON. The child reads the log through the parsed-log cache like any command, at a
lower priority, and saves what it fitted with the log version it read (`Workspace.effects`), so a
later start on the same log shows them at once.

The same child draws P(top-k) under the joint selection policy (the request's `p_top_k`: the seed):
its posterior is fitted block by block of sessions as the effects are (core.analysis.joint_posterior;
~0.55 GB at a million sessions, the log's columns included) and kept in its verified cache. One child
at a time: the two fits never hold their memory at once. Under the joint policy the dashboard asks for
both from one child (`both`: the request has `effects` and `p_top_k`): the two fits read the same log,
its sums and the lessons identified only by time once (`Workspace.fit_both`: at a million sessions two
children took ~8 s of CPU each, most of it the same passes), and the answer the asker did not want is
kept for the other asker of the same log version (`EffectsJob.run`). Each is answered on its own: one
failing leaves the other's answer (`_both`).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any

from lesson_credit.core.workspace import Workspace

NICENESS = 10  # the fit gives way to the dashboard (and to the commands an operator runs)
ELSEWHERE_FROM = 100_000  # sessions from which the joint fit runs in a child process
ELSEWHERE_ARMS = 500  # or lessons (its eigen-decomposition grows as their cube)


def too_big_here(ws: Workspace) -> bool:
    """A log too big to fit the joint effects in the dashboard's own process."""
    data = ws.data()
    return data.n_sessions >= ELSEWHERE_FROM or data.n_arms >= ELSEWHERE_ARMS


def fit_later(ws: Workspace, seed: int = 0) -> tuple[Callable[[EffectsJob], dict[str, float]], bool]:
    """Called under the dashboard's lock: (how to fit the log as read now, outside the lock; whether
    that fit runs in this process). A big log goes to a child process (which saves what it fitted;
    under the joint policy it draws P(top-k) with `seed` too: `both`); a small one, or one in a store
    the child cannot open, is fitted here on the snapshot."""
    from lesson_credit.core.bandit.policy import JOINT

    request = request_of(ws) if too_big_here(ws) else None
    if request is not None:
        asked, version = (both(request, seed) if ws.policy == JOINT else request), ws.version
        return (lambda job: job.run(asked, "effects", version)), False
    fit = ws.effects_later()
    return (lambda job: fit()), True


def p_top_k_later(ws: Workspace, seed: int) -> Callable[[EffectsJob], dict[str, float]]:
    """Called under the dashboard's lock: how to draw P(top-k) of the log as read now, outside the lock.
    Under the joint policy a big log's posterior is fitted (or read from its cache) in a child, with the
    effects (`both`); else the posterior is taken here now and the draws run when called."""
    from lesson_credit.core.bandit.policy import JOINT

    request = request_of(ws) if too_big_here(ws) and ws.policy == JOINT else None
    if request is not None:
        asked, version = both(request, seed), ws.version
        return lambda job: job.run(asked, "p_top_k", version)
    draw = ws.p_top_k_later(seed=seed)
    return lambda job: draw()


def both(request: dict[str, Any], seed: int) -> dict[str, Any]:
    """The request of the effects and of P(top-k) drawn with `seed`, from one child: what the dashboard
    asks for both at each log version under the joint policy (the same request from either asker)."""
    return {**request, "effects": True, "p_top_k": seed}


def request_of(ws: Workspace) -> dict[str, Any] | None:
    """What the child needs to open the same workspace and store; None when it cannot (a store the
    child would not know how to open: the fit then runs in the dashboard, as for a small log)."""
    from lesson_credit.core.log.eventstore import JsonlStore

    request: dict[str, Any] = {"root": str(ws.root), "store": None}
    log = ws.log
    if isinstance(log, JsonlStore):
        return request if log.path == ws.state_dir / "sessions.jsonl" else None
    from lesson_credit.core.log.pgstore import PgStore

    if type(log) is PgStore:
        return {**request, "store": log.url, "agent": log.agent, "written_by": log.written_by}
    return None


class EffectsJob:
    """At most one child at a time (a second `run` waits); `stop()` ends it (the dashboard quits, or
    the source is closed)."""

    def __init__(self) -> None:
        self._child: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._one = threading.Lock()  # held while a child runs
        self._stopped = False
        # what the last child answered that its asker did not take: (its request and log version, answers)
        self._kept: tuple[tuple[str, int | None], dict[str, dict[str, float]]] | None = None

    def run(self, request: dict[str, Any], want: str | None = None, version: int | None = None) -> dict[str, float]:
        """What the child computed: `want` ("effects" or "p_top_k"; default: P(top-k) when the request has
        `p_top_k`, else the effects); RuntimeError when it failed (its last line of stderr says why). A
        request for both (`both`) keeps the other answer for the next asker of the very same request at the
        same log `version` of the dashboard (it read the log no earlier than that asker would have)."""
        want = want or ("p_top_k" if "p_top_k" in request else "effects")
        key = (json.dumps(request, sort_keys=True), version)
        with self._one:
            kept = self._kept
            if kept is not None and kept[0] == key and want in kept[1]:
                self._kept = None if len(kept[1]) == 1 else (key, {k: v for k, v in kept[1].items() if k != want})
                return kept[1][want]
            answers, errors = self._run(request)
            others = {kind: values for kind, values in answers.items() if kind != want}
            self._kept = (key, others) if others and version is not None else None
            if want in errors:
                raise RuntimeError(f"joint fit failed: {errors[want]}")
            return answers[want]

    def _run(self, request: dict[str, Any]) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
        """The child's answers by kind, and the line of each kind it could not answer (`_both`)."""
        with self._lock:
            if self._stopped:
                raise RuntimeError("the dashboard is closing")
            self._child = child = subprocess.Popen(
                [sys.executable, "-m", "lesson_credit.tui.effects_job"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        try:
            out, err = child.communicate(json.dumps(request).encode())
        finally:
            with self._lock:
                self._child = None
        if child.returncode != 0:
            lines = err.decode(errors="replace").strip().splitlines()
            raise RuntimeError(f"joint fit failed: {lines[-1] if lines else f'exit {child.returncode}'}")
        answers = json.loads(out)
        errors = {str(kind): str(line) for kind, line in answers.pop("errors", {}).items()}
        return {kind: {str(k): float(v) for k, v in values.items()} for kind, values in answers.items()}, errors

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            if self._child is not None:
                with contextlib.suppress(OSError):
                    self._child.kill()


def _both(ws: Workspace, seed: int) -> dict[str, Any]:
    """The effects and P(top-k), each on its own: one failing (the policy's posterior out of memory, say) leaves
    the other's answer, as two children would have (the failure's line under `errors`; its traceback on stderr)."""
    answers: dict[str, Any] = {}
    errors: dict[str, str] = {}
    saved = ws.saved_effects()
    if saved is None:
        with contextlib.suppress(Exception):  # (a failing part fails again below, alone, and is told there)
            ws.fit_both()
    parts: dict[str, Callable[[], Any]] = {
        "effects": ws.effects if saved is None else lambda: saved,
        "p_top_k": lambda: ws.p_top_k(seed=seed),
    }
    for kind, answer in parts.items():
        try:
            answers[kind] = answer()
        except Exception as error:
            traceback.print_exc()
            errors[kind] = " ".join(f"{type(error).__name__}: {error}".split())
    if not answers:
        raise RuntimeError("; ".join(errors.values()))
    return {**answers, "errors": errors} if errors else answers


def main() -> int:
    with contextlib.suppress(OSError):
        os.nice(NICENESS)
    request = json.loads(sys.stdin.read())
    # the dashboard's store: its database's URL, or "" for the workspace's file (None would choose
    # from $LESSON_CREDIT_STORE and config.toml, which `--store ""` overrides)
    store, agent, written_by = request.get("store") or "", request.get("agent"), request.get("written_by")
    ws = Workspace(request["root"], store=store, agent=agent, written_by=written_by)
    if "p_top_k" in request and not request.get("effects"):
        sys.stdout.write(json.dumps({"p_top_k": ws.p_top_k(seed=int(request["p_top_k"]))}))
    elif "p_top_k" not in request:
        sys.stdout.write(json.dumps({"effects": ws.effects()}))
    else:  # both: the effects saved for this log when they are, and the two fits made together when neither is
        sys.stdout.write(json.dumps(_both(ws, int(request["p_top_k"]))))
    return 0


if __name__ == "__main__":  # (BLAS threads: the dashboard's limit is in the environment the child inherits)
    sys.exit(main())
