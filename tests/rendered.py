"""The built book as a reader sees it: shared by tests/test_book.py (the self-study edition)
and tests/test_editions.py (the course edition). Not a test module.

- :func:`unrendered_tex`: TeX left as text in a page's HTML (``$``, ``\\tanh``, ``\\odot``,
  ``_{`` outside math, code and scripts), and list items that start inside math (a source
  line of an equation beginning with "+ " or "- " read as a list item). Plain HTML, no browser.
- :func:`dead_links`: relative links of the built HTML that name no file of the build.
- :func:`measure`: every page in ONE headless Chromium run, each loaded in a frame 1280 px
  and 390 px wide: code blocks wider than their column, output images shown so small that
  their smallest type is under 9 px, and anything wider than the article that is not inside a
  sideways scroller (cut at the right, or widening the page), and sideways scrollers that the
  keyboard cannot reach (no tabindex, nothing focusable inside).
"""
import html
import html.parser
import json
import os
import pathlib
import re
import shutil
import subprocess
import urllib.parse

import pytest

from conftest import in_ci

#: the windows every page is measured in (a laptop, a phone)
WIDTHS = (1280, 390)
#: the smallest type a figure holds, in px at the size it was drawn (rnnbook.plots: MIN_FONT
#: points at DPI dots per inch); :data:`SMALLEST` over this is the smallest scale allowed
FIGURE_TYPE = 9 * 100 / 72
SMALLEST = 9
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: TeX that only MathJax should show: outside math it is left unrendered
TEX = re.compile(r"\$|\\tanh|\\odot|\\sigma|\\tilde|\\frac|_\{|\^\{")
#: elements whose text is not prose (math is MathJax's input; code shows TeX on purpose)
SKIP = {"script", "style", "pre", "code", "textarea", "kbd", "samp", "tt"}


