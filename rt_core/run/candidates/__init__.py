"""Several candidates per run: their leads, writing and costs, and the tournament that
ranks them (a judge's pairwise verdicts, Bradley-Terry)."""
