"""One steer: the user's change becomes a version, and the community continues from it.

An edit replaces one answer of a version and the run's reviewers review the result (the
user's node, with its new scores); a comment is a review in the user's words, and the
authors answer it in at least one revision round. With `rounds`, the authors revise
from the reviews that many times at most (each round a community node, stopping when a
round changes nothing or its mean score does not rise), and the user's edited answer
stays as written unless `allow_changes`.

The ids of the new nodes are derived from the steer and the model settings that answer
it, and every call goes through the cached client: asking for the same steer again
makes no model call and finds the same nodes (table.save keeps the first).
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field

from ...errors import InputError
from ...fiveq import QUESTIONS
from ...models.client import run_async
from ...store import Store
from ...types import ProgressEvent, Review, Run, RunConfig, RunRequest, Usage
from ..pipeline.simulation import Simulation
from ..pipeline.validation import MAX_ROUNDS
from . import community, table
from .cost import SteerCost, steer_cost
from .tree import COMMENT, COMMUNITY, EDIT, REVISION, ROOT, YOU, Tree, Version, with_answer

LONGEST = 20_000  # characters of one answer or comment


@dataclass(frozen=True)
class Steer:
    """What the user asks: a new text for question `question` (1-5), or a comment."""
    parent: str = ROOT
    question: int | None = None
    text: str = ""
    comment: str = ""
    rounds: int = 0
    allow_changes: bool = False

    @property
    def key(self) -> str:
        return f"q{self.question}" if self.question else ""


@dataclass
class Steered:
    """What a steer made: the user's node, the community's nodes after it, and the calls."""
    nodes: list[Version]
    usage: Usage = field(default_factory=Usage)
    stopped: str = ""  # why the revision rounds ended early, in words

    @property
    def last(self) -> Version:
        return self.nodes[-1]


def check(run: Run, t: Tree, s: Steer) -> Version:
    """The parent version, or one clear message for a steer that cannot go."""
    if run.status != "done":
        raise InputError(f"run {run.id} is not finished ({run.status}), so it cannot be steered yet",
                         "Resume it first; a finished run with reviews can be steered.")
    parent = t.get(s.parent)
    if parent is None:
        raise InputError(f"run {run.id} has no version {s.parent!r}",
                         f"Its versions are: {', '.join(list(t.nodes)[:12]) or 'none'}.")
    if s.question is not None and not s.text.strip() and not s.comment.strip():
        raise InputError(f"the new text for question {s.question} is empty",
                         "Write the answer you want in --text, or comment with --comment.")
    if bool(s.text.strip()) == bool(s.comment.strip()):
        what = "both a new text and a comment" if s.text.strip() else "neither a new text nor a comment"
        raise InputError(f"a steer needs a new answer or a comment; this one has {what}",
                         "Give --question N with --text \"...\", or --comment \"...\".")
    if s.text.strip() and s.question not in range(1, len(QUESTIONS) + 1):
        raise InputError(f"there is no question {s.question}: the proposal answers questions 1 to "
                         f"{len(QUESTIONS)}", "Give --question with a number from 1 to 5.")
    if max(len(s.text), len(s.comment)) > LONGEST:
        raise InputError(f"the text is longer than {LONGEST:,} characters", "Shorten it.")
    if s.text.strip() and " ".join(s.text.split()) == " ".join(getattr(parent.proposal, s.key).split()):
        raise InputError(f"the new text of question {s.question} is the one version {parent.id} already has",
                         "Change the text, or steer another question.")
    if not 0 <= s.rounds <= MAX_ROUNDS:
        raise InputError(f"revision rounds must be between 0 and {MAX_ROUNDS}, not {s.rounds}",
                         f"Give 0 to {MAX_ROUNDS} rounds.")
    if not any(r.reviewer_id != YOU for r in t.path(parent.id)[0].reviews):
        raise InputError(f"version {parent.id} of run {run.id} has no reviewers to continue from",
                         "Steer a run (or candidate) that was reviewed.")
    return parent


def planned(store: Store, run_id: str, s: Steer, config: RunConfig | None = None) -> SteerCost:
    """The estimate of this steer's calls, before any (one clear message for a bad steer)."""
    run = store.runs.load(run_id)
    t = table.tree_of(store, run)
    parent = check(run, t, s)
    reviewers = len({r.reviewer_id for r in t.path(parent.id)[0].reviews if r.reviewer_id != YOU})
    return steer_cost(config or run.config, reviewers, rounds_of(s), store)


