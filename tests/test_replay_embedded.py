"""One replay end to end on the embedded defaults (Gemma 3 270M + MiniLM), offline."""
import pytest

from rt_core import community
from rt_core.config import LOCAL_EMBEDDER, LOCAL_MODEL
from rt_core.run.replay.paper import Replay
from rt_core.types import RunConfig, RunRequest


@pytest.mark.slow
def test_replay_an_nlp_paper_offline_on_the_embedded_model(store):
    community.ensure_loaded(store)
    request = RunRequest(RunConfig(model=LOCAL_MODEL, embedder=LOCAL_EMBEDDER, num_reviewers=0))
    result = Replay(request, store, "arxiv:2410.16179", modes=["self", "global"]).run_sync()
    rows = {r["mode"]: r for r in result.rows()}
    assert set(rows) == {"self", "global"}
    for row in rows.values():
        assert row["status"] == "done", row["error"]
        assert -1.0 <= row["mean"] <= 1.0
    assert result.reference_source.startswith("shipped summary")
    assert result.chance is not None and result.chance.n >= 3
    assert result.runs["global"].profiles  # the authors read their earlier papers
    assert all(p.paper_ids and "arxiv:2410.16179" not in p.paper_ids
               for p in result.runs["global"].profiles.values())
