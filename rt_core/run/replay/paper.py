"""Replay a real paper (node masking): hide it, let its neighbourhood write, compare.

The neighbourhood comes from the graph: the target's authors, who read only their
publications from before the target's year (never the target; undated papers only when
the user keeps them), and the papers the target cites (cite edges). Each ticked mode
(self, agent, data, global) runs on that same neighbourhood, through the same runner
as a single run (the replay is a plan whose stages include each mode's run); the
stages they share are done once: the authors' profiles are read once, the reviewer candidates embedded once,
the reference's five answers resolved once. Every mode is scored by the same evaluator
and shown next to a chance band: how similar the reference is to the five answers of
random unrelated papers in the store.
"""
from __future__ import annotations

import asyncio
import dataclasses
import random
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from ...access import may_change_record
from ...errors import InputError, RTError
from ...models import registry
from ...models.client import run_async
from ...models.embed import Embedder
from ...settings import schema
from ...settings.run_config import for_door
from ...types import MODES, QUESTION_KEYS, Paper, ProgressEvent, Researcher, Run, RunRequest
from ..evidence.evaluate import Reference, compare, reference_answers, restater_for
from ..pipeline import steps
from ..pipeline.jobs import BackgroundJob
from ..pipeline.runner import Runner, Stage
from ..pipeline.simulation import Simulation
from ..pipeline.state import CandidateVectors, RunState
from .outputs import Banded, ChanceBand, Resolved, SharedProfiles, SharedVectors

MODE_ORDER = ("self", "agent", "data", "global")


@dataclass
class Neighbourhood:
    target: Paper
    researcher_ids: list[str]
    paper_ids: list[str]
    cutoff_year: int | None
    # What was left out and why (shown to the user): authors with nothing to read before
    # the target's year, cited papers the store does not hold.
    notes: list[str] = field(default_factory=list)


def neighbourhood(store, target_id: str, authors: Iterable[str] | None = None,
                  references: Iterable[str] | None = None,
                  keep_undated: bool = False) -> Neighbourhood:
    """The masked neighbourhood of a target paper, from the store's graph unless the
    authors (researcher ids) and references (paper ids) are given."""
    corpus = store.corpus
    target = corpus.get_paper(target_id)
    cutoff = target.year - 1 if target.year else None
    notes = []
    if cutoff is None:
        notes.append("The paper has no year, so nothing limits its authors' reading by date.")
    author_ids = list(authors) if authors is not None else corpus.authors_of([target.id])[target.id]
    corpus.get_researchers(author_ids)  # unknown ids: NotFoundError naming them
    from ..styles.context import select_publications  # noqa: PLC0415

    readable = []
    for rid in author_ids:
        pubs = select_publications(corpus.publications(rid), cutoff, {target.id}, 1, keep_undated)
        if pubs:
            readable.append(rid)
        else:
            notes.append(f"{corpus.researcher_names([rid])[rid]} has no paper before "
                         f"{target.year} in the store, so takes no part.")
    cited = list(references) if references is not None else list(target.references)
    known = [p for p in dict.fromkeys(cited) if p != target.id and corpus.paper_exists(p)]
    if len(known) < len(cited):
        notes.append(f"{len(cited) - len(known)} of the {len(cited)} cited papers are not in "
                     "the store and are left out.")
    if not readable and not known:
        raise InputError(f"'{target.title}' has no neighbourhood to replay from",
                         "Import its authors' earlier papers or the papers it cites first.")
    return Neighbourhood(target, readable, known, cutoff, notes)


def import_target(store, ident: str, s2) -> str:
    """Import a paper to replay by arXiv id or DOI through the Semantic Scholar importer:
    the paper, the papers it cites (as cite edges), and authorship for its authors who are
    already researchers in the store (same name). Returns the stored paper id."""
    from ...sources.ids import is_doi, normalise_doi, parse_arxiv_id  # noqa: PLC0415

    text = (ident or "").strip()
    if is_doi(normalise_doi(text)):
        key = f"DOI:{normalise_doi(text)}"
    else:
        try:
            key = f"ARXIV:{parse_arxiv_id(text)}"
        except InputError:
            raise InputError(f"'{text}' is neither an arXiv id nor a DOI",
                             "Give e.g. 2410.16179 or 10.1016/j.neuron.2020.07.040.") from None
    paper = s2.get_paper(key)
    refs = s2.references(key)
    corpus = store.corpus
    with store.transaction():
        cited = corpus.upsert_papers(refs, origin="semantic_scholar")
        paper.references = list(dict.fromkeys(cited.stored_id(r.id) for r in refs))
        pid = corpus.upsert_papers([paper], origin="semantic_scholar").stored_id(paper.id)
        for name in paper.authors:
            for r in corpus.search_researchers(name, limit=5):
                # a visitor of a shared server adds no authorship to a shared researcher
                if r.name.casefold() == name.casefold() and may_change_record(
                        corpus.scope, corpus.added_by("researcher", [r.id]).get(r.id, "")):
                    corpus.upsert_researchers([Researcher(id=r.id, name=r.name,
                                                          publication_ids=[pid])])
    return pid


