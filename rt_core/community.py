"""The bundled starter community (assets/community): load it into the store, list presets.

Loading is idempotent and versioned: the store remembers a hash of the asset
files and reloads only when they change. Everything goes in one transaction.

The papers come with their vectors from the default embedder (paper_vectors.npz, written
by `write_vectors`): the novelty check and search by meaning compare against every paper,
and embedding the 139 bundled ones took 11.4 s on two cores, the whole of a first run's
novelty stage on a fresh store. A vector is stored only for a paper whose stored text is
the text it was computed from; any other is embedded when first needed, as before.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from .errors import InputError
from .store import Store, open_store
from .store.paper_vectors import paper_text, text_hash
from .types import Paper, Proposal, Researcher

ASSETS = Path(__file__).resolve().parents[1] / "assets" / "community"
VECTORS = "paper_vectors.npz"
_FILES = ("fields.json", "papers.json", "researchers.json", "presets.json", "replay_targets.json",
          VECTORS)


def _read(name: str, folder: Path = ASSETS):
    path = folder / name
    if not path.exists():
        return []
    return json.loads(path.read_text("utf-8"))


def version(folder: Path = ASSETS) -> str:
    h = hashlib.sha256()
    for name in _FILES:
        path = folder / name
        if path.exists():
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


def ensure_loaded(store: Store, folder: Path = ASSETS) -> bool:
    """Load the starter community unless this version is already in; True if loaded now."""
    v = version(folder)
    if store.db.get_meta("community_version") == v:
        return False
    with store.transaction():
        store.corpus.upsert_fields(_read("fields.json", folder))
        store.corpus.import_bundle([Paper.from_dict(p) for p in _read("papers.json", folder)],
                                   [Researcher.from_dict(r) for r in _read("researchers.json", folder)],
                                   origin="starter")
        for target in replay_targets(folder):
            # Our own five-question summary of the paper: one of the reference sources an
            # evaluation may use (marked as a summary, never as the authors' text).
            store.references.put(target["paper_id"], "summary", Proposal.from_dict(target["five_q"]),
                                 note=target.get("five_q_source", "summary written for this app"))
        store.db.set_meta("community_version", v)
    put_vectors(store, folder)
    return True


def put_vectors(store: Store, folder: Path = ASSETS) -> int:
    """Store the bundled papers' vectors for the papers whose stored text they were computed
    from (a paper merged with one stored before keeps that one's id and text); how many."""
    path = folder / VECTORS
    if not path.exists():
        return 0
    with np.load(path, allow_pickle=False) as data:
        model, ids, hashes, matrix = str(data["model"]), list(data["ids"]), list(data["hashes"]), data["vectors"]
    held = [pid for pid in ids if store.corpus.paper_exists(pid)]
    stored = {p.id: paper_text(p.title, p.abstract) for p in store.corpus.get_papers(held)}
    given = {pid: (stored[pid], matrix[i]) for i, (pid, h) in enumerate(zip(ids, hashes, strict=True))
             if pid in stored and text_hash(stored[pid]) == h}
    store.corpus.vectors.put(model, given)
    return len(given)


def write_vectors(folder: Path = ASSETS) -> Path:
    """Embed the bundled papers with the default embedder and write their vectors beside
    them. Run it after papers.json changes (tests/test_community.py says when):
    `.venv/bin/python -c "from rt_core.community import write_vectors; write_vectors()"`."""
    from .models.embed import Embedder  # noqa: PLC0415  (loads MiniLM: only when asked)

    papers = [Paper.from_dict(p) for p in _read("papers.json", folder)]
    texts = [paper_text(p.title, p.abstract) for p in papers]
    embedder = Embedder()
    path = folder / VECTORS
    np.savez_compressed(path, model=np.array(embedder.name), ids=np.array([p.id for p in papers]),
                        hashes=np.array([text_hash(t) for t in texts]),
                        vectors=embedder.encode(texts).astype(np.float16))
    return path


def kept_texts(folder: Path = ASSETS) -> set[str]:
    """What runs embed of the bundled papers whatever the neighbourhood: their gists and
    concept phrases (grounding), the lines reviewer candidates are matched by and the
    sentences of their facets (the pairings compare them: run/facets/bundle.py)."""
    from .run.facets import bundle  # noqa: PLC0415
    from .run.people.reviewers import ReviewerChoice  # noqa: PLC0415  (networkx: slow)
    from .run.styles.grounding import embedded_texts  # noqa: PLC0415

    papers = [Paper.from_dict(p) for p in _read("papers.json", folder)]
    own = {t for p in papers for t in [*embedded_texts(p), ReviewerChoice.embedded_text(p)]}
    return own | bundle.sentences(papers, folder / bundle.FILE.name)


def write_kept_vectors(folder: Path = ASSETS) -> tuple[Path, int]:
    """Embed `kept_texts` once per installation (models/kept_vectors.py); `scripts/setup`
    calls it, and it embeds nothing when the file already keeps them all. Returns (the
    file, how many texts were embedded now)."""
    from .models import kept_vectors  # noqa: PLC0415
    from .models.embed import Embedder  # noqa: PLC0415  (loads MiniLM: only when asked)

    embedder = Embedder()
    return kept_vectors.write(embedder.name, kept_texts(folder), embedder.compute)


def loaded_store(path: str | None = None) -> Store:
    """The store at `path` (open_store's default when None) with the starter community in
    it: what every command that reads the neighbourhood opens."""
    store = open_store(path)
    ensure_loaded(store)
    return store


def replay_targets(folder: Path = ASSETS) -> list[dict]:
    """Papers of the starter community that can be replayed offline: each has its cite
    edges in papers.json and a five-question summary written for this app."""
    targets = list(_read("replay_targets.json", folder))
    for t in targets:
        if set(t.get("five_q") or {}) != {"q1", "q2", "q3", "q4", "q5"}:
            raise InputError(f"replay target {t.get('paper_id')}: five_q needs q1 to q5")
    return targets


def presets(folder: Path = ASSETS) -> list[dict]:
    return list(_read("presets.json", folder))


def preset(preset_id: str, folder: Path = ASSETS) -> dict:
    for p in presets(folder):
        if p["id"] == preset_id:
            return p
    raise InputError(f"unknown preset '{preset_id}'")


def field_domains(store: Store) -> dict[str, str]:
    return {f["id"]: f["domain"] for f in store.corpus.list_fields()}


def refresh_abstracts(store: Store, source=None, limit: int = 200) -> dict:
    """Replace our own summaries with the real arXiv abstracts (needs internet).

    Papers merge by arXiv id, and a real abstract replaces a summary (see
    Corpus.upsert_papers), so this is safe to run again. Returns counts and the
    ids arXiv did not know.
    """
    from .sources import clients  # noqa: PLC0415
    from .sources.arxiv_source import PapersNotFound  # noqa: PLC0415

    ids = store.corpus.summarised_arxiv_ids(limit)
    if not ids:
        return {"updated": 0, "missing": []}
    source = source or clients.arxiv(store.http_cache)
    try:
        papers, missing = source.fetch(ids), []
    except PapersNotFound as exc:
        papers, missing = exc.found, exc.missing
    fresh = [p for p in papers if p.abstract]
    for p in fresh:  # keep our ids; the store merges on arxiv_id
        p.abstract_source = p.abstract_source or "arxiv"
    store.corpus.upsert_papers(fresh, origin="arxiv")
    return {"updated": len(fresh), "missing": missing}
