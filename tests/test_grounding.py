"""Grounded writing for base models (issue 9): key concepts per field, seeded stems and
sampled candidates, honest profiles, reviews that are never empty, a meta-review drawn
from the reviews, and the queue in front of the one embedded model."""
from __future__ import annotations

import asyncio
import threading

import pytest

from rt_core import community as starter
from rt_core.config import LOCAL_EMBEDDER
from rt_core.errors import ConfigError
from rt_core.models.client import LLMClient, ModelSettings
from rt_core.models.embed import Embedder
from rt_core.models.local import ThreadChooser, threads_for_load
from rt_core.models.queue import ModelQueue
from rt_core.run.pipeline.simulation import Simulation
from rt_core.run.styles import context, grounding, stem, stem_checks, stem_line, stem_material, stem_write
from rt_core.run.styles.review_clusters import point_content, review_points
from rt_core.settings.endpoint import Key
from rt_core.types import Paper, Proposal, Review, RunConfig, RunRequest


def run(coro):
    return asyncio.run(coro)


def stem_ctx(g=None, max_reasks=2):
    """A base-model stage context; without material of its own, an empty one embedded
    with MiniLM (what a default run chooses)."""
    client = LLMClient(ModelSettings(model="scripted/x", prompt_style="stem"))
    g = g if g is not None else grounding.Grounding([], embedder=Embedder(LOCAL_EMBEDDER))
    return context.StageContext(client, max_reasks=max_reasks, grounding=g)


def minilm(store) -> Embedder:
    return Embedder(LOCAL_EMBEDDER, store=store)


# -- key concepts ------------------------------------------------------------------------

def test_candidate_phrases_split_at_stop_words_and_punctuation():
    assert grounding.candidate_phrases("MagicPIG: LSH Sampling for Efficient LLM Generation") == [
        "MagicPIG", "LSH Sampling", "Efficient LLM Generation"]


def test_key_concepts_are_noun_phrases_not_verb_phrases():
    # The phrases the embedded model was handed as concepts, and what they become.
    text = ("To understand sensory cortex, we explore industrial robots. Models typically "
            "outperformed consumer-support agents; it remains to investigate dark matter halos.")
    phrases = grounding.candidate_phrases(text)
    assert phrases == ["sensory cortex", "industrial robots", "Models",
                       "consumer-support agents", "dark matter halos"]
    assert all(grounding.is_noun_phrase(p) for p in phrases)
    for bad in ("understand sensory cortex", "we explore robots", "typically robots",
                "robots currently", "investigate dark matter"):
        assert not grounding.is_noun_phrase(bad), bad
    # Nouns ending in -ly and adjective-noun phrases are kept.
    assert grounding.candidate_phrases("family anomaly detection with support vector machines") == [
        "family anomaly detection", "support vector machines"]


def test_no_concept_of_the_nlp_astronomy_preset_is_a_verb_phrase(starter_store):
    preset = starter.preset("nlp-astronomy")
    papers = starter_store.corpus.get_papers(preset["paper_ids"])
    g = grounding.Grounding.for_store(starter_store, papers, minilm(starter_store))
    concepts = [c for cs in g.concepts.values() for c in cs]
    assert concepts and all(grounding.is_noun_phrase(c) for c in concepts), concepts


def test_chosen_fields_are_the_papers_primary_fields_most_common_first():
    ps = [Paper(id=str(i), title="t", fields=f) for i, f in
          enumerate([["nlp", "systems"], ["nlp"], ["astronomy"], ["nlp"]])]
    assert grounding.chosen_fields(ps) == ["nlp", "astronomy"]


def test_nlp_astronomy_concepts_name_each_field_and_not_the_other(starter_store):
    preset = starter.preset("nlp-astronomy")
    papers = starter_store.corpus.get_papers(preset["paper_ids"])
    g = grounding.Grounding.for_store(starter_store, papers, minilm(starter_store))
    concepts = g.concepts
    assert set(concepts) == {"nlp", "astronomy"}
    astro = " ".join(concepts["astronomy"]).lower()
    nlp = " ".join(concepts["nlp"]).lower()
    assert any(w in astro for w in ("gaia", "stellar", "milky way", "telescope")), astro
    assert any(w in nlp for w in ("llm", "language", "webarena", "response biases")), nlp
    # Specific: no astronomy concept word occurs in the NLP papers' text, and vice versa.
    text = {f: " ".join(f"{p.title} {p.abstract}".lower() for p in papers if p.fields[0] == f)
            for f in concepts}
    for f, other in (("astronomy", "nlp"), ("nlp", "astronomy")):
        for c in concepts[f]:
            assert any(w not in text[other] for w in grounding.words(c)), (f, c)


