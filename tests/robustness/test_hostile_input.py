"""Hostile files: nothing a workspace holds can hang us, exhaust memory or brick it.

Each case runs the real command in a subprocess with a generous limit and asserts that it
finished with the expected one-line message; none asserts speed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lesson_credit.core.library.salience import KeywordMatcher
from tests.robustness.hostile_helpers import LOG_REL, lesson, log_bytes, make_ws
from tests.support.cli_run import run_process

PROPERTY = settings(
    max_examples=int(os.environ.get("WILDCARD_EXAMPLES", "400")),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def _reference_spans(key: str, text: str) -> list[tuple[int, int]]:
    """docs/format.md §3 read literally: `*` is `\\w*`, leftmost non-overlapping matches (re.finditer)."""
    regex = re.compile(r"\w*".join(re.escape(part) for part in key.split("*")))
    return [m.span() for m in regex.finditer(text) if m.end() > m.start()]


@PROPERTY
@given(
    st.text(alphabet="ab-* ", min_size=1, max_size=8).filter(lambda k: "*" in k and k.replace("*", "").strip()),
    st.text(alphabet="abAB_- .\né", max_size=80),
)
def test_wildcard_matches_equal_a_regex_reference(keyword: str, text: str) -> None:
    """Several stars, runs of stars, leading/trailing ones and literal parts with non-word
    characters: the linear matcher gives exactly finditer's spans (on lower-cased text)."""
    key = keyword.strip().lower()
    found = KeywordMatcher([keyword]).scan(text).get(key, [])
    assert found == _reference_spans(key, text.lower())


def test_a_wildcard_with_a_run_of_stars_does_not_backtrack(tmp_path: Path) -> None:
    ws = make_ws(tmp_path, {"w.md": lesson(["a****b", "a*b"])})
    (ws / "j.md").write_text("a" + "c" * 3000 + " " + "a" * 80_000)
    done = run_process("record", "--session-id", "s1", "--journal", "j.md", "--lessons", "w.md", "--json", cwd=ws)
    assert done.returncode == 0, done.stderr
    assert '"salience": 0.0' in done.stdout


BILLION_LAUGHS = (
    "---\n"
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{','.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8))
    + "description: *i\n"
    + "match:\n  keywords: [bomb]\n---\n# Bomb\n"
)


def test_a_yaml_alias_bomb_is_refused_and_named(tmp_path: Path) -> None:
    ws = make_ws(tmp_path, {"a.md": lesson(["alpha"]), "bomb.md": BILLION_LAUGHS})
    done = run_process("status", cwd=ws)
    assert done.returncode == 0, done.stderr[-300:]
    assert "a.md" in done.stdout and "bomb.md" not in done.stdout
    assert "bomb.md" in done.stderr and "alias" in done.stderr


def test_anchors_without_aliases_still_load(tmp_path: Path) -> None:
    from lesson_credit.core.library.lessons import parse_lesson

    parsed = parse_lesson("---\nmatch: &m\n  keywords: [x, y]\n---\n# T\n", "t.md")
    assert parsed.keywords == ("x", "y")


def test_special_and_oversized_lesson_files_are_skipped_and_named(tmp_path: Path) -> None:
    import os

    ws = make_ws(tmp_path)
    os.mkfifo(ws / "lessons" / "fifo.md")
    (ws / "lessons" / "zero.md").symlink_to("/dev/zero")
    (ws / "lessons" / "huge.md").write_text(lesson(["huge"]) + "x" * (2 << 20))
    done = run_process("status", cwd=ws)
    assert done.returncode == 0, done.stderr[-300:]
    assert "a.md" in done.stdout
    for name, why in (("fifo.md", "FIFO"), ("zero.md", "device"), ("huge.md", "larger than 1 MB")):
        line = next((x for x in done.stderr.splitlines() if name in x), "")
        assert why in line, (name, done.stderr)


def test_special_journals_are_refused_with_one_line(tmp_path: Path) -> None:
    import os

    ws = make_ws(tmp_path)
    (ws / "zero.md").symlink_to("/dev/zero")
    os.mkfifo(ws / "fifo.md")
    with open(ws / "sparse.md", "wb") as handle:  # 65 MB, past the 64 MB journal cap, no disk used
        handle.truncate(65 << 20)
    for journal, why in (("zero.md", "device"), ("fifo.md", "FIFO"), ("sparse.md", "larger than 64 MB")):
        done = run_process(
            "record", "--session-id", "s", "--journal", journal, "--lessons", "a.md", "--allow-outside", cwd=ws
        )
        assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr[-300:]
        assert why in done.stderr and journal in done.stderr
    assert log_bytes(ws) == b""
    done = run_process("record", "--session-id", "s", "--journal", "/dev/zero", "--lessons", "a.md", cwd=ws)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr[-300:]


