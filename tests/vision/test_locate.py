"""Finding the card in a photograph and flattening it to a portrait card.

A card is 63 x 88 mm (the aspect the search looks for, with its rounded
corners); its index is in two opposite corners, the same turned half a turn,
so a portrait flattening is all that is needed (issue: camera fallback).
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from shoed.vision import locate as L
from tests.vision.framing import corner_error, filling
from vision_lab import synth


def test_cards_are_found_where_they_are(classic_shots):
    misses = []
    for shot in classic_shots[:30]:
        if shot.kind != "card":
            continue
        quad = L.find_card(shot.image)
        size = max(shot.image.shape[:2])
        if quad is None or corner_error(quad.corners, shot.corners) > 0.02 * size:
            misses.append(shot.card)
    assert len(misses) <= 1, misses


def test_corners_come_in_portrait_order(classic_shots):
    quad = L.find_card(classic_shots[0].image)
    tl, tr, br, bl = quad.corners
    top, side = np.linalg.norm(tr - tl), np.linalg.norm(bl - tl)
    assert top < side  # the first side is a short one
    cross = (tr - tl)[0] * (bl - tl)[1] - (tr - tl)[1] * (bl - tl)[0]
    assert cross > 0  # clockwise on screen (y runs down)


def test_flattened_card_is_portrait_and_canonical(classic_shots):
    shot = classic_shots[2]
    card = L.warp_card(shot.image, L.find_card(shot.image))
    assert card.shape == (L.CANON_H, L.CANON_W, 3)
    # the paper is bright: the flattening holds card, not table
    assert np.median(card) > 120


@pytest.mark.parametrize(
    "polygon, expected",
    [
        # a rounded rectangle's outline, cut at its corners: the rectangle comes back
        ([(10, 0), (90, 0), (100, 10), (100, 130), (90, 140), (10, 140), (0, 130), (0, 10)],
         [(0, 0), (100, 0), (100, 140), (0, 140)]),
        # one corner hidden (a finger): the two sides are extended to meet again
        ([(0, 0), (100, 0), (100, 100), (60, 140), (0, 140)], [(0, 0), (100, 0), (100, 140), (0, 140)]),
    ],
)
def test_reduce_to_quad_restores_the_corners(polygon, expected):
    quad = L._reduce_to_quad(np.array(polygon, float))
    assert quad is not None and len(quad) == 4
    assert corner_error(quad, expected) < 1e-6 or corner_error(quad[::-1], expected) < 1e-6


@pytest.mark.parametrize("angle", [3.0, 17.0, 41.0])
def test_sides_fitted_to_every_fifth_point_meet_at_the_card_s_corners(angle, monkeypatch):
    """A rounded card drawn tilted, 600 px tall (sides of 400-600 outline points): its sides
    fitted to at most FIT_POINTS points each, evenly spaced, meet where the drawn card's corners
    are, and within a tenth of a pixel of where the sides fitted to every point meet."""
    w, h, r = 430.0, 600.0, 24.0
    c, s = np.cos(np.radians(angle)), np.sin(np.radians(angle))
    turn = np.array([[c, -s], [s, c]])
    corners = (np.array([(-w, -h), (w, -h), (w, h), (-w, h)]) / 2) @ turn.T + 500
    scale = 8  # drawn at 8 x and shrunk: edges a camera would give, not a staircase
    mask = np.zeros((1000 * scale, 1000 * scale), np.uint8)
    inner = (np.array([(-w, -h), (w, -h), (w, h), (-w, h)]) / 2 * (1 - 2 * r / np.array([w, h]))) @ turn.T + 500
    pts = [(p * scale).round().astype(np.int32) for p in inner]
    cv2.fillConvexPoly(mask, np.array(pts), 255)
    for p in pts:
        cv2.circle(mask, tuple(int(v) for v in p), int(r * scale), 255, -1)
    for a, b in zip(pts, pts[1:] + pts[:1]):
        cv2.line(mask, tuple(int(v) for v in a), tuple(int(v) for v in b), 255, int(2 * r * scale))
    small = cv2.resize(mask, (1000, 1000), interpolation=cv2.INTER_AREA)
    contour = max(cv2.findContours((small > 127).astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)[0],
                  key=len)
    outline = contour.reshape(-1, 2).astype(np.float64)
    start = L._reduce_to_quad(cv2.approxPolyDP(cv2.convexHull(contour), 4, True).reshape(-1, 2).astype(float))
    assert start is not None
    few = L._refit_sides(start, outline)
    monkeypatch.setattr(L, "FIT_POINTS", 10**9)
    every = L._refit_sides(start, outline)
    assert few is not None and every is not None
    # the outline runs through the centres of the card's outermost pixels, half a pixel inside
    # its edges: a corner found within a pixel of the drawn one is where the outline puts it
    truth = corners - 0.5  # pixel (i, j) covers i - 0.5 .. i + 0.5 of the drawing scaled down
    assert min(corner_error(few, truth), corner_error(few[::-1], truth)) < 1.0
    assert np.abs(few - every).max() < 0.1


def test_nothing_card_shaped_on_an_empty_table():
    rng = np.random.default_rng(5)
    table = synth.draw_background(1280, 960, rng, clutter=0)
    assert L.find_card(table) is None


def test_large_photographs_are_searched_small_and_flattened_sharp():
    rng = np.random.default_rng(9)
    shot = synth.photograph("QD", rng, size=(3024, 4032), size_frac=(0.5, 0.6), occlusion_p=0)
    quad = L.find_card(shot.image)
    assert quad is not None
    assert corner_error(quad.corners, shot.corners) < 0.01 * 4032


def _waves(w: int, h: int) -> np.ndarray:
    """A smooth colour picture w x h: print seen through a lens is no finer."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    image = (127 + 60 * np.sin(xx / 37.0) * np.cos(yy / 53.0) + 40 * np.sin((xx + yy) / 91.0)).astype(np.uint8)
    return np.dstack([image, 255 - image, image // 2])


@pytest.mark.parametrize("size", [(4032, 3024), (2016, 1512), (1920, 1080), (1280, 720), (1279, 957), (1000, 700),
                                  (960, 540)])
def test_the_copy_searched_for_outlines_is_the_size_asked_for_and_maps_coordinates(size):
    """The locator's copy (halvings, then bilinear for the rest) has its long side DETECT_SIDE
    (a smaller picture is left as it is), its factor maps coordinates, and it differs from a
    one-step area average by a grey level or so."""
    import cv2

    w, h = size
    image = _waves(w, h)
    small, f = L.downscale(image)
    want = min(1.0, L.DETECT_SIDE / max(w, h))
    assert small.shape[:2] == (round(h * want), round(w * want))
    assert abs(f - want) < 4 / w
    if want == 1.0:
        assert small is image
        return
    direct = cv2.resize(image, (small.shape[1], small.shape[0]), interpolation=cv2.INTER_AREA)
    diff = np.abs(small.astype(np.int16) - direct.astype(np.int16))
    assert float(diff.mean()) < 1.0 and int(diff.max()) <= 12, (float(diff.mean()), int(diff.max()))


@pytest.mark.parametrize("shape", [(1, 20000), (20000, 2), (3, 5000), (1, 1), (2, 1)])
def test_a_strip_of_picture_holds_no_card_and_breaks_nothing(shape):
    """A picture a pixel or a few wide, however long (a hostile or broken file), is searched
    as it is and holds no card: no error from halving a side of one pixel to none."""
    from shoed.vision.recognize import identify

    image = np.full(shape + (3,), 200, np.uint8)
    small, _ = L.downscale(image)
    assert min(small.shape[:2]) >= 1 and max(small.shape[:2]) <= L.DETECT_SIDE
    assert L.find_quads(image) == []
    assert identify(image).reason == "no card found"


@pytest.mark.parametrize("span", [300, 700, 1300, 2900])
def test_a_large_card_is_flattened_as_an_area_average_would(span):
    """A card larger than 1.6 times the flattened size is warped at twice the size and halved
    (halved first while more than twice too large): it differs from the card shrunk by one area
    average and then warped by a grey level or so; a small card is warped directly."""
    import cv2

    w, h = int(span * 1.1), int(span * 1.15)
    image = _waves(w, h)
    corners = np.array([[0.06, 0.04], [0.74, 0.07], [0.79, 0.9], [0.05, 0.86]]) * (w, h)
    corners[:, 1] *= span / np.linalg.norm(corners[0] - corners[3])
    quad = L.CardQuad(corners.astype(np.float32), 1.0, 1.4, 1.0)
    card = L.warp_card(image, quad)
    assert card.shape[:2] == (L.CANON_H, L.CANON_W)
    f = min(1.0, 1.6 * L.CANON_H / span)
    small = cv2.resize(image, None, fx=f, fy=f, interpolation=cv2.INTER_AREA) if f < 1 else image
    dst = np.float32([[0, 0], [L.CANON_W, 0], [L.CANON_W, L.CANON_H], [0, L.CANON_H]])
    m = cv2.getPerspectiveTransform(((corners + 0.5) * f - 0.5).astype(np.float32), dst)  # pixel centres
    direct = cv2.warpPerspective(small, m, (L.CANON_W, L.CANON_H), flags=cv2.INTER_LINEAR,
                                 borderMode=cv2.BORDER_REPLICATE)
    diff = np.abs(card.astype(np.int16) - direct.astype(np.int16))
    assert float(diff.mean()) < 1.0 and int(diff.max()) <= 12, (float(diff.mean()), int(diff.max()))


def test_a_card_in_a_twelve_megapixel_photograph_is_flattened_where_it_lies():
    """The card of a phone's 12 MP photograph is found and flattened through the
    halvings: its index corner holds the index (dark print in the top-left)."""
    rng = np.random.default_rng(11)
    shot = synth.photograph("KS", rng, size=(4032, 3024), size_frac=(0.8, 0.95), occlusion_p=0)
    quad = L.find_card(shot.image)
    assert quad is not None and corner_error(quad.corners, shot.corners) < 0.01 * 4032
    card = L.warp_card(shot.image, quad)
    assert card.shape[:2] == (L.CANON_H, L.CANON_W)
    corner, middle_edge = card[5:60, 5:45].min(), card[200:220, 5:20].min()
    assert corner < 120 < middle_edge, (corner, middle_edge)


def _box(x: float, y: float, w: float = 100, h: float = 140) -> L.CardQuad:
    return L.CardQuad(np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], np.float32), 1.0, h / w)


