"""lesson-credit's engine: lessons, salience, credit, the event log and its fold. No UI imports."""
