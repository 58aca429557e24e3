"""One sentence of reason per suggestion, built from its score parts and named bridges (no
model writes it, so it can only say what the numbers say)."""
from __future__ import annotations

from .bridges import Bridge
from .fields import FieldMap

FAR, NEAR = 0.75, 0.25


def _names(fmap: FieldMap, fields: list[str]) -> str:
    shown = [fmap.name(f) for f in fields]
    if len(shown) <= 2:
        return " and ".join(shown)
    return ", ".join(shown[:-1]) + " and " + shown[-1]


def _nearest(fmap: FieldMap, fields: list[str], reference: list[str]) -> list[str]:
    """The reference fields nearest to any of `fields`."""
    gaps = {r: min(fmap.distance(f, r) for f in fields) for r in reference}
    best = min(gaps.values())
    return [r for r in reference if gaps[r] == best]


def field_clause(fmap: FieldMap, fields: list[str], far_from: list[str], distance: float) -> str:
    where = f"works in {_names(fmap, fields)}" if fields else "has no field recorded"
    if not far_from:
        return f"{where} (the first field of the list)"
    # far from all of them; else name only the listed fields it is nearest to
    ref = _names(fmap, far_from if distance >= FAR or not fields else _nearest(fmap, fields, far_from))
    if distance >= FAR:
        return f"{where}, far from {ref} (distance {distance:.2f})"
    if distance > NEAR:
        return f"{where}, partly away from {ref} (distance {distance:.2f})"
    if distance > 0:
        return f"{where}, close to {ref} (distance {distance:.2f})"
    return f"{where}, no distance from {ref}"


def bridge_clause(bridges: list[Bridge]) -> str:
    if not bridges:
        return "no link to the other side in the store yet"
    b = bridges[0]
    who = f" {b.other_name}" if b.other_name else ""
    text = {"co-author": f"wrote “{b.paper_title}” with{who or ' the other side'}",
            "cites": f"cites “{b.paper_title}”" + (f" by{who}" if who else ""),
            "cited by": f"is cited by “{b.paper_title}”" + (f" of{who}" if who else ""),
            "both cite": f"cites “{b.paper_title}”, as{who or ' the other side'} does"}[b.kind]
    more = len(bridges) - 1
    return text + (f", and {more} more link{'s' if more != 1 else ''}" if more else "")


def researcher_reason(fmap: FieldMap, best_title: str, closeness: float, fields: list[str],
                      far_from: list[str], distance: float, bridges: list[Bridge]) -> str:
    return (f"“{best_title}” is {closeness:.2f} close to the topic; "
            f"{field_clause(fmap, fields, far_from, distance)}; {bridge_clause(bridges)}.")


def paper_reason(fmap: FieldMap, closeness: float, fields: list[str], far_from: list[str],
                 distance: float, touched: list[str], bridges: list[Bridge]) -> str:
    clause = field_clause(fmap, fields, far_from, distance).replace("works in", "filed under", 1)
    link = (f"links {_names(fmap, touched)}" if len(touched) > 1
            else "links no other field in the store")
    if bridges:
        link += f" ({bridge_clause(bridges[:1])})"
    return f"{closeness:.2f} close to the topic; {clause}; {link}."
