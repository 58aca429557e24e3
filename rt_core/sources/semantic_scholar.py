"""Authors and papers from the Semantic Scholar Graph API (v1).

The important rule here is author resolution: many researchers share a name,
so `resolve_author` only returns a candidate the evidence (a known paper
title, an affiliation) singles out, and otherwise raises AmbiguousAuthor
with the candidates for the user to choose from. It never guesses.
"""
from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from rt_core.errors import InputError, NotFoundError, SourceError
from rt_core.sources.http import Cache, HttpClient, SourceClient
from rt_core.sources.ids import normalise_doi, normalise_title, paper_key
from rt_core.types import Paper, Researcher

DEFAULT_BASE_URL = "https://api.semanticscholar.org/graph/v1"
PAPER_FIELDS = "paperId,externalIds,title,abstract,year,venue,authors,fieldsOfStudy,url"
AUTHOR_FIELDS = "name,affiliations,paperCount,externalIds,url"
SEARCH_FIELDS = "name,affiliations,paperCount,papers.title"
PAGE_LIMIT = 100  # the author-papers and references endpoints allow up to 1000
SHOWN_TITLES = 5


@dataclass
class AuthorCandidate:
    """One Semantic Scholar author profile that might be the person meant."""

    id: str
    name: str
    affiliations: list[str] = field(default_factory=list)
    paper_count: int = 0
    titles: list[str] = field(default_factory=list)  # a few, for showing
    all_titles: list[str] = field(default_factory=list, repr=False)  # for matching

    def describe(self) -> str:
        aff = "; ".join(self.affiliations) or "no affiliation listed"
        sample = "; ".join(self.titles[:3]) or "no titles"
        return f"{self.name} (id {self.id}, {aff}, {self.paper_count} papers: {sample})"


class AmbiguousAuthor(InputError):
    """Several (or no confirmable) author profiles fit; the user must choose."""

    hint = "Give a title of one of their papers or their affiliation, or pick an author id."

    def __init__(self, name: str, candidates: list[AuthorCandidate], reason: str = ""):
        lines = "\n".join(f"  - {c.describe()}" for c in candidates[:10])
        why = f" ({reason})" if reason else ""
        super().__init__(f"{len(candidates)} Semantic Scholar authors could be {name!r}{why}:\n{lines}")
        self.name = name
        self.candidates = candidates


