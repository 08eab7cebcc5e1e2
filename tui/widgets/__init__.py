"""Reusable dashboard widgets, one per module, each with its own scoped DEFAULT_CSS."""
