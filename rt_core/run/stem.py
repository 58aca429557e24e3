"""Stages for base (completion-only) models such as the embedded Gemma 3 270M.

A base model continues documents rather than following instructions, and a model this
small cannot combine two fields unaided. So each stage writes the start of a document
that carries the material (key concepts per chosen field, papers cut to their first
sentence; see run/grounding.py) and ends in a sentence stem seeded with a concept from
two fields. The model finishes one line per part. Several continuations are sampled per
part, each with its own seed, and the one that covers the chosen fields best, repeats
earlier answers least and says least generic filler is kept. Every call is cached, so a
warm re-run makes none.

Profiles are the record (fields, recurring topics, methods named in the papers), with
no model call; reviews never leave a section empty
(re-asked, else labelled automatic checks of the proposal); the meta-review is drawn
from the reviews by clustering their points, so it cannot contradict them.
The functions match `run.chat` (both implement `run.style.PromptStyle`), so the
simulation does not care which style it runs.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

import numpy as np

from .. import fiveq
from ..types import MetaReview, Paper, Profile, Proposal, Review
from . import parse
from .chat import mean_score
from .context import NO_PAPERS, StageContext, clip, first_sentence
from .grounding import Grounding, researcher_record, words, wordset

# Bump when profiles are built differently, so stored profiles from older rules are not reused.
PROFILE_VERSION = "record-3"
# Sampling that keeps a tiny model from looping on one phrase.
SAMPLING = {"frequency_penalty": 0.5, "repeat_penalty": 1.3, "top_p": 0.95}
SCORE_GRAMMAR = 'root ::= " "? ([1-9] | "10")'
# Sampled continuations per part: drafts are many and cheap; in the merged proposal, the
# one people read, the drafts' own answers compete too, and Q1 (which must name every
# field) gets a second fresh continuation; reviews need something to say.
DRAFT_CANDIDATES = {"default": 1}
MERGE_CANDIDATES = {"q1": 2, "default": 1}
REVIEW_CANDIDATES = 1
AUTO_CHECK = "Automatic check:"
# A base model sometimes runs on into the next numbered point on the same line.
_RUN_ON = re.compile(r"(?:^|\s)(?:\d\.|\(\d\))\s+[A-Z][\w ]{2,40}:|\s\d\.\s+(?:Research question|Why)\b"
                     r"|\s\d[a-z]?:\s")  # ("... alpine flora . 2a: What are ...")
# Words that fit any proposal in any field: a candidate made of them says nothing.
GENERIC = wordset("""important research problem problems question questions understand
understanding better new way ways things thing people many different field fields study
studies work works help helps helping also area areas good great significant interesting
approach approaches able provide important crucial key various world life lives future
following strong strength strengths weakness weaknesses proposal proposed idea ideas
learning machine""")
_METRIC = re.compile(r"\b(accura\w*|error|errors|precision|recall|f1|auc|correlat\w*|rmse|mse|"
                     r"likelihood|bias|variance|rate|rates|score|scores|metric\w*|benchmark\w*|"
                     r"uncertaint\w*|residual\w*|calibrat\w*|perplexity|latency|throughput)\b", re.I)
_DATA = re.compile(r"\b(data|dataset\w*|catalog\w*|catalogue\w*|survey\w*|corpus|corpora|records?|"
                   r"observations?|samples?|measurements?|archives?|logs?|release|cohorts?|"
                   r"sequences?|images?|spectra)\b", re.I)


async def line(ctx: StageContext, document: str, max_tokens: int = 60, attempt: int = 0,
               grammar: str | None = None, stop: tuple[str, ...] = ()) -> str:
    """Complete one line of a document at the run's temperature. Each attempt (retry or
    sampled candidate) has its own seed, so candidates differ and each is cached alone.
    `stop`: more places to stop than the line's end."""
    ctx.check_cancel()
    extra: dict = dict(SAMPLING, seed=attempt)
    if grammar:
        extra["grammar"] = grammar
    res = await ctx.client.complete([{"role": "user", "content": document}],
                                    max_tokens=max_tokens, stop=["\n", *stop], extra=extra)
    return clean_line(res.text)


