"""A run: its plan of stages and the runner that executes it, the stages (chat and stem
styles of one protocol), background jobs for the UI, evaluation against a reference,
prompts and output parsing."""
