"""Study: rate. A rater opens the link, enters their id and works through their items.

Blind: only the proposals' text is shown, never the model, mode, run or arm. Items come one at a
time (the least-covered first) for as long as the rater's session allows; every answer is saved
when submitted, so closing the tab loses at most the item on screen, and the same id resumes.
"""
from __future__ import annotations

import streamlit as st

from rt_core.errors import RTError
from studio import render, resources, state, study, study_keys, study_submit
from studio.frame import ensure_frame

ensure_frame()
store = resources.get_store()
ss = st.session_state

CHOICE_LABELS = {"left": "Left is stronger", "tie": "Tie", "right": "Right is stronger"}

if ss.pop("_left_study_now", False):  # the whole app is back (state.leave_study): open at its home
    st.switch_page(state.PAGES["neighbourhood"])
st.title("Rate proposals")


def _leave_button() -> None:
    if st.button("Leave this study", key="rate_leave_study",
                 help="Stop rating in this browser and open the rest of the app. What you submitted is kept."):
        state.leave_study()
        st.rerun()


if "rate_study" not in ss:
    st.caption("You will see research proposals without knowing who or what wrote them. Judge each on "
               "its own merits. Your answers are saved as you go; you can stop and come back with the "
               "same link and id.")
    code_param = ss.get("_rate_code", "")  # from the join link (state.joining_study)
    with st.form("rate_join"):
        code = st.text_input("Study code", value=code_param, key="rate_code", max_chars=12)
        rater = st.text_input("Your rater id", key="rate_rater_input", max_chars=40,
                              help="Initials or the id the organiser gave you; letters, digits, . _ - @")
        go = st.form_submit_button("Start or resume", type="primary")
    if go:
        try:
            found = store.studies.by_code(code)
            store.studies.join(found["id"], rater)
        except RTError as exc:
            render.show_error(exc)
        else:
            ss["rate_study"], ss["rate_rater"] = found["id"], rater.strip()
            st.rerun()
    _leave_button()
    st.stop()


def _task(pos: int) -> str:
    return f"{ss['rate_study']}_{ss['rate_rater']}_{pos}"


def _answers(pos: int) -> dict:
    """The item's answers so far. Kept apart from the radios' own state: the browser sends the
    radios' values with every rerun request, and a request sent before a shortcut's run came back
    would carry the old value and undo the shortcut."""
    return ss.setdefault(f"rate_ans_{_task(pos)}", {})


def _answer_key(pos: int, criterion: str) -> str:
    """The radio's key. It changes whenever a shortcut or button changes an answer, so the radio
    is drawn afresh from `_answers` and a stale value from the browser has nowhere to land."""
    version = ss.get(f"rate_ver_{_task(pos)}", 0)
    base = f"rate_{_task(pos)}_{criterion}"
    return f"{base}_v{version}" if version else base


def _choose(pos: int, criteria: list[str], choice: str) -> None:
    """A shortcut: set the first unanswered criterion (or the last one) to `choice`."""
    answers = _answers(pos)
    answers[next((c for c in criteria if answers.get(c) is None), criteria[-1])] = choice
    ss[f"rate_ver_{_task(pos)}"] = ss.get(f"rate_ver_{_task(pos)}", 0) + 1


def _picked(pos: int, criterion: str, key: str) -> None:
    """A radio clicked by hand."""
    _answers(pos)[criterion] = ss.get(key)


def _keys(pos: int, criteria: list[str]) -> None:
    """Apply the key presses not applied yet (studio/study_keys.py: none is ever dropped)."""
    seen = f"rate_keys_seen_{_task(pos)}"
    ss[seen] = study_keys.apply_new(study_keys.presses(_task(pos)), ss.get(seen, 0),
                                    lambda choice: _choose(pos, criteria, choice))


def _submit(study_id: str, pos: int, criteria: list[str], rationale: str, confidence: int | None) -> None:
    """Store the item, then draw the next one; or leave a notice that it was NOT stored.

    The notice lives in the session, not in this run's output: a message drawn only by the run
    that refused the submit was wiped by the next rerun (a shortcut that arrived just after the
    click), leaving a fully answered item on screen, unsaved and without a word."""
    answers = {name: _answers(pos).get(name) for name in criteria}
    if _missing(pos, criteria, confidence):
        ss[_unsaved_key(pos)] = "missing"
        return
    try:
        saved = store.studies.submit(study_id, ss["rate_rater"], pos, answers, rationale=rationale,
                                     confidence=confidence)
    except Exception as exc:  # a store that is down or slow: say so, keep the answers on screen
        ss[_unsaved_key(pos)] = exc
        return
    ss.pop(_unsaved_key(pos), None)
    render.flash("info" if not saved else "success",
                 "This item was already saved (the first answer stands)." if not saved else "Saved.", "rate")
    st.rerun()


def _unsaved_key(pos: int) -> str:
    return f"rate_unsaved_{_task(pos)}"


def _handled_key(pos: int) -> str:
    """The id of the last press of Submit this session acted on (studio/study_submit.py)."""
    return f"rate_handled_{_task(pos)}"


def _missing(pos: int, criteria: list[str], confidence: int | None) -> list[str]:
    return [name for name in criteria if _answers(pos).get(name) is None] + ["confidence"] * (confidence is None)


