"""The driver's messages on one line, read as sentences (no server needed: libpq's own text, and a
connection to a port nothing listens on).

libpq writes a refused connection on two lines, the second a hint: "...failed: Connection refused" /
"Is the server running on that host and accepting TCP/IP connections?". Joined with a bare space it
read "Connection refused Is the server running", one sentence run into the next."""

from __future__ import annotations

import socket

import psycopg
import pytest

from lesson_credit.core.base.files import StoreUnavailable
from lesson_credit.core.log.pgconn import connect, one_line

REFUSED = 'connection to server at "127.0.0.1", port 1 failed: Connection refused'
HINT = "Is the server running on that host and accepting TCP/IP connections?"


@pytest.mark.parametrize(
    ("message", "line"),
    [
        # a line without an end, then a capital: a full stop between them
        (f"connection failed: {REFUSED}\n\t{HINT}", f"connection failed: {REFUSED}. {HINT}"),
        # two hosts tried (localhost as ::1, then 127.0.0.1): the second attempt is no new sentence
        (
            f"connection failed: {REFUSED.replace('127.0.0.1', '::1')}\n\t{HINT}\n{REFUSED}\n\t{HINT}",
            f"connection failed: {REFUSED.replace('127.0.0.1', '::1')}. {HINT} {REFUSED}. {HINT}",
        ),
        # a line without an end, then a lower-case line: a semicolon
        (
            'FATAL:  database "nope" does not exist\nconnection to server at "::1", port 5 failed',
            'FATAL: database "nope" does not exist; connection to server at "::1", port 5 failed',
        ),
        # a line that ends with its own mark keeps it, nothing added
        ("could not connect:\n\tNo route to host", "could not connect: No route to host"),
        ("one line, as it was", "one line, as it was"),
    ],
)
def test_lines_of_a_message_are_joined_as_sentences(message: str, line: str) -> None:
    assert one_line(psycopg.OperationalError(message)) == line


def test_a_refused_connection_reads_as_two_sentences() -> None:
    with socket.socket() as probe:  # a port nothing listens on once this socket is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(StoreUnavailable) as info:
        connect(f"host=127.0.0.1 port={port} connect_timeout=5", "the store")
    text = str(info.value)
    assert "\n" not in text
    assert f'the store: cannot connect: connection failed: connection to server at "127.0.0.1", port {port}' in text
    assert "failed: Connection refused. Is the server running on that host" in text, text
