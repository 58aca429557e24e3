"""Reviews that state only what is true of the proposal: a rubric that can be computed,
said in the reviewer's words, with the score derived from it and shown as such.

Why: a 270M base model cannot judge. Its review lines read as judgements ("a powerful
research tool", "the first work that") and a blind reader found 43 of 96 of them false or
impossible for an unexecuted proposal (issue 49). Each check here is a fact about the
proposal's text and the sentences it was written from, so every sentence a review says is
one check's outcome, and the meta-review counts reviewers per check: "(2 of 3 reviewers)"
counts reviewers whose check came out the same way.

The checks (`KEYS`): each chosen field's facet is used; Q5 runs the method on data the
other side uses; the nearest paper the reviewer knows (their own papers, and the novelty
check's nearest titles when it ran) is not close to Q1; the method works on a kind of data
the other side has (kinds.py; given by the pairing, so a proposal without one has no such
check), or, when it has none, the two papers study the same units (units.py; the "unit" check
names them, so a review says which bridge the proposal uses); Q5 names a measure; Q4 quotes a
gap the papers state; Q3 says what makes the carry-over hard. Nothing claims a result, a
test, a first or a fact about the world.
"""
from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...text import clip
from ...types import Ground, Paper, Proposal
from .bridges import RUNS, own_of, runs_on, side_does
from .grammar import possessive
from .kinds import Fit, joined
from .kinds import name as kind_name
from .plan import MEASURE_IS
from .units import said as units_said
from .write import MEASURES

KEYS = ("fields", "data", "kind", "unit", "prior", "measure", "gap", "hard", "match")
# A reviewer's paper this close to Q1 (MiniLM cosine, title and first sentence) is close:
# two real papers on one idea score about 0.8 (DESIGN.md, section 4).
CLOSE = 0.75
# What a check says, when it holds and when it does not: two wordings each, a reviewer
# taking one by a stable hash of their id, so reviewers say the same fact in their own way.
SAY = {
    ("fields", True): ("It builds on what the papers of every chosen field state ({names}).",
                       "Each chosen field contributes a stated facet ({names})."),
    ("fields", False): ("It uses nothing that the {missing} papers state.",
                        "No facet of the {missing} papers appears in it."),
    # "What" Q5 works on, not "data": on some bridges it is the side's model, computation or
    # paper ("the model the Criminology paper fits" is no data).
    ("data", True): ("Q5 works on what the {side} side already works with ({data}).",
                     "What Q5 works on ({data}) is the {side} papers' own."),
    ("data", False): ("Q5 names nothing from the {side} side for the method to work on.",
                      "Nothing in Q5 is what the {side} papers work with."),
    # Each says what it is read from (the method paper's abstract, or the words naming the
    # method) and claims of the problem's paper only the kinds its text names (issue 49).
    ("kind", True): ("{Reads}; the {side} paper of the problem {has}.",
                     "The {side} paper of the problem {has}, and {reads}."),
    ("kind", False): ("{Reads}; the {side} paper of the problem {has}.",
                      "The {side} paper of the problem {has}, while {reads}."),
    ("unit", True): ("It carries no method across: it asks whether what the {mine_field} paper studies "
                     "bears on what the {side} paper of the problem studies, on units both study ({units}).",
                     "Both papers study {units}, so the question links the two fields' measures on the "
                     "same {units} instead of carrying a method across."),
    ("unit", False): ("The two papers study no units in common, so no measure of one can be set "
                      "beside the other's.",
                      "Nothing the two papers study is the same unit, so their measures cannot be matched."),
    # Said as the figure against the stated threshold, not as "not close": a blind reader
    # found "not close" false of a paper on Q1's own topic at cosine 0.41 (reading v8).
    ("prior", True): ("Of my own papers, the nearest to Q1 by title and opening sentence, "
                      "“{title}”, has cosine {sim:.2f}, below the " f"{CLOSE:.2f}" " that two papers on one "
                      "idea reach.",
                      "The nearest of my own papers to Q1 by title and opening sentence, “{title}”, has "
                      "cosine {sim:.2f}; two papers on one idea score about " f"{CLOSE:.2f}" " or more."),
    ("prior", False): ("Q1 is close to “{title}” (cosine {sim:.2f}); the idea may have been "
                       "tried there.",
                       "“{title}” is close to Q1 (cosine {sim:.2f}), so the question may not be new."),
    ("measure", True): ("Q5 names a measure ({measure}).",
                        "There is a measure to judge the outcome by: {measure}."),
    ("measure", False): ("Q5 names no measure to judge the outcome by.",
                         "Q5 does not say what would be measured."),
    ("gap", True): ("Q4 quotes a gap that a chosen paper states.",
                    "The gap in Q4 is one the papers themselves state."),
    ("gap", False): ("Q4 names no gap that the papers state.",
                     "No gap stated by the papers is quoted in Q4."),
    # Not "it was made for something else": a literature reader carried to a field's paper
    # was made for exactly that (blind reading v10); what differs is the setting.
    ("hard", True): ("Q3 says what the method was made for and where it is carried, which is "
                     "why the carry-over is hard.",
                     "Q3 explains why carrying the method across is hard: the setting it was "
                     "made for differs from this one."),
    ("hard", False): ("Q3 does not say what stands in the way of carrying the method across.",
                      "Why the carry-over is hard is left unsaid in Q3."),
    ("match", True): ("Q3 says why linking the two is hard: the two fields' measures have to be matched on "
                      "the same units, and something else may drive both.",
                      "Q3 names what stands in the way: measures from two fields to match on the same "
                      "units, and a possible common cause."),
    ("match", False): ("Q3 does not say what stands in the way of linking the two fields' measures.",
                       "Why linking the two measures is hard is left unsaid in Q3."),
}
# What the meta-review says of a check, counted over reviewers.
SUMMARY = {
    ("fields", True): "Every chosen field's facet is used",
    ("fields", False): "A chosen field's facets are not used",
    ("data", True): "Q5 works on what the other side has",
    ("data", False): "Q5 names nothing of the other side to work on",
    ("kind", True): "The method can work on what the problem's paper has",
    ("kind", False): "The method works on nothing the problem's paper states",
    ("unit", True): "The two papers study the same units, and the question links them (no method is carried across)",
    ("unit", False): "The two papers study no units in common",
    ("prior", True): f"No paper the reviewers compared reaches cosine {CLOSE:.2f} with Q1",
    ("prior", False): "Q1 is close to a paper a reviewer compared it with",
    ("measure", True): "Q5 names a measure",
    ("measure", False): "Q5 names no measure",
    ("gap", True): "Q4 quotes a gap the papers state",
    ("gap", False): "Q4 names no stated gap",
    ("hard", True): "Q3 says why the carry-over is hard",
    ("hard", False): "Q3 does not say why the carry-over is hard",
    ("match", True): "Q3 says why linking the two fields' measures is hard",
    ("match", False): "Q3 does not say why linking the two fields' measures is hard",
}
VOICE = ("From {field_s} side: ", "Reading it as someone in {field}: ", "In {field}: ")


