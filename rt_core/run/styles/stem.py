"""Stages for base (completion-only) models such as the embedded Gemma 3 270M.

A base model continues documents rather than following instructions, and a model this
small cannot combine two fields unaided. So each stage writes the start of a document
that carries the material (key concepts per chosen field, papers cut to their first
sentence; run/styles/stem_material.py, run/styles/grounding.py) and ends in a sentence stem seeded
with a concept from two fields (run/styles/stem_write.py). The model finishes one line per
part (run/styles/stem_line.py). Every call is cached, so a warm re-run makes none.

Profiles are the record (fields, recurring topics, methods named in the papers), with
no model call; reviews never leave a section empty (re-asked, else labelled automatic
checks of the proposal, run/styles/stem_checks.py); the meta-review is drawn from the reviews
by clustering their points (run/styles/review_clusters.py), so it cannot contradict them.
The functions match `run.chat` (both implement `run.style.PromptStyle`), so the
simulation does not care which style it runs.
"""
from __future__ import annotations

import asyncio
import re
import zlib
from collections.abc import Sequence

from ... import fiveq
from ...errors import ConfigError
from ...text import clip, words
from ...types import MetaReview, Paper, Profile, Proposal, Review
from . import parse
from .chat import mean_score
from .context import StageContext
from .grounding import Grounding, researcher_record
from .review_clusters import clustered_sections
from .review_heading import fits
from .stem_checks import AUTO_CHECK, proposal_checks, review_line_score
from .stem_claims import Evidence, unsupported
from .stem_facets import by_rubric, meta_by_rubric, planned
from .stem_line import SCORE_GRAMMAR, line
from .stem_material import concepts_block, fields_phrase, format_papers, format_proposal, grounding_of, offset_of
from .stem_names import drop_invented, material_text, refers_to
from .stem_write import GENERIC, five_questions
from .trim import keep_sentences

# Bump when profiles are built differently, so stored profiles from older rules are not reused.
PROFILE_VERSION = "record-3"
# Sampled continuations per part: drafts are many and cheap; in the merged proposal, the
# one people read, the drafts' own answers compete too, and Q1 (which must name every
# field) gets a second fresh continuation; reviews need something to say. A candidate's led
# merge (run/candidates/writing.py) samples every part, so candidates differ.
DRAFT_CANDIDATES = {"default": 1}
MERGE_CANDIDATES = {"q1": 2, "default": 1}
# The run's own merge samples Q1 only; Q2-Q5 take the best draft answer by the same score
# (0: no call unless no draft answered). Measured on three presets, a fresh continuation won
# 1 of 15 parts (a Q1), yet Q2-Q5 cost four calls one after another, each reading that
# part's drafts anew: about a fifth of the CLI default run's wall time (docs/PERFORMANCE.md).
AGGREGATE_CANDIDATES = {"q1": 2, "default": 0}
REVIEW_CANDIDATES = 1
# A review's headings, asked at once (`review`): the time estimate counts them as the
# review's lanes (run/pipeline/costs.py, `review_lanes`).
REVIEW_HEADINGS = ("strengths", "weaknesses")
# A review line stops at its first sentence end once it holds this many words of its own
# (where the model can: registry.sentence_stop). Written on to 60 tokens, review lines were
# most of the CLI default run's completion tokens, and their later sentences were where
# invented results sat, for the claims check to cut (docs/PERFORMANCE.md). Fewer words
# would keep "The proposal is new." alone, which names nothing of the proposal. A line led
# by a concept (`review_focus`) names it already: four words of its own make a judgement
# ("... use of WebArena is a clear step forward.").
REVIEW_LINE_WORDS = 8
FOCUSED_LINE_WORDS = 4


# -- writing -------------------------------------------------------------------------------

async def write_draft(ctx: StageContext, persona: str | None, papers: list[Paper],
                      author_id: str = "") -> Proposal:
    g = grounding_of(ctx, papers)
    plan = planned(ctx, g, author_id=author_id or "writer")
    if plan is not None:  # from the papers' facets (run/styles/stem_facets.py): no call
        plan.author_id = author_id
        return plan
    # The shared material comes first and the author last, so llama.cpp reuses the
    # evaluated prefix from one author's document to the next.
    header = ctx.prompts["draft_header"].render(
        fields=fields_phrase(g) or "several fields", concepts=concepts_block(g),
        papers=format_papers(papers), persona=clip(persona or "a scientist", 300))["text"]
    draft = await five_questions(ctx, header, g, DRAFT_CANDIDATES, offset_of(author_id or "writer"))
    draft.author_id = author_id
    return draft


