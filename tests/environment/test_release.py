"""``make release`` (scripts/release.py): it refuses a version that the changelog, the
citation or the install cells do not name, and finds nothing to refuse when they agree."""

from __future__ import annotations

import shutil
from pathlib import Path

from scripts import release

ROOT = Path(__file__).resolve().parents[2]


def test_the_changelog_names_the_newest_section():
    assert release.changelog_version("# C\n\n## [Unreleased]\n\n## [0.2.0]\n") == "Unreleased"
    assert release.changelog_version("# C\n\n## [0.3.0] - 2027-01-05\n") == "0.3.0"


def test_a_release_needs_every_place_to_agree(tmp_path):
    for name in ("CHANGELOG.md", "CITATION.cff", "_config.yml", "chapters", "notebooks", "book"):
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tmp_path / name)
        else:
            shutil.copy(source, tmp_path / name)
    version = "9.9.9"
    found = release.problems(tmp_path, version)
    assert any("CHANGELOG.md" in p and "[9.9.9]" in p for p in found), found
    assert any("CITATION.cff" in p for p in found), found
    assert any("install cell of v9.9.9" in p for p in found), found
    (tmp_path / "CHANGELOG.md").write_text("# Changelog\n\n## [9.9.9] - 2027-01-01\n")
    citation = (tmp_path / "CITATION.cff").read_text()
    (tmp_path / "CITATION.cff").write_text(
        citation.replace(f"version: {release.install_cell.package_version()}", "version: 9.9.9")
    )
    found = release.problems(tmp_path, version)
    assert not [p for p in found if "CHANGELOG" in p or "CITATION" in p], found


def test_the_citation_states_the_package_version():
    text = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert release.citation_version(text) == release.install_cell.package_version()
