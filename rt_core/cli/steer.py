"""`python -m rt_core steer RUN_ID`: change one answer of a finished run's proposal (or
comment on it as a reviewer), and let the run's community continue from that version.

The model options are `run`'s own, from the settings schema (rt_core/settings/schema.py);
an option not given keeps the run's stored value, so a plain steer is answered by the
model that wrote the run. The ids of the new versions go to standard output, one per
line, the user's first (the last is where the community's revision ended); what each
one is, with its score, goes to standard error.
"""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from ..export.steer import version_json
from ..run.steer import table
from ..run.steer.steer import Steer, planned, steer
from ..settings import schema
from ..settings.endpoint import MODEL
from ..types import ProgressEvent
from . import options, settings
from .ideate import open_community

# The run's model and how it is called; each one given replaces the run's stored value.
STEER_OPTIONS = tuple(o.name for o in schema.OPTIONS if o.endpoint == MODEL) + (
    "temperature", "concurrency", "timeout", "max_tokens", "max_cost")


def add_parser(sub) -> None:
    p = sub.add_parser("steer", help="edit one answer of a finished run (or comment on it) and let "
                       "its reviewers (and authors) continue from your version")
    p.add_argument("run_id")
    p.add_argument("--question", type=int, help="which answer to replace (1-5)")
    p.add_argument("--text", default="", help="the new answer, kept as written")
    p.add_argument("--comment", default="", help="a comment the authors answer as a reviewer's")
    p.add_argument("--from", dest="parent", default="v0",
                   help="the version to start from (default v0, the run's proposal; a candidate's id "
                        "or a version id printed by an earlier steer)")
    p.add_argument("--rounds", type=int, default=0, help="revision rounds after the new reviews "
                   "(0-3; default 0, and at least 1 for a comment)")
    p.add_argument("--allow-changes", action="store_true",
                   help="let the authors' revision rewrite your answer too")
    stored = {o.name for o in schema.stored()}
    options.add(p, STEER_OPTIONS, defaults={n: None for n in STEER_OPTIONS if n in stored},
                cap_note=" in this steer (default: the run's own cap)")
    p.add_argument("--out-json", help="write the last new version as a run's JSON (with a 'version' part)")
    p.set_defaults(fn=cmd_steer)


def _progress(e: ProgressEvent) -> None:
    if e.status in ("done", "cached", "failed"):
        print(f"[steer] {e.agent} {e.status}" + (f": {e.partial[:90]}" if e.partial else ""), file=sys.stderr)


def cmd_steer(args) -> int:
    store = open_community(args.db)
    run = store.runs.load(args.run_id)  # an unknown id: one message
    given = {n: getattr(args, options.dest(schema.option(n))) for n in STEER_OPTIONS
             if schema.option(n).stored and getattr(args, options.dest(schema.option(n)), None) is not None}
    config = dataclasses.replace(run.config, **given)
    wish = Steer(args.parent, args.question, args.text, args.comment, args.rounds, args.allow_changes)
    print(planned(store, run.id, wish, config).summary(), file=sys.stderr)
    done = steer(store, run.id, wish, config=config, on_progress=_progress,
                 request_for=lambda c: settings.request_for(args, c))
    for node in done.nodes:
        score = "-" if node.score is None else f"{node.score:.2f}"
        what = ", ".join(k.upper() for k in node.changed) or node.kind
        print(f"version {node.id} (from {node.parent}, by {node.author}): {what}; mean score {score}",
              file=sys.stderr)
        print(node.id)
    if done.stopped:
        print(done.stopped, file=sys.stderr)
    u = done.usage
    print(f"{u.calls} model calls, {u.cache_hits} answered from the cache", file=sys.stderr)
    if args.out_json:
        t = table.tree(store, run.id)
        Path(args.out_json).write_text(version_json(store, run, t, t.get(done.last.id) or done.last, u), "utf-8")
    return 0
