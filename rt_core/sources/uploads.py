"""Papers and researchers from files a user uploads (BibTeX, JSON, CSV) or pastes.

A bad record must not sink a good file: each malformed record becomes an
error naming its line or number and the field, and the valid records still
come through. Only failures of the whole file (too big, not UTF-8, broken
JSON, unknown type) raise InputError.

This module is the way in: it checks the whole file and picks the reader for its
type (upload_tables.py: JSON and CSV; upload_bibtex.py); upload_records.py makes
each record a Paper.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import PurePath

from rt_core.errors import InputError
from rt_core.sources.upload_bibtex import parse_bibtex
from rt_core.sources.upload_records import (
    MAX_ABSTRACT_CHARS,
    MAX_FILE_BYTES,
    Importer,
    ImportResult,
    RecordError,
    paper_from_mapping,
    researcher_from_papers,
)
from rt_core.sources.upload_tables import parse_csv, parse_json
from rt_core.types import Paper

__all__ = ["MAX_ABSTRACT_CHARS", "MAX_FILE_BYTES", "ImportResult", "paper_from_text", "parse_upload",
           "researcher_from_papers"]


# -- entry points -----------------------------------------------------------
def parse_upload(filename: str, data: bytes) -> ImportResult:
    """Read an uploaded .bib, .json or .csv file into papers and researchers."""
    parser = _parser_for(filename)
    text = _decode(filename, data)
    importer = Importer()
    parser(text, importer, filename)
    if not (importer.result.papers or importer.result.researchers or importer.result.errors):
        importer.result.warnings.append(f"{filename} holds no records")
    return importer.result


def paper_from_text(title: str, abstract: str, authors: Iterable[str] | str | None = None,
                    year: int | str | None = None) -> Paper:
    """A paper from a pasted title and abstract (InputError if unusable)."""
    text = " ".join((abstract or "").split())
    if not text:
        raise InputError("the abstract is empty", hint="Paste the paper's abstract.")
    if len(text) > MAX_ABSTRACT_CHARS:
        raise InputError(f"the abstract is {len(text)} characters; at most {MAX_ABSTRACT_CHARS} fit",
                         hint="Paste only the abstract, not the whole paper.")
    raw = {"title": title, "abstract": text, "authors": list(authors or []) if not isinstance(authors, str)
           else authors, "year": year}
    try:
        return paper_from_mapping(raw, [])
    except RecordError as exc:
        raise InputError(f"field '{exc.field}': {exc}") from None


# -- whole-file checks --------------------------------------------------------
def _parser_for(filename: str) -> Callable[[str, Importer, str], None]:
    suffix = PurePath(filename or "").suffix.lower()
    parsers = {".bib": parse_bibtex, ".bibtex": parse_bibtex, ".json": parse_json, ".csv": parse_csv}
    if suffix not in parsers:
        raise InputError(f"cannot read {filename!r}: unknown file type {suffix or '(none)'}",
                         hint="Upload a .bib, .json or .csv file.")
    return parsers[suffix]


def _decode(filename: str, data: bytes) -> str:
    if len(data) > MAX_FILE_BYTES:
        raise InputError(f"{filename} is {len(data) / 2**20:.1f} MB; the limit is "
                         f"{MAX_FILE_BYTES // 2**20} MB", hint="Split the file into smaller ones.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{filename} is not UTF-8 text (bad byte at position {exc.start})",
                         hint="Save the file as UTF-8 and upload it again.") from None
    if not text.strip():
        raise InputError(f"{filename} is empty")
    return text