def next_point(q: fiveq.Question) -> tuple[str, ...]:
    """Where an answer to q has run on into the next numbered point on its own line
    ("... survey design? 2. Research hypothesis: ..."): stopping there, rather than
    cutting afterwards, saves the tokens a run-on costs (up to the whole budget)."""
    return (f" {q.number + 1}. ",) if q.number < len(fiveq.QUESTIONS) else ()


# Contact details a small model invents ("(e-mail address: someone@example.com)"): never
# a point about the proposal, and misleading to a reader.
_CONTACT = re.compile(r"\s*\([^()]*(?:@|https?://|www\.)[^()]*\)|\s*\S+@\S+\.\w+|\s*(?:https?://|www\.)\S+")


def clean_line(text: str) -> str:
    """Keep one answer: cut run-ons into the next point, invented contact details and
    trailing fragments."""
    text = _CONTACT.sub("", (text or "")).strip()
    m = _RUN_ON.search(text)
    if m:
        text = text[:m.start()].strip()
    if text and text[-1] not in ".?!" and re.search(r"[.?!]", text):
        text = text[:max(text.rfind("."), text.rfind("?"), text.rfind("!")) + 1]
    return re.sub(r"\s+([.?!])$", r"\1", text)


def format_papers(papers: list[Paper]) -> str:
    """Titles and first sentences of at most five papers: a small model reads ~190 tok/s."""
    if not papers:
        return NO_PAPERS
    return "\n".join(f"- {clip(p.title, 110)}: {first_sentence(p.abstract, 160)}" for p in papers[:5])


def format_proposal(p: Proposal) -> str:
    return "\n".join(f"{q.number}. {clip(getattr(p, q.key), 220)}"
                     for q in fiveq.QUESTIONS if getattr(p, q.key))


# -- grounding material ------------------------------------------------------------------

def _grounding(ctx: StageContext, papers: list[Paper]) -> Grounding:
    """The run's material (set by the simulation), or one made from these papers alone."""
    g = getattr(ctx, "grounding", None)
    return g if g is not None else Grounding(papers)


def concepts_block(g: Grounding) -> str:
    return "\n".join(f"Key concepts in {g.name(f)}: {'; '.join(cs)}."
                     for f, cs in g.concepts.items() if cs)


def fields_phrase(g: Grounding) -> str:
    names = [g.name(f) for f in g.fields]
    return " and ".join(names) if len(names) <= 2 else ", ".join(names[:-1]) + " and " + names[-1]