@dataclass(frozen=True)
class Check:
    key: str
    holds: bool
    said: str  # the reviewer's sentence about it


@dataclass(frozen=True)
class Rubric:
    reviewer_id: str
    checks: tuple[Check, ...]

    @property
    def held(self) -> int:
        return sum(c.holds for c in self.checks)

    @property
    def score(self) -> int:
        """1 when no check holds, 9 when all do: a rubric shows what is there, and a
        proposal no one has carried out earns no 10."""
        return round(1 + 8 * self.held / len(self.checks)) if self.checks else 1

    @property
    def basis(self) -> str:
        return (f"Score {self.score} from the rubric: {self.held} of {len(self.checks)} checks "
                f"hold (1 + 8 × checks held / checks, rounded).")


def _grounds(p: Proposal, key: str) -> list[Ground]:
    return list(p.grounds.get(key) or [])


def sides(p: Proposal) -> tuple[str, str]:
    """(the mechanism's field, the purpose's field) of a proposal written from a pairing."""
    mech, purp = _q1_sides(p)
    return (mech.field if mech else ""), (purp.field if purp else "")


def paired(p: Proposal) -> tuple[Ground, Ground] | None:
    """The grounds of the two papers a proposal written from a pairing joins (the lending
    paper's, the problem paper's), or None for a proposal written otherwise: what a candidate
    card names as its origin, since a facets candidate is a pairing, not its lead's authors."""
    mech, purp = _q1_sides(p)
    return (mech, purp) if mech is not None and purp is not None else None


def _q1_sides(p: Proposal) -> tuple[Ground | None, Ground | None]:
    """Q1's grounds of the lending side and of the problem: the mechanism, or for a
    shared-unit question (no mechanism) the other field's purpose; the first purpose is
    the problem's (write.py puts it first)."""
    q1 = _grounds(p, "q1")
    purp = next((g for g in q1 if g.facet == "purpose"), None)
    mech = next((g for g in q1 if g.facet == "mechanism"), None)
    if mech is None and purp is not None:
        mech = next((g for g in q1 if g.facet == "purpose" and g.field != purp.field), None)
    return mech, purp


