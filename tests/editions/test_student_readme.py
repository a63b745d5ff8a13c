"""The students' README (``make student``) names the course's repository and the line that
installs its package, both from ``_config.yml`` and the package version, not a
placeholder."""

from __future__ import annotations

from pathlib import Path

import yaml

from scripts import make_student

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_names_the_repository_and_the_install_line(tmp_path):
    text = make_student.write_readme(tmp_path).read_text(encoding="utf-8")
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    url = config["repository"]["url"].rstrip("/")
    assert url in text and f"nqf_mini @ git+{url}@v" in text
    assert "<the course repository" not in text and "{" not in text
