"""Per-browser-session state: its schema, neighbourhood edits, share links, live runs.

Everything here lives in st.session_state only (never the shared store): the
neighbourhood, the Run page's settings, a key the user typed, the jobs it controls.
A refresh starts a new session, so what ties a browser to a run is its address
(`?run=ID`), the process-wide jobs of `rt_core.run.pipeline.jobs`, and the browser's owner cookie
(studio.identity), never this session alone. Who may see or change a run is asked of
rt_core.access through `may`, never decided here.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterable
from urllib.parse import urlencode, urlsplit, urlunsplit

import streamlit as st

from rt_core import access_store
from rt_core.access import Action, Decision
from rt_core.errors import NotFoundError
from rt_core.types import MODES, Run, RunConfig

from . import identity, loop_settings, rater_session, request, run_fields
from .resources import get_store

PAGES = {
    "neighbourhood": "pages/neighbourhood.py",
    "run": "pages/run.py",
    "results": "pages/results.py",
    "replay": "pages/replay.py",
    "history": "pages/history.py",
    "ideas": "pages/ideas.py",
    "settings": "pages/settings.py",
    "study_create": "pages/study_create.py",
    "study_rate": "pages/study_rate.py",
    "study_results": "pages/study_results.py",
}
# The address of each page (`/results`, `/history`...), so a typed or shared path opens it.
URL_PATHS = {"neighbourhood": "neighbourhood", "run": "run", "results": "results",
             "replay": "replay", "history": "history", "ideas": "ideas", "settings": "settings",
             "study_create": "study_create", "study_rate": "study_rate", "study_results": "study_results"}

# The Run page's settings with their defaults. Every widget keyed by one of them draws
# with persist_state=studio.persist.ACROSS_PAGES, so its value survives other pages.
PERSISTENT = {
    "provider": "Embedded offline demo model",
    "reviewer_choice": run_fields.CLOSEST_REVIEWERS,
    "use_cutoff": False,
    **run_fields.defaults(),  # every option of the settings schema
    **loop_settings.DEFAULTS,
}


def joining_study() -> bool:
    """A rater arrived through a study's join link (`?study=CODE`): the rating page is then
    this session's default page, so the root address opens it. The session stays a rater's
    when the code leaves the address (the root typed over it): the rest of the app names
    runs, models and arms, and so does a reload of this browser (rater_session's cookie).
    Only the organiser (its link's token, or a study this session has unlocked) gets the
    whole app back, or whoever leaves the study on its page (`leave_study`)."""
    ss = st.session_state
    try:
        code, organiser = st.query_params.get("study"), st.query_params.get("organiser", "")
    except Exception:  # no browser context
        return False
    if code:  # read once, then out of the address (a screen shared or projected shows no code)
        ss["_joined_as_rater"], ss["_rate_code"] = True, code
        ss.pop("_left_study", None)
        del st.query_params["study"]
        return True
    if organiser and get_store().studies.by_organiser_token(organiser) is not None:
        ss.pop("_joined_as_rater", None)
        ss["_organiser"] = True  # this session, even in a browser that once joined as a rater
        ss["_forget_rater"] = rater_session.joined_before()  # app.py takes the cookie away
        return False
    if ss.get("_organiser") or ss.get("_left_study"):  # left: the cookie read at connect is stale
        return False
    rater = ss.get("_joined_as_rater") or rater_session.joined_before()  # a reload: a new session
    return bool(rater) and not ss.get("study_unlocked")


def leave_study() -> None:
    """"Leave this study": forget this session's rater (its study, id and join code) and take
    the rater cookie away (app.py, on the next run), so this browser gets the app every visitor
    gets, which rt_core.access limits as for anybody else. Made for the operator who tried the
    rater link and was held on the rating page; any rater may do the same."""
    ss = st.session_state
    for k in ("rate_study", "rate_rater", "_rate_code", "_joined_as_rater"):
        ss.pop(k, None)
    ss["_left_study"] = ss["_forget_rater"] = ss["_left_study_now"] = True


FROM_IDEA = request.FROM_IDEA  # the idea the neighbourhood was seeded from, stored with the run


def init_state() -> None:
    ss = st.session_state
    ss.setdefault("hood_r", [])  # researcher ids in the neighbourhood
    ss.setdefault("hood_p", [])  # paper ids in the neighbourhood
    ss.setdefault("jobs", {})  # run id -> rt_core.run.pipeline.jobs.Job
    ss.setdefault("session_runs", [])  # run ids started in this session, oldest first
    for key, default in PERSISTENT.items():
        ss.setdefault(key, default)
    apply_query_params()


def _hood_key(kind: str) -> str:
    return "hood_r" if kind == "researcher" else "hood_p"


def add_to_hood(kind: str, ids: Iterable[str]) -> None:
    key = _hood_key(kind)
    st.session_state[key] = list(dict.fromkeys([*st.session_state[key], *ids]))


def remove_from_hood(kind: str, ids: Iterable[str]) -> None:
    key = _hood_key(kind)
    drop = set(ids)
    st.session_state[key] = [i for i in st.session_state[key] if i not in drop]


def set_hood(researcher_ids: list[str], paper_ids: list[str]) -> None:
    st.session_state.pop(FROM_IDEA, None)  # a neighbourhood loaded anew continues no idea
    st.session_state["hood_r"] = list(dict.fromkeys(researcher_ids))
    st.session_state["hood_p"] = list(dict.fromkeys(paper_ids))


# -- share links (query params) ------------------------------------------------------
def share_params() -> dict[str, str]:
    """The run configuration as query params: ids, model name (never a key), mode, reviewers."""
    ss = st.session_state
    out = {"r": ",".join(ss["hood_r"]), "p": ",".join(ss["hood_p"]), "model": ss["model"],
           "mode": ss["mode"], "n": str(ss["num_reviewers"])}
    if ss["reviewer_choice"] == request.NAMED_REVIEWERS and ss["reviewer_ids"]:
        out["reviewers"] = ",".join(ss["reviewer_ids"])
    return {k: v for k, v in out.items() if v}


def share_url(params: dict[str, str]) -> str:
    try:
        base = st.context.url or ""
    except Exception:  # no browser context (tests)
        base = ""
    base = base.split("?", 1)[0] or "http://localhost:8501/"
    return f"{base}?{urlencode(params)}"


def _split(value: str) -> list[str]:
    return [x for x in (value or "").split(",") if x.strip()]


def apply_query_params() -> None:
    """Restore a shared configuration once per browser session; unknown ids are dropped."""
    ss = st.session_state
    if ss.get("_qp_applied"):
        return
    ss["_qp_applied"] = True
    try:
        qp = st.query_params.to_dict()
    except Exception:
        return
    if not any(k in qp for k in ("r", "p", "model", "mode")):
        return
    corpus = get_store().corpus
    rids = [i for i in _split(qp.get("r", "")) if corpus.researcher_exists(i)]
    pids = [i for i in _split(qp.get("p", "")) if corpus.paper_exists(i)]
    set_hood(rids, pids)
    if qp.get("model") and request.shareable_model(qp["model"]):
        ss["model"] = qp["model"][:200]
        ss["provider"] = request.provider_for_model(ss["model"])
    if qp.get("mode") in MODES:
        ss["mode"] = qp["mode"]
    if (qp.get("n") or "").isdigit():
        ss["num_reviewers"] = max(0, min(10, int(qp["n"])))
    reviewers = [i for i in _split(qp.get("reviewers", "")) if corpus.researcher_exists(i)]
    if reviewers:
        ss["reviewer_choice"] = request.NAMED_REVIEWERS
        ss["reviewer_ids"] = [r for r in reviewers if r not in rids]
    ss["_qp_restored"] = f"{len(rids)} researchers and {len(pids)} papers"


# -- runs and their addresses ---------------------------------------------------------------
RUN_PARAM = "run"


def linked_run() -> str:
    """The run this browser's address names (`?run=ID`), or ''."""
    try:
        return (st.query_params.get(RUN_PARAM) or "").strip()[:64]
    except Exception:  # no browser context
        return ""


def new_linked_run() -> str:
    """The run the address names, if this session did not put it there itself: a refresh,
    a link, History's open. A run the page already shows stays in the address until the
    page moves on, so it must not pull the page back when the user picks another run."""
    linked = linked_run()
    return linked if linked and linked != st.session_state.get("_addr_run") else ""


def run_pick(wanted: str | None, picked: str | None, last: str | None, options: list[str]) -> str:
    """Which run the Results page shows: one just asked for (History's open, a new link),
    else the user's own choice in the Run box, else the run shown before the page was left
    (Streamlit forgets a widget's value on another page), else the newest. The choice comes
    before the last run shown: the other way round, the box snapped back on every pick."""
    for i in (wanted, picked, last):
        if i and i in options:
            return i
    return options[0]


def show_run_in_address(run_id: str) -> None:
    """Put the run in the address bar, so a refresh or a copied link comes back to it. The
    address proves nothing about who started the run (the owner cookie does), so it is the
    same link for everybody."""
    st.session_state["_addr_run"] = run_id
    try:
        if st.query_params.get(RUN_PARAM) != run_id:
            st.query_params[RUN_PARAM] = run_id
    except Exception:  # no browser context
        pass


def clear_run_address() -> None:
    """The page no longer shows a run (a start that failed): the address says so too."""
    st.session_state.pop("_addr_run", None)
    with contextlib.suppress(Exception):  # no browser context
        st.query_params.pop(RUN_PARAM, None)


def share_run_url(run_id: str, page: str = "results") -> str:
    """A link to one run: read-only for anybody but its owner and the operator."""
    try:
        base = st.context.url or ""
    except Exception:  # no browser context (tests)
        base = ""
    parts = urlsplit(base.split("?", 1)[0] or "http://localhost:8501/")
    path = [p for p in parts.path.split("/") if p]
    if path and path[-1] in URL_PATHS.values():
        path = path[:-1]  # the app's root, wherever it is mounted
    root = urlunsplit((parts.scheme, parts.netloc, "/".join(["", *path]), "", "")).rstrip("/")
    return f"{root}/{URL_PATHS[page]}?{urlencode({RUN_PARAM: run_id})}"


def _live(run_id: str):
    if not run_id:
        return None
    from rt_core.run.pipeline import jobs  # noqa: PLC0415  (slow: pages without runs skip it)

    return jobs.live(run_id)


def _own(run_id: str):
    """This session's job of the run, unless the run was deleted after it finished
    (rt_core.run.pipeline.jobs.present: the store is the truth, whoever deleted it)."""
    job = st.session_state.get("jobs", {}).get(run_id)
    if job is None or not job.done:
        return job
    from rt_core.run.pipeline import jobs  # noqa: PLC0415  (slow: pages without runs skip it)

    return jobs.present(job)


def may(action: Action, run_id: str, linked: bool = False) -> Decision:
    """What rt_core.access says this browser may do with the run (`linked`: it came through
    the run's own link); the live job's owner counts for a run not stored yet."""
    job = _own(run_id) or _live(run_id)
    return access_store.decide(get_store(), identity.viewer(), action, run_id, linked,
                               live_owner=job.owner_hash if job is not None else None)


def adopt_linked_run() -> None:
    """After a refresh, a browser that may control the live run its address names (the one
    that started it, by its owner cookie, or the operator) takes the run's controls back;
    any other visitor only watches it. app.py calls it once the browser is known."""
    ss = st.session_state
    run_id = linked_run()
    if not run_id or run_id in ss["jobs"]:
        return
    job = _live(run_id)
    # A live run only: a finished one is read from the store, and its settings must not be
    # written over what this session has typed since (the controls come from `may` anyway).
    if job is None or job.done or not may(Action.CANCEL, run_id, linked=True):
        return
    ss["jobs"][run_id] = job
    if run_id not in ss["session_runs"]:
        ss["session_runs"].append(run_id)
    ss.setdefault("current_run", run_id)
    ss.setdefault(f"_final_{run_id}", job.done)
    restore_settings(job.run.config)


def restore_settings(config: RunConfig) -> None:
    """The refreshed page shows the settings the run was started with: its neighbourhood
    and every option the schema stores (studio.run_fields.session_values), not the defaults
    of a new session. A typed key is not among them: it lived in the old session only (the
    running job still holds it), and neither is the timeout, which a run does not store."""
    ss = st.session_state
    if not (ss["hood_r"] or ss["hood_p"]):
        set_hood(config.researcher_ids, config.paper_ids)
    ss.update(run_fields.session_values(config))
    ss["provider"] = request.provider_for_model(config.model)


def job_for(run_id: str):
    """The job of a run: this session's own, else a live one of this process that another
    session started (to watch, not to control), else None."""
    return _own(run_id) or _live(run_id)


def owns(run_id: str) -> bool:
    """This browser may change the run (rt_core.access): it started it, or it is the operator's,
    or the server is personal. Kept by a refresh and a browser restart (the owner cookie)."""
    return bool(may(Action.REVISE, run_id))


def get_run(store, run_id: str) -> Run:
    """A run of this session (live, from its job) or from the store (no model call). Another
    session's job is only a fallback: the store has what was done to its run since."""
    own = _own(run_id)
    if own is not None and own.done:
        return own.run
    job = own or _live(run_id)
    # A live run changes in another thread; read its last saved state instead.
    try:
        return store.runs.load(run_id)
    except NotFoundError:
        if job is None:
            raise
        return Run(id=run_id, config=job.run.config, status="running",
                   created_at=job.run.created_at)


def _follow(run_id: str, job) -> None:
    """This session follows a job that continues a stored run (a resume or a revision):
    it becomes the current run, and its finished panel and bars start afresh."""
    ss = st.session_state
    ss["jobs"][run_id] = job
    if run_id not in ss["session_runs"]:
        ss["session_runs"].append(run_id)
    ss["current_run"] = run_id
    ss.pop(f"_final_{run_id}", None)
    ss.pop(f"_bars_{run_id}", None)


def revise_run(store, run_id: str, extra: int, request_for, **caps) -> None:
    """Give a finished run more revision rounds in a background job of this session
    (rt_core.run.pipeline.jobs.start_revision); `request_for` makes the request with the keys of
    the one precedence in studio.request for the run's own model and base URL; `caps`
    (max_tokens, max_cost) bound the new calls."""
    from rt_core.run.pipeline import jobs  # noqa: PLC0415  (pages that never revise skip the import)

    _follow(run_id, jobs.start_revision(store, run_id, extra, request_for=request_for, **caps))


def resume_run(store, run_id: str) -> None:
    """Resume a stored run in this session (same request, same id; the cache makes every
    call that had succeeded free) and follow it on the Run page. The keys come from the
    one precedence in studio.request, for the run's own model and base URL."""
    from rt_core.run.pipeline import jobs  # noqa: PLC0415  (pages that never resume skip the import)

    run = store.runs.load(run_id)
    _follow(run_id, jobs.start(request.resume_request(run.config), store, resume_id=run_id,
                               owner_hash=identity.owner_hash()))
