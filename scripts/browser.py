"""The built book in headless Chromium, offline: a local HTTP server on a folder, Debian's
Chromium, and the flags under which every host name but the local server's is "not
found" (a page that needed a CDN fails even on a machine with internet access). Used by
``make pdf`` (:mod:`scripts.make_pdf`) and the browser tests (``tests/browser``).
"""

from __future__ import annotations

import contextlib
import shutil
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

#: Chromium's resolver rules: no name resolves but the local server's address.
OFFLINE_RULES = "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--virtual-time-budget=15000",
    f"--host-resolver-rules={OFFLINE_RULES}",
]
#: The flags for a browser that Playwright launches (it sets headless mode itself, and a
#: page there runs in real time).
PLAYWRIGHT_FLAGS = [f for f in CHROMIUM_FLAGS if not f.startswith(("--headless", "--virtual"))]


def find_chromium() -> str | None:
    """Debian's ``chromium`` (``make browser-test`` and ``make pdf`` install it), or None."""
    for name in ("chromium", "/usr/bin/chromium"):
        found = shutil.which(name)
        if found:
            return found
    return None


class _Handler(SimpleHTTPRequestHandler):
    served: list  # (path, status) of every request, set per server below

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        self.served.append((self.path.split("?")[0], int(code)))

    def log_message(self, format: str, *args: object) -> None:  # keep the output quiet
        pass


@contextlib.contextmanager
def serve_directory(directory: Path) -> Iterator[tuple[str, list[tuple[str, int]]]]:
    """Serve ``directory`` on 127.0.0.1 (a free port) while the block runs; yields the base
    URL and the list of (path, status) of every request served."""
    served: list[tuple[str, int]] = []
    handler = type("Handler", (_Handler,), {"served": served})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(directory)))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", served
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)
