"""`state/lesson-thompson/config.toml`: the workspace's credit settings and selection size."""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lesson_credit.core.bandit.policy import check_policy
from lesson_credit.core.base.files import WriteGuard, atomic_write
from lesson_credit.core.model.settings import CreditSettings
from lesson_credit.core.model.sources import DEFAULT_PRIORITY, check_priority

DEFAULT_K = 10
# gptme-sessions' string outcomes as rewards, as its own bandit counts them (thompson_sampling.py):
# productive 1, noop / failed / violated_policy 0. `unknown` maps to nothing: the session stays pending.
DEFAULT_OUTCOMES: dict[str, float] = {"productive": 1.0, "noop": 0.0, "failed": 0.0, "violated_policy": 0.0}
PENDING_OUTCOME = "unknown"
DEFAULT_JOIN_WINDOW = 300.0  # seconds: a record joins a session logged this close to it (when no id matches)


@dataclass(frozen=True)
class RecordsSettings:
    """The `[records]` table: where gptme-sessions records and trajectories are read from (docs/records.md).

    `path`: the records file (else $GPTME_SESSIONS_DIR/session-records.jsonl, else the workspace's
    state/sessions/session-records.jsonl); `window`: seconds within which a record joins a session
    by time when no id matches; `trajectory_dirs`: folders searched for a session's trajectory by
    its id, and the only folders outside the workspace a trajectory is read from."""

    path: str | None = None
    window: float = DEFAULT_JOIN_WINDOW
    trajectory_dirs: tuple[str, ...] = ()

    @property
    def is_default(self) -> bool:
        return self == RecordsSettings()


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class Config:
    credit: CreditSettings = field(default_factory=CreditSettings)
    k: int = DEFAULT_K
    extra: dict[str, Any] = field(default_factory=dict)  # keys we do not know, kept on write
    outcome_overrides: dict[str, float] = field(default_factory=dict)  # the [outcomes] table
    policy: str | None = None  # [select] policy; None: joint (Workspace.policy: the strategy after an imported prior)
    select_extra: dict[str, Any] = field(default_factory=dict)  # other keys of [select], kept on write
    reward_priority: tuple[str, ...] = DEFAULT_PRIORITY  # [rewards] priority (core.model.sources)
    records: RecordsSettings = field(default_factory=RecordsSettings)  # the [records] table
    categories: dict[str, tuple[str, ...]] = field(default_factory=dict)  # [categories] name = [keywords]

    @property
    def outcomes(self) -> dict[str, float]:
        """String outcome -> reward: the defaults, then config.toml's [outcomes]."""
        return {**DEFAULT_OUTCOMES, **self.outcome_overrides}


def load_config(path: Path) -> Config:
    if not path.is_file():
        return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    data = dict(data)
    prior = data.pop("prior", {})
    if not isinstance(prior, dict):
        raise ConfigError(f"{path}: [prior] must be a table with alpha and beta")
    known: dict[str, Any] = {}
    for key in ("strategy", "floor", "decay"):
        if key in data:
            known[key] = data.pop(key)
    k = data.pop("k", DEFAULT_K)
    outcomes = _outcomes(path, data.pop("outcomes", {}))
    priority = _priority(path, data.pop("rewards", {}))
    records = _records(path, data.pop("records", {}))
    policy, select_extra = _select(path, data.pop("select", {}))
    categories = _categories(path, data.pop("categories", {}))
    try:
        settings = CreditSettings(
            strategy=str(known.get("strategy", "seed")),
            floor=float(known.get("floor", 0.3)),
            decay=float(known.get("decay", 1.0)),
            prior_alpha=float(prior.get("alpha", 1.0)),
            prior_beta=float(prior.get("beta", 1.0)),
        )
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"{path}: k must be a positive integer, got {k!r}")
    return Config(
        settings, k, data, outcomes, policy, select_extra, reward_priority=priority, records=records,
        categories=categories,
    )  # fmt: skip


MAX_CATEGORY_NAME = 200  # as `record --category` (core.commands.MAX_SESSION_ID)
MAX_CATEGORY_KEYWORDS = 10_000  # over every category of [categories]


def _categories(path: Path, table: Any) -> dict[str, tuple[str, ...]]:
    """[categories]: category name = [keywords]; `select` without --category takes the category
    with the most of its keywords in the context (core.bandit.select.category_of)."""
    if not isinstance(table, dict):
        raise ConfigError(f'{path}: [categories] must be a table of name = [keywords], e.g. docs = ["readme"]')
    out: dict[str, tuple[str, ...]] = {}
    for name, keywords in table.items():
        if not name.strip() or len(name) > MAX_CATEGORY_NAME or not name.isprintable():
            raise ConfigError(f"{path}: [categories] a name must be one printable line (at most 200), got {name!r}")
        if (
            not isinstance(keywords, list)
            or not keywords
            or not all(isinstance(k, str) and k.strip() for k in keywords)
        ):
            raise ConfigError(f"{path}: [categories] {name!r} must be a list of non-empty keywords")
        out[name] = tuple(keywords)
    if sum(map(len, out.values())) > MAX_CATEGORY_KEYWORDS:
        raise ConfigError(f"{path}: [categories] has more than {MAX_CATEGORY_KEYWORDS:,} keywords")
    return out


