"""Copy the book's web assets from ``node_modules/`` into ``book/_static/vendor/``.

The HTML book serves MathJax, RequireJS and the ipywidgets HTML manager itself, so that a page
renders with no network. The packages are pinned in ``package.json`` / ``package-lock.json`` and
installed by ``npm ci`` (``make book`` does both steps); this script copies only the files the
pages load, at the relative paths those scripts expect:

* ``vendor/mathjax/``: ``tex-chtml.js`` (the ES5 combined component), ``ui/lazy.js`` (lazy
  typesetting, loaded by ``mathjax3_config`` in ``_config.yml``), the CHTML ``woff-v2`` fonts,
  the TeX extensions that ``autoload`` and ``\\require`` fetch, and the ``a11y``/``sre`` components
  that the MathJax menu's accessibility options load on demand.
* ``vendor/require.js``: the npm package ships RequireJS unminified only.
* ``vendor/html-manager/``: ``embed-amd.js``, the icon fonts it references, and ``fonts-path.js``
  (written here), which tells RequireJS that the bundle lives in this folder: the bundle looks for
  its fonts beside the URL that RequireJS gives its module, by default the page's own folder.

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
    ("requirejs/require.js", "require.js", None),
    ("@jupyter-widgets/html-manager/dist/embed-amd.js", "html-manager/embed-amd.js", None),
    ("@jupyter-widgets/html-manager/dist", "html-manager",
     ["*.woff2", "*.woff"]),
]

# Loaded between require.js and embed-amd.js (see nb_ipywidgets_js in _config.yml).
FONTS_PATH_JS = """\
// Written by scripts/vendor_assets.py. The widget manager finds its icon fonts next to the URL that
// RequireJS assigns its module; point that URL at this folder.
require.config({paths: {"@jupyter-widgets/html-manager/dist":
  new URL(".", document.currentScript.src).href.replace(/\\/$/, "")}});
"""


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
        files = [(source, target)] if patterns is None else [
            (f, target / f.name) for p in patterns for f in sorted(source.glob(p)) if f.is_file()]
        if not files:
            print(f"vendor_assets: nothing matched in {src}")
            return 1
        for f, t in files:
            t.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, t)
            count += 1
    (DEST / "html-manager" / "fonts-path.js").write_text(FONTS_PATH_JS)
    count += 1
    size = sum(f.stat().st_size for f in DEST.rglob("*") if f.is_file())
    print(f"vendor_assets: {count} files, {size / 1e6:.1f} MB in {DEST.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
