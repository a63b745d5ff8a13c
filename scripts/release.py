"""Check that a release is consistent, then tag it (``make release``).

Students install the package from the tag ``v<version>`` that every chapter's Colab cell
names, so a version is released only when everything that names it agrees:

* the version, ``nqf_mini.__version__`` (its one home), is the newest section of
  ``CHANGELOG.md`` (``## [X.Y.Z] - date``), with no unreleased changes above it;
* ``CITATION.cff`` states the same version;
* every chapter's first code cell is the canonical install cell of that version
  (``make install-cells``), and the notebook edition in ``notebooks/`` is up to date
  (``make notebooks``), so its cells install the same tag;
* the working tree is clean and the tag does not exist yet (or already names this
  commit).

``python -m scripts.release`` prints what disagrees (exit status 1) or that all agree;
``--tag`` then creates the annotated tag ``v<version>`` and says how to push it.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import nbformat

from scripts.notebook_edition import edition, install_cell

ROOT = Path(__file__).resolve().parents[1]
SECTION = re.compile(r"^## \[(?P<version>[^\]]+)\]", re.M)


def changelog_version(text: str) -> str | None:
    """The version of the newest section of a changelog (``Unreleased`` included)."""
    match = SECTION.search(text)
    return match.group("version") if match else None


def citation_version(text: str) -> str | None:
    match = re.search(r"^version:\s*[\"']?([^\"'\s]+)", text, re.M)
    return match.group(1) if match else None


def _git(*args: str) -> str:
    out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else ""


def problems(root: Path = ROOT, version: str | None = None) -> list[str]:
    """What disagrees with releasing ``version`` (default: the package's) from ``root``."""
    version = version or install_cell.package_version()
    found = []
    newest = changelog_version((root / "CHANGELOG.md").read_text(encoding="utf-8"))
    if newest != version:
        found.append(
            f"CHANGELOG.md: the newest section is [{newest}], not [{version}]: "
            "name the release and date it"
        )
    cited = citation_version((root / "CITATION.cff").read_text(encoding="utf-8"))
    if cited != version:
        found.append(f"CITATION.cff: version {cited}, not {version}")
    canonical = install_cell.install_cell_source(root, version)
    for path in sorted((root / "chapters").glob("*.ipynb")):
        cell = install_cell.first_code_cell(nbformat.read(path, as_version=4))
        if cell.source != canonical:
            found.append(
                f"{path.relative_to(root)}: not the install cell of v{version} "
                "(run `make install-cells`)"
            )
    stale = edition.stale(root)
    if stale:
        found.append(f"notebooks/: {len(stale)} notebooks are stale (run `make notebooks`)")
    return found


def repository_problems(version: str) -> list[str]:
    """The working tree must be clean, and the tag new or already on this commit."""
    found = []
    if _git("status", "--porcelain"):
        found.append("the working tree has uncommitted changes")
    tagged = _git("rev-list", "-n", "1", f"v{version}")
    if tagged and tagged != _git("rev-parse", "HEAD"):
        found.append(f"the tag v{version} exists and names another commit ({tagged[:12]})")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tag", action="store_true", help="create the tag if all agree")
    args = parser.parse_args()
    version = install_cell.package_version()
    found = problems(ROOT, version) + repository_problems(version)
    for problem in found:
        print(f"release v{version}: {problem}")
    if found:
        return 1
    print(f"release v{version}: version, changelog, citation, install cells and edition agree")
    if args.tag and not _git("rev-list", "-n", "1", f"v{version}"):
        subprocess.run(
            ["git", "tag", "-a", f"v{version}", "-m", f"nqf_mini {version}"], cwd=ROOT, check=True
        )
        print(f"tagged v{version}; publish it with: git push origin v{version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
