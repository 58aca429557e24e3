"""What a run stores (RunConfig) and what one start of it carries besides (RunRequest).

RunConfig's defaults are the schema's (`schema.default`), so the library, the CLI and the
app start from the same values; old stored configs load unchanged (`from_dict` ignores
keys it does not know, and every field has a default). A run's endpoints are stored as
model and base URL only; their keys live in the RunRequest, never in the config.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..record import Record
from . import endpoint as ep
from .endpoint import Endpoint, Key
from .schema import default, stored


@dataclass
class RunConfig(Record):
    researcher_ids: list[str] = field(default_factory=list)
    paper_ids: list[str] = field(default_factory=list)
    model: str = default("model")
    base_url: str = default("base_url")
    temperature: float = default("temperature")
    mode: str = default("mode")
    num_reviewers: int = default("num_reviewers")
    reviewer_ids: list[str] = field(default_factory=list)
    cutoff_year: int | None = default("cutoff_year")
    reference_paper_id: str = default("reference_paper_id")
    embedder: str = default("embedder")
    concurrency: int = default("concurrency")
    max_profile_papers: int = 20
    # "auto" lets the model registry decide from the model; "chat" or "stem" force one.
    prompt_style: str = "auto"
    # The evaluator's second half (the first is `embedder`): the model that restates a
    # reference paper in five questions, separate from the run's model. "" = none.
    evaluator_model: str = default("evaluator_model")
    evaluator_base_url: str = default("evaluator_base_url")
    keep_undated: bool = default("keep_undated")
    # The run's budget (run.budget): it stops cleanly before crossing either; None: no cap.
    # Stored with the run, so a resume keeps it unless it is given a new one.
    max_tokens: int | None = default("max_tokens")
    max_cost: float | None = default("max_cost")
    # The brainstorm loop: candidates > 1 writes that many proposals and ranks them.
    candidates: int = default("candidates")
    judge_model: str = default("judge_model")  # "" = the run's model judges (when it can)
    judge_base_url: str = default("judge_base_url")
    check_novelty: bool = default("check_novelty")
    literature: str = default("literature")
    revision_rounds: int = default("revision_rounds")
    # Rounds whose early stop a user overrode by asking a finished run for more rounds
    # (run/revise_more.py): the revision goes on after them.
    revision_reopened: list[int] = field(default_factory=list)
    # The idea of the bank this run continues ("RUN_ID:VERSION", "" = none), set when its
    # neighbourhood was seeded from it (rt_core/ideas/seed.py): where the run came from, like
    # its neighbourhood, so not an option of the schema and no door asks for it.
    from_idea: str = ""

    def target(self, role: str) -> tuple[str, str]:
        """The model and base URL of one endpoint (a hosted embedder has no base URL)."""
        if role == ep.MODEL:
            return self.model.strip(), self.base_url.strip()
        if role == ep.EMBEDDER:
            return self.embedder.strip(), ""
        return (getattr(self, f"{role}_model").strip(), getattr(self, f"{role}_base_url").strip())


def for_door(config: RunConfig, offered: Iterable[str]) -> RunConfig:
    """The config a door that offers only the options `offered` (schema.REPLAY) starts: each
    stored option it does not offer back to its default, whatever another door's settings
    (the Run page's, which the app's request carries) say. A door cannot be made to fail by a
    setting it does not show: the Replay page once inherited the Run page's revision round
    while forcing 0 reviewers, and every mode failed on a rule the page gave no way to meet."""
    keep = set(offered)
    reset = {o.name: default(o.name) for o in stored() if o.name not in keep}
    return dataclasses.replace(config, **reset, from_idea="")  # its own neighbourhood: continues no idea


@dataclass(frozen=True)
class Given:
    """Papers and researchers (rt_core.types.Paper and Researcher records) that come with a
    request instead of being in the store already: the CLI's --input file. The run stores
    them when it starts (the store's one import, which merges a paper it already holds) and
    adds their stored ids to its neighbourhood, so the door only reads the file."""
    papers: list[Record] = field(default_factory=list)
    researchers: list[Record] = field(default_factory=list)
    origin: str = ""  # where they came from, kept with them in the store ("cli")


@dataclass
class RunRequest:
    """Everything one run needs, built once (by the Run page or the CLI) and passed down
    unchanged. The config is what gets stored; the keys live only in this object, one per
    endpoint role, resolved by rt_core.models.keys, hidden from repr and never serialised
    (RunRequest has no to_dict on purpose). `given`: records to store first (Given).
    `payer`: the owner hash of the shared-demo visitor whose allowance the run's calls are
    counted against (rt_core.allowance); '' for a request no visitor made."""
    config: RunConfig
    keys: dict[str, Key] = field(default_factory=dict)
    timeout: float = default("timeout")
    max_retries: int = 4
    given: Given | None = None
    payer: str = field(default="", repr=False)

    def endpoint(self, role: str) -> Endpoint:
        """One endpoint of the run: its model, base URL and the key resolved for it."""
        model, base_url = self.config.target(role)
        return Endpoint(model, base_url, self.keys.get(role, ep.NO_KEY))

    @classmethod
    def with_key(cls, config: RunConfig, api_key: str, **kw) -> RunRequest:
        """A request whose run model carries `api_key` (a key given for it, not the server's)."""
        return cls(config, keys={ep.MODEL: Key(api_key, "given")}, **kw)
