"""Candidates the store lacks, when the user asks: OpenAlex's topics and their authors, and
Semantic Scholar's papers. Every answer goes through the shared HTTP client into the store's
HTTP cache (sources/http.py), so asking again costs no request; a source that fails becomes
a note, never an error, and the store's own suggestions still come.

Why OpenAlex for people: its topics sit in a hierarchy (topic, subfield, field, domain), so a
topic phrase finds topics in several fields at once, and each topic lists the authors who
publish most on it, with the fields they work in. Semantic Scholar's relevance search finds
papers in every field, abstracts included. Online candidates are scored like the store's
(closeness by the same embedder, distance by field names, no bridges: their links are not
in the store until they are imported).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import numpy as np

from ..errors import RTError
from ..models.keys import Secrets
from ..sources import clients
from ..sources.http import Cache
from ..sources.ids import normalise_openalex_id
from .fields import FieldMap
from .result import Suggested
from .scoring import Scored

TOPICS = 3  # OpenAlex topics asked about (each from another field when possible)
AUTHORS = 5  # authors per topic
PAPERS = 10  # Semantic Scholar papers
TIMEOUT = 15.0


class OnlineCandidates:
    def __init__(self, cache: Cache | None, s2_key: str | None = None, *,
                 secrets: Secrets | None = None, mailto: str | None = None,
                 base_urls: dict[str, str] | None = None, timeout: float = TIMEOUT,
                 sleep: Callable[[float], None] | None = None):
        """`s2_key` None: the operator's (rt_core.sources.clients reads it, with `secrets`)."""
        urls = base_urls or {}
        common = {"timeout": timeout, "max_retries": 1, "sleep": sleep}
        # The topics endpoint has no method on the OpenAlex client: its HTTP client is asked.
        self.openalex = clients.openalex(cache, mailto=mailto, base_url=urls.get("openalex"),
                                         **common).http
        self.s2 = clients.semantic_scholar(cache, secrets=secrets, key=s2_key,
                                           base_url=urls.get("semantic_scholar"), **common)

    def close(self) -> None:
        self.openalex.close()
        self.s2.close()

    def candidates(self, topic: str, topics, fmap: FieldMap) -> tuple[list[tuple[Scored, Suggested]], list[str]]:
        """(scored candidate, how to show it) pairs and notes on what each source did.
        Field names from the sources join `fmap` (with their OpenAlex domain when known)."""
        notes: list[str] = []
        found: list[Suggested] = []
        texts: list[str] = []
        for name, ask in (("OpenAlex", self._authors), ("Semantic Scholar", self._papers)):
            try:
                got = ask(topic, fmap)
            except RTError as exc:
                notes.append(f"{name} could not be asked ({exc}); the store's suggestions only")
                continue
            notes.append(f"{name}: {len(got)} candidate{'s' if len(got) != 1 else ''}")
            for shown, text in got:
                found.append(shown)
                texts.append(text)
        if not found:
            return [], notes
        sims = np.asarray(topics.embed(texts), dtype=np.float32) @ topics.query_vector(topic)
        out = []
        for shown, sim in zip(found, sims, strict=True):
            shown.closeness = float(sim)
            out.append((Scored(shown.id, shown.fields, float(sim), 0.0), shown))
        return out, notes

    def _authors(self, topic: str, fmap: FieldMap) -> list[tuple[Suggested, str]]:
        body = self.openalex.get_json("/topics", {"search": topic, "per-page": 10})
        chosen, fields_seen = [], set()
        for t in _results(body):
            f = ((t.get("field") or {}).get("display_name")) or ""
            if f in fields_seen and len(_results(body)) > TOPICS:
                continue
            fields_seen.add(f)
            chosen.append(t)
            if len(chosen) >= TOPICS:
                break
        out, seen = [], set()
        for t in chosen:
            tid = normalise_openalex_id(t.get("id") or "")
            if not tid:
                continue
            people = self.openalex.get_json("/authors", {"filter": f"topics.id:{tid}",
                                                         "sort": "cited_by_count:desc",
                                                         "per-page": AUTHORS})
            for a in _results(people):
                aid = normalise_openalex_id(a.get("id") or "")
                if aid and aid not in seen:
                    seen.add(aid)
                    out.append(_author(a, aid, t, fmap))
        return out

    def _papers(self, topic: str, fmap: FieldMap) -> list[tuple[Suggested, str]]:
        out = []
        for p in self.s2.search_papers(topic, PAPERS):
            fields = list(p.fields)
            for f in fields:
                fmap.names.setdefault(f, f)
            shown = Suggested("paper", p.id, p.title, fields, fields, 0.0, {}, {}, "",
                              detail=str(p.year or ""), source="semantic_scholar",
                              import_id=p.s2_id, record=p.to_dict())
            out.append((shown, f"{p.title}. {p.abstract}".strip()))
        return out


def _results(body) -> list[dict]:
    rows = body.get("results") if isinstance(body, dict) else None
    return [r for r in rows or [] if isinstance(r, dict)]


def _author(a: dict, aid: str, topic: dict, fmap: FieldMap) -> tuple[Suggested, str]:
    """An OpenAlex author as a candidate: fields from their topics (most frequent first),
    their text the names of those topics."""
    their = [t for t in a.get("topics") or [] if isinstance(t, dict)] or [topic]
    counts: Counter = Counter()
    for t in their:
        f = (t.get("field") or {}).get("display_name")
        if f:
            counts[f] += int(t.get("count") or 1)
            dom = (t.get("domain") or {}).get("display_name") or ""
            if f not in fmap.domains or not fmap.domains[f]:
                fmap.domains[f] = dom  # an OpenAlex field: its OpenAlex domain
            fmap.names.setdefault(f, f)
    fields = [f for f, _ in counts.most_common(3)]
    insts = [i.get("display_name") for i in a.get("last_known_institutions") or []
             if isinstance(i, dict) and i.get("display_name")]
    name = a.get("display_name") or aid
    shown = Suggested("researcher", f"openalex:{aid}", name, fields, fields, 0.0, {}, {}, "",
                      detail="; ".join(insts), source="openalex", import_id=aid)
    text = f"{name}: " + "; ".join(t.get("display_name") or "" for t in their[:8])
    return shown, text