def test_a_record_names_fields_topics_and_methods_from_the_papers(starter_store):
    pubs = starter_store.corpus.publications("r-vallenari-antonella")
    rec = grounding.researcher_record(pubs)
    assert rec.fields == ["astronomy"]
    assert any("Gaia" in t for t in rec.topics), rec
    source = " ".join(f"{p.title} {p.abstract}" for p in pubs)
    assert all(m in source for m in rec.topics + rec.methods)


# -- writing on a base model -----------------------------------------------------------------

def _stem_request(**cfg) -> RunRequest:
    base = {"model": "scripted/base", "prompt_style": "stem", "researcher_ids": ["r-ada", "r-nia"],
            "paper_ids": ["p-gaia", "p-spectra", "p-llm", "p-agents"], "num_reviewers": 1}
    return RunRequest(RunConfig(**{**base, **cfg}), max_retries=0)


def _echo_responder(messages, params):
    """A base model that finishes every line with the same short clause."""
    doc = messages[-1]["content"]
    if doc.rstrip().endswith(":") and "score" in doc[-80:].lower():
        return " 6"
    return " and compare both with careful measurements."


def test_question_stems_carry_a_concept_from_each_field(community, scripted, stem_writing):
    scripted.responder = _echo_responder
    run_ = Simulation(_stem_request(), community).run_sync()
    assert run_.status == "done", run_.errors
    q1 = run_.proposal.q1
    concepts = grounding.Grounding.for_store(community, community.corpus.get_papers(
        ["p-gaia", "p-spectra", "p-llm", "p-agents"]), minilm(community)).concepts
    assert any(c in q1 for c in concepts["astronomy"]), (q1, concepts)
    assert any(c in q1 for c in concepts["nlp"]), (q1, concepts)
    assert q1.startswith("How can")  # the plain stem stays the start (similarity strips it)


def test_the_self_baseline_gets_no_concepts_from_the_neighbourhood(community, scripted, stem_writing):
    """`self` writes from nothing; seeding it with the authors' concepts would hand it what
    the other modes have to read (and flatter it in a replay)."""
    scripted.responder = _echo_responder
    concepts = grounding.Grounding.for_store(community, community.corpus.get_papers(
        ["p-gaia", "p-spectra", "p-llm", "p-agents"]), minilm(community)).concepts
    alone = Simulation(_stem_request(mode="self"), community).run_sync()
    assert alone.status == "done", alone.errors
    prompts = " ".join(h["messages"][-1]["content"] for h in scripted.history)
    assert not [c for cs in concepts.values() for c in cs if c in prompts]
    scripted.history.clear()
    agents = Simulation(_stem_request(mode="agent"), community).run_sync()
    assert agents.status == "done", agents.errors
    prompts = " ".join(h["messages"][-1]["content"] for h in scripted.history)
    assert [c for cs in concepts.values() for c in cs if c in prompts]  # from the authors' papers


def test_candidates_have_their_own_seeds_and_a_warm_rerun_makes_no_calls(community, scripted, stem_writing):
    scripted.responder = _echo_responder
    req = _stem_request(temperature=0.4)
    first = Simulation(req, community).run_sync()
    assert first.status == "done", first.errors
    seeds = [h["params"]["seed"] for h in scripted.history
             if h["messages"][-1]["content"].splitlines()[-1].startswith("1. Research question:")
             and "merged from the team's drafts" in h["messages"][-1]["content"]]
    assert len(seeds) == stem.MERGE_CANDIDATES["q1"] and len(set(seeds)) == len(seeds)
    assert {h["params"]["temperature"] for h in scripted.history} == {0.4}
    scripted.history.clear()
    again = Simulation(req, community).run_sync()
    assert again.status == "done" and again.usage.calls == 0 and scripted.history == []
    assert again.proposal.answers() == first.proposal.answers()


