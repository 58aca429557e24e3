"""A rater's Submit that is never lost without a word.

Why: `st.button` is a *trigger*. A click sent while the websocket is dying (the browser still
believes it is connected, the bytes never arrive) is gone; when the browser reconnects it
re-sends the widgets' *state*, not a trigger that was already spent, so the same item came back
with nothing stored and no "Not saved". Here the browser also keeps each press of Submit as the
state of a small component (an id per submit, as studio/study_keys.py keeps the key presses):
a state survives a lost request and goes out again with the next one, which Streamlit sends by
itself when it reconnects (tests/test_rater_browser.py: a click swallowed by a dead line, and
Ctrl+Enter pressed while the browser knows the line is down). A press still unanswered is said
"Not saved yet", and pressing Submit again sends it once more.

The page stores an id once (pages/study_rate.py remembers the ids it handled; the store keeps
one answer per item whatever arrives twice), tells the component which id it handled, and the
component says so under the button for as long as a press has no answer: "Not saved yet" while
the browser knows the connection is down, and, after 8 s without an answer on a line that looks
alive (a dead one, or a slow server), that it may not be saved and Submit can be pressed again.
"""
from __future__ import annotations

import streamlit as st

# The button is found by the class Streamlit gives a keyed widget (`st-key-<key>`). A press is
# a click or Ctrl/Cmd+Enter (the button's shortcut), caught before the button sees it; a press
# before the page answered the last one sends the same id again. The listener and the watch are
# replaced on every mount (a remount does not run the previous mount's cleanup); what a press
# left to do lives on `window`, per item, across mounts.
_JS = """
export default function ({ data, setStateValue, parentElement }) {
  const all = (window.__rtSubmits = window.__rtSubmits || {});
  const s = (all[data.task] = all[data.task] || { id: "", tries: 0, at: 0 });
  if (s.id && s.id === data.handled) s.id = "";  // the page has it
  let line = parentElement.querySelector("p");
  if (!line) {
    line = document.createElement("p");
    line.setAttribute("role", "status");
    line.style.margin = "0";
    parentElement.appendChild(line);
  }
  const connected = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    return !app || (app.dataset.testConnectionState || "CONNECTED") === "CONNECTED";
  };
  const send = () => { s.tries += 1; s.at = Date.now(); setStateValue("submit", `${s.id}:${s.tries}`); };
  const show = () => {
    if (s.id && !connected()) {
      line.textContent = "Not saved yet: the connection to the server is down. Your answers stay on " +
        "this page and are sent as soon as it is back; you can also press Submit again then.";
    } else if (s.id && Date.now() - s.at > 8000) {
      line.textContent = "No answer from the server yet, so this item may not be saved. If nothing " +
        "changes, press Submit again: an item is never saved twice.";
    } else {
      line.textContent = "";
    }
  };
  const press = () => {
    if (!s.id) s.id = Math.random().toString(36).slice(2) + Date.now().toString(36);
    send();
    show();
  };
  if (window.__rtSubmitListeners) {
    for (const [type, fn] of window.__rtSubmitListeners) document.removeEventListener(type, fn, true);
  }
  const onClick = (e) => {
    const el = e.target;
    if (el && el.closest && el.closest("." + data.button) && !el.closest("button:disabled")) press();
  };
  const onKey = (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && !e.repeat) press();
  };
  window.__rtSubmitListeners = [["click", onClick], ["keydown", onKey]];
  for (const [type, fn] of window.__rtSubmitListeners) document.addEventListener(type, fn, true);
  clearInterval(window.__rtSubmitWatch);
  window.__rtSubmitWatch = setInterval(show, 500);
  show();
}
"""


@st.cache_resource
def _component():
    return st.components.v2.component("rt_study_submit", js=_JS)


def _key(task: str) -> str:
    return f"rate_send_{task}"


def latest(task: str) -> str:
    """The id of the newest press of Submit on item `task` the browser has sent ('' before any,
    and in AppTest, which has no browser). Read before the component is drawn, so the same run
    that acts on a press can tell the browser it did."""
    value = st.session_state.get(_key(task))
    press = value.get("submit") if isinstance(value, dict) else None
    return press.split(":", 1)[0] if isinstance(press, str) else ""


def watch(task: str, button_key: str, handled: str) -> None:
    """Keep the presses of the Submit button keyed `button_key` as state; `handled` is the id this
    page acted on last (stored, or refused with its own message), so the browser stops waiting."""
    _component()(key=_key(task), data={"task": task, "button": f"st-key-{button_key}", "handled": handled},
                 default={"submit": ""}, on_submit_change=lambda: None)
