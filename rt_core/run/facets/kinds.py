"""The kinds of data a paper works on (text, images, networks, genomes ...), and whether a
method of one paper can run on what another paper's side has: the plausibility of a pairing.

Why: a 270M base model cannot tell that a benchmark of LLM agents says nothing about dark
matter, and the cosine of two sentences cannot either (both are "evaluation" and "models").
A blind reader rejected exactly those pairings (issue 49). What a method needs is data of
the kind it was made for; a pairing is plausible when the purpose's side works on that kind
too (or has data the method reads as that kind: `fit`), or when the method is a general
tool (parallel workflows, statistical estimation) and the purpose's side has data at all,
or an optimiser of models and the purpose's side trains or fits models, or a system for
deep learning and the side runs a neural network, or a reader of the scientific
literature and the side is a paper of it (the problem's own). Measured on
pairings labelled by hand (tests/fixtures/pairing_labels.json, tests/test_pairing.py), this
separates plausible from implausible pairings better than the sentence cosine the ranking
used alone.

A bridge that rests on a word, not on data, is worse than none: a blind reader found
each of these false (issue 49, reading v5) and each is now ruled out here: a crystal's
"periodic images" read as images, boosting called a tool for data of any kind (it learns
from tables), and "theory" shared by a DFT paper and a theorem.

Each kind is found by a small stated list of words in a paper's title and abstract, and
named in words a proposal can say ("text", "networks of people or places").
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass


def _words(text: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(text.split()) + r")\b", re.IGNORECASE)


# A kind's name as a proposal says it, and the words that show a paper works on it. The
# lists avoid words that name a kind only in passing: "neural network" is no network data,
# "sky survey" is no survey of people, "sequence length" of a transformer is no genome.
KINDS: dict[str, tuple[str, re.Pattern[str]]] = {
    "text": ("text", _words(r"language\s+models? LLMs? texts? sentences? documents? abstracts "
                            r"corpus dialogues? conversations? question\s+answering machine\s+translation wording "
                            r"prompts? web\s+pages? summari[sz]ation word\s+embeddings")),
    # "periodic images" of a crystal's unit cell and "image charges" of electrostatics are
    # copies of atoms or charges, no pictures: a blind reader found a vision model paired
    # with crystals on that pun alone (issue 49).
    "images": ("images", _words(r"(?<!periodic\s)(?<!mirror\s)images?(?!\s+charges?) imaging x-rays? "
                                r"radiograph\w* vision visual video\w* photographs? pixels? camera")),
    "networks": ("networks of people or places", _words(
        r"social\s+networks? co-offending network\s+data networked graph\s+data ties friendship "
        r"network\s+of\s+(?:agents|people|killings|cities) links commuting\s+flows "
        r"network\s+structure connected")),
    "series": ("time series", _words(r"time\s+series forecast\w* weekly daily monthly data\s+streams "
                                     r"seasons? seasonal trajector\w* medium-range")),
    "fields": ("gridded fields of weather and climate", _words(
        r"weather climate reanalysis humidity gridded precipitation atmospher\w*")),
    "places": ("places such as neighbourhoods, cities and regions", _words(
        r"neighbou?rhoods? localities cities city commuting\s+zones countries regions "
        r"US\s+states locations parish")),
    "genomes": ("genomes and sequencing data", _words(
        r"DNA (?<!materials\s)genom(?:es?|ic\w*) sequencing sequence\s+markers sequencing\s+reads loci phylogen\w* "
        r"genealog\w* RADseq bacteria\w* microb\w* species lineages")),
    "materials": ("crystals and molecules", _words(
        r"crystals? crystalline compounds? atoms? atomic atomistic molecules inorganic "
        r"density\s+functional DFT interatomic")),
    "surveys": ("surveys of people", _words(
        r"survey\s+data survey\s+questions resident\s+surveys survey\s+of\s+\w+\s+residents "
        r"(?:Chicago\s+|household\s+)?survey\s+and respondents questionnaires? interviews")),
    "records": ("records of people", _words(
        r"arrest\s+records police\s+records health\s+records administrative\s+records "
        r"register\s+data registers census cohorts? parolees prisoners defendants?")),
    "agents": ("interacting agents", _words(
        r"agents? role-play\w* game\s+dynamics game\s+theory evolutionary\s+game actors players")),
    "compute": ("programs and computing systems", _words(
        r"compil\w* programs? programming GPUs accelerators hardware memory\s+cost "
        r"distributed\s+(?:training|systems?) servers? key-value\s+cache inference\s+time")),
    "neural": ("recordings of neurons and brains", _words(
        # "feed-forward neurons" and "MLP neurons" are a network's units, no brain's (v12).
        r"(?<!feed-forward\s)(?<!MLP\s)(?<!artificial\s)neurons? neural\s+responses recordings fMRI "
        r"intracranial cortex cortical brain")),
    "sky": ("catalogues of stars and the sky", _words(
        r"stars? stellar parallax\w* proper\s+motions? astrometr\w* photometr\w* galax\w* "
        r"radial\s+velocit\w* sky telescopes?")),
    # Tables of records or variables, what a tabular learner (boosting, decision trees)
    # reads: named as such, or data said per unit ("industry-level data"), or a score
    # computed from a person's variables. Records and surveys are such tables too (fit).
    "tables": ("tables of records and variables", _words(
        r"tabular spreadsheets? panel\s+data [\w]+-level\s+data risk\s+scores? claims\s+data "
        r"administrative\s+data")),
    "theory": ("equations and theorems", _words(
        r"theorems? prove[sd]? proofs? conjectures? inequalities equations? lemma matroids? "
        r"varieties cohomology curvature geodesics (?<!neural\s)operators")),
}
# Methods that run on any data (a side with data of any kind but theory alone can use them).
# Boosting, decision trees and regression are no such tools: they learn from tables of
# records or variables (a blind reader: XGBoost is a learner for tabular data, not a tool
# "for data of any kind"), so the words naming them make the method one on tables.
ANY_DATA = _words(r"Bayesian estimators? statistical\s+(?:model|test|learning)")
# Tools that run a computation in parallel (Parsl's workflows of Python functions) find
# nothing out about the data they are given: they make the other side's own computation
# finish sooner. So the proposal asks for the side's own computation (what it trains, fits,
# simulates, infers, assembles, computes or analyses, else its analysis of the data it
# names) sooner at the same results (bridges.py).
# Used as "a general-purpose method" on any data, a blind reader found Parsl asked to
# "predict dynamics" and judged it by agreement with the paper (reading v9: a category error).
WORKFLOW = _words(r"workflows? parallel\s+programming parallel\s+scripting")
COMPUTES = _words(r"train\w* fit fits fitted fitting simulat\w+ solvers? pipelines? assembl(?:y|ies|es) "
                  r"inferr?\w+ calculations? computations? computed comput(?:es|ing) processing analys[ie]s "
                  r"analy[sz]ed high-throughput estimat(?:e|es|ed|ing) forecast\w* "
                  r"deep\s+(?:\w+\s+){0,2}(?:networks?|nets?) neural\s+networks? (?<!-)transformers?(?!-)")
TABLES_SAID = _words(r"tabular")
# Kinds whose data come as tables of records or variables: records, surveys, catalogues.
TABLED = frozenset({"records", "surveys", "sky"})
TABULAR = _words(r"boost\w* gradient-boosted decision\s+trees random\s+forests? regressions?")
# A learner trained on records of people ("a machine-learning model on New York City cases"
# of defendants) learns from a table of those records: a blind reader (v10) found it called a
# method with nothing to run on beside a risk score computed from patients' records.
LEARNER = _words(r"machine-learning\s+models? machine\s+learning\s+models? classifiers? predictors?")
# A field's written sources: a method that reads text can read them ("a large literature
# on the indirect harms", interviews, transcripts). Only methods about what text says
# count (their paper works on text, or text and agents, alone): one that makes a model run
# faster (programs and computing systems) or reads images too (a vision-language model)
# has nothing to say about a field's literature.
TEXT_ONLY = frozenset({"text", "agents"})
WRITTEN = _words(r"literature interviews? transcripts? narratives? case\s+notes")
# Transformers: a method that changes how a transformer's attention or cache runs (an
# LLM inference method) can run on a side that builds transformers of its own (a weather
# transformer), whatever data either feeds them.
ATTENTION = _words(r"attention KV\s+cache key-value\s+cache transformers?")
# "vision-transformer-like" (FourCastNet mixes its tokens with Fourier operators, no
# attention) is no transformer to run attention methods on.
TRANSFORMER = _words(r"(?<!-)transformers?(?!-)")
# Optimisers of models: they need a side that trains or fits a model, or solves an
# optimisation problem. Only optimisation algorithms count: an "optimizing compiler" or
# "optimized kernels" (TVM) make programs fast and fit no model (issue 49).
OPTIMISER = _words(r"optimi[sz]ers? SGD Adam gradient\s+descent stochastic\s+gradient "
                   r"stochastic\s+optimi[sz]ation")
# Solvers of optimisation problems (DC3 learns to solve constrained ones): they fit no model,
# they solve a problem, so they need a side that solves one (a power flow, a structure's
# relaxation); a blind reader (v10) found DC3 asked to fit Brain-Score's models false.
SOLVER = _words(r"optimi[sz]ation\s+(?:algorithms?|methods?|solvers?) solv\w+\s+(?:\w+\s+){0,3}optimi[sz]ation "
                r"(?:methods?|solvers?|algorithms?)\s+for\s+(?:\w+\s+){0,2}optimi[sz]ation")
# Said as a problem the side solves; "relaxation trajectories" a potential is trained on are data.
PROBLEM_SIDE = _words(r"optimi[sz]ation\s+problems? optimal\s+power\s+flow minimi[sz](?:e|es|ing) "
                      r"dispatch unit\s+commitment scheduling\s+problems?")
# Systems for deep learning: a compiler, a parallelisation or a memory plan for neural
# networks (TVM, FlexFlow, activation checkpointing) makes any field's deep network cheaper
# to train or run, when the method paper's abstract says it is made for deep networks and
# the side's abstract says it trains or runs one (a crystal graph network, a weather
# model, a network on knee X-rays). LLM-only methods (speculative decoding, a KV cache)
# are not among them: they need a transformer (ATTENTION above), and a decoder's tokens on
# a convolutional network would be a pun. "Neural responses" are a brain's, no network.
DEEP_METHOD = _words(r"deep\s+learning deep\s+(?:neural\s+)?(?:networks?|nets?) neural\s+networks?")
DEEP_SIDE = _words(r"deep\s+learning deep\s+(?:\w+\s+){0,2}(?:networks?|nets?) neural\s+networks? "
                   r"convolutional\s+(?:\w+\s+){0,2}networks? (?<!-)transformers?(?!-) diffusion\s+models?")
# A power grid's transformers carry current, not attention: a side about grids names none
# of the models above by that word (Donti's power-systems papers sit beside ClimaX).
POWER = _words(r"substations? voltages? power\s+grids? distribution\s+grids? electricity\s+grids?")


# A survey or review of a field's models ("A Survey of Large Language Models") trains and
# runs none of its own: there is no model of that paper to make cheaper (read from the
# title: a text is "Title. Abstract").
SURVEYED = re.compile(r"^[^.]*\b(?:survey|review)\b", re.IGNORECASE)
# A perspective or commentary argues for models and fits or runs none itself ("This
# perspective argues that machine learning will change clinical medicine"): a blind reader
# (v9) found "the paper runs a neural network" false of such a paper. It fits no model for
# an optimiser; a system for deep learning can still serve the networks it argues for, and
# the proposal says so (Fit.argued). Read from the title and the abstract's first sentence.
ARGUED = re.compile(r"^[^.]*\b(?:perspective|commentary)\b|^[^.]*\.\s+[^.]*\b(?:perspective|commentary)\b",
                    re.IGNORECASE)
# The bridges on which the method runs on the problem paper's own model or computation.
ON_MODEL = ("deep networks", "models to train", "computations", "problems to solve")


def _deep_network(side_text: str) -> str:
    """The words by which the side's text says it trains or runs a neural network, or ""."""
    if SURVEYED.search(side_text):
        return ""
    for m in DEEP_SIDE.finditer(side_text):
        if not (m.group(0).lower().startswith("transformer") and POWER.search(side_text)):
            return m.group(0)
    return ""


