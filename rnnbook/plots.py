"""Figures that more than one chapter draws (matplotlib; small, so committed outputs stay small)."""
import matplotlib.pyplot as plt

#: dots per inch of every figure the book stores (keeps committed notebooks small)
DPI = 80


def figure(width=6.0, height=3.0, **kwargs):
    """A new figure at the book's size and resolution: ``fig, ax = figure()``."""
    return plt.subplots(figsize=(width, height), dpi=DPI, **kwargs)
