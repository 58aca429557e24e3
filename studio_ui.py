"""Shared pieces of the Streamlit app: cached resources, session state, safe rendering.

Every piece of text that came from a model, a paper source or an upload is
untrusted. It is shown with `show_text` (st.text: no Markdown, no HTML) or, in
places where Streamlit parses Markdown (labels, captions), after `md_escape`.
Plotly hover labels go through `plot_escape`. Nothing here uses
unsafe_allow_html.

Per-browser-session state (the neighbourhood, model settings, an API key the
user typed, running jobs) lives in st.session_state only; the store is shared.
"""
from __future__ import annotations

import os
import re
import sys
from typing import Any, Iterable
from urllib.parse import urlencode

import streamlit as st

from rt_core import config as rt_config
from rt_core.config import LOCAL_EMBEDDER, LOCAL_MODEL, ModelSettings, env_key_for
from rt_core.errors import NotFoundError, RTError
from rt_core.types import Paper, Researcher, Run, RunConfig

PAPER_URL = "https://arxiv.org/abs/2412.17767"

PAGES = {
    "neighbourhood": "pages/neighbourhood.py",
    "run": "pages/run.py",
    "results": "pages/results.py",
    "history": "pages/history.py",
    "settings": "pages/settings.py",
}

# -- provider presets ----------------------------------------------------------------
SCRIPTED_PRESET = "Scripted demo model (tests and demos, no real model)"
PROVIDERS: dict[str, dict[str, str]] = {
    "Embedded offline demo model": {"model": LOCAL_MODEL, "base_url": ""},
    "OpenAI": {"model": "gpt-4o-mini", "base_url": ""},
    "Anthropic": {"model": "anthropic/claude-3-5-haiku-latest", "base_url": ""},
    "DeepSeek": {"model": "deepseek/deepseek-chat", "base_url": ""},
    "Together": {"model": "together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo", "base_url": ""},
    "Ollama (local server)": {"model": "ollama/llama3.1", "base_url": "http://localhost:11434"},
    "Any OpenAI-compatible URL": {"model": "openai/my-model", "base_url": "http://localhost:8000/v1"},
}
EMBEDDERS = [LOCAL_EMBEDDER, "text-embedding-3-large", "text-embedding-3-small", "voyage/voyage-3"]
MODE_HELP = {
    "global": "Researchers and papers together: the full method (recommended).",
    "agent": "Researchers only: each author writes from their profile, without the chosen papers.",
    "data": "Papers only: one agent with no persona reads all chosen papers.",
    "self": "No neighbourhood at all: a baseline that writes from nothing.",
}


def scripted_available() -> bool:
    """The scripted fake model is registered in this process (RT_SCRIPTED=demo or a test)."""
    mod = sys.modules.get("rt_core.scripted")
    return os.environ.get("RT_SCRIPTED") == "demo" or getattr(mod, "_instance", None) is not None


def provider_names() -> list[str]:
    names = list(PROVIDERS)
    if scripted_available():
        names.append(SCRIPTED_PRESET)
    return names


def provider_defaults(name: str) -> dict[str, str]:
    if name == SCRIPTED_PRESET:
        return {"model": "scripted/demo", "base_url": ""}
    return PROVIDERS.get(name, PROVIDERS["Embedded offline demo model"])


# -- cached resources ----------------------------------------------------------------
@st.cache_resource(show_spinner="Opening the store and loading the starter community...")
def _store_at(path: str):
    from rt_core import community  # noqa: PLC0415
    from rt_core.store import open_store  # noqa: PLC0415

    store = open_store(path)
    community.ensure_loaded(store)
    store.mark_interrupted()  # runs a previous server process left 'running'
    return store


@st.cache_data(show_spinner=False, ttl=60)
def _paper_choices(path: str, version: int) -> dict[str, str]:
    return _store_at(path).paper_choices()


def paper_choices(store) -> dict[str, str]:
    """id -> title of the store's papers, for pickers (one query, cached briefly)."""
    return _paper_choices(str(store.path), store.counts()["papers"])


def get_store():
    """The shared store for this process (keyed by path, so tests can point elsewhere)."""
    return _store_at(str(rt_config.db_path()))


@st.cache_data(show_spinner=False)
def _presets() -> list[dict]:
    from rt_core import community  # noqa: PLC0415

    return community.presets()


def presets() -> list[dict]:
    return _presets()


# -- session state -------------------------------------------------------------------
# Widget values that must survive page switches (Streamlit drops the state of
# widgets that a run does not draw, unless it is re-assigned on every run).
PERSISTENT = {
    "provider": "Embedded offline demo model",
    "model": LOCAL_MODEL,
    "api_key": "",
    "base_url": "",
    "temperature": 0.0,
    "embedder": LOCAL_EMBEDDER,
    "embedder_key": "",
    "mode": "global",
    "reviewer_choice": "Most relevant researchers",
    "num_reviewers": 3,
    "reviewer_ids": [],
    "use_cutoff": False,
    "cutoff_year": 2024,
    "reference_id": "",
}


