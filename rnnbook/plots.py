"""The book's figures (matplotlib): the shared ones, and the long drawing code of a chapter's
picture, so that the page shows the idea and its numbers rather than the plotting.

- :func:`figure`         a new figure at the book's size, resolution and type sizes
- :func:`kernel_blocks`  a TF1 kernel as a heatmap with its W/U (and gate) blocks (Chapters 1, 2)
- :func:`gate_heatmaps`  gate values over time, one annotated panel per gate (Chapter 2)
- :func:`lstm_cell_diagram`  the one picture of the LSTM cell: gates highlighted beside their
  equations, options (Chapter 3) and gradient paths (Chapter 5); Chapters 2, 3, 5
- :func:`gru_cell_diagram`   its GRU form: r before or after the candidate's matmul (Chapter 6)
- :func:`stateful_layout`    a long series cut into stateful batches, right and wrong (Chapter 4)
- :func:`chunk_runs`     one unit's output, whole run vs chunks carried or from zeros (Chapter 4)
- :func:`error_by_step`  stateful vs zeros: error by step within a chunk, and a trace (Chapter 4)
- :func:`loss_curves`    training losses over updates, raw and smoothed (Chapter 4)
- :func:`norms_over_time`  gradient norms over time, log scale (Chapter 5)
- :func:`padded_steps`   a padded batch: what each step reads forward and backward, and where
  the final state is taken with and without ``sequence_length`` (Chapter 7)

Every figure is at most :data:`MAX_WIDTH` inches wide at :data:`DPI`, so it is shown at its own
size in the book's column, and every text in it is at least :data:`MIN_FONT` points.
"""
from __future__ import annotations

from typing import Any, Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch, Rectangle

#: dots per inch of every figure the book stores (PNG, small enough to commit)
DPI = 100
#: the widest figure, in inches: 7.2 in at 100 dpi fills the book's column at a 1400 px window
MAX_WIDTH = 7.2
#: the smallest type in a figure, in points (labels, ticks, legends, annotations)
MIN_FONT = 9
#: type sizes of every figure the book draws (applied when this module is imported)
TYPE = {"font.size": 10, "axes.titlesize": 11, "axes.labelsize": 10, "xtick.labelsize": 9,
        "ytick.labelsize": 9, "legend.fontsize": 9, "figure.titlesize": 11}
mpl.rcParams.update(TYPE)  # type: ignore[arg-type]  # matplotlib's keys are Literals


def figure(width: float = 6.0, height: float = 3.0, **kwargs: Any) -> tuple[Figure, Any]:
    """A new figure at the book's size and resolution: ``fig, ax = figure()``."""
    if width > MAX_WIDTH:
        raise ValueError(f"a figure {width} in wide is scaled down in the column; "
                         f"at most {MAX_WIDTH} in")
    return plt.subplots(figsize=(width, height), dpi=DPI, **kwargs)


