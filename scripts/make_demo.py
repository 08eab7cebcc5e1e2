"""Generate the demo history in `state/` by simulating an agent that uses the `lessons/` library.

Deterministic (seeded): running it twice gives byte-identical files. The simulated world:
each session has a task category; some lessons are *relevant* to it, and a relevant lesson
that was injected changes the session's reward by its hidden true effect (most lessons do
nothing, a few help, a couple hurt). The journal mentions a relevant lesson's keywords with
some probability, plus spurious mentions of others, so salience is informative but noisy.
Selection uses the real Thompson top-k code, recording uses the real `Workspace.record`.

    python scripts/make_demo.py            # rewrites ./state from ./lessons
    python scripts/make_demo.py --out DIR  # a copy elsewhere (lessons/ is copied there)
"""

from __future__ import annotations

import argparse
import datetime as dt
import shutil
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))  # demo_records, beside this script
sys.path.insert(0, str(ROOT))

from demo_records import DemoSession, write_records  # noqa: E402  (this script's own folder)

from lesson_credit.core.library.lessons import Lesson, load_library  # noqa: E402
from lesson_credit.core.library.salience import counted_keywords  # noqa: E402
from lesson_credit.core.workspace import Workspace  # noqa: E402

SEED = 20260901
RECORDS_SEED = 20261027  # the records, trajectories and people's grades: their own stream, after the simulation's
SESSIONS = 168
PENDING_TAIL = 9  # the newest sessions are left ungraded, for the dashboard to grade
START = dt.datetime(2026, 9, 1, 8, 0, tzinfo=dt.UTC)

# task category -> (baseline reward, lesson categories that tend to be relevant)
TASKS: dict[str, tuple[float, tuple[str, ...]]] = {
    "feature": (0.62, ("workflow", "patterns", "testing")),
    "bugfix": (0.58, ("testing", "patterns", "tools")),
    "ci-repair": (0.50, ("testing", "workflow", "tools")),
    "triage": (0.66, ("communication", "workflow")),
    "autonomous-run": (0.54, ("autonomous", "communication", "tools")),
}

# Hidden truth: effect on the reward when the lesson is relevant AND injected.
EFFECTS: dict[str, float] = {
    "testing/run-tests-before-claiming.md": 0.16,
    "workflow/check-ci-before-done.md": 0.14,
    "patterns/read-before-edit.md": 0.12,
    "workflow/resolve-merge-conflicts.md": 0.10,
    "autonomous/rate-limit-backoff.md": 0.10,
    "testing/flaky-test-handling.md": 0.08,
    "communication/escalate-when-blocked.md": 0.08,
    "autonomous/scope-creep-guard.md": -0.12,
    "tools/shell-quoting-pitfalls.md": -0.08,
}

OPENERS = {
    "feature": "Picked up issue #{n}: add {thing} to the {area} module. Plan: read the code, write tests, implement.",
    "bugfix": "Bug report #{n}: {thing} crashes in the {area} module on empty input. Reproduce first.",
    "ci-repair": "CI on main is red after #{n}; the {area} job fails on {thing}. Goal: make CI green again.",
    "triage": "Triage pass over the {area} backlog: {thing} and a dozen stale issues, starting at #{n}.",
    "autonomous-run": "Autonomous run #{n}: no human online. Queue: {thing} in {area}, then housekeeping.",
}
THINGS = [
    "pagination",
    "a config loader",
    "the retry policy",
    "CSV export",
    "a date parser",
    "the cache layer",
    "webhook signatures",
    "the plugin registry",
    "unicode filenames",
    "the progress bar",
]
AREAS = ["api", "cli", "storage", "scheduler", "auth", "reporting", "sync"]
FILLER = [
    "Read through the surrounding code before changing anything.",
    "Wrote down the next step in the journal.",
    "Looked at how the existing helpers handle this case.",
    "Updated the docstring to say why, not what.",
    "Checked the issue thread for context from the maintainers.",
    "Ran the formatter over the touched files.",
    "Took a short detour to understand the data model.",
    "Noted a follow-up instead of widening the change.",
    "The change is smaller than expected; good.",
    "Compared behaviour before and after on a sample input.",
]
ENDINGS = {
    "good": ["Pushed the branch and opened a PR; CI green.", "Done: change merged after review."],
    "mid": ["PR opened; one reviewer question left open.", "Partial fix landed; follow-up issue filed."],
    "bad": ["Ran out of time with the change half done.", "Reverted the change; it broke another path."],
}


def _relevance(lessons: list[Lesson], task: str, rng: np.random.Generator) -> list[str]:
    """Lessons relevant to one session: mostly from the task's lesson categories."""
    favoured = TASKS[task][1]
    relevant = []
    for lesson in lessons:
        chance = 0.32 if lesson.category in favoured else 0.04
        if lesson.status in ("archived", "deprecated"):
            chance /= 2
        if rng.random() < chance:
            relevant.append(lesson.id)
    return relevant


def _mention(lesson: Lesson, rng: np.random.Generator, p: float) -> list[str]:
    phrases = []
    for keyword in counted_keywords(lesson.keywords):
        if rng.random() < p:
            phrases.append(keyword.replace("*", "ing"))
    return phrases


