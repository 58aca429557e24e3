"""`python -m rt_core ideas list|search|star|note|export|continue`: the bank of ideas from the command
line. The command line is the store's operator (it sees every idea, as on a personal
server). `--json` prints a list of ideas, each with its id, run_id, version, q1, fields and
seen_before (null when it repeats no earlier idea)."""
from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

from ..access import Viewer
from ..ideas.bank import Bank, Idea, Query
from ..ideas.export import FORMATS, export
from ..ideas.seed import seed_from
from ..store import open_store

OPERATOR = Viewer()  # personal: everything visible


def _filters(p, paged: bool = True) -> None:
    p.add_argument("--field", default="", help="only ideas of this field id")
    p.add_argument("--model", default="", help="only ideas written by this model")
    p.add_argument("--min-score", type=float, help="only ideas whose mean review score is at least this")
    p.add_argument("--since", default="", help="only ideas made on or after this date (YYYY-MM-DD)")
    p.add_argument("--until", default="", help="only ideas made before this date (YYYY-MM-DD)")
    p.add_argument("--starred", action="store_true", help="only starred ideas")
    p.add_argument("--one-per-group", action="store_true", help="near-duplicates once, by the first of them")
    if paged:
        p.add_argument("--page", type=int, default=1, help="which page (from 1)")
        p.add_argument("--per-page", type=int, default=25)
        p.add_argument("--json", action="store_true", help="print the ideas as a JSON list")


def add_parser(sub) -> None:
    p = sub.add_parser("ideas", help="the bank of every run's ideas: list, search, star, note, export")
    s = p.add_subparsers(dest="ideas_cmd", required=True)
    ls = s.add_parser("list", help="the ideas, newest first")
    _filters(ls)
    ls.set_defaults(fn=cmd_list)
    se = s.add_parser("search", help="ideas by words and meaning")
    se.add_argument("text")
    _filters(se)
    se.set_defaults(fn=cmd_list)
    st = s.add_parser("star", help="star an idea (or --off to unstar it)")
    st.add_argument("idea_id")
    st.add_argument("--off", action="store_true")
    st.set_defaults(fn=cmd_star)
    no = s.add_parser("note", help="write a note on an idea ('' clears it)")
    no.add_argument("idea_id")
    no.add_argument("text")
    no.set_defaults(fn=cmd_note)
    co = s.add_parser("continue", help="the neighbourhood to continue from an idea: its own, plus the "
                      "papers nearest its problem, as a `run` command line")
    co.add_argument("idea_id")
    co.add_argument("--json", action="store_true")
    co.set_defaults(fn=cmd_continue)
    ex = s.add_parser("export", help="write ideas as Markdown, JSON or CSV")
    _filters(ex, paged=False)
    ex.add_argument("--format", choices=FORMATS, default="md")
    ex.add_argument("--out", help="a file to write (default: standard output)")
    ex.set_defaults(fn=cmd_export)


def _query(args, text: str = "", page: int = 0, per_page: int = 25) -> Query:
    return Query(text=text, field=args.field, model=args.model, min_score=args.min_score, since=args.since,
                 until=args.until, starred=args.starred, one_per_group=args.one_per_group, page=page,
                 per_page=per_page)


def _summary(i: Idea) -> str:
    score = "-" if i.score is None else f"{i.score:.2f}"
    seen = f"\tseen before: {i.seen_before}" if i.seen_before else ""
    star = "*" if i.starred else " "
    return f"{star} {i.id}\t{i.created_at[:10]}\t{score}\t{', '.join(i.fields)}\t{' '.join(i.q1.split())[:120]}{seen}"


def cmd_list(args) -> int:
    bank = Bank(open_store(args.db))
    page = bank.find(OPERATOR, _query(args, getattr(args, "text", ""), args.page - 1, args.per_page))
    if args.json:
        print(json.dumps([i.to_dict() for i in page.ideas], indent=2, ensure_ascii=False))
        return 0
    for i in page.ideas:
        print(_summary(i))
    print(f"page {page.page + 1} of {page.pages}, {page.total} ideas", file=sys.stderr)
    return 0


def cmd_star(args) -> int:
    idea = Bank(open_store(args.db)).star(OPERATOR, args.idea_id, on=not args.off)
    print(f"{'starred' if idea.starred else 'unstarred'} {idea.id}", file=sys.stderr)
    return 0


def cmd_note(args) -> int:
    idea = Bank(open_store(args.db)).note(OPERATOR, args.idea_id, args.text)
    print(f"note {'kept' if idea.note else 'cleared'} on {idea.id}", file=sys.stderr)
    return 0


def cmd_export(args) -> int:
    bank = Bank(open_store(args.db))
    ideas = list(bank.find(OPERATOR, _query(args, per_page=1_000_000)).ideas)
    text = export(ideas, args.format)
    if args.out:
        Path(args.out).write_text(text, "utf-8")
        print(f"wrote {len(ideas)} ideas to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def cmd_continue(args) -> int:
    store = open_store(args.db)
    seed = seed_from(store, Bank(store), OPERATOR, args.idea_id)
    if args.json:
        print(json.dumps(dataclasses.asdict(seed), indent=2, ensure_ascii=False))
        return 0
    print(f"continuing from {seed.idea_id} (topic: {' '.join(seed.topic.split())[:120]})", file=sys.stderr)
    print(seed.command())
    return 0
