"""The book's shared figures: what they draw, checked on the matplotlib objects (no pixels)."""
import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.patches import Rectangle
from matplotlib.text import Text

from rnnbook import plots
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


def texts(fig):
    """Every visible, non-empty text of a figure (titles, labels, ticks, legends, notes)."""
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def chapter_figures():
    """One of each figure the package draws, on small made-up data."""
    rng = np.random.default_rng(0)
    values = {g: rng.uniform(0, 1, size=(7, 4)) for g in "ijfo"}
    series = np.arange(38)
    rows = series[:36].reshape(3, 12)
    right = rows.reshape(3, 3, 4).transpose(1, 0, 2)
    return {
        "kernel_blocks": kernel_blocks(rng.normal(size=(7, 16)), 3, gates="ijfo"),
        "gate_heatmaps": plots.gate_heatmaps(values, dict.fromkeys("ijfo", 0.5),
                                             {g: g for g in "ijfo"}),
        "lstm_cell_diagram": plots.lstm_cell_diagram(),
        "lstm_cell_diagram, every option": plots.lstm_cell_diagram(
            highlight="f", peepholes=True, clip=True, projection=True, gradients=True, h="m"),
        "gru_cell_diagram": plots.gru_cell_diagram(),
        "gru_cell_diagram, reset after": plots.gru_cell_diagram(highlight="r",
                                                                reset_after=True),
        "stateful_layout": plots.stateful_layout(series, right, series[:36].reshape(3, 3, 4),
                                                 rows),
        "chunk_runs": plots.chunk_runs(*rng.normal(size=(3, 12)), 4),
        "error_by_step": plots.error_by_step({"a": right + 0.1, "b": right - 0.2}, right),
        "loss_curves": plots.loss_curves({"a": rng.uniform(0.1, 1, 50), "b": np.ones(50)}),
        "norms_over_time": plots.norms_over_time({"a": rng.uniform(0.1, 1, 12)}, "norms",
                                                 chunk=4),
        "padded_steps": plots.padded_steps([4, 2, 1], 4),
    }


def test_every_figure_fits_the_column_and_its_type_is_readable():
    for name, fig in chapter_figures().items():
        assert fig.get_figwidth() <= plots.MAX_WIDTH, name
        assert fig.dpi == DPI, name
        small = [(t.get_text(), t.get_fontsize()) for t in texts(fig)
                 if t.get_fontsize() < plots.MIN_FONT]
        assert not small, f"{name}: type under {plots.MIN_FONT} pt: {small}"


def test_figure_refuses_a_width_the_column_would_shrink():
    with pytest.raises(ValueError, match="at most"):
        plots.figure(plots.MAX_WIDTH + 0.1, 3.0)


def test_gate_heatmaps_centre_each_colour_map_on_the_gates_resting_value():
    values = {"f": np.array([[0.70, 0.73], [0.80, 0.73]])}  # (T, H)
    fig = plots.gate_heatmaps(values, {"f": 0.73}, {"f": "forget"}, ncols=1)
    image = fig.axes[0].get_images()[0]
    low, high = image.get_clim()
    assert low == pytest.approx(0.73 - 0.07) and high == pytest.approx(0.73 + 0.07)
    np.testing.assert_array_equal(image.get_array(), values["f"].T)  # units down, time across
    assert sorted(t.get_text() for t in fig.axes[0].texts) == ["0.70", "0.73", "0.73", "0.80"]


def test_stateful_layout_colours_each_value_by_its_row():
    series = np.arange(14)
    rows = series[:12].reshape(2, 6)  # B = 2 rows of 6
    right = rows.reshape(2, 3, 2).transpose(1, 0, 2)  # 3 batches of (2, 2)
    fig = plots.stateful_layout(series, right, series[:12].reshape(3, 2, 2), rows)
    top = fig.axes[-1]  # the series, added last
    colours = top.get_images()[0].get_array()[0]  # (14, 3)
    assert (colours[:6] == colours[0]).all() and (colours[6:12] == colours[6]).all()
    assert not (colours[0] == colours[6]).all() and not (colours[12] == colours[0]).all()
    assert [t.get_text() for t in top.texts] == ["0-1", "2-3", "4-5", "6-7", "8-9", "10-11",
                                                 "12-13"]


