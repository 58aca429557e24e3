"""The tournament: pairwise judgements of the live candidates, in Swiss rounds.

The judge is `RunConfig.judge_model`, else the run's own model, and only a model the
registry declares an instruction model (prompt style chat) judges: the embedded base
model cannot, and then the run ranks by measured signals (`rank`, method "signals").

Pairing is Swiss: round 1 pairs neighbours in candidate order; each later round sorts
the candidates by wins so far (then Bradley-Terry score, then order) and pairs each with
the nearest one it has not met. Every pair is judged in both orders (A/B, then B/A), so
a judge's taste for the first position cancels and is measured. With n candidates:

    rounds R(n) = ceil(log2 n) + 1
    pairs  P(n) = min(n(n-1)/2, floor(n/2) * R(n))      (no pair is met twice)
    calls  2 P(n), plus at most one re-ask per reply without a decision

so n = 6 needs 24 calls (all pairs in both orders would be 30), n = 12 needs 60 (132):
O(n log n). A reply without a decision is asked once again, then kept as no decision
(never guessed). The judge's calls go through the same LLMClient (cache, retries,
budget) with the judge's own key chosen by the one key rule (rt_core.models.keys).
"""
from __future__ import annotations

import asyncio
import dataclasses
import re

from ...models import keys
from ...models.client import LLMClient
from ...models.retry import RetryPolicy
from ...models.settings import ModelSettings
from ...settings.endpoint import JUDGE, MODEL
from ...text import clip, words
from ...types import Judgement, Tournament
from .. import prompts
from ..pipeline.state import RunState
from ..styles.chat import format_proposal
from . import ranking
from .judging import judge_target, planned_calls, rounds
from .outputs import Judged, Ranked, own_tournament
from .stages import live

_WINNER = re.compile(r"winner\W{0,6}(?:is\W{0,3})?(?:proposal\s*)?\W{0,3}\b([AB])\b", re.I)
_JSON_WINNER = re.compile(r'"winner"\s*:\s*"(?:proposal\s*)?([AB])"', re.I)


# -- who judges ---------------------------------------------------------------------------
def judge_settings(request) -> ModelSettings:
    """The judge's settings: greedy; the run's key when it is the run's own model, else
    the key given for the judge (its endpoint in the request) or, when none was, the one the key
    rule allows for the judge's model and base URL: never the run's."""
    c = request.config
    model, base_url = judge_target(c)
    own = not c.judge_model.strip() or (model == c.model.strip() and base_url == c.base_url.strip())
    if own:
        key = request.endpoint(MODEL).key
    elif request.endpoint(JUDGE).key.value:
        key = request.endpoint(JUDGE).key
    else:  # none given for the judge: the operator's, only where the key rule allows it
        key = keys.resolve(model, base_url)
    return ModelSettings.with_key(model, key, base_url, temperature=0.0, timeout=request.timeout,
                                  retry=RetryPolicy(max_retries=request.max_retries))


def swiss_pairs(standing: list[str], met: set[frozenset]) -> list[tuple[str, str]]:
    """Pairs for one round: everyone paired with the nearest in `standing` (best first)
    they have not met, the lowest-placed possible sitting out when the count is odd.
    Fewer pairs when no full pairing of new opponents exists."""
    def solve(rest: list[str]) -> list[tuple[str, str]] | None:
        if not rest:
            return []
        a = rest[0]
        for b in rest[1:]:
            if frozenset((a, b)) not in met:
                tail = solve([x for x in rest[1:] if x != b])
                if tail is not None:
                    return [(a, b), *tail]
        return None

    tries = [standing] if len(standing) % 2 == 0 else \
        [[x for x in standing if x != bye] for bye in reversed(standing)]
    for field in tries:
        found = solve(field)
        if found is not None:
            return found
    pairs, used = [], set()  # no full pairing: as many new pairs as greedily found
    for a in standing:
        b = next((b for b in standing if b != a and a not in used and b not in used
                  and frozenset((a, b)) not in met), None)
        if b is not None:
            pairs.append((a, b))
            used |= {a, b}
    return pairs


# -- one judgement ------------------------------------------------------------------------
def parse_decision(text: str) -> str | None:
    """'A' or 'B' when the reply names a winner (the last one it names), else None."""
    found = _JSON_WINNER.findall(text or "") or _WINNER.findall(text or "")
    return found[-1].upper() if found else None


async def judge_one(client: LLMClient, first, second) -> Judgement:
    """The judge's verdict on `first` (shown as A) against `second` (B); asked once more
    when the reply names no winner, and left without a winner if it still names none."""
    p = prompts.load("candidates")
    msgs = p["judge_pair"].messages(first=format_proposal(first.proposal),
                                    second=format_proposal(second.proposal))
    reply = (await client.complete(msgs, max_tokens=400)).text
    decision = parse_decision(reply)
    reason = reply
    if decision is None:
        again = msgs + [{"role": "assistant", "content": reply}] + p["judge_again"].messages()
        extra = (await client.complete(again, max_tokens=200, extra={"seed": 1})).text
        decision = parse_decision(extra)
        reason = f"{reply}\n{extra}".strip()
    winner = {"A": first.id, "B": second.id}.get(decision or "", "")
    return Judgement(first.id, second.id, winner, clip(_WINNER.sub("", reason).strip(" \n:*"), 800))


