/* RNN Internals: every region that scrolls sideways can be reached from the keyboard
   (WCAG 2.1.1; axe-core's scrollable-region-focusable). code-width.css lets tables, cell
   outputs and display math scroll on a narrow screen rather than widen the page; the theme
   makes a scrolling code block focusable, and this does the same for the rest: tabindex 0
   while the region scrolls, none while it fits. Again when the window's width or the page
   changes (tests/rendered.py checks every page at 1280 and 390 px). */
(function () {
  var SCROLLING = "article table, .pst-scrollable-table-container, div.cell_output, " +
    'mjx-container[display="true"]';
  function reach() {
    document.querySelectorAll(SCROLLING).forEach(function (el) {
      if (el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight) {
        el.tabIndex = 0;
      } else if (el.getAttribute("tabindex") === "0") {
        el.removeAttribute("tabindex");
      }
    });
  }
  var timer = null;
  function later() {
    clearTimeout(timer);
    timer = setTimeout(reach, 100);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", reach);
  } else {
    reach();
  }
  window.addEventListener("load", reach);
  window.addEventListener("resize", later);
  /* MathJax typesets after the load: its display math may scroll once it is drawn */
  new MutationObserver(later).observe(document.documentElement,
                                      {subtree: true, childList: true});
})();