def unrelated_ids(store, target: Paper) -> set[str]:
    """Papers too close to the target to count as chance: itself, what it cites, what
    cites it, and papers sharing an author with it."""
    related = {target.id, *target.references}
    authors = store.corpus.authors_of([target.id])[target.id]
    for rid in authors:
        related.update(store.corpus.get_researcher(rid).publication_ids)
    rows = store.db.conn.execute("SELECT citing_id FROM citations WHERE cited_id=?", (target.id,))
    related.update(r[0] for r in rows)
    return related


def chance_band(store, embedder: Embedder, reference: Reference, limit: int = 200,
                seed: int = 0) -> ChanceBand | None:
    """Median and 90% interval of the reference's similarity to random unrelated papers'
    five answers (stored restatements and shipped summaries); None with fewer than 3."""
    related = unrelated_ids(store, reference.paper)
    pool = [r for r in store.references.all_with_answers() if r.paper_id not in related]
    if len(pool) < 3:
        return None
    random.Random(seed).shuffle(pool)
    means, per = [], {k: [] for k in QUESTION_KEYS}
    for other in pool[:limit]:
        sim = compare(embedder, other.answers, reference)
        means.append(sim.mean)
        for k, v in sim.per_question.items():
            per[k].append(v)
    return ChanceBand(round(float(np.median(means)), 4), round(float(np.percentile(means, 5)), 4),
                      round(float(np.percentile(means, 95)), 4), len(means),
                      {k: round(float(np.median(v)), 4) for k, v in per.items() if v})


@dataclass
class ReplayResult:
    target_id: str
    title: str
    evaluator: str
    reference_source: str
    kind: str  # five-question or whole-text
    neighbourhood: dict
    chance: ChanceBand | None
    runs: dict[str, Run] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # mode -> why it did not run

    def rows(self) -> list[dict]:
        """One row per mode: per-question and mean similarity (None = missing answer)."""
        out = []
        for mode in [m for m in MODE_ORDER if m in self.runs or m in self.errors]:
            run = self.runs.get(mode)
            sim = run.similarity if run else None
            row = {"mode": mode, "status": run.status if run else "not run",
                   "run_id": run.id if run else ""}
            for k in QUESTION_KEYS:
                row[k] = sim.per_question.get(k) if sim else None
            row["mean"] = sim.mean if sim else None
            row["missing"] = list(sim.missing) if sim else []
            row["error"] = self.errors.get(mode) or (
                "; ".join(f"{e.stage}/{e.agent}: {e.message}" for e in run.errors) if run else "")
            out.append(row)
        return out

    def to_dict(self) -> dict:
        return {"target_id": self.target_id, "title": self.title, "evaluator": self.evaluator,
                "reference_source": self.reference_source, "kind": self.kind,
                "neighbourhood": self.neighbourhood,
                "chance": dataclasses.asdict(self.chance) if self.chance else None,
                "rows": self.rows()}


