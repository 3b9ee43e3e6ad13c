"""Card-face artwork that Debian packages ship: whole deck designs to measure on.

gnome-cards-data (aisleriot's themes, /usr/share/aisleriot/cards/*.svgz, ids
like "club_10", "heart_queen") and kdegames-card-data-kf5 (KDE's decks,
/usr/share/carddecks/svg-*/*.svgz, ids like "10_club", "queen_heart"; named
here "kde-" and their folder's name, "kde-oxygen") hold complete decks drawn
by many hands: other lettering, other pips, real court pictures, faces
printed on dark or tinted card, indices split between the top corners. Faces are rendered with rsvg-convert (librsvg2-bin) once and cached
as PNG; `face(design, label)` gives a vision_lab.synth.Face to photograph.
Nothing here is needed at run time or by the tests; the benchmark uses it
when the packages are installed:

    apt-get install gnome-cards-data kdegames-card-data-kf5 librsvg2-bin

Four-colour decks are left out (shoed reads red and black suits).

Designs are split, whole, into those the classifier may learn from
(`TRAINING_DESIGNS`) and those it never sees (every other design: the
benchmark reports on these only). Designs that share their lettering are kept
on one side of the split (the Gnome "anglo" family, the Atlasnye family, the
German serif decks), so that a held-out design is never a near copy of a
trained one; KDE's redrawing of a trained design (`NEAR_TRAINED`) is on
neither side. Cards whose index is not an English rank over a French suit (a
"B" or "D" for a German jack or queen, a Russian "T" for an ace, Swiss suits,
court cards without an index) are listed in `to_refuse`: for those a
refusal is the right answer.
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
# Designs whose artwork the classifier may be trained on (vision_lab.train);
# whole families of lettering: Atlasnye (atlasnye, atlasnye_skat, orell,
# slavic_costumes, tarocco, tigullio), German serif (berlin, lattmann,
# rheinland), and two serif decks (bellot, neoclassical).
TRAINING_DESIGNS = ("atlasnye", "atlasnye_skat", "orell", "slavic_costumes", "tarocco", "tigullio",
                    "berlin", "lattmann", "rheinland", "bellot", "neoclassical")
# KDE's decks that are near copies of a trained design: neither trained on nor
# reported as never seen.
NEAR_TRAINED = ("kde-tigullio-international",)
# KDE's decks left out: not playing cards (a deck of computer parts), or cards
# that rsvg-convert cannot cut out one by one ("has no dimensions").
_NOT_CARDS = ("kde-future", "kde-konqi-modern", "kde-xskat-french")
# Ranks whose index in a design is not an English rank letter (refusing is right).
_FOREIGN_RANKS = {
    "ancient_french": "AJQK",  # 1, V, D, R
    "atlasnye_skat": "JQ",  # B, D
    "berlin": "JQ",
    "lattmann": "JQ",
    "rheinland": "JQ",
    "slavic_costumes": "AJQ",  # Cyrillic T, V, D
    "tarocco": "JQK",  # F, D, R
    "guyenne-classic": "JQK",  # court cards without an index
}
# Designs not in French suits read in red and black: Swiss suits, four colours.
_FOREIGN_DESIGNS = ("swiss-xvii", "atlasnye_skat", "kde-xskat-german")
# The names designs give their jokers (aisleriot's, KDE's).
JOKER_ELEMENTS = ("joker_black", "joker_red", "black_joker", "red_joker", "joker")
_SUIT = {"C": "club", "D": "diamond", "H": "heart", "S": "spade"}
_RANK = {"A": "1", "T": "10", "J": "jack", "Q": "queen", "K": "king"}


def designs() -> dict[str, str]:
    """Installed deck designs: name -> svgz file (aisleriot's, then KDE's)."""
    found = {}
    for path in sorted(glob.glob("/usr/share/aisleriot/cards/*.svgz")):
        name = os.path.basename(path).removesuffix(".svgz")
        if name.isascii() and "4_color" not in name and "bitmap" not in name:
            found[name] = path
    for path in sorted(glob.glob("/usr/share/carddecks/svg-*/*.svgz")):
        name = "kde-" + os.path.basename(os.path.dirname(path)).removeprefix("svg-")
        if name not in _NOT_CARDS:
            found[name] = path
    return found if shutil.which("rsvg-convert") else {}


def held_out_designs(source: str | None = None) -> list[str]:
    """Installed designs the classifier never trains on; `source` "kde" for
    KDE's only, "aisleriot" for aisleriot's only."""
    return [d for d in designs() if d not in TRAINING_DESIGNS and d not in NEAR_TRAINED
            and (source is None or (source == "kde") == d.startswith("kde-"))]


def foreign_ranks(design: str) -> str:
    """Ranks whose index letter in `design` is not the English one."""
    return _FOREIGN_RANKS.get(design, "")


def to_refuse(design: str, label: str) -> bool:
    """Whether the card's index is not one shoed reads (refusing it is right)."""
    return design in _FOREIGN_DESIGNS or label[:-1] in foreign_ranks(design)


def _element_id(design: str, label: str) -> str:
    rank, suit = _RANK.get(label[:-1], label[:-1]), _SUIT[label[-1]]
    return f"{rank}_{suit}" if design.startswith("kde-") else f"{suit}_{rank}"


