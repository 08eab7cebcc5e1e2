"""Terminal widths at which the dashboard changes its layout."""

NARROW_BELOW = 100  # columns: below this (an 80-column terminal) screens stack and the footer is compact
WIDE_FROM = 150  # columns: from this, screens show their widest tables
