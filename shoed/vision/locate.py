"""Finding a card in a photograph and flattening it to an upright canonical card.

A card face is a bright, card-shaped (63 x 88 mm) convex quadrilateral with
rounded corners. Candidates come from two segmentations of a downscaled copy
(bright-and-unsaturated regions at a few thresholds, and closed edges); each
outline's convex hull is reduced to the quadrilateral that encloses it with the
least added area (so a corner hidden by a finger is restored), its sides are
refitted to the outline, and candidates are scored on shape, size, fill and
aspect ratio. The winner's corners are scaled back to the full image, which is
warped to a portrait card of CANON_W x CANON_H pixels.

A card bowed (curled by the room's damp, lifted by the dealer's peek) is seen
with curved sides: where a side's outline departs from its straight line by a
smooth arc (`CardQuad.bows`), the flattening follows the four curved sides
rather than the four lines, so that the corner indices lie where a flat card's
do.

Where an outline is not card-shaped itself (print running off the card's
edges joins the card's outline to the print's, or leaves only the paper above
it bright; a chip touches the card), the card is sought among the outline's
long straight runs: two pairs of nearly parallel lines at right angles, or,
where the print meets a table as dark as it and one side cannot be seen at
all, three sides seen and the fourth placed by the card's proportions. Such a
placed side is a guess: it scores below every outline seen whole, and the
recogniser reads the card through it under the same guards as any other.

A picture may be the card itself (a still cut to the card, a camera framing the card it looks at
tightly): its sides are then the picture's, which no outline found may be. Where card stock runs
along all four edges of a picture no longer than twice its width (a card's proportions, or a card
squeezed to a square), the picture's own frame is offered after every outline found, unless an
outline found covers most of the picture (the card's own).

Portrait is all that must be known: a card's indices sit in opposite corners
and are the same turned half a turn, so both portrait warps read alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

CANON_W, CANON_H = 300, 420
CARD_ASPECT = 88.0 / 63.0
DETECT_SIDE = 960  # long side of the copy the search runs on
LINE_ASPECT = 0.25  # a card outlined by its sides' straight runs: aspect within this (log) of a card's
PARTIAL_SUPPORT = 0.6  # least share of the sides seen along a card with one side placed, not seen
# At most this many of a side's outline points, evenly spaced along it, go into the robust fit of
# its line: the Huber fit costs half a microsecond a point, and a straight run is as well
# placed by every fifth pixel of it.
FIT_POINTS = 80
# The picture taken as the card (_frame): how far in from each edge card stock is looked for, the share
# of the edge (its ends left out) where it must be found, and how bright stock is against the level a
# quarter of the picture reaches (and at least).
FRAME_STRIP = 0.04
FRAME_ENDS = 0.1
FRAME_PAPER = 0.7
FRAME_LEVEL = 0.55
FRAME_FLOOR = 60.0
FRAME_FOUND = 0.85  # an outline found over this share of the picture is the card's own: no frame offered
# A side is bowed where its outline's arc rises this share of its length above the straight
# line (a quadratic through the outline's middle, BOW_MIN_PX at least, on the search's copy):
# a flat card's traced outline wavers by a pixel, a bowed card's arcs by 2-6% of its height.
BOW_MIN = 0.012
BOW_MIN_PX = 1.5


@dataclass(frozen=True)
class CardQuad:
    """A card's outline: corners TL, TR, BR, BL of a portrait card, in image pixels."""

    corners: np.ndarray  # (4, 2) float32
    score: float
    aspect: float  # long side / short side as seen
    weakest: float = 1.0  # the least share of one side that the outline runs along
    # each side's bow (side i from corner i to i + 1): its outline's offset inwards from the side's
    # line, a + b t + c 4 t (1 - t) px at t (0 to 1) along it; None where every side is straight
    bows: np.ndarray | None = None  # (4, 3) float32
    frame: bool = False  # the picture's own frame, taken as the card's (_frame)

    @property
    def ambiguous(self) -> bool:
        """Seen so obliquely that the long side might be the short one."""
        return self.aspect < 1.2

    def turned(self) -> CardQuad:
        """The other portrait reading (a quarter turn): for ambiguous outlines."""
        bows = None if self.bows is None else np.roll(self.bows, -1, axis=0)
        return CardQuad(np.roll(self.corners, -1, axis=0), self.score, self.aspect, self.weakest, bows, self.frame)

    def ways(self) -> list[CardQuad]:
        """The portrait readings to try: this one, and the quarter turn where the outline is ambiguous."""
        return [self, self.turned()] if self.ambiguous else [self]

    def as_list(self) -> list[list[float]]:
        return [[round(float(x), 1), round(float(y), 1)] for x, y in self.corners]


def overlap(one: CardQuad, other: CardQuad) -> float:
    """How much two outlines overlap, as a share of the smaller (0: apart; 1: one within the other)."""
    a, b = one.corners.astype(np.float32), other.corners.astype(np.float32)
    smaller = min(abs(cv2.contourArea(a)), abs(cv2.contourArea(b)))
    if smaller <= 0:
        return 1.0
    common, _ = cv2.intersectConvexConvex(a, b)
    return min(1.0, float(common) / smaller)


def area_ratio(one: CardQuad, other: CardQuad) -> float:
    """The larger outline's area over the smaller's (1: the same size; inf: one of no area)."""
    a, b = (abs(cv2.contourArea(q.corners.astype(np.float32))) for q in (one, other))
    return max(a, b) / min(a, b) if min(a, b) > 0 else math.inf