@pytest.mark.parametrize("other, share", [
    (_box(200, 0), 0.0),  # beside it
    (_box(95, 0), 0.05),  # touching it
    (_box(50, 0), 0.5),  # half over it
    (_box(10, 10, 80, 120), 1.0),  # within it: the card's printed frame
    (_box(-20, -20, 140, 180), 1.0),  # around it: an outline cut wider
])
def test_the_overlap_of_two_outlines_is_a_share_of_the_smaller(other, share):
    assert L.overlap(_box(0, 0), other) == pytest.approx(share, abs=1e-6)
    assert L.overlap(other, _box(0, 0)) == pytest.approx(share, abs=1e-6)


def _outline(left_bow: float, right_bow: float, top_bow: float = 0.0, bottom_bow: float = 0.0) -> np.ndarray:
    """The traced outline of a card 200 x 280 px at (100, 60), its corners rounded (radius 12), each
    side an arc rising `*_bow` px inwards at its middle (negative: outwards)."""
    x0, y0, w, h, r = 100.0, 60.0, 200.0, 280.0, 12.0
    points = []
    for (ax, ay), (bx, by), bow in (((x0, y0), (x0 + w, y0), top_bow), ((x0 + w, y0), (x0 + w, y0 + h), right_bow),
                                    ((x0 + w, y0 + h), (x0, y0 + h), bottom_bow), ((x0, y0 + h), (x0, y0), left_bow)):
        length = float(np.hypot(bx - ax, by - ay))
        ux, uy = (bx - ax) / length, (by - ay) / length
        nx, ny = -uy, ux  # inwards for a side run clockwise on screen
        for s in np.arange(r, length - r, 1.0):
            t = s / length
            lift = bow * 4 * t * (1 - t)
            points.append((ax + ux * s + nx * lift, ay + uy * s + ny * lift))
    return np.round(np.array(points)).astype(np.float64)