# -- the stages -----------------------------------------------------------------------------
def judge_client(state: RunState) -> LLMClient:
    """The judge's client: on the run's own model (its style not forced), with the facts the
    run's start resolved; a judge named apart is asked about once, here."""
    settings = judge_settings(state.request)
    same = settings.model == state.client.settings.model and state.config.prompt_style == "auto"
    client = LLMClient(settings, store=state.store, usage=state.run.usage,
                       concurrency=state.config.concurrency, cancel=state.client.cancel,
                       facts=state.client.facts if same else None)
    client.before_call = state.client.before_call  # the run's budget counts the judge too
    client.after_call = state.client.after_call  # and so does a shared demo's allowance
    return client


def _standing(ids: list[str], judgements: list[Judgement]) -> list[str]:
    wins = {c: 0 for c in ids}
    for j in judgements:
        if j.winner in wins:
            wins[j.winner] += 1
    bt = ranking.bradley_terry(len(ids), ranking.decisions(judgements, ids))
    pos = {c: i for i, c in enumerate(ids)}
    return sorted(ids, key=lambda c: (-wins[c], -round(float(bt[pos[c]]), 6), pos[c]))


async def tournament(state: RunState) -> Judged:
    """Swiss rounds of pairwise judgements among the live candidates (a judge only)."""
    t = own_tournament(state)
    if not state.client.facts.judge_follows:  # `can_judge`, as the run's start answered it
        t.method = "signals"
        return Judged(t)
    t.method, t.judge_model = "judge", judge_target(state.config)[0]
    cands = live(state)
    ids, by_id = [c.id for c in cands], {c.id: c for c in cands}
    if len(ids) < 2:
        return Judged(t)
    client, met = judge_client(state), {frozenset((j.first, j.second)) for j in t.judgements}
    total, done = planned_calls(len(ids)), 0
    for _ in range(rounds(len(ids))):
        pairs = swiss_pairs(_standing(ids, t.judgements), met)
        if not pairs:
            break
        orders = [(a, b) for x, y in pairs for a, b in ((x, y), (y, x))]
        state.recorder.emit("rank", "judge", done, total, "started")
        got = await asyncio.gather(*(judge_one(client, by_id[a], by_id[b]) for a, b in orders))
        t.judgements += got
        met |= {frozenset(p) for p in pairs}
        done += len(orders)
        state.recorder.emit("rank", "judge", min(done, total), total, "done",
                          f"{sum(bool(j.winner) for j in got)} of {len(got)} decided")
    await asyncio.to_thread(fit, t, ids)  # while the reviews go on
    return Judged(t)


def fit(t: Tournament, ids: list[str]) -> None:
    """Bradley-Terry scores, bootstrap intervals, wins and position bias of the judgements."""
    data = ranking.decisions(t.judgements, ids)
    bt = ranking.bradley_terry(len(ids), data)
    lo_hi = ranking.bootstrap(len(ids), data)
    t.scores = {c: round(float(bt[i]), 4) for i, c in enumerate(ids)}
    t.intervals = {c: [round(float(lo_hi[i][0]), 4), round(float(lo_hi[i][1]), 4)]
                   for i, c in enumerate(ids)}
    t.wins = ranking.win_matrix(t.judgements, ids)
    t.position_bias = ranking.position_bias(t.judgements)
    # How many judgements gave no decision is read from the judgements where it is shown
    # (export_candidates.tournament_notes), never kept as a note to be found again.


def _signals(state: RunState, c) -> dict[str, float]:
    """The measured signals of one candidate, by name."""
    out: dict[str, float] = {}
    score = ranking.review_score(c)
    if score is not None:
        out["review_score"] = score
    g = state.ctx.grounding
    spec = {f: ws | set(g.name(f).lower().split()) for f, ws in g.specific_words().items()}
    if spec:
        ws = words(" ".join(c.proposal.answers().values()))
        out["field_coverage"] = round(sum(bool(ws & fw) for fw in spec.values()) / len(spec), 4)
    fluency = state.candidates.fluency.get(c.id)
    if fluency is not None:
        out["fluency"] = round(fluency, 4)
    if c.novelty is not None and c.novelty.facets:
        tops = [f.nearest[0].similarity for f in c.novelty.facets if f.nearest]
        if tops:
            out["novelty"] = round(1.0 - sum(tops) / len(tops), 4)
    return out


async def rank(state: RunState) -> Ranked:
    """Order the live candidates (Bradley-Terry on the judgements, else the signals) and
    make the best one the run's proposal, reviews and meta-review."""
    t = own_tournament(state)
    signals = {c.id: _signals(state, c) for c in live(state)}
    # The signals combined below are the candidates' new ones: copies carry them, the
    # run's candidates get them when the output is folded in.
    cands = [dataclasses.replace(c, signals=signals[c.id]) for c in live(state)]
    ids = [c.id for c in cands]
    if t.method == "judge" and len(ids) > 1:
        if set(t.scores) != set(ids):  # fitted by the tournament unless it was skipped
            await asyncio.to_thread(fit, t, ids)
    else:
        t.method = "signals" if len(ids) > 1 else t.method
        t.scores = ranking.combine_signals(cands) if len(ids) > 1 else {c: 0.0 for c in ids}
    t.order = ranking.order_by(t.scores, cands)
    best = t.order[0]
    state.recorder.emit("rank", "ranking", 1, 1, "done", f"best: {best} ({t.method})")
    return Ranked(t, signals, best)
