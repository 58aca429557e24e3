"""The command line, `python -m rt_core ...`: the parser (parser.py), the commands
(commands.py), and how arguments become a RunRequest or ModelSettings with keys chosen by
the one rule in rt_core.models.keys (settings.py)."""
