"""Chapter 1 (BasicRNNCell internals): exercises and their checks.

The question: "how do I get W and U out of BasicRNNCell? `cell._kernel` fails, `cell.variables`
is empty". Four exercises are by hand (NumPy restatements of the chapter: split the kernel, stack
it back, one step, a whole sequence); two drive the real API on a cell the check builds with the
trial's random weights: read W, U and b from ``cell.variables`` (of a cell that may not have been
called yet), and, as the capstone, load Keras 3 weights into a cell and run it over a sequence.

Oracles run TensorFlow's real ``BasicRNNCell`` (or Keras 3's ``SimpleRNN``); the sweeps' expected
answers come from :mod:`rnnbook.reference`. Notation (book/notation.md): ``B`` batch, ``T`` time,
``D`` input depth, ``H`` num_units; ``kernel`` is ``(D + H, H)``, ``W = kernel[:D]`` on top of
``U = kernel[D:]``.

Trials are designed so that each known mistake shows on every seed: ``D > H``, ``D < H`` and
``D == H`` (a split at row H instead of row D, and a swap of W and U, look right only when
``D == H``; blocks transposed or laid side by side keep their shape only when ``D == H``),
``B = 1``, ``T >= 2``, a nonzero bias and a nonzero initial state everywhere.
"""
from __future__ import annotations

import re
from typing import Any, Callable, NoReturn, Sequence, TypedDict

import numpy as np

from rnnbook import reference as ref  # instructor-side: use only inside function bodies
from rnnbook.checks.common import (
    Change,
    Trial,
    api_answer,
    not_from_api,
    split_at_h,
    split_at_h_raises,
    w_and_u_swapped,
)
from rnnbook.diagnose import Probe
from rnnbook.exercise import Chapter, Exercise, Mistake, normal
from rnnbook.oracles import keras3, run_tf1, tensorflow
from rnnbook.plaindata import Raised


class SplitTrial(TypedDict):
    """split_kernel's trial."""

    D: int
    H: int
    kernel: np.ndarray  # (D + H, H)


class KerasTrial(TypedDict):
    """tf1_from_keras' trial: a Keras 3 SimpleRNNCell's weights."""

    D: int
    H: int
    kernel: np.ndarray  # W (D, H)
    recurrent_kernel: np.ndarray  # U (H, H)
    bias: np.ndarray  # (H,)


class StepTrial(TypedDict):
    """rnn_step's trial."""

    B: int
    D: int
    H: int
    x: np.ndarray  # (B, D)
    h: np.ndarray  # (B, H)
    kernel: np.ndarray  # (D + H, H)
    bias: np.ndarray  # (H,)


class WeightsTrial(TypedDict):
    """read_cell_weights' trial: the weights of a cell handed over built or not."""

    D: int
    H: int
    built: bool
    kernel: np.ndarray  # (D + H, H)
    bias: np.ndarray  # (H,)


class UnrollTrial(TypedDict):
    """rnn_unroll's trial."""

    B: int
    D: int
    H: int
    T: int
    inputs: np.ndarray  # (B, T, D), batch-major
    h0: np.ndarray  # (B, H)
    kernel: np.ndarray  # (D + H, H)
    bias: np.ndarray  # (H,)


class PortTrial(TypedDict):
    """run_keras_weights' trial: Keras 3 weights, a sequence, the cell's old weights (when it
    is handed over built) and fresh inputs the check runs the loaded cell on."""

    B: int
    D: int
    H: int
    T: int
    inputs: np.ndarray  # (B, T, D)
    h0: np.ndarray  # (B, H)
    bias: np.ndarray  # (H,)
    built: bool
    W: np.ndarray  # Keras 3 SimpleRNNCell's kernel (D, H)
    U: np.ndarray  # its recurrent_kernel (H, H)
    old_kernel: np.ndarray  # (D + H, H) when built, else (0,)
    old_bias: np.ndarray  # (H,) when built, else (0,)
    x: np.ndarray  # (B, D)
    h: np.ndarray  # (B, H)

# ---------------------------------------------------------------------------------------------
# Designed sizes, and TensorFlow's answer for the weights of a cell


def _sizes(rng: np.random.Generator, shape: str, B: int | None = None, T: int | None = None,
           spread: int = 1, least_depth: int = 1) -> dict[str, int]:
    """Random sizes with a designed relation ``shape`` ("D>H", "D<H" or "D=H"); ``B`` fixed when
    given; ``T`` random from the given minimum (at least 2) to ``spread`` more; with "D<H", D is
    ``least_depth`` or one more."""
    if shape == "D>H":
        H = int(rng.integers(2, 4))
        D = H + int(rng.integers(1, 3))
    elif shape == "D<H":
        D = int(rng.integers(least_depth, least_depth + 2))
        H = D + int(rng.integers(1, 3))
    else:
        D = H = int(rng.integers(2, 5))
    case = {"B": B if B is not None else int(rng.integers(2, 4)), "D": D, "H": H}
    if T is not None:
        case["T"] = T + int(rng.integers(0, spread + 1))
    return case


def _arrays(answer: object, parts: int = 0) -> object:
    """The learner's answer with lists of numbers read as arrays (a list of rows is as good an
    answer as an array): the answer itself, or each of its ``parts``."""
    def one(value: object) -> object:
        if not isinstance(value, (list, tuple)):
            return value
        try:
            return np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            return value

    if not parts:
        return one(answer)
    if isinstance(answer, (list, tuple)) and len(answer) == parts:
        return tuple(one(value) for value in answer)
    return answer


