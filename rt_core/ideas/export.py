"""The starred ideas (or any list of them) written out: Markdown to read, JSON to process,
CSV for a spreadsheet. Each idea carries its run, its version and its neighbourhood (the
researchers and papers the run started from), so an exported idea can be traced back.

Model text is written as text: the Markdown escapes nothing a reader would not type, and
the CSV neutralises a cell that a spreadsheet would run as a formula."""
from __future__ import annotations

import csv
import io
import json

from ..errors import InputError
from ..fiveq import QUESTIONS
from .bank import Idea

FORMATS = ("md", "json", "csv")
CSV_COLUMNS = ("id", "run_id", "version", "kind", "created_at", "model", "mode", "fields", "researcher_ids",
               "paper_ids", "score", "seen_before", "starred", "note", "q1", "q2", "q3", "q4", "q5")


def export(ideas: list[Idea], fmt: str) -> str:
    if fmt not in FORMATS:
        raise InputError(f"unknown export format {fmt!r}", f"Choose one of: {', '.join(FORMATS)}.")
    return {"md": markdown, "json": as_json, "csv": as_csv}[fmt](ideas)


def as_json(ideas: list[Idea]) -> str:
    return json.dumps([i.to_dict() for i in ideas], indent=2, ensure_ascii=False)


def markdown(ideas: list[Idea]) -> str:
    lines = ["# Ideas", ""]
    if not ideas:
        lines.append("_No ideas._")
    for i in ideas:
        lines += [f"## {_line(i.q1) or i.id}", "",
                  f"- idea `{i.id}`: run `{i.run_id}`, version `{i.version}` ({i.kind}), {i.created_at}",
                  f"- model {i.model}, mode {i.mode}; fields: {', '.join(i.fields) or 'none'}",
                  f"- neighbourhood: researchers {', '.join(i.researcher_ids) or 'none'}; "
                  f"papers {', '.join(i.paper_ids) or 'none'}",
                  f"- mean score: {'-' if i.score is None else f'{i.score:.2f}'}"]
        if i.seen_before:
            lines.append(f"- seen before as `{i.seen_before}` (similarity {i.seen_similarity:.2f})")
        if i.note:
            lines.append(f"- note: {_line(i.note)}")
        lines.append("")
        for q in QUESTIONS:
            lines += [f"**{q.heading}**", "", i.answers.get(q.key, "") or "_(no answer)_", ""]
    return "\n".join(lines)


def _line(text: str) -> str:
    return " ".join((text or "").split())


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def as_csv(ideas: list[Idea]) -> str:
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(CSV_COLUMNS)
    for i in ideas:
        d = i.to_dict()
        row = {**d, **d["answers"], "fields": ";".join(i.fields), "researcher_ids": ";".join(i.researcher_ids),
               "paper_ids": ";".join(i.paper_ids), "starred": int(i.starred)}
        w.writerow([_cell(row.get(c)) for c in CSV_COLUMNS])
    return out.getvalue()