async def aggregate(ctx: StageContext, drafts: list[Proposal]) -> Proposal:
    """Merge drafts question by question: the drafts' answers compete with fresh
    continuations that see them, and the best by the same score is kept."""
    g = grounding_of(ctx, [])
    plan = planned(ctx, g, index=0)
    if plan is not None:  # the best pairing; the drafts are kept as what it was chosen with
        plan.drafts = list(drafts)
        return plan
    if len(drafts) == 1:
        d = drafts[0]
        return Proposal(**d.answers(), missing=list(d.missing), drafts=[d])
    header = ctx.prompts["aggregate_header"].render(fields=fields_phrase(g) or "several fields",
                                                    concepts=concepts_block(g))["text"]

    def per_question(key: str) -> tuple[str, list[str]]:
        q = fiveq.BY_KEY[key]
        ready = [getattr(d, key) for d in drafts if getattr(d, key)]
        ideas = [f"- Draft idea: {clip(a, 160)}" for a in ready[:4]]
        ctx_lines = f"Point {q.number} in the drafts:\n" + "\n".join(ideas) + "\n" if ideas else ""
        return ctx_lines, ready

    merged = await five_questions(ctx, header, g, AGGREGATE_CANDIDATES, 0, per_question)
    merged.drafts = list(drafts)
    return merged


# -- profiles ------------------------------------------------------------------------------

def record_profile(name: str, g: Grounding, papers: list[Paper]) -> tuple[str, object]:
    rec = researcher_record(papers)
    fields = ", ".join(g.name(f) for f in rec.fields) or "not recorded"
    text = f"{name} publishes in {fields}."
    if rec.topics:
        text += f" Recurring topics in their papers: {', '.join(rec.topics)}."
    if rec.methods:
        text += f" Methods named in their papers: {', '.join(rec.methods)}."
    return text, rec


async def read_profile(ctx: StageContext, researcher_id: str, name: str,
                       papers: list[Paper]) -> Profile:
    """A profile that is the record and nothing else, with no model call.

    The model used to add one line. A 270M base model's line was kept (on the record, no
    biography) for 4 of 9 researchers of the default run, said little ("studies the
    effect of multiple layers on language models"), and fell past the 300-character
    persona clip in every prompt that uses a profile, while costing 9 of the run's 65
    calls (docs/PERFORMANCE.md). The record cannot invent a biography."""
    if not papers:
        return Profile(researcher_id, "", ctx.client.settings.model, [], missing=True)
    text, _ = record_profile(name, grounding_of(ctx, papers), papers)
    return Profile(researcher_id, text, ctx.client.settings.model, [p.id for p in papers])


# -- reviews -------------------------------------------------------------------------------

