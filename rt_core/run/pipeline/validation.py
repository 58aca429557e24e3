"""What a run's settings must satisfy, checked once before any model is called.

A run that would fail on its third stage because of a typo in an id wastes the
user's time and tokens; these checks read only the store. The profile cut-off and
the long-abstract rule live here too: both are rules about the input, stated once,
that the reading and writing stages apply.
"""
from __future__ import annotations

from ...errors import ConfigError, InputError
from ...models.facts import ModelFacts
from ...settings import schema
from ...store import Store
from ...types import MODES, RunConfig

# The bounds are the schema's (rt_core/settings/schema.py), named here for the stages.
MAX_REVIEWERS = int(schema.option("num_reviewers").high or 0)
MAX_CANDIDATES = int(schema.option("candidates").high or 0)
MAX_ROUNDS = int(schema.option("revision_rounds").high or 0)


def effective_cutoff(config: RunConfig, reference_year: int | None) -> int | None:
    """The profile cut-off: the user's, and never later than the year before the reference
    (what a reference's authors could have read when they wrote it)."""
    years = [y for y in (config.cutoff_year,
                         reference_year - 1 if reference_year else None) if y is not None]
    return min(years) if years else None


def validate(config: RunConfig, store: Store, facts: ModelFacts) -> None:
    """Fail early, with a clear message, before any model is called: the run's own rules,
    for a config whose every option is within the schema's bounds (`schema.check_config`,
    which a run's start asks first; `facts`: what the registry says of the run's models,
    asked once at its start)."""
    mode = MODES[config.mode]
    if not config.researcher_ids and not config.paper_ids:
        raise InputError("the neighbourhood is empty", "Add at least one researcher or paper.")
    if mode.needs_researchers and not config.researcher_ids:
        raise InputError(f"mode '{mode.name}' needs at least one researcher",
                         "Add researchers, or use mode 'data' for papers only.")
    if mode.needs_papers and not config.paper_ids:
        raise InputError(f"mode '{mode.name}' needs at least one paper",
                         "Add papers, or use mode 'agent'.")
    check_candidates(config, facts)
    check_rounds(config)
    corpus = store.corpus
    corpus.get_researchers(config.researcher_ids)  # raise NotFoundError on unknown ids
    corpus.get_papers(config.paper_ids)
    if config.reviewer_ids:
        corpus.get_researchers(config.reviewer_ids)
        clash = set(config.reviewer_ids) & set(config.researcher_ids)
        if clash:
            who = corpus.researcher_names(sorted(clash))  # people by name, never by id
            raise InputError(f"reviewers cannot be authors: {', '.join(who.get(r, r) for r in sorted(clash))}",
                             "Pick reviewers who are not in the neighbourhood.")
    if config.reference_paper_id:
        corpus.get_paper(config.reference_paper_id)


def check_candidates(config: RunConfig, facts: ModelFacts) -> None:
    """A judge that can judge (the number of candidates is the schema's, `schema.check_config`): a
    judge named on purpose that the registry declares a base model is refused rather than
    quietly replaced by signals."""
    judge = config.judge_model.strip()
    if config.candidates > 1 and judge and not facts.judge_follows:
        raise ConfigError(f"model '{judge}' is a base model: it cannot judge proposals",
                          "Name an instruction model as the judge, or none: without a judge "
                          "the candidates are ranked by measured signals.")


def check_rounds(config: RunConfig) -> None:
    """Revision rounds only for a run that has reviews to answer (how many is the schema's,
    `schema.check_config`)."""
    if config.revision_rounds and not (config.reviewer_ids or config.num_reviewers):
        raise InputError("a run without reviewers cannot be revised: revision answers the reviews",
                         "Ask for at least one reviewer, or set revision rounds to 0.")
