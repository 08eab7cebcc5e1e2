"""Connecting to PostgreSQL (psycopg 3), and what a database error means for a command.

Imported only by the database store (core/log/pgstore.py): a command on the file never loads
psycopg (~90 ms of start-up).

Every connection is opened with bounded waits: `connect_timeout`, TCP keepalives (a server
that goes silent mid-query), and a `statement_timeout` on every statement (a table lock held
by another session must not make `status` wait forever). A setting the URL gives itself is
kept. Ctrl-C while a statement waits is psycopg's: it cancels the statement on the server and
raises KeyboardInterrupt.

Errors are classified by SQLSTATE: a unique violation is left to the caller (it
alone means "already stored"); a failure that may pass (the connection lost, the server
shutting down or read-only, a serialization failure or deadlock, a statement timeout, no
server to connect to) is a `StoreUnavailable` (exit 75: retry later); permission denied
(42501) has its own message; anything else is a one-line StoreError (exit 1). No message
shows the password.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import psycopg
from psycopg import conninfo as pg_conninfo

from lesson_credit.core.base.files import StoreError, StoreUnavailable

Connection = psycopg.Connection[tuple[Any, ...]]

# psycopg logs what it could not clean up after a failure (a COPY cut short by a lost connection:
# "error ignored terminating <psycopg.Copy>"); the failure itself is reported in one line, so
# without a handler of the application's, such a record goes nowhere (not to stderr)
logging.getLogger("psycopg").addHandler(logging.NullHandler())

CONNECT_TIMEOUT_S = 5
STATEMENT_TIMEOUT_S = 15.0  # every statement (reads included), unless the URL's options set one
KEEPALIVES = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3}

INSUFFICIENT_PRIVILEGE = "42501"
READ_ONLY_TRANSACTION = "25006"
QUERY_CANCELED = "57014"  # a statement timeout (or a cancel request)
LOCK_NOT_AVAILABLE = "55P03"  # lock_timeout
# SQLSTATEs (and classes) of failures that may pass: retrying later is the remedy
TEMPORARY_CLASSES = ("08", "40", "53", "57", "58")  # connection, rollback, resources, operator, system
TEMPORARY_STATES = (READ_ONLY_TRANSACTION, LOCK_NOT_AVAILABLE, "55006")  # read-only, lock not available, object in use
# a connection the server refused for these reasons will not succeed by retrying (exit 1)
_REFUSED_FOR_GOOD = (
    "authentication failed",
    "no pg_hba.conf entry",
    "does not exist",
    "permission denied",
    "no password supplied",
    "not permitted to log in",
    "invalid",
)
# the client's SSL settings that the server cannot meet (sslmode=require against a server without
# SSL, a certificate that does not verify): retrying cannot help either (exit 1)
_SSL_REFUSED = ("but SSL was required", "certificate")


def parse_url(url: str) -> dict[str, Any]:
    """The parameters a URL or keyword string sets (libpq's own parser); ValueError if invalid."""
    try:
        return pg_conninfo.conninfo_to_dict(url)
    except psycopg.Error as exc:
        raise ValueError(str(exc)) from None


def display_url(url: str) -> str:
    """The store's URL for messages: user, host, port and database, never the password."""
    try:
        params = parse_url(url)
    except ValueError:
        return "postgresql (unparseable connection string)"
    user = f"{params['user']}@" if params.get("user") else ""
    host = str(params.get("host") or params.get("hostaddr") or "")
    port = f":{params['port']}" if params.get("port") else ""
    dbname = f"/{params['dbname']}" if params.get("dbname") else ""
    return f"postgresql://{user}{host}{port}{dbname}"


def _with_limits(url: str, params: dict[str, Any]) -> str:
    """The URL with our bounded waits added where it does not set them itself."""
    extra: dict[str, Any] = {"application_name": "lesson-credit", "connect_timeout": CONNECT_TIMEOUT_S}
    extra.update(KEEPALIVES)
    extra = {key: value for key, value in extra.items() if key not in params}
    options = str(params.get("options") or "")
    if "statement_timeout" not in options:
        options = f"{options} -c statement_timeout={int(STATEMENT_TIMEOUT_S * 1000)}"
    if "plan_cache_mode" not in options:
        # our statements are prepared (psycopg does it from their 5th use); with the server's
        # default it plans a statement whose plan depends on a position or a LIMIT afresh at every
        # execution, which cost a write more than the insert itself. Every statement of ours reads
        # by an index whatever the values, so one plan serves every execution
        options = f"{options} -c plan_cache_mode=force_generic_plan"
    if "max_parallel_workers_per_gather" not in options:
        # ... but a generic plan estimates `position > $1` at a third of the table: at 1M events the
        # follower's look at the position (every 0.1 s) became a parallel scan, two worker processes
        # started per look. Our reads are ranges of the primary key: no plan of ours gains from them
        options = f"{options} -c max_parallel_workers_per_gather=0"
    if options != str(params.get("options") or ""):
        extra["options"] = options.strip()
    extra["client_encoding"] = "UTF8"
    return pg_conninfo.make_conninfo(url, **extra)


def connect(url: str, name: str) -> Connection:
    """An autocommit connection with bounded waits; StoreError (one line) when it cannot be made."""
    try:
        params = parse_url(url)
    except ValueError:
        raise StoreError(f"{name}: invalid PostgreSQL connection string") from None
    try:
        return psycopg.connect(_with_limits(url, params), autocommit=True)
    except psycopg.Error as exc:
        raise connect_failure(exc, name, params.get("password")) from None


def one_line(exc: BaseException, password: str | None = None) -> str:
    """The error's message on one line (the server's primary message: no CONTEXT or DETAIL), the
    password hidden wherever it stands alone (not inside a word: a short one would garble it)."""
    primary = exc.diag.message_primary if isinstance(exc, psycopg.Error) else None
    text = _sentences(primary or str(exc)) or type(exc).__name__
    return _hidden(text, password)


def _sentences(text: str) -> str:
    """libpq's lines joined as the sentences they are: a line that does not end with a mark of its own
    gets a full stop before a capital ("Connection refused. Is the server running ...?", its hint) and
    a semicolon before anything else (the next host's attempt), so no sentence runs into the next."""
    lines = [" ".join(line.split()) for line in text.splitlines()]
    lines = [line for line in lines if line]
    joined = [
        line if line[-1] in ".!?:;," else line + ("." if following[0].isupper() else ";")
        for line, following in zip(lines, lines[1:], strict=False)
    ]
    return " ".join([*joined, *lines[-1:]])


def _hidden(text: str, password: str | None) -> str:
    if not password:
        return text
    return re.sub(rf"(?<![^\W_]){re.escape(password)}(?![^\W_])", "***", text)


def connect_failure(exc: psycopg.Error, name: str, password: str | None) -> StoreError:
    """A failed connection: temporary (exit 75) unless the server refused us for good (a wrong
    password, an unknown database or role: exit 1) or the client's SSL settings cannot be met. libpq
    gives no SQLSTATE for these: its message tells, read before the password is hidden in it."""
    text = one_line(exc)
    refused = "FATAL" in text and any(marker in text for marker in _REFUSED_FOR_GOOD)
    if refused or any(marker in text for marker in _SSL_REFUSED):
        return StoreError(f"{name}: cannot connect: {_hidden(text, password)}")
    return StoreUnavailable(f"{name}: cannot connect: {_hidden(text, password)}")


def is_temporary(exc: psycopg.Error) -> bool:
    state = exc.sqlstate
    if state is None:  # no answer from the server: the connection failed or was lost
        return isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError)
    return state in TEMPORARY_STATES or state.startswith(TEMPORARY_CLASSES)


