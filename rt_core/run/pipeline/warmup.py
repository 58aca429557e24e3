"""The first run of a process should not wait for imports, nor share the CPU with them.

A model call needs litellm (about 1.7 s to import on the project's machine) and, for
every model litellm reaches through the OpenAI SDK, `openai.resources` (about 1.3 s
more, imported by the SDK on its first request); the default embedder loads the bundled
MiniLM (0.1-0.3 s). They load in the background as soon as a page that can start a run is
drawn (the Run page: what its settings need, below; Replay: `warm_up()`, all of them), so
by the time anyone presses Start they are there.

A one-shot CLI process has no such head start. There the model client's import is on the
critical path anyway (the first call waits for litellm), but what came after it used to
run beside the first rounds: a CPU profile of `python -m rt_core run` against a loopback
server (bench/bench_orchestration.py --one-shot --profile) showed about 0.5 s of CPU in the
rest of `openai.resources` and 0.3 s loading MiniLM inside the first two rounds, taking the
interpreter from the event loop. So the embedder's weights now load in a thread of their
own, beside the litellm import rather than after it, a run warms only what its models
need (`warm_up(parts)`), and it waits for them before its first stage
(`Simulation.arun`). Importing the same module from two threads is safe: the import
system makes the second wait.

An in-process model's weights are one more part (`weights:<model>`, when its declaration
has a `preload`): the embedded model used to load on the first call, after litellm's
import, so a one-shot CLI run waited for one and then the other.

A run with several candidates needs the ranking's fit (`choix`, which imports
scipy.stats: 1.5 s on a quiet machine, 6.5 s on a busy one) only at its tournament's
first standing, rounds after its start. Imported there, it held the event loop: a traced
six-candidate run sent nothing for 2.2 s after the reviewers' profiles, neither the
reviews nor the judge's next round (issue 50). It is warmed once the run's first stage
has begun (`later_parts`), so it loads while the first rounds wait for the model and the
first stage never waits for it.

The Run page is drawn long before Start, so it warms what a run with its settings will load,
the ranking included (`for_settings`), and nothing else. A run from the papers' facets (the
offline default) makes no model call to hide an import behind: the first one in a process
paid the ranking's import (0.5-1.9 s), and in the app it ran beside the page's import of
litellm and the OpenAI SDK, which it never uses (a sampled Chromium walk: that import still
going through the first run's wall time). So it took longer than every later run, and the
estimate, which learns one scale from them all, missed both (issue 49). The model client is
warmed when the page's settings name a model it calls, as soon as they do.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable

from ...models.facts import ModelFacts, facts_for

log = logging.getLogger(__name__)

CLIENT, SDK, EMBEDDER = "client", "sdk", "embedder"  # what can be warmed
RANKING = "ranking"  # the tournament's fit (run/candidates/ranking.py): warmed after the start
WEIGHTS = "weights"  # with ":<model>": that model's preload (models/registry.py)
ALL = (CLIENT, SDK, EMBEDDER)
_lock = threading.Lock()
_threads: dict[str, threading.Thread] = {}


def _import_litellm() -> None:
    from ...models.registry import litellm  # noqa: PLC0415  (slow: what this warms)

    litellm()


def _import_sdk() -> None:
    _import_litellm()  # the SDK comes with litellm; its resources after it
    import openai.resources  # noqa: F401, PLC0415  (slow: what this warms)


def _load_minilm() -> None:
    from ...models.embed import local_minilm  # noqa: PLC0415  (slow: loads weights)

    local_minilm()  # the default embedder: reviewer candidates, similarity, concepts


def _import_ranking() -> None:
    import choix  # noqa: F401, PLC0415  (slow: scipy.stats; what this warms)


_WORK: dict[str, Callable[[], None]] = {CLIENT: _import_litellm, SDK: _import_sdk,
                                        EMBEDDER: _load_minilm, RANKING: _import_ranking}


def weights(model: str) -> str:
    """The part that loads this model's weights."""
    return f"{WEIGHTS}:{model}"


def _quietly(part: str, preload: Callable[[str], None] | None) -> None:
    kind, _, model = part.partition(":")
    try:
        if kind == WEIGHTS:
            if preload is not None:
                preload(model)
        else:
            _WORK[part]()
    except Exception:  # the first real call will report whatever is wrong, in its words
        log.debug("warming %s failed", part, exc_info=True)


class Warming:
    """The threads warming some parts; `join()` waits for all of them."""

    def __init__(self, threads: list[threading.Thread]):
        self.threads = threads

    def join(self, timeout: float | None = None) -> None:
        for t in self.threads:
            t.join(timeout)

    def is_alive(self) -> bool:
        return any(t.is_alive() for t in self.threads)


def warm_up(parts: Iterable[str] = ALL, preload: Callable[[str], None] | None = None) -> Warming:
    """Start warming these parts in the background, each once per process (the model
    client and its SDK in one thread, the embedder in another, each model's weights in
    one more, so they overlap). `preload`: what loads the run's model's weights (its
    `ModelFacts.preload`, as the run's start read it), for a weights part."""
    wanted = set(parts)
    client_part = SDK if SDK in wanted else CLIENT if CLIENT in wanted else None
    with _lock:
        if client_part == CLIENT and SDK in _threads:
            client_part = SDK  # already importing litellm, then the SDK (a page warmed everything)
        chosen = []
        loads = sorted(p for p in wanted if p.startswith(WEIGHTS + ":"))
        rest = [p for p in (EMBEDDER, RANKING) if p in wanted]
        for part in [p for p in (client_part, *rest, *loads) if p]:
            if part not in _threads:
                _threads[part] = threading.Thread(target=_quietly, args=(part, preload),
                                                  name=f"rt-warm-up-{part}", daemon=True)
                _threads[part].start()
            chosen.append(_threads[part])
        return Warming(chosen)


def later_parts(config) -> tuple[str, ...]:
    """What a run with these settings loads once its first stage has begun, not before it:
    the tournament's fit when there are several candidates (module docstring)."""
    return (RANKING,) if config.candidates > 1 else ()


def for_settings(config) -> tuple[tuple[str, ...], Callable[[str], None] | None]:
    """What a page whose settings are `config` warms, and the preload its weights need: all
    that a run with them loads, at its start and after it (module docstring)."""
    facts = facts_for(config)
    return parts_for(facts) + later_parts(config), facts.preload


def parts_for(facts: ModelFacts) -> tuple[str, ...]:
    """What a run whose models have these facts will load: the model client always, the
    SDK's resources when one of its models is reached over the network, MiniLM when it
    embeds in this process, the run's model's weights when it loads them here. A run that
    writes from the papers' facets (registry: `writes_from_facets`) makes no call when the
    papers share a facet, so neither the client nor the weights are waited for: a run whose
    papers share none loads them at its first call."""
    own = not facts.traits.writes_from_facets or facts.remote
    return (((CLIENT,) if own else ()) + ((SDK,) if facts.remote else ())
            + ((EMBEDDER,) if facts.local_embedder else ())
            + ((weights(facts.model),) if facts.preloads and own else ()))
