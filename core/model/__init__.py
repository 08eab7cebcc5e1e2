"""The numbers: credit strategies, Beta math, the credit settings and a session's kind of work (pure,
no I/O)."""
