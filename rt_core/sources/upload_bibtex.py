"""Uploaded BibTeX: entries mapped onto upload fields (eprint or an arxiv.org URL give
the arXiv id), and entries the parser gave up on explained in plain words.
"""
from __future__ import annotations

import re
from typing import Any

import bibtexparser
from bibtexparser import middlewares as mw
from bibtexparser.model import DuplicateBlockKeyBlock

from rt_core.errors import InputError
from rt_core.sources.ids import parse_arxiv_id
from rt_core.sources.upload_records import Importer, RecordError


# -- BibTeX --------------------------------------------------------------------
def parse_bibtex(text: str, importer: Importer, filename: str) -> None:
    library = _bib_library(text, filename)
    for block in library.failed_blocks:
        _bib_failed(block, importer)
    for entry in library.entries:
        where = f"entry '{entry.key}' (line {entry.start_line + 1})"
        try:
            raw = _bib_fields(entry)
        except RecordError as exc:
            importer.error(where, exc.field, str(exc))
            continue
        importer.paper(raw, where)


def _bib_library(text: str, filename: str) -> Any:
    try:
        return bibtexparser.parse_string(text, append_middleware=[
            mw.LatexDecodingMiddleware(), mw.SeparateCoAuthors(), mw.SplitNameParts()])
    except Exception as exc:  # the parser has no public error hierarchy
        raise InputError(f"{filename}: could not read the BibTeX: {exc}") from None


def _bib_failed(block: Any, importer: Importer) -> None:
    line = (getattr(block, "start_line", 0) or 0) + 1
    if isinstance(block, DuplicateBlockKeyBlock):
        importer.result.warnings.append(f"line {line}: entry key '{block.key}' appears twice; kept the first")
        return
    raw = str(getattr(block, "raw", "") or "")
    head = " ".join(raw.split())
    quote = head if len(head) <= 70 else head[:70] + " ..."
    importer.result.errors.append(f"line {line}: entry `{quote}` is not valid BibTeX: "
                                  f"{_bib_diagnose(raw)}")


_BIB_HEAD = re.compile(r"@\s*(\w+)\s*([{(])\s*([^,\s={}()]*)\s*(,?)")


def _bib_diagnose(raw: str) -> str:
    """What is wrong with an entry the parser gave up on, in plain words (the parser's own
    message only reaches its log)."""
    m = _BIB_HEAD.match(raw.lstrip())
    if not m:
        return "it does not start like '@article{key,'"
    kind, opener, key, comma = m.groups()
    if not key:
        return f"the @{kind} entry has no citation key after '{opener}'"
    if not comma:
        return f"there is no comma after the entry key '{key}'"
    opens, closes = raw.count("{"), raw.count("}")
    if opens > closes:
        return f"a closing brace is missing ({opens} '{{' but {closes} '}}'); the entry runs on"
    if closes > opens:
        return f"there is an extra closing brace ({opens} '{{' but {closes} '}}')"
    body = raw[m.end():]
    for part in re.split(r",\s*\n", body):
        part = part.strip().rstrip("})").strip()
        if part and "=" not in part:
            return f"'{' '.join(part.split())[:40]}' is not written as name = {{value}}"
    return "a field value is not in braces or quotes, or a comma between fields is missing"


def _bib_fields(entry: Any) -> dict[str, Any]:
    """Map a BibTeX entry onto upload fields; eprint/url give the arXiv id."""
    f = {k.lower(): v.value for k, v in entry.fields_dict.items()}
    return {
        "title": _bib_str(f.get("title"), "title"),
        "authors": _bib_names(f.get("author")),
        "year": _bib_year(f),
        "abstract": _bib_str(f.get("abstract"), "abstract"),
        "doi": _bib_str(f.get("doi"), "doi") or None,
        "arxiv_id": _bib_arxiv(f),
        "venue": _bib_str(f.get("journal") or f.get("booktitle") or f.get("journaltitle"), "venue"),
        "fields": _bib_str(f.get("keywords"), "keywords").replace(",", ";") or None,
        "url": _bib_str(f.get("url"), "url"),
    }


def _bib_str(value: Any, name: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise RecordError(name, "could not be read as text")
    return " ".join(value.replace("{", "").replace("}", "").split())


def _bib_names(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    names = []
    for parts in value:
        if hasattr(parts, "first"):
            name = " ".join(parts.first + parts.von + parts.last)
            name = f"{name}, {' '.join(parts.jr)}" if parts.jr else name
        else:
            name = str(parts)
        name = " ".join(name.replace("{", "").replace("}", "").split())
        if name and name.lower() != "others":
            names.append(name)
    return names


def _bib_year(f: dict[str, Any]) -> str | None:
    year = _bib_str(f.get("year"), "year")
    if not year:
        year = _bib_str(f.get("date"), "date")[:4]
    return year or None


def _bib_arxiv(f: dict[str, Any]) -> str | None:
    """The arXiv id from eprint (when it is one) or an arxiv.org URL; else None."""
    for value in (f.get("eprint"), f.get("url"), f.get("arxiv")):
        if isinstance(value, str) and value.strip():
            try:
                return parse_arxiv_id(value)
            except InputError:
                continue
    return None
