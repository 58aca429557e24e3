"""The organiser's secret: who may see a study's results, export it, change or close it.

A rater only ever has the study code (the rater link). The organiser gets a random token once,
when the study is made; the store keeps only its SHA-256, so a copied database unlocks nothing.
The token carries 128 bits from `secrets`, which is why a plain unsalted hash is enough here (it
cannot be guessed, so there is nothing for a salt to slow down), and comparisons go through
`hmac.compare_digest` so their timing says nothing about how much of a guess was right.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets

TOKEN_BYTES = 16


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_hash(token: str) -> str:
    return hashlib.sha256((token or "").strip().encode("utf-8")).hexdigest()


def matches(token: str, stored_hash: str | None) -> bool:
    """True when `token` is the organiser token whose hash is stored; never for an empty token
    or a study that has no organiser token."""
    if not token or not stored_hash:
        return False
    return hmac.compare_digest(token_hash(token), stored_hash)


def token_from(text: str) -> str:
    """The token from whatever the organiser pasted: the token itself or the whole link."""
    text = (text or "").strip()
    if "organiser=" in text:
        text = text.split("organiser=", 1)[1].split("&", 1)[0]
    return text
