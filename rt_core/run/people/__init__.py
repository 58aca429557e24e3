"""Who takes part in a run: the researchers' profiles as read, and the reviewers chosen."""