def downscale(image: np.ndarray, side: int = DETECT_SIDE) -> tuple[np.ndarray, float]:
    """The copy the search for outlines runs on, its long side `side` (a smaller
    picture as it is), with the factor that maps coordinates to it. Halved while it
    stays at least twice as large (each halving the mean of 2 x 2 pixels, OpenCV's
    fast path; the pixels past the last whole block left out), then shrunk the rest,
    by less than half, by bilinear interpolation: the search blurs what it thresholds
    and traces, and an area average of the rest costs five times as much (7 ms for a
    1280 x 960 frame, one core)."""
    h, w = image.shape[:2]
    f = side / max(h, w)
    if f >= 1.0:
        return image, 1.0
    out = (max(1, round(w * f)), max(1, round(h * f)))
    k = 1
    while max(image.shape[:2]) >= 2 * side and min(image.shape[:2]) >= 2:  # a strip one pixel wide is not halved
        image, k = halve(image), 2 * k
    return cv2.resize(image, out, interpolation=cv2.INTER_LINEAR), out[0] / (image.shape[1] * k)


def halve(image: np.ndarray) -> np.ndarray:
    """`image` at half its size, each pixel the mean of 2 x 2 (OpenCV's fast path of an area
    average); a row or column past the last whole block is left out."""
    h, w = image.shape[:2]
    return cv2.resize(image[: h - h % 2, : w - w % 2], (w // 2, h // 2), interpolation=cv2.INTER_AREA)


def find_card(image: np.ndarray) -> CardQuad | None:
    """The most card-like quadrilateral in a BGR image, or None."""
    quads = find_quads(image)
    return quads[0] if quads else None


def find_quads(image: np.ndarray, limit: int = 3) -> list[CardQuad]:
    """Card-like quadrilaterals, best first (at most `limit`), in full-image pixels; after them
    the picture's own frame where the picture is a card's (`_frame`)."""
    small, f = downscale(image)
    h, w = small.shape[:2]
    hsv = cv2.cvtColor(small, cv2.COLOR_BGR2HSV)
    sat, val = hsv[..., 1].astype(np.int16), hsv[..., 2].astype(np.int16)
    white = np.clip(val - sat, 0, 255).astype(np.uint8)  # bright and unsaturated: card stock
    white = cv2.GaussianBlur(white, (5, 5), 0)
    masks = []
    otsu, _ = cv2.threshold(white, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    # Several levels: one of them usually separates the card from whatever touches it
    # (a chip, a finger, the glare of the table).
    for t in (otsu, (otsu + 255) / 2, otsu * 0.75):
        masks.append(white > t)
    gray = cv2.GaussianBlur(cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), (5, 5), 0)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))
    min_area = 0.01 * h * w
    outlines = []
    for m in masks:
        m = cv2.morphologyEx(m.astype(np.uint8) * 255, cv2.MORPH_OPEN, kernel)
        contours, _ = cv2.findContours(m, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        outlines += [(c, False) for c in contours]
    # Edges find a card on a pale table, where brightness alone does not; two
    # sensitivities, the faint one for a white card on white cloth.
    for low, high in ((50, 150), (20, 60)):
        edges = cv2.dilate(cv2.Canny(gray, low, high), np.ones((3, 3), np.uint8))
        contours, _ = cv2.findContours(edges, cv2.RETR_LIST, cv2.CHAIN_APPROX_NONE)
        outlines += [(c, True) for c in contours if len(c) >= 40]
    # The segmentations often trace one outline alike (a card on dark cloth is
    # the same at every level): an outline already judged is not judged again.
    judged: dict[tuple[bytes, bool], list[CardQuad]] = {}
    traced: list[tuple[CardQuad, np.ndarray]] = []  # each candidate with the outline it came from
    for contour, from_edges in outlines:
        # an edge trace need not be closed: judge its size by its hull
        area = cv2.contourArea(cv2.convexHull(contour)) if from_edges else cv2.contourArea(contour)
        if area < min_area:
            continue
        key = (contour.tobytes(), from_edges)
        if key not in judged:
            judged[key] = _outline_quads(contour, area, white, (h, w), from_edges)
            traced += [(q, contour) for q in judged[key]]
    traced.sort(key=lambda qc: -qc[0].score)
    best: list[tuple[CardQuad, np.ndarray]] = []
    for q, contour in traced:  # drop near-duplicates of a better candidate
        if all(np.abs(q.corners - b.corners).max() > 0.03 * max(h, w) for b, _ in best):
            best.append((q, contour))
        if len(best) >= limit:
            break
    # the bows of the outlines kept only (a placed side is not seen: such an outline is flat)
    kept = []
    for q, contour in best:
        bows = _bows(q.corners.astype(np.float64), contour.reshape(-1, 2).astype(np.float64))
        kept.append(CardQuad((q.corners / f).astype(np.float32), q.score, q.aspect, q.weakest,
                             None if bows is None else (bows / f).astype(np.float32)))
    picture = image.shape[0] * image.shape[1]
    if any(abs(cv2.contourArea(q.corners)) >= FRAME_FOUND * picture for q in kept):
        return kept  # the card's own outline found, as good as all of the picture
    frame = _frame(white, image.shape)
    return kept if frame is None else kept + [frame]


def _frame(white: np.ndarray, shape: tuple[int, ...]) -> CardQuad | None:
    """The picture's own frame as a card's outline, where the picture is the card: a still cut
    to the card, a camera framing the card it looks at tightly. Such a card has no outline of
    its own to find: its sides are the picture's, or nearly, which `_judge` leaves to the
    picture. `white`: the searched copy's card stock measure; `shape`: the picture's. Taken
    only where
    - along each of the picture's four edges, card stock lies within FRAME_STRIP of the short
      side of the edge almost everywhere (FRAME_PAPER of the edge, its ends left out for the
      card's rounded corners): a sliver of the table beyond the card, or a line printed along
      its edge, leaves stock further in; stock is FRAME_LEVEL of the level that a quarter of
      the picture reaches (the card's paper, which fills most of it; not a lamp's glare);
    - the picture is no longer than twice its width (a card's proportions, or a card squeezed
      to a square frame: the flattening undoes either).
    It comes after every outline found, in full-picture pixels, and not where an outline found
    covers FRAME_FOUND of the picture (the card's own outline, seen a little within the picture's
    edges: the frame would be a second look at the same card); None where the picture is not a
    card's."""
    h, w = shape[:2]
    sh, sw = white.shape
    if min(sh, sw) < 16 or max(h, w) > 2.0 * min(h, w):
        return None
    strip = max(2, round(FRAME_STRIP * min(sh, sw)))
    level = max(FRAME_FLOOR, FRAME_LEVEL * float(np.percentile(white[::4, ::4], 75)))
    ey, ex = round(FRAME_ENDS * sh), round(FRAME_ENDS * sw)
    edges = (white[:strip, ex:sw - ex].max(axis=0), white[sh - strip:, ex:sw - ex].max(axis=0),
             white[ey:sh - ey, :strip].max(axis=1), white[ey:sh - ey, sw - strip:].max(axis=1))
    if any(float(np.mean(edge >= level)) < FRAME_PAPER for edge in edges):
        return None
    corners = _portrait_order(np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], np.float64))
    return CardQuad(corners.astype(np.float32), 0.0, max(h, w) / min(h, w), 0.0, frame=True)


