"""Command line: `python -m rt_core run|replay|bench|similarity|search|init ...`.

The commands live in rt_core/cli/ (parser.py, commands.py, settings.py). API keys are read
from the environment only (never a command-line argument, which other users can see in
the process list), by the one key rule in rt_core/keys.py.
"""
from __future__ import annotations

import json
import os
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
        print(f"error: {exc}" + (f"\nhint: {exc.hint}" if exc.hint else ""), file=sys.stderr)
        return 2
    except json.JSONDecodeError as exc:
        print(f"error: not valid JSON: {exc}", file=sys.stderr)
        return 2


def _end(code: int) -> None:
    """End the process once the command is done, without the interpreter's teardown. After a
    run, tearing down litellm's modules and the model's buffers took about 1 s here (of a 16 s
    one-shot run) with nothing left to do: every output file is written and every store write
    committed when a command returns. The loaded models are closed first, as at a normal exit."""
    from .models.local import close_engines  # noqa: PLC0415  (llama.cpp only if a model was loaded)

    close_engines()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    _end(main())