def test_chunk_runs_marks_every_chunk_boundary():
    fig = plots.chunk_runs(np.zeros(12), np.zeros(12), np.ones(12), 4)
    ax = fig.axes[0]
    walls = [line.get_xdata()[0] for line in ax.lines if line.get_linestyle() == ":"]
    assert walls == [3.5, 7.5]  # between steps 3 | 4 and 7 | 8
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "whole sequence, 1 call", "carried", "zeros"]


def test_error_by_step_bars_are_each_models_mean_squared_error_per_step():
    target = np.zeros((2, 3, 4))  # (n, B, steps)
    off = target.copy()
    off[:, :, 0] = 2.0  # wrong by 2 at step 0 only
    fig = plots.error_by_step({"off": off, "right": target + 0.5}, target)
    bars = fig.axes[0].patches
    assert [b.get_height() for b in bars[:4]] == [4.0, 0.0, 0.0, 0.0]
    assert [b.get_height() for b in bars[4:]] == [0.25] * 4


def test_loss_curves_smooth_in_log_space_over_the_window():
    loss = 10.0 ** -np.arange(20)  # a straight line on the log axis
    fig = plots.loss_curves({"falling": loss}, window=10)
    smooth = fig.axes[0].lines[1]
    np.testing.assert_allclose(smooth.get_ydata(), 10.0 ** -np.arange(4.5, 15))
    np.testing.assert_array_equal(smooth.get_xdata(), np.arange(9, 20))


def test_a_one_update_spike_is_a_bump_not_a_plateau():
    """On a log axis an arithmetic running mean turns one spike into a window-long plateau
    (here at 1e-1, two decades up, for 10 updates): the geometric mean lifts the line by
    three decades / 10 at most."""
    loss = np.full(60, 1e-3)
    loss[30] = 1.0  # three decades up, one update
    smooth = plots.loss_curves({"spiky": loss}, window=10).axes[0].lines[1].get_ydata()
    assert smooth.max() == pytest.approx(1e-3 * 10 ** 0.3)
    assert (smooth > 1.5e-3).sum() == 10  # the bump's width is the window, its height small


def test_loss_curves_clip_no_raw_value_and_keep_the_legend_off_the_data():
    rng = np.random.default_rng(0)
    losses = {"spiky": 10.0 ** rng.uniform(-7, 1.5, 150), "flat": np.full(150, 3.0)}
    fig = plots.loss_curves(losses)
    ax = fig.axes[0]
    low, high = ax.get_ylim()
    for loss in losses.values():
        assert low < loss.min() and loss.max() < high  # nothing clipped, spikes included
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legend = ax.get_legend().get_window_extent(renderer)
    axes = ax.get_window_extent(renderer)
    assert legend.y0 >= axes.y1  # above the plotting area: it covers no data
    assert fig.get_window_extent(renderer).contains(legend.x1 - 1, legend.y1 - 1)  # not cut


def test_norms_over_time_leaves_zeros_off_the_log_scale_and_marks_each_chunk():
    norms = {"tanh": [4.0, 2.0, 0.0, 1.0, 0.5, 0.25], "relu": [1.0] * 6}
    fig = plots.norms_over_time(norms, "gradients", chunk=2)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    drawn = {line.get_label(): line.get_ydata() for line in ax.lines if line.get_label() in norms}
    np.testing.assert_array_equal(drawn["tanh"], [4.0, 2.0, np.nan, 1.0, 0.5, 0.25])
    np.testing.assert_array_equal(drawn["relu"], norms["relu"])
    walls = [line.get_xdata()[0] for line in ax.lines if line.get_linestyle() == ":"]
    assert walls == [1.5, 3.5]  # between steps 1 | 2 and 3 | 4
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["tanh", "relu"]


def equations(fig):
    """The diagram's equation lines: {gate: (colour, bold)}, by the text each starts with."""
    starts = {"forget": "f", "input": "i", "candidate": "j", "output": "o", "memory": "c"}
    found = {}
    for text in texts(fig):
        word = text.get_text().split(":")[0]
        if word in starts:
            found[starts[word]] = (mpl.colors.to_hex(text.get_color()), text.get_fontweight())
    return found


