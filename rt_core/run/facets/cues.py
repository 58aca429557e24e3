"""Cue words: how much a sentence's wording says it states each facet (run/facets/extract.py
adds the sentence's position and picks the best sentence per facet).

Why evaluation and gap have their own rules: a lone word is weak evidence for them. "data"
turns up in a method ("a budget such as iterations, data or features") and "not" in a result
("but not in earnings"), while the sentences that do state an evaluation say so in patterns
("on the X benchmarks", "compared with", "faster than classical solvers", "validate it by
simulation") and gaps in a few strong words ("difficult because", "miss", "cannot", "open
challenges"). Patterns count more than words, weak words less; a paper that is a review or
perspective talking about itself ("The survey formalises ...") evaluates nothing. Measured
on the labelled abstracts (tests/fixtures/facet_labels.json; README, "Ideas from facets").
"""
from __future__ import annotations

import re


def _cues(text: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(text.split()) + r")\b", re.IGNORECASE)


CUES = {
    "purpose": _cues(r"whether how why what aim aims goal question questions problem problems "
                     r"challenge to\s+assess to\s+understand to\s+study to\s+test to\s+predict "
                     r"test address addresses need needs important matter matters"),
    "mechanism": _cues(r"propose[sd]? introduc(?:e|es|ed) present[s]? develop[s]? trains? "
                       r"fits? represents? encodes? architecture model network algorithm method "
                       r"framework approach using uses use based\s+on keeps learns? kernel "
                       r"platform pipeline layers? decoder encoder"),
    "evaluation": _cues(r"data datasets? benchmarks? records survey observations catalogues? "
                        r"catalogs? corpus samples? measurements? recordings x-rays images "
                        r"experiments? trials? annotators database incubations photometry "
                        r"accuracy error scores? F1 precision recall rate cost bound regret "
                        r"perplexity outperforms? beats? compared evaluat\w* measur\w* metrics? "
                        r"valid predicted tested replications"),
}
# Results are no purpose and no method: "we show", "achieves" lean a sentence to evaluation.
RESULT_CUES = _cues(r"shows? showed achieves? reaches outperforms? beats? better higher "
                    r"produces suggesting helps")
CUE_WEIGHT = 1.0

# An evaluation stated as a pattern: where it was tested, against what, by what measure.
EVAL_PATTERNS = re.compile(
    r"^on\s|\b(?:evaluat\w+|tested|tests?|validat\w+|benchmarked|assessed)\s+(?:\w+\s+){0,3}"
    r"(?:on|by|against|with|in)\b|\bmeasured\s+(?:by|with|as|in)\b|\bin\s+terms\s+of\b|"
    r"\bcompared\s+(?:with|to|against)\b|\b(?:outperform\w*|beats?|matches|match)\b|"
    r"\b(?:better|faster|worse|slower|cheaper|more\s+\w+|less\s+\w+|higher|lower|larger)\s+"
    r"(?:\w+\s+){0,3}than\b|\bretrospective\w*|\bheld[- ]out\b|\b(?:on|across)\s+(?:the\s+)?"
    r"(?:[\w-]+\s+){0,4}(?:benchmarks?|datasets?|tasks|problems|data)\b|\b(?:data|records)\s+"
    r"(?:from|on)\b|\b(?:using|combining|from)\s+(?:[\w-]+\s+){0,3}(?:data|records|recordings|"
    r"surveys?|photometry|spectra|observations|samples?|measurements|images)\b|"
    r"\b(?:pre)?trained\s+on\s+(?!and\b|that\b)[\w-]",
    re.IGNORECASE)
# A paper that calls itself a review or perspective ("this review looks at ...", "The survey
# formalises ..."): it tests nothing, so none of its sentences is an evaluation.
SELF_REVIEW = re.compile(r"\bthis\s+(?:review|perspective|commentary|essay|editorial)\b|"
                         r"^(?:this|the)\s+survey\s+(?!data)\w+s\b", re.IGNORECASE)
EVAL_PATTERN_WEIGHT = 1.5
REVIEW_PENALTY = 6.0  # more than any sentence scores: a review names no evaluation

GAP_STRONG = _cues(r"however remains? lacks? lacking limited limitations? limits cannot miss "
                   r"misses unexplained unaccounted poorly difficult (?:is|are|remains?)\s+hard "
                   r"hard\s+to fails? struggles? (?<!band\s)gap open\s+(?:challenges|problems|questions) "
                   r"unknown unclear expensive "
                   r"costly violate\w* neglect\w* ignor\w* little\s+is\s+known "
                   r"not\s+the\s+same diverge\w* only\s+a\s+few warn\w*")
GAP_WEAK = _cues(r"but yet still not no open")
GAP_STRONG_WEIGHT, GAP_WEAK_WEIGHT = 2.0, 0.5


def cue_score(kind: str, sentence: str) -> float:
    """How much `sentence`'s wording says it states `kind` (0: nothing in it does)."""
    if kind == "gap":
        strong = len(GAP_STRONG.findall(sentence))
        weak = len(GAP_WEAK.findall(sentence))
        return GAP_STRONG_WEIGHT * min(strong, 2) + GAP_WEAK_WEIGHT * min(weak, 2)
    score = CUE_WEIGHT * min(len(CUES[kind].findall(sentence)), 3)
    if kind in ("purpose", "mechanism") and RESULT_CUES.search(sentence):
        score -= 0.8
    if kind == "evaluation":
        score += EVAL_PATTERN_WEIGHT * min(len(EVAL_PATTERNS.findall(sentence)), 2)
    return score


def is_review(sents: list[str]) -> bool:
    """Whether the abstract says it is a review or perspective (see SELF_REVIEW)."""
    return any(SELF_REVIEW.search(s.strip()) for s in sents)