def rounds_of(s: Steer) -> int:
    """A comment is answered by the authors: at least one revision round."""
    return max(s.rounds, 1) if s.comment.strip() else s.rounds


def node_id(run: Run, s: Steer, config: RunConfig) -> str:
    """The same steer with the same model settings names the same node."""
    blob = json.dumps([run.id, s.parent, s.key, s.text.strip(), s.comment.strip(), s.rounds,
                       s.allow_changes, config.model, config.base_url, config.temperature],
                      sort_keys=True)
    return "s" + hashlib.sha256(blob.encode()).hexdigest()[:10]


def kept_after(parent: Version, s: Steer) -> list[str]:
    """The answers the authors may not rewrite after this steer: every answer the user
    wrote on the way here and the one written now; none when the user allows changes."""
    if s.allow_changes:
        return []
    return [k for k in dict.fromkeys([*parent.kept, s.key]) if k]


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="microseconds")


async def _continue(crew: community.Crew, first: Version, rounds: int, reviews: list[Review],
                    out: Steered) -> None:
    """Up to `rounds` revision rounds after the user's node, each a community node."""
    current, answered = first, reviews
    for r in range(1, rounds + 1):
        revised, changes = await community.revise(crew, current.proposal, answered,
                                                  current.meta_review, first.kept)
        if not changes:
            out.stopped = f"round {r} changed nothing, so the revision stopped"
            return
        new_reviews, meta = await community.review(crew, revised)
        note = "; ".join(f"Q{c.question[1:]} answers: {c.answers}" if c.answers else f"Q{c.question[1:]} rewritten"
                         for c in changes)
        node = Version(f"{first.id}.r{r}", first.run_id, current.id, COMMUNITY, REVISION,
                       [c.question for c in changes], note, list(first.kept), revised,
                       new_reviews, meta, _now())
        out.nodes.append(node)
        before = current.score
        current, answered = node, new_reviews
        if before is not None and node.score is not None and node.score <= before:
            out.stopped = f"round {r} did not raise the mean score, so the revision stopped"
            return


async def asteer(store: Store, run_id: str, s: Steer,
                 request_for: Callable[[RunConfig], RunRequest] = RunRequest,
                 config: RunConfig | None = None,
                 on_progress: Callable[[ProgressEvent], None] | None = None) -> Steered:
    """Make the steer's nodes and store them. `config`: the settings that answer it (the
    run's own by default; the CLI and the app may change the model); `request_for` makes
    the request with its keys by the one key rule."""
    run = store.runs.load(run_id)
    t = table.tree_of(store, run)
    parent = check(run, t, s)
    config = config or run.config
    sim = Simulation(request_for(config), store, on_progress=on_progress)
    state = sim.start()
    crew = community.Crew.of(state, run, t.path(parent.id)[0].reviews)
    vid = node_id(run, s, config)
    out = Steered([], state.client.usage)
    if s.text.strip():
        proposal = with_answer(parent.proposal, s.key, s.text.strip())
        reviews, meta = await community.review(crew, proposal)
        first = Version(vid, run.id, parent.id, YOU, EDIT, [s.key], "", kept_after(parent, s),
                        proposal, reviews, meta, _now())
        answered = reviews
    else:
        mine = Review(YOU, weaknesses=s.comment.strip())
        first = Version(vid, run.id, parent.id, YOU, COMMENT, [], s.comment.strip(), kept_after(parent, s),
                        dataclasses.replace(parent.proposal), [mine], parent.meta_review, _now())
        answered = [*[r for r in parent.reviews if r.reviewer_id != YOU], mine]
    out.nodes.append(first)
    await _continue(crew, first, rounds_of(s), answered, out)
    for node in out.nodes:
        table.save(store, node)
    return out


def steer(store: Store, run_id: str, s: Steer, **kw) -> Steered:
    """`asteer`, synchronously (the CLI, the app's action, tests)."""
    return run_async(asteer(store, run_id, s, **kw))
