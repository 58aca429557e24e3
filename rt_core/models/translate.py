"""litellm's exceptions turned into rt_core's small error hierarchy, by type, never by
matching text; each error carries a hint a person can act on."""
from __future__ import annotations

from .. import redact
from ..errors import AuthError, ConfigError, ProviderError, ProviderTimeout, RateLimitError, Unreachable
from . import registry
from .settings import ModelSettings


class EmptyReply(Exception):
    """The provider's reply held no choices at all (a broken answer, not a model's empty
    text): retried like a transient fault. An empty text is returned but never cached."""


def translate(exc: Exception, settings: ModelSettings) -> Exception:
    """The rt_core error for what litellm raised while calling `settings.model`."""
    lm = registry.litellm()
    model = settings.model
    where = f"model '{model}'" + (f" at {redact.hide_url(settings.base_url)}" if settings.base_url else "")
    detail = short(exc, keys=[settings.api_key])  # some providers echo the key (e.g. in a URL)
    status = getattr(exc, "status_code", None)
    if isinstance(exc, EmptyReply):
        return ProviderError(f"{where} kept sending empty replies ({detail})",
                             "The provider had an error; try again.")
    if isinstance(exc, (lm.AuthenticationError, lm.PermissionDeniedError)) or status in (401, 403):
        return AuthError(f"{where} rejected the API key", AuthError.hint)
    if isinstance(exc, lm.RateLimitError):
        return RateLimitError(f"{where} kept rate limiting after {settings.retry.max_retries} "
                              f"retries", RateLimitError.hint)
    if isinstance(exc, lm.Timeout):
        return ProviderTimeout(f"{where} did not answer within {settings.timeout:.0f}s",
                               ProviderTimeout.hint)
    if isinstance(exc, lm.NotFoundError):
        return ConfigError(f"{where} was not found: {detail}",
                           "Check the model name and the base URL.")
    if isinstance(exc, lm.ContextWindowExceededError):
        return ProviderError(f"{where}: the prompt is too long for this model",
                             "Pick fewer papers or a model with a longer context.")
    if isinstance(exc, lm.BadRequestError):
        return ProviderError(f"{where} refused the request: {detail}",
                             "Check the model name, provider prefix and settings.")
    if nothing_listening(exc):
        target = redact.hide_url(settings.base_url) or f"the {registry.provider_of(model)} API"
        return Unreachable(f"nothing is listening at {target} (model '{model}')", Unreachable.hint)
    if isinstance(exc, lm.APIConnectionError):
        return ProviderError(f"could not reach {where}: {detail}",
                             "Check the base URL, the network, and that the server is running.")
    if isinstance(exc, (lm.InternalServerError, lm.ServiceUnavailableError, lm.APIError)):
        return ProviderError(f"{where} failed: {detail}", "The provider had an error; try again.")
    return ProviderError(f"{where}: unexpected {type(exc).__name__}: {detail}",
                         "See the log for details.")


def nothing_listening(exc: BaseException) -> bool:
    """Whether a refused or failed connection lies in the exception's chain. litellm wraps
    it differently per provider (an OpenAI-compatible server gives InternalServerError),
    so the chain is searched for the transport's own typed errors."""
    import httpx  # noqa: PLC0415  (already imported by litellm)

    kinds: tuple[type, ...] = (ConnectionRefusedError, httpx.ConnectError)
    try:
        from aiohttp import ClientConnectorError  # noqa: PLC0415

        kinds += (ClientConnectorError,)
    except ImportError:  # aiohttp is optional for litellm
        pass
    return registry.in_chain(exc, kinds) is not None


def short(exc: Exception, limit: int = 300, keys=()) -> str:
    """An exception's text on one line, keys and credentials hidden before it is cut."""
    return redact.cut(str(exc), limit, keys)
