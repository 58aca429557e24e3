"""ResearchTown Studio core: simulate a research community on a graph of
researchers and papers (read -> write -> review), on any litellm model."""
from . import config  # noqa: F401  (sets offline defaults for libraries first)
from .config import LOCAL_EMBEDDER, LOCAL_MODEL, ModelSettings
from .errors import (AuthError, CancelledRun, ConfigError, InputError, NotFoundError, ParseError,
                     ProviderError, ProviderTimeout, RateLimitError, RTError, SourceError)
from .types import (MODES, QUESTION_KEYS, QUESTION_TITLES, MetaReview, Paper, ProgressEvent, Profile,
                    Proposal, Researcher, Review, Run, RunConfig, Similarity, StageError, Usage)

__version__ = "0.1.0"

__all__ = [
    "LOCAL_EMBEDDER", "LOCAL_MODEL", "ModelSettings", "AuthError", "CancelledRun", "ConfigError",
    "InputError", "NotFoundError", "ParseError", "ProviderError", "ProviderTimeout",
    "RateLimitError", "RTError", "SourceError", "MODES", "QUESTION_KEYS", "QUESTION_TITLES",
    "MetaReview", "Paper", "ProgressEvent", "Profile", "Proposal", "Researcher", "Review", "Run",
    "RunConfig", "Similarity", "StageError", "Usage", "__version__",
]
