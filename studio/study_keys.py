"""Keyboard shortcuts for the rating page that never drop a press.

Why not `st.button(shortcut=...)`: a button press is a *trigger*, and Streamlit folds every
rerun request that arrives while a script run is under way into one (script_requests.py,
`_coalesce_widget_states`), so two presses of the same key within one run become one click. At
0.6 s between keys that lost a press on 2 of 13 items. Here the browser keeps a log of every
press for the item on screen ("LLT...") and sends the whole log as the component's *state*; when
requests are folded, the newest state wins and it still holds every press. The page applies the
presses it has not applied yet, in order.
"""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st

CODES = {"L": "left", "R": "right", "T": "tie"}

# Keys typed into a text box are the rater's words, not shortcuts; an arrow on a focused radio
# button would also move that radio, so the page takes it (preventDefault) and counts it once.
# A key held down repeats: that is one press. The listener is replaced on every mount, because
# a remount does not run the previous mount's cleanup.
_JS = """
export default function ({ data, setStateValue }) {
  const log = (window.__rtStudyKeyLog = window.__rtStudyKeyLog || {});
  const codes = { ArrowLeft: "L", ArrowRight: "R", t: "T", T: "T" };
  if (window.__rtStudyKeyListener) {
    document.removeEventListener("keydown", window.__rtStudyKeyListener, true);
  }
  const listener = (e) => {
    const code = codes[e.key];
    if (!code || e.ctrlKey || e.metaKey || e.altKey || e.repeat) return;
    const el = e.target;
    const tag = ((el && el.tagName) || "").toLowerCase();
    const type = ((el && el.type) || "").toLowerCase();
    const typing = el && (el.isContentEditable || tag === "textarea" || tag === "select" ||
      (tag === "input" && !["radio", "checkbox", "button"].includes(type)));
    if (typing) return;
    e.preventDefault();
    log[data.task] = (log[data.task] || "") + code;
    setStateValue("presses", log[data.task]);
  };
  window.__rtStudyKeyListener = listener;
  document.addEventListener("keydown", listener, true);
  document.documentElement.dataset.rtKeysTask = data.task;  // tests wait for this: keys are live
  return () => {
    if (window.__rtStudyKeyListener === listener) {
      document.removeEventListener("keydown", listener, true);
      window.__rtStudyKeyListener = null;
    }
  };
}
"""


@st.cache_resource
def _component():
    return st.components.v2.component("rt_study_keys", js=_JS)


def presses(task: str) -> str:
    """Every shortcut pressed on this item so far, oldest first ("L", "R", "T" each)."""
    mount = _component()
    result = mount(key=f"rate_keys_{task}", data={"task": task}, default={"presses": ""},
                   on_presses_change=lambda: None)
    value = getattr(result, "presses", None)
    return value if isinstance(value, str) else ""


def apply_new(log: str, applied: int, choose: Callable[[str], None]) -> int:
    """Apply the presses after the first `applied` in order; returns how many are applied now."""
    for code in log[applied:]:
        if code in CODES:
            choose(CODES[code])
    return len(log)
