"""The kinds of data a paper works on (text, images, networks, genomes ...), and whether a
method of one paper can run on what another paper's side has: the plausibility of a pairing.

Why: a 270M base model cannot tell that a benchmark of LLM agents says nothing about dark
matter, and the cosine of two sentences cannot either (both are "evaluation" and "models").
A blind reader rejected exactly those pairings (issue 49). What a method needs is data of
the kind it was made for; a pairing is plausible when the purpose's side works on that kind
too, or when the method is a general tool (parallel workflows, boosting, statistical
estimation) and the purpose's side has data at all, or an optimiser of models and the
purpose's side trains or fits models. Measured on pairings labelled by hand
(tests/fixtures/pairing_labels.json, tests/test_pairing.py), this separates plausible from
implausible pairings better than the sentence cosine the ranking used alone.

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
    "images": ("images", _words(r"images? imaging x-rays? radiograph\w* vision visual video\w* "
                                r"photographs? pixels? camera")),
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
        r"register\s+data registers census cohorts? parolees prisoners")),
    "agents": ("interacting agents", _words(
        r"agents? role-play\w* game\s+dynamics game\s+theory evolutionary\s+game actors players")),
    "compute": ("programs and computing systems", _words(
        r"compil\w* programs? programming GPUs accelerators hardware memory\s+cost "
        r"distributed\s+(?:training|systems?) servers? key-value\s+cache inference\s+time")),
    "neural": ("recordings of neurons and brains", _words(
        r"neurons? neural\s+responses recordings fMRI intracranial cortex cortical brain")),
    "sky": ("catalogues of stars and the sky", _words(
        r"stars? stellar parallax\w* proper\s+motions? astrometr\w* photometr\w* galax\w* "
        r"radial\s+velocit\w* sky telescopes?")),
    "theory": ("equations and theorems", _words(
        r"theorems? prove[sd]? proofs? conjectures? inequalities equations? lemma matroids? "
        r"varieties cohomology curvature geodesics (?<!neural\s)operators")),
}
# Methods that run on any data (a side with data of any kind but theory alone can use them).
ANY_DATA = _words(r"workflows? parallel\s+programming boosting regression Bayesian estimators? "
                  r"statistical\s+(?:model|test|learning)")
# Optimisers of models: they need a side that trains or fits a model, or solves an
# optimisation problem. Only optimisation algorithms count: an "optimizing compiler" or
# "optimized kernels" (TVM) make programs fast and fit no model (issue 49).
OPTIMISER = _words(r"optimi[sz]ers? SGD Adam gradient\s+descent stochastic\s+gradient "
                   r"stochastic\s+optimi[sz]ation optimi[sz]ation\s+(?:algorithms?|methods?|solvers?) "
                   r"solv\w+\s+(?:\w+\s+){0,3}optimi[sz]ation "
                   r"(?:methods?|solvers?|algorithms?)\s+for\s+(?:\w+\s+){0,2}optimi[sz]ation")
TRAINS = _words(r"train\w* fit fits fitted fitting optimi[sz]\w* learned learning "
                r"neural\s+networks? machine\s+learning")


@functools.lru_cache(maxsize=512)
def kinds_of(text: str) -> frozenset[str]:
    """The kinds of data a text says it works on (cached: a neighbourhood asks once per
    paper for every pairing it is in)."""
    return frozenset(k for k, (_, pat) in KINDS.items() if pat.search(text or ""))


def name(kind: str) -> str:
    return KINDS[kind][0]


@dataclass(frozen=True)
class Fit:
    """Whether a method can run on what the other side has, and why, in words."""
    plausible: bool
    shared: tuple[str, ...] = ()  # kinds both sides work on, in KINDS order
    generic: str = ""  # "any data" or "models to train", when the method is a general tool
    method_kinds: tuple[str, ...] = ()
    side_kinds: tuple[str, ...] = ()
    # Units both papers study (units.py), set only when no method bridge exists: the
    # proposal then asks whether one side's topic bears on the other's (write.py).
    units: tuple[str, ...] = ()
    # The side names no images but gridded fields, which the method (a vision model) reads as images.
    as_images: bool = False

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
        return " and ".join(names)


def fit(method_text: str, method_phrase: str, side_text: str) -> Fit:
    """Can the method (its paper's title and abstract, and the phrase that names it) run on
    the data of the side (its papers' text)? See the module's docstring for the rule."""
    mine, theirs = kinds_of(method_text), kinds_of(side_text)
    order = list(KINDS)
    # Gridded weather and climate fields are images to a vision model (ClimaX is a vision
    # transformer over them), so a method on images can run on a side with such fields.
    readable = theirs | ({"images"} if "images" in mine and "fields" in theirs else set())
    shared = tuple(k for k in order if k in mine & readable and k != "theory")
    has_data = bool(theirs - {"theory"})
    generic = ""
    if ANY_DATA.search(method_phrase) and has_data:
        generic = "any data"
    elif OPTIMISER.search(method_phrase) and TRAINS.search(side_text):
        generic = "models to train"
    ok = bool(shared) or bool(generic) or ("theory" in mine and "theory" in theirs)
    return Fit(ok, shared, generic, tuple(k for k in order if k in mine),
               tuple(k for k in order if k in theirs),
               as_images="images" in shared and "images" not in theirs)
