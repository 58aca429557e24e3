"""Novelty that names its sources (issue 17, part 3): per facet of an idea, the nearest
papers in the store and online, a verdict only a retrieved paper can support, and an
instruction model's explanation that cites retrieved papers only.

check.py (assess, verdicts, the threshold), nearest.py (store and online papers scored
alike), online.py (Semantic Scholar, OpenAlex, arXiv in order), breaker.py (skip a
failing source), explain.py (the cited explanation), stage.py (the run's stage).
"""
from .check import ALL_FAILED, CLOSE, NO_MATCH, THRESHOLD, assess, assess_async, is_close, verdict
from .online import OnlineLiterature
from .report import report

__all__ = ["ALL_FAILED", "CLOSE", "NO_MATCH", "THRESHOLD", "OnlineLiterature", "assess", "assess_async",
           "is_close", "report", "verdict"]