# Readers of the scientific literature: a method whose abstract says it works on research
# papers (ResearchAgent drafts ideas from a paper and those its citations link) can read
# any field's papers, and the problem's own paper is one. A method that only checks its
# output "against the literature" (The AI Scientist) or reads any text (HaluEval) is none.
LITERATURE = _words(r"scientific\s+literature research\s+papers literature\s+mining "
                    r"papers\s+linked\s+through citation\s+graphs?")
TRAINS = _words(r"train\w* fit fits fitted fitting optimi[sz]\w* learned learning "
                r"neural\s+networks? machine\s+learning")


@functools.lru_cache(maxsize=512)
def kinds_of(text: str) -> frozenset[str]:
    """The kinds of data a text says it works on (cached: a neighbourhood asks once per
    paper for every pairing it is in)."""
    return frozenset(k for k, (_, pat) in KINDS.items()
                     if any(not _of_a_genome(k, m, text or "") for m in pat.finditer(text or "")))


# "Neighbouring regions" of a genome are stretches of DNA, no places: a blind reader (v10)
# found a genealogy paper said to work on "neighbourhoods, cities and regions".
_GENOME = re.compile(r"\b(?:genom\w*|chromosom\w*|DNA)\b", re.IGNORECASE)


def _of_a_genome(kind: str, m: re.Match[str], text: str) -> bool:
    """Whether a word of places is said of a genome: its sentence names a genome."""
    if kind != "places":
        return False
    start = text.rfind(".", 0, m.start()) + 1
    end = text.find(".", m.end())
    return bool(_GENOME.search(text[start: end if end >= 0 else len(text)]))


