"""Before Start: will the offline writer have a bridge, and whom could a presenter add for one?

Why: offline (a model that writes from facets), a proposal carries a method of one field to
a problem of another only where the method can run on what the other side has (kinds.fit).
Over the bundled researchers, most pairs from two fields offer no such bridge
(bench/bench_bridge_coverage.py), and their proposal is an honest long shot nobody wants to
demo. A presenter cannot know that until the run ends; here it is known from the papers
alone, before any model is asked, and so is which researcher of the store would give one.

Everything is read through the run's own code: the pool of papers is what the run's
`Grounding` pairs (the chosen papers, with the authors' recent ones that share their
fields), and the pairing is `Grounding.pairings`. A hint is checked the same way, on the
neighbourhood with the candidate added, so a researcher suggested here does give the run a
bridge when added, not merely a paper that looks close.

Cost: every paper's facets are found once and kept in the store (kept.facets_of), with
the run's embedder (it picks a stated problem's topic phrase). Measured on the bundled store
(~40 researchers, ~140 papers) on a busy 2-core machine: the first `bridge_hints` on a fresh
store, which finds and keeps every paper's facets, took 0.5 s; later calls 0.4 s, which is
pairing ~40 neighbourhoods of a dozen papers each, without embedding anything (whether a
bridge exists does not depend on the sentence cosine, which only orders pairings within
their group). `bridge_state` alone pairs one neighbourhood: a few hundredths of a second.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...settings.modes import MODES
from ...types import Paper
from ..styles.context import select_publications
from ..styles.grounding import Grounding
from . import bridges
from .kept import facets_of
from .pair import Pairing

# The authors' papers a run adds to the pool (run/pipeline/state.py: `grounding`), and how
# many of a researcher's papers it reads at most (RunConfig.max_profile_papers's default).
OWN_PAPERS = 5
PROFILE_PAPERS = 20
BRIDGED = ("method", "unit")

# What a general tool runs on, on the problem's side, when no kind of data is shared.
_GENERIC = {"any data": "the data of", "papers": "the paper itself,"}


@dataclass(frozen=True)
class BridgeState:
    """Whether the neighbourhood gives the offline writer a bridge, and which, in words."""
    bridge: str  # "method", "unit", "none", or "" when nothing could be paired at all
    sentence: str  # the bridge in one sentence, or why there is none
    pairing: Pairing | None = None

    @property
    def bridged(self) -> bool:
        return self.bridge in BRIDGED


@dataclass(frozen=True)
class Hint:
    """A researcher of the store who, added, gives the neighbourhood a method bridge."""
    researcher_id: str
    name: str
    field: str  # the researcher's field's name
    same_field: bool  # in one of the neighbourhood's own fields (keeps its question)
    lends: bool  # the method is the candidate's (else theirs is the problem a method runs on)
    value: float  # kinds.Fit.value of the bridge their paper makes
    line: str  # who, and why, in one line
    pairing: Pairing


def _recent(store, rid: str) -> list[Paper]:
    """A researcher's newest papers, as a run reads them for the pool (no cut-off year)."""
    return select_publications(store.corpus.publications(rid), None, set(), PROFILE_PAPERS)[:OWN_PAPERS]


def _grounding(store, researcher_ids: list[str], paper_ids: list[str], mode: str,
               embedder, names: dict[str, str]) -> Grounding:
    """The run's grounding for this neighbourhood (run/pipeline/state.py and
    people/reading.py: `grounding_papers`): the chosen papers when the mode reads papers,
    else the authors' newest; the authors' papers as the facet pool when it reads profiles."""
    m = MODES.get(mode, MODES["global"])
    own = [p for rid in researcher_ids for p in _recent(store, rid)] if m.reads_profiles else []
    papers = store.corpus.get_papers(paper_ids) if m.reads_papers else []
    if not papers and m.reads_profiles:
        papers = own
    return Grounding(papers, field_names=names, embedder=embedder, store=store, facet_pool=own)


def _names(store) -> dict[str, str]:
    return {f["id"]: f["name"] for f in store.corpus.list_fields()}


def _check(store, researcher_ids, paper_ids) -> tuple[list[str], list[str]]:
    """The ids as lists; unknown ones raise the store's NotFoundError naming them all."""
    rids, pids = list(dict.fromkeys(researcher_ids)), list(dict.fromkeys(paper_ids))
    store.corpus.get_researchers(rids)
    store.corpus.get_papers(pids)
    return rids, pids


def _on(p: Pairing) -> str:
    """What on the problem's side the method runs on, in words ("text", "the model fitted in")."""
    fit = p.fit
    if fit is None or fit.shared:
        return f"the {fit.bridge()} of" if fit is not None else "the problem of"
    if fit.generic == "deep networks" and fit.argued:
        return "the neural network argued for in"
    runs = bridges.runs_for(fit)  # the words the proposal and its review use too
    return f"{runs.unnamed} of" if runs else _GENERIC.get(fit.generic, "the data of")