def face(design: str, label: str) -> synth.Face | None:
    """The face of `label` ("TD") in `design`, at synth's face size; None when
    the design has no such card."""
    rgba = _render(design, _element_id(design, label))
    return None if rgba is None else _face(rgba, label, design)


def _face(rgba: np.ndarray, label: str | None, design: str) -> synth.Face:
    """A rendering (BGRA) as synth's face, at its size, on white paper."""
    img = cv2.resize(rgba, (synth.FACE_W, synth.FACE_H), interpolation=cv2.INTER_AREA)
    return synth.Face(_on_paper(img), img[..., 3], label, font=design)


def _on_paper(rgba: np.ndarray) -> np.ndarray:
    f = rgba[..., 3:4].astype(np.float32) / 255.0
    return (rgba[..., :3].astype(np.float32) * f + 255.0 * (1 - f)).astype(np.uint8)


def jokers(design: str) -> list[synth.Face]:
    """The jokers `design` prints (none to a design without), at synth's face size: no card of a
    baccarat shoe, each must be read as no card."""
    found = []
    for element in JOKER_ELEMENTS:
        rgba = _render(design, element)
        if rgba is not None and rgba.shape[0] <= 1.8 * rgba.shape[1]:  # a card's proportions, not a strip
            found.append(_face(rgba, None, design))
    return found


def _render(design: str, element: str) -> np.ndarray | None:
    """The design's `element` (a card's face: _element_id), cropped to the card, as rendered (BGRA,
    1200 px tall)."""
    path = designs()[design]
    png = os.path.join(CACHE, design, f"{element}.png")
    if not os.path.exists(png):
        os.makedirs(os.path.dirname(png), exist_ok=True)
        run = subprocess.run(["rsvg-convert", "-i", element, "-h", "1200", path, "-o", png], capture_output=True)
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
    return crop


def index_masks(design: str, label: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The rank and suit marks of the card's upright index as high-resolution
    masks (uint8, 255 = ink), found as the recogniser finds them (the topmost
    rank-over-suit pairing of the top-left corner, on the flattened card), cut
    from the rendering at full resolution. None when the index is not found so."""
    from shoed.vision import index as X
    from shoed.vision.locate import CANON_H, CANON_W

    rgba = _render(design, _element_id(design, label))
    if rgba is None:
        return None
    paper = _on_paper(rgba)
    canon = cv2.resize(paper, (CANON_W, CANON_H), interpolation=cv2.INTER_AREA)
    view = X.corner_views(canon)[0]
    glyphs = 2 if label[:-1] == "T" else 1
    found = [p for p in X.pairings(view, X.find_marks(view)) if not p.partial and len(p.rank.labels) == glyphs]
    if not found:
        return None
    best = min(found, key=lambda p: (p.rank.y, p.suit.y))
    ink = (1.0 - X.paper_normalised(paper).min(axis=2))
    sy, sx = paper.shape[0] / CANON_H, paper.shape[1] / CANON_W
    return _cut(ink, best.rank, sx, sy), _cut(ink, best.suit, sx, sy)


def _cut(ink: np.ndarray, m, sx: float, sy: float) -> np.ndarray:
    """The ink of canonical mark `m` at full resolution: the marks whose
    centres fall in its box."""
    x0, y0 = int(m.x * sx), int(m.y * sy)
    x1, y1 = int((m.x + m.w) * sx) + 1, int((m.y + m.h) * sy) + 1
    pad = int(2 * max(sx, sy))
    ya, xa = max(0, y0 - pad), max(0, x0 - pad)
    crop = ink[ya : y1 + pad, xa : x1 + pad]
    binary = (crop > 0.4).astype(np.uint8)
    n, labels, stats, cents = cv2.connectedComponentsWithStats(binary, connectivity=8)
    keep = np.zeros(binary.shape, np.uint8)
    for k in range(1, n):
        cx, cy = cents[k][0] + xa, cents[k][1] + ya
        if x0 <= cx <= x1 and y0 <= cy <= y1 and stats[k][4] >= 4:
            keep[labels == k] = 255
    out = (np.clip(crop, 0, 1) * 255).astype(np.uint8)
    out[keep == 0] = 0
    ys, xs = np.nonzero(out > 40)
    if len(xs) == 0:
        return out
    return out[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]


def shots(per_design: int, seed: int, size: tuple[int, int] = (1280, 960),
          names: list[str] | None = None, **options) -> Iterator[tuple[synth.Shot, str]]:
    """(shot, design) pairs: `per_design` cards of each design in `names`
    (default: the held-out designs; every rank before any repeats),
    photographed as vision_lab.synth does (`options`: synth.photograph's,
    no occlusion unless they say)."""
    options = {"occlusion_p": 0.0, **options}
    labels = synth.all_labels()
    names = held_out_designs() if names is None else names
    for d, design in enumerate(designs()):
        if design not in names:
            continue
        for i in range(per_design):
            label = labels[(i % 13) + 13 * ((i + d) % 4)]
            f = face(design, label)
            if f is None:
                continue
            rng = np.random.default_rng(seed * 100_003 + d * 1000 + i)
            yield synth.photograph(label, rng, synth.classic_style(), size=size, face=f, **options), design
