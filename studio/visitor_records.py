"""The Neighbourhood page's part of the corpus rule (rt_core.access, records): what an
import tells the visitor, and the operator's list of the papers and researchers visitors
added, with who added each and a Publish button. The decisions are rt_core's; this only
shows them."""
from __future__ import annotations

import streamlit as st

from rt_core import access
from rt_core.errors import RTError
from rt_core.store import BundleSummary
from studio import render

SHOWN = 50
OWN = " · added by this browser: only it sees this until the operator shares it"


def own_ids(store, *id_lists) -> set[str]:
    """Of these researcher and paper ids, those this browser added and nobody published
    (their rows get `OWN` in their caption)."""
    ids = [i for ids in id_lists for i in ids]
    found = {**store.corpus.added_by("researcher", ids), **store.corpus.added_by("paper", ids)}
    return {i for i, who in found.items() if who}


def import_messages(bundle: BundleSummary, who: str = "") -> None:
    """Flash what an import did: one line of counts, unless the store only kept what it
    had (then the notice alone says it), and each of rt_core's notices."""
    if not bundle.changed_nothing:
        render.flash("success", f"Imported {who}{len(bundle.paper_ids)} papers "
                     f"({bundle.papers.message}) and added them to your neighbourhood.", "import")
    for i, text in enumerate(bundle.notices()):
        render.flash("warning" if i == 0 and bundle.papers.kept else "info", render.md_escape(text),
                     "import")


def _publish(store, kind: str, rid: str) -> None:
    try:
        store.corpus.publish(kind, [rid])
    except RTError as exc:
        render.flash("error", render.md_escape(f"{exc} {render.app_hint(exc)}"), "visitors")
        return
    render.flash("success", "Shared with everybody.", "visitors")


def panel(store, viewer: access.Viewer) -> None:
    """For the operator (anybody who may publish): the records visitors added, newest
    first, each with who added it (their owner hash, shortened) and a Publish button."""
    if not access.may(viewer, access.Action.PUBLISH):
        return
    rows = store.corpus.visitors_records(limit=SHOWN + 1)
    if not rows:
        return
    st.subheader("Added by visitors")
    st.caption("Papers and researchers visitors of this server uploaded or imported. Each is seen "
               "only by the browser that added it (its searches, pickers and runs) until you "
               "publish it; publishing a researcher publishes the papers added with them.")
    render.show_flashes("visitors")
    for r in rows[:SHOWN]:
        c1, c2 = st.columns([5, 1], vertical_alignment="center")
        with c1:
            render.show_text(("👤 " if r["kind"] == "researcher" else "📄 ") + r["label"])
            st.caption(render.md_escape(f"{r['kind']} {r['id']} · added by browser "
                                        f"{r['added_by'][:8]} · {r['added_at']}"))
        with c2:
            st.button("Publish", key=f"publish_{r['kind']}_{r['id']}", on_click=_publish,
                      args=(store, r["kind"], r["id"]))
    if len(rows) > SHOWN:
        st.caption(f"Showing the newest {SHOWN}.")
