"""`python -m rt_core speed`: how fast the embedded model reads and writes on this machine.

It times the model once per machine (models/machine_speeds.py) and prints what it found;
after that it only reads what was kept. `scripts/app` runs it after setting up, as
`python -m rt_core.cli.speed` (the same command without the rest of the command line's
imports: it runs at every start of the app), so a newcomer's Run page states a time before
the first Start and the first run does not stop to time the model. No store is read or
written: the speed kept per machine is all it looks at."""
from __future__ import annotations

import argparse
import sys

from ..config import LOCAL_MODEL
from ..errors import ConfigError, RTError
from ..models import calibration, machine_speeds, speeds


def add_parser(sub) -> None:
    s = sub.add_parser("speed", help="time the embedded model on this machine (once; later calls "
                       "print what was kept)")
    _arguments(s)


def _arguments(parser) -> None:
    parser.add_argument("--model", default=LOCAL_MODEL, help="an in-process model (default: %(default)s)")
    parser.set_defaults(fn=cmd_speed)


def cmd_speed(args) -> int:
    if not calibration.calibratable(args.model):
        raise ConfigError(f"{args.model} is not timed on its own",
                          "Only a model that runs in this process can be timed; a provider's "
                          "speed is measured from a run's calls.")
    timed_now: list[speeds.CallTime] = []  # what a calibration made now keeps (no store)
    calls = calibration.calls_or_calibration(args.model, lambda: list(timed_now), timed_now.append, measure=True)
    speed = speeds.fit(calls)
    how = "timed now" if timed_now else "as timed earlier"
    print(f"{args.model} on this machine ({how}; kept in {machine_speeds.path()}): "
          f"writes about {_per_second(speed.per_write)} tokens a second and reads about "
          f"{_per_second(speed.per_read)} (prompts that open as earlier ones did, as a run's do).")
    return 0


def _per_second(seconds_per_token: float) -> str:
    return f"{1 / seconds_per_token:,.0f}" if seconds_per_token > 0 else "(too fast to tell)"


if __name__ == "__main__":
    _parser = argparse.ArgumentParser(prog="python -m rt_core.cli.speed",
                                      description="Time the embedded model on this machine (once).")
    _arguments(_parser)
    try:
        sys.exit(cmd_speed(_parser.parse_args()))
    except RTError as exc:
        print(exc.for_terminal(), file=sys.stderr)
        sys.exit(2)
