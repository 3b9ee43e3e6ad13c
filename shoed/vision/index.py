"""Finding the corner index of a flattened card and turning its marks into features.

A card's index is a rank glyph above a suit symbol, near a corner. On the
canonical card (locate.CANON_W x CANON_H, portrait) the upright index is in the
top-left corner; decks that print four indices also have one upright in the
top-right. The bottom corners hold the same, turned half a turn.

Steps, per corner: normalise the paper (divide by a max-filtered background, so
shadows, glare gradients and tinted light cancel), measure "ink" as the darkness
of the darkest colour channel (red and black print alike), binarise, take the
connected marks that lie wholly inside the corner window, and pair every mark
that could be a rank (two marks side by side for "10") with a mark below it
that could be its suit (where blur has run a rank into its suit, the level is
raised until they part: `index_pairings`). Each mark becomes a fixed-length
feature vector (`glyph_vector`) for the classifier; the same function serves
training, so the classifier sees exactly what it will see at run time.

Where no corner holds a rank over a suit, `lone_marks` looks for a rank printed
alone where an index belongs (designs with no suit under the rank), a suit
printed alone beside it in the other corner of the same end, the pips, and the
largest print in the card's middle; the recogniser weighs them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

import cv2
import numpy as np

from shoed.vision.locate import CANON_H, CANON_W

WINDOW_W, WINDOW_H = 0.34, 0.45  # the corner window, as fractions of the card
PIP_EDGE = 0.16  # no pip's centre is nearer the card's side than this (a fraction of its width)
INDEX_ROWS = 0.35  # the corner indices are printed in this much of the card's height at either end
# What lies over a card in colours of its own (cover_print, at half the card's size): paper is where the
# ink map is under COVER_PAPER (a colour the median of at least COVER_SAMPLES pixels); a cover's channels
# spread by COVER_CHROMA of its brightest, red, its green at least COVER_GREEN of it (red ink's is far
# lower), its inside under COVER_INK on the ink map keeping a COVER_OPEN square; its colour, COVER_RIM
# pixels in from its edge, standing off the paper's from COVER_RIM to COVER_RING pixels beyond it, where
# that paper is not clipped (COVER_CLIPPED) in some channels only.
COVER_PAPER, COVER_SAMPLES, COVER_CHROMA, COVER_GREEN, COVER_INK = 0.1, 12, 0.2, 0.45, 0.3
COVER_OPEN, COVER_RING, COVER_RIM, COVER_CLIPPED = 9, 8, 2, 250
PAPER_FLOOR = 12.0  # the paper level is taken as at least this (of 255): dividing by a darker one blows noise up
FRAME_SPAN, FRAME_FILL = 0.6, 0.2  # a line framing the middle: its box this much of the card each way, this little filled
BODY_ROW = 0.25  # a mark's rows this much as wide as its widest are its body (body_height)
MIDDLE_ROW = 0.05  # a pip whose centre is this near the card's middle (a fraction of its height) is on the middle row
SPLIT_LEVELS = (0.12, 0.24)  # ink levels above a window's own, tried in turn where a rank ran into its suit
# ink levels below a window's own, tried in turn where no rank lies over a suit: a thin stroke blurred in a
# small picture fades below the level that large pips beside it set; never below FAINT_FLOOR (paper's grain)
FAINT_LEVELS = (0.1, 0.15, 0.2)
FAINT_FLOOR = 0.18
OFF_RED = 0.25  # red print's blue and green lie apart by up to this share of its redness (off_colour)
OFF_CORE, OFF_CORE_PX = 0.12, 2.5  # a mark's core (off_colour): more than this share of its height within its edges
OFF_CORE_LEAST = 4  # pixels of core, at least, for a mark's colour to be asked
OTHER_PRINT = 0.35  # ink beside a mark from this level on is other print, not the mark's colour spread into paper
SUIT_MAX = 1.35  # an index's suit is at most this many times as tall as its rank
LONE_WINDOW_W = 0.45  # a rank printed alone may be wide and large (a "10" in big lettering): a wider window
PARTNER = {"top-left": "top-right", "top-right": "top-left", "bottom-right": "bottom-left",
           "bottom-left": "bottom-right"}  # the other corner at the same end of the card
EDGE_CLEAR = 4  # a glyph printed alone keeps this many pixels of paper from the card's edges
MIDDLE = (0.12, 0.88, 0.28, 0.9)  # x0, x1, y0, y1 of the card's middle (fractions), off its border and indices
GLYPH_BOX = 40  # glyphs are drawn into a GLYPH_BOX square before features are taken
FEATURES = 20 * 20 + 4 * 4 * 8 + 3


def percentile(values: np.ndarray, q: int) -> float:
    """np.percentile(values, q) of a 1-D array (its default, linear interpolation), to the
    last bit, at a twentieth of its cost: the two order statistics around the point by one
    partition, then numpy's own interpolation (from the upper one where it lies nearer).
    A corner read takes a few dozen percentiles of small arrays, where numpy's general
    machinery costs more than the work."""
    n = values.size
    at = (n - 1) * (q / 100)
    if at >= n - 1:
        return float(values.max())
    lo = math.floor(at)
    part = np.partition(values, (lo, lo + 1))
    a, b = part[lo], part[lo + 1]
    t = at - lo
    diff = b - a
    return float(b - diff * (1 - t)) if t >= 0.5 else float(a + diff * t)


def median(values: np.ndarray) -> float:
    """np.median(values) of a 1-D array, to the last bit (the mean of the middle two taken
    as numpy takes it: in the array's own float type, in float64 for integers)."""
    n = values.size
    k = n // 2
    if n % 2:
        return float(np.partition(values, k)[k])
    part = np.partition(values, (k - 1, k))
    a, b = part[k - 1], part[k]
    return (float(a) + float(b)) / 2 if part.dtype.kind in "iub" else float((a + b) / 2)


@dataclass
class Mark:
    """A connected mark (or two side by side, for "10") in a corner window."""

    x: int
    y: int
    w: int
    h: int
    mask: np.ndarray  # bool, h x w
    labels: tuple[int, ...] = ()

    @property
    def cx(self) -> float:
        return self.x + self.w / 2

    @property
    def bottom(self) -> int:
        return self.y + self.h


@dataclass
class Pairing:
    """One way to read a corner: a rank mark and the suit mark under it."""

    rank: Mark
    suit: Mark
    redness: float  # how red the print is against the card's paper (0 black .. 0.5-0.9 red)
    rank_blur: float = 0.0  # blur of the print against the size of the mark (see blur_ratio)
    suit_blur: float = 0.0
    rank_key: int = -1  # rows into the batch of vectors (set by collect_vectors)
    suit_key: int = -1
    partial: bool = False  # the rank mark has a twin beside it: one glyph of a two-glyph index ("10")
    norm: np.ndarray | None = field(default=None, repr=False)  # its corner's colour against the paper

    @cached_property
    def suit_off(self) -> float:
        """How far the suit mark's colour lies from red and black (off_colour), measured when first
        asked (a pairing read in its corner)."""
        return off_colour(self.norm, self.suit)


@dataclass
class CornerView:
    """One corner window, as upright ink."""

    name: str  # "top-left", "top-right", "bottom-right", "bottom-left"
    ink: np.ndarray  # float32 0..1
    red: np.ndarray  # float32: red minus green, paper-normalised
    right: bool  # the card's edge is on the window's right (top-right style corners)
    pairings: list[Pairing] = field(default_factory=list)
    norm: np.ndarray | None = None  # float32: the window's colour against the paper (PrintMaps.norm); None: not kept

    @cached_property
    def level(self) -> float:
        """The window's own ink level (threshold), measured once: its marks are found at it, and at
        levels raised or lowered from it."""
        return threshold(self.ink)

    @cached_property
    def mask(self) -> np.ndarray:
        """Where print may be: inside the card's rounded corner, off its very edge."""
        h, w = self.ink.shape
        keep = np.ones((h, w), np.uint8)
        r = int(CANON_W * 0.058)
        edge = 2
        if self.right:
            keep[:, w - edge :] = 0
            cv2.rectangle(keep, (w - r, 0), (w - 1, r), 0, -1)
            cv2.circle(keep, (w - 1 - r, r), r, 1, -1)
        else:
            keep[:, :edge] = 0
            cv2.rectangle(keep, (0, 0), (r, r), 0, -1)
            cv2.circle(keep, (r, r), r, 1, -1)
        keep[:edge, :] = 0
        return keep.astype(bool)


def paper_normalised(card: np.ndarray) -> np.ndarray:
    """Each channel divided by its local paper level (a blurred max filter)."""
    small = cv2.resize(card, (card.shape[1] // 4, card.shape[0] // 4), interpolation=cv2.INTER_AREA)
    bg = cv2.dilate(small, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (9, 9)))
    bg = cv2.GaussianBlur(bg, (0, 0), 2.0)
    bg = cv2.resize(bg, (card.shape[1], card.shape[0]), interpolation=cv2.INTER_LINEAR).astype(np.float32)
    return np.clip(card.astype(np.float32) / np.maximum(bg, PAPER_FLOOR), 0.0, 1.0)


class PrintMaps(NamedTuple):
    """A canonical card's print, measured against its own paper (paper_normalised)."""

    ink: np.ndarray  # float32 0..1: the darkness of the darkest channel (red and black print alike)
    red: np.ndarray  # float32: red minus green (red print 0.5 and more, black print about 0)
    norm: np.ndarray  # float32 0..1, BGR: each channel against the paper (off_colour asks it)


def print_maps(card: np.ndarray) -> PrintMaps:
    norm = paper_normalised(card)
    ink = 1.0 - _channel_min(norm)
    # Card print is red or black: red print leaves green far below red (crimson
    # inks carry some blue, so blue is not asked about); black print, once the
    # paper is normalised, has red and green alike.
    red = norm[..., 2] - norm[..., 1]
    return PrintMaps(ink, red, norm)


def _channel_min(image: np.ndarray) -> np.ndarray:
    """The least of a colour image's three channels, pixel by pixel (as
    image.min(axis=2), several times faster)."""
    return np.minimum(np.minimum(image[..., 0], image[..., 1]), image[..., 2])


def corner_views(card: np.ndarray | None, maps: PrintMaps | None = None,
                 width: float = WINDOW_W) -> list[CornerView]:
    """The four corner windows of a canonical card, each turned upright.
    `maps`: its print_maps when already measured; `width`: the windows' width
    as a fraction of the card's."""
    if maps is None:
        assert card is not None
        maps = print_maps(card)
    ink, red, norm = maps
    h, w = ink.shape
    cw, ch = int(w * width), int(h * WINDOW_H)
    views = []
    for name, turned, right in (("top-left", False, False), ("top-right", False, True),
                                ("bottom-right", True, False), ("bottom-left", True, True)):
        i, r, n = (ink[::-1, ::-1], red[::-1, ::-1], norm[::-1, ::-1]) if turned else (ink, red, norm)
        xs = slice(w - cw, w) if right else slice(0, cw)
        views.append(CornerView(name, np.ascontiguousarray(i[:ch, xs]), np.ascontiguousarray(r[:ch, xs]), right,
                                norm=n[:ch, xs]))
    return views


def threshold(ink: np.ndarray) -> float:
    """Otsu's level over a window, kept within sane bounds for print on card stock."""
    u8 = np.clip(ink * 255, 0, 255).astype(np.uint8)
    t, _ = cv2.threshold(u8, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    return float(np.clip(t / 255.0, 0.28, 0.55))


def find_marks(view: CornerView, raise_by: float = 0.0) -> list[Mark]:
    """Connected marks wholly inside the window (not running off its inner sides),
    at the window's ink level raised by `raise_by`."""
    ink = view.ink
    h, w = ink.shape
    binary = ((ink > view.level + raise_by) & view.mask).astype(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=8)
    min_side = max(5, int(CANON_H * 0.014))
    x, y, bw, bh, area = (stats[1:, i].astype(np.int64) for i in range(5))
    keep = (area >= 14) & (np.maximum(bw, bh) >= min_side)
    # not running out of the window: a pip, a picture frame, a pattern
    keep &= ~((x <= 0) if view.right else (x + bw >= w)) & (y + bh < h)
    # not a sliver of table along the card's edge
    outer_x = (x + bw >= w - 3) if view.right else (x <= 3)
    keep &= ~((outer_x & (bw < bh * 0.25)) | ((y <= 3) & (bh < bw * 0.25)))
    keep &= (bw <= w * 0.8) & (bh <= h * 0.8)
    marks = []
    for k in (np.flatnonzero(keep) + 1).tolist():
        mx, my, mw, mh = stats[k, :4].tolist()
        marks.append(Mark(mx, my, mw, mh, labels[my : my + mh, mx : mx + mw] == k, (k,)))
    return absorb_fragments(marks)


def absorb_fragments(marks: list[Mark]) -> list[Mark]:
    """Join small pieces lying within a bigger mark's outline (a spade's stem cut
    off by a thin neck, a serif broken by blur) to that mark."""
    areas = [int(m.mask.sum()) for m in marks]
    order = sorted(range(len(marks)), key=lambda i: -areas[i])  # largest first
    # Every mark against every other as they are found; a mark that has taken
    # a piece in is tested as it has become (a grown mark takes in more, so its
    # first test says nothing). The first taker in the order kept wins.
    inside = _inside_matrix(marks, areas)
    some = np.asarray(inside.any(axis=1)).tolist()
    out: list[Mark] = []
    out_area: list[int] = []
    slot_of: dict[int, int] = {}  # a mark kept as it was found -> its place in `out`
    head: list[int] = []  # the mark each place in `out` began with
    grown: list[int] = []  # places in `out` of marks that have taken pieces in, in order
    for j in order:
        m, area = marks[j], areas[j]
        taker = None
        if some[j]:
            for i in np.flatnonzero(inside[j]).tolist():
                k = slot_of.get(i)
                if k is not None and (taker is None or k < taker):
                    taker = k
        for k in grown:
            if taker is not None and k > taker:
                break
            if _within_outline(m, area, out[k], out_area[k]):
                taker = k
                break
        if taker is None:
            slot_of[j] = len(out)
            head.append(j)
            out.append(m)
            out_area.append(area)
            continue
        out[taker] = _merge(out[taker], m)
        out_area[taker] = int(out[taker].mask.sum())
        if taker not in grown:
            del slot_of[head[taker]]
            grown.append(taker)
            grown.sort()
    return sorted(out, key=lambda m: (m.y, m.x))


def _within_outline(m: Mark, area: int, big: Mark, big_area: int) -> bool:
    """Whether `m` is a small piece lying within `big`'s outline (absorb_fragments)."""
    mx, my = 0.1 * big.w + 1, 0.15 * big.h + 1
    inside = (m.x >= big.x - mx and m.x + m.w <= big.x + big.w + mx and m.y >= big.y - my
              and m.bottom <= big.bottom + my and big.x <= m.cx <= big.x + big.w)
    return inside and area < 0.25 * big_area


def _inside_matrix(marks: list[Mark], areas: list[int]) -> np.ndarray:
    """_within_outline(marks[j], areas[j], marks[i], areas[i]) for every j and i (bool, n x n)."""
    x, y, w, h = (np.array([getattr(m, k) for m in marks], np.int64) for k in "xywh")
    a = np.array(areas, np.int64)
    mx, my = 0.1 * w + 1, 0.15 * h + 1
    cx = x + w / 2
    bottom = y + h
    return ((x[:, None] >= (x - mx)[None, :]) & ((x + w)[:, None] <= ((x + w) + mx)[None, :])
            & (y[:, None] >= (y - my)[None, :]) & (bottom[:, None] <= (bottom + my)[None, :])
            & (x[None, :] <= cx[:, None]) & (cx[:, None] <= (x + w)[None, :]) & (a[:, None] < 0.25 * a[None, :]))


def _merge(a: Mark, b: Mark) -> Mark:
    x, y = min(a.x, b.x), min(a.y, b.y)
    x1, y1 = max(a.x + a.w, b.x + b.w), max(a.y + a.h, b.y + b.h)
    mask = np.zeros((y1 - y, x1 - x), bool)
    for m in (a, b):
        mask[m.y - y : m.y - y + m.h, m.x - x : m.x - x + m.w] |= m.mask
    return Mark(x, y, x1 - x, y1 - y, mask, a.labels + b.labels)


def side_by_side(a: Mark, b: Mark) -> bool:
    """Two marks of about one height on one line, close together: two glyphs of
    one index ("10"), never two indices."""
    left, right = (a, b) if a.x <= b.x else (b, a)
    gap = right.x - (left.x + left.w)
    overlap = min(a.bottom, b.bottom) - max(a.y, b.y)
    tall = max(a.h, b.h)
    return -0.2 * tall <= gap <= 0.45 * tall and overlap >= 0.7 * tall and 0.7 <= a.h / b.h <= 1.4


def side_by_side_matrix(marks: Sequence[Mark]) -> np.ndarray:
    """side_by_side(marks[i], marks[j]) for every i and j at once (bool, n x n)."""
    x, y, w, h = (np.array([getattr(m, k) for m in marks], np.int64) for k in "xywh")
    xi, xj, wi, wj = x[:, None], x[None, :], w[:, None], w[None, :]
    gap = np.where(xi <= xj, xj - (xi + wi), xi - (xj + wj))
    bottom = y + h
    overlap = np.minimum(bottom[:, None], bottom[None, :]) - np.maximum(y[:, None], y[None, :])
    tall = np.maximum(h[:, None], h[None, :])
    ratio = h[:, None] / h[None, :]
    return ((-0.2 * tall <= gap) & (gap <= 0.45 * tall) & (overlap >= 0.7 * tall) & (0.7 <= ratio)
            & (ratio <= 1.4))


def rank_marks(marks: list[Mark], beside: np.ndarray | None = None) -> list[Mark]:
    """Every mark, plus pairs side by side that could together be "10".
    `beside`: side_by_side_matrix(marks) when already computed."""
    out = list(marks)
    if len(marks) < 2:
        return out
    if beside is None:
        beside = side_by_side_matrix(marks)
    for i, j in zip(*np.nonzero(np.triu(beside, 1)), strict=True):
        a, b = marks[i], marks[j]
        left, right = (a, b) if a.x <= b.x else (b, a)
        out.append(_merge(left, right))
    return out


def pairings(view: CornerView, marks: list[Mark],
             keep: Callable[[Mark, Mark], bool] | None = None) -> list[Pairing]:
    """Rank-over-suit pairs in plausible index geometry; `keep`: only those whose
    (rank, suit) it keeps, asked before the pair's print is measured."""
    out = []
    beside = side_by_side_matrix(marks) if marks else np.zeros((0, 0), bool)
    for index, r in enumerate(rank_marks(marks, beside)):
        if not _placed_as_rank(view, r):
            continue
        for s in marks:
            if set(s.labels) & set(r.labels):
                continue
            gap = s.y - r.bottom
            if not (-0.12 * r.h <= gap <= 1.0 * r.h):
                continue
            if not (0.28 * r.h <= s.h <= SUIT_MAX * r.h) or not (0.16 * r.h <= s.w <= 1.8 * r.h):
                continue
            if abs(s.cx - r.cx) > 0.5 * max(r.w, s.w) + 0.12 * r.h:
                continue
            if keep is not None and not keep(r, s):
                continue
            # (a mark of one label is one of `marks`, at `index`: its row of `beside`)
            partial = len(r.labels) == 1 and index < len(marks) and any(
                j != index and not (set(m.labels) & set(s.labels)) and beside[index, j]
                for j, m in enumerate(marks))
            out.append(Pairing(r, s, _redness(view, r, s), blur_ratio(view, r), blur_ratio(view, s),
                               partial=partial, norm=view.norm))
    return out


def _placed_as_rank(view: CornerView, r: Mark) -> bool:
    """Whether a mark has an index rank's size and place: near the window's top, near the card's edge."""
    edge_gap = (view.ink.shape[1] - (r.x + r.w)) if view.right else r.x
    return CANON_H * 0.035 <= r.h <= CANON_H * 0.22 and r.y <= CANON_H * 0.2 and edge_gap <= CANON_W * 0.16


BLUR_DIRECTIONS = 4  # a mark's edges are measured in this many directions (of their gradient)
BLUR_SHARE = 0.08  # a direction is measured where at least this share of the edge faces it
BLUR_LEAST = 4  # and at least this many of its pixels


def blur_ratio(view: CornerView, m: Mark) -> float:
    """How blurred a mark is, against its height: the Gaussian blur that would
    give its edges their steepness (contrast over the steepest gradients), in
    units of the mark's height, in the direction its edges are least steep: a
    moving camera smears print one way only and leaves the edges along that way
    sharp. Sharp print is 0.02-0.07; above about 0.12 the shapes of small suits
    run together (a club becomes a spade)."""
    return _blur(view.ink, m)


def _blur(full_ink: np.ndarray, m: Mark) -> float:
    pad = 3
    h, w = full_ink.shape
    y0, x0 = max(0, m.y - pad), max(0, m.x - pad)
    y1, x1 = min(h, m.bottom + pad), min(w, m.x + m.w + pad)
    ink = full_ink[y0:y1, x0:x1]
    inside = np.zeros(ink.shape, np.uint8)
    inside[m.y - y0 : m.y - y0 + m.h, m.x - x0 : m.x - x0 + m.w] = m.mask
    gx = cv2.Sobel(ink, cv2.CV_32F, 1, 0, ksize=3, scale=1 / 8)
    gy = cv2.Sobel(ink, cv2.CV_32F, 0, 1, ksize=3, scale=1 / 8)
    grad = np.hypot(gx, gy)
    ring = np.ones((3, 3), np.uint8)
    edge = (cv2.dilate(inside, ring) - cv2.erode(inside, ring)).astype(bool)
    if not edge.any() or not inside.any():
        return 1.0
    outside = ~inside.astype(bool)
    contrast = percentile(ink[inside.astype(bool)], 90) - (
        percentile(ink[outside], 10) if outside.any() else 0.0)
    # each edge pixel's direction: the gradient's angle, folded to half a turn, in BLUR_DIRECTIONS bins
    # (four: centred on 0, 45, 90 and 135 degrees)
    turn = np.arctan2(gy[edge], gx[edge]) % math.pi
    way = np.floor(turn * (BLUR_DIRECTIONS / math.pi) + 0.5).astype(np.int32) % BLUR_DIRECTIONS
    steepness = grad[edge]
    least = max(BLUR_LEAST, BLUR_SHARE * len(steepness))
    counts = np.bincount(way, minlength=BLUR_DIRECTIONS)
    steep = min((percentile(steepness[way == k], 75) for k in range(BLUR_DIRECTIONS) if counts[k] >= least),
                default=percentile(steepness, 75))
    sigma = contrast / (steep * math.sqrt(2 * math.pi) + 1e-6)
    return sigma / m.h


def _redness(view: CornerView, *marks: Mark) -> float:
    return _print_redness(view.ink, view.red, *marks)


def _print_redness(full_ink: np.ndarray, full_red: np.ndarray, *marks: Mark) -> float:
    """How red the print of `marks` is: red-minus-green over ink, both against
    the card's own paper (paper_normalised), summed over the mark and the paper
    just around it. A colour cast of the light cancels (the paper is tinted
    the same way). Sums, not averages of the darkest pixels: a camera's
    compression keeps colour at half resolution or less and spreads a thin
    stroke's colour into the paper beside it, while under a strong cast the
    stroke itself takes the paper's tint; both move colour from pixel to pixel
    without changing its sum over the neighbourhood. Black print measures
    about 0, red print 0.5 to 0.9."""
    num = den = 0.0
    h, w = full_ink.shape
    for m in marks:
        pad = max(2, round(0.2 * m.h))
        y0, x0 = max(0, m.y - 2 * pad), max(0, m.x - 2 * pad)
        y1, x1 = min(h, m.bottom + 2 * pad), min(w, m.x + m.w + 2 * pad)
        ink, red = full_ink[y0:y1, x0:x1], full_red[y0:y1, x0:x1]
        inside = np.zeros(ink.shape, np.uint8)
        inside[m.y - y0 : m.bottom - y0, m.x - x0 : m.x + m.w - x0] = m.mask
        # within `pad` of the mark (near) and within twice that (far): one distance map
        # serves both (a dilation by a disc that large costs ten times as much)
        away = cv2.distanceTransform(1 - inside, cv2.DIST_L2, cv2.DIST_MASK_PRECISE)
        near, far = away <= pad + 0.5, away <= 2 * pad + 0.5
        # the mark and the paper around it; other print there (a neighbour, the
        # table beyond the card's corner) is left out
        paper = ink < OTHER_PRINT
        near_b, ring = inside.astype(bool) | (near & paper), (far & ~near) & paper
        # the paper's own level just around the mark, which normalisation leaves a little off 1
        base_ink, base_red = (median(ink[ring]), median(red[ring])) if ring.any() else (0.0, 0.0)
        num += float((red[near_b] - base_red).sum())
        den += float((ink[near_b] - base_ink).sum())
    return num / den if den > 1e-6 else 0.0


def off_colour(norm: np.ndarray | None, m: Mark) -> float:
    """How far the colour of a mark's print lies from red and black, from its colour against the
    paper (`norm`: PrintMaps.norm, or a corner window's). Black, red and their tints on white
    paper keep blue and green alike, a red's own hue (a crimson's blue, a scarlet's green)
    setting them apart by up to OFF_RED of its redness; yellow, blue and green print set them
    far apart. So: |blue - green| less that allowance, averaged over the mark's core, its pixels
    more than OFF_CORE of its height (OFF_CORE_PX at least) within its edges. Black print measures under 0.05, and
    up to 0.17 through a lens's strongest colour fringes (they lie along the edges, and reach
    into the core little); red print under 0.1; a suit mark striped in yellow and blue (a
    German bell) 0.24-0.33, Swiss acorns in yellow and brown 0.5. A mark with no core (a small
    or thin one): 0, its colour not asked (nor where `norm` is None)."""
    if norm is None:
        return 0.0
    inside = np.zeros((m.h + 2, m.w + 2), np.uint8)  # a border of paper around the mark
    inside[1:-1, 1:-1] = m.mask
    core = cv2.distanceTransform(inside, cv2.DIST_L2, cv2.DIST_MASK_3)[1:-1, 1:-1] > max(OFF_CORE_PX, OFF_CORE * m.h)
    b, g, r = norm[m.y : m.bottom, m.x : m.x + m.w][core].T
    if b.size < OFF_CORE_LEAST:
        return 0.0
    return float(np.maximum(np.abs(b - g) - OFF_RED * np.maximum(r - g, 0.0), 0.0).mean())


def glyph_vector(ink: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Features of one mark: `ink` (0..1) and `mask` (bool) cover its bounding box."""
    near = cv2.dilate(mask.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
    patch = np.where(near, ink, 0.0).astype(np.float32)
    ref = percentile(patch[mask], 90) if mask.any() else 1.0
    patch = np.clip(patch / max(ref, 0.15), 0.0, 1.0)
    h, w = patch.shape
    s = (GLYPH_BOX - 4) / max(h, w)
    nw, nh = max(1, round(w * s)), max(1, round(h * s))
    resized = cv2.resize(patch, (nw, nh), interpolation=cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR)
    canvas = np.zeros((GLYPH_BOX, GLYPH_BOX), np.float32)
    ox, oy = (GLYPH_BOX - nw) // 2, (GLYPH_BOX - nh) // 2
    canvas[oy : oy + nh, ox : ox + nw] = resized
    pixels = cv2.resize(canvas, (20, 20), interpolation=cv2.INTER_AREA).ravel()
    # gradient directions on a 4 x 4 grid of cells: shape that survives stroke weight
    smooth = cv2.GaussianBlur(canvas, (0, 0), 1.0)
    gx = cv2.Sobel(smooth, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(smooth, cv2.CV_32F, 0, 1, ksize=3)
    mag, ang = cv2.cartToPolar(gx, gy)
    bins = (np.floor(ang / (2 * np.pi) * 8).astype(np.int32)) % 8
    cell = GLYPH_BOX // 4
    hog = np.zeros((4, 4, 8), np.float32)
    cy, cx = np.indices(mag.shape) // cell
    np.add.at(hog, (cy.ravel(), cx.ravel(), bins.ravel()), mag.ravel())
    flat = hog.ravel()
    flat /= np.linalg.norm(flat) + 1e-6
    extra = np.array([np.log(w / h), float(mask.mean()), float(patch[mask].mean()) if mask.any() else 0.0],
                     np.float32)
    return np.concatenate([pixels, flat * 4.0, extra]).astype(np.float32)


def mark_vector(view: CornerView, m: Mark) -> np.ndarray:
    return glyph_vector(view.ink[m.y : m.y + m.h, m.x : m.x + m.w], m.mask)


@dataclass
class Pip:
    """A suit-sized mark in the middle of the card, turned upright."""

    mark: Mark  # in card pixels
    ink: np.ndarray  # upright patch over the mark's box
    mask: np.ndarray
    redness: float | None  # how red its print is (_print_redness); None: measured when first asked (colour)
    blur: float
    # on the card's middle row (an ace's pip, a three's middle one): printed
    # upright on the card, and the card may lie either way up
    either_way: bool = False
    card: PrintMaps | None = field(default=None, repr=False)  # the card's print_maps
    # in the card's lower half, where most designs print their pips upside down: `ink` is its print
    # turned over, upright as such a design prints it
    turned: bool = False

    def colour(self) -> float:
        """How red its print is, measured on the card the first time it is asked: the paper
        around a large mark (a piece of a court card's picture) is one of the dearer measures
        a corner read takes, and a mark whose shape is no suit's needs none."""
        if self.redness is None:
            assert self.card is not None, "a pip without its redness carries its card"
            self.redness = _print_redness(self.card.ink, self.card.red, self.mark)
        return self.redness

    @cached_property
    def off(self) -> float:
        """How far its print's colour lies from red and black (off_colour), measured when first asked."""
        return off_colour(self.card.norm if self.card is not None else None, self.mark)


def middle_pips(maps: PrintMaps, limit: int = 12,
                index_boxes: Sequence[tuple[int, int, int, int]] = (),
                card: np.ndarray | None = None) -> tuple[list[Pip], dict[int, int]]:
    """Pip-like marks in the middle of a canonical card (`maps`: its print_maps), and the print
    there that may cover one. Pips on the lower half are printed turned; they are turned back. Only
    number cards and aces have pips; the caller decides whether to trust these (a court
    card's picture has marks too). Marks whose centre lies in one of `index_boxes` (x0,
    y0, x1, y1 on the card: the marks of the corner indices) are no pips, nor those in
    the indices' columns (a pip's centre is never within PIP_EDGE of the card's side;
    an index's always is).

    The print that may cover a pip (a finger, a chip, a shadow; the picture of a court
    card too): every connected part of the middle's print, by its label (a pip's mark
    carries its label), with its area; what touches the window's edges counts (a
    finger reaches in from beyond the card). Left out: the indices (a part whose centre
    lies in one of `index_boxes`, or where an index is printed: an index's column, the
    card's upper or lower INDEX_ROWS), and a line that frames the middle (its box
    FRAME_SPAN of the card's width and height or more, printed over at most FRAME_FILL
    of it). Given the `card` (BGR), what lies over it in colours unlike its paper counts
    too (cover_print: a finger wider than the paper level's window, which the ink map
    shows only by its edges), under negative keys. stray_print weighs it against the pips."""
    ink = maps.ink
    h, w = ink.shape
    x0, x1, y0, y1 = middle_box((h, w))
    window = ink[y0:y1, x0:x1]
    binary = (window > threshold(window)).astype(np.uint8)
    n, labels, stats, centres = cv2.connectedComponentsWithStats(binary, connectivity=8)
    found = []
    covering: dict[int, int] = {}
    for k in range(1, n):
        x, y, bw, bh, area = (int(v) for v in stats[k])
        if _may_cover(x0 + centres[k][0], y0 + centres[k][1], bw, bh, area, (h, w), index_boxes):
            covering[k] = area
        if x <= 0 or y <= 0 or x + bw >= x1 - x0 or y + bh >= y1 - y0:
            continue
        if not (0.045 * h <= bh <= 0.4 * h) or not (0.45 <= bw / bh <= 1.5) or area < 0.35 * bw * bh:
            continue
        cx, cy = x0 + x + bw / 2, y0 + y + bh / 2
        if not PIP_EDGE * w <= cx <= (1 - PIP_EDGE) * w:
            continue  # in an index's column
        if any(bx0 <= cx <= bx1 and by0 <= cy <= by1 for bx0, by0, bx1, by1 in index_boxes):
            continue  # a corner index's suit, as large as the pips in some decks
        m = Mark(x0 + x, y0 + y, bw, bh, labels[y : y + bh, x : x + bw] == k, (k,))
        found.append((area, m))
    found.sort(key=lambda t: -t[0])
    pips = []
    for _, m in found[:limit]:
        patch = ink[m.y : m.bottom, m.x : m.x + m.w]
        mask = m.mask
        cy = m.y + m.h / 2
        lower = cy > 0.55 * h
        if lower:  # lower half: printed upside down
            patch, mask = patch[::-1, ::-1], mask[::-1, ::-1]
        pips.append(Pip(m, np.ascontiguousarray(patch), np.ascontiguousarray(mask), None, _blur(ink, m),
                        abs(cy - h / 2) <= MIDDLE_ROW * h, maps, lower))
    if card is not None:
        for k, (cx, cy, bw, bh, area) in enumerate(cover_print(card, ink, (x0, x1, y0, y1)), start=1):
            if _may_cover(cx, cy, bw, bh, area, (h, w), index_boxes):
                covering[-k] = area
    return pips, covering


def middle_box(shape: tuple[int, int]) -> tuple[int, int, int, int]:
    """The window (x0, x1, y0, y1) of a canonical card of `shape` (h, w) where pips and what may cover
    them are looked for: nearly the whole card, as some designs print their outer pips close to the edges."""
    h, w = shape
    return int(0.05 * w), int(0.95 * w), int(0.035 * h), int(0.965 * h)


def cover_print(card: np.ndarray, ink: np.ndarray, box: tuple[int, int, int, int]
                ) -> list[tuple[float, float, int, int, int]]:
    """What lies over the card within `box` (x0, x1, y0, y1) in colours of its own: a finger. The ink
    map measures print against the paper level around it (paper_normalised), so a cover wider than
    that window is its own paper there and shows only by its edges. Here it is found by its colour,
    in two steps, at half the card's size:
    - where a colour stands off the card's paper (the median of its paper, COVER_PAPER under `ink`)
      as skin does (_stands_off), in parts whose inside, on the paper's side of the ink map (under
      COVER_INK: a pip's inside is ink, a blurred pip's rim too), keeps a COVER_OPEN square;
    - each such part whose colour (its median, COVER_RIM pixels in from its edge: a blurred
      edge's mixed colours left out) stands off the paper beyond it (from COVER_RIM to COVER_RING
      pixels out, unprinted): light whose colour changes across the card (a lamp on one side, a
      tinted glare) changes it smoothly, and a part of it matches what lies beside it. Paper
      whose colour is clipped in some channels but not all (a strong cast) is not measured.
    Each cover: its centre (x, y on the card), box width and height, and area in the card's pixels.
    Grey light, shadows and glare change the paper's brightness, not its colour; ink is grey or red."""
    x0, x1, y0, y1 = box
    half = cv2.resize(card[y0:y1, x0:x1], None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA).astype(np.float32)
    ink_half = cv2.resize(ink[y0:y1, x0:x1], (half.shape[1], half.shape[0]), interpolation=cv2.INTER_AREA)
    paper = half[::4, ::4][ink_half[::4, ::4] < COVER_PAPER]
    if len(paper) < COVER_SAMPLES:
        return []
    colour = np.maximum(np.median(paper, axis=0), PAPER_FLOOR)
    if np.count_nonzero(_stands_off(half[::3, ::3] / colour) & (ink_half[::3, ::3] < COVER_INK)) < COVER_SAMPLES:
        return []  # too little of a colour of its own for a cover (one pixel in nine asked): most cards
    coloured = _stands_off(half / colour).astype(np.uint8)
    core = cv2.morphologyEx(coloured & (ink_half < COVER_INK), cv2.MORPH_OPEN, np.ones((COVER_OPEN, COVER_OPEN), np.uint8))
    if not core.any():
        return []
    n, labels, stats, centres = cv2.connectedComponentsWithStats(coloured, connectivity=8)
    covers = []
    band = np.ones((3, 3), np.uint8)
    ring = np.ones((2 * COVER_RING + 1, 2 * COVER_RING + 1), np.uint8)
    hh, hw = coloured.shape
    for k in np.unique(labels[core > 0]):
        if not k:
            continue
        # the whole coloured part with a core: its shaded rim, where the ink map rises, too
        x, y, bw, bh, area = (int(v) for v in stats[k])
        ys = slice(max(0, y - COVER_RING), min(hh, y + bh + COVER_RING))
        xs = slice(max(0, x - COVER_RING), min(hw, x + bw + COVER_RING))
        part = (labels[ys, xs] == k).astype(np.uint8)
        inside = cv2.erode(part, band, iterations=COVER_RIM).astype(bool)  # a blurred edge's mixed colours left out
        beyond = (cv2.dilate(part, ring) - cv2.dilate(part, band, iterations=COVER_RIM)).astype(bool) & (
            ink_half[ys, xs] < COVER_INK)
        if inside.sum() < COVER_SAMPLES or beyond.sum() < COVER_SAMPLES:
            continue
        colours = half[ys, xs]
        around = np.median(colours[beyond], axis=0)
        clipped = around >= COVER_CLIPPED
        if clipped.any() and not clipped.all():
            continue  # paper in a coloured light, one channel clipped: its colour is not measured
        if _stands_off(np.median(colours[inside], axis=0) / np.maximum(around, PAPER_FLOOR)):
            covers.append((x0 + 2 * float(centres[k][0]), y0 + 2 * float(centres[k][1]), 2 * bw, 2 * bh, 4 * area))
    return covers


def _stands_off(norm: np.ndarray) -> np.ndarray:
    """Where colours measured against the paper's (`norm`: B, G, R, each as a share of the paper's)
    stand off it as skin does: their channels spread by COVER_CHROMA of the brightest, red the
    brightest, green at least COVER_GREEN of red (red ink's is far lower)."""
    b, g, r = norm[..., 0], norm[..., 1], norm[..., 2]
    return (r - np.minimum(b, g) >= COVER_CHROMA * np.maximum(r, 0.05)) & (r >= b) & (g >= COVER_GREEN * r)


def _may_cover(cx: float, cy: float, bw: int, bh: int, area: int, shape: tuple[int, int],
               index_boxes: Sequence[tuple[int, int, int, int]]) -> bool:
    """Whether a part of the middle's print, its centre at (cx, cy) on the card, may cover
    a pip: not an index's mark, nor a line framing the middle (middle_pips)."""
    h, w = shape
    if not PIP_EDGE * w <= cx <= (1 - PIP_EDGE) * w and not INDEX_ROWS * h <= cy <= (1 - INDEX_ROWS) * h:
        return False
    if any(bx0 <= cx <= bx1 and by0 <= cy <= by1 for bx0, by0, bx1, by1 in index_boxes):
        return False
    return not (bw >= FRAME_SPAN * w and bh >= FRAME_SPAN * h and area <= FRAME_FILL * bw * bh)


def stray_print(group: Sequence[Pip], covering: dict[int, int]) -> float:
    """The largest print in the middle that may cover a pip (middle_pips's `covering`)
    and is not one of `group`'s pips, as a share of their median area: 0 where the
    middle shows nothing but them."""
    if not group:
        return 0.0
    own = {k for pip in group for k in pip.mark.labels}
    area = float(np.median([int(pip.mask.sum()) for pip in group]))
    return max((size for k, size in covering.items() if k not in own), default=0) / max(area, 1.0)


def pip_group(pips: list[Pip]) -> list[Pip]:
    """The largest set of pips of one size (heights, or body heights, within 15% of
    each other and areas within 30%): a number card's pips are all printed alike,
    the pieces of a court card's picture are not."""
    bodies = [body_height(p.mask) for p in pips]
    areas = [int(p.mask.sum()) for p in pips]
    best: list[Pip] = []
    for ref, b, a in zip(pips, bodies, areas, strict=True):
        h = ref.mark.h
        group = [p for p, pb, pa in zip(pips, bodies, areas, strict=True)
                 if (abs(p.mark.h - h) <= 0.15 * h or abs(pb - b) <= 0.15 * b) and abs(pa - a) <= 0.3 * a]
        if len(group) > len(best):
            best = group
    return best


def body_height(mask: np.ndarray) -> int:
    """The height of a mark's body: its rows at least BODY_ROW as wide as its widest. A spade's
    or a club's thin stem joins its pip in one print and parts from it in the next (blur, a
    small picture): its rows count for nothing, and pips printed alike measure alike."""
    rows = mask.sum(axis=1)
    return int((rows >= BODY_ROW * rows.max()).sum()) if rows.size else 0


def index_pairings(view: CornerView) -> list[Pairing]:
    """A corner's candidate pairings. Where there are none, the print may be
    blurred enough for the rank to run into the suit under it: one tall mark
    where an index belongs. The ink level is raised, in steps, until it comes
    apart; only a rank and a suit that both lie within that mark are taken. Or the
    suit may have run into a pip beside it, print running off the window, so no
    mark: the level is raised in the same steps, and only a pair whose rank is a
    mark at the window's own level, placed as a rank, and whose suit lies in no
    such mark is taken. Or a
    thin rank may have faded below the level that large pips beside it set: the
    level is lowered, in steps (FAINT_LEVELS), and only a pair whose suit stands
    at the window's own level is taken."""
    marks = find_marks(view)
    found = pairings(view, marks)
    if found:
        return found
    merged = [m for m in marks if m.h >= 1.3 * m.w and CANON_H * 0.07 <= m.h <= CANON_H * 0.35
              and m.y <= CANON_H * 0.2]
    raised: dict[float, list[Mark]] = {}  # the marks at each raised level, found once for both searches

    def raised_marks(raise_by: float) -> list[Mark]:
        if raise_by not in raised:
            raised[raise_by] = find_marks(view, raise_by)
        return raised[raise_by]

    for raise_by in SPLIT_LEVELS if merged else ():
        found = pairings(view, raised_marks(raise_by),
                         lambda r, s: any(_within(r, m) and _within(s, m) for m in merged))
        if found:
            return found
    # a suit run into a pip beside it (blur, a small picture): print running off the window, no mark
    ranks = [m for m in marks if _placed_as_rank(view, m)]
    for raise_by in SPLIT_LEVELS if ranks else ():
        found = pairings(view, raised_marks(raise_by),
                         lambda r, s: any(_within(r, m) for m in ranks) and not any(_within(s, m) for m in marks))
        if found:
            return found
    # a suit is a solid shape: it stands at the window's own level, where a thin rank may fade
    for lower_by in FAINT_LEVELS if marks else ():
        if view.level - lower_by < FAINT_FLOOR:
            break
        found = pairings(view, find_marks(view, -lower_by), lambda r, s: any(_solid_within(m, s) for m in marks))
        if found:
            return found
    return []


def _solid_within(m: Mark, faint: Mark) -> bool:
    """Whether `m`, a mark at the window's own level, is the body of `faint`, one found at a lower level."""
    return _within(m, faint) and m.mask.sum() >= 0.5 * faint.mask.sum()


def _within(a: Mark, b: Mark, slack: int = 2) -> bool:
    return (a.x >= b.x - slack and a.y >= b.y - slack and a.x + a.w <= b.x + b.w + slack
            and a.bottom <= b.bottom + slack)


def read_card_marks(card: np.ndarray, maps: PrintMaps | None = None
                    ) -> tuple[list[CornerView], list[Pip]]:
    """The corner windows with their candidate pairings, and the pips. `maps`:
    the card's print_maps when already measured."""
    maps = maps if maps is not None else print_maps(card)
    views = read_corners(maps)
    return views, index_pips(views, maps)[0]


def read_corners(maps: PrintMaps) -> list[CornerView]:
    """The corner windows of a card, given its print_maps, with their candidate pairings."""
    views = corner_views(None, maps)
    for view in views:
        view.pairings = index_pairings(view)
    return views


def index_pips(views: list[CornerView], maps: PrintMaps, card: np.ndarray | None = None
               ) -> tuple[list[Pip], dict[int, int]]:
    """The pips of a card, and the print that may cover one (middle_pips), given its
    print_maps, its corner windows with their pairings (whose marks are no pips) and, where
    what lies over it in colours is asked too, the card (BGR)."""
    boxes = [_card_box(view, m, maps.ink.shape) for view in views for p in view.pairings for m in (p.rank, p.suit)]
    return middle_pips(maps, index_boxes=boxes, card=card)


def _card_box(view: CornerView, m: Mark, shape: tuple[int, int]) -> tuple[int, int, int, int]:
    """A corner window's mark as a box (x0, y0, x1, y1) on the card."""
    h, w = shape
    vh, vw = view.ink.shape
    x0 = m.x + (w - vw if view.right else 0)
    box = (x0, m.y, x0 + m.w, m.bottom)
    if view.name.startswith("bottom"):  # the window was turned half a turn
        box = (w - box[2], h - box[3], w - box[0], h - box[1])
    return box


@dataclass
class LoneIndex:
    """A rank printed alone where a corner index belongs (no suit under it),
    and, where there is one, a suit printed alone in the other corner of the
    same end of the card, on the rank's line (designs that split the index)."""

    view: CornerView  # the rank's corner (a window LONE_WINDOW_W wide)
    rank: Mark
    rank_red: float
    rank_blur: float
    suit_view: CornerView | None = None
    suit: Mark | None = None
    suit_red: float = 0.0
    suit_blur: float = 0.0
    suit_apart: float = 1.0  # share of the card between the rank and the suit printed over (`between`)
    rank_key: int = -1
    suit_key: int = -1

    @cached_property
    def suit_off(self) -> float:
        """How far the suit's colour lies from red and black (off_colour), measured when first asked."""
        return 0.0 if self.suit is None or self.suit_view is None else off_colour(self.suit_view.norm, self.suit)


@dataclass
class LoneMarks:
    """What a card without a rank-over-suit index shows: ranks alone in the
    corners, the pips (the lone marks left out), and the largest print in the
    card's middle (a design's one large suit symbol), with its redness."""

    indices: list[LoneIndex]
    pips: list[Pip]
    middle: Mark | None
    middle_red: float
    middle_colours: float = 0.0  # share of the middle printed in colours other than red and black
    covering: dict[int, int] = field(default_factory=dict)  # print that may cover a pip (middle_pips)


def lone_marks(card: np.ndarray, maps: PrintMaps | None = None,
               indices: list[LoneIndex] | None = None, read: list[LoneIndex] | None = None) -> LoneMarks:
    """Ranks alone in the corners of a canonical card that has no rank-over-suit
    index, with the suits printed alone beside them, the pips and the middle.
    `maps`: the card's print_maps when already measured; `indices`: its
    lone_indices when already found; `read`: those of them whose marks read as an
    index (the rest may be pips near a corner, counted with the others; default: all)."""
    maps = maps if maps is not None else print_maps(card)
    ink, red = maps.ink, maps.red
    h, w = ink.shape
    found = indices if indices is not None else lone_indices(maps)
    boxes = []
    for lone in found if read is None else read:
        boxes.append(_card_box(lone.view, lone.rank, (h, w)))
        if lone.suit is not None and lone.suit_view is not None:
            boxes.append(_card_box(lone.suit_view, lone.suit, (h, w)))
    middle, middle_red = _middle_print(ink, red)
    colours = middle_colours(card) if card is not None and found else 0.0
    pips, covering = middle_pips(maps, index_boxes=boxes, card=card)
    return LoneMarks(found, pips, middle, middle_red, colours, covering)


def lone_indices(maps: PrintMaps) -> list[LoneIndex]:
    """Ranks printed alone in the corners of a card, given its print_maps, with
    the suits printed alone beside them (see lone_marks)."""
    ink = maps.ink
    h, w = ink.shape
    wide = corner_views(None, maps, LONE_WINDOW_W)
    by_name = {v.name: v for v in wide}
    marks_of = {v.name: find_marks(v) for v in wide}
    found: list[LoneIndex] = []
    for view in wide:
        marks = marks_of[view.name]
        pv = by_name[PARTNER[view.name]]
        suits = marks_of[pv.name]
        for r in rank_marks(marks):
            if not _lone_rank(view, r, marks):
                continue
            rank = (r, _redness(view, r), blur_ratio(view, r))
            beside = [s for s in suits if _beside(pv, r, s)]
            rank_box = _card_box(view, r, (h, w))
            found += [LoneIndex(view, *rank, pv, s, _redness(pv, s), blur_ratio(pv, s),
                                between(ink, rank_box, _card_box(pv, s, (h, w)))) for s in beside]
            if not beside:
                found.append(LoneIndex(view, *rank))
    return found


def middle_colours(card: np.ndarray) -> float:
    """The share of the card's middle (MIDDLE) printed in colours other than
    red and black, against the card's own paper: a number card is printed in
    its suit's ink alone, a court card's picture in yellows, blues, greens
    and flesh tones. Black and grey print has its channels alike; red print
    (crimson carries some blue) has red well above green and above blue."""
    h, w = card.shape[:2]
    x0, x1, y0, y1 = int(MIDDLE[0] * w), int(MIDDLE[1] * w), int(MIDDLE[2] * h), int(MIDDLE[3] * h)
    norm = paper_normalised(card)[y0:y1, x0:x1]
    b, g, r = norm[..., 0], norm[..., 1], norm[..., 2]
    spread = np.maximum(np.maximum(b, g), r) - _channel_min(norm)
    reddish = (r - g >= 0.25) & (r >= b + 0.1)
    return float(np.mean((spread >= 0.25) & ~reddish))


def _lone_rank(view: CornerView, r: Mark, marks: list[Mark]) -> bool:
    """Whether `r` is where a rank is printed, with nothing under it: the index
    geometry of `pairings`, and no mark below it within its height that could be
    an index's suit (a pip printed close under the rank, taller than SUIT_MAX
    times the rank, is none)."""
    w = view.ink.shape[1]
    if not (CANON_H * 0.035 <= r.h <= CANON_H * 0.22) or r.y > CANON_H * 0.2 or not _off_edges(view, r):
        return False
    if ((w - (r.x + r.w)) if view.right else r.x) > CANON_W * 0.16:
        return False
    others = [m for m in marks if not set(m.labels) & set(r.labels)]
    if len(r.labels) == 1 and any(side_by_side(r, m) for m in others):
        return False  # one glyph of a two-glyph rank: the "1" of a "10" is no jack
    return not any(-0.12 * r.h <= m.y - r.bottom <= r.h and m.x < r.x + r.w and r.x < m.x + m.w
                   and m.h <= SUIT_MAX * r.h for m in others)


def _off_edges(view: CornerView, m: Mark) -> bool:
    """Whether a mark keeps clear of the card's edges (EDGE_CLEAR pixels), as
    printed glyphs do: what touches them is the rounded corner's cut, the table
    beyond it, or a finger over the card."""
    outer = (view.ink.shape[1] - (m.x + m.w)) if view.right else m.x
    return outer >= EDGE_CLEAR and m.y >= EDGE_CLEAR


def _beside(view: CornerView, r: Mark, s: Mark) -> bool:
    """Whether `s`, in the other corner of the rank's end of the card, is a suit
    printed on the rank's line: about its height, its centre within
    three tenths of the card's width from the card's edge."""
    w = view.ink.shape[1]
    if ((w - s.cx) if view.right else s.cx) > CANON_W * 0.3 or not _off_edges(view, s):
        return False
    return (abs((s.y + s.h / 2) - (r.y + r.h / 2)) <= 0.25 * r.h and 0.5 * r.h <= s.h <= SUIT_MAX * r.h
            and 0.3 * r.h <= s.w <= 1.8 * r.h)


def between(ink: np.ndarray, a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> float:
    """The share of the card between two boxes side by side on one line (x0, y0,
    x1, y1 on the card: a rank and the suit printed beside it), over the rows
    both span, that is printed (ink from OTHER_PRINT on): 0 where the two
    stand on clear paper, as a split index does across the top of a card; more
    where a picture lies between them."""
    left, right = (a, b) if a[0] <= b[0] else (b, a)
    y0, y1 = max(a[1], b[1]), min(a[3], b[3])
    x0, x1 = left[2], right[0]
    if y1 <= y0 or x1 <= x0:
        return 1.0
    return float((ink[y0:y1, x0:x1] >= OTHER_PRINT).mean())


def _middle_print(ink: np.ndarray, red: np.ndarray) -> tuple[Mark | None, float]:
    """The largest print in the card's middle (MIDDLE, off its border and
    indices) and how red it is; None where the middle holds no print of at
    least a twentieth of its area."""
    h, w = ink.shape
    x0, x1, y0, y1 = int(MIDDLE[0] * w), int(MIDDLE[1] * w), int(MIDDLE[2] * h), int(MIDDLE[3] * h)
    window = ink[y0:y1, x0:x1]
    binary = (window > threshold(window)).astype(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=8)
    if n < 2:
        return None, 0.0
    k = 1 + int(np.argmax(stats[1:, 4]))
    x, y, bw, bh, area = (int(v) for v in stats[k])
    if area < window.size / 20:
        return None, 0.0
    m = Mark(x0 + x, y0 + y, bw, bh, labels[y : y + bh, x : x + bw] == k, (k,))
    # a large print keeps its colour in its own pixels (no thin strokes to
    # bleed): red-minus-green over ink inside it, against the window's paper
    inside, paper = labels == k, window < OTHER_PRINT
    reds = red[y0:y1, x0:x1]
    base_ink, base_red = (median(window[paper]), median(reds[paper])) if paper.any() else (0.0, 0.0)
    den = float((window[inside] - base_ink).sum())
    return m, (float((reds[inside] - base_red).sum()) / den if den > 1e-6 else 0.0)


def read_views(card: np.ndarray) -> list[CornerView]:
    """The corner windows of a canonical card with their candidate pairings."""
    views = corner_views(card)
    for view in views:
        view.pairings = index_pairings(view)
    return views


def collect_vectors(views: list[CornerView]) -> np.ndarray:
    """Feature vectors of every mark used by a pairing, one row each; sets the
    pairings' rank_key and suit_key to their rows."""
    rows: list[np.ndarray] = []
    for view in views:
        seen: dict[tuple, int] = {}
        for p in view.pairings:
            for attr in ("rank", "suit"):
                m = getattr(p, attr)
                key = (m.x, m.y, m.w, m.h, m.labels)
                if key not in seen:
                    seen[key] = len(rows)
                    rows.append(mark_vector(view, m))
                setattr(p, attr + "_key", seen[key])
    return np.stack(rows) if rows else np.zeros((0, FEATURES), np.float32)