def test_the_runs_merge_samples_q1_and_takes_the_other_parts_from_the_drafts(scripted):
    """Q2-Q5 of the merged proposal are the drafts' best answers, with no call; a part that
    no draft answered is still sampled. (A fresh continuation won 1 of 15 such parts.)"""
    scripted.responder = lambda m, p: " in practice?"
    full = Proposal(q1="How can language agents read stellar spectra?", q2="This matters because surveys grow.",
                    q3="It is hard because labels are scarce.", q4="Earlier work has not solved it because of noise.",
                    q5="We will apply agents to survey spectra and measure recall.")
    other = Proposal(q1="How can galaxy surveys train agents?", q2="This matters because agents misread tables.",
                     q4="Earlier work has not solved it because data were private.", q5="We will test on archives.")
    partial = Proposal(q1=other.q1, q2=other.q2, q4=other.q4, q5=other.q5)  # neither answers Q3 ...
    merged = run(stem.aggregate(stem_ctx(), [partial, Proposal(q1=full.q1, q2=full.q2, q4=full.q4, q5=full.q5)]))
    asked = [h["messages"][-1]["content"].splitlines()[-1][:2] for h in scripted.history]
    assert asked.count("1.") == stem.AGGREGATE_CANDIDATES["q1"] and asked.count("3.") >= 1
    assert not {"2.", "4.", "5."} & set(asked), asked
    assert merged.q2 in (full.q2, other.q2) and merged.q5 in (full.q5, other.q5) and merged.q3
    scripted.history.clear()  # ... and with every part answered, Q1 alone is asked
    merged = run(stem.aggregate(stem_ctx(), [full, other]))
    assert [h["messages"][-1]["content"].splitlines()[-1][:2] for h in scripted.history] == ["1."] * 2
    assert merged.q3 == full.q3


def test_the_score_prefers_answers_covering_every_field_without_filler():
    g = grounding.Grounding([], _concepts={"astronomy": ["stellar spectra"], "nlp": ["language agents"]})
    both = "How can language agents classify stellar spectra from survey pipelines?"
    one = "How can language agents plan web tasks for users?"
    filler = "How can this important research help people understand the world better?"
    assert stem_write.score_candidate(both, g, []) > stem_write.score_candidate(one, g, [])
    assert stem_write.score_candidate(one, g, []) > stem_write.score_candidate(filler, g, [])
    assert stem_write.score_candidate(both, g, [both]) < stem_write.score_candidate(both, g, [])


def test_with_three_fields_every_q1_stem_names_a_concept_of_each(scripted):
    concepts = {"astronomy": ["stellar spectra", "galaxy surveys"], "nlp": ["language agents"],
                "criminology": ["police records", "parole hearings"]}
    g = grounding.Grounding([], _concepts=concepts)
    scripted.responder = lambda m, p: " in practice?"
    ctx = stem_ctx()
    ctx.grounding = g
    draft = run(stem.write_draft(ctx, "a scientist", [], "r-x"))
    q1_stems = [h["messages"][-1]["content"].splitlines()[-1] for h in scripted.history
                if h["messages"][-1]["content"].splitlines()[-1].startswith("1. ")]
    assert q1_stems
    for line in q1_stems + [draft.q1]:
        for field, cs in concepts.items():
            assert any(c in line for c in cs), (field, line)
    # Two fields: the pairs are the plain ones.
    two = grounding.Grounding([], _concepts={k: concepts[k] for k in ("astronomy", "nlp")})
    assert stem_material.every_field_pairs(two, 3) == stem_material.concept_pairs(two, 3)


def test_the_score_prefers_the_field_earlier_answers_left_out():
    g = grounding.Grounding([], _concepts={"astronomy": ["stellar spectra"], "nlp": ["language agents"],
                                           "criminology": ["police records"]})
    earlier = ["How can language agents classify stellar spectra?"]
    new_field = "This matters because police records hold biased labels for every study."
    old_field = "This matters because stellar spectra hold biased labels for every study."
    assert stem_write.score_candidate(new_field, g, earlier) > stem_write.score_candidate(old_field, g, earlier)
    assert stem_write.score_candidate(new_field, g, []) == stem_write.score_candidate(old_field, g, [])


# -- the run's embedder ---------------------------------------------------------------------

def test_a_stem_run_embeds_with_the_embedder_it_chose_and_reuses_nothing_from_minilm(
        community, scripted, openai_server, stem_writing):
    """Concepts, reviewer choice and the meta-review all use the run's embedder. A run on
    another embedder (a hosted model, here the OpenAI-compatible server on 127.0.0.1) after
    a MiniLM run gets that embedder's concepts in its prompts: neither MiniLM's vectors nor
    anything built from them is reused."""
    def hosted() -> Embedder:
        return Embedder("text-embedding-3-small", store=community, api_key="sk-test",
                        base_url=openai_server.base_url)

    scripted.responder = _echo_responder
    papers = community.corpus.get_papers(["p-gaia", "p-spectra", "p-llm", "p-agents"])
    minilm_run = Simulation(_stem_request(), community).run_sync()
    assert minilm_run.status == "done", minilm_run.errors
    def minilm_rows() -> int:
        return community.db.conn.execute("SELECT count(*) FROM embedding_cache WHERE model=?",
                                         (LOCAL_EMBEDDER,)).fetchone()[0]

    before = minilm_rows()
    scripted.history.clear()

    other = Simulation(_stem_request(), community, embedder=hosted()).run_sync()
    assert other.status == "done", other.errors
    # The concepts in its prompts are the hosted embedder's own, not MiniLM's.
    mine = grounding.Grounding.for_store(community, papers, hosted()).concepts
    minis = grounding.Grounding.for_store(community, papers, minilm(community)).concepts
    assert mine != minis  # the two embedders rank the phrases differently
    prompts = " ".join(h["messages"][-1]["content"] for h in scripted.history)
    for field_id, name in (("astronomy", "Astronomy"), ("nlp", "NLP")):
        assert f"Key concepts in {name}: {'; '.join(mine[field_id])}." in prompts
    # What the server was asked to embed: the papers (concepts), then the reviews' points
    # (meta-review); and MiniLM embedded nothing new.
    sent = [t for r in openai_server.requests if r["path"].endswith("/embeddings")
            for t in r["body"]["input"]]
    assert any(p.title in t for p in papers for t in sent)
    points = [pt for r in other.reviews for pt in review_points(r.strengths) + review_points(r.weaknesses)]
    assert points and {point_content(p) for p in points} <= set(sent)  # embedded without their frame
    assert minilm_rows() == before


