"""A novelty check as plain text: what the CLI prints and the run's Markdown export carries."""
from __future__ import annotations

from ...types import Novelty
from .explain import FACET_NAMES


def report(novelty: Novelty) -> str:
    """Per facet the verdict, the nearest papers (similarity, title, year, source, link)
    and the explanation; then where it searched and the notes."""
    lines = []
    for f in novelty.facets:
        name = FACET_NAMES.get(f.facet, f.facet).capitalize()
        lines.append(f"{name} ({f.facet.upper()}): {f.verdict}")
        for i, p in enumerate(f.nearest, 1):
            year = f" ({p.year})" if p.year else ""
            lines.append(f"  {i}. {p.similarity:.2f}  {p.title}{year}  [{p.source}]  {p.url}".rstrip())
        if f.explanation:
            lines.append(f"  Explanation: {f.explanation}")
        lines.append("")
    lines.append(f"Searched: {', '.join(novelty.sources)}; close from similarity "
                 f"{novelty.threshold:.2f}")
    lines += [f"note: {n}" for n in novelty.notes]
    return "\n".join(lines)
