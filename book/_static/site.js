/* The course's own page script (loaded on every page, deferred; see _config.yml).
 *
 * 1. The sidebar toggles on a phone. pydata-sphinx-theme 0.17 and sphinx-book-theme 1.3
 *    attach their click handlers with document.querySelector(".primary-toggle") (and
 *    ".secondary-toggle"), which finds the theme's hidden navbar button first: the button a
 *    reader taps gets no handler, so on a phone neither the chapter menu nor the page
 *    contents open (pydata-sphinx-theme#2451, sphinx-book-theme#988, open upstream). A tap
 *    on any other toggle is forwarded to the first one, which has the handlers. Remove this
 *    part once the theme is fixed (tests/browser/test_phone.py taps both at 390 px).
 * 2. Wide display math. A display formula wider than its column scrolls sideways
 *    (custom.css); this marks the side on which part of it is hidden (.nqf-more-left,
 *    .nqf-more-right), which custom.css draws as an inner shadow: the reader's cue that
 *    there is more. Formulas are typeset lazily, as they scroll into view, so every display
 *    container is watched for size changes.
 */
(() => {
  function forwardToggles() {
    for (const kind of ["primary", "secondary"]) {
      const toggles = document.querySelectorAll(`.${kind}-toggle`);
      toggles.forEach((button, i) => {
        if (i === 0) return;
        button.addEventListener("click", (event) => {
          event.preventDefault();
          event.stopPropagation();
          toggles[0].click();
        });
      });
    }
  }

  function markEdges(box) {
    const hidden = box.scrollWidth - box.clientWidth;
    box.classList.toggle("nqf-more-left", hidden > 1 && box.scrollLeft > 1);
    box.classList.toggle("nqf-more-right", hidden > 1 && box.scrollLeft < hidden - 1);
  }

  function watchWideMath() {
    if (!("ResizeObserver" in window)) return;
    const observer = new ResizeObserver((entries) => {
      for (const entry of entries) markEdges(entry.target);
    });
    const watch = (box) => {
      if (box.dataset.nqfWatched) return;
      box.dataset.nqfWatched = "1";
      observer.observe(box);
      box.addEventListener("scroll", () => markEdges(box), { passive: true });
    };
    const scan = () =>
      document.querySelectorAll('mjx-container[display="true"]').forEach(watch);
    scan();
    // MathJax replaces the TeX by containers after this script runs: watch new ones too
    // (at most one scan per frame, however many nodes MathJax inserts).
    let pending = false;
    new MutationObserver(() => {
      if (pending) return;
      pending = true;
      requestAnimationFrame(() => {
        pending = false;
        scan();
      });
    }).observe(document.body, { childList: true, subtree: true });
  }

  const start = () => {
    forwardToggles();
    watchWideMath();
  };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
