"""Synthetic, labelled photographs and dealing videos of playing cards.

Tests and benchmarks of the camera fallback need many pictures whose true card
is known. This module draws card faces (white rounded card, corner indices in
two or four corners, pips, an ace's large pip or a court card's picture box,
red or black), card backs and blank cards, and photographs them: on felt or
table textures with clutter, with perspective, rotation, shadow, uneven light,
glare, blur, noise, partial occlusion and JPEG compression, at phone camera
resolutions. A video mode deals a sequence of cards through a region of
interest, as a camera over the shoe's exit would see them.

Two visual styles: "classic" (fonts the index classifier trained on) and
"held-out" (lettering it never saw, a smaller suit under the rank, closer to
the edge, yellowish card stock), so that accuracy on unseen decks can be
estimated. Everything is drawn from a seeded numpy Generator: the same seed
gives the same pictures.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field

import cv2
import numpy as np

from vision_lab import fonts as F

CARD_W_MM, CARD_H_MM = 63.0, 88.0
PX_PER_MM = 10  # card faces are drawn at 630 x 880 pixels
FACE_W, FACE_H = int(CARD_W_MM * PX_PER_MM), int(CARD_H_MM * PX_PER_MM)

RANKS = F.RANK_TEXT  # "A", "2".."10", "J", "Q", "K"
SUITS = "CDHS"
PHONE_SIZES = ((1280, 960), (960, 1280), (1920, 1080), (1080, 1920), (1600, 1200), (2016, 1512), (1512, 2016))


def card_label(rank_text: str, suit: str) -> str:
    """The project's notation: `TD`, `AS`, `9H`."""
    return ("T" if rank_text == "10" else rank_text) + suit


def split_label(label: str) -> tuple[str, str]:
    rank = label[:-1]
    return ("10" if rank == "T" else rank), label[-1]


def all_labels() -> list[str]:
    return [card_label(r, s) for s in SUITS for r in RANKS]


@dataclass(frozen=True)
class CardStyle:
    """How a deck is printed: lettering and the layout of its corner index."""

    name: str
    fonts: tuple[F.GlyphFont, ...]
    rank_mm: tuple[float, float] = (5.5, 9.5)  # rank height
    width_factor: tuple[float, float] = (0.75, 1.1)  # condensed .. wide lettering
    suit_ratio: tuple[float, float] = (0.6, 0.9)  # suit height / rank height
    gap_ratio: tuple[float, float] = (0.08, 0.3)  # gap between rank and suit / rank height
    margin_mm: tuple[float, float] = (2.5, 5.0)  # from the card's edge to the index
    four_index_p: float = 0.2  # share of decks with an index in all four corners
    paper: tuple[tuple[int, int, int], tuple[int, int, int]] = ((236, 240, 240), (255, 255, 255))  # BGR low/high
    drawn_suits_p: float = 0.5  # suit symbols drawn from curves rather than from the font
    # how far the rows of pips reach towards the top and bottom edges (1: rows at
    # 0.2 and 0.8 of the height; some decks print them near the edges, at 1.35)
    pip_reach: tuple[float, float] = (1.0, 1.0)
    # the corner index: "stacked" (a rank over its suit), "rank-alone" (a large
    # rank and no suit), "split" (the rank in one corner, the suit alone in the
    # other corner of the same end, on the rank's line)
    index_layout: str = "stacked"
    # the middle of the card: "pips" (rows of pips, an ace's one pip, a court
    # card's framed picture) or "bleed": print running off the card's edges,
    # where on a dark table the card's outline is lost (with a stacked index,
    # the pips and a dark band along the lower edge and up one side; otherwise
    # one large suit symbol cut by the edges; court cards a dark picture
    # filling the lower edge)
    centre: str = "pips"
    tags: tuple[str, ...] = field(default_factory=tuple)


def classic_style() -> CardStyle:
    """OpenCV's sans font and DejaVu (fonts-dejavu-core): the same pictures on
    every machine that has DejaVu, whatever other fonts are installed."""
    return CardStyle("classic", tuple(F.training_fonts(("dejavu",))))


def held_out_style() -> CardStyle:
    """Lettering the classifier never trained on, a smaller suit under the rank,
    indices closer to the edge, yellowish stock."""
    return CardStyle(
        "held-out",
        tuple(F.held_out_fonts()),
        rank_mm=(5.5, 8.5),
        suit_ratio=(0.45, 0.62),
        gap_ratio=(0.1, 0.25),
        margin_mm=(2.0, 3.5),
        four_index_p=0.3,
        paper=((190, 225, 235), (215, 240, 250)),
        drawn_suits_p=1.0,
    )


STYLES = {"classic": classic_style, "held-out": held_out_style}


# ----- drawing a card face -------------------------------------------------------


def _ink(rng: np.random.Generator, red: bool) -> np.ndarray:
    if red:
        return np.array([rng.uniform(20, 70), rng.uniform(15, 50), rng.uniform(150, 215)])
    g = rng.uniform(10, 55)
    return np.array([g + rng.uniform(0, 12), g, g])


def _paint(face: np.ndarray, mask: np.ndarray, x: int, y: int, colour: np.ndarray) -> None:
    """Blend `colour` into `face` through `mask` (0..255) placed at x, y (clipped)."""
    h, w = mask.shape
    x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + w, face.shape[1]), min(y + h, face.shape[0])
    if x1 <= x0 or y1 <= y0:
        return
    a = (mask[y0 - y : y1 - y, x0 - x : x1 - x].astype(np.float32) / 255.0)[..., None]
    region = face[y0:y1, x0:x1].astype(np.float32)
    face[y0:y1, x0:x1] = (region * (1 - a) + colour * a).astype(np.uint8)