def init_state() -> None:
    ss = st.session_state
    ss.setdefault("hood_r", [])  # researcher ids in the neighbourhood
    ss.setdefault("hood_p", [])  # paper ids in the neighbourhood
    ss.setdefault("jobs", {})  # run id -> rt_core.jobs.Job
    ss.setdefault("session_runs", [])  # run ids started in this session, oldest first
    for key, default in PERSISTENT.items():
        if key in ss:
            ss[key] = ss[key]  # keep widget state alive across pages
        else:
            ss[key] = default
    apply_query_params()


def add_to_hood(kind: str, ids: Iterable[str]) -> None:
    key = "hood_r" if kind == "researcher" else "hood_p"
    cur = list(st.session_state[key])
    for i in ids:
        if i not in cur:
            cur.append(i)
    st.session_state[key] = cur


def remove_from_hood(kind: str, ids: Iterable[str]) -> None:
    key = "hood_r" if kind == "researcher" else "hood_p"
    drop = set(ids)
    st.session_state[key] = [i for i in st.session_state[key] if i not in drop]


def set_hood(researcher_ids: list[str], paper_ids: list[str]) -> None:
    st.session_state["hood_r"] = list(dict.fromkeys(researcher_ids))
    st.session_state["hood_p"] = list(dict.fromkeys(paper_ids))


# -- share links (query params) ------------------------------------------------------
def share_params() -> dict[str, str]:
    """The run configuration as query params: ids, model name (never a key), mode, reviewers."""
    ss = st.session_state
    out = {"r": ",".join(ss["hood_r"]), "p": ",".join(ss["hood_p"]), "model": ss["model"],
           "mode": ss["mode"], "n": str(ss["num_reviewers"])}
    if ss["reviewer_choice"] == "Named reviewers" and ss["reviewer_ids"]:
        out["reviewers"] = ",".join(ss["reviewer_ids"])
    return {k: v for k, v in out.items() if v}


def share_url(params: dict[str, str]) -> str:
    base = ""
    try:
        base = st.context.url or ""
    except Exception:  # older Streamlit or no browser context (tests)
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
    store = get_store()
    rids = [i for i in _split(qp.get("r", "")) if store.researcher_exists(i)]
    pids = [i for i in _split(qp.get("p", "")) if store.paper_exists(i)]
    set_hood(rids, pids)
    if qp.get("model") and _shareable_model(qp["model"]):
        ss["model"] = qp["model"][:200]
        ss["provider"] = _provider_for_model(ss["model"])
    if qp.get("mode") in MODE_HELP:
        ss["mode"] = qp["mode"]
    if (qp.get("n") or "").isdigit():
        ss["num_reviewers"] = max(0, min(10, int(qp["n"])))
    reviewers = [i for i in _split(qp.get("reviewers", "")) if store.researcher_exists(i)]
    if reviewers:
        ss["reviewer_choice"] = "Named reviewers"
        ss["reviewer_ids"] = [r for r in reviewers if r not in rids]
    ss["_qp_restored"] = f"{len(rids)} researchers and {len(pids)} papers"


def _shareable_model(model: str) -> bool:
    """A link may name a hosted model or the bundled one, never a file on this server."""
    if model.startswith("local/"):
        return model == LOCAL_MODEL
    return not model.startswith("scripted/") or "scripted" in _registered_providers()


def _registered_providers() -> set[str]:
    llm = sys.modules.get("rt_core.llm")  # only if something already imported litellm
    return set(getattr(llm, "_providers", {}) or {}) if llm else set()


def _provider_for_model(model: str) -> str:
    for name in provider_names():
        if provider_defaults(name)["model"] == model:
            return name
    if model.startswith("ollama/"):
        return "Ollama (local server)"
    if model.startswith("openai/"):
        return "Any OpenAI-compatible URL"
    for name, d in PROVIDERS.items():
        if d["model"].split("/")[0] == model.split("/")[0] and "/" in model:
            return name
    return "OpenAI" if "/" not in model else "Any OpenAI-compatible URL"


# -- keys and settings ----------------------------------------------------------------
def secret_key_for(model: str) -> str:
    """A key from .streamlit/secrets.toml, read defensively (the file may not exist)."""
    var = rt_config.PROVIDER_KEY_ENV.get(rt_config.provider_of(model))
    if not var:
        return ""
    try:
        value = st.secrets.get(var, "")
        return str(value or "")
    except Exception:  # StreamlitSecretNotFoundError and friends: no secrets file
        return ""


