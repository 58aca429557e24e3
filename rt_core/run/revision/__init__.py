"""Revision rounds after review: the rounds as stages, each style's rewrite, more rounds
for a finished run, and how the rounds read in a report."""
