"""The few error types rt_core raises; the UI and CLI turn them into messages.

Each carries a `hint`: one sentence telling the user what to do about it. Where the
command line and the app differ in what the user can do (a flag versus a field), the
error also carries an `app_hint` in the app's words, which the app shows instead.
"""
from __future__ import annotations

from . import redact


class RTError(Exception):
    """Base of every error rt_core raises on purpose."""

    hint = ""
    app_hint = ""

    def __init__(self, message: str, hint: str = "", app_hint: str = ""):
        # Every message and hint is shown, logged or stored with a run: credentials in a URL
        # and key-shaped tokens are hidden here, whatever built the text (rt_core.redact).
        super().__init__(redact.hide(message))
        if hint:
            self.hint = redact.hide(hint)
        if app_hint:
            self.app_hint = redact.hide(app_hint)

    @property
    def kind(self) -> str:
        return type(self).__name__

    def for_terminal(self) -> str:
        """The message and its hint as a command prints them (every command-line entry)."""
        return f"error: {self}" + (f"\nhint: {self.hint}" if self.hint else "")


class InputError(RTError):
    """The user gave something we cannot use (empty selection, bad file, ...)."""


class NotFoundError(InputError):
    """An id that is not in the store or the source."""


class ConfigError(RTError):
    """A setting is missing or wrong (model string, base URL, missing package)."""


class SettingError(InputError, ConfigError):
    """A run option outside its type, bounds or choices (rt_core/settings/schema.py). It is
    both a bad input and a wrong setting: code that handles either kind handles it."""


class ProviderError(RTError):
    """A model or API provider failed in a way retries did not fix."""


class AuthError(ProviderError):
    hint = "Check the API key for this provider."


class RateLimitError(ProviderError):
    hint = "The provider is rate limiting; wait a minute or lower the concurrency."


class ProviderTimeout(ProviderError):
    hint = "The provider did not answer in time; raise the timeout or try again."


class Unreachable(ProviderError):
    """Nothing answers at the model's address: retrying or asking other agents cannot help."""
    hint = "Start the model server, or check the host and port in the base URL."


class SourceError(RTError):
    """A paper source (arXiv, Semantic Scholar, OpenAlex) failed."""


class CancelledRun(RTError):
    """The user cancelled the run; finished work is kept."""


class BudgetExceeded(CancelledRun):
    """The run's cap in tokens or dollars is (or would be) crossed: the run stops cleanly
    (run.budget). A kind of cancellation, so every stage lets it through and the calls in
    flight end."""

    hint = "Everything finished is kept; resume the run with a larger cap to finish it."
    app_hint = ("Everything finished is kept. Set a larger budget on the Run page, then resume "
                "the run from Results or History to finish it.")


class AllowanceSpent(BudgetExceeded):
    """A shared demo's tokens for today are used up, the visitor's own or the whole
    server's (rt_core.allowance). Stops a run as its budget does, but a visitor cannot
    raise this cap: the message says what is left and when it renews instead."""
