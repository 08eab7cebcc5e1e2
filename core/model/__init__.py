"""The numbers: credit strategies, Beta math and the credit settings (pure functions, no I/O)."""
