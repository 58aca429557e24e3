"""The Results page's versions of an idea: the tree, one version at a time, and steering.

A finished run's proposal and candidates are the roots of a version tree
(rt_core/run/steer). The user picks a version, sees who changed what from its parent
(a word diff, shown with st.code, never as HTML), its scores and reviews, and its own
link (`?run=ID&version=VID`). Whoever may revise the run (rt_core.access, Action.STEER)
can edit one of its five answers, or comment on it as a reviewer, and the run's
reviewers (and authors, with revision rounds) continue from that version, in a
background job (rt_core/run/steer/job.py): the page stays usable and polls its progress,
a reload finds the live steer again, and when it ends its version is picked. A link names
the version it was copied on, so a refresh or a shared link opens that version again.
"""
from __future__ import annotations

import dataclasses

import streamlit as st

from rt_core import agents
from rt_core.errors import RTError
from rt_core.fiveq import BY_KEY, QUESTIONS
from rt_core.run.pipeline.validation import MAX_ROUNDS
from rt_core.run.revision.diff import diff_lines
from rt_core.run.steer import job as steer_job
from rt_core.run.steer import table
from rt_core.run.steer.cost import steer_cost, steer_expected
from rt_core.run.steer.steer import Steer, rounds_of
from rt_core.run.steer.tree import COMMENT, ROOT, YOU, Tree, Version
from rt_core.types import Run

from . import fields, polling, render, state, timing_view
from . import request as studio_request

VERSION_PARAM = "version"
EDIT, COMMENT_MODE = "Edit an answer", "Comment as a reviewer"


def _address_version() -> str:
    try:
        return (st.query_params.get(VERSION_PARAM) or "").strip()[:64]
    except Exception:  # no browser context
        return ""


def _put_in_address(vid: str) -> None:
    """The picked version in the address bar (none for the run's own proposal)."""
    try:
        if vid == ROOT:
            st.query_params.pop(VERSION_PARAM, None)
        elif st.query_params.get(VERSION_PARAM) != vid:
            st.query_params[VERSION_PARAM] = vid
    except Exception:  # no browser context
        pass


def version_url(run_id: str, vid: str) -> str:
    base = state.share_run_url(run_id)
    return base if vid == ROOT else f"{base}&{VERSION_PARAM}={vid}"


def _label(t: Tree, n: Version) -> str:
    who = "you" if n.author == YOU else "the community"
    if n.parent == "":
        what = "the run's proposal" if n.id == ROOT else f"candidate {n.id}"
    elif n.kind == COMMENT:
        what = f"{who} commented"
    else:
        what = f"{who} changed " + (", ".join(k.upper() for k in n.changed) or "nothing")
    score = "not reviewed" if n.score is None else f"mean {n.score:.2f}"
    return render.md_escape(f"{'↳ ' * t.depth(n.id)}{n.id} · {what} · {score}")


def _pick(run: Run, t: Tree, ids: list[str]) -> str:
    """The version radio; a version the address names (a link, a refresh) is picked once."""
    ss = st.session_state
    key, seen = f"steer_pick_{run.id}", f"_steer_addr_{run.id}"
    wanted = ss.pop(f"_steer_next_{run.id}", None)  # a steer just made it
    linked = _address_version()
    if wanted in ids:
        ss[key] = wanted
    elif linked and linked != ss.get(seen) and linked in ids:
        ss[key] = linked
    elif ss.get(key) not in ids:
        ss[key] = ROOT if ROOT in ids else ids[0]
    labels = {n.id: _label(t, n) for n in t.ordered()}
    vid = st.radio("Version", ids, key=key, format_func=lambda i, labels=labels: labels.get(i, i),
                   help="Each version is a node of this run's tree: who changed what, from which "
                        "version, and its reviewers' mean score.")
    ss[seen] = vid
    _put_in_address(vid)
    return vid


def _score(n: Version) -> str:
    return "—" if n.score is None else f"{n.score:.2f}"


def _show_version(t: Tree, n: Version, names: dict[str, str]) -> None:
    st.link_button("Link to this version", version_url(n.run_id, n.id), icon="🔗",
                   help="This version's own address: open it, or copy it to share (read-only for others).")
    st.caption(render.md_escape(version_url(n.run_id, n.id)))  # the address itself, to read or copy
    if n.parent:
        before = t.get(n.parent)
        st.markdown(f"**From version {render.md_escape(n.parent)}** · mean score "
                    f"{_score(n)} (was {_score(before) if before else '—'})")
        if n.kind == COMMENT:
            st.caption("Your comment, as a reviewer's:")
            render.show_text(n.note)
        for d in t.diff(n.id):
            q = BY_KEY[d.question]
            st.caption(render.md_escape(f"Q{q.number}. {q.title}"))
            st.code(diff_lines(d), language=None, wrap_lines=True)
        if n.note and n.kind != COMMENT:
            st.caption(render.md_escape(n.note))
        if n.kept:
            st.caption("Kept as you wrote it: " + ", ".join(k.upper() for k in n.kept))
    with st.expander("The five answers of this version", expanded=bool(n.parent)):
        for q in QUESTIONS:
            st.markdown(f"**Q{q.number}. {q.title}**")
            render.show_text(getattr(n.proposal, q.key) or "(missing)")
    if not n.parent:
        return
    for r in n.reviews:
        who = "You" if r.reviewer_id == YOU else names.get(r.reviewer_id, r.reviewer_id)
        score = "no score" if r.score is None else f"score {r.score}"
        with st.expander(f"Review by {render.md_escape(who)} · {score}", expanded=True):
            if r.strengths:
                st.markdown("**Strengths**")
                render.show_text(r.strengths)
            st.markdown("**Weaknesses**")
            render.show_text(r.weaknesses or "(missing)")


