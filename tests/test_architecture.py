"""The shape of the code, checked: rt_core has no import cycle, never touches Streamlit,
uses only public names across modules, and imports litellm only when a model is called."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import networkx as nx

from tests import floors

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "rt_core"


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(path: Path, top_level_only: bool, root: Path = ROOT) -> list[tuple[str, list[str]]]:
    """(imported module, names) for each import in a file: those inside functions and
    under `if TYPE_CHECKING:` too, unless asked for top-level ones only. A type-only or a
    lazy import does not fail at load time, but it still ties the two modules into one:
    a reader of either has to hold the other in their head."""
    tree = ast.parse(path.read_text("utf-8"))
    module, is_pkg = _module_name(path, root), path.name == "__init__.py"
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    out = []
    for node in nodes:
        if isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node, is_pkg)
            names = [a.name for a in node.names]
            # "from . import x" imports the submodule x
            subs = [f"{target}.{n}" for n in names if (root / (target + "." + n).replace(".", "/")
                                                      ).with_suffix(".py").exists()]
            out += [(s, []) for s in subs] or [(target, names)]
    return out


def _core_files() -> list[Path]:
    return sorted(p for p in CORE.rglob("*.py"))


def _app_files() -> list[Path]:
    """The app's own code: the pages and the studio package, on top of rt_core."""
    return sorted([*(ROOT / "studio").rglob("*.py"), *(ROOT / "pages").glob("*.py"), ROOT / "app.py"])


def _import_graph(files: list[Path] | None = None, root: Path = ROOT) -> nx.DiGraph:
    """Module -> module it imports, counting imports inside functions and type-only ones."""
    files = _core_files() if files is None else files
    g = nx.DiGraph()
    known = {_module_name(p, root) for p in files}
    for path in files:
        src = _module_name(path, root)
        g.add_node(src)
        for target, _ in _imports(path, top_level_only=False, root=root):
            # importing a.b.c also runs a and a.b; edges to every known prefix
            parts = target.split(".")
            for i in range(1, len(parts) + 1):
                dst = ".".join(parts[:i])
                if dst in known and dst != src and not src.startswith(dst + "."):
                    g.add_edge(src, dst)
    return g


def _cycles(g: nx.DiGraph) -> list[list[str]]:
    return sorted(nx.simple_cycles(g), key=len)


def test_rt_core_has_no_import_cycle_counting_type_only_and_function_level_imports():
    cycles = _cycles(_import_graph())
    assert cycles == [], f"import cycles: {cycles[:5]}"


def test_the_app_has_no_import_cycle_counting_type_only_and_function_level_imports():
    """The pages and studio/ on top of rt_core: no circle either, by the same count."""
    cycles = _cycles(_import_graph([*_core_files(), *_app_files()]))
    assert cycles == [], f"import cycles: {cycles[:5]}"