def nearest(q1: str, papers: list[Paper], titles: list[str], embedder) -> tuple[str, float] | None:
    """The paper (or title) closest to Q1 by the embedder, with its cosine; None without any."""
    texts = [f"{p.title}. {(p.abstract or '').split('. ')[0]}" for p in papers] + list(titles)
    names = [p.title for p in papers] + list(titles)
    if embedder is None or not texts or not q1:
        return None
    vecs = np.asarray(embedder.encode([q1, *texts]))
    sims = vecs[1:] @ vecs[0]
    i = int(np.argmax(sims))
    return names[i], float(sims[i])


def fit_of(p: Proposal, plans) -> Fit | None:
    """The fit of the pairing a proposal was written from (its Q1's method and problem
    papers), from the neighbourhood's ranked `plans`; None when it is not among them."""
    m, u = _q1_sides(p)
    mech, purp = (m.paper_id if m else ""), (u.paper_id if u else "")
    same = next((r for r in getattr(plans, "ranked", ()) if (r.mechanism.paper_id, r.purpose.paper_id)
                 == (mech, purp)), None)
    return same.fit if same is not None else None


_FROM_ABSTRACT = "the method paper's abstract says the method works on "
_FROM_NAME = "the words that name the method mark it as "


def _quoted(words: str, lead: str = "") -> str:
    """The words a check rests on, in brackets after it, or nothing when none were kept."""
    return f" ({lead}“{words}”)" if words else ""


def _kind_words(fit: Fit) -> tuple[str, str]:
    """What the kind check says of the method (and what that is read from) and of the
    problem's paper: never more than the kinds each text names."""
    mine = joined(kind_name(k) for k in fit.method_kinds[:2])
    if fit.shared:
        said = joined(kind_name(k) for k in fit.shared[:2])
        if fit.as_images:
            return _FROM_ABSTRACT + "images", "names " + fit.bridge()
        return _FROM_ABSTRACT + said, f"names {said} too"
    if fit.generic == "deep networks":  # both in each abstract's own words (kinds.Fit.said)
        return (f"the method paper's abstract says it is made for “{fit.said[0]}”, to train or run "
                f"neural networks faster or cheaper",
                f"{side_does(fit)} (its abstract names “{fit.said[1]}”)")
    if fit.generic == "papers":
        return (f"the method paper's abstract says it works on “{fit.said[0]}”",
                "is itself such a paper, which the method can read")
    if fit.generic == "any data":
        theirs = joined(kind_name(k) for k in fit.side_kinds if k != "theory")
        # Not "for data of any kind": a blind reader found that false of a tabular learner (XGBoost).
        return _FROM_NAME + "a general-purpose method", f"names data ({theirs})"
    if fit.generic in RUNS:  # the method's name, and the problem's paper in its abstract's words
        return (_FROM_NAME + RUNS[fit.generic].method_is + _quoted(fit.said[0]),
                side_does(fit) + _quoted(fit.said[1], "its abstract names "))
    if mine:
        return _FROM_ABSTRACT + mine, "names nothing of that kind"
    return "the method paper's abstract names no kind of data the method works on", "shares no kind of data with it"


def check(p: Proposal, reviewer_id: str, field: str, hood_fields: list[str],
          name: Callable[[str], str], near: tuple[str, float] | None, fit: Fit | None = None) -> Rubric:
    """The reviewer's rubric of a proposal written from facets (it has `grounds`); `fit`:
    whether its method can run on the other side's data (the "kind" check, when known)."""
    h = zlib.crc32(reviewer_id.encode("utf-8"))
    mech_field, purp_field = sides(p)
    used = {g.field for gs in p.grounds.values() for g in gs}
    missing = [f for f in hood_fields if f not in used]
    q5 = p.q5 or ""
    data = next((g for g in _grounds(p, "q5") if g.facet == "evaluation"
                 and g.field != mech_field), None)
    measure = measure_in(q5)
    gaps = [g for g in _grounds(p, "q4") if g.facet == "gap" and g.sentence.strip() in (p.q4 or "")]
    q3_fields = {g.field for g in _grounds(p, "q3")}
    hard = "because" in (p.q3 or "") and (len(q3_fields) >= 2 or name(purp_field) in (p.q3 or ""))
    found = [("fields", not missing, {"names": ", ".join(name(f) for f in hood_fields),
                                      "missing": " and ".join(name(f) for f in missing)}),
             ("data", data is not None, {"side": name(purp_field),
                                         "data": _phrase_in(q5, data) if data else ""})]
    # A bridge of the method's purpose runs on the side's own paper or network (bridges.py).
    if runs_on(fit):
        found[1] = ("data", True, {"side": name(purp_field), "data": own_of(fit, name(purp_field))})
    if fit is not None and fit.bridge_used == "unit":
        found.append(("unit", True, {"side": name(purp_field), "mine_field": name(mech_field),
                                     "units": units_said(fit.units)}))
    elif fit is not None:
        reads, has = _kind_words(fit)
        found.append(("kind", fit.plausible, {"side": name(purp_field), "reads": reads,
                                              "Reads": reads[0].upper() + reads[1:], "has": has}))
    if near is not None:
        found.append(("prior", near[1] < CLOSE, {"title": near[0], "sim": near[1]}))
    found += [("measure", bool(measure), {"measure": measure}),
              ("gap", bool(gaps), {}),
              # A shared-unit question carries no method, so Q3's difficulty is the matching.
              ("match" if fit is not None and fit.bridge_used == "unit" else "hard", hard, {})]
    checks = []
    for i, (key, holds, values) in enumerate(found):
        said = SAY[(key, holds)][(h + i) % 2].format(**values)
        checks.append(Check(key, holds, said))
    return Rubric(reviewer_id, tuple(checks))