def _priority(path: Path, table: Any) -> tuple[str, ...]:
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [rewards] must be a table with priority = [...]")
    unknown = sorted(set(table) - {"priority"})
    if unknown:
        raise ConfigError(f"{path}: [rewards] has unknown key {unknown[0]!r} (only priority)")
    try:
        return check_priority(table.get("priority", DEFAULT_PRIORITY))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{path}: [rewards] {exc}") from None


def _records(path: Path, table: Any) -> RecordsSettings:
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [records] must be a table (path, window, trajectory_dirs)")
    unknown = sorted(set(table) - {"path", "window", "trajectory_dirs"})
    if unknown:
        raise ConfigError(f"{path}: [records] has unknown key {unknown[0]!r} (path, window, trajectory_dirs)")
    file = table.get("path")
    if file is not None and (not isinstance(file, str) or not file.strip()):
        raise ConfigError(f"{path}: [records] path must be a non-empty string")
    window = table.get("window", DEFAULT_JOIN_WINDOW)
    if isinstance(window, bool) or not isinstance(window, int | float) or not 0 <= window <= 7 * 86400:
        raise ConfigError(f"{path}: [records] window must be seconds between 0 and 604800, got {window!r}")
    dirs = table.get("trajectory_dirs", [])
    if not isinstance(dirs, list) or not all(isinstance(d, str) and d.strip() for d in dirs):
        raise ConfigError(f"{path}: [records] trajectory_dirs must be a list of folder names")
    return RecordsSettings(file, float(window), tuple(dirs))


def _select(path: Path, table: Any) -> tuple[str | None, dict[str, Any]]:
    """The [select] table: its policy (checked) and the keys we do not know."""
    if not isinstance(table, dict):
        raise ConfigError(f'{path}: [select] must be a table, e.g. policy = "seed"')
    rest = dict(table)
    if any(isinstance(v, dict | list) for v in rest.values()):
        raise ConfigError(f'{path}: [select] holds plain values only, e.g. policy = "seed"')
    if "policy" not in rest:
        return None, rest
    try:
        return check_policy(rest.pop("policy")), rest
    except ValueError as exc:
        raise ConfigError(f"{path}: [select] {exc}") from None


def _outcomes(path: Path, table: Any) -> dict[str, float]:
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [outcomes] must be a table of outcome = reward")
    out = {}
    for label, value in table.items():
        if label == PENDING_OUTCOME:
            raise ConfigError(f"{path}: outcome {PENDING_OUTCOME!r} always leaves a session pending")
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
            raise ConfigError(f"{path}: outcome {label!r} must map to a number in [0, 1], got {value!r}")
        out[label] = float(value)
    return out


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ConfigError(f"cannot store {value!r}")
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    raise ConfigError(f"cannot store a {type(value).__name__} in config.toml")


def _toml_key(key: str) -> str:
    return key if key and all(ch.isascii() and (ch.isalnum() or ch in "_-") for ch in key) else _toml_value(key)


def save_config(path: Path, config: Config, guard: WriteGuard | None = None) -> None:
    settings = config.credit
    lines = [
        "# lesson-credit settings (written by `lesson-credit replay --write` or the dashboard's ctrl+s)",
        f"strategy = {_toml_value(settings.strategy)}",
        f"floor = {_toml_value(settings.floor)}",
        f"decay = {_toml_value(settings.decay)}",
        f"k = {config.k}",
    ]
    for key, value in config.extra.items():
        if not isinstance(value, dict | list):
            lines.append(f"{key} = {_toml_value(value)}")
    lines += [
        "",
        "[prior]",
        f"alpha = {settings.prior_alpha!r}",
        f"beta = {settings.prior_beta!r}",
        "",
    ]
    if config.reward_priority != DEFAULT_PRIORITY:
        lines += ["[rewards]", f"priority = {_toml_value(list(config.reward_priority))}", ""]
    if not config.records.is_default:
        records = config.records
        lines.append("[records]")
        if records.path is not None:
            lines.append(f"path = {_toml_value(records.path)}")
        lines.append(f"window = {_toml_value(records.window)}")
        if records.trajectory_dirs:
            lines.append(f"trajectory_dirs = {_toml_value(list(records.trajectory_dirs))}")
        lines.append("")
    if config.outcome_overrides:
        lines.append("[outcomes]")
        lines += [f"{_toml_value(label)} = {value!r}" for label, value in config.outcome_overrides.items()]
        lines.append("")
    if config.categories:
        lines.append("[categories]")
        lines += [f"{_toml_key(name)} = {_toml_value(list(words))}" for name, words in config.categories.items()]
        lines.append("")
    select = {**({"policy": config.policy} if config.policy else {}), **config.select_extra}
    if select:
        lines += ["[select]", *(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in select.items()), ""]
    for key, value in config.extra.items():  # tables we do not own, e.g. [store] url: kept
        if isinstance(value, dict) and all(not isinstance(v, dict | list) for v in value.values()):
            lines += [f"[{_toml_key(key)}]", *(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()), ""]
    atomic_write(path, "\n".join(lines).encode("utf-8"), guard)
