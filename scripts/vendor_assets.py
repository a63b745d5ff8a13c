"""Copy the book's web assets from ``node_modules/`` into ``book/_static/vendor/``.

The HTML book serves MathJax itself, so that a page renders with no network. The package is
pinned in ``package.json`` / ``package-lock.json`` and installed by ``npm ci`` (``make book``
does both steps); this script copies only the files the pages load, at the relative paths
those scripts expect:

* ``vendor/mathjax/``: ``tex-chtml.js`` (the ES5 combined component), ``ui/lazy.js`` (lazy
  typesetting, loaded by ``mathjax3_config`` in ``_config.yml``), the CHTML ``woff-v2`` fonts,
  the TeX extensions that ``autoload`` and ``\\require`` fetch, and the ``a11y``/``sre`` components
  that the MathJax menu's accessibility options load on demand.

Nothing else: the explorers draw their frames without the ipywidgets HTML manager, so the
book no longer ships it (3.9 MB) nor RequireJS. axe-core (``package.json``) is used by the
browser test from ``node_modules/`` and is not part of the site.

The destination is rebuilt from scratch on every run, so running it twice gives the same tree.
Usage: ``python -m scripts.vendor_assets`` from the repository root.
"""

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NODE = ROOT / "node_modules"
DEST = ROOT / "book" / "_static" / "vendor"

# (source under node_modules, destination under vendor, glob patterns or None for the file itself)
ASSETS = [
    ("mathjax/es5/tex-chtml.js", "mathjax/tex-chtml.js", None),
    ("mathjax/es5/ui/lazy.js", "mathjax/ui/lazy.js", None),
    ("mathjax/es5/output/chtml/fonts/woff-v2", "mathjax/output/chtml/fonts/woff-v2", ["*.woff"]),
    ("mathjax/es5/input/tex/extensions", "mathjax/input/tex/extensions", ["*.js"]),
    ("mathjax/es5/a11y", "mathjax/a11y", ["*.js"]),
    ("mathjax/es5/sre/mathmaps", "mathjax/sre/mathmaps", ["*.json"]),
    ("mathjax/LICENSE", "mathjax/LICENSE", None),
]


def main() -> int:
    missing = [src for src, _, _ in ASSETS if not (NODE / src).exists()]
    if missing:
        print("vendor_assets: missing in node_modules (run `npm ci` first):", *missing, sep="\n  ")
        return 1
    if DEST.exists():
        shutil.rmtree(DEST)
    count = 0
    for src, dst, patterns in ASSETS:
        source, target = NODE / src, DEST / dst
        files = (
            [(source, target)]
            if patterns is None
            else [
                (f, target / f.name)
                for p in patterns
                for f in sorted(source.glob(p))
                if f.is_file()
            ]
        )
        if not files:
            print(f"vendor_assets: nothing matched in {src}")
            return 1
        for f, t in files:
            t.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, t)
            count += 1
    size = sum(f.stat().st_size for f in DEST.rglob("*") if f.is_file())
    print(f"vendor_assets: {count} files, {size / 1e6:.1f} MB in {DEST.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
