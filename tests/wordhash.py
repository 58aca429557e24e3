"""A deterministic embedder for tests, registered with litellm like any provider.

`wordhash/<anything>` embeds a text as the normalised count of its words hashed into 64
buckets: texts that share words are close, and nothing is downloaded. It goes through
rt_core's real embedding path (Embedder -> embed_remote -> litellm -> this handler), so
a test can tell which embedder a run used by what this one was asked to embed.
"""
from __future__ import annotations

import hashlib
import re

import numpy as np

PREFIX = "wordhash"
DIM = 64
_instance = None


def vector(text: str) -> list[float]:
    v = np.zeros(DIM)
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        v[int(hashlib.sha256(w.encode()).hexdigest()[:8], 16) % DIM] += 1.0
    v[0] += 1e-3  # no zero vector for a text without words
    return list(v / np.linalg.norm(v))


def word_hash_embedder():
    """The process-wide handler (registered on first use); `texts` records what it embedded."""
    global _instance
    if _instance is None:
        from litellm import CustomLLM
        from litellm.types.utils import Embedding, EmbeddingResponse, Usage

        from rt_core.models import registry

        class WordHash(CustomLLM):
            def __init__(self) -> None:
                super().__init__()
                self.texts: list[str] = []

            def embedding(self, model, input, model_response, *args, **kwargs):
                texts = [input] if isinstance(input, str) else list(input)
                self.texts += texts
                return EmbeddingResponse(
                    model=model, data=[Embedding(embedding=vector(t), index=i, object="embedding")
                                       for i, t in enumerate(texts)],
                    usage=Usage(prompt_tokens=sum(len(t.split()) for t in texts),
                                total_tokens=sum(len(t.split()) for t in texts)))

            async def aembedding(self, model, input, model_response, *args, **kwargs):
                return self.embedding(model, input, model_response)

        _instance = WordHash()
        registry.register_provider(PREFIX, _instance)
    return _instance
