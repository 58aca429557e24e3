"""One simulation run: read, write, review (and evaluate against a reference).

Independent agent calls within a stage run concurrently. Finished work is saved
after every stage, and every model call is cached, so a failed or cancelled run
keeps what it finished and a re-run resumes from the cache without new calls.
"""
from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import datetime as _dt
import json
import re
import threading
import time
import uuid
from collections.abc import Awaitable, Callable

from .. import keys
from ..errors import CancelledRun, InputError, RTError, Unreachable
from ..models import registry
from ..models.client import LLMClient, ModelSettings, agent_calls, run_async
from ..models.embed import Embedder
from ..store import Store
from ..store.runs import RunConflict
from ..text import clip, first_sentence
from ..types import (
    MODES,
    QUESTION_KEYS,
    Paper,
    Profile,
    ProgressEvent,
    Proposal,
    Run,
    RunConfig,
    RunRequest,
    StageError,
)
from .context import StageContext, papers_key, select_publications
from .evaluate import Reference, compare, reference_answers, restater_for
from .grounding import Grounding
from .style import stages_for

MAX_REVIEWERS = 10
REVIEWER_POOL = 30  # at most this many candidates per run, found by full-text search
CANDIDATE_PAPERS = 5  # each candidate's newest papers, embedded one by one
_STOPWORDS = frozenset(re.findall(r"\w+", """about above across after again against among an and
are as at based be been being between both but by can could does doing during each for from
further has have how into its itself more most new not novel of off on once only other our out
over own paper same should such than that the their them then these they this those through
towards under until using very via was were what when where which while who why will with within
without would approach approaches method methods model models study results show learning data"""))


def effective_cutoff(config: RunConfig, reference_year: int | None) -> int | None:
    """The profile cut-off: the user's, and never later than the year before the reference
    (what a reference's authors could have read when they wrote it)."""
    years = [y for y in (config.cutoff_year,
                         reference_year - 1 if reference_year else None) if y is not None]
    return min(years) if years else None

# The stated rule for long inputs: an abstract longer than this is cut to its first
# MAX_PROMPT_ABSTRACT characters before any prompt sees it, and the run says so.
MAX_PROMPT_ABSTRACT = 20_000


def validate(config: RunConfig, store: Store) -> None:
    """Fail early, with a clear message, before any model is called."""
    mode = MODES.get(config.mode)
    if mode is None:
        raise InputError(f"unknown aggregation mode '{config.mode}'", f"Use one of: {', '.join(MODES)}.")
    if not config.researcher_ids and not config.paper_ids:
        raise InputError("the neighbourhood is empty", "Add at least one researcher or paper.")
    if mode.needs_researchers and not config.researcher_ids:
        raise InputError(f"mode '{mode.name}' needs at least one researcher",
                         "Add researchers, or use mode 'data' for papers only.")
    if mode.needs_papers and not config.paper_ids:
        raise InputError(f"mode '{mode.name}' needs at least one paper",
                         "Add papers, or use mode 'agent'.")
    if not 0 <= config.num_reviewers <= MAX_REVIEWERS:
        raise InputError(f"number of reviewers must be between 0 and {MAX_REVIEWERS}")
    corpus = store.corpus
    corpus.get_researchers(config.researcher_ids)  # raise NotFoundError on unknown ids
    corpus.get_papers(config.paper_ids)
    if config.reviewer_ids:
        corpus.get_researchers(config.reviewer_ids)
        clash = set(config.reviewer_ids) & set(config.researcher_ids)
        if clash:
            raise InputError(f"reviewers cannot be authors: {', '.join(sorted(clash))}",
                             "Pick reviewers who are not in the neighbourhood.")
    if config.reference_paper_id:
        corpus.get_paper(config.reference_paper_id)


