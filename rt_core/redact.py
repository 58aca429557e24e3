"""Secrets taken out of text before it is cut, shown, logged or exported.

An error's detail is often a provider's own message, which may echo the key it was sent (in
a URL's query, a header dump) or the base URL it was sent to, credentials and all
(`http://user:pass@host/v1`). Hiding has to come before any cut: a key across the cut is no
longer the key, so a replace after it leaves its prefix in the text. `cut` is therefore the
only way rt_core shortens such a detail. A leaf module (imports nothing of rt_core), so
rt_core.errors can apply it to every error message.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "***"
# scheme://user:password@ or scheme://token@ : the part before '@' is a credential.
_URL_USERINFO = re.compile(r"""(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@?#"'<>]+@""")
# Keys in a URL's query or a header-like "key=..." pair.
_KEY_PARAMS = re.compile(r"(?i)\b((?:api[_-]?key|key|token|access[_-]?token|secret|password)=)[^&\s\"'<>]+")
# The shapes of the common providers' keys (OpenAI, Anthropic, ...), when the key itself is unknown.
_KEY_SHAPES = re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}|\bBearer\s+[A-Za-z0-9._~+/=-]{12,}")


def hide(text: str, keys: Iterable[str] = ()) -> str:
    """The text with every given key, every URL's credentials, key parameters and key-shaped
    tokens replaced by ***. The given keys go first, longest first (one may contain another)."""
    text = "" if text is None else str(text)
    for key in sorted({k.strip() for k in keys if k and len(k.strip()) >= 4}, key=len, reverse=True):
        text = text.replace(key, MASK)
    text = _URL_USERINFO.sub(rf"\g<1>{MASK}@", text)
    text = _KEY_PARAMS.sub(rf"\g<1>{MASK}", text)
    return _KEY_SHAPES.sub(MASK, text)


def hide_url(url: str) -> str:
    """A base URL as it may be shown or exported: its credentials replaced."""
    return hide(url or "")


def cut(text: str, limit: int, keys: Iterable[str] = ()) -> str:
    """`hide`, then one line of at most `limit` characters: the order matters (see above)."""
    return hide(str(text), keys).replace("\n", " ")[:limit]