async def review(ctx: StageContext, reviewer_id: str, persona: str | None, proposal: Proposal,
                 papers: list[Paper], prior: list[str] | None = None) -> Review:
    """Strengths and weaknesses (a few sampled, the most specific kept; re-asked when empty,
    else labelled automatic checks), then a score constrained by a grammar to 1-10.
    (The papers are not shown: a small model's context is better spent on the proposal.)"""
    g = grounding_of(ctx, papers)
    if proposal.grounds:  # written from facets: checked by rubric, no call
        return by_rubric(g, reviewer_id, proposal, prior)
    stems = ctx.prompts.stems
    shown = format_proposal(proposal)
    prior_work = f"\nClosest published work: {'; '.join(prior)}" if prior else ""
    doc = ctx.prompts["review_header"].render(persona=clip(persona or "an experienced scientist", 300),
                                              proposal=shown, prior_work=prior_work)["text"].rstrip()
    pw = words(" ".join(proposal.answers().values()))
    # What a point may refer to (the proposal and its concepts) and take names from
    # (what the reviewer was shown, and the neighbourhood's papers in full).
    subject = pw | set().union(*g.specific_words().values())
    material = material_text(doc, list(g.papers) + list(papers))
    # What the proposal rests on is judged by the proposal (and the work shown beside it),
    # not by the reviewer's persona or the neighbourhood's papers.
    evidence = Evidence.of(material, about=shown + prior_work)
    good, bad = proposal_checks(proposal, g)
    focus = review_focus(proposal, g, reviewer_id)
    topics = [c for cs in g.concepts.values() for c in cs]

    async def ask(key: str, report: str, said: str = "", first: int = 0) -> tuple[str, str | None, int]:
        """A line under one heading of `report`, re-asked with fresh seeds until one stands:
        its lead, the model's continuation (None if none stood) and the attempt that found
        it (a later re-ask goes on from there). The line leads with a concept the proposal
        names, where it names one (`review_focus`)."""
        label, _, plain = stems[key].partition(": ")
        lead = focused_lead(ctx, plain, focus) if focus else plain
        sound = _Sound(key, evidence, topics)
        for attempt in range(first, ctx.max_reasks + 1):
            seeds = [""] * (attempt * REVIEW_CANDIDATES) + [f"{report}\n{label}: {lead}"] * REVIEW_CANDIDATES
            found = await _best_review_line(ctx, seeds, lead, pw, said, subject, material, sound,
                                            FOCUSED_LINE_WORDS if focus else REVIEW_LINE_WORDS)
            if found:
                return lead, found, attempt
        return lead, None, ctx.max_reasks

    # Both headings are asked at once, each from the report's opening: an engine that
    # batches decodes them together, and the review's chain of calls is half as long
    # (docs/PERFORMANCE.md). A weakness that restates the strength is no weakness: asked
    # again, after the strength is known.
    asked = dict(zip(REVIEW_HEADINGS, await asyncio.gather(*(ask(k, doc) for k in REVIEW_HEADINGS)),
                     strict=True))
    parts: dict[str, str] = {}
    checked: list[str] = []
    for key, fallback in zip(REVIEW_HEADINGS, (good, bad), strict=True):
        label = stems[key].partition(": ")[0]
        lead, found, at = asked[key]
        if key == "weaknesses" and found and _repeats(found, parts["strengths"]):
            lead, found, _ = await ask(key, doc, parts["strengths"], at + 1)
        if found:
            parts[key] = f"- {joined(lead, found)}"
            doc += f"\n{label}: {joined(lead, found)}"
        else:
            checks = fallback or (["No check found a problem."] if key == "weaknesses"
                                  else ["The proposal answers all five questions."])
            parts[key] = "\n".join(f"- {AUTO_CHECK} {c}" for c in checks)
            checked.append(key)
            doc += f"\n{label}: " + " ".join(checks)
    score = None
    for attempt in range(ctx.max_reasks + 1):
        out = await line(ctx, doc + "\n" + stems["score"], max_tokens=3, attempt=attempt,
                         grammar=SCORE_GRAMMAR)
        score = parse.parse_score(out)
        if score is not None:
            break
    missing = [] if score is not None else ["score"]
    return Review(reviewer_id, parts["strengths"], parts["weaknesses"], score, missing, checked)


def review_focus(proposal: Proposal, g: Grounding, reviewer_id: str) -> str | None:
    """A concept of the run's fields that the proposal names, for a review's lines to be
    about; reviewers take different ones where the proposal names several (by a stable
    hash of the reviewer's id). None when the proposal names none.

    Why: led by "The proposal" alone, most of a base model's review lines were generic and
    failed the checks ("The proposal is in a broad area of research.": 37 of 48 failed
    lines in an app-default run), and so did their re-asks: the app's default spent half
    its review calls on re-asks (docs/PERFORMANCE.md, stop 47)."""
    text = " ".join(proposal.answers().values()).lower()
    named = sorted({c for cs in g.concepts.values() for c in cs if c.lower() in text},
                   key=lambda c: (text.find(c.lower()), c))
    return named[zlib.crc32(reviewer_id.encode("utf-8")) % len(named)] if named else None


def focused_lead(ctx: StageContext, lead: str, focus: str) -> str:
    """A heading's lead narrowed to one concept ("The proposal" -> "The proposal's use of
    Gaia astrometry is"): the line the model finishes judges that concept."""
    return ctx.prompts["review_focus"].render(lead=lead, focus=focus)["text"].strip()