class _Prose(html.parser.HTMLParser):
    """The article's prose: text outside math, code and scripts, and each list item's first
    words."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.skipping, self.in_article = [], 0, 0
        self.text, self.items, self.item_open = [], [], False

    def handle_starttag(self, tag, attrs):
        if tag in ("br", "img", "hr", "input", "meta", "link", "source", "wbr"):
            return
        classes = (dict(attrs).get("class") or "").split()
        skip = tag in SKIP or "math" in classes or "highlight" in classes
        self.stack.append((tag, skip))
        self.skipping += skip
        self.in_article += tag == "article"
        if tag == "li":
            self.items.append("")
            self.item_open = True

    def handle_endtag(self, tag):
        while self.stack:
            open_tag, skip = self.stack.pop()
            self.skipping -= skip
            self.in_article -= open_tag == "article"
            if open_tag == tag:
                break

    def handle_data(self, data):
        if not self.in_article:
            return
        if self.item_open and data.strip():
            self.items[-1] = data.strip() if not self.skipping else "(math or code)"
            self.item_open = False
        if not self.skipping:
            self.text.append(data)


def unrendered_tex(page_html):
    """``[what]`` of one page: each piece of TeX in its prose, each list item starting in
    an equation."""
    parser = _Prose()
    parser.feed(page_html)
    found = []
    for chunk in parser.text:
        for hit in TEX.finditer(chunk):
            found.append("TeX as text: ..." + chunk[max(0, hit.start() - 30): hit.end() + 30]
                         .replace("\n", " ") + "...")
    for item in parser.items:
        if TEX.search(item) or re.match(r"[)}\]=+]", item):
            found.append(f"a list item starting inside math: {item[:60]!r}")
    return found


class _Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("href", "src") if tag in ("a", "img", "script", "link") else ():
            if attrs.get(key):
                self.links.append(attrs[key])


def pages(built):
    """Every HTML page of a build a reader opens (no copies of sources, no static files, no
    redirect)."""
    out = []
    for page in sorted(built.rglob("*.html")):
        parts = page.relative_to(built).parts
        if parts[0].startswith("_") or page.name in ("index.html",) and len(parts) == 1:
            continue
        out.append(page)
    return out


def dead_links(built):
    """``[(page, link)]``: relative links (and images, scripts, styles) naming no file."""
    dead = []
    for page in pages(built):
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        for link in parser.links:
            parsed = urllib.parse.urlparse(link)
            if parsed.scheme or parsed.netloc or link.startswith(("#", "mailto:", "data:")):
                continue
            target = (page.parent / urllib.parse.unquote(parsed.path)).resolve()
            if parsed.path and not target.exists():
                dead.append((str(page.relative_to(built)), link))
    return dead


# ------------------------------------------------------------------ in Chromium

#: runs in the harness page: loads each page in a frame of each width, measures it, and
#: writes the findings as JSON into <body data-rendered="...">, which --dump-dom prints
HARNESS = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body><script>
const PAGES = %(pages)s, WIDTHS = %(widths)s, SCALE = %(scale)s;
function scroller(el, top) {
  for (let a = el; a && a !== top; a = a.parentElement) {
    const o = getComputedStyle(a).overflowX;
    if ((o === "auto" || o === "scroll") && a.scrollWidth > a.clientWidth + 1) return a;
  }
  return null;
}
function measure(win, doc, width) {
  const found = [], article = doc.querySelector("article") || doc.body;
  const right = article.getBoundingClientRect().right;
  const visible = (el) => el.getClientRects().length > 0 && !el.closest("details:not([open])")
    && getComputedStyle(el).visibility !== "hidden" && el.offsetParent !== null;
  const say = (kind, el, text) => found.push({kind: kind, text: text,
    line: (el.textContent || el.alt || "").trim().split("\\n")[0].slice(0, 60)});
  for (const pre of article.querySelectorAll("pre")) {
    if (!visible(pre) || pre.scrollWidth <= pre.clientWidth + 1) continue;
    const o = getComputedStyle(pre).overflowX;
    if (width >= 1280) say("code wider than its column", pre,
                          pre.scrollWidth + " px in " + pre.clientWidth + " px");
    else if (o !== "auto" && o !== "scroll") say("code cut at the right", pre, "overflow " + o);
  }
  for (const img of article.querySelectorAll(".cell_output img")) {
    if (!visible(img) || !img.naturalWidth) continue;
    const scale = img.getBoundingClientRect().width / img.naturalWidth;
    if (scale * SCALE < %(smallest)s - 0.05) say("figure type too small", img,
      (scale * SCALE).toFixed(1) + " px (shown at " + Math.round(100 * scale) + " %%)");
  }
  for (const el of article.querySelectorAll("table, pre, img, .math, mjx-container, div")) {
    if (!visible(el) || el.getBoundingClientRect().right <= right + 1) continue;
    if (scroller(el, article.parentElement)) continue;
    say("cut at the right (" + el.tagName.toLowerCase() + ")", el,
        Math.round(el.getBoundingClientRect().right - right) + " px beyond the article");
  }
  // a region that scrolls must be reachable from the keyboard: focusable itself or holding
  // something focusable (WCAG 2.1.1; axe-core's scrollable-region-focusable)
  const focusable = "a[href], button, input, select, textarea, [tabindex]:not([tabindex='-1'])";
  for (const el of article.querySelectorAll("table, pre, div, mjx-container")) {
    const o = getComputedStyle(el).overflowX;
    if (!visible(el) || (o !== "auto" && o !== "scroll")
        || el.scrollWidth <= el.clientWidth + 1) continue;
    if (el.tabIndex < 0 && !el.querySelector(focusable)) say(
      "a scrolling region the keyboard cannot reach (" + el.tagName.toLowerCase() + ")", el,
      el.scrollWidth + " px in " + el.clientWidth + " px, no tabindex");
  }
  const page = doc.documentElement.scrollWidth;
  if (page > win.innerWidth + 1) {
    let culprit = doc.body;  // the innermost element reaching past the window
    for (const el of doc.body.querySelectorAll("*")) {
      if (visible(el) && el.getBoundingClientRect().right > win.innerWidth + 1
          && !scroller(el, null)) culprit = el;
    }
    say("page wider than the window (" + culprit.tagName.toLowerCase() + ")", culprit,
        page + " px in a " + win.innerWidth + " px window");
  }
  return found;
}
async function run() {
  const results = [];
  for (const width of WIDTHS) for (const page of PAGES) {
    const frame = document.createElement("iframe");
    frame.style.cssText = "width:" + width + "px;height:900px;border:0";
    const loaded = new Promise((done) => { frame.onload = done; });
    frame.src = page;
    document.body.appendChild(frame);
    await loaded;
    const math = frame.contentWindow.MathJax;  // wait for its first typesetting
    if (math && math.startup && math.startup.promise) await math.startup.promise;
    await new Promise((done) => setTimeout(done, 300));  // (_static/scroll-focus.js's pass)
    let found;
    try { found = measure(frame.contentWindow, frame.contentDocument, width); }
    catch (error) { found = [{kind: "not measured", text: String(error), line: ""}]; }
    results.push({page: page, width: width, found: found});
    frame.remove();
  }
  document.body.setAttribute("data-rendered", JSON.stringify(results));
}
run();
</script></body></html>"""


