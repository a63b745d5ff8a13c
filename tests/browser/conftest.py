"""Fixtures for the offline browser test: a local HTTP server on the built book, and headless Chromium.

Chromium runs with every host name except 127.0.0.1 mapped to "not found", so a page that needed a
CDN would fail here even on a machine with internet access. Its net log says which requests a page
made, and the server records what it served.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
SCREENSHOTS = ROOT / "_build" / "screenshots"

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars", "--virtual-time-budget=15000",
    # No name resolves but the local server's address: remote loads fail instead of succeeding.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]


def find_chromium() -> str | None:
    for name in ("chromium", "/usr/bin/chromium"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="session")
def chromium() -> str:
    found = find_chromium()
    if found is None:
        reason = ("headless Chromium not found (/usr/bin/chromium); `make browser-test` installs "
                  "Debian's `chromium` package")
        if os.environ.get("CI") == "true":
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    return found


class _Handler(SimpleHTTPRequestHandler):
    served: list  # (path, status) of every request, set per server below

    def log_request(self, code="-", size="-"):
        self.served.append((self.path.split("?")[0], int(code)))

    def log_message(self, format, *args):  # keep the test output quiet
        pass


@dataclass
class BookServer:
    url: str
    served: list = field(default_factory=list)


@contextlib.contextmanager
def serve_directory(directory: Path):
    """Serve ``directory`` on 127.0.0.1 (a free port) while the block runs; yields the base
    URL and the list of (path, status) of every request served."""
    served: list = []
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


@pytest.fixture(scope="session")
def book_server():
    if not (HTML / "index.html").is_file():
        pytest.fail(f"no built book in {HTML.relative_to(ROOT)}: run `make book` first", pytrace=False)
    with serve_directory(HTML) as (url, served):
        yield BookServer(url=url, served=served)


@dataclass
class Page:
    dom: str
    requests: list  # URLs of the requests the page itself made (from Chromium's net log)


def _page_requests(netlog: Path, origin: str) -> list:
    text = netlog.read_text()
    try:
        log = json.loads(text)
    except json.JSONDecodeError:  # a log cut short lacks its closing brackets
        log = json.loads(text.rstrip().rstrip(",") + "]}")
    names = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    urls = []
    for event in log.get("events", []):
        params = event.get("params") or {}
        if names.get(event.get("type")) == "URL_REQUEST_START_JOB" and "url" in params:
            # The page's own requests carry its origin as initiator, its navigation its URL;
            # the browser's housekeeping requests (blocked by the resolver rules anyway) neither.
            if params.get("initiator") == origin or params["url"].startswith(origin + "/"):
                urls.append(params["url"])
    return urls


@pytest.fixture(scope="session")
def browser(chromium, book_server):
    """``browser(path)`` loads a page of the book and returns its DOM after scripts ran;
    ``browser(path, screenshot=PNG)`` saves a screenshot instead."""

    def run(path: str, screenshot: Path | None = None) -> Page:
        url = f"{book_server.url}/{path}"
        with tempfile.TemporaryDirectory(prefix="nqf-chromium-") as tmp:
            netlog = Path(tmp) / "netlog.json"
            args = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp}/profile",
                    f"--log-net-log={netlog}"]
            if screenshot is not None:
                screenshot.parent.mkdir(parents=True, exist_ok=True)
                args += [f"--screenshot={screenshot}", "--window-size=1280,2400"]
            else:
                args += ["--dump-dom"]
            proc = subprocess.run(args + [url], capture_output=True, text=True, timeout=180)
            assert proc.returncode == 0, f"chromium failed on {url}:\n{proc.stderr[-3000:]}"
            requests = _page_requests(netlog, book_server.url) if netlog.exists() else []
        return Page(dom=proc.stdout, requests=requests)

    return run


@pytest.fixture(scope="session")
def playwright_chromium(chromium):
    """Debian's Chromium driven by Playwright (headless, every remote host unresolvable),
    for the tests that move controls on a page; Playwright's own browser download is
    not used."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        reason = "Playwright is not installed (it is in requirements.txt: run `make`)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    args = [flag for flag in CHROMIUM_FLAGS
            if not flag.startswith(("--headless", "--virtual-time-budget"))]
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium, headless=True,
                                         args=args)
        try:
            yield browser
        finally:
            browser.close()