def _outline_quads(contour: np.ndarray, area: float, white: np.ndarray, shape, from_edges: bool
                   ) -> list[CardQuad]:
    """The candidates one outline gives: the quadrilateral enclosing it, and,
    for an edge trace that holds more than a card or less, the card sought
    among its long straight runs."""
    found = []
    outline = contour.reshape(-1, 2).astype(np.float64)
    quad = _outline_quad(contour, outline, area, white, shape, from_edges)
    if quad is not None:
        found.append(quad)
    if from_edges and (quad is None or quad.weakest < 0.5 or abs(np.log(quad.aspect / CARD_ASPECT)) > 0.12):
        # the outline holds more than the card, or less: look for its sides
        found += _line_quads(contour, outline, white, shape)
    return found


def _outline_quad(contour: np.ndarray, outline: np.ndarray, area: float, white: np.ndarray, shape,
                  from_edges: bool = False) -> CardQuad | None:
    """The quadrilateral enclosing `contour` (its points as floats: `outline`), sides refitted, judged."""
    hull = cv2.convexHull(contour)
    hull_area = cv2.contourArea(hull)
    if hull_area <= 0:
        return None
    peri = cv2.arcLength(hull, True)
    found: np.ndarray | None = cv2.approxPolyDP(hull, 0.01 * peri, True).reshape(-1, 2).astype(np.float64)
    if found is None or len(found) < 4:
        return None
    poly = _reduce_to_quad(found)
    if poly is None:
        return None
    poly = _refit_sides(poly, outline)
    if poly is None:
        return None
    quad_area = abs(_signed_area(poly))
    if quad_area <= 0:
        return None
    return _judge(poly, outline, area / quad_area, white, shape, from_edges)