def key_source(model: str, base_url: str | None = None) -> tuple[str, str]:
    """(key, where it came from): typed in this session, the environment, or secrets.
    A typed key belongs to the model and base URL it was typed for; another run's
    settings (e.g. a stored run from another session) never get it."""
    ss = st.session_state
    typed = ss.get("api_key", "")
    same_target = model == ss.get("model", "").strip() and (
        base_url is None or (base_url or "").strip() == (ss.get("base_url") or "").strip())
    if typed and same_target:
        return typed, "typed in this browser session"
    env = env_key_for(model)
    if env:
        var = rt_config.PROVIDER_KEY_ENV.get(rt_config.provider_of(model), "")
        return env, f"environment variable {var}"
    sec = secret_key_for(model)
    if sec:
        return sec, "Streamlit secrets"
    return "", ""


def model_settings() -> ModelSettings:
    ss = st.session_state
    key, _ = key_source(ss["model"])
    return ModelSettings(model=ss["model"].strip(), api_key=key, base_url=ss["base_url"].strip(),
                         temperature=float(ss["temperature"]))


def embedder_for(store):
    """The embedder chosen in the Run settings (with its key, if any)."""
    from rt_core.embed import Embedder  # noqa: PLC0415

    ss = st.session_state
    name = ss["embedder"]
    key = ""
    if not name.startswith("local/"):
        key = ss.get("embedder_key") or env_key_for(name) or secret_key_for(name)
    return Embedder(name, store=store, api_key=key)


def run_config() -> RunConfig:
    ss = st.session_state
    named = ss["reviewer_choice"] == "Named reviewers"
    return RunConfig(
        researcher_ids=list(ss["hood_r"]), paper_ids=list(ss["hood_p"]),
        model=ss["model"].strip(), base_url=ss["base_url"].strip(),
        temperature=float(ss["temperature"]), mode=ss["mode"],
        num_reviewers=len(ss["reviewer_ids"]) if named else int(ss["num_reviewers"]),
        reviewer_ids=list(ss["reviewer_ids"]) if named else [],
        cutoff_year=int(ss["cutoff_year"]) if ss["use_cutoff"] else None,
        reference_paper_id=ss["reference_id"] or "", embedder=ss["embedder"])


# -- safe rendering -------------------------------------------------------------------
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=^&])")


def md_escape(text: Any) -> str:
    """Text that Streamlit's Markdown shows literally: every special character escaped
    (no links, images, HTML, LaTeX, colour directives or icons), newlines flattened."""
    s = " ".join(str(text if text is not None else "").split())
    return _MD_SPECIAL.sub(r"\\\1", s)


def plot_escape(text: Any, limit: int = 120) -> str:
    """Plotly renders a little HTML in labels; escape it so '<b>' shows as '<b>'."""
    s = str(text if text is not None else "")
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def show_text(text: Any, key: str | None = None) -> None:
    """Untrusted text as plain text (st.text never parses Markdown or HTML)."""
    st.text(str(text if text is not None else ""))


def act(spinner: str, action) -> None:
    """Run a page action under a spinner; on success rerun the page to show its result,
    on failure show the error as a message (never a traceback)."""
    try:
        with st.spinner(spinner):
            action()
    except Exception as exc:
        show_error(exc)
        return
    st.rerun()


def show_error(exc: BaseException) -> None:
    """An RTError as message + hint; anything else with its type."""
    # Messages can quote user or provider text (titles, server replies): escape them.
    if isinstance(exc, RTError):
        st.error(md_escape(exc), icon="⚠️")
        if exc.hint:
            st.info(md_escape(exc.hint), icon="💡")
    else:
        st.error(md_escape(f"Unexpected error: {type(exc).__name__}: {exc}"), icon="⚠️")


def short(text: str, n: int = 90) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= n else s[: n - 1] + "…"


# -- community graph --------------------------------------------------------------
_FIELD_COLOURS = ["#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2", "#EECA3B", "#B279A2",
                  "#FF9DA6", "#9D755D", "#BAB0AC", "#1F77B4", "#2CA02C"]
_EDGE_STYLE = {"author": ("#9aa0a6", "solid"), "cite": ("#4C78A8", "dot"),
               "review": ("#E45756", "dash")}


