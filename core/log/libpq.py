"""A small synchronous PostgreSQL client over libpq (ctypes): what the database store needs, without
importing psycopg (`record` on a database is meant to stay within 50 ms of the file; importing psycopg
alone costs 90-150 ms, this module and libpq about 5 ms).

The libpq is the one psycopg-binary ships (found without importing it), else the system's. Queries
take `$1`-style parameters: text sent as text, bytes as binary (bytea), None as NULL; results come
back as text (None for NULL), which the caller converts. A query is sent and its result awaited
with select() on the socket, so Ctrl-C interrupts a wait (the connection is then dropped). One
connection is safe to share between threads (a lock around each exchange).
"""

from __future__ import annotations

import contextlib
import ctypes
import select
import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

Param = str | bytes | int | None

# ExecStatusType
_COMMAND_OK, _TUPLES_OK, _COPY_IN = 1, 2, 4
_CONNECTION_OK = 0
_PQTRANS_IDLE, _PQTRANS_INTRANS, _PQTRANS_INERROR = 0, 2, 3
_DIAG_SQLSTATE = ord("C")
_COPY_CHUNK = 1 << 20

UNIQUE_VIOLATION = "23505"
LOCK_NOT_AVAILABLE = "55P03"


class PgError(Exception):
    """An error the server or libpq reported; `sqlstate` when the server gave one."""

    def __init__(self, message: str, sqlstate: str | None = None) -> None:
        super().__init__(" ".join(message.split()) or "unknown error")
        self.sqlstate = sqlstate


class LibpqMissing(PgError):
    """No libpq could be loaded."""


class _Notify(ctypes.Structure):
    _fields_ = [("relname", ctypes.c_char_p), ("be_pid", ctypes.c_int), ("extra", ctypes.c_char_p)]


class _Option(ctypes.Structure):
    _fields_ = [
        ("keyword", ctypes.c_char_p),
        ("envvar", ctypes.c_char_p),
        ("compiled", ctypes.c_char_p),
        ("val", ctypes.c_char_p),
        ("label", ctypes.c_char_p),
        ("dispchar", ctypes.c_char_p),
        ("dispsize", ctypes.c_int),
    ]


_lib: ctypes.CDLL | None = None
_loading = threading.Lock()
_NoticeProcessor = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)
# the server's notices and warnings ("schema already exists", "terminating connection") are not
# for the user: libpq's default prints them on stderr, this drops them (kept alive: libpq calls it)
_IGNORE_NOTICE = _NoticeProcessor(lambda arg, message: None)


def _candidates() -> Iterator[str]:
    """Where libpq may be: psycopg-binary's own copy first (the one psycopg would use), then the system's."""
    import importlib.util

    spec = importlib.util.find_spec("psycopg_binary")  # finds, does not import
    if spec is not None and spec.submodule_search_locations:
        package = Path(next(iter(spec.submodule_search_locations)))
        for folder in (package.parent / "psycopg_binary.libs", package / ".dylibs", package):
            for pattern in ("libpq*.so*", "libpq*.dylib", "libpq*.dll"):
                for path in sorted(folder.glob(pattern)):
                    yield str(path)
    yield {"darwin": "libpq.5.dylib", "win32": "libpq.dll"}.get(sys.platform, "libpq.so.5")
    import ctypes.util

    found = ctypes.util.find_library("pq") or ctypes.util.find_library("libpq")
    if found:
        yield found


def _declare(lib: ctypes.CDLL) -> None:
    p, i, s = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p
    pp = ctypes.POINTER(ctypes.c_char_p)
    protos: dict[str, tuple[object, list[object]]] = {
        "PQconnectdbParams": (p, [pp, pp, i]),
        "PQstatus": (i, [p]),
        "PQerrorMessage": (s, [p]),
        "PQfinish": (None, [p]),
        "PQsocket": (i, [p]),
        "PQtransactionStatus": (i, [p]),
        "PQsendQuery": (i, [p, s]),
        "PQsendQueryParams": (i, [p, s, i, p, pp, ctypes.POINTER(i), ctypes.POINTER(i), i]),
        "PQconsumeInput": (i, [p]),
        "PQisBusy": (i, [p]),
        "PQgetResult": (p, [p]),
        "PQresultStatus": (i, [p]),
        "PQresultErrorMessage": (s, [p]),
        "PQresultErrorField": (s, [p, i]),
        "PQntuples": (i, [p]),
        "PQnfields": (i, [p]),
        "PQgetvalue": (p, [p, i, i]),
        "PQgetlength": (i, [p, i, i]),
        "PQgetisnull": (i, [p, i, i]),
        "PQcmdTuples": (s, [p]),
        "PQclear": (None, [p]),
        "PQputCopyData": (i, [p, s, i]),
        "PQputCopyEnd": (i, [p, s]),
        "PQnotifies": (ctypes.POINTER(_Notify), [p]),
        "PQfreemem": (None, [p]),
        "PQconninfoParse": (ctypes.POINTER(_Option), [s, pp]),
        "PQconninfoFree": (None, [ctypes.POINTER(_Option)]),
        "PQsetNoticeProcessor": (p, [p, _NoticeProcessor, p]),
    }
    for name, (restype, argtypes) in protos.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes


