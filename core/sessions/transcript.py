"""A trajectory as one text to read: messages and tool calls in order, long outputs collapsed.

The transcript view shows this text with each lesson's keyword hits highlighted, as the journal
view does, and searches within it; building it here keeps it a pure function a test can check.
A message longer than the limits keeps its first lines and says how much was left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lesson_credit.core.sessions.trajectory import ASSISTANT, SYSTEM, TOOL_CALL, TOOL_RESULT, USER, Message, Trajectory

COLLAPSE_LINES = 12  # lines of a message shown before it is collapsed
COLLAPSE_CHARS = 1500  # characters likewise
TRANSCRIPT_LIMIT = 2_000_000  # characters of transcript text built; the rest is left out with a note

_TIME = re.compile(r"^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})")
_LABELS = {USER: "user", ASSISTANT: "assistant", SYSTEM: "system", TOOL_CALL: "tool call", TOOL_RESULT: "tool result"}


@dataclass(frozen=True)
class Transcript:
    text: str
    starts: tuple[int, ...]  # offset of each message's heading in `text`
    collapsed: int  # messages shown only in part
    left_out: int  # messages not shown at all (past TRANSCRIPT_LIMIT)


def heading(index: int, message: Message) -> str:
    label = _LABELS.get(message.role, message.role)
    if message.role == TOOL_CALL and message.tool:
        label += f" {message.tool}"
    if message.role == TOOL_RESULT and message.is_error:
        label += " (error)"
    if message.tool_calls:
        label += f" ({message.tool_calls} tool call{'s' if message.tool_calls != 1 else ''})"
    stamp = f"  {short_time(message.timestamp)}" if message.timestamp else ""
    return f"── {index + 1}. {label}{stamp}"


def short_time(stamp: str) -> str:
    """`2026-03-01T10:00:01.334+00:00` as `2026-03-01 10:00:01`; anything else as written."""
    match = _TIME.match(stamp)
    return f"{match.group(1)} {match.group(2)}" if match else stamp


def collapse(text: str, lines: int = COLLAPSE_LINES, chars: int = COLLAPSE_CHARS) -> tuple[str, bool]:
    """The start of a long text and a line saying what was left out; (text, False) when short."""
    kept = text
    cut_lines = text.count("\n", 0, chars + 1) >= lines
    if cut_lines:
        at = -1
        for _ in range(lines):
            at = text.find("\n", at + 1)
        kept = text[:at]
    if len(kept) > chars:
        kept = kept[:chars]
    if kept == text:
        return text, False
    rest = text[len(kept) :].removeprefix("\n")  # the newline that ended the last line shown is not a line
    hidden_lines = rest.count("\n") + (0 if rest.endswith("\n") or not rest else 1)
    return kept.rstrip("\n") + f"\n[… {len(text) - len(kept):,} more characters, {hidden_lines:,} more lines]", True


def transcript(trajectory: Trajectory, *, expand: bool = False, limit: int = TRANSCRIPT_LIMIT) -> Transcript:
    """The trajectory's messages as one text (`expand`: nothing collapsed, up to `limit`)."""
    parts: list[str] = []
    starts: list[int] = []
    size = 0
    collapsed = 0
    for index, message in enumerate(trajectory.messages):
        body = message.text
        if not expand:
            body, cut = collapse(body)
            collapsed += cut
        block = heading(index, message) + "\n" + body.rstrip("\n") + "\n\n"
        if size + len(block) > limit:
            left = len(trajectory.messages) - index
            parts.append(f"[… {left:,} more messages not shown: the transcript is cut at {limit:,} characters]\n")
            return Transcript("".join(parts), tuple(starts), collapsed, left)
        starts.append(size)
        parts.append(block)
        size += len(block)
    return Transcript("".join(parts), tuple(starts), collapsed, 0)


def find_all(text: str, needle: str, most: int = 10_000) -> list[tuple[int, int]]:
    """(start, end) of each case-insensitive occurrence of `needle` in `text`, at most `most`."""
    if not needle:
        return []
    haystack, key = text.lower(), needle.lower()
    if len(haystack) != len(text):  # lower-casing changed lengths (rare scripts): search as typed
        haystack, key = text, needle
    out: list[tuple[int, int]] = []
    at = haystack.find(key)
    while at >= 0 and len(out) < most:
        out.append((at, at + len(key)))
        at = haystack.find(key, at + max(1, len(key)))
    return out