def _judge(poly: np.ndarray, outline: np.ndarray, fill: float, white: np.ndarray, shape, from_edges: bool,
           partial: tuple[float, float] | None = None) -> CardQuad | None:
    """A candidate quadrilateral scored as a card, or None where it is no card:
    `fill` is the share of it the outline (or the outline's hull) covers;
    `partial`: its third side (poly[2] to poly[3]) was placed from the card's
    proportions, not seen: (the share of the card's length seen, the weight
    of the guess). No fill is asked for; its sides are judged along what is
    seen of them; it scores lower than any outline seen whole."""
    quad_area = abs(_signed_area(poly))
    if quad_area <= 0:
        return None
    h, w = shape
    # corners may lie a little outside the picture (a card cut by the frame's edge is not wanted)
    if (poly[:, 0] < -0.05 * w).any() or (poly[:, 0] > 1.05 * w).any() or (poly[:, 1] < -0.05 * h).any() or (
        poly[:, 1] > 1.05 * h
    ).any():
        return None
    # sides lying along the picture's border belong to the picture, not to a card
    along = 0
    for i in range(4):
        a, b = poly[i], poly[(i + 1) % 4]
        for axis, limit in ((0, 0.0), (0, w - 1.0), (1, 0.0), (1, h - 1.0)):
            if abs(a[axis] - limit) < 0.01 * (w, h)[axis] and abs(b[axis] - limit) < 0.01 * (w, h)[axis]:
                along += 1
    if along >= 2:
        return None
    if partial is None and (fill < (0.8 if from_edges else 0.35) or fill > 1.08):
        return None
    sides_seen = _side_support(poly, outline)
    support = float(np.mean(sides_seen))
    if partial is not None:
        seen = max(partial[0], 1e-3)
        sides_seen = [sides_seen[0], min(1.0, sides_seen[1] / seen), 0.0, min(1.0, sides_seen[3] / seen)]
        support = (sides_seen[0] + sides_seen[1] + sides_seen[3]) / 3
    if support < (PARTIAL_SUPPORT if partial is not None else 0.65 if from_edges else 0.55):
        return None  # the outline does not run along the sides: a blob, not a card
    sides = np.linalg.norm(poly - _next(poly), axis=1)
    pair_a, pair_b = sides[0] + sides[2], sides[1] + sides[3]
    aspect = max(pair_a, pair_b) / max(min(pair_a, pair_b), 1e-6)
    if not 1.0 <= aspect <= 2.0:
        return None
    if min(sides) < 0.35 * max(sides):
        return None
    points = poly.tolist()
    for i in range(4):  # no corner flatter than 45 or sharper than 135 degrees
        (ax, ay), (bx, by), (cx, cy) = points[i - 1], points[i], points[(i + 1) % 4]
        ux, uy, vx, vy = ax - bx, ay - by, cx - bx, cy - by
        if abs(ux * vx + uy * vy) > 0.71 * (math.hypot(ux, uy) * math.hypot(vx, vy) + 1e-9):
            return None
    # Brightness inside against a ring just outside: a card face stands out.
    # (within the quadrilateral's bounding box only: cheap on a big picture)
    x0, y0 = np.floor(poly.min(axis=0)).astype(int) - 6
    x1, y1 = np.ceil(poly.max(axis=0)).astype(int) + 6
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    patch = white[y0:y1, x0:x1]
    mask = np.zeros(patch.shape, np.uint8)
    cv2.fillConvexPoly(mask, np.round(poly - (x0, y0)).astype(np.int32), 255)
    inside = cv2.mean(patch, mask)[0]
    ring = cv2.bitwise_and(cv2.dilate(mask, np.ones((9, 9), np.uint8)), cv2.bitwise_not(mask))
    outside = cv2.mean(patch, ring)[0] if ring.any() else 0.0
    contrast = max(0.0, inside - outside) / 255.0
    aspect_fit = float(np.exp(-((np.log(aspect / CARD_ASPECT) / 0.2) ** 2)))
    size = quad_area / (h * w)
    score = (support**3) * (0.3 + aspect_fit) * (0.2 + contrast) * (size**0.35) * (0.5 + inside / 510)
    if partial is not None:
        score *= 0.5 * partial[1]
    corners = _portrait_order(poly)
    return CardQuad(corners.astype(np.float32), float(score), float(aspect), float(min(sides_seen)))


