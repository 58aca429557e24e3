"""The model registry: each model's capabilities are declared once and every module asks
here; declarations never import litellm."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rt_core.models import registry
from rt_core.models.client import LLMClient, ModelSettings, run_async
from rt_core.models.fitting import estimate_tokens, fit_messages

ROOT = Path(__file__).resolve().parents[1]


def test_the_embedded_model_is_a_serial_base_model_with_its_own_window():
    from rt_core.models import local

    caps = registry.capabilities("local/gemma-3-270m")
    assert caps is local.CAPABILITIES and registry.prompt_style("local/gemma-3-270m") == "stem"
    assert registry.serial("local//models/other.gguf") and registry.in_process("local/all-MiniLM-L6-v2")
    assert registry.context_tokens("local/gemma-3-270m") == 4096
    assert registry.key_env("local/gemma-3-270m") == ""
    assert registry.queue_for("local/gemma-3-270m") is registry.queue_for("local/gemma-3-270m")


def test_hosted_models_are_chat_models_with_their_key_variable():
    assert registry.prompt_style("gpt-4o-mini") == "chat" and not registry.serial("gpt-4o-mini")
    assert registry.key_env("gpt-4o-mini") == "OPENAI_API_KEY"
    assert registry.key_env("anthropic/claude-3-5-haiku-latest") == "ANTHROPIC_API_KEY"
    assert registry.key_env("voyage-3") == registry.key_env("voyage/voyage-3") == "VOYAGE_API_KEY"
    assert registry.key_env("ollama/llama3.1") == ""
    assert registry.queue_for("gpt-4o-mini") is None
    assert registry.prompt_style("gpt-4o-mini", override="stem") == "stem"


def test_model_names_lose_only_a_declared_prefix():
    assert registry.model_name("local/gemma-3-270m") == "gemma-3-270m"
    assert registry.model_name("local//models/x.gguf") == "/models/x.gguf"
    assert registry.model_name("gemma-3-270m") == "gemma-3-270m"
    assert registry.model_name("/models/x.gguf") == "/models/x.gguf"


def test_a_declared_model_overrides_its_provider_and_can_be_forgotten():
    caps = registry.Capabilities(prompt_style=registry.STEM, serial=True, context_tokens=1000)
    previous = registry.declare("openai/tiny-base", caps)
    try:
        assert registry.prompt_style("openai/tiny-base") == "stem"
        assert registry.context_tokens("openai/tiny-base") == 1000
        assert registry.prompt_style("openai/other") == "chat"
    finally:
        registry.forget("openai/tiny-base", previous)
    assert registry.prompt_style("openai/tiny-base") == "chat"


def test_the_scripted_model_registers_its_capabilities(scripted):
    assert registry.registered("scripted") and registry.in_process("scripted/x")
    assert not registry.serial("scripted/x") and registry.prompt_style("scripted/x") == "chat"


def test_declared_sampling_is_sent_unless_the_caller_sets_it(scripted):
    previous = registry.declare("scripted/sampled", registry.Capabilities(
        in_process=True, sampling={"top_p": 0.5, "frequency_penalty": 0.25}))
    try:
        scripted.enqueue("one", "two")
        client = LLMClient(ModelSettings(model="scripted/sampled"))
        run_async(client.complete([{"role": "user", "content": "hi"}]))
        run_async(client.complete([{"role": "user", "content": "hi"}], extra={"top_p": 0.9}))
    finally:
        registry.forget("scripted/sampled", previous)
    first, second = (h["params"] for h in scripted.history)
    assert (first["top_p"], first["frequency_penalty"]) == (0.5, 0.25)
    assert (second["top_p"], second["frequency_penalty"]) == (0.9, 0.25)


def test_cost_is_estimated_from_tokens():
    assert registry.estimate_cost("local/gemma-3-270m", 1000, 1000) == 0.0
    hosted = registry.estimate_cost("gpt-4o-mini", 1_000_000, 0)
    assert hosted is not None and 0.01 < hosted < 10  # litellm's bundled price table
    assert registry.estimate_cost("gpt-4o-mini", 2_000_000, 0) == pytest.approx(2 * hosted)
    assert registry.estimate_cost("openai/no-such-model-anywhere", 10, 10) is None


def test_one_rule_fits_a_prompt_and_keeps_both_ends():
    text = "START " + "word " * 20_000 + " END"
    out, note = fit_messages([{"role": "user", "content": text}], context=2000, max_tokens=300)
    assert out[0]["content"].startswith("START") and out[0]["content"].endswith("END")
    assert estimate_tokens(out[0]["content"]) <= 2000 - 300 and "2,000 tokens" in note


def test_the_token_estimate_counts_ascii_by_three_and_the_rest_by_one():
    # 9 ASCII characters (3 tokens) and 5 others: accents, CJK, an emoji and a lone surrogate.
    assert estimate_tokens("abc def g" + "é漢字😀\ud800") == 3 + 5
    assert estimate_tokens("") == 0 and estimate_tokens("ab") == 1


def test_declarations_do_not_import_litellm():
    code = ("import sys; from rt_core.models import registry; from rt_core.models import keys; "
            "registry.capabilities('gpt-4o-mini'); keys.resolve('gpt-4o-mini', ''); "
            "print('litellm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         check=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert out.stdout.strip() == "False"


def test_share_links_map_a_model_to_its_preset_by_its_provider():
    from studio import request

    assert request.provider_for_model("gpt-4o-mini") == "OpenAI"
    assert request.provider_for_model("gpt-4.1") == "OpenAI"
    assert request.provider_for_model("openai/my-model") == "Any OpenAI-compatible URL"
    assert request.provider_for_model("ollama/qwen3") == "Ollama (local server)"
    assert request.provider_for_model("anthropic/claude-x") == "Anthropic"
    assert request.provider_for_model("fireworks_ai/x") == "Any OpenAI-compatible URL"
    assert request.shareable_model("local/gemma-3-270m") and request.shareable_model("gpt-4o-mini")
    assert not request.shareable_model("local//etc/some.gguf")  # never a file on the server


def test_voyage_models_are_called_by_voyages_own_client_and_others_by_litellm():
    from rt_core.models.embed import Embedder

    assert registry.capabilities("voyage/voyage-3").client == "voyageai"
    assert registry.capabilities("voyage-3").client == "voyageai"  # a bare Voyage name
    assert registry.capabilities("text-embedding-3-large").client == "litellm"
    assert Embedder("voyage-3").voyage_model == "voyage-3"
    assert Embedder("openai/voyage-like-name").voyage_model == ""


def test_asking_what_a_model_is_does_not_wait_for_litellms_import(monkeypatch):
    """A one-shot run sets itself up (the registry asked for every model) while a thread
    imports litellm, which takes seconds: the questions must not queue behind the import."""
    import importlib.abc
    import importlib.machinery
    import threading

    importing, finish = threading.Event(), threading.Event()

    class SlowLoader(importlib.abc.Loader):
        def create_module(self, spec):
            return None

        def exec_module(self, module):  # an import that is under way until the test ends it
            importing.set()
            finish.wait(60)
            for name in ("telemetry", "suppress_debug_info", "drop_params"):
                setattr(module, name, None)
            module.custom_provider_map = []

    class SlowFinder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            return importlib.machinery.ModuleSpec(name, SlowLoader()) if name == "litellm" else None

    monkeypatch.setattr(registry, "_litellm", None)
    monkeypatch.setattr(registry, "_handlers", {})
    monkeypatch.delitem(sys.modules, "litellm", raising=False)
    monkeypatch.setattr(sys, "meta_path", [SlowFinder(), *sys.meta_path])
    importer = threading.Thread(target=registry.litellm, daemon=True)
    importer.start()
    try:
        assert importing.wait(60)
        answers = []
        asker = threading.Thread(target=lambda: answers.append(registry.serial("openai/x")), daemon=True)
        asker.start()
        asker.join(30)  # a liveness check: the answer needs no import, so it comes at once
        assert answers == [False], "the registry's questions waited for litellm's import"
    finally:
        finish.set()
        importer.join(60)
    assert registry._litellm is sys.modules["litellm"]


def test_a_batching_serial_model_takes_its_batch_of_calls_at_once():
    """The embedded engine decodes calls together: a run may have its batch in flight,
    while runs on it still take turns (serial) and other models keep their concurrency."""
    from rt_core.models.local_batch import SLOTS

    assert registry.serial("local/gemma-3-270m")
    assert registry.calls_at_once("local/gemma-3-270m", 4) == SLOTS > 1
    assert registry.calls_at_once("gpt-4o-mini", 3) == 3
    previous = registry.declare("openai/one-at-a-time", registry.Capabilities(serial=True))
    try:
        assert registry.calls_at_once("openai/one-at-a-time", 4) == 1
    finally:
        registry.forget("openai/one-at-a-time", previous)


def test_litellm_is_imported_with_the_collector_paused_then_its_objects_frozen():
    """The import's objects are frozen (later full collections skip them) and the collector is
    on again afterwards, as it was before (models/registry.py, _import_with_the_collector_paused)."""
    code = ("import gc, sys; from rt_core.models import registry; "
            "seen = []; gc.callbacks.append(lambda phase, info: seen.append(phase)); "
            "registry.litellm(); "
            "print(gc.isenabled(), gc.get_freeze_count() > 100_000, 'litellm' in sys.modules, len(seen))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         check=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    enabled, frozen, imported, collections = out.stdout.split()
    assert (enabled, frozen, imported) == ("True", "True", "True")
    assert int(collections) == 0  # no collection ran while the import made its objects
