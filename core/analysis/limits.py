"""The analysis's thresholds, apart from its code: the Workspace's defaults name them without
importing the analysis (numpy-heavy, the joint fit), which loads when an analysis first runs."""

from __future__ import annotations

MIN_WITH = 5  # graded sessions with a lesson before its leave-one-out lift is shown
MIN_WITHOUT = 20  # and graded sessions without it
BROAD_KEYWORD_SHARE = 0.50  # a keyword matching more than this share of the journals is flagged broad