def _line_quads(contour: np.ndarray, outline: np.ndarray, white: np.ndarray, shape, keep: int = 3
                ) -> list[CardQuad]:
    """Quadrilaterals from the outline's long straight runs: two pairs of nearly
    parallel lines, the pairs nearly at right angles. A card's four sides are
    the longest straight lines of its outline even where its print runs to an
    edge and joins the outline of the card to that of the print, or a chip
    touches it: the print's and the chip's curves are no straight lines, where
    the quadrilateral enclosing the whole outline would take them in."""
    hull = cv2.convexHull(contour)
    hull_area = cv2.contourArea(hull)
    scale = float(np.sqrt(max(hull_area, 1.0)))
    poly = cv2.approxPolyDP(contour, max(1.5, 0.008 * scale), True).reshape(-1, 2).astype(np.float64)
    if len(poly) < 4:
        return []
    # straight runs, merged into lines (angle, offset, total length)
    lines: list[list[float]] = []
    ends = _next(poly)
    lengths = np.linalg.norm(ends - poly, axis=1)
    for i in np.argsort(-lengths):
        length = float(lengths[i])
        if length < 0.15 * scale:
            break
        d = (ends[i] - poly[i]) / length
        theta = float(np.arctan2(d[1], d[0]) % np.pi)
        normal = np.array([-np.sin(theta), np.cos(theta)])
        rho = float(normal @ (poly[i] + ends[i]) / 2)
        for line in lines:
            dt = abs(theta - line[0])
            dt = min(dt, np.pi - dt)
            # the same line: the offset compared with the angles of both
            if dt < np.radians(4) and abs(rho * (1 if abs(theta - line[0]) < np.pi / 2 else -1) - line[1]) < max(
                    3.0, 0.03 * scale):
                line[2] += length
                break
        else:
            lines.append([theta, rho, length])
        if len(lines) >= 6:
            break
    if len(lines) < 3:
        return []
    pairs = []
    for a in range(len(lines)):
        for b in range(a + 1, len(lines)):
            dt = abs(lines[a][0] - lines[b][0])
            dt = min(dt, np.pi - dt)
            if dt < np.radians(25):
                pairs.append((a, b))
    candidates = []
    for i, (a, b) in enumerate(pairs):
        for c, d in pairs[i + 1 :]:
            if len({a, b, c, d}) < 4:
                continue
            da = abs(lines[a][0] - lines[c][0])
            da = min(da, np.pi - da)
            if da < np.radians(55):
                continue  # the two pairs must cross nearly at right angles
            quad = _quad_of_lines([lines[k] for k in (a, c, b, d)])
            if quad is not None and abs(np.log(_aspect(quad) / CARD_ASPECT)) <= LINE_ASPECT + 0.05:
                candidates.append((sum(lines[k][2] for k in (a, b, c, d)), quad))
    candidates.sort(key=lambda c: -c[0])
    found = []
    for _, quad in candidates[:keep]:
        quad = _refit_sides(quad, outline, (0.012,))
        if quad is None or not _convex(quad):
            continue
        quad_area = abs(_signed_area(quad))
        if quad_area <= 0:
            continue
        inside, _ = cv2.intersectConvexConvex(hull.reshape(-1, 2).astype(np.float32), _ccw(quad).astype(np.float32))
        judged = _judge(quad, outline, float(inside) / quad_area, white, shape, True)
        # sides from straight runs must have a card's proportions (a chord of a
        # large curve is straight too)
        if judged is not None and abs(np.log(judged.aspect / CARD_ASPECT)) <= LINE_ASPECT:
            found.append(judged)
    # Three sides seen (two facing, one across them): where print runs off the
    # card onto a table as dark as it, the fourth side cannot be seen. It is
    # placed where the card's proportions put it, on the side of the outline.
    # (Also where four sides were found: a straight edge of print across the
    # card looks like a side.)
    hull_points = hull.reshape(-1, 2).astype(np.float64)
    centre = hull_points.mean(axis=0)
    hull_x, hull_y = hull_points[:, 0], hull_points[:, 1]
    partial = []
    for a, b in pairs:
        for c in range(len(lines)):
            if c in (a, b):
                continue
            da = abs(lines[a][0] - lines[c][0])
            da = min(da, np.pi - da)
            if da < np.radians(55):
                continue
            for quad in _three_sides(lines[a], lines[b], lines[c], centre):
                (x0, y0), (x1, y1), _, (x3, y3) = quad.tolist()
                across, along = math.hypot(x1 - x0, y1 - y0), math.hypot(x3 - x0, y3 - y0)
                dx, dy = (x3 - x0) / max(along, 1e-9), (y3 - y0) / max(along, 1e-9)
                seen = float((hull_x * dx + hull_y * dy).max()) - (x0 * dx + y0 * dy)
                # the side across seen mostly whole, the facing sides in good
                # part, and the card reaching well past what is seen of it
                if lines[c][2] >= 0.6 * across and min(lines[a][2], lines[b][2]) >= 0.2 * along and (
                        seen < 0.92 * along):
                    # print runs off a card's end more often than off its long
                    # sides alone: placing a short side is the likelier guess
                    weight = 1.0 if along > across else 0.3
                    partial.append((lines[a][2] + lines[b][2] + lines[c][2], quad, (seen / along, weight)))
    partial.sort(key=lambda c: -c[0])
    hull_area = max(hull_area, 1.0)
    hull32 = hull.reshape(-1, 2).astype(np.float32)
    tried: list[np.ndarray] = []
    for _, quad, guess in partial:
        # the outline lies within the card placed so
        if cv2.intersectConvexConvex(hull32, _ccw(quad).astype(np.float32))[0] < 0.95 * hull_area:
            continue
        if any(np.abs(quad - t).max() < 0.03 * scale for t in tried):
            continue  # the same card placed again (from the other trace of an edge)
        tried.append(quad)
        if len(tried) > keep + 1:
            break
        quad = _refit_sides(quad, outline, (0.012,))
        if quad is None or not _convex(quad):
            continue
        inside, _ = cv2.intersectConvexConvex(hull32, _ccw(quad).astype(np.float32))
        if inside < 0.97 * hull_area:
            continue
        judged = _judge(quad, outline, 1.0, white, shape, True, partial=guess)
        if judged is not None and abs(np.log(judged.aspect / CARD_ASPECT)) <= LINE_ASPECT:
            found.append(judged)
    return found


def _three_sides(a: list[float], b: list[float], c: list[float], centre: np.ndarray) -> list[np.ndarray]:
    """Quadrilaterals with facing sides on lines `a` and `b` and a third side on
    `c`, the fourth placed where a card's proportions put it (as a short side
    and as a long one), on the side of `c` where `centre` lies."""
    ca, cb = _meet(c, a), _meet(c, b)
    if ca is None or cb is None:
        return []
    across = math.hypot(cb[0] - ca[0], cb[1] - ca[1])
    if across < 1:
        return []
    cx, cy = float(centre[0]), float(centre[1])
    out = []
    for ratio in (CARD_ASPECT, 1 / CARD_ASPECT):
        length = across * ratio
        ends = []
        for (x, y), line in ((ca, a), (cb, b)):
            dx, dy = math.cos(line[0]), math.sin(line[0])
            if (cx - x) * dx + (cy - y) * dy < 0:
                dx, dy = -dx, -dy
            ends.append((x + dx * length, y + dy * length))
        quad = np.array([ca, cb, ends[1], ends[0]])
        if _convex(quad):
            out.append(quad)
    return out


def _meet(one: list[float], other: list[float]) -> tuple[float, float] | None:
    """Where two lines (angle, offset: the points p with p . (-sin, cos) = offset) meet;
    None where they are parallel or nearly."""
    s1, c1, s2, c2 = math.sin(one[0]), math.cos(one[0]), math.sin(other[0]), math.cos(other[0])
    det = c1 * s2 - s1 * c2
    if abs(det) < 1e-6:
        return None
    r1, r2 = one[1], other[1]
    return (c2 * r1 - c1 * r2) / det, (s2 * r1 - s1 * r2) / det


