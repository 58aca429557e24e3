"""The model registry: what each model is, declared once, and litellm, loaded lazily.

Every provider (or a single model) declares its `Capabilities` once: the prompt style it
needs, whether it is served inside this process and one call at a time, its context
window, its sampling defaults, and the environment variable that holds the operator's key.
Everything else asks here (`capabilities(model)`, `prompt_style`, `serial`, `key_env`...);
no other module looks at a model string's prefix.

Hosted providers are declared in `_HOSTED` below. In-process providers declare themselves
with `register_provider(prefix, capabilities, handler)`: the embedded model (`local`, its
capabilities in local.py) when the models package loads, the scripted test model
(`scripted`) when a test or RT_SCRIPTED asks for it. Declarations never import litellm (it takes seconds); the first
`litellm()` call imports it with its network look-ups off and installs the handlers of
the in-process providers. Prices come from litellm's cost map (`estimate_cost`).

In-process providers raise rt_core errors directly. litellm wraps whatever a custom
handler raises in one of its own exception types; `rt_error_in` finds the original in the
exception chain, so callers see our error unchanged.
"""
from __future__ import annotations

import asyncio
import functools
import gc
import logging
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..errors import RTError
from .queue import ModelQueue, model_queue

log = logging.getLogger(__name__)

CHAT, STEM = "chat", "stem"
DEFAULT_CONTEXT_TOKENS = 8192


@dataclass(frozen=True)
class Capabilities:
    """What one provider's models (or one model) are; declared once, read everywhere."""

    prompt_style: str = CHAT  # CHAT: an instruction model; STEM: a base model completing stems
    in_process: bool = False  # served by this process: no network, no key, costs nothing
    serial: bool = False  # one call at a time; runs on it take turns in a queue
    batch: int = 1  # of a serial model: calls within one run its engine decodes together
    calibrates: bool = False  # may be called only to be timed (free, in this process; models/speeds.py)
    context_tokens: int = 0  # 0: litellm's model info, else RT_CONTEXT_TOKENS
    sampling: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    key_env: str = ""  # the environment variable holding the operator's key ('' needs none)
    client: str = "litellm"  # the library that calls it: litellm, "voyageai" (Voyage's own),
    # or ROUTER (litellm's Router over the deployments of a router file, router.py)
    # Loads what its calls need into this process (preload(model): the embedded model's
    # weights); a run's warm-up calls it beside the client's import (run/pipeline/warmup.py).
    preload: Callable[[str], None] | None = None
    # Stops a line at its first sentence end after some words when asked (the call's
    # SENTENCE_STOP parameter, rt_core/text.py `ended_sentences`), instead of writing on to
    # its token budget; a model that does not only writes more, cut later.
    sentence_stop: bool = False


ROUTER = "router"
# A name served by a router file's deployments: an instruction model reached over the
# network, many calls at once, each deployment with its own key (none from the key rule).
ROUTED = Capabilities(prompt_style=CHAT, serial=False, client=ROUTER)


# Hosted providers: litellm reaches them over the network with the key in `key_env`.
_HOSTED = {prefix: Capabilities(key_env=var) for prefix, var in {
    "openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "deepseek": "DEEPSEEK_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY", "gemini": "GEMINI_API_KEY", "groq": "GROQ_API_KEY",
    "mistral": "MISTRAL_API_KEY", "voyage": "VOYAGE_API_KEY"}.items()}
_HOSTED["voyage"] = Capabilities(key_env="VOYAGE_API_KEY", client="voyageai")  # the paper's evaluator
_HOSTED["ollama"] = Capabilities()  # a server on the user's machine: no key
# Model names without a provider prefix: litellm sends them to OpenAI, except Voyage's own.
_BARE_NAMES = (("voyage-", "voyage"),)

