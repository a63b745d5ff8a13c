"""The Jupyter/Colab edition of the chapters: MyST -> CommonMark, numbered like the HTML
book. Modules: :mod:`.myst` reads the MyST block syntax; :mod:`.transforms` rewrites one
construct per function; :mod:`.numbering` is the format of the book's numbering table
(which the book's build writes); :mod:`.install_cell` makes the Colab install cell;
:mod:`.edition` converts whole notebooks and writes ``notebooks/``. The command line is
``scripts/make_notebooks.py``; ``scripts/make_student.py`` uses the same conversion for the
student edition.
"""

from .edition import convert_notebook, load_table, site_url, stale, write_edition
from .install_cell import install_cell_source
from .transforms import ConversionError, Context, convert

__all__ = [
    "ConversionError",
    "Context",
    "convert",
    "convert_notebook",
    "install_cell_source",
    "load_table",
    "site_url",
    "stale",
    "write_edition",
]