def _steer_form(run: Run, store, t: Tree, n: Version) -> None:
    st.subheader("Steer from this version")
    st.caption("Change one answer, or comment as a reviewer would: the run's reviewers review "
               "your version (and with revision rounds the authors revise it). Your text is "
               "kept as written unless you let the authors change it.")
    mode = st.radio("How", (EDIT, COMMENT_MODE), key=f"steer_mode_{run.id}", horizontal=True)
    question, text, comment = None, "", ""
    if mode == EDIT:
        question = st.selectbox("Answer", [q.number for q in QUESTIONS], key=f"steer_q_{run.id}",
                                format_func=lambda i: f"Q{i}. {QUESTIONS[i - 1].title}")
        text = st.text_area("Your answer", value=getattr(n.proposal, f"q{question}"), height=120,
                            key=f"steer_text_{run.id}_{n.id}_{question}")
    else:
        comment = st.text_area("Your comment", key=f"steer_comment_{run.id}_{n.id}", height=120)
    c1, c2 = st.columns(2)
    rounds = fields.bounded_number("Revision rounds after the reviews", f"steer_rounds_{run.id}_{mode}",
                                   0, MAX_ROUNDS, 1 if mode == COMMENT_MODE else 0, where=c1)
    allow = c2.checkbox("Let the authors rewrite my text too", key=f"steer_allow_{run.id}")
    if rounds is None:  # outside 0..MAX_ROUNDS: the field says why; nothing starts
        return
    wish = Steer(n.id, question, text if mode == EDIT else "", comment, int(rounds), allow)
    config = dataclasses.replace(run.config, **studio_request.typed_caps())
    reviewers = len({r.reviewer_id for r in t.path(n.id)[0].reviews if r.reviewer_id != YOU})
    st.caption(render.md_escape(steer_cost(config, reviewers, rounds_of(wish), store).summary()))
    timing_view.expected_caption(steer_expected(config, reviewers, rounds_of(wish), store), "This steer")
    if not st.button("Steer", key=f"steer_go_{run.id}", type="primary"):
        return
    try:
        job = steer_job.start(store, run.id, wish, config=config, request_for=studio_request.request_for)
    except RTError as exc:
        render.show_error(exc)
        return
    st.session_state.setdefault("_steer_jobs", {})[run.id] = job
    st.rerun()


# -- a steer in the background (rt_core/run/steer/job.py) ------------------------------------
def _follow(run: Run, running) -> None:
    """A steer this session started or watched running: once it is done, its last version
    is picked and how it ended is said (once). Called before the tree is read, which then
    holds the new nodes (the job stores them before it ends)."""
    ss = st.session_state
    mine = ss.setdefault("_steer_jobs", {})
    if running is not None:
        mine[run.id] = running  # a reload, or another tab, watches the live steer too
    followed = mine.get(run.id)
    if followed is None or not followed.done:
        return
    del mine[run.id]
    done = followed.steered
    if done is not None:
        ss[f"_steer_next_{run.id}"] = done.last.id
        if done.stopped:
            render.flash("info", render.md_escape(done.stopped), where="steer")
    if followed.error is not None:
        hint = render.app_hint(followed.error)
        render.flash("error", render.md_escape(f"{followed.error}" + (f". {hint}" if hint else "")), where="steer")
    if followed.unexpected:
        render.flash("error", render.md_escape(f"The steer stopped unexpectedly: {followed.unexpected}"),
                     where="steer")


def _progress(run_id: str, names: dict[str, str]) -> None:
    """The live steer's progress, polled while its job runs; one whole-page rerun when it
    ends, so the tree shows its version."""
    job = steer_job.live(run_id)
    if job is None:
        return
    if job.done:
        st.rerun()
    done = job.steps_done()
    # Not `with st.status(...)`: leaving that block marks the status complete, which drew a
    # check mark beside a steer still running; a plain container inside keeps "running".
    with st.status("The community is reading your version…", state="running", expanded=True).container():
        st.progress(min(1.0, done / max(1, job.steps)), text=f"{done} of about {job.steps} steps done")
        if job.expected is not None:
            timing_view.expected_caption(job.expected, "This steer")
        for e in job.snapshot()[-4:]:
            who = agents.label(e.agent, names)
            render.show_text(f"{who}: {e.status}" + (f" ({render.short(e.partial, 120)})" if e.partial else ""))


def _steering(run: Run, names: dict[str, str]) -> None:
    st.subheader("Steering this run")
    st.caption("The community continues from your version in the background: this page stays "
               "usable, and the new version appears in the tree above when it is done (also after "
               "a reload).")
    st.fragment(_progress, run_every=polling.every(False))(run.id, names)


def show(run: Run, store, may_steer: bool, names: dict[str, str]) -> None:
    """The versions section: nothing for a run with no proposal yet."""
    if run.proposal is None and not run.candidates:
        return
    job = steer_job.live(run.id)
    running = job is not None and not job.done  # once: a job ending mid-page is seen by its fragment
    _follow(run, job if running else None)
    try:
        t = table.tree_of(store, run)
    except RTError as exc:
        render.show_error(exc)
        return
    nodes = t.ordered()
    if not nodes:
        return
    st.header("Versions")
    st.caption(f"{len(nodes)} version{'s' * (len(nodes) != 1)} of this idea. Pick one to see what "
               "changed and its reviews" + (", or steer from it." if may_steer else "."))
    render.show_flashes("steer")
    vid = _pick(run, t, [x.id for x in nodes])
    node = t.get(vid)
    _show_version(t, node, names)
    if running:
        _steering(run, names)
    elif may_steer and run.status == "done":
        _steer_form(run, store, t, node)
