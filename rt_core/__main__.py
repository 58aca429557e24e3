"""Command line: `python -m rt_core run|replay|bench|similarity|search|init ...`.

The commands live in rt_core/cli/ (parser.py, commands.py, settings.py). API keys are read
from the environment only (never a command-line argument, which other users can see in
the process list), by the one key rule in rt_core/models/keys.py.
"""
from __future__ import annotations

import json
import sys

from .cli.parser import build_parser
from .errors import RTError
from .models import router
from .models.scripted import maybe_install_from_env


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    maybe_install_from_env()
    try:
        router.install(getattr(args, "router_config", None))  # RT_ROUTER_CONFIG without it
        return args.fn(args)
    except RTError as exc:
        print(exc.for_terminal(), file=sys.stderr)
        return 2
    except json.JSONDecodeError as exc:
        print(f"error: not valid JSON: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