class Replay:
    """Replay one paper in several modes side by side (see the module docstring)."""

    def __init__(self, request: RunRequest, store, target_id: str,
                 modes: Iterable[str] = MODE_ORDER, pasted: str = "",
                 authors: Iterable[str] | None = None, references: Iterable[str] | None = None,
                 embedder: Embedder | None = None,
                 on_progress: Callable[[ProgressEvent], None] | None = None, cancel=None,
                 owner_hash: str = ""):
        """`owner_hash`: the hash of the browser token that started the replay (rt_core.access),
        stored with each mode's run so its starter finds them on a shared server; '' for the
        command line. Options a replay does not offer (schema.REPLAY) take their defaults
        (`for_door`), whichever door's settings the request carries."""
        request = dataclasses.replace(request, config=for_door(request.config, schema.REPLAY))
        self.modes = [m for m in MODE_ORDER if m in set(modes)]
        unknown = set(modes) - set(MODES)
        if unknown or not self.modes:
            raise InputError(f"unknown or no modes: {', '.join(sorted(unknown)) or '(none)'}",
                             f"Tick one or more of: {', '.join(MODE_ORDER)}.")
        self.store = store
        self.request = request
        self.pasted = pasted
        self.hood = neighbourhood(store, target_id, authors, references, request.config.keep_undated)
        self.embedder = embedder or Embedder.for_request(request, store)
        self.on_progress = on_progress or (lambda e: None)
        self.cancel = cancel
        self.sims: dict[str, Simulation] = {}
        self.errors: dict[str, str] = {}
        self.reference: Reference | None = None
        self.band: ChanceBand | None = None
        for mode in self.modes:
            cfg = dataclasses.replace(
                request.config, mode=mode, researcher_ids=list(self.hood.researcher_ids),
                paper_ids=list(self.hood.paper_ids), reference_paper_id=self.hood.target.id,
                cutoff_year=self.hood.cutoff_year)
            try:
                sim = Simulation(dataclasses.replace(request, config=cfg), store,
                                 embedder=self.embedder, on_progress=self._tagged(mode), cancel=cancel)
                sim.start()
                sim.state.recorder.owner_hash = owner_hash  # before the run's first save
                self.sims[mode] = sim
            except RTError as exc:  # e.g. "data" with no cited paper in the store
                self.errors[mode] = f"{exc} {exc.hint}".strip()

    def _tagged(self, mode: str) -> Callable[[ProgressEvent], None]:
        def emit(e: ProgressEvent) -> None:
            self.on_progress(dataclasses.replace(e, agent=f"{mode}: {e.agent}"))
        return emit

    def readers(self) -> list[RunState]:
        """The modes' run states that read profiles (and so share the authors' profiles and the
        reviewer candidates)."""
        return [s.state for s in self.sims.values() if s.state.mode.reads_profiles]

    def plan(self) -> list[Stage]:
        """The replay's stages: the shared ones once (the reference's answers, the authors'
        profiles, the reviewer candidates), then each mode's own run, then the chance band.
        On the one in-process model the modes run one after another."""
        readers = [s for s in self.sims.values() if MODES[s.config.mode].reads_profiles]
        shared: tuple[str, ...] = ("reference",)
        plan = [Stage("reference", _resolve_reference)]
        if any("candidates" in (st.name for st in s.plan) for s in readers):
            plan.append(Stage("candidates", _shared_candidates))
            shared += ("candidates",)
        if readers:
            plan.append(Stage("read", _shared_profiles))
            shared += ("read",)
        one_at_a_time = registry.serial(self.request.config.model)
        previous: tuple[str, ...] = ()
        for mode in self.sims:
            plan.append(Stage(f"mode:{mode}", _mode_run(mode), shared + previous))
            previous = (f"mode:{mode}",) if one_at_a_time else ()
        plan.append(Stage("chance", _chance, tuple(s.name for s in plan if s.name.startswith("mode:"))
                          or shared))
        return plan

    async def arun(self) -> ReplayResult:
        await Runner(self.plan(), self, fold=lambda output: output.fold_into(self) if output else None).run()
        target = self.hood.target
        sims = {m: s.run.similarity for m, s in self.sims.items() if s.run.similarity}
        any_sim = next(iter(sims.values()), None)
        return ReplayResult(
            target.id, target.title,
            any_sim.evaluator if any_sim else self.embedder.name, self.reference.source,
            any_sim.kind if any_sim else ("whole-text" if self.reference.answers is None
                                          else "five-question"),
            {"researcher_ids": self.hood.researcher_ids, "paper_ids": self.hood.paper_ids,
             "cutoff_year": self.hood.cutoff_year, "notes": self.hood.notes},
            self.band, {m: s.run for m, s in self.sims.items()}, dict(self.errors))

    def run_sync(self) -> ReplayResult:
        return run_async(self.arun())


# -- the replay's own stages (each takes the Replay) -------------------------------------
async def _resolve_reference(r: Replay) -> Resolved:
    return Resolved(await reference_answers(r.store, r.hood.target, r.pasted,
                                            restater_for(r.request, r.store)))


async def _shared_candidates(r: Replay) -> SharedVectors:
    """The modes that choose reviewers share one neighbourhood, so one set of vectors."""
    first = r.readers()[0]
    made = await steps.embed_candidates(first)  # None: the first had them already
    return SharedVectors(made or CandidateVectors(first.candidate_vectors, first.candidates_error))


async def _shared_profiles(r: Replay) -> SharedProfiles:
    """The authors' profiles, read once by the first mode that reads them (each kept on its
    run as it arrives), for all of them."""
    first = r.readers()[0]
    read = await steps.read_authors(first)
    return SharedProfiles(dict(read.by_researcher), tuple(e for e in first.run.errors if e.stage == "read"))


def _mode_run(mode: str):
    async def run_mode(r: Replay) -> None:
        await r.sims[mode].arun()  # its own plan skips what the shared stages did
    return run_mode


async def _chance(r: Replay) -> Banded:
    return Banded(await asyncio.to_thread(chance_band, r.store, r.embedder, r.reference))


def replay(request: RunRequest, store, target_id: str, **kw) -> ReplayResult:
    return Replay(request, store, target_id, **kw).run_sync()


@dataclass(kw_only=True)
class ReplayJob(BackgroundJob):
    """A replay in a background thread, for a page that re-runs on every click."""
    replay: Replay
    result: ReplayResult | None = None
    kind: str = "replay"  # what its end is called (rt_core.run.pipeline.job_end)

    def cancel(self) -> None:
        for sim in self.replay.sims.values():
            sim.cancel.set()

    def _work(self) -> None:
        self.result = self.replay.run_sync()


def start(request: RunRequest, store, target_id: str, **kw) -> ReplayJob:
    """Build the replay now (bad input fails in the caller), then run it in a thread."""
    job = ReplayJob(replay=None)  # type: ignore[arg-type]
    cancel = threading.Event()
    job.replay = Replay(request, store, target_id, on_progress=job.record, cancel=cancel, **kw)
    job.launch(f"rt-replay-{target_id}")
    return job
