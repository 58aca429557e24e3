"""Where papers and researchers come from: arXiv, Semantic Scholar, OpenAlex, uploads."""
from rt_core.sources.arxiv_source import ArxivSource, PapersNotFound
from rt_core.sources.http import HttpClient, MemoryCache
from rt_core.sources.ids import dedupe_keys, normalise_title, paper_key, parse_arxiv_id
from rt_core.sources.openalex import OpenAlex, OpenAlexAuthor, rebuild_abstract
from rt_core.sources.semantic_scholar import AmbiguousAuthor, AuthorCandidate, SemanticScholar
from rt_core.sources.uploads import ImportResult, paper_from_text, parse_upload, researcher_from_papers

__all__ = [
    "AmbiguousAuthor", "ArxivSource", "AuthorCandidate", "HttpClient", "ImportResult",
    "MemoryCache", "OpenAlex", "OpenAlexAuthor", "PapersNotFound", "SemanticScholar",
    "dedupe_keys", "normalise_title", "paper_from_text", "paper_key", "parse_arxiv_id",
    "parse_upload", "rebuild_abstract", "researcher_from_papers",
]
