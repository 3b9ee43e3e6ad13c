"""Drawing the marks of a card's corner index: rank glyphs and suit symbols.

Used by the synthetic card renderer (tests, benchmarks) and by the training of
the index classifier. Everything here draws with OpenCV alone: the fonts built
into OpenCV 5 ("sans", a variable-weight font, and "uni"), TrueType fonts from
the system when there are any (DejaVu on Debian: training only), a stroke font
drawn here with polylines, and suit symbols drawn from curves. Each function
returns a tight 8-bit mask (255 = ink) of one mark, upright.
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass

import cv2
import numpy as np

RANK_TEXT = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUIT_SYMBOLS = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}

# System fonts the training may use when they are installed. Nothing at run time
# needs them. Whole families are either learnt from or held out, so that the
# benchmark measures lettering the classifier has never seen:
#   trained on:  fonts-dejavu-core, fonts-dejavu-extra, fonts-liberation,
#                fonts-freefont-ttf, fonts-crosextra-carlito, fonts-crosextra-caladea,
#                and lettering of other shapes: condensed (Bebas Neue, Yanone
#                Kaffeesatz, Gillius and Universalis Condensed), geometric
#                (League Spartan, Comfortaa, Manrope), grotesque and humanist
#                sans (Inter, Lato, Cantarell, Karla, Clear Sans, B612, Biolinum,
#                Verana), serif (Libertine, Gentium, Quattrocento, Accanthis,
#                Baskervald, Berenis)
#   held out:    fonts-urw-base35 (Nimbus Sans and Sans Narrow, Nimbus Roman, URW
#                Gothic, C059, P052, ...), fonts-roboto-unhinted, fonts-open-sans
#   on neither side, as close to a held-out face: TeX Gyre, Noto Sans, ADF
#                Switzera, Tribun and Romande
FONT_ROOTS = ("/usr/share/fonts/truetype", "/usr/share/fonts/opentype", "/usr/share/fonts/TTF")
TRAINING_FAMILIES = ("dejavu", "liberation", "freefont", "crosextra", "bebas-neue", "yanone-kaffeesatz", "adf",
                     "league-spartan", "comfortaa", "manrope", "inter", "lato", "cantarell", "karla", "clear-sans",
                     "b612", "linux-libertine", "gentiumplus", "quattrocento")
HELD_OUT_FAMILIES = ("urw-base35", "roboto", "open-sans")
# faces that do not write ranks the way a card does
_SKIP = ("Oblique", "Italic", "Ita.", "ExtraLight", "Light", "Thin", "Hairline", "Math", "Mono", "Dingbat", "Symbol",
         "Z003", "D050000L", "Black", "It.", "_I.", "_RI.", "_RBI.", "_RZI.", "_K.",
         # old-style figures (a "1" like an "I", digits of several heights), which card indices do not use
         "IrianisADF", "OldaniaADF",
         # close to a held-out face
         "RomandeADF", "SwitzeraADF", "TribunADF")


@dataclass(frozen=True)
class GlyphFont:
    """One way of writing ranks: an OpenCV font face (built-in name or .ttf path)
    with a weight, or the stroke font ("stroke") with a stroke width.

    `ten` is how the font writes ten: fonts whose zero is slashed use a letter O.
    """

    face: str
    weight: int = 400  # 100..1000 for variable fonts; stroke width in 1/100 of the height for "stroke"
    ten: str = "10"
    suits: bool = True  # the font has the four suit symbols

    @property
    def label(self) -> str:
        base = os.path.splitext(os.path.basename(self.face))[0]
        return f"{base}@{self.weight}"


def system_fonts(families: tuple[str, ...] = TRAINING_FAMILIES) -> list[str]:
    """TrueType/OpenType files of the given families (folder names under the
    system font folders) found on this machine, sorted (may be empty)."""
    found = []
    for root in FONT_ROOTS:
        for folder, _, names in sorted(os.walk(root)):
            rel = os.path.relpath(folder, root).split(os.sep)[0].lower()
            if rel not in families:
                continue
            found += [os.path.join(folder, n) for n in sorted(names)
                      if n.endswith((".ttf", ".otf")) and not any(k in n for k in _SKIP)]
    return sorted(found)


def training_fonts(families: tuple[str, ...] = TRAINING_FAMILIES) -> list[GlyphFont]:
    """The fonts the index classifier learns from. The stroke font, OpenCV's
    "uni" font and the held-out Debian families are kept out: they tell how
    well it reads lettering it has never seen."""
    fonts = [GlyphFont("sans", w, ten="1O") for w in (400, 500, 600, 700, 800, 900)]
    # only DejaVu is known to carry the four suit symbols; the others' suits are drawn
    fonts += [GlyphFont(path, 400, suits="dejavu" in path.lower()) for path in system_fonts(families)]
    return fonts


def held_out_fonts() -> list[GlyphFont]:
    """Lettering the classifier never trains on (see training_fonts)."""
    return [GlyphFont("uni", 400), GlyphFont("stroke", 11, suits=False), GlyphFont("stroke", 16, suits=False)]


def held_out_system_fonts() -> list[GlyphFont]:
    """Debian font families the classifier never trains on (may be empty)."""
    return [GlyphFont(path, 400, suits=False) for path in system_fonts(HELD_OUT_FAMILIES)]


@functools.lru_cache(maxsize=64)
def _face(name: str):
    return cv2.FontFace(name)


def _tight(mask: np.ndarray) -> np.ndarray:
    ys, xs = np.nonzero(mask > 40)
    if len(xs) == 0:
        raise ValueError("empty glyph")
    return mask[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1].copy()


@functools.lru_cache(maxsize=4096)
def _text_master(face: str, weight: int, text: str) -> np.ndarray:
    size = 120
    canvas = np.zeros((size * 2, size * (len(text) + 2)), np.uint8)
    if face == "stroke":
        return _stroke_text(text, size, weight)
    cv2.putText(canvas, text, (size // 2, int(size * 1.4)), 255, _face(face), size, weight)
    return _tight(canvas)


def rank_mask(font: GlyphFont, rank_text: str, height: int) -> np.ndarray:
    """A rank ("A", "2".."10", "J", "Q", "K") in `font`, scaled to `height` pixels."""
    text = font.ten if rank_text == "10" else rank_text
    master = _text_master(font.face, font.weight, text)
    return scale_to_height(master, height)


def font_suit_mask(font: GlyphFont, suit: str, height: int) -> np.ndarray:
    master = _text_master(font.face, font.weight, SUIT_SYMBOLS[suit])
    missing = _text_master(font.face, font.weight, "?")
    if np.array_equal(master, missing):
        # OpenCV's own sans font has no suit symbols from 5.1 on: a card drawn so would carry no suit
        raise RuntimeError(f"the font {font.face!r} draws no {SUIT_SYMBOLS[suit]} (OpenCV {cv2.__version__}: "
                           "vision_lab needs opencv-python-headless below 5.1)")
    return scale_to_height(master, height)


def scale_to_height(mask: np.ndarray, height: int, width_factor: float = 1.0) -> np.ndarray:
    h, w = mask.shape
    new_w = max(1, round(w * height / h * width_factor))
    interp = cv2.INTER_AREA if height < h else cv2.INTER_LINEAR
    return cv2.resize(mask, (new_w, max(1, height)), interpolation=interp)


# ----- the stroke font ---------------------------------------------------------
# Glyphs on a 0..0.62 x 0..1 grid (y down), written as polylines; curves are
# smoothed with Chaikin's corner cutting. Unlike the fonts above it has uniform
# strokes with round ends, like a felt pen: a style no training font has.


def _arc(cx, cy, rx, ry, a0, a1, n=24):
    return [(cx + rx * math.cos(math.radians(a)), cy + ry * math.sin(math.radians(a))) for a in np.linspace(a0, a1, n)]


def _smooth(points, rounds=2):
    pts = np.asarray(points, float)
    for _ in range(rounds):
        q = 0.75 * pts[:-1] + 0.25 * pts[1:]
        r = 0.25 * pts[:-1] + 0.75 * pts[1:]
        mid = np.empty((len(q) * 2, 2))
        mid[0::2], mid[1::2] = q, r
        pts = np.vstack([pts[:1], mid, pts[-1:]])
    return pts.tolist()


_STROKES = {
    "A": [[(0.0, 1.0), (0.31, 0.0), (0.62, 1.0)], [(0.12, 0.64), (0.5, 0.64)]],
    "2": [_arc(0.31, 0.27, 0.28, 0.25, 195, 365) + _smooth([(0.58, 0.33), (0.4, 0.58), (0.0, 1.0)], 1)
          + [(0.62, 1.0)]],
    "3": [_arc(0.3, 0.25, 0.26, 0.23, 200, 450) + _arc(0.3, 0.73, 0.29, 0.26, 270, 520)[1:]],
    "4": [[(0.47, 1.0), (0.47, 0.0), (0.0, 0.7), (0.62, 0.7)]],
    "5": [[(0.56, 0.0), (0.09, 0.0), (0.05, 0.44)] + _arc(0.31, 0.67, 0.29, 0.31, 225, 510)[1:]],
    "6": [_smooth([(0.55, 0.05), (0.3, -0.04), (0.04, 0.2), (0.02, 0.7)], 2) + _arc(0.31, 0.7, 0.29, 0.29, 180, 540)],
    "7": [[(0.0, 0.0), (0.62, 0.0), (0.2, 1.0)]],
    "8": [_arc(0.31, 0.25, 0.25, 0.23, 90, 450), _arc(0.31, 0.72, 0.3, 0.27, -90, 270)],
    "9": [_arc(0.31, 0.3, 0.29, 0.29, 0, 360) + _smooth([(0.6, 0.3), (0.58, 0.8), (0.32, 1.04), (0.07, 0.95)], 2)],
    "1": [[(0.08, 0.18), (0.3, 0.0), (0.3, 1.0)]],
    "0": [_arc(0.31, 0.5, 0.28, 0.5, 0, 360, 40)],
    "J": [[(0.22, 0.0), (0.62, 0.0)], [(0.48, 0.0)] + _arc(0.26, 0.76, 0.22, 0.24, 0, 165)],
    "Q": [_arc(0.31, 0.48, 0.31, 0.48, 0, 360, 40), [(0.36, 0.74), (0.66, 1.08)]],
    "K": [[(0.04, 0.0), (0.04, 1.0)], [(0.6, 0.0), (0.04, 0.62)], [(0.22, 0.45), (0.62, 1.0)]],
}


# Card lettering no training font has: the flat-topped "3" of many printed
# decks (a bar, a diagonal down to the bowl), which a classifier that has only
# seen round threes reads as a "5". Training only (vision_lab.train).
CARD_GLYPHS = {
    "3": [[(0.04, 0.0), (0.58, 0.0), (0.27, 0.4)] + _arc(0.3, 0.7, 0.3, 0.3, 270, 520)],
}


def card_glyph_mask(rank_text: str, height: int, rng: np.random.Generator) -> np.ndarray:
    """A rank in card lettering (CARD_GLYPHS), with a random stroke width."""
    master = _stroke_text(rank_text, 120, float(rng.uniform(9, 17)), CARD_GLYPHS)
    return scale_to_height(master, height)


def _stroke_text(text: str, size: int, width_percent: float, strokes: dict | None = None) -> np.ndarray:
    thickness = max(2, round(size * width_percent / 100.0))
    pad = thickness * 2
    advance = 0.74 if len(text) > 1 else 0.0
    canvas = np.zeros((size * 2 + pad * 2, int(size * (len(text) + 1)) + pad * 2), np.uint8)
    for i, ch in enumerate(text):
        ox = pad + i * size * advance
        for line in (strokes or _STROKES)[ch]:
            pts = np.array([(ox + x * size, pad + y * size) for x, y in line], np.float32)
            cv2.polylines(canvas, [np.round(pts * 16).astype(np.int32)], False, 255, thickness, cv2.LINE_AA, 4)
    return _tight(canvas)


# ----- suit symbols drawn from curves --------------------------------------------


def _heart_points(lobe: float, n: int = 80) -> np.ndarray:
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    x = 16 * np.sin(t) ** 3
    y = -(13 * np.cos(t) - 5 * np.cos(2 * t) - 2 * np.cos(3 * t) - np.cos(4 * t))
    x = x * lobe
    return np.stack([x, y], axis=1)


def suit_shape_mask(suit: str, height: int, rng: np.random.Generator | None = None, wide: bool = False) -> np.ndarray:
    """A suit symbol drawn from curves, `height` pixels tall; `rng` varies its
    proportions. With `wide`, spades and clubs vary over what printed decks
    show beyond the common shapes: a short body over a long slender stem
    flaring to a broad foot, small or large lobes set close or apart (hearts
    and diamonds are drawn as without it)."""
    wide = wide and suit in "SC"
    r = rng if rng is not None else np.random.default_rng(0)
    jitter = (lambda a, b: r.uniform(a, b)) if rng is not None or wide else (lambda a, b: (a + b) / 2)
    s = 400  # master size
    canvas = np.zeros((s + 40, s + 40), np.uint8)
    ox = oy = 20
    if suit == "H":
        pts = _heart_points(jitter(0.95, 1.12))
        pts = _fit(pts, s * jitter(0.95, 1.15), s)
        cv2.fillPoly(canvas, [_i(pts, ox, oy)], 255, cv2.LINE_AA, 4)
    elif suit == "D":
        w = s * jitter(0.62, 0.8)
        bulge = jitter(-0.12, 0.04)
        pts = []
        corners = [(w / 2, 0), (w, s / 2), (w / 2, s), (0, s / 2)]
        for k in range(4):
            (x0, y0), (x1, y1) = corners[k], corners[(k + 1) % 4]
            mx, my = (x0 + x1) / 2, (y0 + y1) / 2
            cx, cy = w / 2, s / 2
            # bend each side toward (bulge < 0) or away from the centre
            px, py = mx + (mx - cx) * bulge * 2, my + (my - cy) * bulge * 2
            for u in np.linspace(0, 1, 16, endpoint=False):
                pts.append(((1 - u) ** 2 * x0 + 2 * u * (1 - u) * px + u * u * x1,
                            (1 - u) ** 2 * y0 + 2 * u * (1 - u) * py + u * u * y1))
        pts = np.array(pts)
        pts[:, 0] += (s - w) / 2
        cv2.fillPoly(canvas, [_i(pts, ox, oy)], 255, cv2.LINE_AA, 4)
    elif suit == "S":
        body = s * (jitter(0.58, 0.84) if wide else jitter(0.72, 0.82))  # the rest is stem
        pts = _heart_points(jitter(0.85, 1.2) if wide else jitter(0.95, 1.1))
        pts[:, 1] = -pts[:, 1]
        pts = _fit(pts, s * (jitter(0.75, 1.15) if wide else jitter(0.9, 1.08)), body)
        cv2.fillPoly(canvas, [_i(pts, ox, oy)], 255, cv2.LINE_AA, 4)
        _stem(canvas, ox, oy, s, body * 0.75, jitter, wide)
    elif suit == "C":
        body = s * (jitter(0.58, 0.84) if wide else jitter(0.74, 0.82))
        rad = s * (jitter(0.14, 0.26) if wide else jitter(0.2, 0.24))
        cx = s / 2
        if wide:  # the side lobes alike, set apart and raised or lowered
            left = right = jitter(0.85, 1.3)
            low = (body - rad) * jitter(0.85, 1.05)
            stem_top = low
        else:
            left, right = jitter(1.0, 1.15), jitter(1.0, 1.15)
            low = body - rad
            stem_top = body - rad * 0.5
        centres = [(cx, rad), (cx - rad * left, low), (cx + rad * right, low)]
        for x, y in centres:
            cv2.circle(canvas, (round((ox + x) * 16), round((oy + y) * 16)), round(rad * 16), 255, -1, cv2.LINE_AA, 4)
        cv2.fillPoly(canvas, [_i(np.array(centres), ox, oy)], 255, cv2.LINE_AA, 4)
        _stem(canvas, ox, oy, s, stem_top, jitter, wide)
    else:
        raise ValueError(f"unknown suit {suit!r}")
    return scale_to_height(_tight(canvas), height)


def _stem(canvas, ox, oy, s, top, jitter, wide=False):
    foot = s * (jitter(0.2, 0.5) if wide else jitter(0.26, 0.4))
    neck = s * (jitter(0.03, 0.1) if wide else jitter(0.06, 0.1))
    cx = s / 2
    left = []
    for u in np.linspace(0, 1, 12):  # concave flanks widening to the foot
        half = neck / 2 + (foot / 2 - neck / 2) * u**2
        left.append((cx - half, top + (s - top) * u))
    right = [(2 * cx - x, y) for x, y in reversed(left)]
    cv2.fillPoly(canvas, [_i(np.array(left + right), ox, oy)], 255, cv2.LINE_AA, 4)


def _fit(pts: np.ndarray, width: float, height: float) -> np.ndarray:
    pts = pts - pts.min(axis=0)
    return pts * (np.array([width, height]) / pts.max(axis=0))


def _i(pts: np.ndarray, ox: float, oy: float) -> np.ndarray:
    return np.round((np.asarray(pts) + (ox, oy)) * 16).astype(np.int32)


def suit_mask(suit: str, height: int, font: GlyphFont | None = None, rng: np.random.Generator | None = None) -> np.ndarray:
    """A suit symbol from the font when it has one, else drawn from curves."""
    if font is not None and font.suits:
        return font_suit_mask(font, suit, height)
    return suit_shape_mask(suit, height, rng)


# ----- shaded suit symbols --------------------------------------------------------
# Many decks print their suits not as flat ink: a gradient, a lighter centre, a
# dark outline around a tinted inside, a highlight over one half. Drawn here from
# a flat mask, for training only (vision_lab.train).

SHADINGS = ("gradient", "centre", "outline", "two-tone")


def shaded(mask: np.ndarray, rng: np.random.Generator, kind: str | None = None,
           kinds: tuple[str, ...] = SHADINGS, light: tuple[float, float] = (0.3, 0.7)) -> np.ndarray:
    """`mask` (uint8, 255 = ink) with its ink shaded: the print keeps its
    outline, its inside is lighter in one of the ways of `kinds` (or `kind`),
    down to a share of the ink drawn from `light`. The darkest ink stays 255,
    so contrast is the mask's."""
    kind = kind if kind is not None else kinds[int(rng.integers(len(kinds)))]
    a = mask.astype(np.float32) / 255.0
    solid = (mask > 127).astype(np.uint8)
    dist = cv2.distanceTransform(np.pad(solid, 1), cv2.DIST_L2, 5)[1:-1, 1:-1]
    depth = dist / max(float(dist.max()), 1.0)  # 0 at the edge, 1 at the deepest point
    h, w = mask.shape
    lo = float(rng.uniform(*light))
    if kind == "gradient":
        t = rng.uniform(0, 2 * np.pi)
        yy, xx = np.indices((h, w), np.float32)
        u = xx * math.cos(t) + yy * math.sin(t)
        u = (u - u.min()) / max(float(u.max() - u.min()), 1.0)
        f = 1.0 - (1.0 - lo) * u
    elif kind == "centre":
        f = 1.0 - (1.0 - lo) * np.clip(depth, 0, 1) ** rng.uniform(0.5, 1.5)
    else:
        band = rng.uniform(0.04, 0.14) * max(h, w)
        f = np.where(dist < band, 1.0, lo).astype(np.float32)
        if kind == "two-tone":  # a highlight over one side of the inside, the rest darker
            t = rng.uniform(-0.5, 0.5) + (np.pi / 2 if rng.uniform() < 0.7 else 0.0)  # mostly upper/lower
            yy, xx = np.indices((h, w), np.float32)
            side = (xx - w / 2) * math.cos(t) + (yy - h / 2) * math.sin(t) > rng.uniform(-0.15, 0.15) * h
            f = np.where((dist >= band) & side, rng.uniform(max(lo, 0.6), 0.9), f).astype(np.float32)
        f = cv2.GaussianBlur(f, (0, 0), max(0.5, 0.01 * max(h, w)))
    return np.clip(a * f * 255.0, 0, 255).astype(np.uint8)
