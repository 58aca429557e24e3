"""Keys and URL credentials are hidden before any text is cut or shown (rt_core.redact): a key
that straddles an error detail's cut leaves no prefix behind, and a base URL with credentials
in it reaches neither an error nor an export."""
from __future__ import annotations

import httpx

from rt_core import redact
from rt_core.errors import ProviderError
from rt_core.export.run import run_json, run_markdown
from rt_core.models import embed, registry
from rt_core.models.settings import ModelSettings
from rt_core.models.translate import translate
from rt_core.sources.http import _short_detail
from rt_core.types import Proposal, Run, RunConfig, StageError

KEY = "sk-straddle-0123456789abcdefghijKLMNOPQRSTUV"  # 43 characters
CREDS_URL = "http://alice:hunter2-pass@gpu-box.lab:8000/v1"


def leaked(text: str, secret: str = KEY, prefix: int = 6) -> bool:
    """Whether any piece of the secret of `prefix` characters or more shows up in `text`."""
    return any(secret[i:i + prefix] in text for i in range(len(secret) - prefix + 1))


def test_a_key_across_the_cut_of_a_model_errors_detail_leaves_no_prefix():
    lm = registry.litellm()

    def error(pad: int):
        return lm.BadRequestError(message="x" * pad + f" invalid key {KEY} please check", model="openai/m",
                                  llm_provider="openai")
    start = str(error(0)).index(KEY)  # litellm puts its own words first
    exc = error(290 - start)  # the key spans character 300, where the detail is cut
    assert str(exc).index(KEY) == 290
    error = translate(exc, ModelSettings(model="openai/m", api_key=KEY, base_url=CREDS_URL))
    assert isinstance(error, ProviderError)
    text = f"{error} {error.hint}"
    assert not leaked(text) and "hunter2" not in text and "alice" not in text
    assert "gpu-box.lab:8000" in text  # the address itself is still said


def test_a_key_across_the_cut_of_an_embedders_and_a_sources_detail_leaves_no_prefix():
    detail = embed._voyage_detail(RuntimeError("y" * 285 + KEY), KEY)
    assert len(detail) <= 300 and not leaked(detail)
    secret = "s2-secret-key-abcdefghijklmnopqrstuvwxyz"
    response = httpx.Response(400, json={"message": "z" * 184 + f" key {secret} refused"})  # spans 200
    detail = _short_detail(response, [secret])
    assert not leaked(detail, secret)


def test_url_credentials_and_key_shapes_are_hidden_in_every_error():
    error = ProviderError(f"could not reach {CREDS_URL}/chat?api_key=abc123xyz: refused",
                          hint=f"Check {CREDS_URL} and the key {KEY}.")
    text = f"{error} {error.hint}"
    assert "hunter2" not in text and "abc123xyz" not in text and not leaked(text)
    assert "http://***@gpu-box.lab:8000/v1" in text


def test_a_base_url_with_credentials_is_hidden_in_the_exports():
    run = Run(id="creds0run01", config=RunConfig(model="openai/m", base_url=CREDS_URL, mode="global",
                                                  reference_paper_id="p-gaia"), status="failed",
              created_at="2026-01-02T00:00:00+00:00")
    run.proposal = Proposal(*(f"answer {k}" for k in range(1, 6)))
    run.errors.append(StageError("write", "run", "ProviderError", f"model 'openai/m' at {CREDS_URL} failed"))
    for text in (run_json(run), run_markdown(run)):
        assert "hunter2" not in text and "alice:" not in text, text
    assert Run.from_dict(__import__("json").loads(run_json(run))).config.base_url == "http://***@gpu-box.lab:8000/v1"


def test_hide_takes_the_given_keys_longest_first_and_cut_hides_before_cutting():
    assert redact.hide("a sk-one-two and sk-one", ["sk-one", "sk-one-two"]) == "a *** and ***"
    assert redact.cut("n" * 10 + KEY, 20, [KEY]) == "n" * 10 + "***"


def test_a_router_deployments_address_is_shown_without_its_credentials():
    from rt_core.models.router import Fleet

    fleet = Fleet("router.yaml", [{"model_name": "lab-llm", "model_info": {"id": "gpu1"},
                                   "litellm_params": {"model": "openai/m", "api_base": CREDS_URL}}], {})
    assert [d.api_base for d in fleet.deployments] == ["http://***@gpu-box.lab:8000/v1"]
    assert "hunter2" not in repr(fleet.deployments)
