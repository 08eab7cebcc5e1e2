"""A ground-truth world to measure credit strategies and selection policies against."""