def failure(
    exc: psycopg.Error, name: str, doing: str, password: str | None = None, writing: bool = False
) -> StoreError:
    """One line for a failed statement, classified by its SQLSTATE (see the module docstring).
    `writing`: the statement was a write, whose commit a lost connection leaves unconfirmed."""
    text = one_line(exc, password)
    state = exc.sqlstate
    if writing and is_temporary(exc) and (state is None or state.startswith("08") or state in ("57P01", "57P02")):
        return StoreUnavailable(
            f"{name}: {doing}: the connection was lost before the commit was confirmed ({text}); "
            "retry later (if it was stored after all, a retry finds it there)"
        )
    if state == INSUFFICIENT_PRIVILEGE:
        return StoreError(
            f"{name}: {doing}: permission denied ({text}); the role needs SELECT and INSERT on the "
            "lesson_credit tables and USAGE on the schema and its sequence"
        )
    if state == READ_ONLY_TRANSACTION:
        return StoreUnavailable(
            f"{name}: {doing}: the database is read-only (a standby, or read-only by default): {text}"
        )
    if state == QUERY_CANCELED:
        return StoreUnavailable(
            f"{name}: {doing}: no answer in time ({text}; another session may hold a lock on lesson_credit.events)"
        )
    if state is None and is_temporary(exc):
        return StoreUnavailable(f"{name}: {doing}: connection lost: {text}")
    if is_temporary(exc):
        return StoreUnavailable(f"{name}: {doing}: {text} (SQLSTATE {state})")
    return StoreError(f"{name}: {doing}: {text}")
