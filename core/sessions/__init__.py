"""Sessions as gptme keeps them: gptme-sessions records, their join to ours, trajectories (docs/records.md)."""
