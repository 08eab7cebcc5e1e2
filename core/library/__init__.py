"""The lesson library and what a journal says about it: lessons, patterns, keywords, salience, journals."""