_lock = threading.RLock()
_import_lock = threading.Lock()  # litellm's import, apart from the declarations
_declared: dict[str, Capabilities] = dict(_HOSTED)  # by provider prefix or whole model string
_handlers: dict[str, Callable[[], Any]] = {}  # in-process providers: prefix -> handler factory
_installed: set[str] = set()
_zero_priced: set[str] = set()
_litellm = None


# -- what a model is ------------------------------------------------------------------------
def provider_of(model: str) -> str:
    """'anthropic/claude-x' -> 'anthropic'; a bare name -> the provider litellm sends it to."""
    model = model.strip()
    if "/" in model:
        return model.split("/", 1)[0]
    return next((p for lead, p in _BARE_NAMES if model.startswith(lead)), "openai")


def written_prefix(model: str) -> str:
    """The provider prefix as written ('' for a bare name such as 'gpt-4o-mini')."""
    prefix, sep, _ = model.strip().partition("/")
    return prefix if sep else ""


def model_name(model: str) -> str:
    """The model's own name, without a declared provider prefix ('local/gemma' -> 'gemma',
    'local//models/x.gguf' -> '/models/x.gguf'); a name without one is returned as it is."""
    model = model.strip()
    prefix, sep, rest = model.partition("/")
    with _lock:
        return rest if sep and prefix in _declared else model


def capabilities(model: str) -> Capabilities:
    """The declared capabilities of a model: its own declaration, else its provider's,
    else those of an unknown hosted provider (chat, no key variable)."""
    model = model.strip()
    with _lock:
        return _declared.get(model) or _declared.get(provider_of(model)) or Capabilities()


def prompt_style(model: str, override: str = "auto") -> str:
    """THE decision whether prompts are written for a base model: STEM (plain completion
    from sentence stems, one part per call) or CHAT. `override` (CHAT or STEM) wins."""
    return override if override in (CHAT, STEM) else capabilities(model).prompt_style


@dataclass(frozen=True)
class StyleTraits:
    """What a prompt style can do, declared once beside the style: code asks these
    questions (`style_traits(model).follows_instructions`), never the style's name."""
    name: str
    follows_instructions: bool  # answers a free request: judge, explain, restate, rate, restyle
    ends_at_token_budget: bool  # its parts end at their token budget by design, so a reply
    # stopped by its limit is no reply cut short (a base model completing a sentence stem)
    completes_stems: bool  # writes each part by completing a sentence stem, a call a part:
    # its own writers (revision, candidates) and its own costs per answer
    scores_carry_signal: bool = True  # its 1-10 review scores say something about the proposal;
    # a base model's (a digit a grammar forces after a stem) are close to noise: an off-topic
    # run scored 8.0 against 6.3 for the full one (issue 26), so nothing leads with them
    writes_from_facets: bool = False  # writes, reviews and revises from the papers' facets by
    # template (run/facets/), with no model call when the papers share a usable facet


STYLES = {CHAT: StyleTraits(CHAT, follows_instructions=True, ends_at_token_budget=False,
                            completes_stems=False),
          STEM: StyleTraits(STEM, follows_instructions=False, ends_at_token_budget=True,
                            completes_stems=True, scores_carry_signal=False,
                            writes_from_facets=True)}


def traits(style: str) -> StyleTraits:
    """What a prompt style (a name `prompt_style` returned) can do; an unknown one is CHAT's."""
    return STYLES.get(style, STYLES[CHAT])


def style_traits(model: str, override: str = "auto") -> StyleTraits:
    """What the model's prompt style (`prompt_style`) can do."""
    return traits(prompt_style(model, override))


def follows_instructions(model: str, override: str = "auto") -> bool:
    """Whether the model can be asked a free request (judge, explain, restate, rate)."""
    return style_traits(model, override).follows_instructions


def in_process(model: str) -> bool:
    return capabilities(model).in_process


def serial(model: str) -> bool:
    return capabilities(model).serial


