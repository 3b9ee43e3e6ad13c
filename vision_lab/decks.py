"""Card-face artwork that Debian packages ship: whole deck designs to measure on.

gnome-cards-data (aisleriot's themes, /usr/share/aisleriot/cards/*.svgz, ids
like "club_10", "heart_queen") holds complete decks drawn by many hands: other lettering, other pips, real court
pictures. Faces are rendered with rsvg-convert (librsvg2-bin) once and cached
as PNG; `face(design, label)` gives a vision_lab.synth.Face to photograph.
Nothing here is needed at run time or by the tests; the benchmark uses it
when the packages are installed:

    apt-get install gnome-cards-data librsvg2-bin

Four-colour decks are left out (shoed reads red and black suits).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from collections.abc import Iterator

import cv2
import numpy as np

from vision_lab import synth

CACHE = os.environ.get("SHOED_DECK_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "shoed-decks"))
_SUIT = {"C": "club", "D": "diamond", "H": "heart", "S": "spade"}
_RANK = {"A": "1", "T": "10", "J": "jack", "Q": "queen", "K": "king"}


def designs() -> dict[str, str]:
    """Installed deck designs: name -> svgz file."""
    found = {}
    for path in sorted(glob.glob("/usr/share/aisleriot/cards/*.svgz")):
        name = os.path.basename(path).removesuffix(".svgz")
        if name.isascii() and "4_color" not in name and "bitmap" not in name:
            found[name] = path
    return found if shutil.which("rsvg-convert") else {}


def _element_id(label: str) -> str:
    return f"{_SUIT[label[-1]]}_{_RANK.get(label[:-1], label[:-1])}"


def face(design: str, label: str) -> synth.Face | None:
    """The face of `label` ("TD") in `design`, at synth's face size; None when
    the design has no such card."""
    path = designs()[design]
    png = os.path.join(CACHE, design, f"{label}.png")
    if not os.path.exists(png):
        os.makedirs(os.path.dirname(png), exist_ok=True)
        run = subprocess.run(["rsvg-convert", "-i", _element_id(label), "-h", "1200", path, "-o", png],
                             capture_output=True)
        if run.returncode != 0:
            return None
    rgba = cv2.imread(png, cv2.IMREAD_UNCHANGED)
    if rgba is None or rgba.ndim != 3 or rgba.shape[2] != 4:
        return None
    alpha = rgba[..., 3]
    ys, xs = np.nonzero(alpha > 128)
    if len(xs) == 0:
        return None
    crop = rgba[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    h, w = crop.shape[:2]
    if h < w:  # a landscape element: not a card face
        return None
    img = cv2.resize(crop, (synth.FACE_W, synth.FACE_H), interpolation=cv2.INTER_AREA)
    a = img[..., 3]
    paper = np.full((synth.FACE_H, synth.FACE_W, 3), 255, np.uint8)
    f = a[..., None].astype(np.float32) / 255.0
    bgr = (img[..., :3].astype(np.float32) * f + paper * (1 - f)).astype(np.uint8)
    return synth.Face(bgr, a, label, font=design)


def shots(per_design: int, seed: int, size: tuple[int, int] = (1280, 960)) -> Iterator[tuple[synth.Shot, str]]:
    """(shot, design) pairs: `per_design` cards of each installed design (every
    rank before any repeats), photographed as vision_lab.synth does."""
    labels = synth.all_labels()
    for d, design in enumerate(designs()):
        for i in range(per_design):
            label = labels[(i % 13) + 13 * ((i + d) % 4)]
            f = face(design, label)
            if f is None:
                continue
            rng = np.random.default_rng(seed * 100_003 + d * 1000 + i)
            yield synth.photograph(label, rng, synth.classic_style(), size=size, occlusion_p=0.0, face=f), design
