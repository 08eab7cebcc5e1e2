"""`state/lesson-thompson/config.toml`: the workspace's credit settings and selection size."""

from __future__ import annotations

import time
from pathlib import Path
from types import EllipsisType
from typing import Any

from msgspec import Struct, field

from lesson_credit.core.base.errors import TemporaryFailure, UserError
from lesson_credit.core.base.files import WriteGuard, atomic_write
from lesson_credit.core.base.safe_read import SETTINGS_MAX_BYTES, UnsafeFile, read_regular
from lesson_credit.core.model.credit import DEFAULT_FLOOR, DEFAULT_STRATEGY
from lesson_credit.core.model.settings import CreditSettings
from lesson_credit.core.model.sources import DEFAULT_PRIORITY, check_priority

SETTLE_S = 0.02  # a config.toml that may be mid-save (empty, or changed while open) is read again this much later

DEFAULT_K = 10
DEFAULT_DECAY = 1.0  # what no `decay` means: no decay
# gptme-sessions' string outcomes as rewards, as its own bandit counts them (thompson_sampling.py):
# productive 1, noop / failed / violated_policy 0. `unknown` maps to nothing: the session stays pending.
DEFAULT_OUTCOMES: dict[str, float] = {"productive": 1.0, "noop": 0.0, "failed": 0.0, "violated_policy": 0.0}
PENDING_OUTCOME = "unknown"
DEFAULT_JOIN_WINDOW = 300.0  # seconds: a record joins a session logged this close to it (when no id matches)


class RecordsSettings(Struct, frozen=True):
    """The `[records]` table: where gptme-sessions records and trajectories are read from (docs/records.md).

    `path`: the records file (else $GPTME_SESSIONS_DIR/session-records.jsonl, else the workspace's
    state/sessions/session-records.jsonl); `window`: seconds within which a record joins a session
    by time when no id matches; `trajectory_dirs`: folders searched for a session's trajectory by
    its id, and the only folders outside the workspace a trajectory is read from."""

    path: str | None = None
    window: float = DEFAULT_JOIN_WINDOW
    trajectory_dirs: tuple[str, ...] = ()


class ConfigError(UserError):
    pass


class Config(Struct, frozen=True):
    credit: CreditSettings = field(default_factory=CreditSettings)
    k: int = DEFAULT_K
    extra: dict[str, Any] = field(default_factory=dict)  # [store] and tables we do not know (kept on write)
    outcome_overrides: dict[str, float] = field(default_factory=dict)  # the [outcomes] table
    policy: str | None = None  # [select] policy; None: joint (Workspace.policy: the strategy after an imported prior)
    reward_priority: tuple[str, ...] = DEFAULT_PRIORITY  # [rewards] priority (core.model.sources)
    records: RecordsSettings = field(default_factory=RecordsSettings)  # the [records] table
    categories: dict[str, tuple[str, ...]] = field(default_factory=dict)  # [categories] name = [keywords]

    @property
    def outcomes(self) -> dict[str, float]:
        """String outcome -> reward: the defaults, then config.toml's [outcomes]."""
        return {**DEFAULT_OUTCOMES, **self.outcome_overrides}


KEYS = ("strategy", "floor", "decay", "k")  # the top-level keys
TABLES = (
    "prior",
    "outcomes",
    "rewards",
    "records",
    "select",
    "categories",
    "store",
)  # [store] is read by core.log.stores


def read_config_text(path: Path) -> str | None:
    """config.toml's text, None when there is none. A regular file under the size cap only: a
    directory or FIFO in its place, or a 2 GB file, is a one-line ConfigError, never the defaults."""
    try:
        raw = read_regular(path, SETTINGS_MAX_BYTES)
    except FileNotFoundError:
        return None
    except UnsafeFile as exc:
        raise ConfigError(str(exc)) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 (byte {exc.start})") from None


def unknown_key(path: Path, name: str, known: tuple[str, ...], where: str = "") -> ConfigError:
    """The error for a key we do not know, naming the nearest known one (a misspelling, most often)."""
    import difflib

    near = difflib.get_close_matches(name, known, n=1)
    hint = f"did you mean {near[0]!r}?" if near else f"known: {', '.join(known)}"
    return ConfigError(f"{path}: {where}unknown key {name!r} ({hint})")


def _number(path: Path, table: dict[str, Any], key: str, default: float, where: str = "") -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{path}: {where}{key} must be a number, got {value!r}")
    return float(value)


def load_config(path: Path) -> Config:
    return read_config(path)[0]


def read_config(path: Path) -> tuple[Config, str | None]:
    """config.toml's settings and the text they were read from (None: no file, the defaults). An empty
    file is read once more SETTLE_S later: an editor saving in place empties it first, and the empty
    file is a valid one (the defaults), which a grade would then fold and write bandit-state.json from."""
    text = read_config_text(path)
    if text == "":
        time.sleep(SETTLE_S)
        text = read_config_text(path)
    return parse_config(path, text), text


