"""Finding the card in a photograph and flattening it to a portrait card.

A card is 63 x 88 mm (the aspect the search looks for, with its rounded
corners); its index is in two opposite corners, the same turned half a turn,
so a portrait flattening is all that is needed (issue: camera fallback).
"""

from __future__ import annotations

import numpy as np
import pytest

from shoed.vision import locate as L
from vision_lab import synth


def corner_error(found: np.ndarray, truth) -> float:
    truth = np.asarray(truth)
    return min(float(np.abs(np.roll(found, k, axis=0) - truth).max()) for k in range(4))


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


@pytest.mark.parametrize("size, f", [((4032, 3024), 960 / 4032), ((2016, 1512), 960 / 2016), ((1279, 957), 0.5),
                                     ((1000, 700), 0.8)])
def test_a_shrunk_picture_is_the_mean_of_what_it_covers(size, f):
    """A large shrink is done in two steps (whole blocks averaged, then the rest):
    the picture is the size asked for, its coordinates map by the factors given,
    and it differs from a one-step area average by a grey level or so."""
    import cv2

    w, h = size
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    image = (127 + 60 * np.sin(xx / 37.0) * np.cos(yy / 53.0) + 40 * np.sin((xx + yy) / 91.0)).astype(np.uint8)
    image = np.dstack([image, 255 - image, image // 2])
    small, fx, fy = L.shrink(image, f)
    assert small.shape[:2] == (round(h * f), round(w * f))
    assert abs(fx - f) < 2 * f / w * max(1, int(1 / f)) + 1e-3 and abs(fy - f) < 1e-2
    direct = cv2.resize(image, (small.shape[1], small.shape[0]), interpolation=cv2.INTER_AREA)
    diff = np.abs(small.astype(np.int16) - direct.astype(np.int16))
    assert float(diff.mean()) < 1.0 and int(diff.max()) <= 12


def test_a_card_in_a_twelve_megapixel_photograph_is_flattened_where_it_lies():
    """The card of a phone's 12 MP photograph is found and flattened through the
    two-step shrink: its index corner holds the index (dark print in the top-left)."""
    rng = np.random.default_rng(11)
    shot = synth.photograph("KS", rng, size=(4032, 3024), size_frac=(0.8, 0.95), occlusion_p=0)
    quad = L.find_card(shot.image)
    assert quad is not None and corner_error(quad.corners, shot.corners) < 0.01 * 4032
    card = L.warp_card(shot.image, quad)
    assert card.shape[:2] == (L.CANON_H, L.CANON_W)
    corner, middle_edge = card[5:60, 5:45].min(), card[200:220, 5:20].min()
    assert corner < 120 < middle_edge, (corner, middle_edge)
