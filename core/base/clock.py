"""Time: the clock a workspace reads by default, and the timestamp format of the log."""

from __future__ import annotations

import datetime as dt


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_micro(moment: dt.datetime) -> str:
    """`iso` to the microsecond (a state file's `created`: one per file we write)."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
