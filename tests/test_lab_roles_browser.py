"""The README's lab recipe as it is written (app servers on 127.0.0.1 with RT_DB, no RT_SHARED)
behind the shipped docs/lab/nginx.conf (rendered for loopback by tests/nginxproc.py): every
browser comes through the proxy, so the servers are shared (rt_core.deployment) and the roles
hold as on an RT_SHARED=1 server (tests/test_access_browser.py). Four browser contexts:
owner, stranger, rater in a private window, operator. The operator signs in by the link,
keeps a session (never the token) that holds on the other app server too, and signs out
everywhere; the revoked session, replayed, and a forged one each get one message. nginx's
access log holds no token.
"""
from __future__ import annotations

import hashlib
import re
import secrets
from pathlib import Path

import pytest

from tests import test_browser
from tests.nginxproc import NGINX, Nginx
from tests.pgserver import PgServer, pg_bin
from tests.test_access_browser import UNKNOWN, history_options
from tests.test_browser import ARTIFACTS, expect, go, open_app, start_server, stop_server

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(pg_bin() is None, reason="PostgreSQL is not installed"),
              pytest.mark.skipif(not Path(NGINX).exists(), reason="nginx is not installed")]
browser = test_browser.browser  # the module-scoped Chromium fixture, shared
MINE, ITEM, OTHER_ITEM = "labowned001", "labitem0001", "labitem0002"
STALE = "operator sign-in no longer holds"


def seed(url: str, owner_token: str) -> str:
    """The owner's run, and two runs (one of them the owner's) in an open study; the rater code."""
    from rt_core.store import Store
    from rt_core.store.study_types import StudySettings
    from rt_core.study.create import create_from_runs
    from tests.test_study import make_run

    s = Store(url)
    for run_id, mode in ((MINE, "global"), (ITEM, "global"), (OTHER_ITEM, "self")):
        make_run(s, run_id, mode, "p-gaia")
    owner_hash = hashlib.sha256(owner_token.encode()).hexdigest()
    for run_id in (MINE, ITEM):
        s.db.conn.execute("UPDATE runs SET owner_hash=? WHERE id=?", (owner_hash, run_id))
    made = create_from_runs(s, [ITEM, OTHER_ITEM], StudySettings(name="Lab blind", mode="absolute"),
                            real_arm=False)
    s.close()
    return made["code"]


def cookie(context, name: str) -> dict | None:
    return {c["name"]: c for c in context.cookies()}.get(name)


def sticky_for_other_server(nginx: Nginx, upstreams: list[str], mine: str) -> str:
    """A sticky id nginx sends to the app server this browser is not on."""
    here = nginx.upstream_for(mine)
    for i in range(500):
        if nginx.upstream_for(f"elsewhere-{i}") != here:
            return f"elsewhere-{i}"
    raise AssertionError(f"no sticky id reaches a server other than {here} of {upstreams}")