# Kinds found only by fit, from both sides together (never by a paper's text alone).
# Named so both sides' abstracts bear it out: the method's names attention (MagicPIG, Deja
# Vu never say "transformer"), the side's names a transformer.
PAIR_KINDS = {"transformers": "transformers (models built on attention)"}


def joined(names) -> str:
    """Kinds' names in a list a reader parses: "text and images", but "text, and programs and
    computing systems" when a name has an "and" of its own (a case study read "text and
    programs and computing systems")."""
    names = list(names)
    sep = ", and " if any(" and " in n for n in names) else " and "
    return sep.join(names)


def name(kind: str) -> str:
    return PAIR_KINDS[kind] if kind in PAIR_KINDS else KINDS[kind][0]


@dataclass(frozen=True)
class Fit:
    """Whether a method can run on what the other side has, and why, in words."""
    plausible: bool
    shared: tuple[str, ...] = ()  # kinds both sides work on, in KINDS order
    # When the method is a general tool: "any data", "models to train", "computations" (it
    # runs the side's own computation in parallel), "deep networks" (it makes neural
    # networks cheaper to train or run) or "papers" (it reads research papers).
    generic: str = ""
    method_kinds: tuple[str, ...] = ()
    side_kinds: tuple[str, ...] = ()
    # Units both papers study (units.py), set only when no method bridge exists: the
    # proposal then asks whether one side's topic bears on the other's (write.py).
    units: tuple[str, ...] = ()
    # The side names no images but gridded fields, which the method (a vision model) reads as images.
    as_images: bool = False
    # Per shared kind, the words of the side's text it was read from ("industry-level data",
    # "literature", "transformer"): a proposal can say what on the other side the method
    # reads, where the kind's name alone ("tables of records and variables") is abstract.
    side_words: tuple[tuple[str, str], ...] = ()
    # For a bridge of the method's purpose ("deep networks", "papers"), the words of the
    # method's abstract and of the side's it rests on ("Deep Learning", "deep network"), so
    # Q1 and the kind check say what each abstract says, not a rule's name.
    said: tuple[str, str] = ("", "")
    # The side's paper only argues for the models the bridge rests on (a perspective): it
    # runs none and reports no accuracy of its own (ARGUED).
    argued: bool = False

    @property
    def bridge_used(self) -> str:
        """Which question a proposal of this fit asks: "method" (the method runs on the
        other side's data), "unit" (the two sides study the same units) or "none"."""
        return "method" if self.plausible else "unit" if self.units else "none"

    @property
    def value(self) -> float:
        """1 for a shared kind, 0.6 for a general tool that fits, 0 otherwise."""
        return 1.0 if self.shared else 0.6 if self.generic else 0.0

    def bridge(self) -> str:
        """The bridge in words ("text"; "text and surveys of people"), or ""."""
        names = [name("fields") + ", which a vision model reads as images" if k == "images" and self.as_images
                 else name(k) for k in self.shared[:2]]
        return joined(names)