def find_browser():
    """A Chromium (or Chrome) executable: $CHROMIUM, else the first of BROWSERS on PATH."""
    named = os.environ.get("CHROMIUM")
    if named:
        return shutil.which(named) or (named if os.access(named, os.X_OK) else None)
    return next((path for path in map(shutil.which, BROWSERS) if path), None)


def need_browser(path, environ=None):
    """``path``, or skip the calling test; under ``CI=true`` fail it (.ci/run installs one)."""
    if path is not None:
        return path
    reason = ("no Chromium found (looked for $CHROMIUM, then " + ", ".join(BROWSERS)
              + " on PATH): the rendered-page check needs a headless browser, "
              "e.g. Debian's `apt-get install chromium`")
    if in_ci(environ):
        pytest.fail(reason + ", and CI=true: .ci/run installs it", pytrace=False)
    pytest.skip(reason)


def measure(browser, built, scratch, only=None, widths=WIDTHS, harness=HARNESS,
            scale=FIGURE_TYPE):
    """``{(page, width): [finding]}`` for every page of ``built`` (or the pages ``only``),
    in one Chromium run; each finding a dict of ``kind``, ``text`` and ``line``. ``scale``:
    the smallest type of a figure, in px at the size it was drawn."""
    chosen = only if only is not None else pages(built)
    script = harness
    harness = built / "_rendered-check.html"
    harness.write_text(script % {
        "pages": json.dumps([str(p.relative_to(built)) for p in chosen]),
        "widths": json.dumps(list(widths)), "scale": scale, "smallest": SMALLEST},
        encoding="utf-8")
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
               "--no-first-run", "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--allow-file-access-from-files", "--hide-scrollbars",
               f"--user-data-dir={scratch}", "--window-size=1400,1000",
               f"--virtual-time-budget={4000 * len(chosen) * len(widths)}",
               "--dump-dom", harness.resolve().as_uri()]
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    finally:
        harness.unlink()
    found = re.search(r'data-rendered="([^"]*)"', run.stdout)
    assert found, f"the pages did not report their measures ({browser} exit {run.returncode}):\n" \
        + run.stderr[-1500:]
    return {(r["page"], r["width"]): r["found"]
            for r in json.loads(html.unescape(found.group(1)))}


def report(measured):
    """The findings as lines, page by page (empty: every page passed)."""
    return [f"{page} at {width} px: {f['kind']}: {f['text']} ({f['line']!r})"
            for (page, width), found in sorted(measured.items()) for f in found]


def build_html(page_html, folder, name):
    """Write ``page_html`` as ``name`` in ``folder`` (a built book's); returns the path."""
    path = pathlib.Path(folder) / name
    path.write_text(page_html, encoding="utf-8")
    return path
