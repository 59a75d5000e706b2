"""The book's shared figures: what they draw, checked on the matplotlib objects (no pixels)."""
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.patches import Rectangle

from rnnbook.plots import DPI, kernel_blocks


@pytest.fixture(autouse=True)
def _no_windows():
    """Draw off screen and close every figure a test opens."""
    backend = plt.get_backend()
    plt.switch_backend("agg")
    yield
    plt.close("all")
    plt.switch_backend(backend)


def outlined(ax):
    """(left, top, width, height) of every block outline, in kernel cells."""
    return sorted(
        (p.get_x() + 0.5, p.get_y() + 0.5, p.get_width(), p.get_height())
        for p in ax.patches
        if isinstance(p, Rectangle)
    )


def test_basic_rnn_kernel_has_a_W_block_over_a_U_block():
    D, H = 3, 4
    kernel = np.arange((D + H) * H, dtype=float).reshape(D + H, H) - 10  # (D + H, H)
    fig = kernel_blocks(kernel, D)
    ax = fig.axes[0]  # the heatmap; fig.axes[1] is its colour bar
    assert fig.dpi == DPI
    assert outlined(ax) == [(0, 0, H, D), (0, D, H, H)]
    assert [t.get_text() for t in ax.texts] == ["$W$\n3×4", "$U$\n4×4"]
    image = ax.get_images()[0]
    np.testing.assert_array_equal(image.get_array(), kernel)
    assert image.get_clim() == (-17.0, 17.0)  # symmetric about zero
    assert [t.get_text() for t in ax.get_yticklabels()] == ["$x_{0}$", "$x_{1}$", "$x_{2}$"] + [
        f"$h_{{{k}}}$" for k in range(H)
    ]


def test_lstm_kernel_splits_columns_into_named_gate_blocks():
    D, H = 2, 3
    kernel = np.random.default_rng(0).normal(size=(D + H, 4 * H))  # (D + H, 4H)
    fig = kernel_blocks(kernel, D, gates=("i", "j", "f", "o"))
    ax = fig.axes[0]
    assert outlined(ax) == sorted(
        [(k * H, 0, H, D) for k in range(4)] + [(k * H, D, H, H) for k in range(4)]
    )
    labels = [t.get_text().split("\n")[0] for t in ax.texts]
    assert labels == [f"${m}_{{{g}}}$" for m in "WU" for g in "ijfo"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["i", "j", "f", "o"]


def test_draws_into_a_given_axes():
    fig, ax = plt.subplots()
    assert kernel_blocks(np.ones((3, 2)), 1, ax=ax, title="mine") is fig
    assert ax.get_title() == "mine"


@pytest.mark.parametrize(
    "shape,depth,gates",
    [((5,), 2, None), ((5, 4), 0, None), ((5, 4), 5, None), ((5, 6), 2, ("i", "j", "f", "o"))],
)
def test_rejects_a_kernel_it_cannot_split(shape, depth, gates):
    with pytest.raises(ValueError):
        kernel_blocks(np.zeros(shape), depth, gates=gates)