def kernel_blocks(kernel: np.ndarray, input_depth: int, gates: Sequence[str] | None = None,
                  ax: Any = None, title: str | None = None, cmap: str = "RdBu_r") -> Figure:
    """Draw a TF1 cell's kernel as a heatmap with its blocks outlined and labelled; return the figure.

    ``kernel`` is ``(D + H, G * H)`` with ``D = input_depth``: rows ``[:D]`` multiply the input x
    (block W), rows ``[D:]`` multiply the previous state h (block U). ``gates`` names ``G`` equal
    column blocks in the order the cell stores them, for example ``("i", "j", "f", "o")`` for TF1's
    LSTM kernel; None means one column block (BasicRNNCell). Every block is outlined and labelled
    with its name and shape (``W``, ``U``; ``W_i``, ``U_i``, ... with gates). The colour scale is
    symmetric about zero. Pass ``ax`` to draw into an existing axes.
    """
    kernel = np.asarray(kernel, dtype=float)
    if kernel.ndim != 2:
        raise ValueError(f"kernel must be 2-D (D + H, G * H), not of shape {kernel.shape}")
    rows, cols = kernel.shape
    if not 0 < input_depth < rows:
        raise ValueError(f"input_depth must be 1 to {rows - 1} for a kernel with {rows} rows")
    gates = tuple(gates) if gates else ("",)
    if cols % len(gates):
        raise ValueError(f"{cols} columns do not split into {len(gates)} equal gate blocks")
    width = cols // len(gates)

    if ax is None:
        fig, ax = figure(min(MAX_WIDTH, 2.8 + 0.4 * cols), min(6.0, 1.4 + 0.4 * rows))
    else:
        fig = ax.figure
    vmax = float(np.abs(kernel).max()) or 1.0
    image = ax.imshow(kernel, cmap=cmap, vmin=-vmax, vmax=vmax, aspect="equal")
    fig.colorbar(image, ax=ax, shrink=0.8)

    for name, top, bottom in (("W", 0, input_depth), ("U", input_depth, rows)):
        for k, gate in enumerate(gates):
            left = k * width
            corner = (left - 0.5, top - 0.5)  # cell centres sit on integers in imshow
            ax.add_patch(Rectangle(corner, width, bottom - top, fill=False, edgecolor="black", lw=2))
            symbol = f"${name}_{{{gate}}}$" if gate else f"${name}$"
            ax.text(
                left + (width - 1) / 2,
                (top + bottom - 1) / 2,
                f"{symbol}\n{bottom - top}×{width}",
                ha="center",
                va="center",
                fontsize=10,
                bbox=dict(boxstyle="round,pad=0.2", facecolor="white", alpha=0.85, linewidth=0),
            )

    if rows <= 24:  # name each row after what it multiplies: x_0.., then h_0..
        names = [f"$x_{{{k}}}$" for k in range(input_depth)]
        names += [f"$h_{{{k}}}$" for k in range(rows - input_depth)]
        ax.set_yticks(range(rows), names)
    ax.set_ylabel("row: what it multiplies")
    if gates != ("",):
        ax.set_xticks([k * width + (width - 1) / 2 for k in range(len(gates))], gates)
        ax.set_xlabel("column block: gate")
    else:
        ax.set_xlabel("column: unit of h'")
    if title is None:
        title = f"kernel ({rows}, {cols}): W = rows [:{input_depth}], U = rows [{input_depth}:]"
    ax.set_title(title)
    return fig


