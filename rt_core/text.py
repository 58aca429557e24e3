"""Small text helpers every part of a run shares, defined once: cutting text to a
length, a text's sentences (and whether one is finished), and its content words (one
stop-word list).

A leaf module (it imports nothing of rt_core), so stages, grounding, reviewer choice
and evaluation can all use it without an import circle.
"""
from __future__ import annotations

import re

import sentencex


def clip(text: str, limit: int) -> str:
    """Whitespace folded, cut at a word boundary with ' ...' when longer than limit."""
    text = re.sub(r"\s+", " ", text or "").strip()
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " ..."


def sentences(text: str) -> list[str]:
    """A text's sentences, split by sentencex (Wikimedia's segmenter, which knows that
    "e.g.", "i.e.", "et al." and "Fig." end no sentence; a split at every full stop left
    "...data analysis project (e."). A piece without a letter (a closing bracket the
    segmenter split off) stays with the sentence before it."""
    text = re.sub(r"\s+", " ", text or "").strip()
    out: list[str] = []
    for piece in (sentencex.segment("en", text) if text else []):
        piece = piece.strip()
        if out and not re.search(r"\w", piece):
            out[-1] += piece
        elif piece:
            out.append(piece)
    return out


def first_sentence(text: str, limit: int = 180) -> str:
    """The first sentence (clipped): what a small model or a short summary has room for."""
    found = sentences(text)
    return clip(found[0] if found else "", limit)


def headline(text: str, limit: int = 160) -> str:
    """A proposal's title line: its first question when Q1 asks one after a sentence of
    context ("Both fields work with images. Can a deep network ...?" is titled by the
    question, not by "Both fields work with images."), else its first sentence; clipped."""
    found = sentences(text)
    asked = next((s for s in found if s.rstrip(_CLOSERS).endswith("?")), found[0] if found else "")
    return clip(asked, limit)


def wordset(text: str) -> frozenset[str]:
    """A set of words written as one whitespace-separated block (easier to read and edit)."""
    return frozenset(text.split())


_ENDS = ".?!"
_CLOSERS = "\"'”’)]"
_PAIRS = {"(": ")", "[": "]"}
# Abbreviations that end no sentence, and the pieces a line may stop in ("e." of "e.g.").
# "etc." is left out: it ends sentences as often as not.
ABBREVIATIONS = wordset("""e.g. eg. i.e. ie. e. i. g. al. et cf. fig. figs. eq. eqs. vs. approx.
ref. refs. sec. no. nos. dr. prof. resp. incl. ca. viz. p. pp. vol.""")


def abbreviation(word: str) -> bool:
    """Whether a sentence's last word is an abbreviation (or a single initial): "e.g.",
    "(e.", "al.", "Fig."."""
    w = word.lstrip("([\"'").lower()
    return w in ABBREVIATIONS or bool(re.fullmatch(r"[a-z]\.", w))


def unclosed_at(text: str) -> int | None:
    """Where the first bracket that is never closed opens, or None when all close."""
    stack: list[tuple[str, int]] = []
    for i, ch in enumerate(text):
        if ch in _PAIRS:
            stack.append((ch, i))
        elif stack and ch == _PAIRS[stack[-1][0]]:
            stack.pop()
    return stack[0][1] if stack else None


def whole(sentence: str) -> bool:
    """A finished sentence: terminal punctuation that is not an abbreviation's, and every
    bracket it opens closed."""
    s = sentence.rstrip().rstrip(_CLOSERS)
    if not s or s[-1] not in _ENDS or unclosed_at(sentence) is not None:
        return False
    return not abbreviation(s.split()[-1])


def ended_sentences(text: str, min_words: int) -> int | None:
    """Where a line may stop: the length of its leading whole sentences, once they hold at
    least `min_words` words and a further sentence has begun (only then is a full stop
    known to end a sentence, not "3." of "3.5" nor "e." of "e.g."); None before that.
    The embedded model stops a review line there (models/local_batch.py), rather than
    writing on to its token budget and having the rest cut."""
    if not _NEXT_SENTENCE.search(text) or len(text.split()) <= min_words:
        return None
    found = sentences(text)
    if len(found) < 2 or not _OPENS_SENTENCE.match(found[-1]) or not all(whole(s) for s in found[:-1]):
        return None  # a lower-case or numeric "next sentence" is more likely "approx. five", "3. 5"
    kept = " ".join(found[:-1])
    if len(kept.split()) < min_words:
        return None
    at = text.rfind(found[-1])
    return at if at > 0 and text[:at].split() == kept.split() else None


_NEXT_SENTENCE = re.compile(r"[.?!][\"')\]”’]*\s+\S")
_OPENS_SENTENCE = re.compile(r"[\"'“‘(\[]?[A-Z]")


# Function words and words that say nothing about a field; a key phrase never starts or
# ends with one and is split at the others.
STOP = wordset("""a an the and or but nor of for to in on at by with from into onto over under
as is are was were be been being it its this that these those their there them they we our us
you your he she his her i my me not no than then so such which who whom whose what when where
while how why can could may might must should would will shall do does did done has have had
also only both each every either neither more most less least much many some any all other
another same very well just even via per about after before between among across through
within without against during upon toward towards up down out off again further here once
using use used uses based new novel approach approaches method methods result results show
shows shown find finds found study studies paper papers work works make makes made take
takes allow allows provide provides give gives large small high low first second one two three
several often known whose rather instead where whereas yet thus hence however therefore
argue argues authors propose proposes present presents introduce introduces describe
describes report reports review reviews case kind kinds part parts set sets lot
number numbers level levels term terms summary contents overview introduction including
include includes complete completes organise organises organize organizes exhibit exhibits
facilitate facilitates achieve achieves predict predicts displace displaces change changes
shape shapes raise raises reduce reduces live lives assess assesses improve improves remain
remains explain explains suggest suggests reveal reveals yield yields enable enables require
requires increase increases decrease decreases lead leads drive drives affect affects help
helps capture captures combine combines compare compares estimate estimates measure measures
produce produces reach reaches serve serves treat treats keep keeps need needs hold holds
seem seems appear appears become becomes tend tends test tests run runs let lets learn learns
obtain obtains apply applies achieved overall additional various specific recent strong
stronger weak weaker whole went grew grow grows phrased alter alters whether""")
_WORD = re.compile(r"[a-z][a-z0-9\-]{2,}")


def words(text: str) -> set[str]:
    """Lower-case content words of a text (3+ characters, no stop words)."""
    return {w.strip("-") for w in _WORD.findall((text or "").lower())} - STOP
