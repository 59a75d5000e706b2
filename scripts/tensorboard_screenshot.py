"""Retake book/images/tensorboard-split-op.png: TensorBoard's graph view of Chapter 2's graph with
BasicLSTMCell's ``split`` op selected, from a real TensorBoard server on the book's own logs.

A maintainer tool; the tests do not run it. It drives headless Chromium with Playwright, which is
not part of the book's environment: keep it in a venv of its own, for example

    python3 -m venv /tmp/pw && /tmp/pw/bin/pip install playwright
    /tmp/pw/bin/python scripts/tensorboard_screenshot.py

Chromium comes from the system (Debian: ``apt-get install chromium``; ``--chromium`` to point
elsewhere); Playwright's own browser download is not needed. The script

1. writes the chapter's ``static_rnn`` run into ``logs/02-lstm-gate-tensors/`` with the book's
   venv (``rnnbook.graphs.write_chapter_logs``) unless it is there already (running
   ``book/02-lstm-gate-tensors.ipynb`` writes it, and the Keras run next to it);
2. starts that venv's TensorBoard on 127.0.0.1 on a free port (nothing leaves the machine);
3. opens the Graphs tab, picks run ``static_rnn``, double-clicks ``rnn`` and ``basic_lstm_cell``
   to open them and clicks ``split``, as the chapter tells readers to;
4. zooms in on the op, pans it to the middle of the canvas and saves the graph and the node
   card (the window without TensorBoard's header and sidebar) as a PNG; then stops the server.

Only the standard library, Playwright and ``rnnbook.graphs`` (which starts the server, and
imports nothing else at module level) are imported here.
"""
import argparse
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from rnnbook import graphs  # noqa: E402  (standard library only at import: no TensorFlow here)

STEM = "02-lstm-gate-tensors"
RUN = "static_rnn"
NODE = "rnn/basic_lstm_cell/split"
#: TensorBoard's layout in pixels: its header's height, its sidebar's width, its node card's
#: width (with margins). The screenshot keeps what lies right of the sidebar, below the header.
HEADER, SIDEBAR, CARD = 64, 320, 330
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"),
                        help="the book's Python (with rnnbook and tensorboard)")
    parser.add_argument("--logdir", default=str(ROOT / "logs" / STEM))
    parser.add_argument("--out", default=str(ROOT / "book" / "images" / "tensorboard-split-op.png"))
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--width", type=int, default=1100,
                        help="window width; the image is this minus the sidebar's 320 px")
    parser.add_argument("--height", type=int, default=760)
    parser.add_argument("--zoom", type=int, default=2, help="wheel notches to zoom in on split")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for the server")
    return parser.parse_args()


def write_logs(python, logdir):
    """Write the chapter's static_rnn run with the book's own code, unless it exists."""
    if list((pathlib.Path(logdir) / RUN).glob("events.out.tfevents.*")):
        return
    code = ("import rnnbook, sys; rnnbook.setup(); from rnnbook import graphs; "
            "graphs.write_chapter_logs(sys.argv[1])")
    subprocess.run([python, "-c", code, str(logdir)], check=True, cwd=ROOT)


def node(page, name):
    return page.locator(f'g.node[data-name="{name}"] .nodeshape').first


def screenshot(url, args):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=args.chromium, headless=True,
                                             args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": args.width, "height": args.height})
        page.goto(f"{url}/#graphs")
        page.wait_for_selector("g.node", timeout=60_000)
        runs = page.locator("paper-dropdown-menu").first  # the sidebar's "Run" menu
        if RUN not in runs.inner_text():
            runs.click()
            page.locator("paper-item", has_text=RUN).first.click()
        node(page, "rnn").wait_for(timeout=30_000)
        for scope in ("rnn", "rnn/basic_lstm_cell"):  # open the two scopes, as a reader would
            node(page, scope).dblclick()
            node(page, f"{scope}/" + ("basic_lstm_cell" if scope == "rnn" else "split")).wait_for()
            page.wait_for_timeout(1500)  # the layout animates
        split = node(page, NODE)
        split.click()
        page.get_by_text("Operation: Split").first.wait_for(timeout=10_000)  # the node's card
        page.wait_for_timeout(1000)
        for _ in range(args.zoom):  # zoom in on the op, one wheel notch at a time
            box = split.bounding_box()
            page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            page.mouse.wheel(0, -120)
            page.wait_for_timeout(300)
        page.wait_for_timeout(1000)
        # pan the op right of the middle of the canvas between the sidebar and the card, so
        # that `kernel`, down to its left, stays in the picture
        box = split.bounding_box()
        target_x = SIDEBAR + 0.63 * (args.width - SIDEBAR - CARD)
        target_y = 0.45 * args.height
        start_x, start_y = SIDEBAR + 10, args.height - 20  # empty canvas, bottom left
        page.mouse.move(start_x, start_y)
        page.mouse.down()
        page.mouse.move(start_x + target_x - (box["x"] + box["width"] / 2),
                        start_y + target_y - (box["y"] + box["height"] / 2), steps=10)
        page.mouse.up()
        page.evaluate("window.getSelection().removeAllRanges()")  # the drag may select text
        page.wait_for_timeout(1500)
        # crop: the graph and the node card, without TensorBoard's header and sidebar
        page.screenshot(path=args.out, clip={"x": SIDEBAR, "y": HEADER,
                                             "width": args.width - SIDEBAR,
                                             "height": args.height - HEADER})
        browser.close()


def main():
    args = arguments()
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_logs(args.python, args.logdir)
    with graphs.tensorboard(args.logdir, timeout=args.timeout, python=args.python) as url:
        screenshot(url, args)
    size = pathlib.Path(args.out).stat().st_size
    print(f"wrote {args.out} ({size // 1024} KB) from TensorBoard at {url}")
    if size > 300 * 1024:
        print("warning: larger than 300 KB; try a smaller --width/--height", file=sys.stderr)


if __name__ == "__main__":
    main()
