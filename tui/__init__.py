"""lesson-credit dashboard (Textual)."""