def _rounded_mask(w: int, h: int, radius: int) -> np.ndarray:
    m = np.zeros((h, w), np.uint8)
    cv2.rectangle(m, (radius, 0), (w - 1 - radius, h - 1), 255, -1)
    cv2.rectangle(m, (0, radius), (w - 1, h - 1 - radius), 255, -1)
    for cx, cy in ((radius, radius), (w - 1 - radius, radius), (radius, h - 1 - radius), (w - 1 - radius, h - 1 - radius)):
        cv2.circle(m, (cx, cy), radius, 255, -1, cv2.LINE_AA)
    return m


@dataclass
class Face:
    """A drawn card face: BGR image, alpha (rounded corners), and where its indices are."""

    image: np.ndarray
    alpha: np.ndarray
    label: str | None
    font: str = ""
    index_boxes: list[tuple[int, int, int, int]] = field(default_factory=list)  # x0, y0, x1, y1 in face pixels


PIP_LAYOUT = {
    2: [(0.5, 0.2), (0.5, 0.8)],
    3: [(0.5, 0.2), (0.5, 0.5), (0.5, 0.8)],
    4: [(0.3, 0.2), (0.7, 0.2), (0.3, 0.8), (0.7, 0.8)],
    5: [(0.3, 0.2), (0.7, 0.2), (0.5, 0.5), (0.3, 0.8), (0.7, 0.8)],
    6: [(0.3, 0.2), (0.7, 0.2), (0.3, 0.5), (0.7, 0.5), (0.3, 0.8), (0.7, 0.8)],
    7: [(0.3, 0.2), (0.7, 0.2), (0.5, 0.35), (0.3, 0.5), (0.7, 0.5), (0.3, 0.8), (0.7, 0.8)],
    8: [(0.3, 0.2), (0.7, 0.2), (0.5, 0.35), (0.3, 0.5), (0.7, 0.5), (0.5, 0.65), (0.3, 0.8), (0.7, 0.8)],
    9: [(0.3, 0.2), (0.7, 0.2), (0.3, 0.4), (0.7, 0.4), (0.5, 0.5), (0.3, 0.6), (0.7, 0.6), (0.3, 0.8), (0.7, 0.8)],
    10: [(0.3, 0.2), (0.7, 0.2), (0.5, 0.3), (0.3, 0.4), (0.7, 0.4), (0.3, 0.6), (0.7, 0.6), (0.5, 0.7),
         (0.3, 0.8), (0.7, 0.8)],
}