def test_the_cycle_check_sees_type_only_and_function_level_imports(tmp_path):
    """The check itself: a circle tied by one type-only and one lazy import is found."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n")
    (pkg / "b.py").write_text("def f():\n    from . import a\n    return a\n")
    cycles = _cycles(_import_graph(sorted(pkg.glob("*.py")), root=tmp_path))
    assert [sorted(c) for c in cycles] == [["pkg.a", "pkg.b"]]


def test_no_module_imports_one_on_a_higher_floor():
    """No circle is not enough: an import may still run back up the layering (tests/floors.py,
    the README's tree in order), and then the lower code cannot be read, tested or moved
    without what is built on it. `python -m tests.floors` lists them."""
    g = _import_graph()
    assert floors.unplaced(g.nodes) == []
    found = [floors.describe(e) for e in floors.climbs(g.edges)]
    assert found == [], f"{len(found)} imports climb a floor:\n" + "\n".join(found)


def test_the_floor_check_sees_a_climb_and_not_a_package_twice():
    """The check itself: a model module importing the store climbs; the arrow the graph adds
    to the store package beside it is not counted again; an import down is fine."""
    edges = [("rt_core.models.x", "rt_core.store.claims"), ("rt_core.models.x", "rt_core.store"),
             ("rt_core.run.y", "rt_core.models.x"), ("rt_core.types", "rt_core.settings.schema")]
    assert floors.climbs(edges) == [("rt_core.models.x", "rt_core.store.claims")]
    assert floors.unplaced(["rt_core.nowhere", "rt_core.run.y", "rt_core"]) == ["rt_core.nowhere"]


MAX_LINES = 400
# rt_core/types.py is being split by the settings schema's own change (the run's options
# declared once); named here so that no other long module joins it.
KNOWN_LONG = {"rt_core/types.py"}


def test_no_module_is_over_400_lines():
    """One concern per module: a file past the limit is split by concept, not by count."""
    files = [*_core_files(), *(ROOT / "studio").rglob("*.py"), *(ROOT / "pages").glob("*.py")]
    long = {str(p.relative_to(ROOT)): n for p in files
            if (n := len(p.read_text("utf-8").splitlines())) > MAX_LINES}
    assert {k: n for k, n in long.items() if k not in KNOWN_LONG} == {}


def _is_domain(module: str) -> bool:
    return any(module == d or module.startswith(d + ".") for d in ("rt_core.run", "rt_core.study"))


def test_the_store_imports_no_domain_code():
    """store/ keeps records; what they mean (run/, study/) sits above it, never below. The
    records it keeps for studies, their live queue and the organiser token live with it."""
    g = _import_graph()
    arrows = sorted((src, dst) for src, dst in g.edges if src.startswith("rt_core.store.") and _is_domain(dst))
    assert arrows == []


def test_rt_core_never_imports_streamlit():
    offenders = [str(p.relative_to(ROOT)) for p in _core_files()
                 if any(t.split(".")[0] == "streamlit" for t, _ in _imports(p, top_level_only=False))]
    assert offenders == []


# The one private module of another package we lean on, and the only files allowed to:
# llama-cpp-python keeps its context and sampler-chain wrappers in `_internals` (its own
# Llama class builds them there), and the batch decoder needs a context with several
# sequences that the Llama class does not offer. The version is pinned in requirements.txt.
BORROWED_PRIVATE = {("local.py", "llama_cpp._internals"), ("local_batch.py", "llama_cpp._internals")}


def test_no_module_imports_another_modules_private_names():
    offenders = []
    for path in [*_core_files(), *(ROOT / "studio").rglob("*.py"), *(ROOT / "pages").glob("*.py")]:
        for target, names in _imports(path, top_level_only=False):
            offenders += [f"{path.name}: {target}.{n}" for n in names
                          if n.startswith("_") and not n.startswith("__")
                          and (path.name, f"{target}.{n}") not in BORROWED_PRIVATE]
    assert offenders == []


def test_importing_the_core_does_not_import_litellm_nor_scipy():
    """litellm takes seconds to import; the app and the CLI load it only to call a model.
    choix imports scipy.stats (1.5 s of every CLI command's start, measured): only a
    tournament's fit loads it."""
    code = ("import sys, rt_core, rt_core.run.pipeline.simulation, rt_core.store, rt_core.__main__, "
            "rt_core.models.scripted; print([m for m in ('litellm', 'choix', 'scipy') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         check=True)
    assert out.stdout.strip() == "[]"


# Where a prompt style may be named: the registry declares the styles and what each can do,
# and run/styles/style.py maps each to its stage functions. Everywhere else asks those.
_STYLE_NAMES = {"chat", "stem"}
_STYLE_HOMES = {ROOT / "rt_core" / "models" / "registry.py", ROOT / "rt_core" / "run" / "styles" / "style.py"}


_STYLE_CONSTANTS = {"CHAT", "STEM"}  # the registry's names for them (registry.CHAT, STEM)


def _names_a_style(node: ast.AST) -> bool:
    """A style's name, alone or in a tuple, list or set ("x in ('chat', 'stem')"): the literal,
    or the registry's constant for it (`registry.STEM`, or `STEM` imported bare)."""
    if isinstance(node, ast.Constant):
        return node.value in _STYLE_NAMES
    if isinstance(node, ast.Attribute):
        return node.attr in _STYLE_CONSTANTS
    if isinstance(node, ast.Name):
        return node.id in _STYLE_CONSTANTS
    return isinstance(node, ast.Tuple | ast.List | ast.Set) and any(map(_names_a_style, node.elts))


def _branches_on_style(node: ast.AST) -> bool:
    """A comparison with a style's name, or a table keyed by the registry's style constants (a
    dispatch on the name in another dress: {registry.CHAT: write_chat, registry.STEM: write_stem}).
    A table keyed by literal names is left alone: the bundled prompt files are named like the
    styles they serve (run/prompts.py)."""
    if isinstance(node, ast.Compare):
        return any(map(_names_a_style, [node.left, *node.comparators]))
    return isinstance(node, ast.Dict) and any(isinstance(k, ast.Attribute | ast.Name) and _names_a_style(k)
                                              for k in node.keys)


def literal_style_comparisons(source: str) -> list[int]:
    """The lines of each comparison with (or table keyed by) a prompt-style name in `source`."""
    return [node.lineno for node in ast.walk(ast.parse(source)) if _branches_on_style(node)]


def test_no_literal_prompt_style_comparison_outside_the_registry_and_the_style_objects():
    """Code asks what a style can do (registry.style_traits, registry.traits, ctx.traits),
    never its name, whether written as a literal or as the registry's constant."""
    paths = [p for d in ("rt_core", "studio", "pages") for p in (ROOT / d).rglob("*.py")
             if p not in _STYLE_HOMES] + [ROOT / "app.py"]
    found = {str(p.relative_to(ROOT)): lines for p in paths
             if (lines := literal_style_comparisons(p.read_text("utf-8")))}
    assert found == {}
    # The check sees such a comparison in every form it is written in.
    planted = ("a = s.style == 'chat'\nb = 'stem' != s\nc = s in ('chat', 'x')\nd = s.style == CHAT\n"
               "e = registry.prompt_style(m) != registry.STEM\nf = {registry.CHAT: g}[s]\n"
               "h = s.traits.completes_stems\n")
    assert literal_style_comparisons(planted) == [1, 2, 3, 4, 5, 6]


def _run_every_values(path: Path) -> list[str]:
    """The source of every `run_every=` argument in a file."""
    text = path.read_text("utf-8")
    return [ast.get_source_segment(text, kw.value) or "" for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.Call) for kw in node.keywords if kw.arg == "run_every"]


def test_every_page_that_redraws_live_work_polls_at_the_one_pace(tmp_path):
    """A redraw a second kept Chromium busy enough to double the embedded run it watched
    (studio/polling.py); one pace, set in one place, for every live view."""
    files = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "studio").glob("*.py"))]
    found = {p.relative_to(ROOT).as_posix(): v for p in files if (v := _run_every_values(p))}
    assert len(found) >= 4, found  # run, replay, revision rounds, steering
    assert all(v.startswith("polling.every(") for vs in found.values() for v in vs), found
    planted = tmp_path / "page.py"
    planted.write_text("st.fragment(show, run_every=None if done else 1.0)(store)\n", "utf-8")
    assert _run_every_values(planted) == ["None if done else 1.0"]
