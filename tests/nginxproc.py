"""The shipped nginx config (docs/lab/nginx.conf), rendered for loopback and run unprivileged.

The test copy differs from the shipped file in three things only: its folder (pid, logs,
temp files: a temporary one instead of /var/lib/studio-nginx), its `listen` port (a free
loopback port) and its `server` lines (the test's app servers). nginx runs in the
foreground (`daemon off`) as `nobody` when the tests run as root, so stopping it is
stopping one process.
"""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "docs" / "lab" / "nginx.conf"
SHIPPED_FOLDER = "/var/lib/studio-nginx"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def render(folder: Path, listen: int, upstreams: list[str]) -> str:
    """The shipped config with the folder, the port and the app servers replaced."""
    text = CONF.read_text()
    assert text.count(SHIPPED_FOLDER) >= 5 and re.search(r"^\s*listen 8080;", text, re.M)
    text = text.replace(SHIPPED_FOLDER, str(folder))
    text = re.sub(r"^(\s*)listen 8080;", rf"\g<1>listen 127.0.0.1:{listen};", text, flags=re.M)
    lines = re.findall(r"^(\s*)server 127\.0\.0\.1:\d+ (.*);$", text, flags=re.M)
    assert lines, "the shipped config names no app servers"
    indent, options = lines[0]
    block = "\n".join(f"{indent}server {u} {options};" for u in upstreams)
    first = re.search(r"^\s*server 127\.0\.0\.1:\d+ .*;$(\n^\s*server 127\.0\.0\.1:\d+ .*;$)*", text, re.M)
    return text[:first.start()] + block + text[first.end():]


class Nginx:
    """nginx in front of `upstreams` (host:port), on a free loopback port."""

    def __init__(self, upstreams: list[str]):
        self.folder = Path(tempfile.mkdtemp(prefix="rt-nginx-"))
        self.port = free_port()
        self.conf = self.folder / "nginx.conf"
        self.conf.write_text(render(self.folder, self.port, upstreams))
        self._as = ["runuser", "-u", "nobody", "--"] if os.geteuid() == 0 else []
        if self._as:
            shutil.chown(self.folder, "nobody")
            os.chmod(self.conf, 0o644)
        self.proc: subprocess.Popen | None = None

    def args(self, *extra: str) -> list[str]:
        return [*self._as, NGINX, "-p", str(self.folder), "-c", str(self.conf),
                "-e", str(self.folder / "error.log"), *extra]

    def check(self) -> subprocess.CompletedProcess:
        """`nginx -t`: the syntax and every path the config names."""
        return subprocess.run(self.args("-t"), capture_output=True, text=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Nginx:
        self.proc = subprocess.Popen(self.args("-g", "daemon off;"), stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while True:  # polling a condition: nginx listens once it has read its config
            if self.proc.poll() is not None:
                raise RuntimeError(f"nginx exited: {self.proc.stderr.read().decode()[-500:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def access_log(self) -> list[str]:
        path = self.folder / "access.log"
        return path.read_text().splitlines() if path.exists() else []

    def upstream_for(self, sticky: str, path: str = "/_stcore/health") -> str:
        """Which app server a browser holding cookie `sticky` reaches (from the access log)."""
        before = len(self.access_log())
        req = urllib.request.Request(self.url + path, headers={"Cookie": f"rt_sticky={sticky}"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            resp.read()
        deadline = time.monotonic() + 30
        while True:  # nginx logs once the reply is sent; an earlier request's line may come later
            mine = [ln for ln in self.access_log()[before:] if ln.endswith(f" sticky={sticky}")]
            if mine:
                break
            assert time.monotonic() < deadline, "nginx logged no line for the request"
            time.sleep(0.01)
        return re.search(r"upstream=(.*) sticky=", mine[-1]).group(1).split(",")[-1].strip()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
        shutil.rmtree(self.folder, ignore_errors=True)
