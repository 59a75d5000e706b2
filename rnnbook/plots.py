"""Figures that more than one chapter draws (matplotlib; small, so committed outputs stay small)."""
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

#: dots per inch of every figure the book stores (keeps committed notebooks small)
DPI = 80


def figure(width=6.0, height=3.0, **kwargs):
    """A new figure at the book's size and resolution: ``fig, ax = figure()``."""
    return plt.subplots(figsize=(width, height), dpi=DPI, **kwargs)


def kernel_blocks(kernel, input_depth, gates=None, ax=None, title=None, cmap="RdBu_r"):
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
        fig, ax = figure(min(9.0, 2.5 + 0.4 * cols), min(6.0, 1.2 + 0.4 * rows))
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
                fontsize=9,
                bbox=dict(boxstyle="round,pad=0.2", facecolor="white", alpha=0.75, linewidth=0),
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
