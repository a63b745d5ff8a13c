"""Fixtures for the offline browser test: a local HTTP server on the built book, and
headless Chromium (both from :mod:`scripts.browser`, which ``make pdf`` uses too).

Chromium runs with every host name except 127.0.0.1 mapped to "not found", so a page that
needed a CDN would fail here even on a machine with internet access. Its net log says which
requests a page made, and the server records what it served.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from scripts.browser import CHROMIUM_FLAGS, PLAYWRIGHT_FLAGS, find_chromium, serve_directory

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
SCREENSHOTS = ROOT / "_build" / "screenshots"


@pytest.fixture(scope="session")
def chromium() -> str:
    found = find_chromium()
    if found is None:
        reason = (
            "headless Chromium not found (/usr/bin/chromium); `make browser-test` installs "
            "Debian's `chromium` package"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    return found


@dataclass
class BookServer:
    url: str
    served: list = field(default_factory=list)


@pytest.fixture(scope="session")
def book_server():
    if not (HTML / "index.html").is_file():
        pytest.fail(
            f"no built book in {HTML.relative_to(ROOT)}: run `make book` first", pytrace=False
        )
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
    """``browser(path)`` loads a page of the book and returns its DOM after scripts ran."""

    def run(path: str) -> Page:
        url = f"{book_server.url}/{path}"
        with tempfile.TemporaryDirectory(prefix="nqf-chromium-") as tmp:
            netlog = Path(tmp) / "netlog.json"
            args = [
                chromium,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={tmp}/profile",
                f"--log-net-log={netlog}",
                "--dump-dom",
            ]
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
    args = PLAYWRIGHT_FLAGS
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium, headless=True, args=args)
        try:
            yield browser
        finally:
            browser.close()
