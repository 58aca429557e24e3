"""`python -m rt_core novelty PROPOSAL.md`: one proposal's problem and method against the
nearest prior work (rt_core.run.novelty), printed, and written as JSON with --out.

The file is a five-question proposal in any heading style the parser reads (the Markdown
`Proposal.to_markdown` writes, `[Question 1]`, `Q1`, `1.`); only Q1 and Q5 are checked.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ..community import loaded_store
from ..config import LOCAL_EMBEDDER
from ..errors import InputError
from ..models.client import LLMClient
from ..models.embed import Embedder
from ..run.novelty import OnlineLiterature, assess, report
from ..run.styles.context import StageContext
from ..run.styles.parse import parse_five_questions
from ..types import Proposal
from . import settings


def add_parser(sub, key_help: str) -> None:
    n = sub.add_parser("novelty", help="check a proposal's problem (Q1) and method (Q5) against "
                       "the nearest prior work")
    n.add_argument("proposal", help="a five-question proposal (Markdown), or - for stdin")
    n.add_argument("--online", action="store_true", help="also search Semantic Scholar, then "
                   "OpenAlex, then arXiv (needs internet; answers are cached in the store)")
    n.add_argument("--model", help="an instruction model that explains each verdict, citing "
                   "only the papers found (default: none, verdicts only)")
    n.add_argument("--base-url", help="API base URL of that model")
    n.add_argument("--api-key-env", help=key_help)
    n.add_argument("--temperature", type=float, default=0.0)
    n.add_argument("--timeout", type=float, default=120.0)
    n.add_argument("--embedder", default=LOCAL_EMBEDDER)
    n.add_argument("--out", help="write the result as JSON to this file")
    n.set_defaults(fn=cmd_novelty)


def _missing_mark() -> str:
    """What `Proposal.to_markdown` writes for an answer the model never gave, as the parser
    reads it back (derived from it, so the two cannot drift apart)."""
    answers, _ = parse_five_questions(Proposal().to_markdown())
    return answers.get("q1", "")


def read_proposal(text: str, where: str) -> Proposal:
    """The five answers of a proposal file; an answer marked missing is missing, not text."""
    answers, missing = parse_five_questions(text)
    mark = _missing_mark()
    for key in [k for k, v in answers.items() if mark and v.strip() == mark]:
        answers[key] = ""
        missing.append(key)
    if not (answers.get("q1") or answers.get("q5")):
        raise InputError(f"{where} has no problem (Q1) or method (Q5) to check",
                         "Use headings such as '[Question 1]', 'Q1' or '1.' for the five questions.")
    return Proposal(**answers, missing=missing)


def cmd_novelty(args) -> int:
    text = sys.stdin.read() if args.proposal == "-" else _read(args.proposal)
    proposal = read_proposal(text, args.proposal)
    store = loaded_store(args.db)
    ctx = None
    if args.model:
        ctx = StageContext(LLMClient(settings.judge_settings(args), store=store))
        if not ctx.traits.follows_instructions:
            print(f"note: {args.model} is a base model; it cannot explain, so verdicts only",
                  file=sys.stderr)
            ctx = None
    embedder = Embedder(args.embedder, store=store,
                        api_key=settings.key_for(args, args.embedder, typed=False).value)
    literature = OnlineLiterature(store.http_cache) if args.online else None
    try:
        novelty = assess(proposal, store, embedder, literature, ctx)
    finally:
        if literature is not None:
            literature.close()
    print(report(novelty))
    if args.out:
        Path(args.out).write_text(json.dumps(novelty.to_dict(), indent=2), "utf-8")
    return 0


def _read(path: str) -> str:
    p = Path(path)
    if not p.exists():
        raise InputError(f"no such file: {path}")
    return p.read_text("utf-8")