def graph_figure(g, field_names: dict[str, str] | None = None, height: int = 460):
    """A plotly figure of a community graph (networkx spring layout, seed 0)."""
    import networkx as nx  # noqa: PLC0415
    import plotly.graph_objects as go  # noqa: PLC0415

    field_names = field_names or {}
    pos = nx.spring_layout(nx.Graph(g.to_undirected()), seed=0) if len(g) else {}
    fig = go.Figure()
    for kind, (colour, dash) in _EDGE_STYLE.items():
        xs: list[float | None] = []
        ys: list[float | None] = []
        for u, v, data in g.edges(data=True):
            if data.get("kind") != kind:
                continue
            xs += [pos[u][0], pos[v][0], None]
            ys += [pos[u][1], pos[v][1], None]
        if xs:
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=f"{kind} edges",
                                     line={"color": colour, "width": 1.2, "dash": dash},
                                     hoverinfo="skip"))
    groups: dict[tuple[str, str], list[str]] = {}
    for n, data in g.nodes(data=True):
        fields = data.get("fields") or []
        group = fields[0] if fields else ("generated" if data.get("kind") == "proposal" else "other")
        groups.setdefault((group, data.get("kind", "paper")), []).append(n)
    field_order = sorted({f for f, _ in groups})
    symbols = {"researcher": "circle", "paper": "square", "proposal": "star"}
    for (fld, kind), nodes in sorted(groups.items()):
        colour = "#000000" if kind == "proposal" else _FIELD_COLOURS[field_order.index(fld) % len(_FIELD_COLOURS)]
        hover = []
        for n in nodes:
            d = g.nodes[n]
            label = plot_escape(d.get("label") or n)
            hover.append(f"{label}<br>{kind} · {plot_escape(field_names.get(fld, fld))}")
        fig.add_trace(go.Scatter(
            x=[pos[n][0] for n in nodes], y=[pos[n][1] for n in nodes], mode="markers",
            name=f"{plot_escape(field_names.get(fld, fld))} ({kind}s)",
            marker={"size": 22 if kind == "proposal" else (14 if kind == "researcher" else 10),
                    "symbol": symbols.get(kind, "circle"), "color": colour,
                    "line": {"width": 1, "color": "#ffffff"}},
            hovertext=hover, hoverinfo="text"))
    fig.update_layout(height=height, margin={"l": 10, "r": 10, "t": 10, "b": 10},
                      xaxis={"visible": False}, yaxis={"visible": False},
                      legend={"font": {"size": 11}}, plot_bgcolor="rgba(0,0,0,0)")
    return fig


def field_names(store) -> dict[str, str]:
    return {f["id"]: f["name"] for f in store.list_fields()}


# -- runs ---------------------------------------------------------------------------
def get_run(store, run_id: str) -> Run:
    """A run of this session (live, from its job) or from the store (no model call)."""
    job = st.session_state["jobs"].get(run_id)
    if job is not None and job.done:
        return job.run
    # A live run changes in another thread; read its last saved state instead.
    try:
        return store.load_run(run_id)
    except NotFoundError:
        if job is None:
            raise
        return Run(id=run_id, config=job.run.config, status="running",
                   created_at=job.run.created_at)


def run_label(row: dict) -> str:
    title = short(row.get("title") or "(no proposal yet)", 70)
    return f"{row['created_at'][:16].replace('T', ' ')} · {row['status']} · {row['model']} · {title}"


def nav_sidebar() -> None:
    """A short summary of the session in the sidebar."""
    ss = st.session_state
    with st.sidebar:
        st.caption(f"Neighbourhood: {len(ss['hood_r'])} researchers, {len(ss['hood_p'])} papers")
        running = [j for j in ss["jobs"].values() if not j.done]
        if running:
            st.caption(f"{len(running)} run(s) in progress")
        model = md_escape(ss["model"])
        st.caption(f"Model: {model}")


def researcher_caption(r: Researcher, fnames: dict[str, str]) -> str:
    fields = ", ".join(fnames.get(f, f) for f in r.fields) or "no field"
    aff = f" · {r.affiliation}" if r.affiliation else ""
    return md_escape(f"{fields}{aff} · {len(r.publication_ids)} papers")


def paper_caption(p: Paper, fnames: dict[str, str]) -> str:
    fields = ", ".join(fnames.get(f, f) for f in p.fields) or "no field"
    authors = ", ".join(p.authors[:3]) + (" et al." if len(p.authors) > 3 else "")
    bits = [str(p.year or "n.d."), fields, authors, p.id]
    return md_escape(" · ".join(b for b in bits if b))


# -- messages that survive one rerun ------------------------------------------------
def flash(kind: str, text: str, where: str = "main") -> None:
    """Queue a message (already safe Markdown) to show after the next rerun."""
    st.session_state.setdefault("_flash", []).append((where, kind, text))


def show_flashes(where: str = "main") -> None:
    items = st.session_state.get("_flash", [])
    keep = []
    for w, kind, text in items:
        if w != where:
            keep.append((w, kind, text))
            continue
        {"success": st.success, "error": st.error, "warning": st.warning,
         "info": st.info}.get(kind, st.info)(text)
    st.session_state["_flash"] = keep