def parse_config(path: Path, text: str | None) -> Config:
    """The settings in config.toml's `text` (None: no file, the defaults); `path` names it in errors."""
    if text is None:
        return Config()
    import tomllib  # here: most workspaces have no config.toml

    from lesson_credit.core.base import safe_toml

    try:
        data = safe_toml.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    for name, value in data.items():  # a table we do not know is kept, unless it is a known one misspelt
        if name not in KEYS + TABLES and not (isinstance(value, dict) and not _near(name, TABLES)):
            raise unknown_key(path, name, KEYS + TABLES)
    _none_swallowed(path, data, text)
    prior = data.get("prior", {})
    if not isinstance(prior, dict):
        raise ConfigError(f"{path}: [prior] must be a table with alpha and beta")
    if unknown := sorted(set(prior) - {"alpha", "beta"}):
        raise unknown_key(path, unknown[0], ("alpha", "beta"), "[prior] ")
    strategy = data.get("strategy", DEFAULT_STRATEGY)
    if not isinstance(strategy, str):
        raise ConfigError(f"{path}: strategy must be a string, got {strategy!r}")
    k = data.get("k", DEFAULT_K)
    outcomes = _outcomes(path, data.get("outcomes", {}))
    priority = _priority(path, data.get("rewards", {}))
    records = _records(path, data.get("records", {}))
    policy = _select(path, data.get("select", {}))
    categories = _categories(path, data.get("categories", {}))
    try:
        settings = CreditSettings(
            strategy=strategy,
            floor=_number(path, data, "floor", DEFAULT_FLOOR),
            decay=_number(path, data, "decay", DEFAULT_DECAY),
            prior_alpha=_number(path, prior, "alpha", 1.0, "[prior] "),
            prior_beta=_number(path, prior, "beta", 1.0, "[prior] "),
        )
    except (TypeError, ValueError) as exc:  # (a ConfigError of _number's is not one: it passes)
        raise ConfigError(f"{path}: {exc}") from None
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"{path}: k must be a positive integer, got {k!r}")
    extra = {name: value for name, value in data.items() if name not in KEYS + TABLES or name == "store"}
    return Config(
        settings, k, extra, outcomes, policy, reward_priority=priority, records=records, categories=categories
    )


def _none_swallowed(path: Path, data: dict[str, Any], text: str) -> None:
    """A top-level setting written below a `[table]` line (nested ones too: `[store.options]`, `[[mytool.runs]]`) is
    that table's key in TOML: in [outcomes] it would be an outcome, in [store] or another tool's table ignored, the
    default left in force without a word. Refused, naming the table as its line does. One the setting's own line puts
    in a table (`mytool = {decay = 0.97}`, `mytool.decay = 0.97`) is that table's, as written: kept."""
    headers = _table_lines(text)

    def look(table: dict[str, Any], at: tuple[str, ...]) -> None:
        if at in headers and (swallowed := sorted(set(table) & set(KEYS))):
            raise ConfigError(
                f"{path}: {swallowed[0]} is inside {headers[at]} (TOML reads every key below a [table] line into "
                f"it): put {swallowed[0]} above the first [table] line"
            )
        for name, value in table.items():
            if at == () and name == "categories":  # (a category may be named anything; a setting there is refused
                continue  # as not a list of keywords)
            for inner in value if isinstance(value, list) else [value]:
                if isinstance(inner, dict):
                    look(inner, (*at, name))

    look(data, ())


def _table_lines(text: str) -> dict[tuple[str, ...], str]:
    """The tables `text`'s `[table]` and `[[table]]` lines name: each one's keys, and the line as written."""
    import re
    import tomllib

    out: dict[tuple[str, ...], str] = {}
    for found in re.finditer(r"^[ \t]*(\[\[?)([^\]\n]+)(\]\]?)[ \t]*(?:#.*)?$", text, re.MULTILINE):
        try:  # (a line of a multi-line string or array may look like one: it names no table read)
            named = tomllib.loads(f"{found.group(2)} = 0")
        except tomllib.TOMLDecodeError:
            continue
        keys: list[str] = []
        while isinstance(named, dict) and len(named) == 1:
            key, named = next(iter(named.items()))
            keys.append(key)
        out[tuple(keys)] = f"{found.group(1)}{found.group(2).strip()}{found.group(3)}"
    return out


def _near(name: str, known: tuple[str, ...]) -> bool:
    import difflib

    return bool(difflib.get_close_matches(name, known, n=1))


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


def _select(path: Path, table: Any) -> str | None:
    """The [select] table's policy (checked); None when it names none."""
    if not isinstance(table, dict):
        raise ConfigError(f'{path}: [select] must be a table, e.g. policy = "seed"')
    if unknown := sorted(set(table) - {"policy"}):
        raise unknown_key(path, unknown[0], ("policy",), "[select] ")
    if "policy" not in table:
        return None
    from lesson_credit.core.bandit.policy import check_policy  # the policies' module draws: not every command's

    try:
        return check_policy(table["policy"])
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


