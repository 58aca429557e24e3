"""The Run page's fields in a real browser: a rerun never sends a field's older value back
over what the user typed, and the settings survive a trip to other pages.

The Base URL that reverted (docs/RELIABILITY.md): every run used to write each setting
back into the session to keep it across pages, and Streamlit sends a value the script
wrote to the browser with that run's output. So the Model field's own rerun carried the
Base URL as it was when that rerun started; landing after the user had typed a new one,
it could put the old one back. The test reads what the server sends over the websocket
(Streamlit's own protobuf messages) during the Model field's rerun: no text field may
arrive with a value set by the script. Same server pattern as tests/test_browser.py."""
from __future__ import annotations

import pytest

from tests.reliability.browserhelp import OPENAI_URL, field, fill, settle
from tests.test_browser import ARTIFACTS, CHROMIUM, LAUNCH_ARGS, choose, go, start_server, stop_server

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
expect = sync_api.expect


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    ARTIFACTS.mkdir(exist_ok=True)
    proc, url = start_server(tmp_path_factory.mktemp("settings-browser-data"),
                             ARTIFACTS / "settings-server.log")
    yield url
    stop_server(proc)


def _script_set_text_fields(frames: list) -> list[tuple[str, str]]:
    """(label, value) of every text field the server sent with a value of its own."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    out = []
    for payload in frames:
        if isinstance(payload, str):
            continue
        msg = ForwardMsg()
        msg.ParseFromString(payload)
        if msg.WhichOneof("type") != "delta" or msg.delta.WhichOneof("type") != "new_element":
            continue
        element = msg.delta.new_element
        if element.WhichOneof("type") == "text_input" and element.text_input.set_value:
            out.append((element.text_input.label, element.text_input.value))
    return out


def _script_finished(payload) -> bool:
    """True for the message that ends a script run: everything that run sent came before it.
    A run cut short by the rerun request (an earlier run still going) is not the one read."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    if isinstance(payload, str):
        return False
    msg = ForwardMsg()
    msg.ParseFromString(payload)
    return (msg.WhichOneof("type") == "script_finished"
            and msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN)


def _asks_rerun_with(payload, text: str) -> bool:
    """True for the browser's request to rerun with a text widget holding `text`."""
    from streamlit.proto.BackMsg_pb2 import BackMsg

    if isinstance(payload, str):
        return False
    msg = BackMsg()
    msg.ParseFromString(payload)
    return msg.WhichOneof("type") == "rerun_script" and any(
        w.string_value == text for w in msg.rerun_script.widget_states.widgets)


def _wait_for_rerun_end(socket, log: list, text: str) -> list:
    """What the server sent in reply to the rerun that carried `text`, once that run ended.

    The log holds ("sent"|"received", payload) in the order the browser saw them. A run
    that was already under way when the field was typed can end after the request; only
    a script_finished that follows the request counts. Playwright hands events over only
    inside its own calls, so checking the log and then waiting for the next frame cannot
    miss one."""
    while True:
        asked = next((i for i, (way, p) in enumerate(log) if way == "sent" and _asks_rerun_with(p, text)),
                     None)
        if asked is not None:
            reply = [p for way, p in log[asked + 1:] if way == "received"]
            end = next((i for i, p in enumerate(reply) if _script_finished(p)), None)
            if end is not None:
                return reply[:end + 1]
        with socket.expect_event("framereceived", timeout=60_000):
            pass


def test_a_rerun_never_sends_a_field_back_and_settings_survive_other_pages(server):
    log: list = []
    sockets: list = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        page = browser.new_context().new_page()

        def watch(ws):
            sockets.append(ws)
            ws.on("framesent", lambda payload: log.append(("sent", payload)))
            ws.on("framereceived", lambda payload: log.append(("received", payload)))

        page.on("websocket", watch)
        page.goto(f"{server}/run")
        expect(field(page, "Base URL (optional)")).to_be_visible(timeout=60_000)
        # A preset is the app's own change: it still reaches the fields.
        choose(page, "Provider", OPENAI_URL)
        settle(page)
        expect(field(page, "Base URL (optional)")).to_have_value("http://localhost:8000/v1", timeout=30_000)
        fill(page, "Base URL (optional)", "http://127.0.0.1:9/v1")
        fill(page, "Model", "openai/some-model")  # this field's rerun
        reply = _wait_for_rerun_end(sockets[-1], log, "openai/some-model")
        sent = _script_set_text_fields(reply)
        assert sent == [], f"a rerun sent these fields back over what was typed: {sent}"
        for title in ("History", "Settings", "Run"):
            go(page, title)
        settle(page)
        expect(field(page, "Base URL (optional)")).to_have_value("http://127.0.0.1:9/v1", timeout=30_000)
        expect(field(page, "Model")).to_have_value("openai/some-model", timeout=30_000)
        browser.close()
