"""One uploaded record made into a Paper, field by field, and the collector that keeps
a file's records together (duplicates within the file skipped, problems recorded).

A bad record must not sink a good file: each unusable field raises RecordError naming
the field, the collector turns it into an error naming the record, and the valid
records still come through. Shared by every upload format (uploads.py is the way in).
"""
from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rt_core.errors import InputError
from rt_core.sources.ids import dedupe_keys, is_doi, normalise_doi, normalise_title, paper_key, parse_arxiv_id
from rt_core.types import Paper, Researcher

MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_ABSTRACT_CHARS = 20_000


@dataclass
class ImportResult:
    papers: list[Paper] = field(default_factory=list)
    researchers: list[Researcher] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class RecordError(Exception):
    """One field of one record is unusable; the record is skipped."""

    def __init__(self, field_name: str, message: str):
        super().__init__(message)
        self.field = field_name


# -- collecting records -------------------------------------------------------
class Importer:
    """Collects papers, skipping duplicates within the file, and records problems."""

    def __init__(self) -> None:
        self.result = ImportResult()
        self._seen: dict[str, tuple[Paper, str]] = {}

    def paper(self, raw: Mapping[str, Any], where: str, warn_duplicate: bool = True) -> Paper | None:
        try:
            paper = paper_from_mapping(raw, self.result.warnings, where)
        except RecordError as exc:
            self.result.errors.append(f"{where}: field '{exc.field}': {exc}")
            return None
        return self._add(paper, where, warn_duplicate)

    def _add(self, paper: Paper, where: str, warn_duplicate: bool) -> Paper:
        for key in dedupe_keys(paper):
            if key in self._seen:
                first, first_where = self._seen[key]
                if warn_duplicate:
                    self.result.warnings.append(
                        f"{where}: same paper as {first_where} ({key}); kept the first")
                return first
        for key in dedupe_keys(paper):
            self._seen[key] = (paper, where)
        self.result.papers.append(paper)
        return paper

    def find(self, ref: str) -> Paper | None:
        """A paper already imported, by its id or title."""
        text = ref.strip()
        for key in (text, text.lower(), f"title:{sha12(normalise_title(text))}"):
            if key in self._seen:
                return self._seen[key][0]
        return None

    def error(self, where: str, field_name: str, message: str) -> None:
        self.result.errors.append(f"{where}: field '{field_name}': {message}")


def sha12(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


# -- one record -> Paper ------------------------------------------------------
def paper_from_mapping(raw: Mapping[str, Any], warnings: list[str], where: str = "") -> Paper:
    """Validate one record's fields and build a Paper; RecordError names the bad field."""
    abstract = _abstract(raw.get("abstract"), warnings, where)
    paper = Paper(
        id="",
        title=_title(raw.get("title")),
        abstract=abstract,
        authors=_name_list(raw.get("authors"), "authors"),
        year=_year(raw.get("year")),
        venue=text_field(raw.get("venue"), "venue"),
        fields=_name_list(raw.get("fields"), "fields"),
        arxiv_id=_arxiv(raw.get("arxiv_id")),
        doi=_doi(raw.get("doi")),
        url=text_field(raw.get("url"), "url"),
        abstract_source="upload" if abstract else "",
    )
    paper.id = paper_key(paper)
    return paper


def text_field(value: Any, name: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise RecordError(name, f"expected text, got {type(value).__name__}")
    return " ".join(value.split())


def _title(value: Any) -> str:
    title = text_field(value, "title")
    if not title:
        raise RecordError("title", "missing or empty")
    if len(title) > 1000:
        raise RecordError("title", f"{len(title)} characters; a title has at most 1000")
    return title


def _abstract(value: Any, warnings: list[str], where: str) -> str:
    text = text_field(value, "abstract")
    if len(text) > MAX_ABSTRACT_CHARS:
        warnings.append(f"{where or 'abstract'}: abstract of {len(text)} characters truncated to "
                        f"{MAX_ABSTRACT_CHARS}")
        text = text[:MAX_ABSTRACT_CHARS]
    return text


def _name_list(value: Any, name: str) -> list[str]:
    """A list of strings, or one string separated by ';'."""
    if value is None:
        return []
    if isinstance(value, str):
        items = value.split(";")
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        items = value
    else:
        raise RecordError(name, "expected a list of text or a '; '-separated text")
    return [" ".join(i.split()) for i in items if i.strip()]


def _year(value: Any) -> int | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise RecordError("year", f"expected a year, got {value!r}")
    text = str(value).strip()
    if not text.isdigit() or not 1000 <= int(text) <= 2100:
        raise RecordError("year", f"not a year: {text[:20]!r}")
    return int(text)


def _arxiv(value: Any) -> str:
    text = text_field(value, "arxiv_id")
    if not text:
        return ""
    try:
        return parse_arxiv_id(text)
    except InputError:
        raise RecordError("arxiv_id", f"not an arXiv id: {text[:40]!r}") from None


def _doi(value: Any) -> str:
    text = text_field(value, "doi")
    if not text:
        return ""
    if not is_doi(text):
        raise RecordError("doi", f"not a DOI: {text[:60]!r}")
    return normalise_doi(text)



# -- a researcher --------------------------------------------------------------
def researcher_from_papers(name: str, papers: list[Paper], affiliation: str = "") -> Researcher:
    """A researcher record for `name` whose publications are `papers`."""
    clean = " ".join((name or "").split())
    slug = normalise_title(clean).replace(" ", "-")
    if not slug:
        raise InputError("the researcher needs a name")
    counts = Counter(f for p in papers for f in p.fields)
    return Researcher(
        id=f"researcher:{slug}",
        name=clean,
        fields=[f for f, _ in counts.most_common(5)],
        affiliation=" ".join((affiliation or "").split()),
        publication_ids=list(dict.fromkeys(p.id for p in papers)),
    )
