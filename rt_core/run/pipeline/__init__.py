"""A run's pipeline: the plan of stages, the runner, the stages' typed state, the core
stages, the simulation that starts and ends a run, its budget and cost estimate, and the
background jobs a page polls."""
