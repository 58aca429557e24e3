"""Vectors of texts known before any run, embedded once per installation.

Why: a run on the bundled community embeds texts of the bundled papers that no run
changes: each paper's gist (a field's centre), the phrases its key concepts are chosen
from, and the line a reviewer candidate's paper is matched by. On a fresh store, choosing
the key concepts took 0.3-0.6 s of MiniLM before the first model call of every one-shot
CLI run, and the candidates' papers as long again beside it (docs/PERFORMANCE.md). So
`scripts/setup` embeds those texts once (`community.write_kept_vectors`), into a file
beside the embedded model's files, and the local embedder takes a text's vector from it
before computing one (models/embed.py), keeping it in the store as if it had computed it.

The file holds text digests and vectors, no text. It answers only for the embedder, the
MiniLM code and the weight files it was made with (`identity`); for anything else, or a
file that cannot be read, it answers nothing and texts are embedded as before.
$RT_KEPT_VECTORS names the file (the tests give the session its own).
"""
from __future__ import annotations

import functools
import hashlib
import logging
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from .bundled import models_dir, temporary_beside

log = logging.getLogger(__name__)
VERSION = 1  # of the file's layout
_lock = threading.Lock()
_tables: dict[tuple, tuple[dict[str, int], np.ndarray] | None] = {}


def path() -> Path:
    """$RT_KEPT_VECTORS, else `text_vectors.npz` in the folder of the embedded model's files."""
    explicit = os.environ.get("RT_KEPT_VECTORS")
    return Path(explicit) if explicit else models_dir() / "text_vectors.npz"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@functools.cache
def identity(embedder: str) -> str:
    """What a kept vector depends on: the embedder's name, the MiniLM code that computed it
    and the model's files (names and sizes). Any change means the vectors are computed again."""
    from . import minilm  # noqa: PLC0415  (its module, not its weights)

    h = hashlib.sha256(f"{VERSION}|{embedder}|".encode())
    h.update(Path(minilm.__file__).read_bytes())
    for f in sorted(minilm.find_model_dir().iterdir()):
        if f.is_file():
            h.update(f"{f.name}:{f.stat().st_size}|".encode())
    return h.hexdigest()[:32]


def _read(file: Path, embedder: str) -> tuple[dict[str, int], np.ndarray] | None:
    try:
        with np.load(file, allow_pickle=False) as data:
            if str(data["identity"]) != identity(embedder):
                return None
            digests, vectors = [str(d) for d in data["digests"]], np.asarray(data["vectors"], np.float32)
    except FileNotFoundError:
        return None
    except Exception:  # a kept vector is a shortcut: a bad file means computing, never failing
        log.warning("kept vectors in %s could not be read; texts are embedded instead", file, exc_info=True)
        return None
    if vectors.ndim != 2 or len(vectors) != len(digests):
        return None
    return {d: i for i, d in enumerate(digests)}, vectors


def _table(embedder: str) -> tuple[dict[str, int], np.ndarray] | None:
    """The file's index and vectors, read once per process and again only when it changes."""
    file = path()
    try:
        st = file.stat()
        key = (str(file), st.st_mtime_ns, st.st_size, embedder)
    except OSError:
        return None
    with _lock:
        if key not in _tables:
            _tables[key] = _read(file, embedder)
        return _tables[key]


def lookup(embedder: str, texts: Iterable[str]) -> dict[str, np.ndarray]:
    """The kept vectors of those texts that have one, for this embedder."""
    try:
        table = _table(embedder)
    except Exception:  # no MiniLM package, no models folder: nothing kept
        log.debug("no kept vectors", exc_info=True)
        return {}
    if table is None:
        return {}
    index, vectors = table
    found = ((t, index.get(digest(t))) for t in texts)
    return {t: vectors[i] for t, i in found if i is not None}


def write(embedder: str, texts: Iterable[str], encode: Callable[[list[str]], np.ndarray]) -> tuple[Path, int]:
    """Keep the vectors of these texts, computed by `encode`, unless the file already keeps
    every one of them for this embedder: (the file, how many texts were embedded now)."""
    target = path()
    wanted = sorted(set(texts))
    held = _read(target, embedder)
    if held is not None and all(digest(t) in held[0] for t in wanted):
        return target, 0
    vectors = np.asarray(encode(wanted), dtype=np.float32)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_beside(target)
    try:
        with tmp.open("wb") as f:  # a file, not a name: np.savez would add ".npz" to the name
            np.savez(f, identity=np.array(identity(embedder)),
                     digests=np.array([digest(t) for t in wanted]), vectors=vectors)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target, len(wanted)