def test_a_log_that_is_not_a_regular_file_is_one_line_error(tmp_path: Path) -> None:
    import os

    ws = make_ws(tmp_path)
    (ws / LOG_REL).parent.mkdir(parents=True)
    os.mkfifo(ws / LOG_REL)
    done = run_process("status", cwd=ws)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr[-300:]
    assert "sessions.jsonl" in done.stderr and "FIFO" in done.stderr


def test_library_dirs_outside_the_workspace_need_an_opt_in(tmp_path: Path) -> None:
    ws = make_ws(tmp_path / "ws")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "far.md").write_text(lesson(["far"]))
    (ws / "gptme.toml").write_text(f'[lessons]\ndirs = ["lessons", "{outside}", "/"]\n')
    done = run_process("status", cwd=ws)
    assert done.returncode == 0, done.stderr[-300:]
    assert "a.md" in done.stdout and "far.md" not in done.stdout
    assert "outside the workspace" in done.stderr and str(outside) in done.stderr
    (ws / "gptme.toml").write_text(f'[lessons]\ndirs = ["lessons", "{outside}"]\n')
    allowed = run_process("status", "--json", cwd=ws, env={"LESSON_CREDIT_ALLOW_OUTSIDE": "1"})
    assert allowed.returncode == 0 and '"far.md"' in allowed.stdout, allowed.stderr


def test_seeds_past_64_bits_are_refused_at_the_cli(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    (ws / "ctx.md").write_text("alpha")
    done = run_process("select", "--context", "ctx.md", "--seed", str(2**64), cwd=ws)
    assert done.returncode == 2 and "seed must be in [0, 2**63)" in done.stderr
    assert log_bytes(ws) == b""
    ok = run_process("select", "--context", "ctx.md", "--seed", str(2**63 - 1), cwd=ws)
    assert ok.returncode == 0, ok.stderr


def test_a_foreign_big_seed_does_not_brick_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from lesson_credit.core.workspace import Workspace

    monkeypatch.setattr("lesson_credit.core.log.cache.MIN_NEW_BYTES", 0)  # every read writes the cache
    ws_root = make_ws(tmp_path)
    lines = [
        {"type": "session", "session_id": "s1", "base_reward": 0.8, "lessons": [{"path": "a.md", "salience": 1.0}]},
        {"type": "selection", "session_id": "s1", "candidates": ["a.md"], "seed": 2**70, "k": 2**65},
    ]
    (ws_root / LOG_REL).parent.mkdir(parents=True)
    (ws_root / LOG_REL).write_text("".join(json.dumps(x) + "\n" for x in lines))
    first = Workspace(ws_root).lesson_table().as_json()
    cached = Workspace(ws_root)
    assert cached.lesson_table().as_json() == first
    assert cached.selections()[0][1].seed == 2**70 and cached.selections()[0][1].k == 2**65
    done = run_process("status", "--json", cwd=ws_root)
    assert done.returncode == 0, done.stderr[-300:]


def test_session_ids_categories_and_journals_have_limits(tmp_path: Path) -> None:
    ws = make_ws(tmp_path)
    (ws / "j.md").write_text("alpha")
    (ws / "bin.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR alpha")
    (ws / "latin1.md").write_bytes(b"caf\xe9 alpha")
    cases = [
        (["--session-id", "x" * 10_000, "--journal", "j.md"], "200 printable"),
        (["--session-id", "a\tb", "--journal", "j.md"], "200 printable"),
        (["--session-id", "a\x1b[2Jb", "--journal", "j.md"], "200 printable"),
        (["--session-id", "s", "--journal", "bin.md"], "binary"),
        (["--session-id", "s", "--journal", "latin1.md"], "not UTF-8"),
        (["--session-id", "s", "--journal", "j.md", "--category", "a\nb"], "category"),
    ]
    for argv, why in cases:
        done = run_process("record", *argv, "--lessons", "a.md", cwd=ws)
        assert done.returncode == 1 and done.stderr.count("\n") == 1, (argv, done.stderr[-300:])
        assert why in done.stderr, (argv, done.stderr)
    assert log_bytes(ws) == b""
    ok = run_process("record", "--session-id", "é-" + "x" * 198, "--journal", "j.md", "--lessons", "a.md", cwd=ws)
    assert ok.returncode == 0, ok.stderr