def fit(method_text: str, method_phrase: str, side_text: str) -> Fit:
    """Can the method (its paper's title and abstract, and the phrase that names it) run on
    the data of the side (its papers' text)? See the module's docstring for the rule."""
    mine, theirs = set(kinds_of(method_text)), kinds_of(side_text)
    order = list(KINDS)
    # A method works on tables only when it is a tabular learner (its name, or its paper
    # says "tabular"): a paper that merely has a risk score is no such method.
    mine.discard("tables")
    if TABULAR.search(method_phrase) or TABLES_SAID.search(method_text) or (
            "records" in mine and LEARNER.search(method_phrase)):
        mine.add("tables")
    # What the method reads, beyond what the side names in the same words: gridded weather
    # and climate fields are images to a vision model (ClimaX is a vision transformer over
    # them); records and surveys are tables to a tabular learner; a field's literature or
    # interviews are text to a method on what text says; a weather transformer is a
    # transformer to a method on attention and caches.
    readable = set(theirs)
    if "images" in mine and "fields" in theirs:
        readable.add("images")
    if "tables" in mine and theirs & TABLED:
        readable.add("tables")
    if "text" in mine and not mine - TEXT_ONLY and WRITTEN.search(side_text):
        readable.add("text")
    if ("compute" in mine and ATTENTION.search(method_text) and TRANSFORMER.search(side_text)
            and not POWER.search(side_text)):
        mine.add("transformers")
        readable.add("transformers")
    # A system made for deep learning (TVM, FlexFlow) runs on a neural network, not on any
    # software the side names: "programs and computing systems" shared with a materials
    # database's interface is a pun (TVM asked to serve hypothetical inorganic compounds).
    if "compute" in mine and DEEP_METHOD.search(method_text) and not _deep_network(side_text):
        readable.discard("compute")
    shared = tuple(k for k in [*order, "transformers"] if k in mine & readable and k != "theory")
    has_data = bool(theirs - {"theory"})
    generic, said = "", ("", "")
    runs = COMPUTES.search(side_text) if WORKFLOW.search(method_phrase) else None
    if runs and runs.group(0).lower().startswith("transformer") and POWER.search(side_text):
        runs = None  # a power grid's transformer computes nothing
    if WORKFLOW.search(method_phrase) and (runs or has_data):
        # What the side computes in its own words, else the data it works on, which it analyses.
        seen = runs or next(m for m in (KINDS[k][1].search(side_text) for k in order if k in theirs) if m)
        generic, said = "computations", (WORKFLOW.search(method_phrase).group(0), _in_words(seen, side_text))
    elif ANY_DATA.search(method_phrase) and has_data:
        generic = "any data"
    elif OPTIMISER.search(method_phrase) and TRAINS.search(side_text) and not ARGUED.search(side_text):
        generic = "models to train"
        said = (OPTIMISER.search(method_phrase).group(0), _in_words(TRAINS.search(side_text), side_text))
    elif SOLVER.search(method_phrase) and not OPTIMISER.search(method_phrase) and PROBLEM_SIDE.search(side_text):
        generic = "problems to solve"
        said = (SOLVER.search(method_phrase).group(0), _in_words(PROBLEM_SIDE.search(side_text), side_text))
    elif "compute" in mine and DEEP_METHOD.search(method_text) and _deep_network(side_text):
        generic = "deep networks"
        said = (DEEP_METHOD.search(method_text).group(0), _deep_network(side_text))
    elif "text" in mine and LITERATURE.search(method_text):
        generic = "papers"
        said = (LITERATURE.search(method_text).group(0), "")
    # Theorems bridge only two papers that work on theorems alone: "density functional
    # theory" or a model's equations make no materials paper a reader of Ricci curvature
    # (a blind reader called that shared "theory" a pun, issue 49).
    pure = "theory" in mine and "theory" in theirs and not (mine | theirs) - {"theory"}
    ok = bool(shared) or bool(generic) or pure
    return Fit(ok, shared, generic, tuple(k for k in [*order, "transformers"] if k in mine),
               tuple(k for k in order if k in theirs),
               as_images="images" in shared and "images" not in theirs,
               side_words=tuple((k, _read_from(k, theirs, side_text)) for k in shared), said=said,
               argued=generic == "deep networks" and bool(ARGUED.search(side_text)))