def measure_in(q5: str) -> str:
    """The measure Q5 names, "" for none: what follows "The measure is" (write.py says a
    measure so when the papers' sentences name none and it is taken from what the problem's
    paper studies), else a measure word outside the baseline's sentence."""
    judged = _judged_by(q5)
    named = re.search(re.escape(MEASURE_IS) + r"\s+(.+?)(?:[.;](?:\s|$)|$)", judged)
    if named:
        # Without the papers' titles in brackets: a review quotes the measure, and a title
        # cut at 90 characters left "(... A ..." open mid-sentence (issue 49's dev reading).
        return clip(re.sub(r"\s*\([^()]*\)", "", named.group(1)), 90)
    word = MEASURES.search(judged)
    return word.group(1).lower() if word else ""


def _judged_by(q5: str) -> str:
    """Q5 without the sentences about its baseline: a baseline names what the outcome is
    compared with ("The baseline is likelihood framework"), not what it is measured by, and a
    measure word inside it once made every reviewer say Q5 named a measure it did not."""
    sentences = re.split(r"(?<=[.;])\s+", q5)
    return " ".join(s for s in sentences if "baseline" not in s.lower())


def _phrase_in(q5: str, g: Ground) -> str:
    """The data as Q5 words it: the part of Q5 after "to", up to "from"."""
    m = re.search(r"\b(?:to|take)\s", q5)
    after = q5[m.end():] if m else g.sentence
    return after.split(" from ", 1)[0].strip()[:120]


def sections(r: Rubric, field_name: str) -> tuple[str, str]:
    """Strengths and weaknesses as bullets in the reviewer's voice (the checks that hold,
    and those that do not); a section with nothing to say says so."""
    h = zlib.crc32(r.reviewer_id.encode("utf-8"))
    voice = VOICE[h % len(VOICE)].format(field=field_name, field_s=possessive(field_name)) if field_name else ""

    def bullets(items: list[Check], empty: str) -> str:
        if not items:
            return f"- {empty}"
        first, *rest = items
        said = first.said
        if voice and not re.match(r"Q[1-5]\b|“", said):  # "Q5" and a quoted title keep capitals
            said = said[0].lower() + said[1:]
        lines = [f"- {voice}{said}"]
        return "\n".join(lines + [f"- {c.said}" for c in rest])

    good = bullets([c for c in r.checks if c.holds], "None of the rubric's checks holds.")
    bad = bullets([c for c in r.checks if not c.holds], "Every check of the rubric holds.")
    return good, bad


def agreement(rubrics: dict[str, dict[str, bool]]) -> tuple[str, str]:
    """The meta-review: per check, how many reviewers found it holds (strengths) or not
    (weaknesses), most widely shared first; each line counts reviewers, not sentences."""
    n = len(rubrics)
    counts: dict[tuple[str, bool], int] = {}
    for found in rubrics.values():
        for key, holds in found.items():
            counts[(key, holds)] = counts.get((key, holds), 0) + 1
    order = {k: i for i, k in enumerate(KEYS)}

    def lines(holds: bool) -> str:
        items = sorted(((k, c) for (k, h), c in counts.items() if h == holds),
                       key=lambda kc: (-kc[1], order.get(kc[0], 99)))
        return "\n".join(f"- {SUMMARY[(k, holds)]} ({c} of {n} reviewers)." for k, c in items)

    return lines(True), lines(False)