def calls_at_once(model: str, concurrency: int) -> int:
    """Calls one run may have in flight: a serial model's batch (its engine decodes them
    together), else the run's concurrency."""
    caps = capabilities(model)
    return max(1, caps.batch) if caps.serial else max(1, concurrency)


def routed(model: str) -> bool:
    """Whether the model's calls go through the router file's deployments (router.py)."""
    return capabilities(model).client == ROUTER


def key_env(model: str) -> str:
    """The environment variable that holds the operator's key for this model ('' = none)."""
    return capabilities(model).key_env


SENTENCE_STOP = "sentence_stop_words"  # the call parameter of `Capabilities.sentence_stop`


def sentence_stop(model: str, min_words: int) -> dict[str, int]:
    """What to send for a line to stop at its first sentence end after `min_words` words:
    the parameter, to a model that declares it can (`Capabilities.sentence_stop`)."""
    return {SENTENCE_STOP: min_words} if capabilities(model).sentence_stop and min_words else {}


def sampling(model: str) -> dict[str, float]:
    """Sampling parameters sent with every call to this model unless the caller sets them."""
    return dict(capabilities(model).sampling)


def queue_for(model: str) -> ModelQueue | None:
    """The first-come queue in front of a serial model (None for the others)."""
    return model_queue(model.strip()) if serial(model) else None


@functools.lru_cache(maxsize=256)
def context_tokens(model: str) -> int:
    """The model's input context in tokens: the declared window, else litellm's model info
    (for a hosted model: litellm knows none served in this process, and asking would import
    it in the middle of a run's start), else RT_CONTEXT_TOKENS (default 8192)."""
    caps = capabilities(model)
    if caps.context_tokens:
        return caps.context_tokens
    known = 0 if caps.in_process else _litellm_context(model)
    if known:
        return known
    try:
        return max(512, int(os.environ.get("RT_CONTEXT_TOKENS", DEFAULT_CONTEXT_TOKENS)))
    except ValueError:
        return DEFAULT_CONTEXT_TOKENS


def _litellm_context(model: str) -> int:
    """litellm's input window for a model it knows (0 for one it does not)."""
    try:
        info = litellm().get_model_info(model=model)
        return int(info.get("max_input_tokens") or info.get("max_tokens") or 0)
    except Exception:  # litellm raises for models it does not know
        return 0