class Simulation:
    """One run of one RunRequest. The request is validated once, here, and never copied
    into a second settings object: the client and the embedder are derived from it."""

    def __init__(self, request: RunRequest, store: Store, embedder: Embedder | None = None,
                 on_progress: Callable[[ProgressEvent], None] | None = None,
                 cancel: threading.Event | None = None, run_id: str | None = None,
                 resume: bool = False, sleep: Callable[[float], object] | None = None):
        """resume=True re-runs the stored run `run_id` (interrupted, failed or cancelled)
        with the same request under the same id: every call that had succeeded comes
        from the cache. `sleep` replaces the retry back-off wait (tests)."""
        validate(request.config, store)
        keys.check_request(request)
        self.request = request
        self.config = request.config
        self.mode = MODES[self.config.mode]
        self.store = store
        self.embedder = embedder or Embedder.for_request(request, store)
        created = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
        self._resume = bool(resume and run_id)
        if self._resume:
            store.runs.reap_orphans()
            old = store.runs.load(run_id)  # NotFoundError for an unknown id
            if old.status == "running":
                raise RunConflict(f"run {run_id} is still running in a live process",
                                  "Wait for it to finish; interrupted, failed or cancelled runs resume.")
            created = old.created_at
        self.run = Run(id=run_id or uuid.uuid4().hex[:12], config=self.config, created_at=created)
        self.lease = uuid.uuid4().hex
        cancel = cancel or threading.Event()
        self.client = LLMClient(ModelSettings.for_request(request), store=store,
                                usage=self.run.usage, concurrency=self.config.concurrency,
                                cancel=cancel, sleep=sleep)
        self.ctx = StageContext(self.client, on_progress or (lambda e: None), cancel)
        self.stages = stages_for(self.client.settings.style)
        ref = store.corpus.get_paper(self.config.reference_paper_id) \
            if self.config.reference_paper_id else None
        self.cutoff_year = effective_cutoff(self.config, ref.year if ref else None)
        # A replay hands every mode the same reference answers (resolved once).
        self.reference: Reference | None = None
        # Key concepts per chosen field, computed on first use (only base-model stages ask).
        self.ctx.grounding = Grounding.for_store(store, self._grounding_papers(), self.embedder)
        self._drafts: dict[str, Proposal] = {}
        self._candidates: asyncio.Task | None = None
        self._created = False
        self._gone = False  # the row was deleted or taken over: stop writing it

    # -- helpers ---------------------------------------------------------------------
    def _emit(self, stage: str, agent: str, done: int, total: int, status: str = "done",
              partial: str = "") -> None:
        with contextlib.suppress(Exception):  # a broken display must not break the run
            self.ctx.on_progress(ProgressEvent(stage, agent, done, total, status, partial[:300]))

    def _fail(self, stage: str, agent: str, exc: Exception) -> None:
        hint = getattr(exc, "hint", "") or ""
        kind = exc.kind if isinstance(exc, RTError) else type(exc).__name__
        self.run.errors.append(StageError(stage, agent, kind, str(exc), hint))

    def _save(self) -> None:
        # The first save creates (or, resuming, claims) the row under this simulation's
        # lease; later saves update it over its version, so a run deleted from History
        # while it is going does not come back, and nobody else's write is overwritten.
        self.run.notes = list(dict.fromkeys([*self.run.notes, *self.client.notes]))
        if self._gone:
            return
        runs = self.store.runs
        if not self._created:  # a conflict here (id taken, run resumed elsewhere) is raised
            self._created = True
            if not self._resume:
                runs.create(self.run, lease=self.lease)
                return
            self.run.version = runs.claim(self.run.id, self.lease).version
        try:
            if not runs.save(self.run, create=False, lease=self.lease):
                self._gone = True
        except RunConflict:  # taken over elsewhere: the caller still gets the run object
            self._gone = True

    async def _gather(self, stage: str, jobs: list[tuple[str, Callable[[], Awaitable]]],
                      keep: Callable[[str, object], None],
                      describe: Callable[[object], str] = lambda r: "") -> None:
        """Run agent jobs concurrently; each result is kept (on the run) the moment it
        arrives, so a cancel or a failing sibling loses nothing finished. A failed agent
        is recorded and the others go on."""
        total = len(jobs)
        counter = {"done": 0}

        async def one(agent: str, job):
            self._emit(stage, agent, counter["done"], total, "started")
            calls = [0]
            token = agent_calls.set(calls)
            try:
                value = await job()
            except (CancelledRun, Unreachable):  # nothing listens: the siblings would fail alike
                raise
            except Exception as exc:  # recorded and shown; the stage carries on
                self._fail(stage, agent, exc)
                counter["done"] += 1
                self._emit(stage, agent, counter["done"], total, "failed", str(exc))
                return
            finally:
                agent_calls.reset(token)
            keep(agent, value)
            counter["done"] += 1
            # "cached": finished without a single model call (cache or stored profile)
            self._emit(stage, agent, counter["done"], total, "done" if calls[0] else "cached",
                       describe(value))

        if self.client.semaphore_limit == 1:
            # One in-process model: run agents one after another so each agent's
            # calls extend the same prompt and llama.cpp reuses its evaluated prefix.
            for a, j in jobs:
                await one(a, j)
        else:
            tasks = [asyncio.ensure_future(one(a, j)) for a, j in jobs]
            try:
                await asyncio.gather(*tasks)
            except BaseException:
                for t in tasks:  # one agent found the server unreachable, or a cancel
                    t.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                raise

    # -- stages ----------------------------------------------------------------------
    def _bounded(self, papers: list[Paper]) -> list[Paper]:
        """Papers with over-long abstracts cut by the stated rule (MAX_PROMPT_ABSTRACT), noted."""
        out = []
        for p in papers:
            if len(p.abstract) > MAX_PROMPT_ABSTRACT:
                self.client.notes.append(
                    f"The abstract of '{' '.join(p.title.split())[:80]}' has {len(p.abstract):,} characters; "
                    f"only its first {MAX_PROMPT_ABSTRACT:,} were used.")
                self.client.notes[:] = list(dict.fromkeys(self.client.notes))
                p = dataclasses.replace(p, abstract=p.abstract[:MAX_PROMPT_ABSTRACT])
            out.append(p)
        return out

    def _publications(self, researcher_id: str) -> list[Paper]:
        exclude = {self.config.reference_paper_id} if self.config.reference_paper_id else set()
        return self._bounded(select_publications(
            self.store.corpus.publications(researcher_id), self.cutoff_year, exclude,
            self.config.max_profile_papers, keep_undated=self.config.keep_undated))

    def profile_key(self, pubs: list[Paper]) -> str:
        """Everything a profile depends on besides the researcher and the model name: the
        papers' ids *and* text, the server, the prompt style and template, the temperature
        and the number of re-asks. Change any of them and the profile is written anew."""
        settings = self.client.settings
        template = self.ctx.prompts.templates.get("profile")  # base-model profiles use none
        return papers_key([p.id for p in pubs] + [
            papers_key([f"{p.title}\n{p.abstract}" for p in pubs]),
            settings.base_url.rstrip("/"), settings.style,
            json.dumps(template.parts if template else {}, sort_keys=True), repr(float(settings.temperature)),
            str(self.ctx.max_reasks), getattr(self.stages, "PROFILE_VERSION", "")])

    async def _profile(self, researcher_id: str) -> Profile:
        r = self.store.corpus.get_researcher(researcher_id)
        pubs = self._publications(researcher_id)
        model = self.client.settings.model
        key = self.profile_key(pubs)
        cached = self.store.profiles.get(researcher_id, model, key)
        if cached:
            return Profile(researcher_id, cached, model, [p.id for p in pubs])
        if not pubs:
            raise InputError(f"{r.name} has no publications to read (before the cut-off year)",
                             "Add some of their papers, or move the cut-off year.")
        prof = await self.stages.read_profile(self.ctx, researcher_id, r.name, pubs)
        if prof.missing:
            raise RTError(f"the model gave no profile for {r.name}",
                          "Try again, or use a larger model.")
        self.store.profiles.put(researcher_id, model, key, prof.text, prof.paper_ids)
        return prof

    async def read(self, researcher_ids: list[str]) -> None:
        todo = [rid for rid in researcher_ids if rid not in self.run.profiles]
        jobs = [(rid, (lambda rid=rid: self._profile(rid))) for rid in todo]
        await self._gather("read", jobs, self.run.profiles.__setitem__, lambda p: p.text)

    def _grounding_papers(self) -> list[Paper]:
        """The papers the proposal should build on: what the mode reads. The chosen papers
        when it reads papers, else the authors' (their profiles come from them), and none
        for `self`, the baseline that writes from nothing: concepts from the neighbourhood
        would hand it what the other modes have to read."""
        papers = self._writing_papers() if self.mode.reads_papers else []
        if papers or not self.mode.reads_profiles:
            return papers
        return [p for rid in self.config.researcher_ids for p in self._publications(rid)[:5]]

    def _writing_papers(self) -> list[Paper]:
        ids = [p for p in self.config.paper_ids if p != self.config.reference_paper_id]
        return self._bounded(self.store.corpus.get_papers(ids))

    def start_candidates(self, shared: asyncio.Future | None = None) -> asyncio.Future | None:
        """Candidates' papers do not depend on the proposal: embed them in a thread while
        the profiles are read and the drafts written, so choosing reviewers later costs
        only the proposal's own embedding. `shared`: the same work started by another
        run on the same neighbourhood (a replay's modes), reused instead of repeated."""
        if self.needs_reviewer_choice() and self._candidates is None:
            self._candidates = shared or asyncio.ensure_future(
                asyncio.to_thread(self.candidate_vectors))
        return self._candidates

    async def write(self) -> None:
        self.start_candidates()
        papers = self._writing_papers() if self.mode.reads_papers else []
        if not self.mode.reads_profiles:
            jobs = [("writer", lambda: self.stages.write_draft(self.ctx, None, papers, ""))]
        else:
            authors = [rid for rid in self.config.researcher_ids if rid in self.run.profiles]
            jobs = [(rid, (lambda rid=rid: self.stages.write_draft(
                self.ctx, self.run.profiles[rid].text, papers, rid))) for rid in authors]
        order = [a for a, _ in jobs]

        def keep(agent: str, draft) -> None:
            # Until the merge succeeds, the run's proposal holds the drafts alone.
            self._drafts[agent] = draft
            self.run.proposal = Proposal(missing=list(QUESTION_KEYS),
                                         drafts=[self._drafts[a] for a in order if a in self._drafts])

        await self._gather("write", jobs, keep, lambda d: d.q1)
        ordered = [self._drafts[a] for a in order if a in self._drafts]
        if not ordered:
            raise RTError("no author produced a draft", "See the errors above for each author.")
        self._emit("write", "aggregator", 0, 1, "started")
        try:
            proposal = await self.stages.aggregate(self.ctx, ordered)  # type: ignore[arg-type]
        except CancelledRun:
            raise
        except Exception as exc:
            self._fail("write", "aggregator", exc)
            raise
        self.run.proposal = proposal
        self._emit("write", "aggregator", 1, 1, "done", proposal.q1)

    def needs_reviewer_choice(self) -> bool:
        return (self.mode.reads_profiles and not self.config.reviewer_ids
                and self.config.num_reviewers > 0)

    def candidate_pool(self) -> list[str]:
        """Who may review, without loading every researcher: full-text search for the
        neighbourhood's words (its papers' and authors' titles), among researchers of the
        neighbourhood's fields when any exist, widened only when too few are found."""
        corpus = self.store.corpus
        authors = list(self.config.researcher_ids)
        titles = [p.title for p in corpus.get_papers(self.config.paper_ids)]
        for rid in authors:
            titles += [p.title for p in self._publications(rid)[:CANDIDATE_PAPERS]]
        counts = collections.Counter(w for t in titles for w in re.findall(r"[a-z][a-z0-9-]{2,}",
                                                                           t.lower())
                                     if w not in _STOPWORDS)
        words = [w for w, _ in counts.most_common(24)]
        fields = corpus.researcher_fields(authors) or sorted(
            {f for p in corpus.get_papers(self.config.paper_ids) for f in p.fields})
        need = max(self.config.num_reviewers, 1)
        size = min(REVIEWER_POOL, max(12, 3 * need))
        pool = corpus.reviewer_candidates(words, fields, authors, size) if fields else []
        if len(pool) < need:  # too few in the neighbourhood's fields: any field
            pool += [r for r in corpus.reviewer_candidates(words, (), authors + pool,
                                                           size - len(pool))]
        for scope in ([fields] if fields else []) + [[]]:
            if len(pool) >= need:
                break
            # No word in common: anyone in those fields, then anyone (a bounded query each).
            pool += [r.id for r in corpus.search_researchers(fields=scope, limit=size + len(authors))
                     if r.id not in authors and r.id not in pool]
        return pool[:size]

    @staticmethod
    def _paper_text(p: Paper) -> str:
        return f"{p.title}. {first_sentence(p.abstract, 120)}"

    def candidate_vectors(self) -> dict[str, object]:
        """researcher id -> one unit vector per publication (each embedded on its own, so
        nothing is cut at the embedder's token limit). Only candidates with something to
        read, before the cut-off and never the hidden reference, are kept. All texts go
        to the embedder in one call (one batch, one cache write)."""
        pubs = {rid: self._publications(rid)[:CANDIDATE_PAPERS] for rid in self.candidate_pool()}
        pubs = {rid: ps for rid, ps in pubs.items() if ps}
        texts = [self._paper_text(p) for ps in pubs.values() for p in ps]
        if not texts:
            return {}
        vecs = self.embedder.encode(texts)
        out, start = {}, 0
        for rid, ps in pubs.items():
            out[rid] = vecs[start:start + len(ps)]
            start += len(ps)
        return out

    def choose_reviewers(self, proposal: Proposal, vectors: dict | None = None) -> list[str]:
        """Named reviewers, else the k candidates (not authors) whose best-matching paper is
        closest to the proposal (ties broken by the mean match)."""
        k = self.config.num_reviewers
        if self.config.reviewer_ids:
            return list(self.config.reviewer_ids)
        if k == 0:
            return []
        vectors = self.candidate_vectors() if vectors is None else vectors
        if not vectors:
            return []
        from .evaluate import content_text  # noqa: PLC0415  (evaluate imports this module's peers)

        # One short text for the proposal: this embedding is the only part of reviewer
        # choice between the stages, so it is kept to one pass of the embedder.
        content = " ".join(t for t in (content_text(v) for v in proposal.answers().values()) if t)
        q = self.embedder.encode([clip(content or " ".join(proposal.answers().values()), 700)])[0]
        scored = []
        for rid, vecs in vectors.items():
            sims = vecs @ q
            scored.append((rid, float(sims.max()), float(sims.mean())))
        scored.sort(key=lambda x: (-x[1], -x[2], x[0]))
        return [rid for rid, _, _ in scored[:k]]

    async def review(self) -> None:
        proposal = self.run.proposal
        assert proposal is not None
        papers = self._writing_papers() if self.mode.reads_papers else []
        if not self.mode.reads_profiles:
            reviewer_ids = ["reviewer"] if self.config.num_reviewers or self.config.reviewer_ids else []
            personas = {"reviewer": None}
        else:
            tokens = self.embedder.tokens
            vectors = await self._candidates if self._candidates is not None else None
            reviewer_ids = await asyncio.to_thread(self.choose_reviewers, proposal, vectors)
            self.run.usage.prompt_tokens += self.embedder.tokens - tokens
            await self.read(reviewer_ids)
            reviewer_ids = [r for r in reviewer_ids if r in self.run.profiles]
            personas = {r: self.run.profiles[r].text for r in reviewer_ids}
        if not reviewer_ids:
            return
        done = {r.reviewer_id for r in self.run.reviews}
        jobs = [(rid, (lambda rid=rid: self.stages.review(self.ctx, rid, personas[rid], proposal, papers)))
                for rid in reviewer_ids if rid not in done]
        await self._gather("review", jobs, lambda _agent, rev: self.run.reviews.append(rev),
                           lambda r: f"score {r.score}")
        # Reviews in reviewer order, not arrival order: the meta-review prompt (and so its
        # cache key) must not depend on which reviewer happened to answer first.
        rank = {rid: i for i, rid in enumerate(reviewer_ids)}
        self.run.reviews.sort(key=lambda r: rank.get(r.reviewer_id, len(rank)))
        if self.run.reviews:
            self._emit("review", "meta-reviewer", 0, 1, "started")
            self.run.meta_review = await self.stages.meta_review(self.ctx, proposal, self.run.reviews)
            self._emit("review", "meta-reviewer", 1, 1, "done",
                       f"mean score {self.run.meta_review.score}")

    async def evaluate(self) -> None:
        ref_id = self.config.reference_paper_id
        if not ref_id or self.run.proposal is None:
            return
        self._emit("evaluate", "reference", 0, 1, "started")
        tokens = self.embedder.tokens
        if self.reference is None:
            # The evaluator's own model restates the reference (never the run's model).
            self.reference = await reference_answers(
                self.store, self.store.corpus.get_paper(ref_id),
                restater=restater_for(self.request, self.store))
        self.run.similarity = await asyncio.to_thread(compare, self.embedder, self.run.proposal,
                                                      self.reference)
        self.run.usage.prompt_tokens += self.embedder.tokens - tokens
        self._emit("evaluate", "reference", 1, 1, "done", f"similarity {self.run.similarity.mean:.3f}")

    # -- the whole run ------------------------------------------------------------------
    async def _evaluate_beside(self) -> None:
        """The evaluation comes after the run's outcome is settled: its failure (model or
        embedder) is recorded beside a finished run and never turns it into a failure."""
        try:
            await self.evaluate()
        except CancelledRun:
            raise
        except Exception as exc:
            self._fail("evaluate", "reference", exc)
            self._emit("evaluate", "reference", 1, 1, "failed", str(exc))

    async def arun(self) -> Run:
        run = self.run
        run.status = "running"
        self._save()
        plan: list[tuple[str, Callable[[], Awaitable]]] = []
        self.start_candidates()
        if self.mode.reads_profiles:
            plan.append(("read", lambda: self.read(self.config.researcher_ids)))
        plan += [("write", self.write), ("review", self.review), ("evaluate", self._evaluate_beside)]
        queue = registry.queue_for(self.client.settings.model)
        name = "queue"
        try:
            if queue is not None:
                await self._wait_for_model(queue)
            for name, step in plan:
                started = time.perf_counter()
                try:
                    await step()
                finally:
                    run.timings[name] = round(time.perf_counter() - started, 3)
                    self._save()
            run.status = "done"
        except CancelledRun:
            run.status = "cancelled"
        except Exception as exc:
            if not run.errors or run.errors[-1].message != str(exc):
                self._fail(name, "run", exc)
            run.status = "failed"
        finally:
            if queue is not None:
                queue.leave(run.id)
            if run.status == "running":  # interrupted by something not an Exception
                run.status = "interrupted"
            if self._candidates is not None and self._candidates.done() and \
                    not self._candidates.cancelled():
                self._candidates.exception()  # seen: a run that ended early never needed it
            try:
                self._save()
            finally:
                self.store.runs.release(self.lease)
        return run

    async def _wait_for_model(self, queue) -> None:
        """Take a place in the queue for the one in-process model; until it is this run's
        turn, report the place and the estimated start about once a second."""
        queue.join(self.run.id)
        while not await asyncio.to_thread(queue.wait_turn, self.run.id, 1.0):
            self.ctx.check_cancel()
            place = queue.place(self.run.id)
            if place is not None and place.ahead:
                self._emit("queue", "embedded model", 0, place.ahead, "waiting",
                           f"{place.ahead} run{'s' * (place.ahead > 1)} ahead; starts in about "
                           f"{place.eta_s:.0f} s")
        self._emit("queue", "embedded model", 1, 1, "done", "the model is free: starting")

    def run_sync(self) -> Run:
        return run_async(self.arun())


def simulate(request: RunRequest, store: Store | None = None, **kw) -> Run:
    """Run a whole simulation synchronously (CLI, scripts, tests)."""
    from ..store import open_store  # noqa: PLC0415

    return Simulation(request, store or open_store(), **kw).run_sync()
