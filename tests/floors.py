"""The floors of rt_core, lowest first, written once: the layering the README's "How it is
built" tree draws. A module may import its own floor or one below, never one above; an
import that climbs ties the lower code to the higher, so a reader of the floor below has to
know what is built on it. tests/test_architecture.py checks it; anyone can list the imports
that climb with

    .venv/bin/python -m tests.floors

Each name is a top-level module or a package of rt_core (a package stands for everything in
it). Within one floor the parts may import each other; the cycle test keeps them from
going round."""
from __future__ import annotations

from collections.abc import Iterable


def _pipeline(names: str) -> list[str]:
    return [f"rt_core.run.pipeline.{n}" for n in names.split()]


FLOORS: list[tuple[str, list[str]]] = [
    ("records and rules", ["rt_core", "rt_core.redact", "rt_core.errors", "rt_core.config",
                           "rt_core.record", "rt_core.stops", "rt_core.fiveq", "rt_core.text",
                           "rt_core.settings", "rt_core.types", "rt_core.attribution",
                           "rt_core.graph", "rt_core.access", "rt_core.deployment",
                           "rt_core.operator_session", "rt_core.agents"]),
    ("models and their keys", ["rt_core.models"]),
    ("sources", ["rt_core.sources"]),
    ("store", ["rt_core.store", "rt_core.access_store"]),
    ("services on the store", ["rt_core.allowance", "rt_core.topic_search", "rt_core.suggest",
                               "rt_core.ideas"]),
    # A run, by concept (run/), from what every stage writes with up to what is built on
    # whole runs. pipeline/ holds the machinery and also what assembles a run, so its
    # modules are placed one by one; so are the two modules of a folder that sit higher
    # than their folder (provenance is a stage, more rounds assemble a run).
    ("run: prompts and styles", ["rt_core.run", "rt_core.run.prompts", "rt_core.run.styles"]),
    ("run: reading and measuring", ["rt_core.run.people", "rt_core.run.evidence", "rt_core.run.novelty"]),
    ("run: machinery", ["rt_core.run.pipeline", *_pipeline("agents costs recorder runner state validation warmup")]),
    ("run: stages", ["rt_core.run.candidates", "rt_core.run.revision", "rt_core.run.evidence.provenance",
                     *_pipeline("steps novelty")]),
    ("run: assembly", [*_pipeline("plan budget timing simulation jobs progress"), "rt_core.run.revision.more"]),
    ("run: built on runs", ["rt_core.run.steer", "rt_core.run.replay", "rt_core.run.credit"]),
    ("what is built on runs", ["rt_core.study", "rt_core.community", "rt_core.ideamap"]),
    ("exports", ["rt_core.export"]),
    ("the command line", ["rt_core.cli", "rt_core.__main__"]),
]


def floor_of(module: str) -> int | None:
    """The floor of a module: that of the longest listed name it is or lies under (the
    package rt_core stands only for its own __init__)."""
    best: tuple[int, int] | None = None
    for level, (_, names) in enumerate(FLOORS):
        for name in names:
            under = module.startswith(name + ".") and name != "rt_core"
            if (module == name or under) and (best is None or len(name) > best[0]):
                best = (len(name), level)
    return None if best is None else best[1]


def unplaced(modules: Iterable[str]) -> list[str]:
    """Modules no floor names: a new top-level module or package has to be given one."""
    return sorted(m for m in modules if floor_of(m) is None)


def climbs(edges: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The imports (importer, imported) that go to a higher floor. The import graph also
    draws an arrow to each package a module lies in (importing a.b.c runs a and a.b); such
    an arrow is left out when the same importer's arrow to the module itself is counted."""
    edges = set(edges)
    out = []
    for src, dst in edges:
        if any(s == src and d.startswith(dst + ".") for s, d in edges):
            continue
        low, high = floor_of(src), floor_of(dst)
        if low is not None and high is not None and high > low:
            out.append((src, dst))
    return sorted(out)


def describe(edge: tuple[str, str]) -> str:
    src, dst = edge
    return f"{src} ({FLOORS[floor_of(src)][0]}) -> {dst} ({FLOORS[floor_of(dst)][0]})"


def main() -> int:
    from tests.test_architecture import _import_graph  # here: the test imports this module

    g = _import_graph()
    found = climbs(g.edges)
    for edge in found:
        print(describe(edge))
    missing = unplaced(g.nodes)
    for module in missing:
        print(f"{module}: on no floor (add it to tests/floors.py)")
    print(f"{len(found)} imports climb a floor")
    return 1 if found or missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