def simulate(out: Path) -> list[DemoSession]:
    rng = np.random.default_rng(SEED)
    library = load_library(out)
    if library.problems:
        raise SystemExit(f"broken lessons: {library.problems}")
    lessons = list(library.lessons)
    by_id = {lesson.id: lesson for lesson in lessons}
    clock_now = [START]
    ws = Workspace(out, clock=lambda: clock_now[0])
    journals = out / "state" / "journals"
    journals.mkdir(parents=True, exist_ok=True)
    task_names = list(TASKS)
    regrades: list[tuple[str, float, str, str]] = []
    made: list[DemoSession] = []
    for number in range(SESSIONS):
        clock_now[0] += dt.timedelta(hours=float(rng.uniform(4, 12)))
        task = task_names[int(rng.integers(len(task_names)))]
        relevant = _relevance(lessons, task, rng)
        opener = OPENERS[task].format(
            n=int(rng.integers(100, 999)),
            thing=THINGS[int(rng.integers(len(THINGS)))],
            area=AREAS[int(rng.integers(len(AREAS)))],
        )
        # What the agent knows at session start: the task, plus hints of what it will meet.
        hints = [p for lid in relevant for p in _mention(by_id[lid], rng, 0.35)]
        context = opener + " " + " ".join(f"Expect {h}." for h in hints)
        day = clock_now[0].strftime("%Y-%m-%d")
        session_id = f"{day}-{number:03d}"
        # seed credit selects, as when the tracked demo was made (joint became the default later)
        draw_seed = int(rng.integers(2**31))
        selection = ws.select(context, k=8, seed=draw_seed, session_id=session_id, policy="seed")
        injected = list(selection.selected)
        if len(injected) < 4:  # a thin context still gets a few lessons, as an agent's base set
            extra = [lesson.id for lesson in lessons if lesson.status == "active" and lesson.id not in injected]
            for pick in rng.permutation(len(extra))[: 4 - len(injected)]:
                injected.append(extra[int(pick)])
        # The session happens: relevant lessons show up in the journal; some noise too.
        lines = [f"# Session {session_id} ({task})", "", opener, ""]
        for step in range(int(rng.integers(5, 10))):
            lines.append(f"- {FILLER[int(rng.integers(len(FILLER)))]}")
            if step < len(relevant):
                lid = relevant[step]
                for phrase in _mention(by_id[lid], rng, 0.6):
                    lines.append(f"- Ran into {phrase} here; handled it.")
            if rng.random() < 0.25:
                noise = lessons[int(rng.integers(len(lessons)))]
                for phrase in _mention(noise, rng, 0.3)[:1]:
                    lines.append(f"- Saw a mention of {phrase} in an unrelated log line.")
        effect = sum(EFFECTS.get(lid, 0.0) for lid in injected if lid in relevant)
        base = TASKS[task][0] + effect + float(rng.normal(0, 0.12))
        reward = round(float(np.clip(base, 0.0, 1.0)), 2)
        mood = "good" if reward >= 0.7 else "mid" if reward >= 0.45 else "bad"
        lines += ["", ENDINGS[mood][int(rng.integers(2))], ""]
        journal = journals / f"{session_id}.md"
        journal.write_text("\n".join(lines), encoding="utf-8")
        pending = number >= SESSIONS - PENDING_TAIL or rng.random() < 0.03
        made.append(DemoSession(session_id, task, reward, pending, clock_now[0], lines))
        ws.record(
            session_id,
            journal,
            injected,
            reward=None if pending else reward,
            category=task,
            grader="heuristic",
        )
        if not pending and rng.random() < 0.12:
            # A judge or a person later disagreed with the heuristic grade.
            new = round(float(np.clip(reward + rng.normal(0, 0.2), 0.0, 1.0)), 2)
            grader, note = (
                ("judge", "LLM judge re-scored the outcome")
                if rng.random() < 0.6
                else (
                    "manual",
                    "operator: the PR needed more rework than the heuristic saw",
                )
            )
            regrades.append((session_id, new, grader, note))
        if regrades and rng.random() < 0.5:
            sid, new, grader, note = regrades.pop(0)
            ws.grade(sid, new, grader=grader, note=note)
    for sid, new, grader, note in regrades:
        clock_now[0] += dt.timedelta(minutes=30)
        ws.grade(sid, new, grader=grader, note=note)
    return made


def people_grade(out: Path, made: list[DemoSession]) -> None:
    """People grade some graded sessions by hand (a few twice, by two people), so the agreement
    screen has pairs: near the true reward, with the noise of a person's judgement."""
    rng = np.random.default_rng(RECORDS_SEED + 1)
    moment = [made[-1].timestamp + dt.timedelta(hours=1)]
    ws = Workspace(out, clock=lambda: moment[0])
    graded = [s for s in made if not s.pending]
    for pick in sorted(rng.choice(len(graded), size=28, replace=False).tolist()):
        s = graded[pick]
        moment[0] += dt.timedelta(minutes=7)
        if rng.random() < 0.3:  # a second person graded it first
            second = round(float(np.clip(s.reward + rng.normal(0, 0.12), 0, 1)), 1)
            ws.grade(s.session_id, second, grader="erik", note="second opinion")
            moment[0] += dt.timedelta(minutes=3)
        value = round(float(np.clip(s.reward + rng.normal(0, 0.08), 0, 1)), 1)
        ws.grade(s.session_id, value, grader="manual")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT, help="workspace to write (default: the repository)")
    args = parser.parse_args()
    out = args.out.resolve()
    if out != ROOT:
        out.mkdir(parents=True, exist_ok=True)
        if not (out / "lessons").exists():
            shutil.copytree(ROOT / "lessons", out / "lessons")
    state = out / "state"
    if state.exists():
        shutil.rmtree(state)
    made = simulate(out)
    write_records(out, made, RECORDS_SEED)
    people_grade(out, made)
    print(f"wrote {SESSIONS} sessions, their gptme-sessions records and trajectories to {state}")


if __name__ == "__main__":
    main()