def _quad_of_lines(lines: list[list[float]]) -> np.ndarray | None:
    """The quadrilateral of four lines (angle, offset) given in order round it."""
    pts = []
    for i in range(4):
        p = _meet(lines[i - 1], lines[i])
        if p is None:
            return None
        pts.append(p)
    quad = np.array(pts)
    return quad if _convex(quad) else None


def _aspect(quad: np.ndarray) -> float:
    sides = np.linalg.norm(quad - _next(quad), axis=1)
    a, b = sides[0] + sides[2], sides[1] + sides[3]
    return float(max(a, b) / max(min(a, b), 1e-6))


def _convex(quad: np.ndarray) -> bool:
    q = quad.tolist()
    cross = []
    for i in range(4):
        (ax, ay), (bx, by), (cx, cy) = q[i], q[(i + 1) % 4], q[(i + 2) % 4]
        cross.append((bx - ax) * (cy - by) - (by - ay) * (cx - bx))
    return all(c > 0 for c in cross) or all(c < 0 for c in cross)


def _ccw(quad: np.ndarray) -> np.ndarray:
    return quad if _signed_area(quad) > 0 else quad[::-1]


def _side_support(quad: np.ndarray, outline: np.ndarray, bins: int = 40) -> list[float]:
    """Share of each of the quadrilateral's sides (rounded corners aside) that the
    outline runs along. A card's edges are mostly in view even when a picture or a finger
    breaks up its face; a round chip touches the sides of its quadrilateral only
    at four points."""
    t, dist, length = _along_sides(quad, outline)
    on = (dist < np.maximum(2.0, 0.02 * length)) & (t > 0.08 * length) & (t < 0.92 * length)
    hits: list[float] = []
    for i in range(4):
        k = ((t[i][on[i]] / length[i, 0] - 0.08) / 0.84 * bins).astype(int).clip(0, bins - 1)
        hits.append(int(np.count_nonzero(np.bincount(k, minlength=bins))) / bins)  # the bins hit
    return hits


def _along_sides(quad: np.ndarray, outline: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where the outline's points lie against each side of the quadrilateral, all four sides
    at once: how far along the side from its first corner (t, 4 x N) and how far off its
    line (dist, 4 x N), with the sides' lengths (4 x 1)."""
    t, off, length = _across_sides(quad, outline)
    return t, np.abs(off), length


def _across_sides(quad: np.ndarray, outline: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """As _along_sides, the offset from each side's line signed: positive inwards, towards the
    quadrilateral's middle."""
    d = _next(quad) - quad
    length = np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1])[:, None]
    u = d / np.maximum(length, 1e-9)
    rx = outline[:, 0] - quad[:, 0, None]
    ry = outline[:, 1] - quad[:, 1, None]
    ux, uy = u[:, 0, None], u[:, 1, None]
    middle = quad.mean(axis=0)
    inwards = np.sign((middle[0] - quad[:, 0]) * u[:, 1] - (middle[1] - quad[:, 1]) * u[:, 0])[:, None]
    return rx * ux + ry * uy, (rx * uy - ry * ux) * inwards, length


def _bows(quad: np.ndarray, outline: np.ndarray, bins: int = 12) -> np.ndarray | None:
    """Each side's bow (CardQuad.bows), or None where the card is not seen bowed. Along the middle
    of each side (its rounded corners left out) the outline's median offset in each of `bins`
    stretches, from points within 15% of the side's length of its line (a finger or a chip
    reaching farther is no part of the edge; a stretch where the outline runs twice, along the
    edge and along print beside it, is left out), is fitted by a + b t + c 4 t (1 - t); a side is
    bowed where the stretches are nearly all seen, lie on the fit within a pixel or 1% of the
    side (two that lie far off the fit of the rest left out), and the arc c reaches BOW_MIN of the side
    (BOW_MIN_PX at least). A card bends one way, and its raised middle, seen off the lens's axis,
    moves both its curved sides one way: its bow is taken where two opposite sides are bowed,
    one inwards and the one across outwards, and the other two are seen straight (their arcs
    under half as much), the straight sides' bows 0. Any other outline (a border printed round
    the face traced with the edge, two or four sides rounded outwards: a small card's blurred
    outline) is read as flat; so is a card bowed right under the lens (its middle only nearer,
    a percent larger)."""
    t, off, length = _across_sides(quad, outline)
    fits: list[tuple[np.ndarray, float] | None] = [None] * 4  # each side's (fit, arc against its least bow)
    pairs = (((0, 2), (1, 3)), ((1, 3), (0, 2)))  # (bowed, straight)

    def may(bowed: tuple[int, int], straight: tuple[int, int], upto: int) -> bool:
        """Whether the sides measured up to side `upto` leave this pair bowed and the other straight."""
        return all(j > upto or (f := fits[j]) is not None and f[1] >= 1 for j in bowed) and all(
            j > upto or (f := fits[j]) is not None and f[1] < 0.5 for j in straight)

    for i in range(4):
        fits[i] = _side_bow(t[i] / length[i, 0], off[i], float(length[i, 0]), bins)
        if not any(may(*pair, upto=i) for pair in pairs):
            return None  # a flat card: its first two sides straight
    for bowed, straight in pairs:
        one, across = fits[bowed[0]], fits[bowed[1]]
        if may(bowed, straight, 3) and one is not None and across is not None and one[0][2] * across[0][2] < 0:
            bows = np.zeros((4, 3), np.float32)  # one side arcs inwards, the one across outwards
            bows[list(bowed)] = one[0], across[0]
            return bows
    return None


