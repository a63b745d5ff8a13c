"""Coursework for the NQF course, kept apart from the science in :mod:`nqf_mini`.

* :mod:`nqf_mini.course.check`: ``check.exercise(label, answer)``, the exercises' self-checks
  (the checks of each chapter live in ``checks_ch<N>``, one module per chapter, registered
  in :mod:`~nqf_mini.course.registry`, with the shared comparisons in
  :mod:`~nqf_mini.course.feedback`);
* :mod:`nqf_mini.course.grade`: ``make grade``, the grader of a class (sandboxed
  kernels, :mod:`~nqf_mini.course.sandbox`; the gradebook files,
  :mod:`~nqf_mini.course.gradebook`);
* :mod:`nqf_mini.course.style`: the figure style and colours of the book;
* :mod:`nqf_mini.course.printing`: rounded printing, so that stored outputs are reproducible;
* :mod:`nqf_mini.course.explorer`: the chapters' explorers, figures precomputed over a grid of
  control values and switched in the browser, so that they work on the static book.

``import nqf_mini`` imports none of this (nor matplotlib); a chapter imports what it uses, e.g.
``from nqf_mini.course import check, style``.
"""
