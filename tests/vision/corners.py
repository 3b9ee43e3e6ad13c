"""The error of a card's outline as found, against where the card lies."""

from __future__ import annotations

import numpy as np


def corner_error(found, truth) -> float:
    """The largest distance, in pixels along x or y, between the four corners found and the true
    ones, taken in the order (of the four turns) that fits best: a card's corners may be named
    from any of its four sides."""
    found, truth = np.asarray(found, np.float64), np.asarray(truth, np.float64)
    return min(float(np.abs(np.roll(found, k, axis=0) - truth).max()) for k in range(4))