def _side_bow(at: np.ndarray, off: np.ndarray, length: float, bins: int) -> tuple[np.ndarray, float] | None:
    """One side's fit a, b, c of its outline's offsets (`off`, at `at` of its length along it) and
    its arc |c| against the least bow (BOW_MIN of `length`, BOW_MIN_PX at least), or None where
    the side is not measured (stretches unseen, or lying off a smooth fit): _bows."""
    near = (at > 0.12) & (at < 0.88) & (np.abs(off) < 0.15 * length)
    if not near.any():
        return None
    k = ((at[near] - 0.12) / 0.76 * bins).astype(int).clip(0, bins - 1)
    offsets = off[near]
    counts = np.bincount(k, minlength=bins)
    # each stretch's median offset, all at once: the offsets sorted within their stretches
    ranked = offsets[np.lexsort((offsets, k))]
    first = np.cumsum(counts) - counts
    middle = (ranked[np.minimum(first + (counts - 1) // 2, len(ranked) - 1)]
              + ranked[np.minimum(first + counts // 2, len(ranked) - 1)]) / 2
    # a stretch holding twice the points of most holds more than the edge (print traced beside it)
    single = (counts > 0) & (counts <= 2 * np.median(counts[counts > 0]))
    if np.count_nonzero(single) < bins - 2:
        return None
    mid = 0.12 + (np.flatnonzero(single) + 0.5) * 0.76 / bins
    basis = np.stack([np.ones_like(mid), mid, 4 * mid * (1 - mid)], axis=1)
    median = middle[single]
    while True:  # a stretch far off the fit the rest lie on left out (a chip at the edge), two at most
        fit, *_ = np.linalg.lstsq(basis, median, rcond=None)
        miss = np.abs(basis @ fit - median)
        wander = float(np.sqrt(np.mean(miss * miss)))
        if miss.max() <= max(1.0, 2 * wander) or len(median) <= bins - 4:
            break
        keep = miss < miss.max()
        basis, median = basis[keep], median[keep]
    if wander > max(1.0, 0.01 * length):
        return None
    return fit, abs(float(fit[2])) / max(BOW_MIN_PX, BOW_MIN * length)


def _signed_area(p: np.ndarray) -> float:
    x, y = p[:, 0], p[:, 1]
    return 0.5 * float(np.dot(x, _next(y)) - np.dot(y, _next(x)))


def _next(a: np.ndarray) -> np.ndarray:
    """np.roll(a, -1, axis=0), for less: each row's successor, the first after the last."""
    return np.concatenate((a[1:], a[:1]))


def _intersect(p1, p2, p3, p4) -> tuple[float, float] | None:
    """Intersection of line p1-p2 with line p3-p4, or None when parallel."""
    (x1, y1), (x2, y2), (x3, y3), (x4, y4) = p1, p2, p3, p4
    d1x, d1y, d2x, d2y = x2 - x1, y2 - y1, x4 - x3, y4 - y3
    den = d1x * d2y - d1y * d2x
    if abs(den) < 1e-9:
        return None
    t = ((x3 - x1) * d2y - (y3 - y1) * d2x) / den
    return x1 + t * d1x, y1 + t * d1y


def _reduce_to_quad(poly: np.ndarray) -> np.ndarray | None:
    """Drop edges of a convex polygon one by one, each time the one whose removal
    (extending its neighbours to meet) adds the least area, until four remain."""
    pts: list[tuple[float, float]] = [(float(x), float(y)) for x, y in poly]
    while len(pts) > 4:
        n = len(pts)
        best, best_cost, best_point = -1, math.inf, (0.0, 0.0)
        for i in range(n):
            a, b, c, d = pts[i - 1], pts[i], pts[(i + 1) % n], pts[(i + 2) % n]
            x = _intersect(a, b, c, d)
            if x is None:
                continue
            (ax, ay), (bx, by), (cx, cy), (dx, dy), (xx, xy) = a, b, c, d, x
            # the new vertex must lie beyond the removed edge (outside), forming a triangle b-x-c
            if (xx - bx) * (bx - ax) + (xy - by) * (by - ay) < 0 or (xx - cx) * (cx - dx) + (xy - cy) * (cy - dy) < 0:
                continue
            cost = abs(0.5 * ((bx * xy + xx * cy + cx * by) - (by * xx + xy * cx + cy * bx)))
            if cost < best_cost:
                best, best_cost, best_point = i, cost, x
        if best < 0:
            return None
        pts[best] = best_point
        del pts[(best + 1) % n]
    return np.array(pts)


def _refit_sides(quad: np.ndarray, outline: np.ndarray, tolerances: tuple[float, ...] = (0.03, 0.012)
                 ) -> np.ndarray | None:
    """Fit each side to the outline points along its middle part, then meet the
    sides again: corners of the card's rectangle, not of its rounded outline."""
    refined = quad
    # Twice: the first pass finds the sides, the second drops what still clings
    # to them (a chip touching the card, a finger over its edge). Sides found
    # as straight runs are near already: the second pass alone.
    for tolerance in tolerances:
        t, dist, length = _along_sides(refined, outline)
        if length.min() < 1:
            return None
        near = (t > 0.12 * length) & (t < 0.88 * length) & (dist < np.maximum(2.0, tolerance * length))
        counts = near.sum(axis=1)
        lines = []
        for i in range(4):
            if counts[i] >= 8:
                points = outline[near[i]]
                if len(points) > FIT_POINTS:
                    points = points[:: -(-len(points) // FIT_POINTS)]
                vx, vy, x0, y0 = cv2.fitLine(points.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
                lines.append(((float(x0), float(y0)), (float(x0 + vx), float(y0 + vy))))  # float32 sums
            else:
                lines.append((tuple(refined[i].tolist()), tuple(refined[(i + 1) % 4].tolist())))
        out = []
        for i in range(4):
            p = _intersect(*lines[i - 1], *lines[i])
            if p is None:
                return None
            out.append(p)
        refined = np.array(out)
    if np.abs(refined - quad).max() > 0.2 * max(np.ptp(quad[:, 0]), np.ptp(quad[:, 1])):
        return quad  # refit went astray: keep the enclosing quadrilateral
    return refined


def _portrait_order(poly: np.ndarray) -> np.ndarray:
    """Clockwise on screen, starting so that the first side is a short side."""
    if _signed_area(poly) < 0:  # image y runs down: positive area is clockwise on screen
        poly = poly[::-1]
    sides = np.linalg.norm(poly - _next(poly), axis=1)
    if sides[0] + sides[2] > sides[1] + sides[3]:
        poly = _next(poly)
    # start from the corner nearest the picture's top-left, among the two short-side starts
    if poly[2].sum() < poly[0].sum():
        poly = np.roll(poly, -2, axis=0)
    return poly


def warp_card(image: np.ndarray, quad: CardQuad, size: tuple[int, int] = (CANON_W, CANON_H)) -> np.ndarray:
    """The card flattened to a portrait `size` (width, height) image."""
    corners = quad.corners.astype(np.float64)
    w, h = size
    span = max(np.linalg.norm(corners[0] - corners[3]), np.linalg.norm(corners[1] - corners[2]))
    x0, y0 = np.floor(corners.min(axis=0)).astype(int)
    x1, y1 = np.ceil(corners.max(axis=0)).astype(int)
    x0, y0 = max(x0 - 2, 0), max(y0 - 2, 0)
    x1, y1 = min(x1 + 2, image.shape[1]), min(y1 + 2, image.shape[0])
    crop = image[y0:y1, x0:x1]
    corners = corners - (x0, y0)
    out = size
    scale = 1.0  # the crop's pixels to the picture's
    if span > 1.6 * h:
        # A large card: warped straight to the size, it would alias. It is flattened at twice the size
        # and halved (each pixel the mean of 2 x 2), the crop first halved alike while still more than
        # twice too large: OpenCV's fast paths, where an area average of the crop to the size costs
        # twice as much (10 ms for a card 700 px tall, one core).
        while span > 3.2 * h:
            crop = halve(crop)
            corners, span, scale = corners / 2 - 0.25, span / 2, scale / 2  # pixel centres: (x + 0.5) / 2 - 0.5
        out = (2 * w, 2 * h)
    dst = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    if out != size:
        dst = 2 * dst + 0.5  # where the halving puts each pixel of the size
    m = cv2.getPerspectiveTransform(corners.astype(np.float32), dst)
    if quad.bows is None:
        card = cv2.warpPerspective(crop, m, out, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    else:
        map_x, map_y = _unbowed_maps(np.linalg.inv(m), corners, quad.bows * np.float32(scale), out)
        card = cv2.remap(crop, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return card if out == size else cv2.resize(card, size, interpolation=cv2.INTER_AREA)


def _unbowed_maps(inverse: np.ndarray, corners: np.ndarray, bows: np.ndarray, out: tuple[int, int]
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Where each pixel of the flattened card (`out`: its width and height) lies in the picture
    when the card's sides are bowed: the point the flat card's homography (`inverse`: the
    flattened card to the picture) puts it at, moved inwards from each side's line by that side's
    bow (CardQuad.bows, in the picture's pixels), each side's share falling linearly to nothing
    at the opposite side (a Coons patch over the four curved sides: each side of the flattened
    card lands on its curve, the corners where the curves meet)."""
    w, h = out
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    flat = cv2.perspectiveTransform(np.stack([xs, ys], axis=-1).reshape(-1, 1, 2), inverse.astype(np.float64))
    flat = flat.reshape(h, w, 2)
    u, v = np.clip(xs / np.float32(w), 0, 1), np.clip(ys / np.float32(h), 0, 1)
    middle = corners.mean(axis=0)
    moved = np.zeros((h, w, 2), np.float32)
    # side i: its place along it (t) and its weight at each pixel of the flattened card
    for i, (t, weight) in enumerate(((u, 1 - v), (v, u), (1 - u, v), (1 - v, 1 - u))):
        a, b, c = (float(x) for x in bows[i])
        if a == b == c == 0:
            continue
        d = corners[(i + 1) % 4] - corners[i]
        normal = np.array([-d[1], d[0]], np.float32) / np.float32(np.hypot(d[0], d[1]))
        if (middle - corners[i]) @ normal < 0:
            normal = -normal
        offset = (a + b * t + c * 4 * t * (1 - t)) * weight
        moved += offset[..., None] * normal
    where = flat + moved
    return np.ascontiguousarray(where[..., 0]), np.ascontiguousarray(where[..., 1])
