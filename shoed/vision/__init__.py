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

import os
import sys

# OpenCV reads these when it is first imported, and the modules of this package import it only
# after this one has run. OPENCV_IO_MAX_IMAGE_PIXELS: OpenCV's own refusal of a picture larger
# than shoed reads (picture.MAX_PIXELS, checked first from the header), a second guard should a
# header say less than the data decodes to. OPENCV_LOG_LEVEL: OpenCV's own log lines (a decoder's
# warnings, a stream's timeouts) stay off stderr, where shoed says what failed in one line of its
# own; an operator who sets it (OPENCV_LOG_LEVEL=WARNING) sees them again.
OPENCV_ENVIRONMENT = {"OPENCV_IO_MAX_IMAGE_PIXELS": "120000000", "OPENCV_LOG_LEVEL": "SILENT"}
for _name, _value in OPENCV_ENVIRONMENT.items():
    os.environ.setdefault(_name, _value)
if "cv2" in sys.modules and os.environ["OPENCV_LOG_LEVEL"] == "SILENT":  # imported before this package
    sys.modules["cv2"].utils.logging.setLogLevel(0)

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
