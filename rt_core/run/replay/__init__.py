"""Replaying published papers: one paper in several modes, and the batch of many papers
(a research benchmark, not the performance benches of bench/) with its workers."""
