"""A TCP relay on 127.0.0.1 in front of an app server, whose line a test can let die.

Chromium's offline emulation (`context.set_offline`) leaves an open websocket untouched, so
it cannot lose a click. This relay can: `hold()` swallows every byte both ways while the
connections stay open (the browser still believes it is connected, as behind a dead Wi-Fi or
a proxy that lost its upstream), `cut()` closes every connection and turns new ones away (the
browser notices and keeps trying), `restore()` lets them through again.
"""
from __future__ import annotations

import contextlib
import socket
import threading


class CutProxy:
    def __init__(self, target_port: int):
        self.target = ("127.0.0.1", target_port)
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.mode = "pass"
        self.lock = threading.Lock()
        self.open: set[socket.socket] = set()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:  # closed
                return
            if self.mode == "cut":
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.open |= {client, upstream}
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                if self.mode == "pass":
                    dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            self._close(s)

    def _close(self, s: socket.socket) -> None:
        with self.lock:
            self.open.discard(s)
        with contextlib.suppress(OSError):
            s.shutdown(socket.SHUT_RDWR)
        s.close()

    def hold(self) -> None:
        self.mode = "hold"

    def cut(self) -> None:
        self.mode = "cut"
        with self.lock:
            doomed = list(self.open)
        for s in doomed:
            self._close(s)

    def restore(self) -> None:
        self.mode = "pass"

    def close(self) -> None:
        self.cut()
        self.server.close()