@pytest.mark.parametrize("gate", ["f", "i", "j", "o", "c"])
def test_cell_diagram_highlights_one_gate_beside_its_equation(gate):
    shown = equations(plots.lstm_cell_diagram(highlight=gate))
    assert set(shown) == set(plots.CELL_GATES)  # every equation is beside the picture
    grey = mpl.colors.to_hex("0.65")
    for name, (colour, weight) in shown.items():
        if name == gate:
            assert colour == mpl.colors.to_hex(plots.CELL_GATES[gate][0])
            assert weight == "bold"
        else:
            assert colour == grey, name
    plain = equations(plots.lstm_cell_diagram())  # no highlight: every gate in its colour
    assert all(colour != grey for colour, _ in plain.values())


def test_cell_diagram_draws_the_options_only_when_asked():
    def dashed_boxes(fig):
        return sorted(t.get_text() for t in texts(fig)
                      if t.get_text() in ("clip", "× $W_{proj}$"))

    assert dashed_boxes(plots.lstm_cell_diagram()) == []
    assert dashed_boxes(plots.lstm_cell_diagram(clip=True)) == ["clip"]
    assert dashed_boxes(plots.lstm_cell_diagram(clip=True, projection=True)) == \
        ["clip", "clip", "× $W_{proj}$"]
    words = " ".join(t.get_text() for t in texts(plots.lstm_cell_diagram(peepholes=True)))
    assert "peepholes" in words and "$w_o$: new $c_t$" in words
    plain = " ".join(t.get_text() for t in texts(plots.lstm_cell_diagram(h="m")))
    assert "$m_{t-1}$" in plain and "along c" not in plain and "peepholes" not in plain
    back = " ".join(t.get_text() for t in texts(plots.lstm_cell_diagram(gradients=True)))
    assert "along c" in back and r"\sigma(f + b_f)" in back and "U^\\top" in back


def test_cell_diagram_refuses_a_gate_it_does_not_have():
    with pytest.raises(ValueError, match="highlight one of"):
        plots.lstm_cell_diagram(highlight="g")


def gru_equations(fig):
    """The GRU diagram's equation lines: {group: (colour, bold, text)}."""
    starts = {"reset": "r", "update": "z", "candidate": "h", "new state": "new"}
    return {starts[t.get_text().split(":")[0]]: (mpl.colors.to_hex(t.get_color()),
                                                 t.get_fontweight(), t.get_text())
            for t in texts(fig) if t.get_text().split(":")[0] in starts}


@pytest.mark.parametrize("group", ["r", "z", "h", "new"])
def test_gru_diagram_highlights_one_group_beside_its_equation(group):
    shown = gru_equations(plots.gru_cell_diagram(highlight=group))
    assert set(shown) == set(plots.GRU_GATES)
    grey = mpl.colors.to_hex("0.65")
    for name, (colour, weight, _) in shown.items():
        if name == group:
            assert (colour, weight) == (mpl.colors.to_hex(plots.GRU_GATES[group][0]), "bold")
        else:
            assert colour == grey, name


def test_gru_diagram_puts_r_before_or_after_the_matmul():
    """r's "×" comes before "· U_h" on the candidate's path with reset_after=False (TF1),
    after it with True (cuDNN), and the candidate's equation says the same."""
    def path(fig):
        boxes = [t for t in texts(fig) if t.get_text() in ("×", r"$\cdot\, U_h$")
                 and t.get_position()[1] < 1]  # the bottom row: the candidate's path
        return [t.get_text() for t in sorted(boxes, key=lambda t: t.get_position()[0])]

    before, after = plots.gru_cell_diagram(), plots.gru_cell_diagram(reset_after=True)
    assert path(before) == ["×", r"$\cdot\, U_h$"]
    assert path(after) == [r"$\cdot\, U_h$", "×"]
    assert r"(r \odot h_{t-1})\, U_h" in gru_equations(before)["h"][2]
    assert r"r \odot (h_{t-1} U_h + b'_h)" in gru_equations(after)["h"][2]
    assert "GRU" in before.axes[0].get_title()


