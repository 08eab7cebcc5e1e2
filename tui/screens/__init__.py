"""Dashboard screens, one per module, each with a .tcss rooted at the screen class."""