def _not_saved_notice(pos: int, criteria: list[str], confidence: int | None) -> None:
    """Say, on every rerun until it is stored, that a submitted item was not stored and why."""
    why = ss.get(_unsaved_key(pos))
    if why is None:
        return
    missing = _missing(pos, criteria, confidence)
    if why == "missing" and missing:
        st.error(render.md_escape("Not saved: please answer every criterion and your confidence first; "
                                  "still missing: " + ", ".join(missing)), icon="✋")
    elif why == "missing":
        st.warning("Not saved yet: everything is answered now. Press **Submit and go on** to save "
                   "this item.", icon="💾")
    else:
        render.show_error(why)
        st.warning("Not saved: your answers are still here. Press **Submit and go on** again.", icon="💾")


@st.fragment
def rate() -> None:
    ss["_rate_watch"] = None  # set again when an open item is drawn
    study_row = store.studies.get(ss["rate_study"])
    settings = study_row["settings"]
    st.caption(render.md_escape(f"Study: {study_row['name']} · rater {ss['rate_rater']}"))
    task = store.studies.next_task(study_row["id"], ss["rate_rater"])
    plan = store.studies.plan(study_row["id"], ss["rate_rater"])
    done, planned = plan["done"], max(plan["planned"], plan["done"] + (task is not None))
    st.progress(min(1.0, done / planned) if planned else 1.0, text=f"{done} of {planned} done")
    if study_row["status"] != "open":
        st.warning("This study is closed and accepts no more answers. Thank you for your help; "
                   "the answers you gave before it closed are kept.", icon="🔒")
        return
    if task is None:
        st.success("All done: every answer is saved. Thank you! You can close this tab.", icon="🎉")
        st.balloons()
        return
    criteria = [c.name for c in settings.criteria]
    pairwise = task.right is not None
    st.subheader(f"Item {done + 1} of {planned}")
    st.caption(f"Your session is about {settings.minutes_per_rater:g} minutes; the number of items "
               "follows how long items take in this study.")
    if pairwise:
        left, right = st.columns(2, border=True)
        with left:
            study.show_proposal(task.left, "Left proposal")
        with right:
            study.show_proposal(task.right, "Right proposal")
        st.markdown("**Which is stronger?** Answer each criterion; the keys ← (left), → (right) and T (tie) "
                    "fill in the next unanswered one.")
        _keys(task.position, criteria)
        b1, b2, b3 = st.columns(3)
        for col, choice, label in ((b1, "left", "◀ Left"), (b2, "tie", "Tie"), (b3, "right", "Right ▶")):
            col.button(label, key=f"rate_btn_{choice}_{task.position}", on_click=_choose,
                       args=(task.position, criteria, choice), width="stretch")
    else:
        with st.container(border=True):
            study.show_proposal(task.left, "Proposal")
    answers = _answers(task.position)
    for c in settings.criteria:
        help_text = render.md_escape(f"1 = {c.low}; 10 = {c.high}")
        label = render.md_escape(f"{c.name.capitalize()}: {c.question}")
        options = list(CHOICE_LABELS) if pairwise else list(range(1, 11))
        key = _answer_key(task.position, c.name)
        st.radio(label, options, index=options.index(answers[c.name]) if answers.get(c.name) in options else None,
                 horizontal=True, key=key, format_func=CHOICE_LABELS.get if pairwise else str, help=help_text,
                 on_change=_picked, args=(task.position, c.name, key))
        if not pairwise:
            st.caption(help_text)
    rationale = st.text_area("Rationale (a sentence or two)", key=f"rate_why_{task.position}", max_chars=2000)
    # Starts unselected: a preselected middle value would anchor every rater on it.
    confidence = st.radio("Confidence in your judgement (required)", [1, 2, 3, 4, 5], index=None, horizontal=True,
                          key=f"rate_conf_{task.position}", help="1 = a guess, 5 = certain")
    button = f"rate_submit_{task.position}"
    clicked = st.button("Submit and go on", type="primary", key=button, shortcut="Ctrl+Enter")
    handled, press = ss.get(_handled_key(task.position), ""), study_submit.latest(_task(task.position))
    if (press and press != handled) or (clicked and not press):  # a press the browser kept, or a click
        ss[_handled_key(task.position)] = press  # first: a re-send is never stored twice
        _submit(study_row["id"], task.position, criteria, rationale, confidence)
        if press:  # refused: a whole run, so the watch below the fragment hears it was answered
            st.rerun()
    ss["_rate_watch"] = (_task(task.position), button, ss.get(_handled_key(task.position), ""))
    _not_saved_notice(task.position, criteria, confidence)
    st.caption("You can stop at any time: everything you submitted is saved. Open the same link and "
               "enter the same id to continue.")


# "Saved." is drawn outside the fragment, by the full rerun that shows the next item. Drawn
# inside, the first shortcut's rerun took it away and moved Submit up while the rater went for it.
render.show_flashes("rate")
rate()
if ss.get("_rate_watch"):
    # Outside the fragment, so a press it sends reruns the whole page: a fragment rerun sent
    # across a reconnect once drew the item twice.
    study_submit.watch(*ss["_rate_watch"])
c1, c2, _ = st.columns([1, 1, 2])
if c1.button("Switch rater or study", key="rate_leave"):
    for k in ("rate_study", "rate_rater"):
        ss.pop(k, None)
    st.rerun()
with c2:
    _leave_button()