class SemanticScholar(SourceClient):
    """Client for the Graph API endpoints the app needs."""

    def __init__(self, api_key: str | None = None, *, base_url: str | None = None,
                 http: HttpClient | None = None, timeout: float = 20.0, max_retries: int = 3,
                 sleep: Callable[[float], None] | None = None, cache: Cache | None = None):
        # RT_S2_URL points the sources at another server: a mirror, or a test server.
        base_url = base_url or os.environ.get("RT_S2_URL") or DEFAULT_BASE_URL
        kwargs = {"sleep": sleep} if sleep is not None else {}
        self.http = http or HttpClient(
            "Semantic Scholar", base_url, timeout=timeout, max_retries=max_retries, cache=cache,
            secret_headers={"x-api-key": api_key} if api_key else None, **kwargs)

    # -- authors ----------------------------------------------------------
    def search_authors(self, name: str, limit: int = 10) -> list[AuthorCandidate]:
        """Author profiles matching `name`, with a few of their paper titles."""
        query = " ".join((name or "").split())
        if not query:
            raise InputError("the author name is empty")
        body = self.http.get_json("/author/search", {"query": query, "fields": SEARCH_FIELDS,
                                                     "limit": max(1, min(limit, 100))})
        return [_candidate(a) for a in _data(body, "author search") if a.get("authorId")]

    def resolve_author(self, name: str, known_title: str | None = None,
                       affiliation: str | None = None) -> AuthorCandidate:
        """The one profile for `name` the evidence points to, else AmbiguousAuthor.

        A known paper title (normalised match) is the strongest evidence, then
        an affiliation substring; without evidence only a lone candidate whose
        name matches exactly is accepted.
        """
        candidates = self.search_authors(name)
        if not candidates:
            raise NotFoundError(f"Semantic Scholar has no author named {name!r}",
                                hint="Check the spelling, or try the name as it appears on papers.")
        return choose_author(name, candidates, known_title, affiliation)

    def author_with_papers(self, author_id: str, limit: int = 50) -> tuple[Researcher, list[Paper]]:
        """The author's record and up to `limit` of their papers (with abstracts
        where Semantic Scholar has them)."""
        author = self.http.get_json(f"/author/{_path_id(author_id)}", {"fields": AUTHOR_FIELDS})
        if not isinstance(author, dict) or not author.get("authorId"):
            raise SourceError(f"Semantic Scholar sent no author for id {author_id!r}")
        papers = self._author_papers(author_id, limit)
        return _researcher(author, papers), papers

    def _author_papers(self, author_id: str, limit: int) -> list[Paper]:
        path = f"/author/{_path_id(author_id)}/papers"
        rows = self._paged(path, limit, "author papers")
        return _papers(rows)

    # -- papers -----------------------------------------------------------
    def get_paper(self, paper_id: str) -> Paper:
        """One paper by S2 id, 'DOI:...', 'ARXIV:...' (or any id S2 accepts)."""
        body = self.http.get_json(f"/paper/{_path_id(paper_id)}", {"fields": PAPER_FIELDS})
        if not isinstance(body, dict) or not body.get("paperId"):
            raise SourceError(f"Semantic Scholar sent no paper for id {paper_id!r}")
        return s2_paper(body)

    def search_papers(self, query: str, limit: int = 10) -> list[Paper]:
        """Papers matching free text, by relevance (/paper/search; 'data' is absent or
        empty when nothing matches, which is an empty list, not an error)."""
        text = " ".join((query or "").split())
        if not text:
            raise InputError("the paper search query is empty")
        body = self.http.get_json("/paper/search", {"query": text, "fields": PAPER_FIELDS,
                                                    "limit": max(1, min(limit, 100))})
        return _papers(_data(body, "paper search"))

    def references(self, paper_id: str, limit: int = 100) -> list[Paper]:
        """Papers that `paper_id` cites (unresolved references without a title are dropped)."""
        path = f"/paper/{_path_id(paper_id)}/references"
        rows = self._paged(path, limit, "references")
        return _papers(r.get("citedPaper") for r in rows if isinstance(r, dict))

    def _paged(self, path: str, limit: int, what: str) -> list[dict]:
        """Follow offset/next until `limit` rows are in or the list ends."""
        rows: list[dict] = []
        offset = 0
        while len(rows) < limit:
            size = min(PAGE_LIMIT, limit - len(rows))
            body = self.http.get_json(path, {"fields": PAPER_FIELDS, "offset": offset, "limit": size})
            page = _data(body, what)
            rows.extend(page)
            nxt = body.get("next") if isinstance(body, dict) else None
            if not page or not isinstance(nxt, int) or nxt <= offset:
                break
            offset = nxt
        return rows[:limit]


def choose_author(name: str, candidates: list[AuthorCandidate], known_title: str | None,
                  affiliation: str | None) -> AuthorCandidate:
    """Pick the candidate the evidence singles out; raise AmbiguousAuthor otherwise."""
    pool, used, unmatched = list(candidates), [], []
    for label, keep in _evidence(known_title, affiliation):
        matched = [c for c in pool if keep(c)]
        (used if matched else unmatched).append(label)
        pool = matched or pool
    if len(pool) == 1 and used:
        return pool[0]
    if len(pool) == 1 and not unmatched and normalise_title(pool[0].name) == normalise_title(name):
        return pool[0]
    reason = _ambiguity_reason(pool, used, unmatched)
    raise AmbiguousAuthor(name, pool, reason)


