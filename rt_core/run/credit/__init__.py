"""Credit: what each author, paper or reviewer added to a finished run, measured by
re-running variants without them."""