def test_the_meta_review_without_an_embedder_is_a_clear_error():
    ctx = stem_ctx(grounding.Grounding([]))
    with pytest.raises(ConfigError, match="embedder"):
        run(stem.meta_review(ctx, PROPOSAL, [Review("a", "- The proposal is clear and sound.", "", 5)]))


# -- honest profiles ---------------------------------------------------------------------------

def test_a_profile_is_the_record_and_asks_the_model_nothing(community, scripted):
    scripted.enqueue(" spent her life working on the Earth's environment, and this is my first article.")
    papers = community.corpus.publications("r-ada")
    prof = run(stem.read_profile(stem_ctx(), "r-ada", "Ada Astro", papers))
    assert not prof.missing
    assert prof.text.startswith("Ada Astro publishes in Astronomy.")
    assert "stellar" in prof.text.lower()
    assert scripted.history == []  # nothing a base model could invent
    assert prof.paper_ids == [p.id for p in papers]


# -- reviews and the meta-review -------------------------------------------------------------

PROPOSAL = Proposal(q1="How can language agents classify stellar spectra?",
                    q2="This matters because surveys are large.", q3="It is hard because labels are rare.",
                    q4="Earlier work has not solved it because fields are apart.",
                    q5="We will label survey spectra and report classification accuracy.")


def test_empty_review_sections_are_reasked_then_replaced_by_labelled_checks(scripted):
    scripted.responder = lambda m, p: " 5" if p.get("grammar") else " (see"
    g = grounding.Grounding([], _concepts={"astronomy": ["stellar spectra"], "nlp": ["language agents"]},
                            field_names={"astronomy": "Astronomy", "nlp": "NLP"})
    rev = run(stem.review(stem_ctx(g), "r1", "I review.", PROPOSAL, []))
    asks = [h for h in scripted.history if not h["params"].get("grammar")]
    assert len(asks) == 2 * 3  # strengths and weaknesses, each asked and re-asked twice
    assert not stem_checks.section_empty(rev.strengths) and not stem_checks.section_empty(rev.weaknesses)
    assert rev.strengths.count(stem_checks.AUTO_CHECK) >= 2
    assert "Q1 names a concept from Astronomy" in rev.strengths and "Q5 names the data" in rev.strengths
    assert rev.weaknesses.startswith(f"- {stem_checks.AUTO_CHECK}") and rev.score == 5


def test_checks_flag_a_missing_field_and_a_plan_without_a_metric():
    g = grounding.Grounding([], _concepts={"astronomy": ["stellar spectra"], "nlp": ["language agents"]},
                            field_names={"astronomy": "Astronomy", "nlp": "NLP"})
    good, bad = stem_checks.proposal_checks(Proposal(q1="How can language agents book flights?",
                                              q5="We will build it."), g)
    assert "Q1 names no concept from Astronomy." in bad
    assert any("Q5 does not name the data and a metric" in b for b in bad)
    assert any("Q1 names a concept from NLP" in x for x in good)


def test_a_weakness_that_restates_the_strength_is_not_kept(scripted):
    same = " uses language agents to classify stellar spectra from surveys."
    scripted.responder = lambda m, p: " 6" if p.get("grammar") else same
    rev = run(stem.review(stem_ctx(), "r1", None, PROPOSAL, []))
    assert rev.strengths == "- The proposal" + same
    assert stem_checks.AUTO_CHECK in rev.weaknesses


