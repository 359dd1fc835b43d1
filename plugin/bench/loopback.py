"""A site on 127.0.0.1 for benches and tests that read pages through the product (not engines: those have
the aiohttp stand-ins of tests/standins.py).

    with LoopbackSite(lambda path: (200, "text/html; charset=utf-8", body)) as site:
        fetch_sync(site.base + "/page")

`answer(path)` gives each GET's status, content type and body (the path as asked, query included). The
server answers from a thread of its own, so callers that run their own event loop (the sync API, a
bench's `asyncio.run`) can read from it; `own_process=True` serves from a forked child instead, so a bench
that counts this process's CPU does not count the server's. `keep_alive=True` speaks HTTP/1.1 and keeps
connections open, as a browser expects of a site.
"""

from __future__ import annotations

import http.server
import multiprocessing
import threading
from typing import Callable

Answer = Callable[[str], tuple[int, str, bytes]]


class LoopbackSite:
    def __init__(self, answer: Answer, *, keep_alive: bool = False, own_process: bool = False):
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

            def do_GET(self):  # noqa: N802 (http.server's name)
                status, kind, body = answer(self.path)
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._process: multiprocessing.Process | None = None
        if own_process:
            # The listening socket is bound here (its port known at once) and served by the child only.
            self._process = multiprocessing.get_context("fork").Process(target=self.server.serve_forever, daemon=True)
            self._process.start()
            self.server.socket.close()
        else:
            threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.join(5)
            return
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> "LoopbackSite":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
