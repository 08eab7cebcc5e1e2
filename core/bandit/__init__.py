"""The bandit: posteriors as a fold of the log, Thompson selection, its config and gptme's state file."""
