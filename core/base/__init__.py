"""What every layer uses: errors, lesson ids, the clock, safe reads and atomic writes of files."""