def libpq() -> ctypes.CDLL:
    """The loaded libpq (PgError when none can be found)."""
    global _lib
    with _loading:
        if _lib is None:
            tried = []
            for candidate in _candidates():
                try:
                    lib = ctypes.CDLL(candidate)
                except OSError:
                    tried.append(candidate)
                    continue
                _declare(lib)
                _lib = lib
                break
            else:
                raise LibpqMissing("libpq not found (pip install 'psycopg[binary]', or install the system's libpq)")
        return _lib


def parse_conninfo(conninfo: str) -> dict[str, str]:
    """The parameters a connection string or URL sets (libpq's own parser). PgError if it is invalid."""
    lib = libpq()
    error = ctypes.c_char_p()
    options = lib.PQconninfoParse(conninfo.encode("utf-8"), ctypes.byref(error))
    if not options:
        message = error.value.decode("utf-8", "replace") if error.value else "invalid connection string"
        if error.value:
            lib.PQfreemem(error)
        raise PgError(message)
    try:
        params: dict[str, str] = {}
        k = 0
        while options[k].keyword:
            value = options[k].val
            if value is not None:
                params[options[k].keyword.decode()] = value.decode("utf-8", "replace")
            k += 1
        return params
    finally:
        lib.PQconninfoFree(options)


class Connection:
    """One libpq connection (autocommit: each statement commits unless inside `transaction()`)."""

    def __init__(self, conninfo: str, **extra: str | int) -> None:
        """Connect with `conninfo` (a URL or keyword string); `extra` parameters are added where
        the string does not set them. PgError when the connection fails."""
        self._lib = libpq()
        given = parse_conninfo(conninfo)
        keys = [b"dbname", *(k.encode() for k in extra if k not in given), b"client_encoding"]
        values = [conninfo.encode("utf-8"), *(str(v).encode() for k, v in extra.items() if k not in given), b"UTF8"]
        keywords = (ctypes.c_char_p * (len(keys) + 1))(*keys, None)
        settings = (ctypes.c_char_p * (len(values) + 1))(*values, None)
        self._pg: int | None = self._lib.PQconnectdbParams(keywords, settings, 1)  # 1: dbname is a conninfo
        self._lock = threading.RLock()
        self.broken = False
        if not self._pg or self._lib.PQstatus(self._pg) != _CONNECTION_OK:
            message = self._error_message() if self._pg else "out of memory"
            self.close()
            raise PgError(message)
        self._lib.PQsetNoticeProcessor(self._pg, _IGNORE_NOTICE, None)

    @property
    def closed(self) -> bool:
        return self._pg is None

    def __del__(self) -> None:  # a connection dropped without close() is not left open on the server
        pg = getattr(self, "_pg", None)
        if pg is not None:
            with contextlib.suppress(Exception):
                self._lib.PQfinish(pg)
            self._pg = None

    def _error_message(self) -> str:
        raw = self._lib.PQerrorMessage(self._pg) if self._pg else None
        return raw.decode("utf-8", "replace") if raw else "connection lost"

    def close(self) -> None:
        with self._lock:
            if self._pg is not None:
                self._lib.PQfinish(self._pg)
                self._pg = None

    def _lost(self) -> PgError:
        """The connection cannot be used any more: closed, and an error saying why."""
        error = PgError(self._error_message())
        self.broken = True
        self.close()
        return error

    def _await(self) -> None:
        """Wait (interruptibly) until the server's whole answer to what was sent has arrived."""
        lib, pg = self._lib, self._pg
        socket = lib.PQsocket(pg)
        try:
            while lib.PQisBusy(pg):
                select.select([socket], [], [])
                if not lib.PQconsumeInput(pg):
                    raise self._lost()
        except BaseException:  # Ctrl-C mid-query: the exchange cannot be resumed
            if self._pg is not None:
                self.broken = True
                self.close()
            raise

    def _results(self, copy_rows: Iterable[Sequence[Param]] | None = None) -> list[list[str | None]] | int:
        """Read the results of what was sent: the last one's rows (statements that return rows),
        else its row count. Raises PgError for the first error."""
        lib, pg = self._lib, self._pg
        error: PgError | None = None
        outcome: list[list[str | None]] | int = 0
        while True:
            self._await()
            result = lib.PQgetResult(pg)
            if not result:
                break
            try:
                status = lib.PQresultStatus(result)
                if status == _COPY_IN:
                    self._copy_in(copy_rows or ())
                elif status == _TUPLES_OK:
                    outcome = _rows(lib, result)
                elif status == _COMMAND_OK:
                    count = lib.PQcmdTuples(result)
                    outcome = int(count) if count else 0
                elif error is None:
                    code = lib.PQresultErrorField(result, _DIAG_SQLSTATE)
                    message = lib.PQresultErrorMessage(result) or b"query failed"
                    error = PgError(message.decode("utf-8", "replace"), code.decode() if code else None)
            finally:
                lib.PQclear(result)
        if lib.PQstatus(pg) != _CONNECTION_OK:
            raise self._lost()
        if error is not None:
            raise error
        return outcome

    def _copy_in(self, rows: Iterable[Sequence[Param]]) -> None:
        buffer: list[bytes] = []
        size = 0
        for row in rows:
            line = "\t".join(_copy_text(value) for value in row).encode("utf-8") + b"\n"
            buffer.append(line)
            size += len(line)
            if size >= _COPY_CHUNK:
                self._put(b"".join(buffer))
                buffer, size = [], 0
        if buffer:
            self._put(b"".join(buffer))
        if self._lib.PQputCopyEnd(self._pg, None) != 1:
            raise self._lost()

    def _put(self, data: bytes) -> None:
        if self._lib.PQputCopyData(self._pg, data, len(data)) != 1:
            raise self._lost()

    def execute(
        self, sql: str, params: Sequence[Param] = (), *, copy_rows: Iterable[Sequence[Param]] | None = None
    ) -> list[list[str | None]] | int:
        """Run one statement with `$1`-style parameters (or, without parameters, several separated
        by semicolons). Returns the rows (as text) when it returns rows, else the rows it affected.
        `copy_rows`: the rows a `COPY ... FROM STDIN` reads."""
        with self._lock:
            if self._pg is None:
                raise PgError("the connection is closed")
            lib, pg = self._lib, self._pg
            query = sql.encode("utf-8")
            if not params:
                sent = lib.PQsendQuery(pg, query)
            else:
                n = len(params)
                values = (ctypes.c_char_p * n)()
                lengths = (ctypes.c_int * n)()
                formats = (ctypes.c_int * n)()
                for k, value in enumerate(params):
                    if value is None:
                        continue
                    data = value if isinstance(value, bytes) else str(value).encode("utf-8")
                    if not isinstance(value, bytes) and b"\x00" in data:
                        raise PgError("a text parameter cannot hold the character U+0000")
                    values[k], lengths[k], formats[k] = data, len(data), int(isinstance(value, bytes))
                sent = lib.PQsendQueryParams(pg, query, n, None, values, lengths, formats, 0)
            if not sent:
                raise self._lost()
            return self._results(copy_rows)

    def rows(self, sql: str, params: Sequence[Param] = ()) -> list[list[str | None]]:
        """The rows of a statement that returns rows."""
        result = self.execute(sql, params)
        return result if isinstance(result, list) else []

    def value(self, sql: str, params: Sequence[Param] = ()) -> str | None:
        """The first column of the first row (None: no row, or NULL)."""
        found = self.rows(sql, params)
        return found[0][0] if found and found[0] else None

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """BEGIN ... COMMIT, or ROLLBACK when the block raises. Holds the connection's lock throughout."""
        with self._lock:
            self.execute("BEGIN")
            try:
                yield
            except BaseException:
                if self._pg is not None and not self.broken:
                    with contextlib.suppress(PgError):
                        self.execute("ROLLBACK")
                raise
            self.execute("COMMIT")

    def notifies(self, timeout: float) -> int:
        """Wait up to `timeout` seconds for notifications (after LISTEN); how many arrived."""
        with self._lock:
            if self._pg is None:
                raise PgError("the connection is closed")
            lib, pg = self._lib, self._pg
            count = self._drain()
            if count or timeout <= 0:
                return count
            try:
                ready, _, _ = select.select([lib.PQsocket(pg)], [], [], timeout)
            except BaseException:
                self.broken = True
                self.close()
                raise
            if ready and not lib.PQconsumeInput(pg):
                raise self._lost()
            return self._drain()

    def _drain(self) -> int:
        lib, pg = self._lib, self._pg
        count = 0
        while True:
            notify = lib.PQnotifies(pg)
            if not notify:
                return count
            lib.PQfreemem(ctypes.cast(notify, ctypes.c_void_p))
            count += 1


def _rows(lib: ctypes.CDLL, result: int) -> list[list[str | None]]:
    n_rows, n_fields = lib.PQntuples(result), lib.PQnfields(result)
    rows: list[list[str | None]] = []
    for r in range(n_rows):
        row: list[str | None] = []
        for f in range(n_fields):
            if lib.PQgetisnull(result, r, f):
                row.append(None)
            else:
                raw = ctypes.string_at(lib.PQgetvalue(result, r, f), lib.PQgetlength(result, r, f))
                row.append(raw.decode("utf-8"))
        rows.append(row)
    return rows


_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _copy_text(value: Param) -> str:
    """One value in COPY's text format: NULL as \\N, bytea as \\x-hex, special characters escaped."""
    if value is None:
        return "\\N"
    if isinstance(value, bytes):
        return "\\\\x" + value.hex()
    if isinstance(value, bool):
        return "t" if value else "f"
    return str(value).translate(_COPY_ESCAPES)