def test_invented_acronyms_and_names_are_dropped_from_a_line():
    from rt_core.run.styles.stem_names import drop_invented, invented, material_text

    papers = [Paper(id="p", title="Gaia DR3 astrometry of nearby stars",
                    abstract="We use the Vera Rubin Observatory and large language models (LLMs).")]
    material = material_text("Key concepts in NLP: consumer-support agents.", papers)
    # A parenthesised acronym the material lacks is cut; the sentence still reads.
    assert drop_invented("It trains consumer-support agents (CPSAs) on logs.", material) == (
        "It trains consumer-support agents on logs.", [])
    # A known one stays, singular or plural, and so do names the papers use.
    assert drop_invented("It uses LLMs (LLMs) with Gaia DR3 and the Vera Rubin Observatory.",
                         material)[1] == []
    # An unknown name cannot be cut from its sentence: it is reported to the caller.
    assert drop_invented("Data from the Simons Observatory (SOHO) help.", material) == (
        "Data from the Simons Observatory help.", ["Simons Observatory"])
    assert invented("It uses the NASA archive.", material) == ["NASA"]
    assert drop_invented("It beats existing models (eGaaS).", material) == ("It beats existing models.", [])
    # A capitalised word that starts a sentence is not a name.
    assert invented("Dark matter is hard. Gaia helps.", material) == []


def test_a_review_line_with_an_invented_name_or_off_the_proposal_is_not_kept(scripted):
    # First the model invents an observatory, then says nothing about the proposal, then
    # coins an acronym for something the proposal does say (kept, acronym cut).
    lines = iter([" uses data from the Simons Observatory (SOHO).",
                  " is about to be submitted.",
                  " labels survey spectra with language agents (LSAs).",
                  " is about to be submitted.", " is about to be submitted.",
                  " is about to be submitted."])
    scripted.responder = lambda m, p: " 6" if p.get("grammar") else next(lines)
    rev = run(stem.review(stem_ctx(), "r1", None, PROPOSAL, []))
    assert rev.strengths == "- The proposal labels survey spectra with language agents."
    assert stem_checks.AUTO_CHECK in rev.weaknesses  # no weakness referred to the proposal
    assert "SOHO" not in rev.strengths + rev.weaknesses and "LSAs" not in rev.strengths


def test_a_review_point_must_share_a_specific_word_with_the_proposal():
    from rt_core.run.styles.stem_names import refers_to
    from rt_core.text import words

    subject = words(" ".join(PROPOSAL.answers().values()))
    assert not refers_to("The proposal is about to be submitted.", subject, stem_write.GENERIC)
    assert not refers_to("The proposal is a lot of work.", subject, stem_write.GENERIC)
    assert refers_to("The proposal labels spectra carefully.", subject, stem_write.GENERIC)


def test_the_meta_review_is_the_reviewers_points_clustered():
    reviews = [
        Review("a", "- The proposal links stellar spectra with language agents.",
               "- However, the proposal never says which survey data it uses.", 6),
        Review("b", "- The proposal connects language agents and stellar spectra well.",
               "- However, the proposal does not name its data source.", 7),
        Review("c", "- The proposal has a clear evaluation with accuracy.",
               "- However, the proposal ignores the cost of labelling.", 5),
    ]
    meta = run(stem.meta_review(stem_ctx(), PROPOSAL, reviews))
    points = {p for r in reviews for p in review_points(r.strengths) + review_points(r.weaknesses)}
    for section in (meta.strengths, meta.weaknesses):
        for ln in section.splitlines():
            body = ln.removeprefix("- ").rsplit(" (", 1)[0]
            assert body in points, body  # every line is something a reviewer said
    first_s, first_w = meta.strengths.splitlines()[0], meta.weaknesses.splitlines()[0]
    assert first_s.endswith("(2 of 3 reviewers)") and "language agents" in first_s
    assert first_w.endswith("(2 of 3 reviewers)") and "data" in first_w
    assert meta.score == 6.0 and meta.missing == []


# -- the queue in front of the embedded model ------------------------------------------------

def test_the_queue_reports_places_and_estimates():
    now = [100.0]
    q = ModelQueue(clock=lambda: now[0])
    for t in ("a", "b", "c"):
        q.join(t)
    assert q.place("a").ahead == 0
    assert q.place("c").ahead == 2
    now[0] += 15  # the first run has used 15 s of the default 45
    assert q.place("b").eta_s == pytest.approx(30) and q.place("c").eta_s == pytest.approx(75)
    q.leave("a")  # took 15 s: that is now the typical run
    assert q.typical_run_s() == pytest.approx(15)
    assert q.place("b").ahead == 0 and q.place("c") == type(q.place("c"))(1, pytest.approx(15))
    q.leave("c")  # a visitor who gives up leaves the line
    assert q.place("c") is None


