"""A revision round's rewrite on a base model: only the flagged answers, seeded.

A base model cannot read a review and decide what to change. So the round decides for
it: an answer is rewritten only when a review point names its question ("Q5 ...") or
an automatic check of the proposal fails on it (run/stem_checks.py: Q1 names no concept
of a chosen field, Q5 names no data or no metric, an answer repeats another, a part is
missing). The new line starts from a stem seeded with what was missing (a concept of
the field Q1 left out; a dataset and an error measure for Q5), and the model finishes
it. The rewrite is kept only when it leaves no more automatic-check failures than the
old answer did; every Change says which flag it answers, labelled "check" when it was
an automatic check rather than a reviewer's point.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ... import fiveq
from ...text import words
from ...types import Change, MetaReview, Proposal, Review
from .. import prompts
from ..styles.context import StageContext
from ..styles.grounding import Grounding
from ..styles.stem_checks import CheckKind, failed_checks
from ..styles.stem_line import fluent_line, next_point
from ..styles.stem_material import concept_pairs, concepts_block, fields_phrase, grounding_of, offset_of
from ..styles.stem_names import drop_invented, material_text
from ..styles.stem_write import INVENTED_PENALTY, pick, score_candidate
from .quotes import points

STEMS_PER_ANSWER = 2  # sampled continuations per rewritten answer (one call each)
_NAMES_Q = re.compile(r"\bQ([1-5])\b")
# The stem variants (prompts/revise.yaml) seeded with what a failed check found missing.
_SEEDED = {CheckKind.Q1_CONCEPT: "stem_concept", CheckKind.Q5_DATA_METRIC: "stem_data_metric"}


@dataclass(frozen=True)
class Flag:
    """What flagged an answer: the automatic check that failed (None: a reviewer's point),
    the field that check concerns (Q1's), the flag's words, and where they come from
    (Change.source: "check" or "review")."""
    check: CheckKind | None
    words: str
    source: str
    field: str = ""


def _repeating(proposal: Proposal) -> list[str]:
    """The later answer of each pair that shares most of its content words."""
    keys = [k for k in fiveq.QUESTION_KEYS if getattr(proposal, k)]
    out = []
    for j, kb in enumerate(keys):
        wb = words(getattr(proposal, kb))
        for ka in keys[:j]:
            wa = words(getattr(proposal, ka))
            if wa and wb and len(wa & wb) / min(len(wa), len(wb)) > 0.6:
                out.append(kb)
                break
    return out


def flags(proposal: Proposal, reviews: list[Review], g: Grounding) -> dict[str, list[Flag]]:
    """Per question key, what flagged it: failed automatic checks and review points that
    name the question. Questions nothing flagged are absent."""
    found: dict[str, list[Flag]] = {}
    for failure in failed_checks(proposal, g):
        if failure.kind in _SEEDED:
            key = "q1" if failure.kind is CheckKind.Q1_CONCEPT else "q5"
            found.setdefault(key, []).append(Flag(failure.kind, failure.words, "check", failure.field))
    for k in _repeating(proposal):
        found.setdefault(k, []).append(Flag(CheckKind.NO_REPEATS, "Two answers largely repeat each other.", "check"))
    for k in proposal.missing:
        found.setdefault(k, []).append(Flag(CheckKind.ALL_PARTS, f"Parts missing: {k}.", "check"))
    checks = set(points([r for r in reviews if "weaknesses" in r.checked]))
    for point in points(reviews):
        source = "check" if point in checks else "review"
        for n in dict.fromkeys(_NAMES_Q.findall(point)):
            found.setdefault(f"q{n}", []).append(Flag(None, point, source))
    return {k: found[k] for k in fiveq.QUESTION_KEYS if k in found}


def _pairs_for(flag: Flag, g: Grounding, offset: int) -> list[tuple[str, str]]:
    """Concept pairs for the stems: for a field Q1 left out, that field's concepts first."""
    pairs = concept_pairs(g, offset)
    field = flag.field
    mine = g.concepts.get(field) or []
    if not mine:
        return pairs
    others = [c for f, cs in g.concepts.items() if f != field for c in cs] or mine
    return [(mine[(offset + i) % len(mine)], others[(offset + i) % len(others)]) for i in range(4)]


def stems_for(q: fiveq.Question, flag: Flag, g: Grounding, offset: int) -> list[str]:
    """STEMS_PER_ANSWER stems: the question's lead and a variant seeded with what was missing."""
    pairs = _pairs_for(flag, g, offset)
    if not pairs:
        return [q.stem_lead] * STEMS_PER_ANSWER
    name = _SEEDED.get(flag.check, "stem_other")
    out = []
    for i in range(STEMS_PER_ANSWER):
        a, b = pairs[i % len(pairs)]
        variants = [v.strip() for v in prompts.load("revise")[name].render(a=a, b=b)["text"]
                    .splitlines() if v.strip()]
        out.append(f"{q.stem_lead} {variants[i % len(variants)]}")
    return out


def _header(g: Grounding, asked: list[str], prior_titles: list[str]) -> str:
    prior = ("Prior work to differ from: " + "; ".join(prior_titles[:3]) + ".") if prior_titles else ""
    return prompts.load("revise")["stem_header"].render(
        fields=fields_phrase(g) or "several fields", concepts=concepts_block(g),
        missing=" ".join(asked) or "a clearer proposal.", prior_work=prior)["text"]


def _document(header: str, proposal: Proposal, upto: str) -> str:
    """The header, then the answers before question `upto`, as numbered lines."""
    doc = header.rstrip() + "\n"
    for q in fiveq.QUESTIONS:
        if q.key == upto:
            break
        if getattr(proposal, q.key):
            doc += f"{q.stem.partition(': ')[0]}: {getattr(proposal, q.key)}\n"
    return doc


async def best_line(ctx: StageContext, prefix: str, stems: list[str], score, stop: tuple[str, ...],
                    material: str) -> str | None:
    """One continuation per stem (its own seed); the best by score and fluency, as the
    writing stage picks (run/stem_write.py), names found in no material penalised."""
    found = []
    for i, stem in enumerate(stems):
        out, fluency = await fluent_line(ctx, prefix + stem, max_tokens=56, attempt=i, stop=stop)
        out = out.strip()
        if len(re.findall(r"[^\W\d_]{2,}", out)) < 2:
            continue
        full, unknown = drop_invented(f"{stem}{'' if out[0] in ',.;:?!' else ' '}{out}", material)
        found.append((score(full) - INVENTED_PENALTY * len(unknown), full, fluency))
    return pick(found)


async def revise(ctx: StageContext, proposal: Proposal, reviews: list[Review],
                 meta: MetaReview | None, prior_titles: list[str]) -> tuple[Proposal, list[Change]]:
    g = grounding_of(ctx, [])
    flagged = flags(proposal, reviews, g)
    header = _header(g, [f.words for fs in flagged.values() for f in fs][:4], prior_titles)
    current = Proposal(**proposal.answers(), missing=list(proposal.missing))
    changes: list[Change] = []
    for key, reasons in flagged.items():
        q = fiveq.BY_KEY[key]
        first = reasons[0]
        others = [getattr(current, k) for k in fiveq.QUESTION_KEYS if k != key]
        doc = _document(header, current, key)
        got = await best_line(ctx, doc + q.stem.partition(": ")[0] + ": ",
                              stems_for(q, first, g, offset_of(key + str(len(reviews)))),
                              lambda t, others=others: score_candidate(t, g, others, header),
                              next_point(q), material_text(doc, g.papers))
        if not got or " ".join(got.split()) == " ".join(getattr(current, key).split()):
            continue
        trial = Proposal(**(current.answers() | {key: got}),
                         missing=[m for m in current.missing if m != key])
        if len(failed_checks(trial, g)) > len(failed_checks(current, g)):
            continue  # the rewrite would fail more checks than the answer it replaces
        current = trial
        changes.append(Change(key, first.words, first.source))
    return current, changes
