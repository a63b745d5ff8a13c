"""The course's tooling, a package run from the repository root as ``python -m
scripts.NAME`` (the Makefile's targets do): the notebook and student editions, the
student book, chapter execution, seeds, the compatibility environments and the web
assets. Nothing here is part of ``nqf_mini``; the Sphinx extensions in ``book/_ext``
import it from the repository root.
"""
