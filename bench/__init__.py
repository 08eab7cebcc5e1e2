"""Benchmarks for lesson-credit: `python -m bench.run` (see bench/run.py)."""