def describe(p: Pairing, titles: dict[str, str], names: dict[str, str], own_field: bool = True) -> str:
    """One pairing in one sentence: the method (with its paper's title when its name does not
    say it) and the problem's paper; `own_field`: name the method's field too."""
    mech, purp = p.mechanism, p.purpose
    a, b = titles.get(mech.paper_id, mech.paper_id), titles.get(purp.paper_id, purp.paper_id)
    fa, fb = names.get(mech.field, mech.field), names.get(purp.field, purp.field)
    if p.bridge == "unit":
        return f"“{a}” ({fa}) and “{b}” ({fb}) both study {' and '.join(p.fit.units[:2])}."
    named = mech.phrase.split("(")[0].split()
    titled = bool(named) and named[0].lower() in a.lower()
    where = f" ({fa})" if own_field else ""
    method = f"{mech.phrase}{where}" if titled else f"{mech.phrase}, from “{a}”{where},"
    return f"{method} can run on {_on(p)} “{b}” ({fb})."


def bridge_state(store, researcher_ids, paper_ids, mode: str = "global", embedder=None) -> BridgeState:
    """Whether the neighbourhood's best pairing, as the run would find it, has a bridge.

    `embedder`: the run's (it orders pairings within a group, and picks a problem's topic
    phrase when a paper's facets are first found); None pairs without it. Unknown ids raise
    NotFoundError; an empty neighbourhood is no bridge and no error."""
    rids, pids = _check(store, researcher_ids, paper_ids)
    if not rids and not pids:
        return BridgeState("", "The neighbourhood is empty.")
    names = _names(store)
    g = _grounding(store, rids, pids, mode, embedder, names)
    found = g.pairings
    if not found:
        # Not the pairings' note ("... have no abstract to find facets in"): the run says that
        # once when it ends, and a bad input is said once (test_facet_notes_app).
        return BridgeState("", "the chosen papers give no two fields' facets to pair.")
    best = found.ranked[0]
    titles = store.corpus.paper_titles([best.mechanism.paper_id, best.purpose.paper_id])
    if best.bridge not in BRIDGED:
        return BridgeState(best.bridge, "none of the chosen papers states a method that can run on "
                                        "what another field's paper works on, and no two study the same units",
                           best)
    return BridgeState(best.bridge, describe(best, titles, names), best)


def _hint_for(store, rid: str, rids: list[str], pids: list[str], mode: str, names: dict[str, str],
              fields: set[str], ours: set[str]) -> Hint | None:
    """The hint for one candidate: the neighbourhood with them added, paired as the run
    pairs it; a hint only when the run's own first pairing is then a method bridge between
    one of the candidate's papers and one of the neighbourhood's (`ours`). A bridge between
    two of the candidate's own papers would write their idea, not the neighbourhood's: a blind
    reading (v12) of neighbourhoods with the hint followed found two different neighbourhoods
    given the same proposal, from the one economist's two papers, the drawn fields left out."""
    r = store.corpus.get_researcher(rid)
    theirs = {p.id for p in _recent(store, rid)}
    g = _grounding(store, [*rids, rid], pids, mode, None, names)
    if not g.pairings.ranked:
        return None
    best = g.pairings.ranked[0]
    sides = {best.mechanism.paper_id, best.purpose.paper_id}
    if best.bridge != "method" or not (sides & theirs and sides & ours):
        return None
    titles = store.corpus.paper_titles([best.mechanism.paper_id, best.purpose.paper_id])
    field = names.get(r.fields[0], r.fields[0]) if r.fields else "no field recorded"
    return Hint(rid, r.name, field, bool(set(r.fields) & fields), best.mechanism.paper_id in theirs,
                best.fit.value,
                f"{r.name} ({field}): {describe(best, titles, names, own_field=best.mechanism.field not in r.fields)}",
                best)


def bridge_hints(store, researcher_ids, paper_ids, limit: int = 3, mode: str = "global",
                 embedder=None) -> list[Hint]:
    """Up to `limit` researchers of the store, not in the neighbourhood, each of whom added
    gives it a method bridge; none when it has a bridge already, or is empty.

    Ranked: a researcher in one of the neighbourhood's fields first (the proposal keeps the
    neighbourhood's question), then by how well the method fits (kinds.Fit.value), then one
    who lends the method before one whose paper is only the problem it runs on (a named
    method reads as a hint; a problem paper asks the reader to find the method), then by the
    pairing's score. `embedder` finds the facets of papers not yet kept (once: see the
    module's docstring for the cost); the candidates are paired without it."""
    rids, pids = _check(store, researcher_ids, paper_ids)
    if not rids and not pids or bridge_state(store, rids, pids, mode, embedder).bridged:
        return []
    everyone = [i for i in store.corpus.all_researcher_ids() if i not in set(rids)]
    # Every paper a candidate could bring, found (and kept) once with the run's embedder, so
    # the candidates' pairings below read kept facets and embed nothing.
    facets_of([p for rid in everyone for p in _recent(store, rid)], store, embedder)
    names = _names(store)
    chosen = store.corpus.get_papers(pids) + [p for rid in rids for p in _recent(store, rid)]
    fields = {f for p in chosen for f in p.fields[:1]}
    ours = {p.id for p in chosen}
    found = [h for rid in everyone if (h := _hint_for(store, rid, rids, pids, mode, names, fields, ours))]
    found.sort(key=lambda h: (not h.same_field, -h.value, not h.lends, -h.pairing.score, h.name))
    # Two co-authors of one method paper make one hint, not two: the next is another bridge.
    out, seen = [], set()
    for h in found:
        pair = (h.pairing.mechanism.paper_id, h.pairing.purpose.paper_id)
        if pair not in seen:
            seen.add(pair)
            out.append(h)
    return out[:limit]