def test_gru_diagram_refuses_an_lstm_gate():
    with pytest.raises(ValueError, match="highlight one of"):
        plots.gru_cell_diagram(highlight="f")


def drawn_colours(fig):
    """The colours of every line and arrow a diagram draws, as hex."""
    ax = fig.axes[0]
    colours = {mpl.colors.to_hex(line.get_color()) for line in ax.get_lines()}
    for note in ax.texts:  # annotate() arrows
        patch = getattr(note, "arrow_patch", None)
        if patch is not None:
            colours.add(mpl.colors.to_hex(patch.get_edgecolor()))
    return colours


@pytest.mark.parametrize(("draw", "options"), [
    (plots.lstm_cell_diagram, {}), (plots.lstm_cell_diagram, {"highlight": "f"}),
    (plots.lstm_cell_diagram, {"highlight": "c"}), (plots.lstm_cell_diagram, {"highlight": "o"}),
    (plots.gru_cell_diagram, {}), (plots.gru_cell_diagram, {"highlight": "r"}),
    (plots.gru_cell_diagram, {"highlight": "new", "reset_after": True}),
    (plots.gru_cell_diagram, {"highlight": "r", "reset_after": True})])
def test_a_diagram_title_names_only_colours_it_draws(draw, options):
    """Issue 37: with r highlighted every line was grey and the title still said "h (blue)"."""
    fig = draw(**options)
    title, colours = fig.axes[0].get_title(), drawn_colours(fig)
    for colour, name in plots.COLOUR_NAMES.items():
        if f"({name})" in title:
            assert mpl.colors.to_hex(colour) in colours, (title, name)
        else:
            assert mpl.colors.to_hex(colour) not in colours or name not in ("red", "blue") or \
                not _is_state_line(fig, colour), (title, name)


def _is_state_line(fig, colour):
    """Whether a thick (state-line) arrow is drawn in ``colour``."""
    return any(getattr(t, "arrow_patch", None) is not None
               and mpl.colors.to_hex(t.arrow_patch.get_edgecolor()) == mpl.colors.to_hex(colour)
               and t.arrow_patch.get_linewidth() >= 2.5 for t in fig.axes[0].texts)


def test_the_gru_diagram_with_r_highlighted_names_no_colour_of_its_grey_line():
    title = plots.gru_cell_diagram(highlight="r").axes[0].get_title()
    assert "blue" not in title and "h," in title
    assert "(blue)" in plots.gru_cell_diagram().axes[0].get_title()
    assert "(red)" in plots.lstm_cell_diagram(highlight="c").axes[0].get_title()
    assert "(red)" not in plots.lstm_cell_diagram(highlight="f").axes[0].get_title()


def test_reading_orders_reverse_within_the_length_or_put_the_padding_first():
    assert plots.reading_order(2, 4, "forward") == [0, 1, None, None]
    assert plots.reading_order(2, 4, "reverse_sequence") == [1, 0, None, None]
    assert plots.reading_order(2, 4, "tf.reverse") == [None, None, 1, 0]
    assert plots.reading_order(4, 4, "tf.reverse") == [3, 2, 1, 0]
    with pytest.raises(ValueError, match="order must be one of"):
        plots.reading_order(2, 4, "backward")


def test_padded_steps_writes_what_each_step_reads_and_marks_both_final_states():
    lengths, steps = [4, 2, 1], 4
    fig = plots.padded_steps(lengths, steps)
    panels = fig.axes
    assert len(panels) == 3
    for ax, order in zip(panels, plots.READING_ORDERS, strict=True):
        shown = {(round(t.get_position()[1]), round(t.get_position()[0])): t.get_text()
                 for t in ax.texts}  # (row, step) -> text
        for row, n in enumerate(lengths):
            expected = ["0" if t is None else f"$x_{t}$"
                        for t in plots.reading_order(n, steps, order)]
            assert [shown[row, k] for k in range(steps)] == expected, (order, row)
    ring, cross = panels[0].collections  # sequence_length's final state, then without
    assert ring.get_offsets().tolist() == [[n - 1, row] for row, n in enumerate(lengths)]
    assert np.round(cross.get_offsets()).tolist() == [[steps - 1, row]
                                                       for row in range(len(lengths))]