def concept_pairs(g: Grounding, offset: int = 0) -> list[tuple[str, str]]:
    """Endless-enough list of (concept of one field, concept of another), rotating through
    the field pairs and each field's concepts from `offset`, so drafts and questions differ."""
    fields = [f for f, cs in g.concepts.items() if cs]
    if not fields:
        return []
    if len(fields) == 1:
        cs = g.concepts[fields[0]]
        return [(cs[(offset + i) % len(cs)], cs[(offset + i + 1) % len(cs)]) for i in range(12)]
    field_pairs = [(a, b) for i, a in enumerate(fields) for b in fields[i + 1:]]
    out = []
    for i in range(12):
        a, b = field_pairs[(offset + i) % len(field_pairs)]
        if (offset + i) % 2:  # alternate which field leads
            a, b = b, a
        ca, cb = g.concepts[a], g.concepts[b]
        out.append((ca[(offset + i) % len(ca)], cb[(offset + i // 2) % len(cb)]))
    return out


def every_field_pairs(g: Grounding, offset: int = 0) -> list[tuple[str, str]]:
    """Like concept_pairs, but the second slot names a concept of every other field
    ("stellar spectra and police records"), so a question seeded with it names them all.
    Used for Q1 when three or more fields are chosen: one pair cannot name them all."""
    fields = [f for f, cs in g.concepts.items() if cs]
    if len(fields) < 3:
        return concept_pairs(g, offset)
    out = []
    for i in range(12):
        k = (offset + i) % len(fields)
        order = fields[k:] + fields[:k]
        picks = [g.concepts[f][(offset + i) % len(g.concepts[f])] for f in order]
        rest = picks[1:]
        out.append((picks[0], ", ".join(rest[:-1]) + " and " + rest[-1]))
    return out


def _offset(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:6], 16)


# -- scoring sampled candidates ------------------------------------------------------------

def score_candidate(text: str, g: Grounding, earlier: list[str], material: str = "") -> float:
    """Higher is better: covers every chosen field, and above all the fields the earlier
    answers left out (with three or four fields one answer rarely names them all, but the
    proposal should), says something new, little filler, and is not a copy of a line it
    was shown (a base model likes to copy)."""
    ws = words(text)
    if len(ws) < 3:
        return -10.0
    spec = {f: fw for f, fw in g.specific_words().items() if fw}
    mine = {f for f, fw in spec.items() if ws & fw}
    before = {f for f, fw in spec.items() if any(words(e) & fw for e in earlier if e)}
    coverage = len(mine) / max(1, len(spec))
    coverage += len(mine - before) / max(1, len(spec))
    repeats = max((len(ws & words(e)) / len(ws) for e in earlier if e), default=0.0)
    generic = len(ws & GENERIC) / len(ws)
    copied = 0.0
    for ln in material.splitlines():
        lw = words(ln)
        if len(lw) >= 4 and len(ws & lw) / len(ws) > 0.7:
            copied = 1.0
            break
    length = min(len(ws), 12) / 12
    return 2.0 * coverage - 1.0 * repeats - 1.0 * generic - 1.5 * copied + 0.5 * length


# -- writing -------------------------------------------------------------------------------

async def five_questions(ctx: StageContext, header: str, g: Grounding, candidates: dict[str, int],
                         offset: int = 0,
                         per_question: Callable[[str], tuple[str, list[str]]] | None = None
                         ) -> Proposal:
    """One line per question from seeded stems; `per_question(key)` may add context lines
    and ready-made answers (drafts' answers) that compete with the sampled ones.
    `candidates`: sampled continuations per question key ("default" for the rest).

    The document only grows (header, then each question's context and answer in turn), so
    llama.cpp reuses the evaluated prefix from one call to the next."""
    answers: dict[str, str] = {}
    missing = []
    document = header.rstrip() + "\n"
    pairs = concept_pairs(g, offset)
    wide = every_field_pairs(g, offset)
    for qi, q in enumerate(fiveq.QUESTIONS):
        label = q.stem.partition(": ")[0]
        extra_ctx, ready = per_question(q.key) if per_question else ("", [])
        document += extra_ctx
        prefix = document
        stems = _seeded_stems(ctx, q, wide if q.key == "q1" else pairs, qi,
                              candidates.get(q.key, candidates["default"]))
        earlier = list(answers.values())
        material = header + extra_ctx

        def score(text: str, earlier=earlier, material=material) -> float:
            return score_candidate(text, g, earlier, material)

        answer = ""
        for attempt in range(ctx.max_reasks + 1):
            # A re-ask takes fresh seeds after the ones already used; the last one also
            # tries the plain stem, in case a seeded one leads the model nowhere.
            tries = stems + [q.stem_lead] if attempt == ctx.max_reasks and pairs else stems
            got = await _best_of(ctx, prefix + f"{label}: ", tries, score,
                                 first_seed=attempt * len(stems), stop=next_point(q))
            options = [(score(r), r) for r in ready if r]
            if got:
                options.append((score(got), got))
            if options:
                answer = max(options)[1]
                break
        if answer:
            answers[q.key] = answer
            document += f"{label}: {answer}\n"
        else:
            missing.append(q.key)
    return Proposal(**answers, missing=missing)


async def _best_of(ctx: StageContext, prefix: str, stems: list[str],
                   score: Callable[[str], float], first_seed: int = 0,
                   stop: tuple[str, ...] = ()) -> str | None:
    """One continuation per stem, each with its own seed; the best scoring answer (stem
    included), or None when every continuation was empty. The stem already says most of
    an answer, so two words finish one ("... Gaia astrometry data collection?")."""
    best: tuple[float, str] | None = None
    for i, stem in enumerate(stems):
        out = (await line(ctx, prefix + stem, max_tokens=56, attempt=first_seed + i, stop=stop)).strip()
        if len(re.findall(r"[^\W\d_]{2,}", out)) < 2:
            continue
        full = f"{stem}{'' if out[0] in ',.;:?!' else ' '}{out}"
        s = score(full)
        if best is None or s > best[0]:
            best = (s, full)
    return best[1] if best else None


def _seeded_stems(ctx: StageContext, q: fiveq.Question, pairs: list[tuple[str, str]], qi: int,
                  n: int) -> list[str]:
    """n stems for question q: variant i of the seeded template with concept pair qi + i
    (the plain fiveq stem when there are no concepts)."""
    if not pairs:
        return [q.stem_lead] * n
    variants = ctx.prompts[f"seed_{q.key}"]
    out = []
    for i in range(n):
        a, b = pairs[(qi + i) % len(pairs)]
        lines = [v for v in variants.render(a=a, b=b)["text"].splitlines() if v.strip()]
        out.append(lines[i % len(lines)])
    return out


async def write_draft(ctx: StageContext, persona: str | None, papers: list[Paper],
                      author_id: str = "") -> Proposal:
    g = _grounding(ctx, papers)
    # The shared material comes first and the author last, so llama.cpp reuses the
    # evaluated prefix from one author's document to the next.
    header = ctx.prompts["draft_header"].render(
        fields=fields_phrase(g) or "several fields", concepts=concepts_block(g),
        papers=format_papers(papers), persona=clip(persona or "a scientist", 300))["text"]
    draft = await five_questions(ctx, header, g, DRAFT_CANDIDATES, _offset(author_id or "writer"))
    draft.author_id = author_id
    return draft


async def aggregate(ctx: StageContext, drafts: list[Proposal]) -> Proposal:
    """Merge drafts question by question: the drafts' answers compete with fresh
    continuations that see them, and the best by the same score is kept."""
    if len(drafts) == 1:
        d = drafts[0]
        return Proposal(**d.answers(), missing=list(d.missing), drafts=[d])
    g = _grounding(ctx, [])
    header = ctx.prompts["aggregate_header"].render(fields=fields_phrase(g) or "several fields",
                                                    concepts=concepts_block(g))["text"]

    def per_question(key: str) -> tuple[str, list[str]]:
        q = fiveq.BY_KEY[key]
        ready = [getattr(d, key) for d in drafts if getattr(d, key)]
        ideas = [f"- Draft idea: {clip(a, 160)}" for a in ready[:4]]
        ctx_lines = f"Point {q.number} in the drafts:\n" + "\n".join(ideas) + "\n" if ideas else ""
        return ctx_lines, ready

    merged = await five_questions(ctx, header, g, MERGE_CANDIDATES, 0, per_question)
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
    text, _ = record_profile(name, _grounding(ctx, papers), papers)
    return Profile(researcher_id, text, ctx.client.settings.model, [p.id for p in papers])


# -- reviews -------------------------------------------------------------------------------

def section_empty(text: str) -> bool:
    """No real point: fewer than three words after the stem, or a dangling colon
    ('The proposal is strong in the following areas:')."""
    t = re.sub(r"^\s*-\s*", "", (text or "").strip()).lower()
    for lead in ("however, the proposal", "the proposal"):
        if t.startswith(lead):
            t = t[len(lead):]
            break
    return len(t.split()) < 3 or t.rstrip().endswith(":")


def proposal_checks(proposal: Proposal, g: Grounding) -> tuple[list[str], list[str]]:
    """Concrete checks of a proposal, as (passed, failed) sentences."""
    good, bad = [], []
    q1 = words(proposal.q1)
    for f, fw in g.specific_words().items():
        hit = sorted(q1 & fw)
        if not fw:
            continue
        if hit:
            good.append(f"Q1 names a concept from {g.name(f)} ({', '.join(hit[:3])}).")
        else:
            bad.append(f"Q1 names no concept from {g.name(f)}.")
    q5 = proposal.q5 or ""
    has_data, has_metric = bool(_DATA.search(q5)), bool(_METRIC.search(q5))
    if has_data and has_metric:
        good.append("Q5 names the data and a measure of success.")
    else:
        lacking = " and ".join(x for x, ok in (("the data", has_data), ("a metric", has_metric))
                               if not ok)
        bad.append(f"Q5 does not name {lacking}.")
    answers = [a for a in proposal.answers().values() if a]
    for i, a in enumerate(answers):
        for b in answers[i + 1:]:
            wa, wb = words(a), words(b)
            if wa and wb and len(wa & wb) / min(len(wa), len(wb)) > 0.6:
                bad.append("Two answers largely repeat each other.")
                break
        else:
            continue
        break
    if proposal.missing:
        bad.append(f"Parts missing: {', '.join(proposal.missing)}.")
    return good, bad


def _review_score(text: str, proposal_words: set[str]) -> float:
    ws = words(text)
    if section_empty(text) or not ws:
        return -10.0
    grounded = len(ws & proposal_words) / len(ws)
    generic = len(ws & GENERIC) / len(ws)
    return grounded - generic + min(len(ws), 12) / 24


async def review(ctx: StageContext, reviewer_id: str, persona: str | None, proposal: Proposal,
                 papers: list[Paper]) -> Review:
    """Strengths and weaknesses (a few sampled, the most specific kept; re-asked when empty,
    else labelled automatic checks), then a score constrained by a grammar to 1-10.
    (The papers are not shown: a small model's context is better spent on the proposal.)"""
    g = _grounding(ctx, papers)
    stems = ctx.prompts.stems
    doc = ctx.prompts["review_header"].render(
        persona=clip(persona or "an experienced scientist", 300),
        proposal=format_proposal(proposal))["text"].rstrip()
    pw = words(" ".join(proposal.answers().values()))
    good, bad = proposal_checks(proposal, g)
    parts: dict[str, str] = {}
    for key, fallback in (("strengths", good), ("weaknesses", bad)):
        label, _, lead = stems[key].partition(": ")
        found = None
        said = parts.get("strengths", "")
        for attempt in range(ctx.max_reasks + 1):
            seeds = [""] * (attempt * REVIEW_CANDIDATES) + [doc + "\n" + stems[key]] * REVIEW_CANDIDATES
            found = await _best_review_line(ctx, seeds, lead, pw, said)
            if found:
                break
        if found:
            parts[key] = f"- {lead} {found}"
            doc += f"\n{label}: {lead} {found}"
        else:
            checks = fallback or (["No check found a problem."] if key == "weaknesses"
                                  else ["The proposal answers all five questions."])
            parts[key] = "\n".join(f"- {AUTO_CHECK} {c}" for c in checks)
            doc += f"\n{label}: " + " ".join(checks)
    score = None
    for attempt in range(ctx.max_reasks + 1):
        out = await line(ctx, doc + "\n" + stems["score"], max_tokens=3, attempt=attempt,
                         grammar=SCORE_GRAMMAR)
        score = parse.parse_score(out)
        if score is not None:
            break
    missing = [] if score is not None else ["score"]
    return Review(reviewer_id, parts["strengths"], parts["weaknesses"], score, missing)


async def _best_review_line(ctx: StageContext, docs: list[str], lead: str, pw: set[str],
                            said: str = "") -> str | None:
    """The most specific non-empty continuation, never one that repeats what the review
    already said (a weakness that restates the strength is no weakness)."""
    best: tuple[float, str] | None = None
    said_words = words(said)
    for seed, doc in enumerate(docs):
        if not doc:
            continue
        out = (await line(ctx, doc, max_tokens=60, attempt=seed)).strip()
        ws = words(out)
        if said_words and ws and len(ws & said_words) / len(ws) > 0.6:
            continue
        s = _review_score(f"{lead} {out}", pw)
        if s > -10 and (best is None or s > best[0]):
            best = (s, out)
    return best[1] if best else None


# -- meta-review: the reviewers' points, clustered -------------------------------------------

def review_points(text: str) -> list[str]:
    """The separate points of one review section (bullets, else sentences)."""
    pts = []
    for ln in (text or "").splitlines():
        ln = re.sub(r"^however,\s*", "", ln.strip().lstrip("-*• ").strip(), flags=re.I)
        ln = ln[:1].upper() + ln[1:]
        if not ln:
            continue
        pts += [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", ln) if len(s.split()) >= 3]
    return pts


def cluster_points(points: list[tuple[int, str]], vecs: np.ndarray, threshold: float = 0.55
                   ) -> list[list[int]]:
    """Average-linkage clusters of points whose embeddings are closer than `threshold`
    (cosine), largest (most reviewers) first."""
    if not points:
        return []
    if len(points) == 1:
        return [[0]]
    from scipy.cluster.hierarchy import fcluster, linkage  # noqa: PLC0415
    from scipy.spatial.distance import pdist  # noqa: PLC0415

    dist = np.clip(pdist(vecs, metric="cosine"), 0, 2)
    labels = fcluster(linkage(dist, method="average"), t=1 - threshold, criterion="distance")
    groups: dict[int, list[int]] = {}
    for i, lab in enumerate(labels):
        groups.setdefault(int(lab), []).append(i)
    return sorted(groups.values(), key=lambda g: (-len({points[i][0] for i in g}), g[0]))


def _summarise(points: list[tuple[int, str]], vecs: np.ndarray, n_reviewers: int,
               limit: int = 4) -> str:
    lines = []
    for group in cluster_points(points, vecs)[:limit]:
        centre = vecs[group].mean(axis=0)
        rep = group[int(np.argmax(vecs[group] @ centre))]
        who = len({points[i][0] for i in group})
        lines.append(f"- {points[rep][1]} ({who} of {n_reviewers} reviewer{'s' * (n_reviewers > 1)})")
    return "\n".join(lines)


async def meta_review(ctx: StageContext, proposal: Proposal, reviews: list[Review]) -> MetaReview:
    """No model call: the reviewers' points are embedded (MiniLM), clustered, and each
    cluster is represented by its most central point, most widely shared first."""
    from ..config import LOCAL_EMBEDDER  # noqa: PLC0415
    from ..models.embed import Embedder  # noqa: PLC0415

    g = getattr(ctx, "grounding", None)
    embedder = getattr(g, "embedder", None) or Embedder(LOCAL_EMBEDDER)
    out, missing = {}, []
    for key in ("strengths", "weaknesses"):
        points = [(i, p) for i, r in enumerate(reviews) for p in review_points(getattr(r, key))]
        if not points:
            missing.append(key)
            out[key] = ""
            continue
        vecs = embedder.encode([p for _, p in points])
        out[key] = _summarise(points, vecs, len(reviews))
    return MetaReview(out["strengths"], out["weaknesses"], mean_score(reviews), missing)


async def reference_to_5q(ctx: StageContext, paper: Paper) -> Proposal:
    header = ctx.prompts["reference_header"].render(title=paper.title,
                                                    text=clip(paper.abstract, 1200))["text"]
    answers: dict[str, str] = {}
    missing = []
    done: list[str] = []
    for q in fiveq.QUESTIONS:
        label = q.stem.partition(": ")[0]
        doc = header.rstrip() + "\n" + "\n".join(done + [q.stem])
        answer = ""
        for attempt in range(ctx.max_reasks + 1):
            out = (await line(ctx, doc, max_tokens=56, attempt=attempt)).strip()
            if len(out.split()) >= 3:
                answer = f"{q.stem_lead} {out}"
                break
        if answer:
            answers[q.key] = answer
            done.append(f"{label}: {answer}")
        else:
            missing.append(q.key)
    return Proposal(**answers, missing=missing)

