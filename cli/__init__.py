"""lesson-credit command line."""