def unrepeated(lead: str, rest: str) -> str:
    """The continuation without the lead's last word said again: a base model finishing
    "... stellar spectra is" often opens with "is" ("... is is strong")."""
    last, first = lead.rsplit(" ", 1)[-1].lower(), rest.split(" ", 1)
    return first[1] if len(first) == 2 and first[0].lower() == last else rest


def joined(lead: str, rest: str) -> str:
    """A lead and the model's continuation as one sentence: no space before a continuation
    that opens with punctuation ("WebArena" + "'s data" -> "WebArena's data")."""
    return f"{lead}{rest}" if rest[:1] in ",.;:!?'’)" else f"{lead} {rest}"


class _Sound:
    """Whether a sentence of a review line may stand: it claims nothing the material does
    not state (run/styles/stem_claims.py) and fits the heading it was asked for (no praise
    under Weaknesses, no criticism under Strengths; run/styles/review_heading.py), judged
    without the run's concepts: a topic is no judgement (VADER reads "crime hotspots" as
    criticism, and refused every strength of a criminology proposal)."""

    def __init__(self, asked: str, evidence: Evidence, topics: Sequence[str] = ()) -> None:
        self.asked, self.evidence = asked, evidence
        names = sorted({t for t in topics if t.strip()}, key=len, reverse=True)
        self._topics = re.compile("|".join(re.escape(t) for t in names), re.IGNORECASE) if names else None

    def __call__(self, sentence: str) -> bool:
        judged = self._topics.sub("the topic", sentence) if self._topics else sentence
        return not unsupported(sentence, self.evidence) and fits(judged, self.asked)


async def _best_review_line(ctx: StageContext, docs: list[str], lead: str, pw: set[str],
                            said: str = "", subject: set[str] | None = None,
                            material: str | None = None, sound: _Sound | None = None,
                            words_before_stop: int = REVIEW_LINE_WORDS) -> str | None:
    """The most specific non-empty continuation, never one that repeats what the review
    already said (a weakness that restates the strength is no weakness), one that is not
    about the proposal (no word in common with it or its concepts: `subject`), or one
    naming something found nowhere in the `material` (an unknown parenthesised acronym is
    cut instead, run/styles/stem_names.py). Sentences that are not `sound` are cut; a line
    whose first sentence is not is dropped, so the caller asks again."""
    best: tuple[float, str] | None = None
    for seed, doc in enumerate(docs):
        if not doc:
            continue
        out = unrepeated(lead, (await line(ctx, doc, max_tokens=60, attempt=seed,
                                          sentence_words=words_before_stop)).strip())
        if material is not None:
            cut, unknown = drop_invented(joined(lead, out), material)
            if unknown:
                continue
            out = cut[len(lead):].strip()
        if sound is not None:
            out = keep_sentences(joined(lead, out), sound)[len(lead):].strip()
            if not out:
                continue
        if _repeats(out, said):
            continue
        if subject is not None and not refers_to(joined(lead, out), subject, GENERIC):
            continue
        s = review_line_score(joined(lead, out), pw)
        if s > -10 and (best is None or s > best[0]):
            best = (s, out)
    return best[1] if best else None


def _repeats(line: str, said: str) -> bool:
    """Whether most of a line's words are already in what the review said."""
    ws, said_words = words(line), words(said)
    return bool(said_words and ws and len(ws & said_words) / len(ws) > 0.6)


async def meta_review(ctx: StageContext, proposal: Proposal, reviews: list[Review]) -> MetaReview:
    """No model call: the reviewers' points go under the heading they lean to (else the
    one they were asked for), are embedded with the run's embedder, clustered, and each
    cluster is represented by its most central point, most widely shared first."""
    by_checks = meta_by_rubric(reviews)
    if by_checks is not None:
        return by_checks
    embedder = getattr(getattr(ctx, "grounding", None), "embedder", None)
    if embedder is None:
        raise ConfigError("the meta-review needs the run's embedder",
                          "Give the stage context a Grounding with an embedder.")
    out = clustered_sections(embedder, reviews)
    missing = [key for key in ("strengths", "weaknesses") if not out[key]]
    return MetaReview(out["strengths"], out["weaknesses"], mean_score(reviews), missing)
