"""What each agent of a run may read, and researcher profiles cached across runs.

Every stage that shows papers to a model goes through one Reader, so the cut-off
year, the hidden reference paper and the long-abstract rule are applied the same
way to profiles, drafts, reviews and reviewer choice. A profile depends on much more
than the researcher (the papers' text, the server, the prompt style and template,
the temperature, the re-asks); `profile_key` names all of it, so a stored profile is
reused only when nothing it depends on has changed.
"""
from __future__ import annotations

import dataclasses
import json

from ...errors import InputError, RTError
from ...store import Store
from ...types import Mode, Paper, Profile, RunConfig
from ..styles.context import StageContext, papers_key, select_publications
from ..styles.style import PromptStyle

# The stated rule for long inputs: an abstract longer than this is cut to its first
# MAX_PROMPT_ABSTRACT characters before any prompt sees it, and the run says so. It lives
# with the Reader, the one door every paper goes through on its way to a prompt.
MAX_PROMPT_ABSTRACT = 20_000


class Reader:
    def __init__(self, store: Store, config: RunConfig, cutoff_year: int | None,
                 ctx: StageContext, style: PromptStyle):
        self.store = store
        self.config = config
        self.cutoff_year = cutoff_year
        self.ctx = ctx
        self.style = style

    @property
    def notes(self) -> list[str]:
        """What the run tells its user about its input (kept with the client's notes)."""
        return self.ctx.client.notes

    def bounded(self, papers: list[Paper]) -> list[Paper]:
        """Papers with over-long abstracts cut by the stated rule (MAX_PROMPT_ABSTRACT), noted."""
        out = []
        for p in papers:
            if len(p.abstract) > MAX_PROMPT_ABSTRACT:
                self.notes.append(
                    f"The abstract of '{' '.join(p.title.split())[:80]}' has {len(p.abstract):,} characters; "
                    f"only its first {MAX_PROMPT_ABSTRACT:,} were used.")
                self.notes[:] = list(dict.fromkeys(self.notes))
                p = dataclasses.replace(p, abstract=p.abstract[:MAX_PROMPT_ABSTRACT])
            out.append(p)
        return out

    def publications(self, researcher_id: str) -> list[Paper]:
        """A researcher's readable papers: newest first, none after the cut-off, never the
        reference, at most max_profile_papers."""
        exclude = {self.config.reference_paper_id} if self.config.reference_paper_id else set()
        return self.bounded(select_publications(
            self.store.corpus.publications(researcher_id), self.cutoff_year, exclude,
            self.config.max_profile_papers, keep_undated=self.config.keep_undated))

    def writing_papers(self) -> list[Paper]:
        """The chosen papers, without the hidden reference."""
        ids = [p for p in self.config.paper_ids if p != self.config.reference_paper_id]
        return self.bounded(self.store.corpus.get_papers(ids))

    def grounding_papers(self, mode: Mode) -> list[Paper]:
        """The papers the proposal should build on: what the mode reads. The chosen papers
        when it reads papers, else the authors' (their profiles come from them), and none
        for `self`, the baseline that writes from nothing: concepts from the neighbourhood
        would hand it what the other modes have to read."""
        papers = self.writing_papers() if mode.reads_papers else []
        if papers or not mode.reads_profiles:
            return papers
        return [p for rid in self.config.researcher_ids for p in self.publications(rid)[:5]]

    def profile_key(self, pubs: list[Paper]) -> str:
        """Everything a profile depends on besides the researcher and the model name: the
        papers' ids *and* text, the server, the prompt style and template, the temperature
        and the number of re-asks. Change any of them and the profile is written anew."""
        settings = self.ctx.client.settings
        template = self.ctx.prompts.templates.get("profile")  # base-model profiles use none
        return papers_key([p.id for p in pubs] + [
            papers_key([f"{p.title}\n{p.abstract}" for p in pubs]),
            settings.base_url.rstrip("/"), self.ctx.client.style,
            json.dumps(template.parts if template else {}, sort_keys=True), repr(float(settings.temperature)),
            str(self.ctx.max_reasks), getattr(self.style, "PROFILE_VERSION", "")])

    async def profile(self, researcher_id: str) -> Profile:
        """The stored profile when nothing it depends on changed, else a new one (stored)."""
        r = self.store.corpus.get_researcher(researcher_id)
        pubs = self.publications(researcher_id)
        model = self.ctx.client.settings.model
        key = self.profile_key(pubs)
        cached = self.store.profiles.get(researcher_id, model, key)
        if cached:
            return Profile(researcher_id, cached, model, [p.id for p in pubs])
        if not pubs:
            raise InputError(f"{r.name} has no publications to read (before the cut-off year)",
                             "Add some of their papers, or move the cut-off year.")
        prof = await self.style.read_profile(self.ctx, researcher_id, r.name, pubs)
        if prof.missing:
            raise RTError(f"the model gave no profile for {r.name}",
                          "Try again, or use a larger model.")
        self.store.profiles.put(researcher_id, model, key, prof.text, prof.paper_ids)
        return prof