def draw_face(label: str, rng: np.random.Generator, style: CardStyle | None = None) -> Face:
    """Draw the face of the card `label` (e.g. "TD") at 630 x 880 pixels."""
    style = style or classic_style()
    rank_text, suit = split_label(label)
    red = suit in "HD"
    paper_lo, paper_hi = (np.array(c, float) for c in style.paper)
    paper = paper_lo + (paper_hi - paper_lo) * rng.uniform(0, 1)
    face = np.empty((FACE_H, FACE_W, 3), np.uint8)
    face[:] = paper
    alpha = _rounded_mask(FACE_W, FACE_H, int(rng.uniform(2.8, 3.8) * PX_PER_MM))
    ink = _ink(rng, red)
    font = style.fonts[rng.integers(len(style.fonts))]
    drawn_suits = (not font.suits) or rng.uniform() < style.drawn_suits_p
    suit_seed = int(rng.integers(1 << 31))  # one suit shape for the whole card

    def suit_of(height: int) -> np.ndarray:
        if drawn_suits:
            return F.suit_shape_mask(suit, height, np.random.default_rng(suit_seed))
        return F.suit_mask(suit, height, font)

    # Corner indices: top-left, then the same turned half a turn at bottom-right.
    rank_h = int(rng.uniform(*style.rank_mm) * PX_PER_MM)
    rank = F.rank_mask(font, rank_text, rank_h)
    wf = rng.uniform(*style.width_factor)
    rank = cv2.resize(rank, (max(2, int(rank.shape[1] * wf)), rank.shape[0]), interpolation=cv2.INTER_AREA)
    symbol = suit_of(max(8, int(rank_h * rng.uniform(*style.suit_ratio))))
    gap = int(rank_h * rng.uniform(*style.gap_ratio))
    column = max(rank.shape[1], symbol.shape[1])
    margin = rng.uniform(*style.margin_mm) * PX_PER_MM
    mx, my = int(margin * rng.uniform(0.8, 1.1)), int(margin * rng.uniform(0.9, 1.3))
    if style.index_layout == "stacked":
        index_h = rank.shape[0] + gap + symbol.shape[0]
        block = np.zeros((index_h, column), np.uint8)
        rx = (column - rank.shape[1]) // 2
        block[: rank.shape[0], rx : rx + rank.shape[1]] = rank
        sx = (column - symbol.shape[1]) // 2
        block[rank.shape[0] + gap :, sx : sx + symbol.shape[1]] = symbol
    elif style.index_layout in ("rank-alone", "split"):
        block, index_h, column = rank, rank.shape[0], rank.shape[1]
    else:
        raise ValueError(f"unknown index layout {style.index_layout!r}")
    # Centre: pips, an ace's large pip, or a court card's picture box.
    rank_no = RANKS.index(rank_text) + 1
    if style.centre == "bleed" and (style.index_layout != "stacked" or rank_no > 10):
        _draw_bleed(face, rng, suit_of, ink, rank_no, top=my + index_h + int(3 * PX_PER_MM))
    elif 2 <= rank_no <= 10:
        pip_h = int(FACE_H * rng.uniform(0.085, 0.115))
        pip = suit_of(pip_h)
        spread = rng.uniform(0.9, 1.1)
        # printed decks keep the pips clear of the index column
        clear = mx + column + 1.5 * PX_PER_MM + pip.shape[1] / 2
        spread = min(spread, (0.5 * FACE_W - clear) / (0.2 * FACE_W))
        reach = rng.uniform(*style.pip_reach) if style.pip_reach[0] != style.pip_reach[1] else style.pip_reach[0]
        for fx, fy in PIP_LAYOUT[rank_no]:
            fx = 0.5 + (fx - 0.5) * spread
            fy = 0.5 + (fy - 0.5) * reach
            m = pip if fy <= 0.5 else pip[::-1, ::-1]
            _paint(face, m, int(fx * FACE_W - m.shape[1] / 2), int(fy * FACE_H - m.shape[0] / 2), ink)
    elif rank_no == 1:
        pip = suit_of(int(FACE_H * rng.uniform(0.16, 0.34)))
        _paint(face, pip, (FACE_W - pip.shape[1]) // 2, (FACE_H - pip.shape[0]) // 2, ink)
    else:
        _draw_court(face, rng, suit_of, ink, left=mx + column + int(1.5 * PX_PER_MM))
    if style.centre == "bleed" and style.index_layout == "stacked" and rank_no <= 10:
        _draw_band(face, rng, ink, top=my + index_h + int(3 * PX_PER_MM))

    four = rng.uniform() < style.four_index_p
    boxes = []
    for turned in (False, True):
        work = face[::-1, ::-1] if turned else face
        places = [mx, FACE_W - mx - column] if four else [mx]
        if style.index_layout == "split":  # the suit alone in the other corner, centred on the rank's line
            sy = my + (rank.shape[0] - symbol.shape[0]) // 2
            sx = FACE_W - mx - symbol.shape[1]
            _paint(work, symbol, sx, sy, ink)
            boxes.append(_turn_box((sx, sy, sx + symbol.shape[1], sy + symbol.shape[0]), turned))
            places = [mx]
        for x in places:
            _paint(work, block, x, my, ink)
            boxes.append(_turn_box((x, my, x + column, my + index_h), turned))
    face = np.ascontiguousarray(face)
    return Face(face, alpha, label, font.label, boxes)


def _draw_bleed(face: np.ndarray, rng: np.random.Generator, suit_of, ink, rank_no: int, top: int) -> None:
    """Print that runs off the card's edges, below `top` (clear of the index):
    a number card's or an ace's one large suit symbol, cut by two or three
    edges; a court card's picture whose dark lower part (a robe, a shield)
    fills the card's lower edge from side to side."""
    if rank_no <= 10:
        big = suit_of(FACE_W)
        wide = FACE_W * rng.uniform(1.1, 1.45) / big.shape[1]  # wider than the card
        big = cv2.resize(big, (int(big.shape[1] * wide), int(big.shape[0] * wide)), interpolation=cv2.INTER_LINEAR)
        x = int(FACE_W * rng.uniform(0.4, 0.6) - big.shape[1] / 2)
        y = max(top + int(5 * PX_PER_MM), int(FACE_H * 0.28), int(FACE_H * rng.uniform(0.55, 0.75) - big.shape[0] / 2))
        _paint(face, big, x, y, ink)
        return
    colours = [(40, 190, 230), (150, 180, 230), (60, 130, 60), (160, 80, 30)]
    cx, cy = int(FACE_W * rng.uniform(0.4, 0.6)), int(max(top + 60, FACE_H * rng.uniform(0.3, 0.4)))
    cv2.circle(face, (cx, cy), int(FACE_W * rng.uniform(0.14, 0.2)), colours[rng.integers(len(colours))], -1,
               cv2.LINE_AA)
    mask = np.zeros(face.shape[:2], np.uint8)
    robe_top = int(FACE_H * rng.uniform(0.5, 0.62))
    cv2.ellipse(mask, (cx, FACE_H + int(FACE_H * 0.2)), (int(FACE_W * rng.uniform(0.7, 0.9)),
                int(FACE_H * 0.2) + FACE_H - robe_top), 0, 180, 360, 255, -1, cv2.LINE_AA)
    _paint(face, mask, 0, 0, ink)
    pip = suit_of(int(FACE_H * 0.08))
    _paint(face, pip, cx - pip.shape[1] // 2, robe_top + int(FACE_H * 0.12), np.array([235.0, 235.0, 235.0]))


def _draw_band(face: np.ndarray, rng: np.random.Generator, ink, top: int) -> None:
    """A dark band of print along the card's lower edge and up one long side
    (below `top`, clear of the index and the pips), running off the edges."""
    mask = np.zeros(face.shape[:2], np.uint8)
    band = int(FACE_H * rng.uniform(0.06, 0.1))
    xs = np.linspace(0, FACE_W, 9)
    ys = FACE_H - band + rng.uniform(-0.3, 0.3, len(xs)) * band  # a wavy upper edge
    pts = np.vstack([np.stack([xs, ys], 1), [[FACE_W, FACE_H], [0, FACE_H]]]).astype(np.int32)
    cv2.fillPoly(mask, [pts], 255, cv2.LINE_AA)
    strip = int(FACE_W * rng.uniform(0.05, 0.08))
    x = 0 if rng.uniform() < 0.5 else FACE_W - strip
    cv2.rectangle(mask, (x, max(top, int(FACE_H * rng.uniform(0.3, 0.45)))), (x + strip, FACE_H), 255, -1)
    _paint(face, mask, 0, 0, ink)


def _turn_box(box: tuple[int, int, int, int], turned: bool) -> tuple[int, int, int, int]:
    """A box on the face, or the box it is on the face turned half a turn."""
    if not turned:
        return box
    return (FACE_W - box[2], FACE_H - box[3], FACE_W - box[0], FACE_H - box[1])


def _draw_court(face: np.ndarray, rng: np.random.Generator, suit_of, ink, left: int) -> None:
    """A court card's framed picture: coloured shapes, the same turned half a turn,
    in a frame starting right of the index (`left`)."""
    x0, y0 = max(left, int(FACE_W * rng.uniform(0.17, 0.21))), int(FACE_H * rng.uniform(0.11, 0.14))
    x1 = FACE_W - x0
    half = np.zeros((FACE_H // 2 - y0, x1 - x0, 3), np.uint8)
    half[:] = face[y0, x0]
    palette = [(40, 50, 190), (160, 80, 30), (40, 190, 230), (30, 30, 30), (150, 180, 230), (60, 130, 60)]
    for _ in range(int(rng.integers(10, 22))):
        colour = palette[rng.integers(len(palette))]
        kind = rng.integers(3)
        hh, ww = half.shape[:2]
        if kind == 0:
            pts = np.stack([rng.uniform(0, ww, 5), rng.uniform(0, hh, 5)], 1).astype(np.int32)
            cv2.fillPoly(half, [pts], colour, cv2.LINE_AA)
        elif kind == 1:
            c = (int(rng.uniform(0, ww)), int(rng.uniform(0, hh)))
            cv2.ellipse(half, c, (int(rng.uniform(10, ww / 4)), int(rng.uniform(10, hh / 4))), rng.uniform(0, 180),
                        0, 360, colour, -1, cv2.LINE_AA)
        else:
            p = [(int(rng.uniform(0, ww)), int(rng.uniform(0, hh))) for _ in range(2)]
            cv2.line(half, p[0], p[1], colour, int(rng.integers(2, 9)), cv2.LINE_AA)
    picture = np.vstack([half, half[::-1, ::-1]])
    face[y0 : y0 + picture.shape[0], x0:x1] = picture
    cv2.rectangle(face, (x0, y0), (x1, y0 + picture.shape[0]), tuple(int(c) for c in ink), 3, cv2.LINE_AA)
    pip = suit_of(int(FACE_H * 0.06))
    _paint(face, pip, x0 + 8, y0 + 8, ink)
    _paint(face, pip[::-1, ::-1], x1 - 8 - pip.shape[1], y0 + picture.shape[0] - 8 - pip.shape[0], ink)


def draw_back(rng: np.random.Generator) -> Face:
    """A card back: white border, a lattice in red or blue."""
    face = np.full((FACE_H, FACE_W, 3), 245, np.uint8)
    colour = (40, 40, 180) if rng.uniform() < 0.5 else (150, 70, 30)
    b = int(rng.uniform(3, 5) * PX_PER_MM)
    inner = face[b : FACE_H - b, b : FACE_W - b]
    inner[:] = colour
    step = int(rng.uniform(18, 40))
    light = tuple(min(255, c + 90) for c in colour)
    for k in range(-FACE_H, FACE_W + FACE_H, step):
        cv2.line(inner, (k, 0), (k + FACE_H, FACE_H), light, 3, cv2.LINE_AA)
        cv2.line(inner, (k, 0), (k - FACE_H, FACE_H), light, 3, cv2.LINE_AA)
    cv2.ellipse(inner, (inner.shape[1] // 2, inner.shape[0] // 2), (inner.shape[1] // 4, inner.shape[0] // 6), 0, 0,
                360, (245, 245, 245), 4, cv2.LINE_AA)
    return Face(face, _rounded_mask(FACE_W, FACE_H, 33), None, "back")


def draw_blank(rng: np.random.Generator) -> Face:
    face = np.full((FACE_H, FACE_W, 3), int(rng.uniform(235, 255)), np.uint8)
    return Face(face, _rounded_mask(FACE_W, FACE_H, 33), None, "blank")


# ----- photographing it -------------------------------------------------------------


def _gauss(shape: tuple, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Gaussian noise, float32, drawn by OpenCV (much faster than numpy for whole
    pictures) from a seed taken from `rng`, so results stay reproducible."""
    cv2.setRNGSeed(int(rng.integers(1 << 31)))
    out = np.empty(shape, np.float32)
    cv2.randn(out, 0.0, float(sigma))
    return out


def _smooth_noise(h: int, w: int, rng: np.random.Generator, cells: int) -> np.ndarray:
    small = rng.uniform(-1, 1, (max(2, cells * h // max(h, w)), max(2, cells * w // max(h, w)))).astype(np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def draw_background(w: int, h: int, rng: np.random.Generator, clutter: int | None = None,
                    dark: bool = False) -> np.ndarray:
    """A table: felt (mostly green) or wood or cloth, with clutter lying on it;
    `dark`: a dark cloth (near black, charcoal, navy, bottle green), as dark as
    a card's black print."""
    if dark:
        kinds = [((30, 30, 30), 0.4), ((45, 25, 20), 0.2), ((25, 40, 20), 0.2), ((20, 22, 40), 0.2)]
    else:
        kinds = [((40, 100, 20), 0.5), ((90, 60, 20), 0.1), ((30, 60, 110), 0.1), ((60, 60, 60), 0.1),
                 ((25, 25, 110), 0.1), ((150, 175, 195), 0.06), ((185, 185, 180), 0.04)]
        # BGR: felt, blue, wood, grey, red; light wood, pale cloth
    base = np.array(kinds[rng.choice(len(kinds), p=[k[1] for k in kinds])][0], np.float32)
    base = np.clip(base * rng.uniform(0.7, 1.3), 0, 255)
    texture = _smooth_noise(h, w, rng, 8) * rng.uniform(5, 25)
    texture += _gauss((h, w), rng.uniform(3, 10), rng)  # felt grain
    if rng.uniform() < 0.25:  # wood grain stripes
        texture += np.sin(np.arange(w, dtype=np.float32) / rng.uniform(6, 20) + _smooth_noise(h, w, rng, 4) * 4) * 12
    plain = np.empty((h, w, 3), np.uint8)
    plain[:] = base.astype(np.uint8)
    t16 = np.round(texture).astype(np.int16)
    img = cv2.add(plain, cv2.merge([t16, t16, t16]), dtype=cv2.CV_8U)
    n = int(rng.integers(2, 7)) if clutter is None else clutter
    scale = min(w, h)
    for _ in range(n):
        kind = rng.integers(5)
        colour = tuple(int(c) for c in rng.uniform(0, 255, 3))
        c = (int(rng.uniform(0, w)), int(rng.uniform(0, h)))
        if kind == 0:  # a chip: a disc with stripes on its rim
            r = int(scale * rng.uniform(0.04, 0.09))
            cv2.circle(img, c, r, colour, -1, cv2.LINE_AA)
            cv2.circle(img, c, int(r * 0.7), (230, 230, 230), max(2, r // 8), cv2.LINE_AA)
        elif kind == 1:  # a pen or a stick
            a = rng.uniform(0, np.pi)
            length = scale * rng.uniform(0.2, 0.5)
            d = (int(np.cos(a) * length / 2), int(np.sin(a) * length / 2))
            cv2.line(img, (c[0] - d[0], c[1] - d[1]), (c[0] + d[0], c[1] + d[1]), colour, int(scale * 0.015), cv2.LINE_AA)
        elif kind == 2:  # printed text
            cv2.putText(img, "".join(chr(rng.integers(65, 91)) for _ in range(6)), c, cv2.FONT_HERSHEY_SIMPLEX,
                        scale / 600, colour, max(1, scale // 300), cv2.LINE_AA)
        elif kind == 3:  # a square-ish coloured object
            s = scale * rng.uniform(0.05, 0.15)
            box = cv2.boxPoints((c, (s, s * rng.uniform(0.3, 1.0)), rng.uniform(0, 180))).astype(np.int32)
            cv2.fillPoly(img, [box], colour, cv2.LINE_AA)
        else:  # a coin
            r = int(scale * rng.uniform(0.02, 0.04))
            cv2.circle(img, c, r, (60, 150, 190), -1, cv2.LINE_AA)
    return img


@dataclass
class Shot:
    """A generated photograph and what it shows."""

    image: np.ndarray
    card: str | None  # the true card, or None for a picture with no readable card
    kind: str  # "card", "back", "blank", "empty", "hidden" (both indices covered)
    corners: list[list[float]] | None  # the card's corners in the image: TL, TR, BR, BL of the face
    font: str = ""
    style: str = ""

    def manifest(self, file: str) -> dict:
        return {"file": file, "card": self.card, "kind": self.kind, "corners": self.corners, "font": self.font,
                "style": self.style}


def _rotation(a: float) -> np.ndarray:
    """The 2 x 2 matrix turning points (as rows, `points @ _rotation(a).T`) by `a` radians."""
    return np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])


def _place(w: int, h: int, rng: np.random.Generator, size_frac: tuple[float, float], tilt: float) -> np.ndarray:
    """Corners (TL, TR, BR, BL of the face) of a card placed in a w x h picture."""
    card_h = min(w, h) * rng.uniform(*size_frac)
    card_w = card_h * CARD_W_MM / CARD_H_MM
    rect = np.array([[-card_w / 2, -card_h / 2], [card_w / 2, -card_h / 2], [card_w / 2, card_h / 2],
                     [-card_w / 2, card_h / 2]])
    a = rng.uniform(0, 2 * np.pi)
    pts = rect @ _rotation(a).T
    # Perspective: bring one side nearer the camera, then jitter every corner.
    side = rng.integers(4)
    k = rng.uniform(0, tilt)
    pts[side] *= 1 + k
    pts[(side + 1) % 4] *= 1 + k
    pts += rng.normal(0, tilt * card_h * 0.12, pts.shape)
    margin = 0.02 * min(w, h)
    span = pts.max(axis=0) - pts.min(axis=0)
    fit = min(1.0, (w - 2 * margin) / span[0], (h - 2 * margin) / span[1])
    pts = pts * fit * 0.999  # shrink a card that would not fit in the picture whole
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    cx = rng.uniform(margin - lo[0], w - margin - hi[0])
    cy = rng.uniform(margin - lo[1], h - margin - hi[1])
    return pts + (cx, cy)


def _warp_face(face: Face, corners: np.ndarray, w: int, h: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The face and its alpha warped into a w x h picture; also the homography."""
    img, alpha = face.image, face.alpha
    span = max(np.linalg.norm(corners[0] - corners[3]), np.linalg.norm(corners[1] - corners[2]))
    scale = 1.0
    if span < FACE_H * 0.7:  # shrink first so the warp does not alias
        scale = max(span / FACE_H * 1.3, 0.05)
        img = cv2.resize(img, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        alpha = cv2.resize(alpha, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    src = (np.array([[0, 0], [FACE_W, 0], [FACE_W, FACE_H], [0, FACE_H]]) * scale).astype(np.float32)
    m = cv2.getPerspectiveTransform(src, corners.astype(np.float32))
    hom = m @ np.diag([scale, scale, 1.0])  # face pixels -> picture pixels
    warped = np.zeros((h, w, 3), np.uint8)
    a = np.zeros((h, w), np.uint8)
    # warp only the card's bounding box: much cheaper than the whole picture
    x0, y0 = np.floor(corners.min(axis=0)).astype(int) - 2
    x1, y1 = np.ceil(corners.max(axis=0)).astype(int) + 2
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 <= x0 or y1 <= y0:
        return warped, a, hom
    shift = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], np.float64)
    box = (x1 - x0, y1 - y0)
    warped[y0:y1, x0:x1] = cv2.warpPerspective(img, shift @ m, box, flags=cv2.INTER_LINEAR,
                                               borderMode=cv2.BORDER_REPLICATE)
    a[y0:y1, x0:x1] = cv2.warpPerspective(alpha, shift @ m, box, flags=cv2.INTER_LINEAR, borderValue=0)
    return warped, a, hom


def _composite(bg: np.ndarray, fg: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    out = bg.copy()
    x, y, w, h = cv2.boundingRect(alpha)
    if w == 0 or h == 0:
        return out
    a = alpha[y : y + h, x : x + w].astype(np.float32)[..., None] / 255.0
    region = bg[y : y + h, x : x + w].astype(np.float32) * (1 - a) + fg[y : y + h, x : x + w].astype(np.float32) * a
    out[y : y + h, x : x + w] = region.astype(np.uint8)
    return out


def filling(image: np.ndarray, corners, box: tuple[float, float, float, float], height: int,
            square: bool = False, turns: int = 0) -> np.ndarray:
    """The part `box` (x0, y0, x1, y1 in the card's own units: 0 to 1 across and down its face; below 0
    or above 1 takes in the table beyond it) of the card whose face lies at `corners` (TL, TR, BR, BL)
    in `image`, flattened to fill a picture `height` pixels tall: a still cut to the card, a camera
    framing it tightly. As wide as the part's proportions make it, or `square`; turned `turns`
    quarters."""
    x0, y0, x1, y1 = box
    face = cv2.getPerspectiveTransform(np.float32([[0, 0], [1, 0], [1, 1], [0, 1]]), np.float32(corners))
    part = cv2.perspectiveTransform(np.float32([[[x0, y0], [x1, y0], [x1, y1], [x0, y1]]]), face)[0]
    w = height if square else max(8, round(height * (x1 - x0) * CARD_W_MM / ((y1 - y0) * CARD_H_MM)))
    to = cv2.getPerspectiveTransform(part, np.float32([[0, 0], [w, 0], [w, height], [0, height]]))
    out = cv2.warpPerspective(image, to, (w, height), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)
    return np.ascontiguousarray(np.rot90(out, turns)) if turns % 4 else out


def _project(hom: np.ndarray, pts) -> np.ndarray:
    p = np.asarray(pts, np.float64).reshape(-1, 1, 2)
    return cv2.perspectiveTransform(p, hom).reshape(-1, 2)


def _occlude(img: np.ndarray, hom: np.ndarray, face: Face, rng: np.random.Generator, keep: int | None) -> None:
    """Cover part of the card with a finger or a chip. `keep` is the index box that
    must stay visible (None: cover every index box)."""
    boxes = face.index_boxes
    if keep is None:
        targets = list(range(len(boxes)))
    else:  # a finger over one other index, the rest of the card in view
        others = [i for i in range(len(boxes)) if i != keep]
        targets = [others[rng.integers(len(others))]]
    skin = tuple(int(c) for c in (rng.uniform(90, 150), rng.uniform(120, 170), rng.uniform(170, 230)))
    for t in targets:
        x0, y0, x1, y1 = boxes[t]
        pad = 10
        quad = _project(hom, [[x0 - pad, y0 - pad], [x1 + pad, y0 - pad], [x1 + pad, y1 + pad], [x0 - pad, y1 + pad]])
        centre = quad.mean(axis=0)
        radius = np.max(np.linalg.norm(quad - centre, axis=1)) * rng.uniform(1.1, 1.5)
        if rng.uniform() < 0.5:
            cv2.circle(img, tuple(int(v) for v in centre), int(radius), skin, -1, cv2.LINE_AA)
        else:  # a finger reaching in: a long rounded blob
            a = rng.uniform(0, 2 * np.pi)
            end = centre + np.array([np.cos(a), np.sin(a)]) * radius * 3
            cv2.line(img, tuple(int(v) for v in centre), tuple(int(v) for v in end), skin, int(radius * 1.3), cv2.LINE_AA)
    if keep is not None and rng.uniform() < 0.7:
        # and something over the middle of the card, away from the kept index
        mid = _project(hom, [[FACE_W * rng.uniform(0.35, 0.65), FACE_H * rng.uniform(0.35, 0.65)]])[0]
        r = np.linalg.norm(_project(hom, [[0, 0]])[0] - _project(hom, [[FACE_W * 0.18, 0]])[0])
        cv2.circle(img, tuple(int(v) for v in mid), int(r), skin, -1, cv2.LINE_AA)


def _light(img: np.ndarray, rng: np.random.Generator, hom: np.ndarray | None, glare_keep: tuple | None) -> np.ndarray:
    h, w = img.shape[:2]
    gain = 0.85 + 0.3 * _smooth_noise(h, w, rng, 3) * rng.uniform(0.3, 1.0)
    ramp = np.linspace(rng.uniform(0.6, 1.0), rng.uniform(0.9, 1.15), w if rng.uniform() < 0.5 else h, dtype=np.float32)
    gain = gain * (ramp[None, :] if len(ramp) == w else ramp[:, None])
    cast = (rng.uniform(0.85, 1.05), rng.uniform(0.94, 1.04), rng.uniform(0.96, 1.12))
    out = cv2.multiply(img.astype(np.float32), cv2.merge([gain * np.float32(c) for c in cast]))
    if hom is not None and rng.uniform() < 0.4:  # a soft glare spot on the card, off the kept index
        for _ in range(10):
            p = _project(hom, [[FACE_W * rng.uniform(0.2, 0.8), FACE_H * rng.uniform(0.2, 0.8)]])[0]
            if glare_keep is None or np.linalg.norm(p - glare_keep[0]) > glare_keep[1]:
                break
        k = 8  # drawn small and enlarged: it is smooth anyway
        spot = np.zeros((h // k + 1, w // k + 1), np.float32)
        r = min(w, h) * rng.uniform(0.04, 0.12) / k
        cv2.ellipse(spot, (int(p[0] / k), int(p[1] / k)), (int(r * rng.uniform(1, 2)), int(r)), rng.uniform(0, 180),
                    0, 360, 1.0, -1)
        spot = cv2.resize(cv2.GaussianBlur(spot, (0, 0), r / 2), (w, h), interpolation=cv2.INTER_LINEAR)
        spot *= np.float32(rng.uniform(60, 140))
        out = cv2.add(out, cv2.merge([spot, spot, spot]))
    return cv2.convertScaleAbs(out)


def _camera(img: np.ndarray, rng: np.random.Generator, blur: float) -> np.ndarray:
    res = min(img.shape[:2]) / 1000.0
    sigma = rng.uniform(0, blur) * res
    if sigma > 0.3:
        img = cv2.GaussianBlur(img, (0, 0), sigma)
    if rng.uniform() < 0.15:  # a little motion blur
        k = max(3, int(res * rng.uniform(3, 7)))
        kernel = np.zeros((k, k), np.float32)
        kernel[k // 2, :] = 1.0 / k
        rot = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), rng.uniform(0, 180), 1.0)
        kernel = cv2.warpAffine(kernel, rot, (k, k))
        img = cv2.filter2D(img, -1, kernel / max(kernel.sum(), 1e-6))
    grain = _gauss(img.shape[:2], rng.uniform(1.5, 6), rng)  # luminance noise: one field for all channels
    img = cv2.add(img.astype(np.float32), cv2.merge([grain, grain, grain]), dtype=cv2.CV_8U)
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(rng.uniform(60, 95))])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


def photograph(
    label: str | None,
    rng: np.random.Generator,
    style: CardStyle | None = None,
    kind: str = "card",
    size: tuple[int, int] | None = None,
    occlusion_p: float = 0.15,
    tilt: float = 0.25,
    blur: float = 1.5,
    size_frac: tuple[float, float] = (0.35, 0.85),
    face: Face | None = None,
    dark_table: bool = False,
) -> Shot:
    """One photograph. `kind`: "card" (the face of `label`), "back", "blank",
    "empty" (the table alone) or "hidden" (the face of `label` with both index
    corners covered); `dark_table`: on dark cloth (draw_background)."""
    style = style or classic_style()
    w, h = size or PHONE_SIZES[rng.integers(len(PHONE_SIZES))]
    bg = draw_background(w, h, rng, dark=dark_table)
    if kind == "empty":
        return Shot(_camera(_light(bg, rng, None, None), rng, blur), None, kind, None, style=style.name)
    if face is not None:
        pass  # a face drawn elsewhere (vision_lab.decks: a deck's own artwork)
    elif kind in ("card", "hidden"):
        face = draw_face(label, rng, style)
    elif kind == "back":
        face = draw_back(rng)
    elif kind == "blank":
        face = draw_blank(rng)
    else:
        raise ValueError(f"unknown kind {kind!r}")
    corners = _place(w, h, rng, size_frac, tilt)
    fg, alpha, hom = _warp_face(face, corners, w, h)
    # a soft shadow under the card
    k = 4  # blurred small and enlarged
    shadow = cv2.resize(alpha, (w // k, h // k), interpolation=cv2.INTER_AREA)
    shadow = cv2.GaussianBlur(shadow, (0, 0), max(1.0, min(w, h) / 150 / k))
    off = np.float32([[1, 0, rng.uniform(-1, 1) * min(w, h) / 80 / k], [0, 1, rng.uniform(0, 1) * min(w, h) / 80 / k]])
    shadow = cv2.warpAffine(shadow, off, (w // k, h // k))
    shadow = cv2.resize(shadow, (w, h), interpolation=cv2.INTER_LINEAR).astype(np.float32) / 255.0
    bg = (bg.astype(np.float32) * (1 - 0.45 * shadow[..., None])).astype(np.uint8)
    img = _composite(bg, fg, alpha)
    keep = None
    glare_keep = None
    if face.index_boxes:
        keep = int(rng.integers(len(face.index_boxes)))
        x0, y0, x1, y1 = face.index_boxes[keep]
        c = _project(hom, [[(x0 + x1) / 2, (y0 + y1) / 2]])[0]
        glare_keep = (c, np.linalg.norm(_project(hom, [[x0, y0]])[0] - _project(hom, [[x1, y1]])[0]) * 1.5)
    if kind == "hidden":
        _occlude(img, hom, face, rng, None)
    elif kind == "card" and rng.uniform() < occlusion_p:
        _occlude(img, hom, face, rng, keep)
    img = _light(img, rng, hom, glare_keep)
    img = _camera(img, rng, blur)
    truth = label if kind == "card" else None
    return Shot(img, truth, kind, corners.round(1).tolist(), face.font, style.name)


def overlapping(labels: tuple[str, str], rng: np.random.Generator, style: CardStyle | None = None,
                size: tuple[int, int] = (1280, 960)) -> np.ndarray:
    """A photograph of two cards, the second lying partly over the first as cards dealt in a row
    or a column do: moved along the first card's width by 25-80% of it (or down its length by
    25-70%), across by up to a quarter, turned by up to 14 degrees; both wholly in the picture."""
    style = style or classic_style()
    w, h = size
    while True:
        under = _place(w, h, rng, (0.3, 0.45), 0.2)
        along, across = rng.uniform(0.25, 0.8), rng.uniform(-0.25, 0.25)
        if rng.integers(2):
            along, across = across, rng.uniform(0.25, 0.7)  # down the first card's length
        shift = along * (under[1] - under[0]) + across * (under[3] - under[0])
        turn = rng.uniform(-0.25, 0.25)
        middle = under.mean(axis=0)
        over = ((under - middle) @ _rotation(turn).T + middle + shift).astype(np.float32)
        if over.min() >= 0 and over[:, 0].max() < w and over[:, 1].max() < h:
            break
    img = draw_background(w, h, rng)
    for label, corners in zip(labels, (under, over)):
        fg, alpha, _ = _warp_face(draw_face(label, rng, style), corners, w, h)
        img = _composite(img, fg, alpha)
    return _camera(_light(img, rng, None, None), rng, 1.5)


def shots(count: int, seed: int, style: str = "classic", kinds: tuple[str, ...] = ("card",),
          sizes: tuple[tuple[int, int], ...] | None = None, index_layout: str | None = None,
          **options) -> Iterator[Shot]:
    """`count` photographs, the i-th of kind kinds[i % len(kinds)] (and size sizes[i % len(sizes)]
    if given). Cards are dealt from shuffled whole decks (every card of a deck once before any
    repeats), so every card appears about equally. `index_layout`: the style's, unless given
    (CardStyle.index_layout)."""
    rng = np.random.default_rng(seed)
    st = STYLES[style]()
    if index_layout is not None:
        st = dataclasses.replace(st, index_layout=index_layout)
    labels: list[str] = []
    for i in range(count):
        if not labels:
            labels = list(rng.permutation(all_labels()))
        kind = kinds[i % len(kinds)]
        label = labels.pop() if kind in ("card", "hidden") else None
        if sizes is not None:
            options["size"] = sizes[i % len(sizes)]
        yield photograph(label, rng, st, kind=kind, **options)


def write_set(folder: str, count: int, seed: int, style: str = "classic", kinds: tuple[str, ...] = ("card",),
              **options) -> list[dict]:
    """Write `count` photographs (`shots`) as JPEG files plus manifest.json; return the manifest."""
    os.makedirs(folder, exist_ok=True)
    manifest = []
    for i, shot in enumerate(shots(count, seed, style, kinds, **options)):
        name = f"{i:04d}_{shot.card or shot.kind}.jpg"
        cv2.imwrite(os.path.join(folder, name), shot.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
        manifest.append(shot.manifest(name))
    with open(os.path.join(folder, "manifest.json"), "w") as fh:
        json.dump(manifest, fh, indent=1)
    return manifest


# ----- dealing video -------------------------------------------------------------------


@dataclass
class DealPlan:
    """Timing of a dealing video, in frames."""

    empty: int = 8  # frames with the region empty before each card
    slide: int = 7  # frames for the card to slide in (and out)
    rest: int = 14  # frames the card lies still in the region


def deal_frames(labels: list[str], rng: np.random.Generator, size: tuple[int, int] = (1280, 720),
                roi: tuple[int, int, int, int] = (440, 160, 400, 400), plan: DealPlan | None = None,
                style: CardStyle | None = None):
    """Yield (frame, label or None) for a dealing sequence: each card slides into
    the region of interest, rests, and slides out before the next one. The label
    is the card fully at rest in the region, else None."""
    plan = plan or DealPlan()
    style = style or classic_style()
    w, h = size
    bg = draw_background(w, h, rng, clutter=3)
    # the shoe's mouth: a dark block the cards come out of
    cv2.rectangle(bg, (roi[0] + roi[2] + 40, roi[1] - 20), (w, roi[1] + roi[3] + 20), (25, 25, 30), -1)
    bg = _light(bg, rng, None, None)
    x, y, rw, rh = roi
    centre = np.array([x + rw / 2, y + rh / 2])
    card_h = min(rw, rh) * 0.8
    card_w = card_h * CARD_W_MM / CARD_H_MM
    rect = np.array([[-card_w / 2, -card_h / 2], [card_w / 2, -card_h / 2], [card_w / 2, card_h / 2],
                     [-card_w / 2, card_h / 2]])

    # sensor noise: a few fields drawn once and picked at random per frame (cheap),
    # and a slight flicker of the light
    fields = [np.round(_gauss((h, w, 3), 2.0, rng)).astype(np.int16) for _ in range(6)]

    def noisy(img):
        flicker = cv2.convertScaleAbs(img, alpha=rng.uniform(0.985, 1.015))
        return cv2.add(flicker, fields[rng.integers(len(fields))], dtype=cv2.CV_8U)

    for label in labels:
        for _ in range(plan.empty):
            yield noisy(bg), None
        face = draw_face(label, rng, style)
        a = np.deg2rad(rng.choice([0, 90, 180, 270]) + rng.uniform(-8, 8))
        shape = rect @ _rotation(a).T
        rest = centre + rng.uniform(-0.05, 0.05, 2) * (rw, rh)
        start = np.array([x + rw + card_h, rest[1]])  # from the shoe, on the right
        end = np.array([rest[0], y + rh + card_h * 1.2])  # out towards the layout, below
        path = [start + (rest - start) * (i + 1) / plan.slide for i in range(plan.slide)]
        path += [rest] * plan.rest
        path += [rest + (end - rest) * (i + 1) / plan.slide for i in range(plan.slide)]
        for i, pos in enumerate(path):
            corners = shape + pos
            fg, alpha, _ = _warp_face(face, corners, w, h)
            frame = _composite(bg, fg, alpha)
            at_rest = plan.slide <= i < plan.slide + plan.rest
            yield noisy(frame), (label if at_rest else None)
    for _ in range(plan.empty):
        yield noisy(bg), None


def write_deal_video(path: str, labels: list[str], seed: int, fps: float = 30.0, **options) -> dict:
    """Write a dealing video (MJPG in .avi) and `<path>.json` with its labels."""
    rng = np.random.default_rng(seed)
    size = options.get("size", (1280, 720))
    writer = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*"MJPG"), fps, size)
    if not writer.isOpened():
        raise OSError(f"cannot write video {path}")
    frames = 0
    try:
        for frame, _ in deal_frames(labels, rng, **options):
            writer.write(frame)
            frames += 1
    finally:
        writer.release()
    info = {"file": os.path.basename(path), "cards": list(labels), "frames": frames, "fps": fps,
            "roi": list(options.get("roi", (440, 160, 400, 400))), "size": list(size)}
    with open(path + ".json", "w") as fh:
        json.dump(info, fh, indent=1)
    return info


def write_deal_folder(folder: str, labels: list[str], seed: int, **options) -> dict:
    """The dealing sequence as numbered JPEG frames in a folder, plus labels.json."""
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(seed)
    frames = 0
    for frame, _ in deal_frames(labels, rng, **options):
        cv2.imwrite(os.path.join(folder, f"frame_{frames:05d}.jpg"), frame, [cv2.IMWRITE_JPEG_QUALITY, 90])
        frames += 1
    info = {"cards": list(labels), "frames": frames, "roi": list(options.get("roi", (440, 160, 400, 400)))}
    with open(os.path.join(folder, "labels.json"), "w") as fh:
        json.dump(info, fh, indent=1)
    return info
