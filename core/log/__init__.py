"""The event log and its stores (file, PostgreSQL), its index as columns, snapshots and caches."""
