"""Writing the five answers on a base model: seeded stems, sampled candidates, and the
score that picks one.

Each question's line starts with its plain stem from `fiveq` followed by a seed variant
(prompts/stem.yaml, `seed_q*`) that names a concept from two fields. Several
continuations are sampled, each with its own seed, and the one that covers the chosen
fields best, repeats earlier answers least and says least generic filler is kept.
"""
from __future__ import annotations

import asyncio
import re
from collections.abc import Callable

from ... import fiveq
from ...text import words, wordset
from ...types import Proposal
from .context import StageContext
from .grounding import Grounding
from .stem_line import fluent_line, next_point
from .stem_material import concept_pairs, every_field_pairs
from .stem_names import drop_invented, material_text

# Words that fit any proposal in any field: a candidate made of them says nothing.
GENERIC = wordset("""important research problem problems question questions understand
understanding better new way ways things thing people many different field fields study
studies work works help helps helping also area areas good great significant interesting
approach approaches able provide important crucial key various world life lives future
following strong strength strengths weakness weaknesses proposal proposed idea ideas
learning machine""")
# Among sampled continuations, each nat of mean log-probability per token (the model's
# own, above the mean of the candidates that have one) is worth this much score: a line
# the model found fluent (-1.2) beats a halting one (-2.5) by ~0.65, about what the
# length term gives a full line over a four-word one.
FLUENCY_WEIGHT = 0.5
# Per acronym or name found in nothing the model was shown nor the neighbourhood's papers
# (an unknown parenthesised acronym is cut instead; run/styles/stem_names.py).
INVENTED_PENALTY = 1.0


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


async def five_questions(ctx: StageContext, header: str, g: Grounding, candidates: dict[str, int],
                         offset: int = 0,
                         per_question: Callable[[str], tuple[str, list[str]]] | None = None
                         ) -> Proposal:
    """One line per question from seeded stems; `per_question(key)` may add context lines
    and ready-made answers (drafts' answers) that compete with the sampled ones.
    `candidates`: sampled continuations per question key ("default" for the rest); 0 takes
    the best ready-made answer by the same score with no call, and samples one only when
    there is none.

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
        wanted = candidates.get(q.key, candidates["default"])
        stems = seeded_stems(ctx, q, wide if q.key == "q1" else pairs, qi, wanted or 1)
        earlier = list(answers.values())
        material = header + extra_ctx

        def score(text: str, earlier=earlier, material=material) -> float:
            return score_candidate(text, g, earlier, material)

        answer = max(((score(r), r) for r in ready if r), default=(0.0, ""))[1] if not wanted else ""
        for attempt in range(0 if answer else ctx.max_reasks + 1):
            # A re-ask takes fresh seeds after the ones already used; the last one also
            # tries the plain stem, in case a seeded one leads the model nowhere.
            tries = stems + [q.stem_lead] if attempt == ctx.max_reasks and pairs else stems
            got = await _best_of(ctx, prefix + f"{label}: ", tries, score,
                                 first_seed=attempt * len(stems), stop=next_point(q),
                                 material=material_text(prefix, g.papers))
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
                   stop: tuple[str, ...] = (), material: str | None = None) -> str | None:
    """One continuation per stem, each with its own seed; the best scoring answer (stem
    included), or None when every continuation was empty. The stem already says most of
    an answer, so two words finish one ("... Gaia astrometry data collection?").
    Names found nowhere in `material` cost INVENTED_PENALTY each, and the more fluent
    continuations win (`pick`)."""
    found: list[tuple[float, str, float | None]] = []
    # Asked together: an engine that batches (the embedded model) decodes them at once.
    replies = await asyncio.gather(*(
        fluent_line(ctx, prefix + stem, max_tokens=56, attempt=first_seed + i, stop=stop)
        for i, stem in enumerate(stems)))
    for stem, (out, fluency) in zip(stems, replies, strict=True):
        out = out.strip()
        if len(re.findall(r"[^\W\d_]{2,}", out)) < 2:
            continue
        full = f"{stem}{'' if out[0] in ',.;:?!' else ' '}{out}"
        unknown: list[str] = []
        if material is not None:
            full, unknown = drop_invented(full, material)
        found.append((score(full) - INVENTED_PENALTY * len(unknown), full, fluency))
    return pick(found)


def pick(found: list[tuple[float, str, float | None]]) -> str | None:
    """The best (score, text, fluency) candidate once fluency is added: FLUENCY_WEIGHT
    times its mean log-probability above the mean of those that have one. A candidate
    without one (a model that gives none, or a reply cached without them) gets the mean,
    so it is neither helped nor hurt. The first wins a tie."""
    known = [f for _, _, f in found if f is not None]
    centre = sum(known) / len(known) if known else 0.0
    best: tuple[float, str] | None = None
    for s, text, fluency in found:
        total = s + FLUENCY_WEIGHT * ((centre if fluency is None else fluency) - centre)
        if best is None or total > best[0]:
            best = (total, text)
    return best[1] if best else None


def seeded_stems(ctx: StageContext, q: fiveq.Question, pairs: list[tuple[str, str]], qi: int,
                 n: int) -> list[str]:
    """n stems for question q: its plain fiveq stem followed by variant i of the seed
    template with concept pair qi + i (the plain stem alone when there are no concepts).
    The lead is written once, in fiveq; the prompt file holds only what follows it."""
    if not pairs:
        return [q.stem_lead] * n
    variants = ctx.prompts[f"seed_{q.key}"]
    out = []
    for i in range(n):
        a, b = pairs[(qi + i) % len(pairs)]
        lines = [v.strip() for v in variants.render(a=a, b=b)["text"].splitlines() if v.strip()]
        out.append(f"{q.stem_lead} {lines[i % len(lines)]}")
    return out