def _rnn_cell(H: int, activation: object = None) -> Callable[[], Any]:
    return lambda: tensorflow().compat.v1.nn.rnn_cell.BasicRNNCell(H, activation=activation)


def _cell_blocks(kernel: np.ndarray, bias: np.ndarray, D: int,
                 H: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(W, U, b)`` as the real cell uses them: run BasicRNNCell (activation switched off) on
    one-hot rows. A zero input and state give b; row k of I_D as x gives W's row k plus b; row k
    of I_H as h gives U's row k plus b."""
    tf = tensorflow()
    rows = 1 + D + H
    x = np.zeros((rows, D), np.float32)
    x[1:1 + D] = np.eye(D)
    h = np.zeros((rows, H), np.float32)
    h[1 + D:] = np.eye(H)
    z = run_tf1(_rnn_cell(H, tf.identity), x, h, {"kernel": kernel, "bias": bias})[0]
    b = z[0]
    return z[1:1 + D] - b, z[1 + D:] - b, b  # (D, H), (H, H), (H,)


# ---------------------------------------------------------------------------------------------
# Shared by several exercises: the references (instructor-side), the mistakes of a step and
# of a run, a real cell handed over built or not. Defined before every exercise, so that a
# new exercise can use them wherever it goes in the chapter.


def _split(c: Trial, at: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(W, U)``: the kernel's rows split at row ``at`` (D, input_depth, by default)."""
    at = c["D"] if at is None else at
    return c["kernel"][:at], c["kernel"][at:]


def _step(c: Trial) -> np.ndarray:
    """The reference step on case ``c`` (instructor-side: the sweeps' expected answer)."""
    return ref.basic_rnn_step(c["x"], c["h"], c["kernel"], c["bias"])


# The mistakes of one step (rnn_step) and of a run (rnn_unroll, run_keras_weights) are the
# real cell on a changed case (``perturb``), its answer changed after (``after``), or both:
# they need no model of the cell, so the learner release (reference stubbed, the oracle
# answering) names them too.

#: tanh(EPS z) / EPS is z to float32 precision (|z| < 8: a relative error below 2e-6); a power
#: of 2, so scaling the weights by it rounds nothing
EPS = 2.0 ** -12


def _each(value: np.ndarray | list[np.ndarray], change: Callable[[np.ndarray], np.ndarray],
          parts: int | None = None) -> np.ndarray | list[np.ndarray]:
    """``change`` applied to an array, or to the first ``parts`` arrays of a list answer
    (the rest kept: run_keras_weights' probe of the loaded cell)."""
    if not isinstance(value, list):
        return change(np.asarray(value))
    parts = len(value) if parts is None else parts
    return [change(np.asarray(v)) for v in value[:parts]] + list(value[parts:])


def _rows_swapped(c: Trial) -> Trial:
    """The case whose kernel applies to [x, h] what the case's applies to [h, x]: its last D
    rows on top of its first H (a learner who concatenates [h, x])."""
    H, kernel = c["H"], c["kernel"]
    return {**c, "kernel": np.concatenate([kernel[H:], kernel[:H]])}  # (D + H, H)


def _sigmoid_case(state: str) -> Callable[[Trial], Trial]:
    """The case on which tanh of the real cell is 2 sigmoid(z) - 1 of the case's own z at every
    step: sigmoid(z) = (tanh(z / 2) + 1) / 2, so with the state s = 2 h - 1 the weights
    W / 2, U / 4 and the bias b / 2 + (the column sums of U) / 4 give z / 2."""
    def perturb(c: Trial) -> Trial:
        D, kernel = c["D"], c["kernel"]
        W, U = kernel[:D], kernel[D:]
        return {**c, "kernel": np.concatenate([W / 2, U / 4]),  # (D + H, H)
                "bias": c["bias"] / 2 + U.sum(axis=0) / 4, state: 2 * c[state] - 1}
    return perturb


def _step_mistakes(state: str, parts: int | None = None) -> tuple[tuple[str, Change], ...]:
    """The mistakes of one step, each ``(sentence, options)`` of a ``Mistake``; ``state`` is
    the case's key of the state the step starts from ("h"; "h0" for a run), ``parts`` how many
    parts of the answer are the cell's outputs."""
    return (
        ("you concatenated [h, x], which splits the kernel at row H: the cell "
         "concatenates [x, h] (input first), so x meets the kernel's first D rows (W) "
         "and h the H rows after them (U).",
         dict(perturb=_rows_swapped)),
        ("sigmoid is used instead of tanh: BasicRNNCell's activation is tanh.",
         dict(perturb=_sigmoid_case(state),
              after=lambda c, right: _each(right, lambda v: (v + 1) / 2, parts))),
        ("tanh is left out: BasicRNNCell applies tanh to [x, h] @ kernel + bias.",
         dict(perturb=lambda c: {**c, "kernel": c["kernel"] * EPS, "bias": c["bias"] * EPS},
              after=lambda c, right: _each(right, lambda v: v / EPS, parts))),
        ("the bias is added after tanh: it belongs inside, tanh([x, h] @ kernel + bias).",
         dict(perturb=lambda c: {**c, "bias": np.zeros_like(c["bias"])},
              after=lambda c, right: _each(right, lambda v: v + c["bias"], parts))),
        ("the bias is left out: add it to [x, h] @ kernel before tanh.",
         dict(perturb=lambda c: {**c, "bias": np.zeros_like(c["bias"])})),
        ("the previous state h is left out: the new state is computed from [x, h], the input "
         "AND the state before.",
         dict(perturb=lambda c: {**c, state: np.zeros_like(c[state])})),
    )


def _run(c: Trial) -> tuple[np.ndarray, np.ndarray]:
    """The reference run over the case's sequence from ``h0``: ``(outputs, final_state)``."""
    return ref.unroll(ref.rnn_cell(c["kernel"], c["bias"]), c["inputs"], c["h0"])


def _skip_first(c: Trial) -> Trial:
    """The case without its first step."""
    return {**_one_step_less(c), "inputs": c["inputs"][:, 1:]}


def _skip_last(c: Trial) -> Trial:
    """The case without its last step."""
    return {**_one_step_less(c), "inputs": c["inputs"][:, :-1]}


def _one_step_less(c: Trial) -> Trial:
    """The case with T one less; a ValueError for a case of one step (a run of no step: the
    mistake does not apply there, in the repository and in the learner release alike)."""
    if c["T"] < 2:
        raise ValueError("a sequence of one step has no step to skip")
    return {**c, "T": c["T"] - 1}


def _every_step_alone(c: Trial) -> Trial:
    """Every step of every sequence as a sequence of one step from h0, in a batch of B * T:
    row b * T + t is step t of sequence b (a state not carried from step to step)."""
    B, T, D = c["inputs"].shape
    return {**c, "inputs": c["inputs"].reshape(B * T, 1, D), "h0": np.repeat(c["h0"], T, 0),
            "B": B * T, "T": 1}


def _outputs_of_steps_alone(c: Trial, right: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The answer on :func:`_every_step_alone`'s case, back in the case's (B, T, H)."""
    B, T = c["inputs"].shape[:2]
    outputs = np.asarray(right[0]).reshape(B, T, -1)  # (B, T, H)
    return [outputs, outputs[:, -1], *right[2:]]


def _sequence_mistakes() -> dict[str, tuple[str, Change]]:
    """The mistakes of running the cell over time, by key: ``(sentence, options)`` of a
    ``Mistake``; the right answer is a list ``[outputs, final_state, ...]``."""
    return dict(zip(("h0", "skip 0", "skip last", "lagging", "not carried", "time-major",
                     "final first"), (
        ("h0 is ignored: the first step starts from the given initial state h0, not from zeros.",
         dict(perturb=lambda c: {**c, "h0": np.zeros_like(c["h0"])})),
        ("the loop skips step 0: run the cell on every time step, t = 0 to T - 1 "
         "(`range(T)`), starting from h0.",
         dict(perturb=_skip_first)),
        ("the loop stops before the last step: run the cell on all T steps, t = 0 to T - 1 "
         "(`range(T)`, not `range(T - 1)`).",
         dict(perturb=_skip_last)),
        ("each output is the state before its step: the output at step t is the NEW "
         "state h_t, computed from x_t and h_(t-1), so the first output is the state "
         "after step 0.",
         dict(after=lambda c, right: [np.concatenate([c["h0"][:, None], right[0][:, :-1]], 1),
                                      *right[1:]])),
        ("the state is not carried from step to step: feed each step's new h into the next "
         "step instead of reusing h0.",
         dict(perturb=_every_step_alone, after=_outputs_of_steps_alone)),
        ("the outputs are time-major (T, B, H): stack them along axis 1 to get (B, T, H), as "
         "dynamic_rnn returns them.",
         dict(after=lambda c, right: [np.swapaxes(right[0], 0, 1), *right[1:]])),
        ("the final state is the first step's h: return the h after the LAST step.",
         dict(after=lambda c, right: [right[0], right[0][:, 0], *right[2:]])),
    ), strict=True))


class NoVariablesYet(Exception):
    """The cell the check handed over still has no variables (it was never called or built)."""


class BuiltTwice(Exception):
    """The learner built a cell that was built already: it has two kernels and two biases."""


class NothingLoaded(Exception):
    """The built cell the check handed over holds, after the function, the very kernel and
    bias it held before: none of Keras' weights reached its variables."""


NOT_BUILT = ("the cell has no variables yet (`cell.variables == []`, and `cell._kernel` does not "
             "exist): a TF1 cell creates its kernel and bias on its first call, when it learns "
             "the input depth D. Build it first: call it once on an input of depth D (or call "
             "`cell.build`)")

# (D, H) -> an eager BasicRNNCell built for that shape, reused from trial to trial
_BUILT: dict[tuple[int, int], Any] = {}


def _built_cell(D: int, H: int, kernel: np.ndarray, bias: np.ndarray) -> Any:
    """A BasicRNNCell(H), built for input depth D, holding ``kernel`` and ``bias`` (eager)."""
    cell = _BUILT.get((D, H))
    if cell is None or len(cell.variables) != 2 or cell._kernel is not cell.variables[0]:
        cell = tensorflow().compat.v1.nn.rnn_cell.BasicRNNCell(H)
        cell.build((None, D))  # a learner's function may rebuild a cell: then take a new one
        _BUILT[(D, H)] = cell
    cell.variables[0].assign(kernel)
    cell.variables[1].assign(bias)
    return cell


def _unbuilt_cell(H: int, kernel: np.ndarray | None = None,
                  bias: np.ndarray | None = None) -> Any:
    """A BasicRNNCell(H) never called: no variables. With ``kernel`` and ``bias``, they are the
    values its variables get when it is built (what a constant initializer would give)."""
    cell = tensorflow().compat.v1.nn.rnn_cell.BasicRNNCell(H)
    if kernel is not None:
        build = cell.build

        def build_with_trial_weights(input_shape):
            build(input_shape)
            variables = cell.variables
            if len(variables) == 2 and tuple(variables[0].shape) == kernel.shape:
                variables[0].assign(kernel)
                variables[1].assign(bias)

        cell.build = build_with_trial_weights
    return cell


def _on_cell(cell: Any, fn: Callable[..., object], *args: object) -> object:
    """``fn(cell, *args)``; an error raised while the cell has no variables says why."""
    try:
        return fn(cell, *args)
    except Exception as error:
        if cell.variables or isinstance(error, NotImplementedError):  # not written yet
            raise
        said = f"your code raised {type(error).__name__} ({str(error).splitlines()[0][:120]})"
        raise NoVariablesYet(f"{said} because {NOT_BUILT}").with_traceback(
            error.__traceback__) from None


def _raising_unbuilt(error: type[BaseException], message: str) -> Callable[[Trial], Trial]:
    """A mistake that shows only as the check's ``error`` on a trial whose cell was never
    called (right elsewhere)."""
    def perturb(c: Trial) -> Trial:
        if not c["built"]:
            raise error(message)
        return c
    return perturb


def _raised(error: type[BaseException], words: str) -> Callable[[Trial, Raised], bool]:
    return lambda case, got: got.kind == error.__name__ and words in got.message


# --- split_kernel: split the kernel (by hand) -----------------------------------------------------


def _split_case(rng: np.random.Generator, shape: str) -> SplitTrial:
    sizes = _sizes(rng, shape)
    D, H = sizes["D"], sizes["H"]  # weights have no batch
    return {"D": D, "H": H, "kernel": normal(rng, D + H, H, scale=0.5)}  # (D + H, H)


def _split_oracle(case: SplitTrial) -> tuple[np.ndarray, np.ndarray]:
    D, H = case["D"], case["H"]
    W, U, _ = _cell_blocks(case["kernel"], np.zeros(H, np.float32), D, H)
    return W, U


split_kernel = Exercise[SplitTrial](
    name="split_kernel",
    task="(W, U): W (D, H), the input weights, and U (H, H), the recurrent weights, as NumPy "
    "arrays",
    make_case=_split_case,
    call=lambda fn, c: _arrays(fn(c["kernel"], c["D"]), 2),
    oracle=_split_oracle,
    reference=lambda c: _split(c, c["D"]),
    parts=("W", "U"),  # equal: a split that gets one wrong gets the other wrong too
    designs=({"shape": "D>H"}, {"shape": "D<H"}, {"shape": "D=H"}),
    mistakes=(
        split_at_h(
            "you split the kernel at row H, as if the cell concatenated [h, x]: it concatenates "
            "[x, h], input first, so W is the first D rows (split at input_depth).",
            _split,
        ),
        w_and_u_swapped(
            "W and U are swapped: the first D rows of the kernel multiply x, so they are W; the "
            "last H rows multiply h, so they are U.",
            _split,
        ),
        Mistake(
            "W and U are transposed: TF multiplies from the right (x @ W), so W is (D, H) and U "
            "is (H, H); return the row blocks as they are.",
            lambda c: tuple(block.T for block in _split(c, c["D"])),
        ),
        Mistake(
            "you split the columns: the kernel is (D + H, H), W on top of U, so W and "
            "U are blocks of its ROWS (D rows for x, then H rows for h).",
            lambda c: (c["kernel"][:, :c["D"]], c["kernel"][:, c["D"]:]),
        ),
    ),
)


# --- tf1_from_keras: a TF1 kernel from Keras 3 weights (by hand) ----------------------------------


def _keras_case(rng: np.random.Generator, shape: str, least_depth: int = 1) -> KerasTrial:
    sizes = _sizes(rng, shape, least_depth=least_depth)
    D, H = sizes["D"], sizes["H"]  # weights have no batch
    return {"D": D, "H": H,
            "kernel": normal(rng, D, H, scale=0.5),  # Keras 3 SimpleRNNCell: W (D, H)
            "recurrent_kernel": normal(rng, H, H, scale=0.5),  # U (H, H)
            "bias": normal(rng, H, scale=0.5)}  # (H,)


def _keras_cell(case: KerasTrial) -> Any:
    """A Keras 3 SimpleRNNCell holding the case's ``kernel``, ``recurrent_kernel`` and ``bias``."""
    cell = keras3().layers.SimpleRNNCell(case["H"], activation=None)
    cell.build((None, case["D"]))
    cell.set_weights([case["kernel"], case["recurrent_kernel"], case["bias"]])
    return cell


def _keras_oracle(case: KerasTrial) -> tuple[np.ndarray, np.ndarray]:
    """Probe Keras 3's own SimpleRNNCell (activation off) for what multiplies x, h and 1."""
    cell = _keras_cell(case)
    D, H = case["D"], case["H"]

    def run(x, h):
        return np.asarray(cell(np.asarray(x, np.float32), [np.asarray(h, np.float32)])[0])

    bias = run(np.zeros((1, D)), np.zeros((1, H)))[0]
    W = run(np.eye(D), np.zeros((D, H))) - bias
    U = run(np.zeros((H, D)), np.eye(H)) - bias
    return np.concatenate([W, U], axis=0), bias  # (D + H, H), (H,)


def _stacked(c: Trial, blocks: Sequence[str] = ("kernel", "recurrent_kernel"),
             axis: int = 0) -> np.ndarray:
    return np.concatenate([c[k] for k in blocks], axis=axis)


def _assumes_square(c: KerasTrial) -> tuple[np.ndarray, np.ndarray]:
    """A (2H, H) kernel, D taken for H: Keras' kernel's first H rows on top of recurrent_kernel
    (right where D = H; one row repeated where D = 1; NumPy raises where 1 < D < H, as in every
    designed D < H trial)."""
    H = c["H"]
    kernel = np.zeros((2 * H, H), np.float32)  # (2H, H)
    kernel[:H] = c["kernel"][:H]
    kernel[H:] = c["recurrent_kernel"]
    return kernel, c["bias"]


tf1_from_keras = Exercise[KerasTrial](
    name="tf1_from_keras",
    blocks=("W", "U"),
    task="(kernel, bias) for BasicRNNCell: kernel (D + H, H) and bias (H,), NumPy arrays",
    make_case=_keras_case,
    call=lambda fn, c: _arrays(fn(c["kernel"], c["recurrent_kernel"], c["bias"]), 2),
    oracle=_keras_oracle,
    reference=lambda c: (_stacked(c), c["bias"]),
    parts=("kernel", "bias"),
    weights=(3, 1),  # the kernel is what the exercise is about
    # D == H first: there every mistake below returns an array (side by side and transposed
    # blocks raise in NumPy when D != H), so each is named even when another trial raised
    # and D > 1 where D < H: a kernel of 2H rows, D taken for H, makes NumPy raise there on
    # every seed (with D = 1 it returns a wrong kernel and a right bias: half the points on
    # some seeds and none on others, for the same code)
    designs=({"shape": "D=H"}, {"shape": "D>H"}, {"shape": "D<H", "least_depth": 2}),
    mistakes=(
        Mistake(
            "the blocks are side by side (hstack, axis=1): BasicRNNCell's kernel is (D + H, H), "
            "W's rows stacked on top of U's along axis 0.",
            lambda c: (_stacked(c, axis=1), c["bias"]),
            variants=(lambda c: (_stacked(c, ("recurrent_kernel", "kernel"), axis=1),
                                 c["bias"]),),
        ),
        Mistake(
            "W and U are swapped: stack Keras' kernel (W, it multiplies x) ABOVE its "
            "recurrent_kernel (U), because BasicRNNCell concatenates [x, h].",
            lambda c: (_stacked(c, ("recurrent_kernel", "kernel")), c["bias"]),
        ),
        Mistake(
            "the kernel is transposed: keep it (D + H, H), as TF multiplies from the right.",
            lambda c: (_stacked(c).T, c["bias"]),
            variants=(lambda c: (np.concatenate([c["kernel"].T, c["recurrent_kernel"].T]),
                                 c["bias"]),),
        ),
        Mistake(
            "the bias is left out: Keras' bias carries over to BasicRNNCell's bias unchanged.",
            lambda c: (_stacked(c), np.zeros_like(c["bias"])),
        ),
        Mistake(
            "the kernel has D + H rows, not 2H: the input depth D (kernel.shape[0]) need not be "
            "H; stack all of Keras' kernel (D, H) on top of its recurrent_kernel (H, H).",
            _assumes_square,
        ),
    ),
)


# --- rnn_step: one step by hand -------------------------------------------------------------------


def _step_case(rng: np.random.Generator, shape: str, B: int | None = None) -> StepTrial:
    sizes = _sizes(rng, shape, B)
    B, D, H = sizes["B"], sizes["D"], sizes["H"]
    return {"B": B, "D": D, "H": H,
            "x": normal(rng, B, D),  # (B, D)
            "h": normal(rng, B, H),  # (B, H)
            "kernel": normal(rng, D + H, H, scale=0.5),  # (D + H, H)
            "bias": normal(rng, H, scale=0.5)}  # (H,)


def _step_oracle(case: StepTrial) -> np.ndarray:
    output, state = run_tf1(_rnn_cell(case["H"]), case["x"], case["h"],
                            {"kernel": case["kernel"], "bias": case["bias"]})
    assert np.array_equal(output, state)  # BasicRNNCell returns (h', h')
    return state


rnn_step = Exercise[StepTrial](
    name="rnn_step",
    probes=(Probe("h", "zero"), Probe("bias"), Probe("x", "row")),
    task="h', the new state: an array of shape (B, H)",
    make_case=_step_case,
    call=lambda fn, c: _arrays(fn(c["x"], c["h"], c["kernel"], c["bias"])),
    oracle=_step_oracle,
    reference=_step,
    designs=({"shape": "D>H", "B": 1}, {"shape": "D<H"}, {"shape": "D=H"}),
    mistakes=(
        *(Mistake(sentence, **options) for sentence, options in _step_mistakes("h")),
        split_at_h_raises(
            "the kernel is split at row H: x (B, D) meets W, the kernel's first D "
            "rows (D = input_depth), and h meets U, the rows after them; a split at "
            "row H fits x only where D == H."),
    ),
)


# --- read_cell_weights: W, U and b from a real cell (API) -----------------------------------------


def _weights_case(rng: np.random.Generator, shape: str, built: bool) -> WeightsTrial:
    sizes = _sizes(rng, shape)
    D, H = sizes["D"], sizes["H"]  # weights have no batch
    return {"D": D, "H": H, "built": built,
            "kernel": normal(rng, D + H, H, scale=0.5),  # (D + H, H)
            "bias": normal(rng, H, scale=0.5)}  # (H,)


def _weights_call(fn: Callable[..., object], c: WeightsTrial) -> object:
    if c["built"]:
        cell = _built_cell(c["D"], c["H"], c["kernel"], c["bias"])
    else:
        cell = _unbuilt_cell(c["H"], c["kernel"], c["bias"])
    return _arrays(_on_cell(cell, fn, c["D"]), 3)


def _read_weights(c: Trial,
                  at: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(W, U, b)`` with the kernel's rows split at row ``at`` (D by default)."""
    return (*_split(c, at), c["bias"])


read_cell_weights = Exercise[WeightsTrial](
    name="read_cell_weights",
    task="(W, U, b) as NumPy arrays: W (D, H), the input weights, U (H, H), the recurrent "
    "weights, and b (H,), read from the given cell (it may not have been called yet)",
    make_case=_weights_case,
    call=_weights_call,
    oracle=lambda c: _cell_blocks(c["kernel"], c["bias"], c["D"], c["H"]),
    reference=_read_weights,
    parts=("W", "U", "b"),
    weights=(2, 2, 1),  # the kernel's blocks are what the exercise is about
    by_hand=False,
    designs=({"shape": "D>H", "built": True}, {"shape": "D=H", "built": True},
             {"shape": "D<H", "built": False}),
    mistakes=(
        Mistake(
            "the cell was read before it had variables: a TF1 cell creates its kernel and bias "
            "on its first call; build it first when `cell.variables` is empty (call it once, "
            "or `cell.build((None, input_depth))`).",
            perturb=_raising_unbuilt(NoVariablesYet, NOT_BUILT),
            raises=_raised(NoVariablesYet, NOT_BUILT),
        ),
        split_at_h(
            "you split the kernel at row H, as if the cell concatenated [h, x]: W is the first "
            "input_depth (D) rows of the kernel, U the rest.",
            _read_weights,
        ),
        w_and_u_swapped(
            "W and U are swapped: the kernel's first D rows multiply x (W), its last H rows "
            "multiply h (U).",
            _read_weights,
        ),
        Mistake(
            "W and U are transposed: TF multiplies from the right, so W is (D, H) and U (H, H), "
            "the kernel's row blocks as they are.",
            lambda c: (*(block.T for block in _split(c, c["D"])), c["bias"]),
        ),
    ),
)


# --- rnn_unroll: a sequence by hand ---------------------------------------------------------------


def _unroll_case(rng: np.random.Generator, shape: str, B: int | None = None, T: int = 2,
                 spread: int = 1, cancel: bool = False) -> UnrollTrial:
    """``cancel``: h0 of size 4 to 8 and a bias that brings row 0's first pre-activation near
    0, where tanh passes a change on whole: h0 kept to float16's three digits then shows."""
    sizes = _sizes(rng, shape, B, T, spread)
    B, T, D, H = sizes["B"], sizes["T"], sizes["D"], sizes["H"]
    case: UnrollTrial = {"B": B, "D": D, "H": H, "T": T,
                         "inputs": normal(rng, B, T, D),  # (B, T, D), batch-major
                         "h0": normal(rng, B, H),  # (B, H)
                         "kernel": normal(rng, D + H, H, scale=0.5),  # (D + H, H)
                         "bias": normal(rng, H, scale=0.5)}  # (H,)
    if cancel:
        h0 = np.where(case["h0"] < 0, -1, 1) * (4 + 4 * rng.random((B, H)))  # (B, H)
        case["h0"] = h0.astype(np.float32)
        # (H,): float64 products summed row by row, not a BLAS gemv, whose last bits change
        # with the CPU's kernel: a trial is the same bits on every machine (its digest too)
        xh = np.concatenate([case["inputs"][0, 0], case["h0"][0]]).astype(np.float64)
        first = (xh[:, None] * case["kernel"]).sum(axis=0)  # (H,)
        case["bias"] = (normal(rng, H, scale=0.05) - first).astype(np.float32)  # (H,)
    return case


def _unroll_oracle(case: UnrollTrial) -> tuple[np.ndarray, np.ndarray]:
    return run_tf1(_rnn_cell(case["H"]), case["inputs"], case["h0"],
                   {"kernel": case["kernel"], "bias": case["bias"]}, mode="dynamic")


def _bias_outside_run(c: Trial) -> Trial:
    """The case on which the real cell runs g_t = h_t - b for the run h_t = tanh(x_t W +
    h_(t-1) U) + b (the bias added after tanh at every step): g_t = tanh(x_t W + g_(t-1) U +
    b U), from g_0 = h0 - b."""
    U = c["kernel"][c["D"]:]
    return {**c, "bias": c["bias"] @ U, "h0": c["h0"] - c["bias"]}  # (H,), (B, H)


rnn_unroll = Exercise[UnrollTrial](
    name="rnn_unroll",
    probes=(Probe("h0", "zero"), Probe("bias"), Probe("inputs", "row")),
    task="(outputs, final_state): outputs (B, T, H), the state after every step, and the last "
    "state (B, H)",
    make_case=_unroll_case,
    call=lambda fn, c: _arrays(fn(c["inputs"], c["h0"], c["kernel"], c["bias"]), 2),
    oracle=_unroll_oracle,
    reference=_run,
    parts=("outputs", "final_state"),
    weights=(2, 1),  # every step's state is what the exercise is about
    designs=({"shape": "D>H", "B": 1, "T": 2}, {"shape": "D<H", "T": 3},
             {"shape": "D=H", "T": 2},
             # one step from a large h0, near tanh's centre: a state rounded shows there
             {"shape": "D<H", "B": 1, "T": 1, "spread": 0, "cancel": True}),
    mistakes=(
        *(Mistake(sentence, **options) for sentence, options in _sequence_mistakes().values()),
        # the mistakes of a single step that the chapter's own text does not rule out
        # (rnn_step names all of them; fewer models keep the 200-seed sweep fast)
        *(Mistake(sentence, **options) for sentence, options in _step_mistakes("h0")[:2]),
        Mistake(_step_mistakes("h0")[3][0], perturb=_bias_outside_run,
                after=lambda c, right: _each(right, lambda v: v + c["bias"])),
    ),
)


# --- run_keras_weights: Keras 3 weights in a TF1 cell, run over a sequence (API, capstone) --------


def _port_case(rng: np.random.Generator, shape: str, B: int | None = None, T: int = 2,
               built: bool = False) -> PortTrial:
    run = _unroll_case(rng, shape, B, T, spread=0)  # T = 2 steps: every call costs eager ops
    B, D, H = run["B"], run["D"], run["H"]
    return {"B": B, "D": D, "H": H, "T": run["T"], "inputs": run["inputs"], "h0": run["h0"],
            "bias": run["bias"], "built": built,
            "W": normal(rng, D, H, scale=0.5),  # Keras 3 SimpleRNNCell's kernel (D, H)
            "U": normal(rng, H, H, scale=0.5),  # its recurrent_kernel (H, H)
            # a built cell already holds other weights (its own, or a previous model's)
            "old_kernel": (normal(rng, D + H, H, scale=0.5) if built
                           else np.zeros(0, np.float32)),
            "old_bias": normal(rng, H, scale=0.5) if built else np.zeros(0, np.float32),
            "x": normal(rng, B, D),  # fresh inputs the check runs the loaded cell on
            "h": normal(rng, B, H)}


STILL_UNBUILT = "still has no variables after your function ran"
#: a built cell whose variables the function left as they were (a copy of its weights set)
STILL_OLD = ("still holds the kernel and bias it held before your function ran: none of "
             "Keras' weights reached its variables")
TWICE = "building a cell that was built already makes a new kernel and bias"
#: run_keras_weights' outputs must come from the cell (issue 35: a NumPy loop earned them, the weights
#: loaded only for the check's own call of the cell)
NOT_RUN = "was not run through the cell"


def _raising_built(error: type[BaseException], message: str) -> Callable[[Trial], Trial]:
    """A mistake that shows only as the check's ``error`` on a trial whose cell was built."""
    def perturb(c: Trial) -> Trial:
        if c["built"]:
            raise error(message)
        return c
    return perturb


def _side_by_side(c: Trial) -> NoReturn:
    """Keras' kernel (D, H) and recurrent_kernel (H, H) side by side: NumPy raises where
    D != H (and the cell refuses the (H, 2H) kernel where D == H)."""
    if c["D"] != c["H"]:
        raise ValueError("all the input array dimensions except for the concatenation axis "
                         f"must match exactly, but along dimension 0, the array at index 0 "
                         f"has size {c['D']} and the array at index 1 has size {c['H']}")
    raise ValueError("a (H, 2H) kernel does not fit the cell's (2H, H) variable")


def _rows_differ(case: Trial, got: Raised) -> bool:
    """NumPy's error for stacking side by side a (D, H) and an (H, H) block, D != H."""
    found = re.search(r"index 0 has size (\d+) and the array at index 1 has size (\d+)",
                      got.message)
    return found is not None and (int(found[1]), int(found[2])) == (case["D"], case["H"])


def _port_call(fn: Callable[..., object], c: PortTrial) -> object:
    if c["built"]:
        cell = _built_cell(c["D"], c["H"], c["old_kernel"], c["old_bias"])
    else:
        cell = _unbuilt_cell(c["H"])
    result, unrun = api_answer(
        type(cell), ("__call__", "call"),  # cell(x, h), and cell.call(x, h)
        lambda: _on_cell(cell, fn, c["W"], c["U"], c["bias"], c["inputs"], c["h0"]),
        ("outputs", "final_state"))
    if result is None:
        return None
    if not cell.variables:
        raise NoVariablesYet(
            f"the cell you were given {STILL_UNBUILT}: load the weights into THAT cell (it "
            "creates its variables on its first call), not into a cell of your own")
    if len(cell.variables) != 2:
        raise BuiltTwice(
            f"the cell now has {len(cell.variables)} variables: {TWICE}, and the cell "
            "computes with the newest. Build it only when `cell.variables` is empty")
    if c["built"] and _holds(cell, c["old_kernel"], c["old_bias"]):
        raise NothingLoaded(f"the cell you were given {STILL_OLD}")
    if unrun is not None:
        raise ValueError(f"the sequence {NOT_RUN}: {unrun} holds numbers no call of the "
                         "cell returned, so it was computed another way")
    h_new, _ = cell(c["x"], c["h"])  # what the loaded cell computes on new inputs
    parts = _arrays(result, 2)
    parts = list(parts) if isinstance(parts, (tuple, list)) else [parts]
    return [*parts, np.asarray(h_new)]


def _holds(cell: Any, kernel: np.ndarray, bias: np.ndarray) -> bool:
    """Whether ``cell``'s two variables hold exactly ``kernel`` and ``bias``."""
    held = [np.asarray(v) for v in cell.variables]
    return (len(held) == 2 and held[0].shape == kernel.shape and held[1].shape == bias.shape
            and np.array_equal(held[0], kernel) and np.array_equal(held[1], bias))


def _port_oracle(case: PortTrial) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Keras 3's own SimpleRNN with the case's weights, over the sequence from h0; and its cell
    on the fresh inputs."""
    keras = keras3()
    weights = [case["W"], case["U"], case["bias"]]
    layer = keras.layers.SimpleRNN(case["H"], return_sequences=True, return_state=True)
    layer.build((None, case["T"], case["D"]))
    layer.set_weights(weights)
    outputs, final = layer(case["inputs"], initial_state=[case["h0"]])
    cell = keras.layers.SimpleRNNCell(case["H"])
    cell.build((None, case["D"]))
    cell.set_weights(weights)
    return np.asarray(outputs), np.asarray(final), np.asarray(cell(case["x"], [case["h"]])[0])


def _ported(c: PortTrial) -> tuple[np.ndarray, ...]:
    """What the cell computes over the sequence (outputs, final) and on the fresh inputs, with
    the case's Keras weights loaded (the reference; instructor-side)."""
    loaded = {**c, "kernel": np.concatenate([c["W"], c["U"]])}  # (D + H, H)
    return (*_run(loaded), _step(loaded))


def _loaded(kernel: Callable[[Trial], np.ndarray]) -> Callable[[Trial], Trial]:
    """The case whose Keras weights, loaded right, put ``kernel(c)`` (D + H, H) in the cell: a
    wrong load is the right load of other weights."""
    def perturb(c: Trial) -> Trial:
        rows = kernel(c)
        return {**c, "W": rows[:c["D"]], "U": rows[c["D"]:]}
    return perturb


def _transposed_rows(c: Trial) -> np.ndarray:
    if c["D"] != c["H"]:
        raise ValueError("W.T and U.T stack into a kernel only where D == H")
    return np.concatenate([c["W"].T, c["U"].T])


def _stale_bias(c: Trial) -> np.ndarray:
    return c["old_bias"] if c["built"] else np.zeros_like(c["bias"])


run_keras_weights = Exercise[PortTrial](
    name="run_keras_weights",
    task="(outputs, final_state) of the given BasicRNNCell, loaded with Keras 3's weights, over "
    "inputs from h0: outputs (B, T, H) and the last state (B, H); the check then runs the cell "
    "itself on new inputs",
    make_case=_port_case,
    call=_port_call,
    oracle=_port_oracle,
    reference=_ported,
    parts=("outputs", "final_state", "the cell's own output on new inputs"),
    weights=(2, 1, 1),  # a wrong run (outputs) earns at most half
    by_hand=False,
    # two trials, as each costs a dozen eager calls of the cell: one cell never called (D != H:
    # a cell built for the wrong depth fails), one built holding other weights (D == H: the
    # only shape where W and U loaded transposed fit the kernel)
    designs=({"shape": "D>H", "B": 1, "T": 2}, {"shape": "D=H", "T": 2, "built": True}),
    mistakes=(
        Mistake(
            "the weights went into a cell of your own: load them into the cell you were given "
            "(build it first if `cell.variables` is empty), and run that one.",
            perturb=_raising_unbuilt(NoVariablesYet, STILL_UNBUILT),
            raises=_raised(NoVariablesYet, STILL_UNBUILT),
        ),
        Mistake(
            "the cell was built again: building a built cell makes a second kernel and bias, "
            "and it computes with the newest; build it only when `cell.variables` is empty.",
            perturb=_raising_built(BuiltTwice, TWICE), raises=_raised(BuiltTwice, TWICE),
        ),
        Mistake(
            "the blocks are side by side (hstack): the cell's kernel is (D + H, H), Keras' "
            "kernel (W) stacked on top of its recurrent_kernel (U) along axis 0.",
            perturb=_side_by_side, raises=_rows_differ,
        ),
        Mistake(
            "the cell's kernel has W and U swapped: BasicRNNCell concatenates [x, h], so Keras' "
            "kernel (W) goes in the first D rows and its recurrent_kernel (U) below.",
            perturb=_loaded(lambda c: np.concatenate([c["U"], c["W"]])),
        ),
        Mistake(
            "the cell's kernel holds W and U transposed: TF multiplies from the right, so load "
            "them as they are, W's rows on top of U's.",
            perturb=_loaded(_transposed_rows),
        ),
        Mistake(
            "the bias was not loaded into the cell: assign Keras' bias to the cell's bias "
            "variable too.",
            perturb=lambda c: {**c, "bias": _stale_bias(c)},
        ),
        # the mistakes of a loop over time that a loop of cell calls makes (rnn_unroll names
        # the other two; fewer models keep the 200-seed sweep fast); the changed cases keep
        # the fresh inputs x, h, so the third part stays the rightly loaded cell's
        *(Mistake(sentence, **options) for key, (sentence, options)
          in _sequence_mistakes().items() if key in ("h0", "skip 0", "skip last",
                                                      "not carried", "time-major")),
        not_from_api(
            f"the sequence {NOT_RUN}: the exercise is to run the loaded cell itself over "
            "the inputs, and these outputs are not what its calls returned (a NumPy loop "
            "or another layer).", NOT_RUN),
    ),
)


CHAPTER = Chapter(1, "01-basic-rnn-cell", [split_kernel, tf1_from_keras, rnn_step,
                                           read_cell_weights, rnn_unroll, run_keras_weights],
                  keras3=False)  # its oracles use Keras 3; a grading child, TF1's cells only
check = CHAPTER.check
