"""Camera fallback: reading cards from a camera when the shoe's reader fails.

`identify(image)` finds the card in a BGR image, reads its corner index and
answers an `Identification` (a card, or None with a reason: a guess is never
presented as a card). `CameraSource` watches a camera, a video or a folder of
images and reports each card dealt once, like a shoe driver.

OpenCV is imported by the modules of this package only, never at the top of a
module the daemon loads for a serial shoe: importing `shoed.vision` itself is
cheap, its names load on first use.
"""

from __future__ import annotations

_LAZY = {
    "Identification": "shoed.vision.recognize",
    "Recognizer": "shoed.vision.recognize",
    "identify": "shoed.vision.recognize",
    "CameraRead": "shoed.vision.watch",
    "CameraSource": "shoed.vision.source",
    "CameraError": "shoed.vision.source",
}

__all__ = ["CameraError", "CameraRead", "CameraSource", "Identification", "Recognizer", "identify"]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'shoed.vision' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
