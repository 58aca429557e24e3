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
    """Whole words, matched on the lower-cased sentence (cue_scores): case-insensitive
    matching is what made the patterns slow."""
    return re.compile(r"\b(?:" + "|".join(text.lower().split()) + r")\b")


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
# Every pattern starts at a word, so the word boundary is checked once, not per pattern
# (the patterns cost twice the time otherwise).
EVAL_PATTERNS = re.compile(r"\b(?:" + "|".join((
    r"^on\s",
    r"(?:evaluat\w+|tested|tests?|validat\w+|benchmarked|assessed)\s+(?:\w+\s+){0,3}"
    r"(?:on|by|against|with|in)\b",
    r"measured\s+(?:by|with|as|in)\b", r"in\s+terms\s+of\b", r"compared\s+(?:with|to|against)\b",
    r"(?:outperform\w*|beats?|matches|match)\b",
    r"(?:better|faster|worse|slower|cheaper|more\s+\w+|less\s+\w+|higher|lower|larger)\s+"
    r"(?:\w+\s+){0,3}than\b",
    r"retrospective\w*", r"held[- ]out\b",
    r"(?:on|across)\s+(?:the\s+)?(?:[\w-]+\s+){0,4}(?:benchmarks?|datasets?|tasks|problems|data)\b",
    r"(?:data|records)\s+(?:from|on)\b",
    r"(?:using|combining|from)\s+(?:[\w-]+\s+){0,3}(?:data|records|recordings|surveys?|photometry|"
    r"spectra|observations|samples?|measurements|images)\b",
    r"(?:pre)?trained\s+on\s+(?!and\b|that\b)[\w-]")) + ")")
# A paper that calls itself a review or perspective ("this review looks at ...", "The survey
# formalises ..."): it tests nothing, so none of its sentences is an evaluation.
SELF_REVIEW = re.compile(r"\bthis\s+(?:review|perspective|commentary|essay|editorial)\b|"
                         r"^(?:this|the)\s+survey\s+(?!data)\w+s\b")
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
# A sentence that reports a result ("reach ... comparable to", "outperforms") or describes
# the paper itself ("The summary describes ... and limitations users should keep in mind")
# states no gap even when a gap word turns up in it: a blind reader found both quoted as
# gaps (issue 49). A result with one gap word is no gap, one with a gap word and a contrast
# ("achieves high accuracy ... but ... remains") still is; a self-description never is.
GAP_RESULT = re.compile(r"\b(?:(?:authors|we|they|results?|experiments?)\s+(?:also\s+)?show|achieves?|"
                        r"outperform\w*|reach(?:es)?\s+(?:[\w,-]+\s+){0,8}comparable\s+to|"
                        r"(?:performs?|performing)\s+(?:\w+\s+){0,2}(?:competitively|comparably|well)|"
                        # "The algorithm explains a much larger share ..., suggesting that grading
                        # misses ...": a finding and what it implies (reading v9: quoted as a gap).
                        r"explains\s+(?:\w+\s+){0,3}(?:share|fraction|part)|suggesting\s+that)\b")
# "It lists applications and resources and outlines open challenges" (a survey of prompting)
# names no challenge: a blind reader (v11) found it quoted as a gap.
GAP_SELF = re.compile(r"^(?:it|(?:this|the)\s+(?:paper|summary|article|report|release|commentary|notes?|"
                      r"overview|work|survey|review))\s+(?:also\s+)?(?:describes|presents|summari[sz]es|"
                      r"introduces|covers|walks|recalls|outlines|documents|gives|lists)\b|"
                      # "The authors summarise the content, validation and known limitations for
                      # users": the paper's own contents, said of its authors (blind reading v7).
                      # also "The authors review evidence ... along with its limitations" (reading v9:
                      # quoted as a gap). Not "They present Brain-Score ... and show that models
                      # ... fail others": labelled a gap, and two readers disagreed on it.
                      r"^(?:the\s+authors|we)\s+(?:also\s+)?(?:describe|present|summari[sz]e|introduce|"
                      r"cover|outline|document|give|list|report|review|discuss|survey)\b")
GAP_RESULT_PENALTY, GAP_SELF_PENALTY = 1.0, 6.0


def cue_scores(sents: list[str]) -> list[dict[str, float]]:
    """Per sentence, how much its wording says it states each facet (0: nothing in it
    does); every sentence of a review or perspective is kept from being an evaluation."""
    lowered = [s.strip().lower() for s in sents]
    review = any(SELF_REVIEW.search(s) for s in lowered)
    out = []
    for s in lowered:
        result = RESULT_CUES.search(s) is not None  # once per sentence: purpose and mechanism
        found = {kind: CUE_WEIGHT * min(len(cues.findall(s)), 3) - 0.8 * (result and kind != "evaluation")
                 for kind, cues in CUES.items()}
        found["evaluation"] += EVAL_PATTERN_WEIGHT * min(len(EVAL_PATTERNS.findall(s)), 2)
        found["evaluation"] -= REVIEW_PENALTY * review
        found["gap"] = (GAP_STRONG_WEIGHT * min(len(GAP_STRONG.findall(s)), 2)
                        + GAP_WEAK_WEIGHT * min(len(GAP_WEAK.findall(s)), 2)
                        - GAP_RESULT_PENALTY * (GAP_RESULT.search(s) is not None)
                        - GAP_SELF_PENALTY * (GAP_SELF.search(s) is not None))
        out.append(found)
    return out
