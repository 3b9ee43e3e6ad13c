"""Pips of the camera tests drawn as masks: black print of a given shape, at a
place on the card, without a photograph around them."""

from __future__ import annotations

import numpy as np

from shoed.vision import index as X


def black_pip(mask: np.ndarray, x: int = 0, y: int = 0, blur: float = 0.05) -> X.Pip:
    """A black pip of this shape (a boolean mask), its box's top-left corner at (x, y) in card
    pixels; its mark labelled by its x (distinct for pips side by side)."""
    h, w = mask.shape
    return X.Pip(X.Mark(x, y, w, h, mask, (x + 1,)), mask.astype(np.float32), mask, redness=0.0, blur=blur)
