"""Chapter 5's figures: gradient norms over time (matplotlib, small, committed with the page).

Learner-side plotting only: every number drawn here is computed on the page with TensorFlow
(this module never differentiates anything itself).
"""
import numpy as np

from rnnbook.plots import figure

FONT = 9  # points: the smallest text in a figure


def norms_over_time(norms, title, chunk=None, ylabel=r"$\|\partial L / \partial h_t\|$"):
    """One line per entry of ``norms`` (label -> values over t), log scale; dotted lines at
    the start of every ``chunk`` steps when given. Returns the figure."""
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
    ax.set_xlabel("time step t", fontsize=FONT)
    ax.set_ylabel(ylabel, fontsize=FONT)
    ax.set_title(title, fontsize=FONT + 1)
    ax.tick_params(labelsize=FONT)
    ax.legend(fontsize=FONT, loc="best")
    ax.grid(True, which="major", alpha=0.3)
    fig.tight_layout()
    return fig