def test_a_card_bowed_one_way_is_measured_so_and_a_flat_or_rounded_one_is_flat():
    quad = np.array([[100, 60], [300, 60], [300, 340], [100, 340]], np.float64)
    bowed = L._bows(quad, _outline(8.0, -8.0))  # bent sideways: its long sides curve alike
    assert bowed is not None
    assert abs(bowed[3][2] - 8.0) < 1.0 and abs(bowed[1][2] + 8.0) < 1.0, bowed
    assert not bowed[0].any() and not bowed[2].any(), bowed  # the short sides are straight
    assert L._bows(quad, _outline(0.0, 0.0)) is None  # flat
    assert L._bows(quad, _outline(1.0, -1.0)) is None  # a pixel's waver is no bow
    assert L._bows(quad, _outline(-6.0, -6.0, -6.0, -6.0)) is None  # every side rounded: no card bends so
    assert L._bows(quad, _outline(-8.0, -8.0)) is None  # two sides rounded outwards: a blurred small outline
    assert L._bows(quad, _outline(8.0, -8.0, 5.0)) is None  # bent two ways at once


@pytest.fixture(scope="module")
def bend(effects):
    return effects.bend


@pytest.mark.parametrize("size", [(640, 480), (1600, 1200)])
def test_a_bowed_card_is_flattened_along_its_curved_sides(bend, size):
    """A card bowed along its length or across its width (benchmarks/vision_effects.py's bend) is
    flattened along its four curved sides: the flattened card lies nearer the flat card's
    flattening than the one through the four straight sides' corners does (in the corners, where
    the index is), at phone size and where the card is large enough to be flattened at twice the
    size and halved."""
    shot = synth.photograph("KS", np.random.default_rng(5), size=size, size_frac=(0.6, 0.75), occlusion_p=0)
    flat = L.warp_card(shot.image, L.find_card(shot.image)).astype(np.int16)
    index = np.zeros(flat.shape[:2], bool)
    index[:90, :70] = index[-90:, -70:] = True
    for seed in range(4):
        picture = bend(shot.image, np.random.default_rng(seed), np.float32(shot.corners))
        quad = L.find_card(picture)
        assert quad is not None and quad.bows is not None, seed
        straight = L.CardQuad(quad.corners, quad.score, quad.aspect, quad.weakest)
        off_straight = np.abs(L.warp_card(picture, straight).astype(np.int16) - flat)[index].mean()
        off_bowed = np.abs(L.warp_card(picture, quad).astype(np.int16) - flat)[index].mean()
        assert off_bowed < 0.6 * off_straight, (seed, off_bowed, off_straight)


