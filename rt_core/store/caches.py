"""Caches kept in the store: model replies, embeddings, HTTP bodies and profiles.

Each is a small class over the shared database, so a caller holds exactly the
cache it needs (the paper sources get `HttpCache`, the model client `LLMCache`).
"""
from __future__ import annotations

import hashlib
import json

import numpy as np

from ..errors import InputError
from .db import Database

CACHE_TABLES = ("llm_cache", "embedding_cache", "http_cache", "profiles")


class LLMCache:
    def __init__(self, db: Database):
        self.db = db

    def get(self, key: str) -> dict | None:
        row = self.db.conn.execute("SELECT response, prompt_tokens, completion_tokens FROM llm_cache "
                                "WHERE key=?", (key,)).fetchone()
        if not row:
            return None
        return {"text": row[0], "prompt_tokens": row[1], "completion_tokens": row[2]}

    def put(self, key: str, model: str, text: str, prompt_tokens: int,
                      completion_tokens: int) -> None:
        """Store an answer; the claim on its call (claims.py) ends in the same transaction,
        so a process waiting for it sees the answer, never a gap without either."""
        with self.db.transaction() as db:
            db.execute("INSERT INTO llm_cache(key, model, response, prompt_tokens, completion_tokens) "
                       "VALUES (?, ?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET model=excluded.model, "
                       "response=excluded.response, prompt_tokens=excluded.prompt_tokens, "
                       "completion_tokens=excluded.completion_tokens, created_at=datetime('now')",
                       (key, model, text, prompt_tokens, completion_tokens))
            db.execute("DELETE FROM llm_claims WHERE key=?", (key,))


class EmbeddingCache:
    def __init__(self, db: Database):
        self.db = db

    @staticmethod
    def text_hash(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def get(self, model: str, texts: list[str]) -> dict[str, np.ndarray]:
        out = {}
        for t in texts:
            row = self.db.conn.execute("SELECT vector FROM embedding_cache WHERE model=? AND text_hash=?",
                                    (model, self.text_hash(t))).fetchone()
            if row:
                out[t] = np.frombuffer(row[0], dtype=np.float32)
        return out

    def put(self, model: str, items: dict[str, np.ndarray]) -> None:
        with self.db.transaction() as db:
            for t, v in items.items():
                v = np.asarray(v, dtype=np.float32)
                db.execute("INSERT INTO embedding_cache VALUES (?, ?, ?, ?) ON CONFLICT(model, "
                           "text_hash) DO UPDATE SET dim=excluded.dim, vector=excluded.vector",
                           (model, self.text_hash(t), int(v.shape[0]), v.tobytes()))


class HttpCache:
    """Text bodies of paper-source requests (the sources' `Cache` protocol)."""

    def __init__(self, db: Database):
        self.db = db

    HTTP_CACHE_DAYS = 7  # papers change rarely; a week keeps repeated imports offline-fast

    def get(self, key: str) -> str | None:
        row = self.db.conn.execute("SELECT body FROM http_cache WHERE key=? AND created_at >= "
                                "datetime('now', ?)", (key, f"-{self.HTTP_CACHE_DAYS} days")).fetchone()
        return row[0] if row else None

    def set(self, key: str, value: str) -> None:
        self.db.conn.execute("INSERT INTO http_cache(key, body, created_at) VALUES "
                          "(?, ?, datetime('now')) ON CONFLICT(key) DO UPDATE SET body=excluded.body, "
                          "created_at=excluded.created_at", (key, value))


class ProfileCache:
    def __init__(self, db: Database):
        self.db = db

    def get(self, researcher_id: str, model: str, papers_key: str) -> str | None:
        row = self.db.conn.execute("SELECT text FROM profiles WHERE researcher_id=? AND model=? AND "
                                "papers_key=?", (researcher_id, model, papers_key)).fetchone()
        return row[0] if row else None

    def put(self, researcher_id: str, model: str, papers_key: str, text: str,
                    paper_ids: list[str]) -> None:
        self.db.conn.execute("INSERT INTO profiles(researcher_id, model, papers_key, text, "
                          "paper_ids_json) VALUES (?, ?, ?, ?, ?) ON CONFLICT(researcher_id, model, "
                          "papers_key) DO UPDATE SET text=excluded.text, paper_ids_json="
                          "excluded.paper_ids_json, created_at=datetime('now')",
                          (researcher_id, model, papers_key, text, json.dumps(paper_ids)))


def cache_sizes(db: Database) -> dict[str, int]:
    return {name: db.conn.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
            for name in CACHE_TABLES}


def clear_caches(db: Database, which=CACHE_TABLES) -> None:
    with db.transaction() as conn:
        for name in which:
            if name not in CACHE_TABLES:
                raise InputError(f"not a cache: {name}")
            conn.execute(f"DELETE FROM {name}")
