"""The bundled papers' facets, shipped with the app (assets/community/paper_facets.json).

Why: finding the facets of the papers a run meets for the first time was most of what the
first offline run in a fresh data folder paid and later runs did not (2.5-3.3 s against
0.2-0.4 s once kept in the store, 2026-12-06), so the first run took about twice the next
and the estimate, which learns one scale from the runs before, missed both. Shipped like the
papers' vectors (community.py: `paper_vectors.npz`), a first run reads them as any later run
reads the store.

An entry is read only when it was found by the current rules (`extract.VERSION`), from the
text the paper has now (`digest`: everything `extract` reads of a paper), and with the
embedder the run asks for (the topic phrase of a stated problem is picked with it): an
edited paper or changed rules find their facets again, never read stale ones.
Regenerate the file after the rules or papers.json change (tests/test_facets_bundle.py
says when): `.venv/bin/python -m rt_core.run.facets.bundle`.
"""
from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

from ...config import LOCAL_EMBEDDER
from ...types import Paper
from . import extract as _extract

ASSETS = Path(__file__).resolve().parents[3] / "assets" / "community"
FILE = ASSETS / "paper_facets.json"
COMMAND = ".venv/bin/python -m rt_core.run.facets.bundle"


def digest(paper: Paper) -> str:
    """A digest of what `extract` reads of a paper: its title, abstract and primary field."""
    read = [paper.title, paper.abstract or "", paper.fields[0] if paper.fields else ""]
    return hashlib.sha256(json.dumps(read).encode("utf-8")).hexdigest()[:16]


@functools.lru_cache(maxsize=4)
def _load(path: str, stamp: int) -> dict:
    """The file's content, read once per process and per change of the file (`stamp`)."""
    return json.loads(Path(path).read_text("utf-8"))


def shipped(path: Path | None = None) -> dict:
    """The shipped file ({"version", "embedder", "papers": {id: {"digest", "facets"}}});
    an empty one when it is missing."""
    path = path or FILE
    try:
        return _load(str(path), path.stat().st_mtime_ns)
    except FileNotFoundError:
        return {"papers": {}}


def usable(papers: list[Paper], embedder_name: str | None, path: Path | None = None) -> dict[str, dict]:
    """The shipped facet documents (`PaperFacets.to_dict()`) of these papers that are still
    right: found by the current rules, from the paper's present text, with this embedder."""
    data = shipped(path)
    if embedder_name is None or data.get("embedder") != embedder_name:
        return {}
    version = _extract.VERSION  # read at each call: the rules' version, not the one at import
    entries = data.get("papers") or {}
    out = {}
    for p in papers:
        entry = entries.get(p.id)
        if entry and entry["facets"].get("version") == version and entry["digest"] == digest(p):
            out[p.id] = entry["facets"]
    return out


def sentences(papers: list[Paper], path: Path | None = None) -> set[str]:
    """The sentences these papers' facets come from: what pairing a mechanism with a purpose
    compares (pair.py: `_fits`), so the setup keeps their vectors (community.kept_texts).
    Embedding them was most of what a run paid the first time it met a neighbourhood (1.3 of
    1.7 s of MiniLM in the app's default case study) and nothing the next time. Read from the
    shipped file where still right, else found (the sentences do not depend on the embedder)."""
    shipped = usable(papers, LOCAL_EMBEDDER, path)
    docs = [shipped.get(p.id) or _extract.extract(p).to_dict() for p in papers]
    return {f["sentence"] for d in docs for f in d["facets"] if f.get("sentence")}


def write(path: Path | None = None, embedder=None) -> tuple[Path, int]:
    """Find the facets of every bundled paper (papers.json beside the file) with the default
    embedder and write the file; returns it and how many papers it holds."""
    path = path or FILE
    if embedder is None:
        from ...models.embed import Embedder  # noqa: PLC0415  (loads MiniLM: only when asked)

        embedder = Embedder(LOCAL_EMBEDDER)
    papers = [Paper.from_dict(p) for p in json.loads((path.parent / "papers.json").read_text("utf-8"))]
    entries = {p.id: {"digest": digest(p), "facets": _extract.extract(p, embedder).to_dict()}
               for p in papers}
    doc = {"version": _extract.VERSION, "embedder": embedder.name, "papers": entries}
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False, sort_keys=True) + "\n", "utf-8")
    return path, len(entries)


if __name__ == "__main__":
    written, count = write()
    print(f"{count} papers' facets ({_extract.VERSION}) written to {written}")