def estimate_cost(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """Dollars for this many tokens by litellm's cost map; 0 for in-process models, None
    when the price is unknown (a local server, a model litellm has never heard of)."""
    if in_process(model):
        return 0.0
    try:
        prompt, completion = litellm().cost_per_token(model=model, prompt_tokens=prompt_tokens,
                                                      completion_tokens=completion_tokens)
    except Exception:  # litellm raises for models it has no price for
        return None
    return float(prompt) + float(completion)


# -- declaring models -------------------------------------------------------------------------
def declare(name: str, caps: Capabilities) -> Capabilities | None:
    """Declare a provider prefix or one whole model string; returns what it replaced."""
    with _lock:
        old = _declared.get(name)
        _declared[name] = caps
    context_tokens.cache_clear()
    return old


def forget(name: str, previous: Capabilities | None = None) -> None:
    """Undo `declare` (restoring `previous` when there was one)."""
    with _lock:
        if previous is None:
            _declared.pop(name, None)
        else:
            _declared[name] = previous
    context_tokens.cache_clear()


def register_provider(prefix: str, caps: Capabilities, handler: Callable[[], Any]) -> None:
    """An in-process provider: `prefix/<model>` strings have `caps` and dispatch to the
    litellm.CustomLLM that `handler()` returns (built when litellm is first loaded)."""
    with _lock:
        _declared[prefix] = caps
        _handlers[prefix] = handler
        _installed.discard(prefix)
        if _litellm is not None:
            _install(prefix)
    context_tokens.cache_clear()


def registered(prefix: str) -> bool:
    """Whether `prefix/...` models are served in this process (without importing litellm)."""
    return prefix in _handlers


# -- litellm, loaded once --------------------------------------------------------------------
def litellm():
    """The litellm module, imported on first use with telemetry and price fetches off."""
    global _litellm
    if _litellm is None:
        # The import takes seconds and has a lock of its own: the declarations' lock is
        # taken only to publish the module, so asking what a model is (a run being set
        # up while the first call imports litellm) never waits for the import.
        with _import_lock:
            if _litellm is None:
                lm = _import_with_the_collector_paused()
                lm.telemetry = False
                lm.suppress_debug_info = True
                lm.drop_params = True  # providers that lack e.g. frequency_penalty ignore it
                with _lock:
                    _litellm = lm
                    for prefix in list(_handlers):
                        _install(prefix)
    return _litellm


def _import_with_the_collector_paused():
    """Import litellm with Python's cyclic garbage collector paused, then freeze what exists.

    The import makes about 270,000 objects that live as long as the process, and the
    collector's passes over them while they were being made took 0.6 s of the 2.0-2.3 s
    import here (1.5 s paused); the import is on the critical path of a one-shot command and
    of a process's first run. Frozen afterwards (gc.freeze), they are skipped by every later
    full collection (0.2 s of pauses in an app-default run) and by the interpreter's teardown
(a one-shot command exited 1.15 s after its run, now 0.23-0.26 s). Left uncollected: the 2,211
    objects of cyclic garbage the import leaves behind, and whatever else is alive at that
    moment and later becomes garbage, once per process."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        import litellm as lm  # noqa: PLC0415  (slow: seconds)
    finally:
        if was_enabled:
            gc.enable()
    gc.freeze()
    return lm


def _install(prefix: str) -> None:
    from litellm.utils import custom_llm_setup  # noqa: PLC0415  (slow, already loaded here)

    handler = _handlers[prefix]()
    _litellm.custom_provider_map = [m for m in _litellm.custom_provider_map
                                    if m["provider"] != prefix]
    _litellm.custom_provider_map.append({"provider": prefix, "custom_handler": handler})
    custom_llm_setup()
    _installed.add(prefix)


def ensure_zero_price(model: str) -> None:
    """In-process providers cost nothing; tell litellm so its cost lookup does not fail."""
    if not in_process(model) or model in _zero_priced:
        return
    litellm().register_model({model: {"input_cost_per_token": 0.0, "output_cost_per_token": 0.0,
                                      "litellm_provider": provider_of(model), "mode": "chat",
                                      "max_tokens": 8192}})
    _zero_priced.add(model)


def in_chain(exc: BaseException, kinds: type | tuple[type, ...]) -> BaseException | None:
    """The first exception of `kinds` in exc's chain (causes and contexts), or None.
    litellm wraps what a handler or transport raised in its own types; the original
    stays reachable this way, by type, never by matching text."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, kinds):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None


def rt_error_in(exc: BaseException) -> RTError | None:
    """The rt_core error an in-process provider raised, if litellm wrapped one."""
    found = in_chain(exc, RTError)
    return found if isinstance(found, RTError) else None


def run_async(coro):
    """asyncio.run for our coroutines, stopping litellm's background logging task on the
    way out so a finished loop leaves no pending task behind."""

    async def wrapper():
        try:
            return await coro
        finally:
            await _stop_logging_worker()

    return asyncio.run(wrapper())


async def _stop_logging_worker() -> None:
    if _litellm is None:
        return
    try:
        from litellm.litellm_core_utils.logging_worker import (  # noqa: PLC0415
            GLOBAL_LOGGING_WORKER as worker,
        )

        if getattr(worker, "_bound_loop", None) is asyncio.get_running_loop():
            await asyncio.wait_for(worker.flush(), timeout=2)
            await worker.stop()
    except Exception:  # best effort: only tidies up
        log.debug("could not stop litellm's logging worker", exc_info=True)

