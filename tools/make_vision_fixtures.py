#!/usr/bin/env python3
"""Write the small hard pictures the camera tests keep (tests/vision/data/hard/).

    python tools/make_vision_fixtures.py [OUT_DIR]

Drawn by vision_lab.hard_sets from the held-out Debian font families (install
them first: apt-get install fonts-urw-base35 fonts-roboto-unhinted
fonts-open-sans), stored small: narrow-lettering photographs at 480 x 360,
128 x 128 frames, 320 x 240 photographs under colour casts. Writes manifest.json: [{"file", "card", "set", "design"}, ...]. The tests need only
the stored files, not the fonts.
"""

from __future__ import annotations

import sys
from pathlib import Path

# The vision lab lives beside shoed in the repository, not in the installed package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import json  # noqa: E402
import os  # noqa: E402

import cv2  # noqa: E402

from vision_lab import hard_sets  # noqa: E402

PLAN = (("narrow", 36, 7, {"size": (480, 360), "size_frac": (0.6, 0.95)}), ("frames", 48, 8, {}), ("casts", 32, 9, {"size": (320, 240)}))


def main(argv: list[str]) -> int:
    out = argv[0] if argv else os.path.join(os.path.dirname(__file__), "..", "tests", "vision", "data", "hard")
    os.makedirs(out, exist_ok=True)
    manifest = []
    for name, count, seed, options in PLAN:
        for i, (shot, design) in enumerate(hard_sets.SETS[name](count, seed, **options)):
            file = f"{name}_{i:03d}_{shot.card}.jpg"
            cv2.imwrite(os.path.join(out, file), shot.image, [cv2.IMWRITE_JPEG_QUALITY, 80])
            manifest.append({"file": file, "card": shot.card, "set": name, "design": design})
    with open(os.path.join(out, "manifest.json"), "w") as fh:
        json.dump(manifest, fh, indent=1)
    print(f"{len(manifest)} pictures in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