def test_flat_cards_are_seen_flat(classic_shots):
    cards = [shot for shot in classic_shots if shot.kind == "card"]
    bowed = [shot.card for shot in cards if (q := L.find_card(shot.image)) is not None and q.bows is not None]
    assert len(bowed) <= 0.05 * len(cards), bowed


@pytest.mark.parametrize("box, square, turns", [((0, 0, 1, 1), False, 0), ((0.02, 0.02, 0.98, 0.98), True, 0),
                                                ((0, 0, 1, 1), True, 3)])
def test_a_picture_that_is_the_card_is_its_own_outline(box, square, turns):
    """A still cut to the card (to its edges, or a little into it; squeezed to a square; turned a
    quarter) has no outline of its own: the picture's frame is the card's, in portrait order,
    offered after every outline found."""
    picture = filling("7H", box, 420, square, turns)
    quads = L.find_quads(picture)
    assert quads and quads[-1].frame and not any(q.frame for q in quads[:-1])
    quad = quads[-1]
    h, w = picture.shape[:2]
    assert corner_error(quad.corners, [(0, 0), (w - 1, 0), (w - 1, h - 1), (0, h - 1)]) < 1
    tl, tr, _, bl = quad.corners
    assert np.linalg.norm(tr - tl) <= np.linalg.norm(bl - tl)  # the first side is the short one
    assert all(q.score > quad.score for q in quads[:-1])  # offered after every outline found


def test_a_card_cut_with_a_sliver_of_the_table_is_found_by_its_own_outline():
    """Cut with a sliver of the table all round (1.5% of the card), the card's own outline is found,
    covering most of the picture (FRAME_FOUND): the frame, a second look at the same card, is not
    offered."""
    picture = filling("7H", (-0.015, -0.015, 1.015, 1.015), 420, False, 1)
    quads = L.find_quads(picture)
    h, w = picture.shape[:2]
    assert quads and abs(cv2.contourArea(quads[0].corners)) >= L.FRAME_FOUND * h * w
    assert not any(q.frame for q in quads)


@pytest.mark.parametrize("what", ["on the table", "the table beside it", "a strip", "the empty table"])
def test_a_picture_that_is_not_the_card_has_no_frame_outline(what):
    """The frame is the card's only where card stock runs along all four of its edges: not a card
    lying on the table, not a card with the table along one side, not a picture more than twice as
    long as it is wide, not the table alone."""
    rng = np.random.default_rng(17)
    picture = {
        "on the table": lambda: synth.photograph("7H", rng, size=(640, 480), occlusion_p=0).image,
        "the table beside it": lambda: filling("7H", (-0.3, 0, 1, 1)),
        "a strip": lambda: filling("7H", (0, 0.3, 1, 0.6)),
        "the empty table": lambda: synth.draw_background(640, 480, rng, clutter=0),
    }[what]()
    assert not any(q.frame for q in L.find_quads(picture))
