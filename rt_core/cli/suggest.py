"""`python -m rt_core suggest "TOPIC"`: researchers and papers from different fields who could
meet on a topic (rt_core.suggest), one line per researcher with name and fields, then the
papers; --json prints the whole result with every score part and bridge."""
from __future__ import annotations

import json

from ..community import ensure_loaded
from ..models import keys
from ..store import open_store
from ..suggest import DEFAULT_LIMIT, Suggestions, suggest


def add_parser(sub) -> None:
    s = sub.add_parser("suggest", help="suggest researchers and papers from different fields "
                       "who could meet on a topic")
    s.add_argument("topic", help="the topic in plain words")
    s.add_argument("--seed", help="a researcher or paper id to reach out from")
    s.add_argument("--far-from", dest="far_from", help="a field (id or name) to stay away from: "
                   "no suggestion works only in it")
    s.add_argument("--limit", type=int, default=DEFAULT_LIMIT,
                   help=f"researchers and papers each (default {DEFAULT_LIMIT})")
    s.add_argument("--online", action="store_true", help="also ask OpenAlex (topics and "
                   "authors) and Semantic Scholar (needs internet; answers are cached in the store)")
    s.add_argument("--json", action="store_true", help="print the result as JSON")
    s.set_defaults(fn=cmd_suggest)


def cmd_suggest(args) -> int:
    store = open_store(args.db)
    ensure_loaded(store)
    online = None
    if args.online:
        from ..suggest.online import OnlineCandidates  # noqa: PLC0415  (only when asked)

        online = OnlineCandidates(store.http_cache, s2_key=keys.service_key("semantic_scholar").value)
    try:
        result = suggest(store, args.topic, args.seed, args.far_from, args.limit, online=online)
    finally:
        if online is not None:
            online.close()
    print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False) if args.json
          else render(result))
    return 0


def render(result: Suggestions) -> str:
    """The plain-text listing: one line per researcher (name, fields, score, reason), then
    one per paper."""
    lines = [f"Suggestions for: {result.topic}"
             + (f" (from {result.seed_label})" if result.seed else "")
             + (f", away from {result.far_from}" if result.far_from else "")]
    lines += [f"note: {n}" for n in result.notes]
    lines.append("Researchers:")
    for i, s in enumerate(result.researchers, 1):
        lines.append(f"{i:>2}. {s.label} [{', '.join(s.field_names) or 'no field'}] "
                     f"score {s.score:.2f} ({_parts(s.parts)}){_source(s.source)}: {s.reason}")
    if not result.researchers:
        lines.append("    (none: no author of the matching papers is outside the avoided field)")
    lines.append("Papers:")
    for i, s in enumerate(result.papers, 1):
        year = f" ({s.detail})" if s.detail else ""
        lines.append(f"{i:>2}. {s.label}{year} [{', '.join(s.field_names) or 'no field'}] "
                     f"score {s.score:.2f} ({_parts(s.parts)}){_source(s.source)}: {s.reason}")
    return "\n".join(lines)


def _parts(parts: dict) -> str:
    return ", ".join(f"{k} {v:.2f}" for k, v in parts.items())


def _source(source: str) -> str:
    return "" if source == "store" else f" [online: {source}]"