def _evidence(known_title: str | None, affiliation: str | None) -> list[tuple[str, Callable]]:
    checks: list[tuple[str, Callable]] = []
    title = normalise_title(known_title or "")
    if title:
        checks.append((f"title {known_title!r}",
                       lambda c: title in {normalise_title(t) for t in c.all_titles}))
    aff = " ".join((affiliation or "").split()).casefold()
    if aff:
        checks.append((f"affiliation {affiliation!r}",
                       lambda c: any(aff in a.casefold() for a in c.affiliations)))
    return checks


def _ambiguity_reason(pool: list, used: list[str], unmatched: list[str]) -> str:
    parts = []
    if unmatched:
        parts.append("no candidate matches " + " or ".join(unmatched))
    if used and len(pool) > 1:
        parts.append("several match " + " and ".join(used))
    if not used and not unmatched:
        parts.append("no title or affiliation given to tell them apart")
    return "; ".join(parts)


def _data(body: Any, what: str) -> list[dict]:
    """The 'data' list of a Graph API list response ('data': null means none)."""
    if not isinstance(body, dict):
        raise SourceError(f"Semantic Scholar sent an unexpected {what} response")
    rows = body.get("data") or []
    if not isinstance(rows, list):
        raise SourceError(f"Semantic Scholar sent an unexpected {what} response")
    return [r for r in rows if isinstance(r, dict)]


def _path_id(value: str) -> str:
    """Quote an id for the URL path but keep ':' and '/' (DOI:10.1/x is valid as is)."""
    text = (value or "").strip()
    if not text:
        raise InputError("empty Semantic Scholar id")
    return quote(text, safe=":/")


def _candidate(author: dict) -> AuthorCandidate:
    titles = [p.get("title") or "" for p in author.get("papers") or [] if isinstance(p, dict)]
    titles = [t for t in titles if t]
    return AuthorCandidate(
        id=str(author["authorId"]),
        name=author.get("name") or "",
        affiliations=[a for a in author.get("affiliations") or [] if isinstance(a, str)],
        paper_count=int(author.get("paperCount") or 0),
        titles=titles[:SHOWN_TITLES],
        all_titles=titles,
    )


def _papers(rows: Any) -> list[Paper]:
    papers = []
    for row in rows:
        if isinstance(row, dict) and (row.get("title") or "").strip():
            papers.append(s2_paper(row))
    return papers


def s2_paper(row: dict) -> Paper:
    """A Paper from a Graph API paper object."""
    ext = row.get("externalIds") or {}
    abstract = " ".join((row.get("abstract") or "").split())
    paper = Paper(
        id="",
        title=" ".join((row.get("title") or "").split()),
        abstract=abstract,
        authors=[a.get("name") or "" for a in row.get("authors") or [] if isinstance(a, dict)],
        year=row.get("year") if isinstance(row.get("year"), int) else None,
        venue=row.get("venue") or "",
        fields=[f for f in row.get("fieldsOfStudy") or [] if isinstance(f, str)],
        arxiv_id=str(ext.get("ArXiv") or ""),
        doi=normalise_doi(str(ext.get("DOI") or "")),
        s2_id=row.get("paperId") or "",
        url=row.get("url") or "",
        abstract_source="semantic_scholar" if abstract else "",
    )
    paper.id = paper_key(paper)
    return paper


def _researcher(author: dict, papers: list[Paper]) -> Researcher:
    counts = Counter(f for p in papers for f in p.fields)
    return Researcher(
        id=f"s2:{author['authorId']}",
        name=author.get("name") or "",
        fields=[f for f, _ in counts.most_common(5)],
        affiliation="; ".join(a for a in author.get("affiliations") or [] if isinstance(a, str)),
        publication_ids=[p.id for p in papers],
        s2_id=str(author["authorId"]),
    )
