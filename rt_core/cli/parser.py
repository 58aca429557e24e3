"""The argument parser of `python -m rt_core`: commands, flags and their help."""
from __future__ import annotations

import argparse

from ..config import LOCAL_EMBEDDER, LOCAL_MODEL
from ..settings import schema
from . import credit as credit_cli
from . import ideas as ideas_cli
from . import ideate, novelty, options, study_token
from . import speed as speed_cli
from . import steer as steer_cli
from . import suggest as suggest_cli
from .commands import (
    cmd_bench,
    cmd_init,
    cmd_migrate_store,
    cmd_replay,
    cmd_resume,
    cmd_review_similarity,
    cmd_revise,
    cmd_run,
    cmd_search,
    cmd_similarity,
)

DESCRIPTION = ("Command line: `python -m rt_core run|resume|revise|replay|bench|similarity|novelty|search|"
               "suggest|init|credit|steer|ideas ...`.")
KEY_HELP = ("name of the environment variable holding the API key for this model and base URL "
            "(without it, the provider's usual variable is used, and only at the provider's own "
            "endpoint or a base URL listed in RT_ALLOWED_BASE_URLS)")


def _replay_args(p) -> None:
    p.add_argument("--modes", default="self,agent,data,global",
                   help="comma-separated modes to run side by side")
    options.add(p, schema.REPLAY, defaults={"num_reviewers": 0})


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m rt_core", description=DESCRIPTION)
    ap.add_argument("--db", help="SQLite store path or postgresql:// URL (default: RT_DB, "
                    "else the user data folder)")
    ap.add_argument("--router-config", help="a YAML file in litellm's model_list format: calls "
                    "to the model names it lists go through litellm's Router over their "
                    "deployments (default: RT_ROUTER_CONFIG)")
    sub = ap.add_subparsers(dest="cmd", required=True)

    r = sub.add_parser("run", help="simulate read -> write -> review on a neighbourhood")
    r.add_argument("--researchers", help="comma-separated researcher ids (the authors)")
    r.add_argument("--papers", help="comma-separated paper ids")
    r.add_argument("--input", help="JSON file with 'papers' and 'researchers' to import and use")
    r.add_argument("--from-idea", help="the idea of the bank this run continues (RUN_ID:VERSION, as `ideas "
                   "continue` prints it): stored with the run, which then links back to it")
    options.add(r)
    r.add_argument("--out-json")
    r.add_argument("--out-md")
    r.set_defaults(fn=cmd_run)

    rs = sub.add_parser("resume", help="resume an interrupted, failed or cancelled run under its id")
    rs.add_argument("run_id")
    options.add(rs, schema.AGAIN, cap_note=" (replaces the run's stored cap)")
    rs.add_argument("--out-json")
    rs.add_argument("--out-md")
    rs.set_defaults(fn=cmd_resume)

    rv = sub.add_parser("revise", help="give a finished run with reviews more revision rounds "
                        "(earlier calls come from the cache)")
    rv.add_argument("run_id")
    rv.add_argument("--rounds", type=int, default=1,
                    help="how many more rounds (a run has at most 3 in all); default 1")
    options.add(rv, schema.AGAIN, cap_note=" in the new rounds (default: the run's own cap)")
    rv.add_argument("--out-json")
    rv.add_argument("--out-md")
    rv.set_defaults(fn=cmd_revise)

    s = sub.add_parser("similarity", help="per-question similarity of two 5Q proposals")
    s.add_argument("ref", help="reference proposal file, or - for stdin")
    s.add_argument("gen", help="generated proposal file, or - for stdin")
    s.add_argument("--embedder", default=LOCAL_EMBEDDER)
    s.add_argument("--api-key-env", help="the variable holding the key of the judge (with "
                   "--judge) or else of a hosted embedder")
    s.add_argument("--json", action="store_true")
    s.add_argument("--judge", action="store_true",
                   help="also ask an LLM judge for consistency, novelty and feasibility (1-10)")
    s.add_argument("--model", default=LOCAL_MODEL, help="judge model (litellm string)")
    s.add_argument("--base-url", help="judge model base URL")
    s.add_argument("--temperature", type=float, default=0.0)
    s.add_argument("--timeout", type=float, default=120.0)
    s.set_defaults(fn=cmd_similarity)

    rv = sub.add_parser("review-similarity",
                        help="strength/weakness bullet recall and Delta S of two reviews")
    rv.add_argument("ref", help="reference review (Strengths:/Weaknesses:/Score:), file or -")
    rv.add_argument("gen", help="generated review, file or -")
    rv.add_argument("--embedder", default=LOCAL_EMBEDDER)
    rv.add_argument("--json", action="store_true")
    rv.set_defaults(fn=cmd_review_similarity)

    rp = sub.add_parser("replay", help="hide a real paper and let its neighbourhood re-create it")
    rp.add_argument("paper_id", help="a paper id in the store (see `search`), or with --import "
                    "an arXiv id or DOI")
    rp.add_argument("--import", dest="import_paper", action="store_true",
                    help="first import the paper and the papers it cites from Semantic Scholar "
                         "(needs internet; RT_S2_URL points at another server)")
    rp.add_argument("--reference-text", help="the paper's own five answers (file or -)")
    rp.add_argument("--json", action="store_true")
    _replay_args(rp)
    rp.set_defaults(fn=cmd_replay)

    b = sub.add_parser("bench", help="replay every paper of a task file (JSON lines)")
    b.add_argument("tasks", nargs="?", help='JSON lines, one {"paper_id": ...} per line '
                   "(bench/tasks/replay_targets.jsonl ships with the starter community)")
    b.add_argument("--out", help="output folder (default bench-results/<task file name>)")
    b.add_argument("--tasks-at-once", type=int, default=2, help="tasks run concurrently")
    b.add_argument("--fresh", action="store_true", help="start over instead of resuming")
    b.add_argument("--no-progress", action="store_true", help="no progress bar")
    b.add_argument("--worker", action="store_true",
                   help="share the tasks with other workers on the same store (--db / RT_DB): "
                        "each task is done by one of them")
    b.add_argument("--name", help="the shared bench's name (default: the task file's name)")
    b.add_argument("--report", metavar="NAME", help="summarise what the workers of bench NAME finished")
    _replay_args(b)
    b.set_defaults(fn=cmd_bench)

    q = sub.add_parser("search", help="search the store")
    q.add_argument("query", nargs="?", default="")
    q.add_argument("--fields", help="comma-separated field ids")
    q.add_argument("--researchers", action="store_true", help="search researchers, not papers")
    q.add_argument("--limit", type=int, default=20)
    q.set_defaults(fn=cmd_search)

    novelty.add_parser(sub, KEY_HELP)
    ideate.add_parser(sub)
    study_token.add_parser(sub)
    speed_cli.add_parser(sub)
    suggest_cli.add_parser(sub)

    i = sub.add_parser("init", help="create the store and load the starter community")
    i.set_defaults(fn=cmd_init)
    ms = sub.add_parser("migrate-store", help="copy a whole store into an empty one (e.g. to PostgreSQL)")
    ms.add_argument("--from", dest="source", required=True, help="SQLite file or postgresql:// URL")
    ms.add_argument("--to", dest="target", required=True, help="SQLite file or postgresql:// URL")
    ms.set_defaults(fn=cmd_migrate_store)
    credit_cli.add_parser(sub)
    steer_cli.add_parser(sub)
    ideas_cli.add_parser(sub)
    return ap
