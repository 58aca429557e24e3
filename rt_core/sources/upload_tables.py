"""Uploaded JSON and CSV files: their layout checked, each record handed to the collector.

JSON holds papers (a list, or an object with 'papers') and researchers (with their papers
as objects or as ids/titles of papers in the file); CSV holds one paper per row under a
header that names the columns (CSV_COLUMNS, with a few aliases).
"""
from __future__ import annotations

import csv
import io
import json
from typing import Any

from rt_core.errors import InputError
from rt_core.sources.upload_records import (
    MAX_FILE_BYTES,
    Importer,
    RecordError,
    researcher_from_papers,
    text_field,
)
from rt_core.types import Paper

CSV_COLUMNS = ("title", "authors", "year", "abstract", "arxiv_id", "doi", "venue", "fields", "url")
_CSV_ALIASES = {"author": "authors", "arxiv": "arxiv_id", "arxivid": "arxiv_id",
                "field": "fields", "keywords": "fields"}


# -- JSON ----------------------------------------------------------------------
def parse_json(text: str, importer: Importer, filename: str) -> None:
    try:
        body = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{filename} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
                         hint="Fix the JSON or export the file again.") from None
    if isinstance(body, list):
        body = {"papers": body}
    if not isinstance(body, dict) or not ({"papers", "researchers"} & body.keys()):
        raise InputError(f"{filename}: expected a list of papers or an object with "
                         f"'papers' and/or 'researchers'")
    for i, raw in enumerate(_json_list(body, "papers", filename), 1):
        _json_paper(raw, f"paper {i}", importer)
    for i, raw in enumerate(_json_list(body, "researchers", filename), 1):
        _json_researcher(raw, f"researcher {i}", importer)


def _json_list(body: dict, key: str, filename: str) -> list:
    value = body.get(key) or []
    if not isinstance(value, list):
        raise InputError(f"{filename}: '{key}' must be a list")
    return value


def _json_paper(raw: Any, where: str, importer: Importer, warn_duplicate: bool = True) -> Paper | None:
    if not isinstance(raw, dict):
        importer.error(where, "(record)", f"expected an object, got {type(raw).__name__}")
        return None
    return importer.paper(raw, where, warn_duplicate)


def _json_researcher(raw: Any, where: str, importer: Importer) -> None:
    if not isinstance(raw, dict):
        importer.error(where, "(record)", f"expected an object, got {type(raw).__name__}")
        return
    try:
        name = text_field(raw.get("name"), "name")
        affiliation = text_field(raw.get("affiliation"), "affiliation")
    except RecordError as exc:
        importer.error(where, exc.field, str(exc))
        return
    if not name:
        importer.error(where, "name", "missing or empty")
        return
    papers = _researcher_papers(raw.get("papers"), where, importer)
    if papers is not None:
        importer.result.researchers.append(researcher_from_papers(name, papers, affiliation))


def _researcher_papers(value: Any, where: str, importer: Importer) -> list[Paper] | None:
    """A researcher's papers: objects (imported too) or ids/titles of papers in the file."""
    if value is not None and not isinstance(value, list):
        importer.error(where, "papers", "expected a list")
        return None
    papers = []
    for j, item in enumerate(value or [], 1):
        item_where = f"{where} paper {j}"
        paper = importer.find(item) if isinstance(item, str) else _json_paper(item, item_where, importer,
                                                                              warn_duplicate=False)
        if isinstance(item, str) and paper is None:
            importer.error(item_where, "papers", f"no paper in the file has id or title {item[:60]!r}")
        if paper is not None:
            papers.append(paper)
    return papers


# -- CSV -----------------------------------------------------------------------
def parse_csv(text: str, importer: Importer, filename: str) -> None:
    csv.field_size_limit(max(csv.field_size_limit(), MAX_FILE_BYTES))  # long abstracts are truncated later
    reader = csv.reader(io.StringIO(text, newline=""))
    header = _csv_header(reader, filename, importer)
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise InputError(f"{filename}: broken CSV at line {reader.line_num}: {exc}") from None
        if any(cell.strip() for cell in row):
            _csv_row(row, header, f"line {start}", importer)


def _csv_header(reader: Any, filename: str, importer: Importer) -> list[str]:
    try:
        names = next(reader)
    except (StopIteration, csv.Error):
        raise InputError(f"{filename}: no CSV header line") from None
    header = [_CSV_ALIASES.get(n.strip().lower().replace(" ", "_"), n.strip().lower().replace(" ", "_"))
              for n in names]
    if "title" not in header:
        raise InputError(f"{filename}: the CSV needs a 'title' column (columns: {', '.join(CSV_COLUMNS)})")
    unknown = [n for n in header if n and n not in CSV_COLUMNS]
    if unknown:
        importer.result.warnings.append(f"{filename}: ignored columns {', '.join(unknown)}")
    return header


def _csv_row(row: list[str], header: list[str], where: str, importer: Importer) -> None:
    if len(row) > len(header):
        importer.error(where, "(row)", f"{len(row)} cells but the header has {len(header)} columns")
        return
    row = row + [""] * (len(header) - len(row))  # a short row leaves its last cells empty
    raw = {name: cell for name, cell in zip(header, row, strict=True) if name in CSV_COLUMNS}
    importer.paper(raw, where)
