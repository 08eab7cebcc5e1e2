"""Trajectories: a session's conversation as gptme, Claude Code or Codex CLI wrote it, read as one list.

- gptme `conversation.jsonl`: one message per line, `role` (user / assistant / system), `content`,
  `timestamp`. A tool call is a line `@tool(call-id): {...}` or a fenced block whose language is a
  gptme tool (```shell, ```save path, ...) in an assistant message; its output comes back as the
  next system message.
- Claude Code session files: lines with `type` user / assistant / result; `message.content` is a
  string or a list of blocks: `text`, `tool_use` {name, input}, `tool_result` {content, is_error}.
- Codex CLI rollouts: a `session_meta` line, then `response_item` lines whose `payload.type` is
  `message`, `function_call` / `custom_tool_call` or their `..._output`.

Lines that are not JSON objects, or not messages, are counted and skipped; the file is read only
as a regular file and only up to a cap (the rest is reported, not read).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lesson_credit.core.base.errors import UserError
from lesson_credit.core.base.gc_pause import gc_paused
from lesson_credit.core.base.safe_json import JsonError, decode_json
from lesson_credit.core.base.safe_read import UnsafeFile, read_regular

TRAJECTORY_MAX_BYTES = 64 * 1024 * 1024
GPTME, CLAUDE_CODE, CODEX = "gptme", "claude-code", "codex"
USER, ASSISTANT, SYSTEM, TOOL_CALL, TOOL_RESULT = "user", "assistant", "system", "tool_call", "tool_result"

# gptme's tools, as the language of a fenced block that calls one
GPTME_TOOLS = frozenset(
    "shell ipython python save append patch read browser tmux gh computer screenshot subagent "
    "chats rag morph complete todowrite todoread choice form".split()
)
_GPTME_CALL = re.compile(r"^@(\w+)\([^)\n]*\):", re.MULTILINE)
_FENCE = re.compile(r"^```([\w.-]+)", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Message:
    role: str  # USER, ASSISTANT, SYSTEM, TOOL_CALL or TOOL_RESULT
    text: str
    timestamp: str | None = None
    tool: str | None = None  # the tool called (TOOL_CALL), where the format names it
    is_error: bool = False  # a tool result that reports a failure
    tool_calls: int = 0  # calls made inside this message (gptme writes them in the assistant's text)


@dataclass(frozen=True)
class Trajectory:
    path: str
    format: str
    messages: tuple[Message, ...]
    skipped_lines: int = 0  # lines that were not JSON objects or not messages of the format
    truncated: bool = False  # the file was larger than TRAJECTORY_MAX_BYTES: only its start was read
    model: str | None = None

    @property
    def tool_calls(self) -> int:
        return sum(1 for m in self.messages if m.role == TOOL_CALL) + sum(m.tool_calls for m in self.messages)

    def as_json(self) -> dict[str, Any]:
        return {"path": self.path, "format": self.format, "messages": len(self.messages), "tool_calls": self.tool_calls}


class TrajectoryError(UserError):
    """A trajectory that cannot be read at all; the message is one line."""


def read_trajectory(path: Path, shown_path: str | None = None) -> Trajectory:
    """Read and normalise a trajectory file (a gptme log folder: its conversation.jsonl)."""
    if path.is_dir():
        path = path / "conversation.jsonl"
    try:
        raw = read_regular(path, TRAJECTORY_MAX_BYTES, longer=True)
    except FileNotFoundError:
        raise TrajectoryError(f"trajectory {shown_path or path} not found") from None
    except OSError as exc:
        raise TrajectoryError(f"trajectory {shown_path or path}: {exc.strerror or exc}") from None
    except UnsafeFile as exc:  # a FIFO, a device
        raise TrajectoryError(f"trajectory {exc}") from None
    truncated = len(raw) > TRAJECTORY_MAX_BYTES
    return parse_trajectory(raw[:TRAJECTORY_MAX_BYTES], shown_path or str(path), truncated)


def parse_trajectory(data: bytes, path: str, truncated: bool = False) -> Trajectory:
    with gc_paused():
        return _parse(data, path, truncated)


def _parse(data: bytes, path: str, truncated: bool) -> Trajectory:
    records, skipped = _objects(data, truncated)
    kind = detect_format(records)
    if kind is None:
        raise TrajectoryError(f"trajectory {path}: not a gptme, Claude Code or Codex session file")
    reader = {GPTME: _gptme, CLAUDE_CODE: _claude_code, CODEX: _codex}[kind]
    messages: list[Message] = []
    for record in records:
        found = list(reader(record))
        if not found and not _is_meta(kind, record):
            skipped += 1
        messages.extend(found)
    return Trajectory(path, kind, tuple(messages), skipped, truncated, _model(kind, records))


def _objects(data: bytes, truncated: bool) -> tuple[list[dict[str, Any]], int]:
    lines = data.split(b"\n")
    if truncated and lines:
        lines.pop()  # cut by the cap mid-line
    records: list[dict[str, Any]] = []
    skipped = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = decode_json(line, "", number)
        except JsonError:  # not JSON, nested too deeply, a number no float holds
            skipped += 1
            continue
        if isinstance(obj, dict):
            records.append(obj)
        else:
            skipped += 1
    return records, skipped


def detect_format(records: list[dict[str, Any]]) -> str | None:
    """The format of a trajectory's records: Codex starts with `session_meta`; a top-level `role`
    is gptme; a `type` of user / assistant / result is Claude Code. None when none fits."""
    if records and records[0].get("type") == "session_meta":
        return CODEX
    for record in records[:200]:
        if isinstance(record.get("role"), str) and "content" in record:
            return GPTME
        kind = record.get("type")
        if (kind in (USER, ASSISTANT) and "message" in record) or kind == "result":
            return CLAUDE_CODE
        if record.get("type") == "response_item":
            return CODEX
    return None


def _is_meta(kind: str, record: dict[str, Any]) -> bool:
    """Lines of the format that are not messages (session metadata, events, snapshots): not skipped lines."""
    kind_of = record.get("type")
    if kind == CODEX:
        return kind_of in ("session_meta", "turn_context", "event_msg", "response_item")
    if kind == CLAUDE_CODE:
        return isinstance(kind_of, str)
    return False


def _text(value: Any) -> str:
    """Message content as text: a string, or the text of a list of blocks, or JSON of anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for block in value:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif isinstance(block, dict) and "content" in block:
                parts.append(_text(block["content"]))
        return "\n".join(parts)
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False)


