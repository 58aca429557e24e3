"""How to reach one model: `ModelSettings`, derived from a RunRequest (the run's model or
its evaluator) or from a resolved key (the CLI's judge, the study judge). The key lives
only here and in the RunRequest, hidden from repr; which key it is was decided once, by
`rt_core.models.keys.resolve`, and nothing downstream decides it again."""
from __future__ import annotations

from dataclasses import dataclass, field

from .. import config
from ..settings.endpoint import EVALUATOR, MODEL, Endpoint, Key
from ..types import RunRequest
from . import registry
from .retry import RetryPolicy


@dataclass(frozen=True)
class ModelSettings:
    model: str = config.LOCAL_MODEL
    api_key: str = field(default="", repr=False)
    base_url: str = ""
    temperature: float = 0.7
    timeout: float = 120.0
    retry: RetryPolicy = RetryPolicy()
    prompt_style: str = "auto"  # "chat" or "stem" force one; "auto" asks the registry
    server_key: bool = False  # api_key is the operator's: only for allowed base URLs

    @classmethod
    def for_request(cls, request: RunRequest) -> ModelSettings:
        """The run's own model."""
        c = request.config
        return cls.for_endpoint(request.endpoint(MODEL), temperature=c.temperature,
                                timeout=request.timeout,
                                retry=RetryPolicy(max_retries=request.max_retries),
                                prompt_style=c.prompt_style)

    @classmethod
    def for_evaluator(cls, request: RunRequest) -> ModelSettings | None:
        """The evaluator's restating model (None when the request names none): greedy, with
        its own key and the same timeout and retries as the run."""
        evaluator = request.endpoint(EVALUATOR)
        if not evaluator.named:
            return None
        return cls.for_endpoint(evaluator, temperature=0.0, timeout=request.timeout,
                                retry=RetryPolicy(max_retries=request.max_retries))

    @classmethod
    def for_endpoint(cls, endpoint: Endpoint, **kw) -> ModelSettings:
        """Settings for one endpoint, carrying the key the key rule resolved for it."""
        return cls.with_key(endpoint.model, endpoint.key, endpoint.base_url, **kw)

    @classmethod
    def with_key(cls, model: str, key: Key, base_url: str = "", **kw) -> ModelSettings:
        """Settings for a caller without a run, with a key from keys.resolve."""
        return cls(model=model.strip(), api_key=key.value, base_url=base_url.strip(),
                   server_key=key.server, **kw)

    @property
    def style(self) -> str:
        """'stem' for base models, 'chat' for instruction models (the registry decides)."""
        return registry.prompt_style(self.model, self.prompt_style)

    @property
    def traits(self) -> registry.StyleTraits:
        """What this model's prompt style can do (ask these, never the style's name)."""
        return registry.style_traits(self.model, self.prompt_style)
