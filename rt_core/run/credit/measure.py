"""One leave-one-out comparison: the full re-writing against the one without X.

`moved` is the per-question cosine (the same content-only similarity the reference
comparison uses) of the without-X proposal to the full one: 1 means nothing changed,
and a question left unanswered counts 0. The score change is the mean review score
without X minus with X (the same reviewers), the reference change likewise for the
similarity to the reference. The sentence names the question that moved most and the
key phrases its full answer has and the answer without X lost, preferring phrases X's
own draft (or paper) carries, so it says what X brought rather than what merely changed.

The full re-writing is not the proposal on screen (the variants take a shorter plan), so
a phrase it lost may be one the reader never saw. The sentence quotes phrases the proposal
on screen also has; when none of the lost phrases is there, it says that it quotes the
full re-writing.
"""
from __future__ import annotations

from ... import fiveq
from ...models.embed import Embedder
from ...text import words
from ...types import QUESTION_KEYS, Credit, Proposal, Run
from ..evidence.evaluate import proposal_similarity
from ..facets.phrases import candidate_phrases
from ..styles.chat import mean_score

UNCHANGED = 0.98  # every answer at least this close: the proposal hardly changed


def moved(embedder: Embedder, full: Run, without: Run) -> dict[str, float]:
    if without.proposal is None or full.proposal is None:
        return dict.fromkeys(QUESTION_KEYS, 0.0)
    sim = proposal_similarity(embedder, without.proposal, full.proposal)
    return {k: sim.per_question.get(k, 0.0) for k in QUESTION_KEYS if k in sim.per_question
            or k in sim.missing}


def lost_phrases(full_answer: str, without_answer: str, theirs: str, k: int = 2,
                 shown: str | None = None) -> list[str]:
    """Key phrases of the full answer whose content words are not all in the answer
    without X; those X's own text carries first, longer phrases before shorter. With
    `shown` (the answer on screen), only phrases whose words it has too."""
    kept = words(without_answer)
    own = words(theirs)
    visible = words(shown) if shown is not None else None
    seen, out = set(), []
    for p in candidate_phrases(full_answer):
        ws = words(p)
        if not ws or ws <= kept or p.lower() in seen or (visible is not None and not ws <= visible):
            continue
        seen.add(p.lower())
        out.append((not (ws & own), -len(ws), len(out), p))
    return [p for *_, p in sorted(out)[:k]]


def _quoted(phrases: list[str]) -> str:
    return " and ".join(f"'{p}'" for p in phrases)


def sentence(name: str, moves: dict[str, float], full: Run, without: Run, theirs: dict[str, str],
             shown: Proposal | None = None) -> str:
    """`shown`: the proposal on screen; lost phrases are quoted from it when it has them."""
    if not moves:
        return f"Without {name}, there was no answer to compare."
    key = min(moves, key=lambda q: (moves[q], q))
    if moves[key] >= UNCHANGED:
        return f"Without {name}, the proposal hardly changes (every answer at least {UNCHANGED:.2f} similar)."
    q = fiveq.BY_KEY[key]
    full_text = getattr(full.proposal, key) if full.proposal else ""
    rest = getattr(without.proposal, key) if without.proposal else ""
    head = f"Without {name}, Q{q.number} ({q.title.lower()}) moves most (similarity {moves[key]:.2f})"
    if shown is not None:
        on_screen = lost_phrases(full_text, rest, theirs.get(key, ""), shown=getattr(shown, key))
        if on_screen:
            return f"{head} and loses {_quoted(on_screen)}."
    lost = lost_phrases(full_text, rest, theirs.get(key, ""))
    if not lost:
        return head + " but keeps its key phrases."
    if shown is not None:
        return (f"{head} and, against the proposal re-written with everyone (not the one on "
                f"screen), loses {_quoted(lost)}.")
    return f"{head} and loses {_quoted(lost)}."


def compare(embedder: Embedder, kind: str, item_id: str, name: str, full: Run, without: Run,
            theirs: dict[str, str] | None = None, shown: Proposal | None = None) -> Credit:
    """A Credit for X from the full and the without-X runs. `theirs`: X's own text per
    question (their draft's answers), by default found in the full run's drafts. `shown`:
    the proposal on screen, which the sentence quotes."""
    moves = moved(embedder, full, without)
    if theirs is None:
        drafts = [d for d in (full.proposal.drafts if full.proposal else []) if d.author_id == item_id]
        theirs = drafts[0].answers() if drafts else {}
    a, b = mean_score(without.reviews), mean_score(full.reviews)
    score = round(a - b, 3) if a is not None and b is not None else None
    ref = None
    if without.similarity and full.similarity:
        ref = round(without.similarity.mean - full.similarity.mean, 4)
    return Credit(kind, item_id, moves, score, ref, sentence(name, moves, full, without, theirs, shown))