def gate_heatmaps(values: dict[str, np.ndarray], rest: dict[str, float], labels: dict[str, str],
                  ncols: int = 2, width: float = MAX_WIDTH, height: float = 4.4) -> Figure:
    """One heatmap per gate, units down and time steps across, every cell annotated with its value.

    ``values`` maps a gate's name to its ``(T, H)`` values; ``rest`` maps it to the value the
    gate takes with no input (0.5 for a sigmoid of 0, 0 for tanh, ...), the centre of that
    panel's diverging colour map, so a step away from rest shows, however small; ``labels``
    maps it to the panel's title. Returns the figure.
    """
    gates = list(values)
    nrows = -(-len(gates) // ncols)
    fig, axes = figure(width, height, nrows=nrows, ncols=ncols, squeeze=False)
    for ax, gate in zip(axes.flat, gates, strict=False):  # spare axes are removed below
        value = np.asarray(values[gate], dtype=float).T  # (H, T)
        spread = float(np.abs(value - rest[gate]).max()) or 1.0
        ax.imshow(value, cmap="RdBu_r", vmin=rest[gate] - spread, vmax=rest[gate] + spread,
                  aspect="auto")
        for (unit, step), v in np.ndenumerate(value):
            dark = abs(v - rest[gate]) > 0.6 * spread  # white type on the deepest colours
            ax.text(step, unit, f"{v:.2f}", ha="center", va="center", fontsize=MIN_FONT,
                    color="white" if dark else "black")
        ax.set_title(f"{labels[gate]} (white: {rest[gate]:.2f}, at rest)")
        ax.set_xticks(range(value.shape[1]))
        ax.set_yticks(range(value.shape[0]))
        ax.set_xlabel("time step t")
        ax.set_ylabel("unit")
    for ax in axes.flat[len(gates):]:
        ax.remove()
    fig.tight_layout()
    return fig


#: the LSTM's gates in the book's notation (TF1's i, j, f, o; Keras' candidate is g = j):
#: colour, the node's label, and the equation shown beside the diagram
CELL_GATES = {
    "f": ("tab:orange", "σ  f", r"forget: $\sigma(f + b_f)$, how much of $c_{t-1}$ is kept"),
    "i": ("tab:green", "σ  i", r"input: $\sigma(i)$, how much of the candidate is written"),
    "j": ("tab:purple", "tanh  j",
          r"candidate: $\tanh(j)$, what could be written (Keras: $g$)"),
    "o": ("tab:cyan", "σ  o", r"output: $h_t = \sigma(o) \odot \tanh(c_t)$, what is shown"),
    "c": ("tab:red", "", r"memory: $c_t = \sigma(f + b_f) \odot c_{t-1}"
                         r" + \sigma(i) \odot \tanh(j)$"),
}
#: the colours the diagrams draw a state line in, by the name a title gives them
COLOUR_NAMES = {"tab:red": "red", "tab:blue": "blue"}


def _named(line: str, colour: str) -> str:
    """``line`` with its colour in brackets when it is drawn in one (not grey): a title says
    only what the picture shows."""
    return f"{line} ({COLOUR_NAMES[colour]})" if colour in COLOUR_NAMES else line


class _Diagram:
    """The drawing kit both cell diagrams share: an equal-aspect canvas without axes, nodes,
    arrows and the equations beside the picture, each coloured by the group it belongs to
    (a gate, a line, or None for wiring) and ``highlight``: the highlighted group in its
    colour, the others grey; no highlight: every group in its colour."""

    GREY, BLACK = "0.65", "black"

    def __init__(self, groups: dict[str, tuple[str, str, str]], highlight: str | None,
                 ylim: tuple[float, float], height: float) -> None:
        if highlight not in (None, *groups):
            allowed = ", ".join(map(str, (None, *groups)))
            raise ValueError(f"highlight one of {allowed}, not {highlight!r}")
        self.groups, self.highlight = groups, highlight
        self.fig, self.ax = figure(MAX_WIDTH, height)
        self.ax.set(xlim=(0, 13), ylim=ylim, aspect="equal")
        self.ax.axis("off")

    def shown(self, group: str | None) -> str:
        """The colour of a part of ``group`` (a gate, a line or None for wiring)."""
        if self.highlight is None or group == self.highlight:
            return self.groups[group][0] if group in self.groups else self.BLACK
        return self.GREY

    def line(self, group: str, colour: str) -> str:
        """A state line's colour: its own unless another group is highlighted."""
        return colour if self.highlight in (None, group) else self.GREY

    def node(self, x0: float, y0: float, text: str, group: str | None = None,
             w: float = 0.9, dashed: bool = False) -> None:
        colour = self.shown(group)
        on = self.highlight is not None and group == self.highlight
        self.ax.add_patch(FancyBboxPatch((x0 - w / 2, y0 - 0.3), w, 0.6,
                                         boxstyle="round,pad=0.05",
                                         facecolor="lightyellow" if on else "white",
                                         edgecolor=colour, lw=2.5 if on else 1.2,
                                         linestyle="--" if dashed else "-"))
        self.ax.text(x0, y0, text, ha="center", va="center", fontsize=10,
                     color=self.BLACK if colour != self.GREY else self.GREY)

    def arrow(self, x0: float, y0: float, x1: float, y1: float, colour: str = BLACK,
              dashed: bool = False, width: float = 1.2, style: str = "->") -> None:
        self.ax.annotate("", (x1, y1), (x0, y0),
                         arrowprops=dict(arrowstyle=style, color=colour, lw=width,
                                         linestyle="--" if dashed else "-"))

    def labels(self, labels: Sequence[tuple[float, float, str, str, float]]) -> None:
        for x0, y0, text, colour, size in labels:
            self.ax.text(x0, y0, text, color=colour, fontsize=size)

    def finish(self, title: str, top: float = -1.15) -> Figure:
        """The equations below the picture (the highlighted one in colour and bold), the
        title; returns the figure."""
        for row, (group, (colour, _, equation)) in enumerate(self.groups.items()):
            on = self.highlight in (None, group)
            self.ax.text(0.2, top - 0.42 * row, equation, fontsize=10,
                         color=colour if on else self.GREY, va="center",
                         fontweight="bold" if self.highlight == group else "normal")
        self.ax.set_title(title)
        self.fig.tight_layout()
        return self.fig


def lstm_cell_diagram(highlight: str | None = None, peepholes: bool = False, clip: bool = False,
                      projection: bool = False, gradients: bool = False,
                      h: str = "h") -> Figure:
    """The book's one picture of an LSTM cell (after colah's): the c line (red) along the
    top, the h line (blue) along the bottom (the title names a line's colour only where it is
    drawn in it: with a gate highlighted, the other lines are grey), the four gates between,
    each gate's equation beside the diagram, in the book's notation (:data:`CELL_GATES`).

    ``highlight`` names one gate (``"f"``, ``"i"``, ``"j"``, ``"o"``) or the memory line
    (``"c"``): it and its equation are drawn in colour, the rest in grey. ``peepholes``,
    ``clip`` (``cell_clip`` on c, ``proj_clip`` on the projected h) and ``projection``
    (``num_proj``) add ``LSTMCell``'s options, dashed (Chapter 3; ``h="m"`` names the h line
    as its source does). ``gradients`` draws the two ways a gradient goes back one step
    (Chapter 5): along c, multiplied by the forget gate, and through the gates and $U$.
    Returns the figure.
    """
    kit = _Diagram(CELL_GATES, highlight, (-3.0, 6.6), 5.4)
    shown, node, arrow, ax = kit.shown, kit.node, kit.arrow, kit.ax
    grey, black = kit.GREY, kit.BLACK
    line_c = kit.line("c", "tab:red")
    line_h = "tab:blue" if highlight in (None, "o") else grey
    # the c line: c_{t-1} -> x (forget) -> + (write) -> [clip] -> c_t
    node(3.0, 5.2, "×", "f")
    node(5.0, 5.2, "+", "c")
    arrow(0.2, 5.2, 2.55, 5.2, line_c, width=2.5)
    arrow(3.45, 5.2, 4.55, 5.2, line_c, width=2.5)
    if clip:
        node(6.6, 5.2, "clip", "c", w=1.0, dashed=True)
        arrow(5.45, 5.2, 6.05, 5.2, line_c, width=2.5)
        arrow(7.15, 5.2, 12.6, 5.2, line_c, width=2.5)
    else:
        arrow(5.45, 5.2, 12.6, 5.2, line_c, width=2.5)
    # the gates, fed by [x_t, h_{t-1}]
    node(1.5, 0.6, f"[x, {h}]", w=1.1)
    arrow(0.2, 0.6, 0.9, 0.6, line_h, width=2.5)
    arrow(1.5, -0.2, 1.5, 0.25)
    for gate, gx in (("f", 3.0), ("i", 4.3), ("j", 5.6), ("o", 8.0)):
        node(gx, 2.2, CELL_GATES[gate][1], gate, w=1.1)
        arrow(1.5, 0.95, gx, 1.85, shown(gate) if highlight else grey, width=0.8)
    arrow(3.0, 2.55, 3.0, 4.85, shown("f"))  # sigma(f + b_f) multiplies c
    node(5.0, 3.6, "×", "i")  # sigma(i) tanh(j): what is written
    arrow(4.3, 2.55, 4.85, 3.3, shown("i"))
    arrow(5.6, 2.55, 5.15, 3.3, shown("j"))
    arrow(5.0, 3.95, 5.0, 4.85, shown("i") if highlight != "j" else shown("j"))
    # the h line: tanh(c_t) x sigma(o) -> [projection] -> [clip] -> h_t, out and back
    node(8.6, 4.2, "tanh", "o")
    node(8.6, 3.1, "×", "o")
    arrow(8.6, 5.2, 8.6, 4.55, line_c)
    arrow(8.6, 3.85, 8.6, 3.45, shown("o"))
    arrow(8.0, 2.55, 8.4, 2.85, shown("o"))
    x_out = 8.95
    if projection:
        node(10.0, 3.1, "× $W_{proj}$", w=1.3, dashed=True)
        arrow(x_out, 3.1, 9.3, 3.1, line_h)
        x_out = 10.65
    if clip and projection:
        node(11.5, 3.1, "clip", w=1.0, dashed=True)
        arrow(x_out, 3.1, 11.0, 3.1, line_h)
        arrow(11.5, 2.75, 11.5, 0.6, line_h, width=2.5)
    else:
        ax.plot([x_out, 11.5, 11.5], [3.1, 3.1, 0.6], color=line_h, lw=2.5)
    arrow(11.5, 0.6, 12.6, 0.6, line_h, width=2.5)
    arrow(11.5, 3.1 + (0.35 if clip and projection else 0), 11.5, 4.1, line_h, width=2.5)
    labels = [(0.2, 5.5, "$c_{t-1}$", line_c, 12), (12.0, 5.5, "$c_t$", line_c, 12),
              (0.0, 0.9, f"${h}_{{t-1}}$", line_h, 11), (12.0, 0.85, f"${h}_t$", line_h, 12),
              (1.65, -0.45, "$x_t$", black, 12), (11.65, 3.8, f"output ${h}_t$", line_h, 10)]
    if peepholes:
        arrow(1.9, 5.2, 2.8, 2.55, grey, dashed=True, width=0.8)
        arrow(1.9, 5.2, 4.1, 2.55, grey, dashed=True, width=0.8)
        arrow(7.4, 5.2, 8.2, 2.55, grey, dashed=True, width=0.8)
        labels += [(0.4, 3.5, "peepholes\n$w_i, w_f$: $c_{t-1}$", grey, 9),
                   (6.2, 3.2, "$w_o$: new $c_t$", grey, 9)]
    if gradients:  # backward: dashed, right to left, above the c line and below the h line
        arrow(12.4, 5.85, 0.4, 5.85, "darkred", dashed=True, width=1.8)
        labels.append((1.0, 6.05, r"along c: $\partial L/\partial c_t \odot \sigma(f + b_f)$"
                       r" goes back to $c_{t-1}$", "darkred", 9))
        arrow(12.4, 0.1, 0.4, 0.1, "navy", dashed=True, width=1.8)
        labels.append((2.6, -0.45, r"through the gates: $dz\,U^\top$ goes back to "
                       f"${h}_{{t-1}}$", "navy", 9))
    kit.labels(labels)
    title = (f"LSTM cell: {_named('c', line_c)} is the memory, {_named(h, line_h)} the hidden "
             "state and output")
    return kit.finish(title)


#: the GRU in the book's notation (TF1's source: r, u, c; Keras: z, r, hh; PyTorch: r, z, n):
#: colour, the node's label, and the equation shown beside the diagram
GRU_GATES = {
    "r": ("tab:green", "σ  r", r"reset: $r = \sigma(\cdot)$, how much of $h_{t-1}$ the"
                               r" candidate sees"),
    "z": ("tab:orange", "σ  z", r"update: $z = \sigma(\cdot)$, how much of $h_{t-1}$ is kept"),
    "h": ("tab:purple", r"tanh  $\tilde{h}$",
          r"candidate: $\tilde{h} = \tanh(x_t W_h + (r \odot h_{t-1})\, U_h + b_h)$"),
    "new": ("tab:blue", "", r"new state: $h_t = z \odot h_{t-1} + (1 - z) \odot \tilde{h}$"),
}
#: the candidate's equation with ``reset_after=True`` (Keras' default, cuDNN, PyTorch)
RESET_AFTER = (r"candidate: $\tilde{h} = \tanh(x_t W_h + b_h"
               r" + r \odot (h_{t-1} U_h + b'_h))$")


def gru_cell_diagram(highlight: str | None = None, reset_after: bool = False) -> Figure:
    """The GRU form of :func:`lstm_cell_diagram`: one state line h (blue) along the top, the
    gates r and z and the candidate below it, each equation beside the diagram in the book's
    notation (:data:`GRU_GATES`).

    ``reset_after=False`` (TF1's ``GRUCell``, Keras' ``reset_after=False``) draws r applied to
    $h_{t-1}$ before the candidate's matmul by $U_h$; ``True`` (Keras' default, cuDNN,
    PyTorch) after it, with the second bias. ``highlight`` names ``"r"``, ``"z"``, ``"h"``
    (the candidate) or ``"new"`` (the state line). Returns the figure.
    """
    groups = dict(GRU_GATES)
    if reset_after:
        groups["h"] = (*GRU_GATES["h"][:2], RESET_AFTER)
    kit = _Diagram(groups, highlight, (-2.9, 6.3), 5.2)
    shown, node, arrow, grey = kit.shown, kit.node, kit.arrow, kit.GREY
    line_h = kit.line("new", "tab:blue")
    # the h line: h_{t-1} -> x z (kept) -> + (1 - z) h~ (written) -> h_t, output and state
    node(4.4, 5.2, "×", "z")
    node(8.2, 5.2, "+", "new")
    arrow(0.2, 5.2, 3.95, 5.2, line_h, width=2.5)
    arrow(4.85, 5.2, 7.75, 5.2, line_h, width=2.5)
    arrow(8.65, 5.2, 12.6, 5.2, line_h, width=2.5)
    arrow(11.5, 5.2, 11.5, 6.0, line_h, width=2.5)
    # h_{t-1} drops down into the gates' input and, along the bottom, into the candidate
    ax = kit.ax
    ax.plot([1.0, 1.0], [5.2, 0.6], color=line_h, lw=1.5)
    ax.plot([1.0, 1.0, 5.6], [0.6, -0.3, -0.3], color=line_h, lw=1.5)
    node(1.9, 0.6, "[x, h]", w=1.1)
    arrow(1.0, 0.6, 1.35, 0.6, line_h)
    arrow(1.9, -0.6, 1.9, 0.25)
    for gate, gx in (("r", 3.0), ("z", 4.4)):
        node(gx, 2.2, GRU_GATES[gate][1], gate)
        arrow(1.9, 0.95, gx, 1.85, shown(gate) if highlight else grey, width=0.8)
    arrow(4.4, 2.55, 4.4, 4.85, shown("z"))  # z keeps h_{t-1}
    node(6.0, 3.6, "1 −", "z", w=0.8)  # 1 - z writes the candidate
    arrow(4.6, 2.55, 5.7, 3.3, shown("z"))
    node(8.2, 3.6, "×", "h")
    arrow(6.4, 3.6, 7.75, 3.6, shown("z"))
    arrow(8.2, 3.95, 8.2, 4.85, shown("h"))
    node(8.2, 2.2, GRU_GATES["h"][1], "h", w=1.1)
    arrow(8.2, 2.55, 8.2, 3.25, shown("h"))
    # the candidate's recurrent path: r before the matmul (TF1) or after it (cuDNN)
    steps = (("×", "r"), (r"$\cdot\, U_h$", "h"))
    order = steps[::-1] if reset_after else steps
    for (text, group), bx in zip(order, (5.6, 7.1), strict=True):
        node(bx, 0.6, text, group, w=0.9 if text == "×" else 1.1)
        if text == "×":
            arrow(3.2, 1.85, bx - 0.2, 0.95, shown("r"))
    arrow(5.6, -0.3, 5.6, 0.25, line_h)
    arrow(6.05, 0.6, 6.55, 0.6, shown("h"))
    arrow(7.6, 0.6, 8.0, 1.85, shown("h"))
    arrow(2.45, 0.75, 7.7, 1.95, shown("h") if highlight else grey, width=0.8)  # x W_h
    kit.labels([(0.2, 5.5, "$h_{t-1}$", line_h, 12), (12.0, 5.5, "$h_t$", line_h, 12),
                (2.05, -0.85, "$x_t$", kit.BLACK, 12),
                (9.6, 6.0, "output $h_t$", line_h, 10),
                (9.0, 0.5, "r after $U_h$: two biases" if reset_after
                 else "r before $U_h$: one bias", shown("r"), 10)])
    form = "reset_after=True" if reset_after else "reset_after=False"
    return kit.finish(f"GRU cell ({form}): one state {_named('h', line_h)}, kept by z, "
                      "reset by r",
                      top=-1.35)


def stateful_layout(series: np.ndarray, right: np.ndarray, wrong: np.ndarray,
                    rows: np.ndarray) -> Figure:
    """How a long ``series`` is cut into stateful batches: the series coloured by the row it
    goes to (grey: the dropped tail), then each batch of the ``right`` layout (``(n, B,
    steps)``: row i of batch k + 1 continues row i of batch k) above the same batch of the
    ``wrong`` one (consecutive windows). ``rows`` is the ``(B, n * steps)`` array of rows."""
    colours = np.array([[0.62, 0.78, 0.92], [0.99, 0.75, 0.52], [0.65, 0.87, 0.62],
                        [0.85, 0.85, 0.85]])
    series = np.asarray(series)
    n, batch, steps = np.shape(right)
    row_of = np.full(len(series), 3)  # 3 = dropped tail
    row_of[np.asarray(rows).ravel()] = np.repeat(np.arange(batch), n * steps)

    def cells(ax, values, title, every=1):
        """Colour each value by its row; write every ``every``-th piece as first-last."""
        ax.imshow(colours[row_of[values]], aspect="auto")
        for (r, col), v in np.ndenumerate(values):
            if every == 1:
                ax.text(col, r, str(v), ha="center", va="center", fontsize=MIN_FONT)
            elif col % every == 0:
                end = min(col + every, values.shape[1]) - 1  # the piece's last column
                ax.text((col + end) / 2, r, f"{v}-{values[r, end]}", ha="center",
                        va="center", fontsize=MIN_FONT)
        ax.set_xticks([])
        ax.set_yticks(range(values.shape[0]))
        ax.set_title(title, fontsize=10)

    fig, axes = figure(MAX_WIDTH, 4.6, nrows=3, ncols=n,
                       gridspec_kw={"height_ratios": [0.45, 1, 1]})
    for ax in axes[0]:
        ax.remove()
    top = fig.add_subplot(axes[0, 0].get_gridspec()[0, :])
    cells(top, series[None, :], "the series, coloured by the row it goes to (grey: dropped)",
          every=steps)
    top.set_yticks([])
    for piece in range(1, batch * n):
        top.axvline(piece * steps - 0.5, color="k", lw=0.6 if piece % n else 2)
    for k in range(n):
        cells(axes[1, k], right[k], f"batch {k}: rows continue")
        cells(axes[2, k], wrong[k], f"batch {k}: windows (wrong)")
    for ax in axes[1:, 0]:
        ax.set_ylabel("row i")
    fig.tight_layout()
    return fig


def chunk_runs(whole: np.ndarray, carried: np.ndarray, dropped: np.ndarray,
               chunk: int) -> Figure:
    """One output unit over time ``(T,)``: the ``whole`` run in one call (grey line), the
    chunked run with the state ``carried`` (blue dots) and the one from zeros each call
    (``dropped``, red crosses), with a dotted line at every ``chunk`` boundary."""
    fig, ax = figure(7.0, 2.8)
    ax.plot(whole, "-", color="0.6", lw=3, label="whole sequence, 1 call")
    ax.plot(carried, "o", color="tab:blue", label="carried")
    ax.plot(dropped, "x", color="tab:red", ms=7, label="zeros")
    for boundary in range(chunk, len(whole), chunk):
        ax.axvline(boundary - 0.5, color="k", ls=":", lw=1)
    ax.set(xlabel="time step t (dotted: a new session.run)",
           ylabel="h, unit 0, sequence 0", title=f"Top layer's output, in chunks of {chunk}")
    ax.legend(loc="lower left")
    fig.tight_layout()
    return fig


def error_by_step(predictions: dict[str, np.ndarray], target: np.ndarray,
                  colours: tuple[str, ...] = ("tab:blue", "tab:red"), shown: int = 6) -> Figure:
    """Top: the squared error at each step within a chunk, one bar per model
    (``predictions``: name -> ``(n, B, steps)``, against ``target`` of the same shape).
    Bottom: row 0's predictions over the first ``shown`` batches, chunk after chunk."""
    steps = np.shape(target)[-1]
    fig, (bars, trace) = figure(7.0, 4.6, nrows=2)
    for k, ((name, predicted), colour) in enumerate(
            zip(predictions.items(), colours[: len(predictions)], strict=True)):
        error = ((np.asarray(predicted) - target) ** 2).mean(axis=(0, 1))  # (steps,)
        bars.bar(np.arange(steps) + 0.4 * k - 0.2, error, width=0.4, color=colour,
                 label=name)
        trace.plot(predicted[:shown, 0].ravel(), ".-", color=colour, ms=4, lw=1)
    trace.plot(np.asarray(target)[:shown, 0].ravel(), color="0.6", lw=3, zorder=0,
               label="target")
    for boundary in range(steps, shown * steps, steps):
        trace.axvline(boundary - 0.5, color="k", ls=":", lw=1)
    bars.set(xlabel="step within a chunk", ylabel="squared error", yscale="log",
             xticks=range(steps))
    bars.legend()
    trace.set(xlabel=f"time step of row 0, first {shown} batches (dotted: next batch)",
              ylabel="prediction")
    trace.legend(loc="lower left")
    fig.tight_layout()
    return fig


def loss_curves(losses: dict[str, Sequence[float]],
                colours: tuple[str, ...] = ("tab:green", "tab:purple"), window: int = 10,
                chance: float = 1.0) -> Figure:
    """Losses over updates (``losses``: name -> ``(updates,)``) on a log scale: each raw (thin)
    and as a running **geometric** mean of ``window`` updates (thick), with the loss of
    guessing 0 dotted.

    The smoothing is done in log space, the quantity the axis shows: a one-update spike of
    ``k`` decades lifts the thick line by ``k / window`` decades. An arithmetic running mean
    would hold the spike's height / ``window`` for ``window`` updates, a plateau that reads as a
    regression. The y-limits come from the data, so no raw value is clipped, and the legend
    sits above the axes, over no data.
    """
    fig, ax = figure(7.0, 3.4)
    low, high = chance, chance
    for (name, loss), colour in zip(losses.items(), colours[: len(losses)], strict=True):
        loss = np.maximum(np.asarray(loss, dtype=float), np.finfo(float).tiny)  # log of 0
        ax.plot(loss, color=colour, lw=0.8, alpha=0.45)
        logs = np.convolve(np.log10(loss), np.ones(window) / window, mode="valid")
        ax.plot(np.arange(window - 1, len(loss)), 10**logs, color=colour, lw=2, label=name)
        low, high = min(low, loss.min()), max(high, loss.max())
    ax.axhline(chance, color="k", ls=":", lw=1, label="guessing 0 (chance)")
    ax.set(xlabel="update", ylabel="squared error at the last step", yscale="log",
           ylim=(low / 2, high * 2))
    ax.legend(loc="lower left", bbox_to_anchor=(0, 1.01), ncol=3, frameon=False,
              title=f"thin: each update; thick: geometric mean of {window} updates",
              title_fontsize=TYPE["legend.fontsize"], alignment="left")
    fig.tight_layout()
    return fig


def norms_over_time(norms: dict[str, np.ndarray], title: str, chunk: int | None = None,
                    ylabel: str = r"$\|\partial L / \partial h_t\|$") -> Figure:
    """One line per entry of ``norms`` (label -> values over t), log scale; dotted lines at
    the start of every ``chunk`` steps when given. Returns the figure. Every number drawn is
    computed on the page with TensorFlow (this never differentiates anything itself)."""
    fig, ax = figure(7.0, 3.2)
    markers = iter("os^vdx")
    for label, values in norms.items():
        values = np.asarray(values, dtype=float)
        shown = np.where(values > 0, values, np.nan)  # log scale: zeros are left out
        ax.semilogy(np.arange(len(values)), shown, marker=next(markers), ms=3, lw=1.2,
                    label=label)
    if chunk:
        for start in range(chunk, len(next(iter(norms.values()))), chunk):
            ax.axvline(start - 0.5, color="k", ls=":", lw=1)
    ax.set_xlabel("time step t", fontsize=MIN_FONT)
    ax.set_ylabel(ylabel, fontsize=MIN_FONT)
    ax.set_title(title, fontsize=MIN_FONT + 1)
    ax.tick_params(labelsize=MIN_FONT)
    ax.legend(fontsize=MIN_FONT, loc="best")
    ax.grid(True, which="major", alpha=0.3)
    fig.tight_layout()
    return fig


#: what each panel of :func:`padded_steps` shows the cell reading at its k-th step
READING_ORDERS = ("forward", "reverse_sequence", "tf.reverse")


def reading_order(length: int, steps: int, order: str) -> list[int | None]:
    """The input step a cell reads at each of its ``steps`` steps for a row of ``length``:
    ``forward`` (t), ``reverse_sequence`` (reversed within the length, as
    ``bidirectional_dynamic_rnn``'s backward cell reads) or ``tf.reverse`` (reversed over all
    the steps, padding first); None where it reads padding."""
    if order == "forward":
        read = list(range(steps))
    elif order == "reverse_sequence":
        read = list(range(length - 1, -1, -1)) + list(range(length, steps))
    elif order == "tf.reverse":
        read = list(range(steps - 1, -1, -1))
    else:
        raise ValueError(f"order must be one of {', '.join(READING_ORDERS)}, not {order!r}")
    return [t if t < length else None for t in read]


def padded_steps(lengths: Sequence[int], steps: int) -> Figure:
    """A padded batch, rows x steps, three times: what the forward cell reads at each step
    (valid steps coloured by row, padding grey), with where its final state is taken with
    ``sequence_length`` (each row's last valid step, a ring) and without (the last step, a
    cross); then what a backward cell reads at its k-th step, reversed within each length
    (``reverse_sequence``) and by ``tf.reverse`` (padding first)."""
    colours = np.array([[0.62, 0.78, 0.92], [0.99, 0.75, 0.52], [0.65, 0.87, 0.62]])
    grey = np.array([0.85, 0.85, 0.85])
    titles = {"forward": "forward: reads $x_t$ at step $t$",
              "reverse_sequence": "backward, reverse_sequence",
              "tf.reverse": "backward, tf.reverse"}
    fig, axes = figure(MAX_WIDTH, 0.9 + 0.55 * len(lengths), ncols=len(READING_ORDERS))
    for ax, order in zip(axes, READING_ORDERS, strict=True):
        reads = [reading_order(n, steps, order) for n in lengths]
        image = np.array([[grey if t is None else colours[r % len(colours)] for t in row]
                          for r, row in enumerate(reads)])  # (B, T, 3)
        ax.imshow(image, aspect="auto")
        for (r, k), t in np.ndenumerate(np.array(reads, dtype=object)):
            ax.text(k, r, "0" if t is None else f"$x_{t}$", ha="center", va="center",
                    fontsize=MIN_FONT + 1, color="0.45" if t is None else "black")
        ax.set_title(titles[order], fontsize=MIN_FONT + 1)
        ax.set_xticks(range(steps))
        ax.set_yticks(range(len(lengths)), [f"row {r}, n = {n}" for r, n in enumerate(lengths)])
        ax.set_xlabel("step the cell takes")
    first = axes[0]
    first.scatter([n - 1 for n in lengths], range(len(lengths)), s=420, facecolors="none",
                  edgecolors="tab:red", linewidths=2, label="final state, sequence_length")
    first.scatter([steps - 1 + 0.3] * len(lengths), np.arange(len(lengths)) - 0.25, s=60,
                  marker="x", color="black", linewidths=1.5,
                  label="final state without it (after the padding)")  # in the corner
    for ax in axes[1:]:
        ax.set_yticks(range(len(lengths)), [""] * len(lengths))
    fig.legend(loc="lower center", ncol=2, frameon=False)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig
