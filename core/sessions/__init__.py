"""Sessions as gptme keeps them (SPEC 11): gptme-sessions records, their join to our sessions, trajectories."""