def _stamp(record: dict[str, Any]) -> str | None:
    value = record.get("timestamp")
    return value if isinstance(value, str) else None


def gptme_tool_calls(text: str) -> int:
    """Tool calls written in a gptme assistant message: `@tool(id):` lines and tool-language fences.
    A fence opens and closes with ```; only opening fences name a language, so each counts once."""
    fences = 0
    if "```" in text:
        fences = sum(1 for match in _FENCE.finditer(text) if match.group(1).split(".")[0].lower() in GPTME_TOOLS)
    return (len(_GPTME_CALL.findall(text)) if "@" in text else 0) + fences


def _gptme(record: dict[str, Any]) -> Iterator[Message]:
    role = record.get("role")
    if role not in (USER, ASSISTANT, SYSTEM):
        return
    text = _text(record.get("content"))
    calls = gptme_tool_calls(text) if role == ASSISTANT else 0
    yield Message(role, text, _stamp(record), tool_calls=calls)


def _claude_code(record: dict[str, Any]) -> Iterator[Message]:
    kind, stamp = record.get("type"), _stamp(record)
    if kind == "result":
        result = record.get("result")
        if isinstance(result, str) and result:
            yield Message(SYSTEM, result, stamp)
        return
    if kind not in (USER, ASSISTANT):
        return
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        if content:
            yield Message(kind, content, stamp)
        return
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict):
            continue
        block_type = block.get("type")
        if block_type == "text" and isinstance(block.get("text"), str) and block["text"]:
            yield Message(kind, block["text"], stamp)
        elif block_type == "tool_use":
            name = block.get("name") if isinstance(block.get("name"), str) else None
            yield Message(TOOL_CALL, _text(block.get("input")), stamp, tool=name)
        elif block_type == "tool_result":
            yield Message(TOOL_RESULT, _text(block.get("content")), stamp, is_error=block.get("is_error") is True)


def _codex(record: dict[str, Any]) -> Iterator[Message]:
    if record.get("type") != "response_item" or not isinstance(record.get("payload"), dict):
        return
    payload, stamp = record["payload"], _stamp(record)
    kind = payload.get("type")
    if kind == "message":
        role = payload.get("role")
        role = role if role in (USER, ASSISTANT) else SYSTEM  # developer and system prompts
        text = _text(payload.get("content"))
        if text:
            yield Message(role, text, stamp)
    elif kind in ("function_call", "custom_tool_call"):
        name = payload.get("name") if isinstance(payload.get("name"), str) else None
        arguments = payload.get("arguments", payload.get("input"))
        yield Message(TOOL_CALL, _text(arguments), stamp, tool=name)
    elif kind in ("function_call_output", "custom_tool_call_output"):
        output = payload.get("output")
        if isinstance(output, dict):  # {"output": ..., "metadata": {"exit_code": ...}}
            meta = output.get("metadata")
            failed = isinstance(meta, dict) and meta.get("exit_code") not in (None, 0)
            yield Message(TOOL_RESULT, _text(output.get("output")), stamp, is_error=failed)
        else:
            yield Message(TOOL_RESULT, _text(output), stamp)


def _model(kind: str, records: list[dict[str, Any]]) -> str | None:
    if kind == CODEX and records:
        payload = records[0].get("payload")
        model = payload.get("model") if isinstance(payload, dict) else None
        return model if isinstance(model, str) else None
    if kind == CLAUDE_CODE:
        for record in records:
            message = record.get("message")
            if record.get("type") == ASSISTANT and isinstance(message, dict) and isinstance(message.get("model"), str):
                return str(message["model"])
    return None
