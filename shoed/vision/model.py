"""The index classifier: a small multilayer perceptron in numpy.

It takes the feature vector of one mark (index.glyph_vector) and answers
probabilities over 18 classes: the thirteen ranks, the four suit shapes, and
"none of these" (fragments, foreign letters, picture and pattern pieces), so a
mark that is neither a rank nor a suit has somewhere to go.

The weights ship in shoed/vision/data/index_model.npz (float16, well under
1 MB) and are produced by `python -m vision_lab.train`; nothing is fetched at
run time.
"""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass
from typing import Any

import numpy as np

RANK_CLASSES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUIT_CLASSES = ("C", "D", "H", "S")
CLASSES = RANK_CLASSES + SUIT_CLASSES + ("none",)
NONE = len(CLASSES) - 1
DEFAULT_PATH = os.path.join(os.path.dirname(__file__), "data", "index_model.npz")


class ModelError(RuntimeError):
    """The model file is missing or not one this code can use."""


@dataclass
class IndexModel:
    """Weights of the perceptron and the feature scaling it was trained with."""

    mean: np.ndarray
    scale: np.ndarray
    layers: list[tuple[np.ndarray, np.ndarray]]
    info: dict

    def logits(self, x: np.ndarray) -> np.ndarray:
        h = (np.asarray(x, np.float32) - self.mean) / self.scale
        for i, (w, b) in enumerate(self.layers):
            # einsum without BLAS: a few dozen rows are done in a millisecond on one
            # thread, where a threaded BLAS spends more time waking its threads
            # (and takes cores from the daemon) than multiplying.
            h = np.einsum("ij,jk->ik", h, w, optimize=False) + b
            if i < len(self.layers) - 1:
                h = np.maximum(h, 0.0)
        return h

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Class probabilities, one row per feature vector."""
        if len(x) == 0:
            return np.zeros((0, len(CLASSES)), np.float32)
        z = self.logits(x)
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        p = e / e.sum(axis=1, keepdims=True)
        # Training spread `smoothing` of every target over all classes; take that
        # floor back off so a clear mark scores near 1, a doubtful one stays low.
        eps = float(self.info.get("smoothing", 0.0))
        if eps:
            p = np.clip((p - eps / len(CLASSES)) / (1.0 - eps), 0.0, 1.0)
            p /= np.maximum(p.sum(axis=1, keepdims=True), 1e-9)
        return p

    def save(self, path: str) -> None:
        arrays: dict[str, Any] = {"mean": self.mean.astype(np.float32), "scale": self.scale.astype(np.float32)}
        for i, (w, b) in enumerate(self.layers):
            arrays[f"w{i}"] = w.astype(np.float16)
            arrays[f"b{i}"] = b.astype(np.float32)
        arrays["info"] = np.frombuffer(json.dumps(self.info).encode(), np.uint8)
        np.savez_compressed(path, **arrays)

    @classmethod
    def load(cls, path: str = DEFAULT_PATH) -> IndexModel:
        """The model in the file at `path`; ModelError, one line, where the file is missing or is
        not a model this code can use (not an .npz archive, cut short, arrays missing or of shapes
        that do not chain from the features to the classes)."""
        if not os.path.exists(path):
            raise ModelError(f"index model not found at {path}: build it with `python -m vision_lab.train`")
        try:
            with np.load(path) as data:
                layers = []
                i = 0
                while f"w{i}" in data:
                    layers.append((data[f"w{i}"].astype(np.float32), data[f"b{i}"].astype(np.float32)))
                    i += 1
                info = json.loads(bytes(data["info"]).decode())
                model = cls(data["mean"].astype(np.float32), data["scale"].astype(np.float32), layers, info)
        except (OSError, EOFError, zipfile.BadZipFile, KeyError, UnicodeDecodeError, ValueError, TypeError,
                AttributeError) as exc:
            # np.load: not a zip archive, cut short, an array missing, a pickled (object) array, info not JSON
            raise ModelError(f"index model at {path} is not usable: {_one_line(exc)}") from None
        if not isinstance(info, dict):
            raise ModelError(f"index model at {path} is not usable: its info is not a JSON object")
        if tuple(info.get("classes", ())) != CLASSES:
            raise ModelError(f"index model at {path} has classes {info.get('classes')}, expected {list(CLASSES)}")
        problem = model.shape_problem()
        if problem:
            raise ModelError(f"index model at {path} is not usable: {problem}")
        return model

    def shape_problem(self) -> str | None:
        """What is wrong with the arrays' shapes (None: nothing): the scaling one row of features,
        each layer taking what the one before gives, the last giving one value per class."""
        if self.mean.ndim != 1 or self.scale.shape != self.mean.shape:
            return f"mean {self.mean.shape} and scale {self.scale.shape} are not one row of features"
        if not self.layers:
            return "no layers (w0, b0, ...)"
        width = self.mean.shape[0]
        for i, (w, b) in enumerate(self.layers):
            if w.ndim != 2 or w.shape[0] != width or b.shape != (w.shape[1],):
                return f"layer {i} (w {w.shape}, b {b.shape}) does not take the {width} values before it"
            width = w.shape[1]
        if width != len(CLASSES):
            return f"the last layer gives {width} values, not one per class ({len(CLASSES)})"
        return None


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


_default: IndexModel | None = None


def default_model() -> IndexModel:
    global _default
    if _default is None:
        _default = IndexModel.load()
    return _default