def test_the_queue_serves_runs_in_the_order_they_came():
    q = ModelQueue()
    order, started = [], threading.Event()
    q.join("first")
    assert q.wait_turn("first", 0)

    def waiter(name):
        q.join(name)
        if name == "second":
            started.set()
        while not q.wait_turn(name, 5):
            pass
        order.append(name)
        q.leave(name)

    t2 = threading.Thread(target=waiter, args=("second",))
    t2.start()
    started.wait(5)
    q.join("third")  # joins after "second" has its place
    t3 = threading.Thread(target=waiter, args=("third",))
    t3.start()
    assert not q.wait_turn("third", 0)
    q.leave("first")
    t2.join(10)
    t3.join(10)
    assert order == ["second", "third"]


def test_llama_threads_drop_to_one_when_the_machine_is_busy(monkeypatch):
    monkeypatch.delenv("RT_LLAMA_THREADS", raising=False)
    assert threads_for_load(cores=2, load=0.3) == 2
    assert threads_for_load(cores=2, load=2.4) == 2  # our own two threads
    assert threads_for_load(cores=2, load=6.0) == 1
    monkeypatch.setenv("RT_LLAMA_THREADS", "3")
    assert threads_for_load(cores=2, load=6.0) == 3


def _chooser(load: float = 0.5) -> ThreadChooser:
    return ThreadChooser(cores=2, probe_every=4, loadavg=lambda: (load, load, load))


def test_the_thread_count_follows_measured_speed_and_probes_the_other_again(monkeypatch):
    monkeypatch.delenv("RT_LLAMA_THREADS", raising=False)
    ch = _chooser()
    assert ch.choose() == 2
    ch.record(2, decode_ms=2600, tokens=10)  # contended: 260 ms a token on two threads
    assert ch.choose() == 1
    ch.record(1, decode_ms=450, tokens=10)
    picks = []
    for _ in range(8):
        n = ch.choose()
        picks.append(n)
        ch.record(n, decode_ms=450 if n == 1 else 2600, tokens=10)
    assert picks.count(1) >= 6 and 2 in picks  # mostly the faster, the other tried again
    # The other process ends: two threads measure faster when next probed, and win.
    picks = []
    for _ in range(12):
        n = ch.choose()
        picks.append(n)
        ch.record(n, decode_ms=450 if n == 1 else 260, tokens=10)
    assert picks[-6:].count(2) >= 4 and picks[-6:].count(1) >= 1, picks


def test_short_calls_do_not_count_and_a_busy_machine_or_a_setting_decides_first(monkeypatch):
    monkeypatch.delenv("RT_LLAMA_THREADS", raising=False)
    ch = _chooser()
    ch.record(2, decode_ms=900, tokens=2)  # a two-token score says nothing about speed
    assert ch.ms_per_token == {}
    assert {_chooser(load=6.0).choose() for _ in range(5)} == {1}
    monkeypatch.setenv("RT_LLAMA_THREADS", "2")
    busy = _chooser(load=6.0)
    assert {busy.choose() for _ in range(5)} == {2}



def test_fewer_threads_must_generate_clearly_faster_to_be_chosen(monkeypatch):
    """Only generation is timed, reading a prompt gains most from every core, and a quiet
    run's own noise was enough for one thread to win at a 15% margin: one thread 1.6x faster
    per step keeps two threads; a contended machine's kind of win (3x) does not."""
    monkeypatch.delenv("RT_LLAMA_THREADS", raising=False)
    for one_thread_ms, expected in ((190, 2), (100, 1)):
        ch = _chooser()
        ch.record(2, decode_ms=3000, tokens=10)
        ch.record(1, decode_ms=one_thread_ms * 10, tokens=10)
        picks = [ch.choose() for _ in range(3)]
        assert picks.count(expected) >= 2, (one_thread_ms, picks)

# -- a server that is not there, a key that is not set -----------------------------------------

def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_nothing_listening_is_one_message_naming_the_url_without_retries(community, sleeps):
    from rt_core.errors import Unreachable
    from rt_core.models.retry import RetryPolicy

    url = f"http://127.0.0.1:{_closed_port()}/v1"
    client = LLMClient(ModelSettings(model="openai/x", api_key="k", base_url=url,
                                     retry=RetryPolicy(max_retries=4), timeout=5), sleep=sleeps)
    with pytest.raises(Unreachable) as info:
        run(client.complete([{"role": "user", "content": "hi"}]))
    assert f"nothing is listening at {url}" in str(info.value) and "base URL" in info.value.hint
    assert sleeps.waits == []  # never retried: a refused connection stays refused

    req = RunRequest(RunConfig(model="openai/x", base_url=url, researcher_ids=["r-ada", "r-nia", "r-cole"],
                               paper_ids=["p-gaia"], concurrency=4), keys={"model": Key("k")},
                     max_retries=4)
    done = Simulation(req, community).run_sync()
    assert done.status == "failed"
    assert len(done.errors) == 1 and "nothing is listening at" in done.errors[0].message
    assert done.errors[0].kind == "Unreachable"


