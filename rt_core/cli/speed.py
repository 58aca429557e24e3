"""`python -m rt_core speed`: how fast the embedded model reads and writes on this machine.

It times the model once per machine (models/machine_speeds.py) and prints what it found;
after that it only reads what was kept. `scripts/app` runs it after setting up, so a
newcomer's Run page states a time before the first Start and the first run does not
stop to time the model. No store is read or written: the speed kept per machine is all
it looks at."""
from __future__ import annotations

import tempfile
from pathlib import Path

from ..config import LOCAL_MODEL
from ..errors import ConfigError
from ..models import machine_speeds, speeds


def add_parser(sub) -> None:
    s = sub.add_parser("speed", help="time the embedded model on this machine (once; later calls "
                       "print what was kept)")
    s.add_argument("--model", default=LOCAL_MODEL, help="an in-process model (default: %(default)s)")
    s.set_defaults(fn=cmd_speed)


def cmd_speed(args) -> int:
    from ..store import Store  # noqa: PLC0415  (a throwaway store: only the machine's file counts)

    if not speeds.calibratable(args.model):
        raise ConfigError(f"{args.model} is not timed on its own",
                          "Only a model that runs in this process can be timed; a provider's "
                          "speed is measured from a run's calls.")
    kept = bool(machine_speeds.read(args.model))
    with tempfile.TemporaryDirectory(prefix="rt-speed-") as folder:
        speed = speeds.speed_for(args.model, Store(str(Path(folder) / "speed.sqlite3")), calibrate=True)
    how = "as timed earlier" if kept else "timed now"
    print(f"{args.model} on this machine ({how}; kept in {machine_speeds.path()}): "
          f"writes about {_per_second(speed.per_write)} tokens a second and reads about "
          f"{_per_second(speed.per_read)} (prompts that open as earlier ones did, as a run's do).")
    return 0


def _per_second(seconds_per_token: float) -> str:
    return f"{1 / seconds_per_token:,.0f}" if seconds_per_token > 0 else "(too fast to tell)"