def test_the_lab_recipe_behind_nginx_is_shared_without_rt_shared(tmp_path, browser):
    ARTIFACTS.mkdir(exist_ok=True)
    pg, apps, nginx, contexts = PgServer(), [], None, {}
    token = secrets.token_hex(24)  # the README's one RT_OPERATOR_TOKEN for every app server
    try:
        pg.create_template()
        url = pg.fresh_database()
        for n in range(2):  # step 2 of "Lab deployment", as written: loopback, RT_DB, no RT_SHARED
            data = tmp_path / f"app{n}"
            data.mkdir()
            apps.append(start_server(data, ARTIFACTS / f"streamlit-lab-roles-{n}.log", env={
                "RT_DB": url, "RT_OPERATOR_TOKEN": token, "RT_SHARED": None, "RT_DEMO": None,
                "HF_HUB_OFFLINE": "1"}))
        upstreams = [u.removeprefix("http://") for _, u in apps]
        nginx = Nginx(upstreams).start()
        base = nginx.url
        contexts = {k: browser.new_context(viewport={"width": 1400, "height": 1000})
                    for k in ("owner", "stranger", "rater", "operator")}

        # The owner's browser gets its owner cookie on its first visit; its runs are stored under it.
        owner = contexts["owner"].new_page()
        open_app(owner, base)
        owner.wait_for_function("document.cookie.includes('rt_owner=')", timeout=30_000)
        code = seed(url, cookie(contexts["owner"], "rt_owner")["value"])

        # A stranger: none of the owner's runs in History; the run's link is read-only.
        stranger = contexts["stranger"].new_page()
        open_app(stranger, base)
        assert history_options(stranger) == []
        expect(stranger.get_by_text("All runs in the store")).to_have_count(0)
        stranger.goto(f"{base}/results?run={MINE}")
        expect(stranger.get_by_text("A shared view of this run: read-only")).to_be_visible(timeout=60_000)
        expect(stranger.get_by_role("button", name="Compute similarity")).to_have_count(0)
        for run_id in (ITEM, "nosuchrun00"):  # a study item and a guess read the same
            stranger.goto(f"{base}/results?run={run_id}")
            expect(stranger.get_by_text(UNKNOWN.format(run_id))).to_be_visible(timeout=60_000)

        # The owner keeps the controls on their run after a reload; their study item is hidden.
        owner.goto(f"{base}/results?run={MINE}")
        owner.reload()
        expect(owner.get_by_role("button", name="Compute similarity")).to_be_visible(timeout=60_000)
        expect(owner.get_by_text("A shared view of this run: read-only")).to_have_count(0)
        assert len(history_options(owner)) == 1  # their own run; their study item is not listed
        owner.goto(f"{base}/results?run={ITEM}")
        expect(owner.get_by_text(UNKNOWN.format(ITEM))).to_be_visible(timeout=60_000)

        # The rater, in a private window: the rating page whatever address they type.
        rater = contexts["rater"].new_page()
        rater.goto(f"{base}/?study={code}")
        expect(rater.get_by_role("heading", name="Rate proposals")).to_be_visible(timeout=60_000)
        rater.wait_for_function("document.cookie.includes('rt_rater=1')", timeout=30_000)
        for address in ("/history", f"/results?run={ITEM}"):
            rater.goto(base + address)
            expect(rater.get_by_role("heading", name="Rate proposals")).to_be_visible(timeout=60_000)
            for secret in (ITEM, "scripted/demo", "mode: global", "All runs in the store"):
                expect(rater.get_by_text(secret)).to_have_count(0)

        # The operator, by the link through the proxy: everything, also after a reload.
        ctx = contexts["operator"]
        op = ctx.new_page()
        op.goto(f"{base}/?operator={token}")
        expect(op.get_by_text("This browser is now the operator's")).to_be_visible(timeout=60_000)
        expect(op).not_to_have_url(re.compile("operator="))
        op.wait_for_function("document.cookie.includes('rt_operator=')", timeout=30_000)
        session = cookie(ctx, "rt_operator")["value"]
        assert token not in session
        op.reload()
        assert len(history_options(op)) == 3  # every run, the study's items included
        op.goto(f"{base}/results?run={ITEM}")
        expect(op.get_by_text("answer 1 about p-gaia").first).to_be_visible(timeout=60_000)
        log = "\n".join(nginx.access_log())
        assert "operator=" not in log and token not in log and "study=" not in log and code not in log

        # Moved to the other app server (its sticky cookie changed): still the operator.
        elsewhere = sticky_for_other_server(nginx, upstreams, cookie(ctx, "rt_sticky")["value"])
        ctx.add_cookies([{"name": "rt_sticky", "value": elsewhere, "url": base}])
        op.goto(base)
        assert len(history_options(op)) == 3

        # Sign out (Settings): a visitor here, and the session is dead on every server.
        go(op, "Settings")
        op.get_by_role("button", name="Sign out as operator").click()
        expect(op.get_by_text("Signed out")).to_be_visible(timeout=60_000)
        op.wait_for_function("!document.cookie.includes('rt_operator=')", timeout=30_000)
        op.reload()
        assert history_options(op) == []
        for sticky, value in ((cookie(ctx, "rt_sticky")["value"], session),  # the revoked session, replayed
                              (elsewhere, "x" * 32 + "." + "0" * 64)):  # a forged one
            ctx.add_cookies([{"name": "rt_sticky", "value": sticky, "url": base},
                             {"name": "rt_operator", "value": value, "url": base}])
            op.goto(base)
            expect(op.get_by_text(STALE)).to_have_count(1, timeout=60_000)
            expect(op.get_by_text("Traceback")).to_have_count(0)
            assert history_options(op) == []
            op.wait_for_function("!document.cookie.includes('rt_operator=')", timeout=30_000)
    finally:
        for c in contexts.values():
            c.close()
        if nginx is not None:
            nginx.stop()
        for proc, _ in apps:
            stop_server(proc)
        pg.stop()


def test_a_loopback_sqlite_server_turns_shared_at_its_first_proxied_request(tmp_path, browser):
    """No PostgreSQL, no RT_SHARED: the proxy's X-Forwarded-For alone turns the server shared,
    before it answers, and for every later request too, a direct one on loopback included."""
    from rt_core.store import Store
    from tests.test_study import make_run

    data = tmp_path / "data"
    data.mkdir()
    proc, direct = start_server(data, ARTIFACTS / "streamlit-lab-proxied.log",
                                env={"RT_SHARED": None, "RT_DEMO": None, "RT_OPERATOR_TOKEN": None})
    nginx, contexts = None, []
    try:
        nginx = Nginx([direct.removeprefix("http://")]).start()
        owner_ctx, stranger_ctx, local_ctx = contexts = [
            browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(3)]
        owner = owner_ctx.new_page()
        open_app(owner, nginx.url)
        owner.wait_for_function("document.cookie.includes('rt_owner=')", timeout=30_000)
        s = Store(data / "studio.sqlite3")
        make_run(s, MINE, "global", "p-gaia")
        s.db.conn.execute("UPDATE runs SET owner_hash=? WHERE id=?", (hashlib.sha256(
            cookie(owner_ctx, "rt_owner")["value"].encode()).hexdigest(), MINE))
        s.close()
        for ctx, url in ((stranger_ctx, nginx.url), (local_ctx, direct)):
            page = ctx.new_page()
            open_app(page, url)
            assert history_options(page) == []
            expect(page.get_by_text("All runs in the store")).to_have_count(0)
        assert len(history_options(owner)) == 1
        assert "operator link" in (ARTIFACTS / "streamlit-lab-proxied.log").read_text()  # made from the start
    finally:
        for c in contexts:
            c.close()
        if nginx is not None:
            nginx.stop()
        stop_server(proc)