def test_a_missing_key_is_caught_before_any_call(community, monkeypatch, openai_server):
    from rt_core.errors import ConfigError

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    req = RunRequest(RunConfig(model="openai/x", base_url=openai_server.base_url,
                               researcher_ids=["r-ada"], paper_ids=["p-gaia"]))
    with pytest.raises(ConfigError) as info:
        Simulation(req, community).start()
    assert openai_server.base_url in str(info.value) and "API key field" in info.value.hint
    assert openai_server.chat_requests() == []


# -- on the real embedded model ------------------------------------------------------------------

@pytest.mark.slow
def test_the_embedded_model_combines_nlp_and_astronomy(starter_store, stem_writing):
    """The issue's 'done when': with no key, the NLP + Astronomy case study gives a Q1 that
    names a concept of each field, reviews without empty sections, and a meta-review made of
    the reviewers' own points. (Reviewer choice itself is issue 10's.) On the stem path, which
    the real model writes on when the papers offer no pairing: the facets path calls no model."""
    preset = starter.preset("nlp-astronomy")
    req = RunRequest(RunConfig(researcher_ids=preset["researcher_ids"], paper_ids=preset["paper_ids"],
                               num_reviewers=3))
    sim = Simulation(req, starter_store)
    done = sim.run_sync()
    assert done.status == "done", done.errors
    concepts = sim.state.ctx.grounding.specific_words()
    q1 = grounding.words(done.proposal.q1)
    assert q1 & concepts["astronomy"] and q1 & concepts["nlp"], (done.proposal.q1, concepts)
    assert done.proposal.missing == []
    assert len(done.reviews) == 3
    for r in done.reviews:
        assert not stem_checks.section_empty(r.strengths) and not stem_checks.section_empty(r.weaknesses), r
    points = {p for r in done.reviews for p in review_points(r.strengths) + review_points(r.weaknesses)}
    for ln in (done.meta_review.strengths + "\n" + done.meta_review.weaknesses).splitlines():
        assert ln.removeprefix("- ").rsplit(" (", 1)[0] in points, ln
    for prof in done.profiles.values():  # profiles are the record, not a biography
        assert " publishes in " in prof.text and " my " not in prof.text.lower()
    again = Simulation(req, starter_store).run_sync()
    assert again.usage.calls == 0 and again.proposal.answers() == done.proposal.answers()


def test_a_second_run_on_the_one_model_waits_with_its_place_and_can_cancel(community, scripted,
                                                                           request, stem_writing):
    import time

    from rt_core.models import registry
    from rt_core.run.pipeline import jobs

    # A model served one call at a time, like the embedded one, declared as such.
    previous = registry.declare("scripted/base", registry.Capabilities(
        prompt_style=registry.STEM, in_process=True, serial=True))
    request.addfinalizer(lambda: registry.forget("scripted/base", previous))
    gate = threading.Event()

    def held(messages, params):  # the first run holds the model until the test lets go
        gate.wait(60)
        return _echo_responder(messages, params)

    scripted.responder = held
    req = _stem_request(num_reviewers=0)

    def waiting(job):
        return [e for e in job.snapshot() if e.stage == "queue" and e.status == "waiting"]

    def until(condition, job):
        deadline = time.monotonic() + 30
        while not condition() and time.monotonic() < deadline:
            job.wait(0.05)  # polls a condition; waiting runs report about once a second
        assert condition()

    first = jobs.start(req, community)
    until(lambda: any(e.stage == "queue" and e.status == "done" for e in first.snapshot()), first)
    second = jobs.start(req, community)
    until(lambda: waiting(second), second)
    third = jobs.start(req, community)
    until(lambda: waiting(third), third)
    assert waiting(second)[-1].total == 1 and "1 run ahead" in waiting(second)[-1].partial
    assert waiting(third)[-1].total == 2 and "starts in about" in waiting(third)[-1].partial
    assert not any(e.stage == "write" for e in second.snapshot())  # nothing ran yet
    third.cancel()
    assert third.wait(30) and third.run.status == "cancelled"
    assert registry.queue_for("scripted/base").place(third.run_id) is None
    gate.set()
    assert first.wait(60) and second.wait(60)
    assert first.run.status == second.run.status == "done"
    assert any(e.stage == "queue" and e.status == "done" for e in second.snapshot())


