"""Names a small model invents, and review points that are not about the proposal.

Gemma 3 270M likes to coin an acronym for whatever it just wrote ("consumer-support
agents (CPSAs)") or to name an institution nobody mentioned ("Simons Observatory
(SOHO)"). A name is trusted only when it appears in the material the line was written
from: what the model was shown (the document) and the neighbourhood's papers in full.
A parenthesised acronym that is not there is cut from the line (the sentence reads the
same without it); any other unknown acronym or capitalised multi-word name cannot be cut
without breaking the sentence, so the caller drops or penalises the whole line.
"""
from __future__ import annotations

import re

from ...text import words
from ...types import Paper

# An acronym: at least two capitals among letters, digits and hyphens, perhaps a plural s
# or a lower-case lead ("eGaaS", which the embedded model coined in a review).
_ACRONYM = r"[a-z]?[A-Z][A-Za-z0-9\-]*[A-Z][A-Za-z0-9\-]*"
_PAREN_ACRONYM = re.compile(rf"\s*\(({_ACRONYM})\)")
_BARE_ACRONYM = re.compile(rf"(?<![\w-])({_ACRONYM})(?![\w-])")
# Two or more capitalised words in a row ("Simons Observatory", "Vera Rubin Observatory").
_NAME = re.compile(r"(?<![\w-])[A-Z][a-z]+(?:[ \-][A-Z][a-z]+)+(?![\w-])")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n|^\s*-\s+)$")
# Acronyms any reader knows, whatever the material says.
COMMON = frozenset(["AI", "ML", "NLP", "LLM", "GPU", "CPU", "DNA", "RNA", "US", "USA", "UK", "EU", "UN"])


def material_text(document: str, papers: list[Paper] = ()) -> str:
    """Everything a line may take a name from: the document and the papers in full."""
    return document + "\n" + "\n".join(f"{p.title}. {p.abstract}" for p in papers)


def _known_acronym(acr: str, material: str) -> bool:
    if acr in COMMON or acr.rstrip("s") in COMMON:
        return True
    forms = {acr, acr[:-1]} if acr.endswith("s") and len(acr) > 2 else {acr}
    return any(re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", material) for f in forms)


def _names(text: str) -> list[str]:
    """Capitalised multi-word names, without a sentence-initial word ("The Simons
    Observatory" is the name "Simons Observatory"; "Dark Matter" at a sentence start
    is not a name unless both words stay capitalised past it)."""
    out = []
    for m in _NAME.finditer(text):
        name = m.group(0)
        if _SENTENCE_START.search(text[:m.start()]):
            name = name.split(" ", 1)[1] if " " in name else ""
            if " " not in name:
                continue
        out.append(name)
    return out


def invented(text: str, material: str) -> list[str]:
    """The acronyms and multi-word names of `text` that appear nowhere in `material`."""
    low = material.lower()
    acrs = [a for a in _BARE_ACRONYM.findall(text) if not _known_acronym(a, material)]
    names = [n for n in _names(text) if n.lower() not in low]
    return list(dict.fromkeys(acrs + names))


def drop_invented(text: str, material: str) -> tuple[str, list[str]]:
    """(text without its unknown parenthesised acronyms, the unknown names left in it)."""
    cut = _PAREN_ACRONYM.sub(lambda m: "" if not _known_acronym(m.group(1), material)
                             else m.group(0), text or "")
    return cut, invented(cut, material)


# A review point refers to the proposal when it shares at least this many content words
# (not generic filler) with the proposal's text or its key concepts.
REFERS_MIN_WORDS = 1


def refers_to(point: str, subject_words: set[str], generic: frozenset[str]) -> bool:
    """Whether a review point says something about this proposal ("The proposal is about
    to be submitted." shares no word with any proposal and does not)."""
    return len((words(point) & subject_words) - generic) >= REFERS_MIN_WORDS