HEADER = "lesson-credit settings (docs/format.md §9); `replay --write` and ctrl+s keep what else is here"


class ConfigChanged(TemporaryFailure, ConfigError):
    """config.toml is not the text a save started from (an editor saved it meanwhile): nothing
    written; a retry may succeed (exit 75)."""


def save_config(
    path: Path, config: Config, guard: WriteGuard | None = None, *, base: str | None | EllipsisType = ...
) -> None:
    """Write `config`'s settings into config.toml, changing only the values that differ: comments,
    order, quoting and tables we do not know (such as [store]) stay as written. Into the file as it
    is now, or, given `base` (the text `config` was read from, None for no file: `read_config`),
    into that text, and only while the file still holds it (ConfigChanged, nothing written, else;
    an empty file's text is "", so `...` marks no base given)."""
    import tomllib

    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    from lesson_credit.core.base import safe_toml

    text = read_config_text(path) if isinstance(base, EllipsisType) else base
    try:
        if text is not None:
            safe_toml.check_shape(text)
        doc = tomlkit.parse(text) if text is not None else tomlkit.document()
    except (TOMLKitError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: arrays or tables nested too deeply to read") from None
    if text is None:
        doc.add(tomlkit.comment(HEADER))
    settings, records = config.credit, config.records
    top = (
        ("strategy", settings.strategy, DEFAULT_STRATEGY),
        ("floor", settings.floor, DEFAULT_FLOOR),
        ("decay", settings.decay, DEFAULT_DECAY),
        ("k", config.k, DEFAULT_K),
    )
    _put_top_level(doc, top)
    _put_table(doc, "prior", {"alpha": (settings.prior_alpha, 1.0), "beta": (settings.prior_beta, 1.0)})
    _put_table(doc, "rewards", {"priority": (list(config.reward_priority), list(DEFAULT_PRIORITY))})
    _put_table(
        doc,
        "records",
        {
            "path": (records.path, None),
            "window": (records.window, DEFAULT_JOIN_WINDOW),
            "trajectory_dirs": (list(records.trajectory_dirs), []),
        },
    )
    _put_table(doc, "outcomes", {label: (value, None) for label, value in config.outcome_overrides.items()})
    _put_table(doc, "select", {"policy": (config.policy, None)})
    data = tomlkit.dumps(doc).encode("utf-8")
    if not isinstance(base, EllipsisType) and read_config_text(path) != base:
        raise ConfigChanged(f"{path}: changed while it was being saved; nothing written, retry later")
    atomic_write(path, data, guard)


def _put(table: Any, key: str, value: Any, default: Any, at: int | None = None) -> None:
    """Set `key` to `value` when it differs from what the table has; an absent key only when the
    value is not the default, what its absence reads as (None: the key is removed). `at`: where in
    the table's items a new key goes (default: where tomlkit puts it)."""
    if key in table:
        if value is None:
            del table[key]
        elif table[key] != value:
            table[key] = value
    elif value is not None and value != default:
        if at is None:
            table[key] = value
        else:
            table._insert_at(at, key, value)  # (tomlkit's own insert, since 0.5: no public one places a key)


def _put_top_level(doc: Any, values: tuple[tuple[str, Any, Any], ...]) -> None:
    """`_put` each (key, value, default) of the top level, a new key after the last one above the first
    table (`_top_level_slot`), with a blank line between the keys and a table (or its comment) below."""
    from tomlkit.items import Whitespace

    before = len(doc.body)
    for key, value, default in values:
        _put(doc, key, value, default, _top_level_slot(doc))
    slot = _top_level_slot(doc)
    if len(doc.body) > before and slot and doc.body[slot - 1][0] is not None:
        if not isinstance(doc.body[slot][1], Whitespace):  # a key right above a table or its comment
            trivia = doc.body[slot - 1][1].trivia
            trivia.trail = trivia.trail.rstrip("\n") + "\n\n"


def _top_level_slot(doc: Any) -> int | None:
    """Where a new top-level key goes so that no comment leaves what it is about: before the first
    table's own comment lines (those right above its header) and the blank lines above them. tomlkit
    puts it just above the header, under the table's comment. None: no table, the key goes last."""
    from tomlkit.items import AoT, Comment, Table, Whitespace

    body = doc.body
    first = next((i for i, (_, item) in enumerate(body) if isinstance(item, Table | AoT)), None)
    if first is None:
        return None
    while first > 0 and isinstance(body[first - 1][1], Comment):
        first -= 1
    while first > 0 and isinstance(body[first - 1][1], Whitespace):
        first -= 1
    return first


def _put_table(doc: Any, name: str, values: dict[str, tuple[Any, Any]]) -> None:
    """`_put` each key of [name] as (value, default); the table is added only when one is needed."""
    import tomlkit

    if name not in doc:
        if all(value is None or value == default for value, default in values.values()):
            return
        doc[name] = tomlkit.table()
    for key, (value, default) in values.items():
        _put(doc[name], key, value, default)