def test_a_continuation_that_jumps_to_the_next_point_is_dropped():
    """Seen on the embedded model: 'How can X help with Y' + '2. Main results: ...'."""
    assert stem_line.clean_line("2. Main results: Recombination improves galaxy clustering.") == ""
    assert stem_line.clean_line(" to map stars? 2. Why it matters: because.") == "to map stars?"
    assert stem_line.clean_line("alpine flora . 2a: What are the advantages? b- what") == "alpine flora."
    assert stem_line.clean_line("data from 2 surveys: Gaia and SDSS.") == "data from 2 surveys: Gaia and SDSS."
    assert stem_line.clean_line(" has not been studied by experts (e-mail address: x@y.com). It is new.") \
        == "has not been studied by experts. It is new."
    assert stem_line.clean_line(" is new, see www.example.org/a and mail me@lab.edu today.") \
        == "is new, see and mail today."


# -- fluency: the model's own log-probabilities ----------------------------------------------

def _reply_with_logprobs(text, pairs):
    return {"id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text},
                         "logprobs": {"content": [{"token": t, "logprob": v, "bytes": None,
                                                   "top_logprobs": []} for t, v in pairs]}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": len(pairs), "total_tokens": 3 + len(pairs)}}


def test_log_probabilities_reach_the_completion_and_are_cached_with_its_text(openai_server, store):
    from rt_core.models.client import LOGPROBS_SUFFIX, cache_key, run_async

    pairs = [(" dark", -0.5), (" matter", -1.5)]
    openai_server.enqueue((200, {}, _reply_with_logprobs(" dark matter", pairs)))
    settings = ModelSettings(model="openai/m", base_url=openai_server.base_url, api_key="k")
    msgs = [{"role": "user", "content": "What is unseen?"}]
    ask = {"max_tokens": 5, "stop": ["\n"], "extra": {"logprobs": True}}
    first = run_async(LLMClient(settings, store=store).complete(msgs, **ask))
    assert first.logprobs == tuple(pairs) and not first.cached
    again = run_async(LLMClient(settings, store=store).complete(msgs, **ask))
    assert again.cached and again.text == " dark matter" and again.logprobs == tuple(pairs)
    # A reply cached without its log-probabilities comes back with none (not made up).
    client = LLMClient(settings, store=store)
    params = {**{k: v for k, v in ask.items() if k != "extra"}, "logprobs": True,
              "temperature": settings.temperature}
    key = cache_key(settings, msgs, params)
    assert store.llm_cache.get(key + LOGPROBS_SUFFIX) is not None  # the key is the one used
    store.db.conn.execute("DELETE FROM llm_cache WHERE key=?", (key + LOGPROBS_SUFFIX,))
    bare = run_async(client.complete(msgs, **ask))
    assert bare.cached and bare.text == " dark matter" and bare.logprobs is None
    assert len(openai_server.chat_requests()) == 1


def test_mean_logprob_counts_only_the_kept_text():
    lps = ((" Stellar", -1.0), (" spectra", -2.0), (".", -0.5), (" Contact", -6.0), (" me", -6.0))
    assert stem_line.mean_logprob(lps, len("Stellar spectra.")) == pytest.approx(-3.5 / 3)
    assert stem_line.mean_logprob(None, 10) is None


def test_the_fluent_continuation_wins_among_equally_scored_ones():
    found = [(1.0, "halting line", -3.0), (1.0, "fluent line", -1.0), (1.2, "no log-probs", None)]
    # Centre -2.0: halting 1.0 - 0.5, fluent 1.0 + 0.5, no log-probs 1.2 + 0 (neither helped nor hurt).
    assert stem_write.pick(found) == "fluent line"
    assert stem_write.pick([(1.0, "a", None), (1.1, "b", None)]) == "b"  # no fluency: score alone
    assert stem_write.pick([]) is None


def test_an_answer_naming_an_invented_observatory_loses_to_one_that_does_not(scripted):
    outs = iter([" study stellar spectra with the Simons Observatory telescopes?",
                 " study stellar spectra with language agents and survey data?"])
    scripted.responder = lambda m, p: next(outs)
    papers = [Paper(id="p", title="Stellar spectra from Gaia", abstract="Gaia surveys the sky.")]
    g = grounding.Grounding(papers, _concepts={"astronomy": ["stellar spectra"]})
    ctx = stem_ctx(g)
    got = run(stem_write._best_of(ctx, "1. Research question: ", ["How can we", "How can we"],
                                  lambda t: stem_write.score_candidate(t, g, []),
                                  material="Stellar spectra from Gaia"))
    assert "Simons" not in got and "language agents" in got
    assert all(h["params"].get("logprobs") for h in scripted.history)  # asked for fluency
