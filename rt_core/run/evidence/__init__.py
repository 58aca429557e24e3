"""How a run's output is measured: similarity to a reference paper, and where its answers
and reviews came from."""