def computes(words: str) -> bool:
    """Whether the side's words a "computations" bridge kept name a computation ("fit an
    epidemic-style model") rather than only the data the side analyses ("bacterial communities")."""
    return bool(COMPUTES.search(words))


def _in_words(m: re.Match[str], text: str, most: int = 4) -> str:
    """A match with the words after it, up to the clause's end: "fitted" alone shows no one
    what was fitted; "fitted to arrest records" does."""
    rest = re.match(rf"(?:\s+[\w'-]+){{0,{most}}}", text[m.end():])
    words = (m.group(0) + (rest.group(0) if rest else "")).split()
    while len(words) > 1 and words[-1].lower() in _DANGLING:  # "train a deep network on"
        words.pop()
    return " ".join(words)


_DANGLING = frozenset(["a", "an", "the", "of", "on", "in", "to", "for", "with", "by", "from", "and", "or",
                      "that", "which", "its", "their", "as", "at"])


def _read_from(kind: str, theirs: frozenset[str], side_text: str) -> str:
    """The words of the side's text a shared kind was read from (see `fit`)."""
    pats = {"transformers": [TRANSFORMER]}.get(kind, [KINDS[kind][1]] if kind in theirs else [])
    pats += {"images": [KINDS["fields"][1]], "tables": [KINDS[k][1] for k in sorted(TABLED)],
             "text": [WRITTEN]}.get(kind, [])
    found = next((m for m in (pat.search(side_text) for pat in pats) if m), None)
    return found.group(0) if found else ""
