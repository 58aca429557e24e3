"""Suggest a neighbourhood: researchers and papers from different fields who could meet on a
topic, ranked by a score whose parts are shown (closeness to the topic, distance between
fields, bridges), each with one sentence of reason. One module per concern: candidates
(who is near the topic), bridges (what links them), scoring (the parts and the order),
reasons (the sentence), online (OpenAlex and Semantic Scholar, when asked), engine (the whole).
fields.py (how far apart two fields are) is shared with reviewer choice."""
from .engine import DEFAULT_LIMIT, MAX_LIMIT, suggest
from .result import Suggested, Suggestions

__all__ = ["DEFAULT_LIMIT", "MAX_LIMIT", "Suggested", "Suggestions", "suggest"]
