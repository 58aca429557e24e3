"""Identifiers for papers, so that one paper found through several sources
(arXiv, Semantic Scholar, OpenAlex, an upload) ends up as one record.
"""
from __future__ import annotations

import hashlib
import re
import unicodedata
from urllib.parse import unquote, urlsplit

from rt_core.errors import InputError
from rt_core.types import Paper

# New-style ids (April 2007 on): YYMM.NNNN (to 2014) or YYMM.NNNNN (2015 on).
_NEW_ID = re.compile(r"(?P<id>\d{2}(?:0[1-9]|1[0-2])\.\d{4,5})(?:v\d+)?")
# Old-style ids: archive[.SUBJECT]/YYMMNNN, e.g. hep-th/9901001, math.GT/0309136.
_OLD_ID = re.compile(
    r"(?P<archive>[a-z]+(?:-[a-z]+)*)(?:\.[A-Za-z]{2})?/(?P<num>\d{2}(?:0[1-9]|1[0-2])\d{3})(?:v\d+)?"
)
_ARXIV_HOSTS = ("arxiv.org", "www.arxiv.org", "export.arxiv.org")
_URL_KINDS = ("abs", "pdf", "html", "format", "ps")
_DOI_PREFIXES = ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/",
                 "http://dx.doi.org/", "doi.org/", "dx.doi.org/", "doi:")


def normalise_title(title: str) -> str:
    """Fold a title to a comparison form: no accents, case, LaTeX braces or punctuation.

    Two spellings of one title ("BERT: Pre-training..." vs "{BERT} pre-training")
    must compare equal; the result is idempotent.
    """
    text = title or ""
    for _ in range(3):  # casefold/NFKD can expose new foldable chars; settle them
        folded = _fold_once(text)
        if folded == text:
            break
        text = folded
    return text


def _fold_once(text: str) -> str:
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c)).casefold()
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c if c.isalnum() and not unicodedata.combining(c) else " " for c in text)
    return " ".join(text.split())


def parse_arxiv_id(text: str) -> str:
    """Return the version-less arXiv id in `text` (bare id, arXiv:..., abs/pdf URL).

    Raises InputError when `text` holds no arXiv id, so a typo never becomes
    a query for some other paper.
    """
    raw = (text or "").strip()
    candidate = _strip_arxiv_wrappers(raw)
    for pattern in (_NEW_ID, _OLD_ID):
        match = pattern.fullmatch(candidate)
        if match and _plausible(match):
            return _canonical(match)
    shown = raw if len(raw) <= 80 else raw[:77] + "..."
    raise InputError(
        f"not an arXiv id or URL: {shown!r}",
        hint="Use an id like 2106.15928 or hep-th/9901001, or an arxiv.org/abs/... link.",
    )


def _plausible(match: re.Match) -> bool:
    """New-style numbers have 4 digits up to 1412 and 5 digits from 1501 on."""
    new_id = match.groupdict().get("id")
    if not new_id:
        return True
    yymm, number = new_id.split(".")
    return len(number) == (5 if yymm >= "1501" else 4) and yymm >= "0704"


def _canonical(match: re.Match) -> str:
    groups = match.groupdict()
    if "archive" in groups:
        return f"{groups['archive']}/{groups['num']}"
    return groups["id"]


def _strip_arxiv_wrappers(text: str) -> str:
    """Peel URL, 'arXiv:' prefix and '.pdf' suffix off a candidate id."""
    if re.match(r"(?i)^(https?://)?(www\.|export\.)?arxiv\.org/", text):
        text = _path_of_arxiv_url(text)
    if text[:6].lower() == "arxiv:":
        text = text[6:].strip()
    if text.lower().endswith(".pdf"):
        text = text[:-4]
    return text


def _path_of_arxiv_url(text: str) -> str:
    if not re.match(r"(?i)^https?://", text):
        text = "https://" + text
    parts = urlsplit(text)
    if (parts.hostname or "").lower() not in _ARXIV_HOSTS:
        return text
    path = unquote(parts.path).strip("/")
    kind, _, rest = path.partition("/")
    return rest if kind.lower() in _URL_KINDS else path


def normalise_doi(text: str) -> str:
    """Lower-cased bare DOI ('10.x/y'), with any doi.org URL or 'doi:' prefix removed."""
    doi = (text or "").strip()
    lowered = doi.lower()
    for prefix in _DOI_PREFIXES:
        if lowered.startswith(prefix):
            doi = doi[len(prefix):]
            break
    return unquote(doi).strip().lower()


def is_doi(text: str) -> bool:
    """True when `text` looks like a DOI after normalising (10.<registrant>/<suffix>)."""
    return bool(re.fullmatch(r"10\.\d{4,9}/\S+", normalise_doi(text)))


def normalise_openalex_id(text: str) -> str:
    """'https://openalex.org/W123' -> 'W123' (also for A..., I..., C... ids)."""
    value = (text or "").strip().rstrip("/")
    return value.rsplit("/", 1)[-1].upper() if value else ""


def title_key(title: str) -> str:
    """'title:<first 12 hex of sha1(normalised title)>', or '' for an empty title."""
    norm = normalise_title(title)
    if not norm:
        return ""
    return "title:" + hashlib.sha1(norm.encode("utf-8")).hexdigest()[:12]


def _arxiv_key(paper: Paper) -> str:
    if not paper.arxiv_id.strip():
        return ""
    try:
        return "arxiv:" + parse_arxiv_id(paper.arxiv_id)
    except InputError:
        return "arxiv:" + paper.arxiv_id.strip().lower()


def _keys_in_order(paper: Paper) -> list[str]:
    doi = normalise_doi(paper.doi)
    keys = [
        _arxiv_key(paper),
        f"doi:{doi}" if doi else "",
        f"s2:{paper.s2_id.strip()}" if paper.s2_id.strip() else "",
        f"openalex:{normalise_openalex_id(paper.openalex_id)}" if paper.openalex_id.strip() else "",
        title_key(paper.title),
    ]
    return [k for k in keys if k]


def paper_key(paper: Paper) -> str:
    """The canonical id of a paper: arxiv, then doi, s2, openalex, then title hash.

    Stable across sources, so re-importing a paper finds the stored one.
    """
    keys = _keys_in_order(paper)
    if not keys:
        raise InputError("a paper needs a title or an id (arXiv, DOI, Semantic Scholar, OpenAlex)")
    return keys[0]


def dedupe_keys(paper: Paper) -> list[str]:
    """Every key that identifies `paper` (canonical first), so a store can merge
    two records that share any one of them."""
    return list(dict.fromkeys(_keys_in_order(paper)))
