"""The project's errors: one root, two branches, each carrying the CLI's exit status.

    LessonCreditError
    ├── UserError (exit 1): bad input, a bad config or lesson file, a refused write, an invalid
    │   event, a duplicate session: the message is one line for the user, nothing was written
    └── TemporaryFailure (exit 75, EX_TEMPFAIL): the event store failed for now (a database down,
        a lock held too long), or a state file another tool is saving (export-gptme, import-gptme):
        nothing was written, retry later

Every error the project raises for the user derives from one branch; `lesson-credit` catches only
the root (cli/main.py). The command line's `UsageError` (cli/common.py) is a UserError that exits 2:
a command line found wrong after argparse parsed it, said with the command's usage as argparse does.
Python's MemoryError (no memory for the command: a resource, not bad input)
is caught at the process's boundary (cli/process.py) and exits with the temporary branch's code.
A builtin exception (ValueError, KeyError, ...) escaping a command is a bug,
reported as one with its traceback, never as bad input: code that parses what the user gave turns
the library's error into a UserError where it parses.
"""

from __future__ import annotations


class LessonCreditError(Exception):
    """The root of the project's errors; `exit_code` is the CLI's exit status for it."""

    exit_code = 1


class UserError(LessonCreditError):
    """Bad input or a state that forbids the operation; the message is one line for the user."""

    exit_code = 1


class TemporaryFailure(LessonCreditError):
    """A failure that may pass (the event store down, a lock held too long): retry later."""

    exit_code = 75  # EX_TEMPFAIL


class WorkspaceError(UserError):
    """Bad input or a state that forbids a workspace operation; the message is one line for the user."""
