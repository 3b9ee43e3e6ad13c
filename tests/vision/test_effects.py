"""benchmarks/vision_effects.py: the effects that need the card's place do what they say (the
print of a layout lies under the card, dirt lies on it and only darkens, a finger covers part of
the card from beyond it, a bend curves the card's edges and keeps its corners, a lens out of
focus spreads a point over a disk, a cut leaves the card partly out of the picture, a pale
surface lies around the card), and the
search run small finds no wrong card under them."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.vision.framing import card_mask
from vision_lab import synth

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def shot():
    return synth.photograph("7H", np.random.default_rng(41), synth.classic_style(), size=(640, 480),
                            occlusion_p=0.0)


def _masks(shot):
    card = card_mask(shot.image.shape, shot.corners)
    inside = cv2.erode(card, np.ones((5, 5), np.uint8)) > 0
    outside = cv2.dilate(card, np.ones((5, 5), np.uint8)) == 0
    return inside, outside


def test_every_effect_named_is_defined(effects):
    for name in effects.EFFECTS:
        assert callable(getattr(effects, name)), name
    assert set(effects.ON_THE_CARD) <= set(effects.EFFECTS)


def test_a_layout_is_printed_around_the_card_never_over_it(effects, shot):
    inside, outside = _masks(shot)
    changed = np.zeros(inside.shape, bool)
    for seed in range(4):
        out = effects.layout(shot.image, np.random.default_rng(seed), np.float32(shot.corners))
        diff = np.abs(out.astype(int) - shot.image).max(axis=2) > 0
        assert not diff[inside].any(), seed
        changed |= diff
    assert changed[outside].mean() > 0.01  # lines and letters on the cloth


def test_dirt_lies_on_the_card_and_only_darkens(effects, shot):
    inside, outside = _masks(shot)
    darker = 0
    for seed in range(4):
        out = effects.smudge(shot.image, np.random.default_rng(seed), np.float32(shot.corners)).astype(int)
        assert (out <= shot.image).all()
        assert (out[outside] == shot.image[outside]).all()
        darker += int((out.sum(axis=2) < shot.image.sum(axis=2) - 30)[inside].sum())
    assert darker > 0


def test_a_finger_covers_part_of_the_card_and_reaches_in_from_beyond_it(effects, shot):
    inside, outside = _masks(shot)
    corner_index = np.zeros(inside.shape, bool)  # the top-left and bottom-right corners, a fifth of the card
    tl, br = np.float32(shot.corners)[0], np.float32(shot.corners)[2]
    reach = 0.2 * float(np.linalg.norm(br - tl))
    ys, xs = np.mgrid[0:inside.shape[0], 0:inside.shape[1]]
    for corner in (tl, br):
        corner_index |= np.hypot(xs - corner[0], ys - corner[1]) < reach
    on_an_index = 0
    for seed in range(8):
        out = effects.hand(shot.image, np.random.default_rng(seed), np.float32(shot.corners)).astype(int)
        skin = (np.abs(out - shot.image).max(axis=2) > 40) & (out[..., 2] > out[..., 0] + 30)  # redder than blue
        assert 0.02 < skin[inside].mean() < 0.5, seed  # over part of the card, never all of it
        assert skin[outside].any(), seed  # the finger comes from beyond the card
        on_an_index += bool((skin & inside & corner_index).any())
    assert on_an_index >= 2  # some fingers lie on a corner index


def test_a_bend_curves_the_card_between_its_ends_and_leaves_the_far_cloth(effects):
    # a white card, tilted and drawn in perspective, on a dark cloth with a weave: what the bend
    # moves is plain to see
    corners = np.float32([[220, 110], [390, 130], [370, 370], [190, 345]])
    weave = cv2.GaussianBlur(np.random.default_rng(3).uniform(0, 100, (480, 640)).astype(np.float32), (0, 0), 2)
    img = np.repeat((weave - weave.min()).astype(np.uint8)[..., None], 3, axis=2)
    cv2.fillPoly(img, [np.round(corners).astype(np.int32)], (255, 255, 255))
    card = img[..., 0] > 127
    card_h = float(np.linalg.norm(corners[3] - corners[0]))
    reach = int(0.4 * card_h) + 2  # 40% of the card's breadth along either axis, the height the larger
    far = cv2.dilate(card.astype(np.uint8), np.ones((2 * reach + 1, 2 * reach + 1), np.uint8)) == 0
    ends = {0: 0, 1: 0}
    for seed in range(12):
        out = effects.bend(img, np.random.default_rng(seed), corners)
        bent = out[..., 0] > 127
        assert (np.abs(out.astype(int) - img)[far] <= 1).all(), seed  # the far cloth stays
        for x, y in np.round(corners + (corners.mean(axis=0) - corners) * 0.04).astype(int):
            assert bent[y, x], seed  # the card's corners stay where they lay
        moved = (bent != card).sum() / (card_h * 2)  # the band between the edges before and after, in px
        assert 0.01 * card_h < moved < 0.1 * card_h, seed  # 2-6% of the card's height at the middle
        # which edges bowed: those along the card's length (its left and right edges) or its width
        middle_lr = [np.round((corners[a] + corners[b]) / 2).astype(int) for a, b in ((0, 3), (1, 2))]
        band = sum(int((bent != card)[y - 3:y + 4, x - 3:x + 4].sum()) for x, y in middle_lr)
        ends[int(band > 0)] += 1
    assert ends[0] and ends[1]  # both ways of bowing are drawn


def test_defocus_spreads_a_point_over_a_disk_of_the_size_it_says(effects):
    img = np.zeros((960, 1280, 3), np.uint8)
    img[479:482, 639:642] = 255  # a bright point, 3 px across
    sizes = []
    for seed in range(8):
        out = effects.defocus(img, np.random.default_rng(seed))[..., 1]
        ys, xs = np.nonzero(out > 6)
        assert abs(int(np.ptp(ys)) - int(np.ptp(xs))) <= 2, seed  # round, as wide as tall
        assert out.max() < 240, seed  # spread, not kept
        sizes.append(int(np.ptp(xs)) + 1 - 3)  # the disk's breadth, the point's own taken off
    assert 0.003 * 960 - 2 <= min(sizes) and max(sizes) <= 0.01 * 960 + 2, sizes  # 0.3-1% of the shorter side
    assert max(sizes) - min(sizes) >= 2, sizes  # a range of focus, not one


def test_a_cut_leaves_the_card_partly_out_of_the_picture(effects, shot):
    corners = np.float32(shot.corners)
    h, w = shot.image.shape[:2]
    for seed in range(8):
        out = effects.cut(shot.image, np.random.default_rng(seed), corners)
        oh, ow = out.shape[:2]
        assert (oh, ow) != (h, w) and (oh == h or ow == w)
        # where the picture was cut, some of the card lies beyond it: the part kept is the
        # picture's right or bottom part (an offset), or its left or top part (none)
        x0 = w - ow if ow < w and (out == shot.image[:, w - ow:]).all() else 0
        y0 = h - oh if oh < h and (out == shot.image[h - oh:]).all() else 0
        x, y = corners[:, 0] - x0, corners[:, 1] - y0
        assert ((x < 0) | (x > ow) | (y < 0) | (y > oh)).any(), seed


def test_fill_makes_the_card_the_picture_and_zoom_a_part_of_it(effects, shot):
    """`fill` flattens the card, a little more or less, to the whole picture (the frame the
    recogniser takes as the card's, or the card's own outline over most of it); `zoom` a part of the card cut by all four edges;
    `shrink` leaves a small camera's frame; both as tall as the photograph, or as wide turned."""
    corners = np.float32(shot.corners)
    h = shot.image.shape[0]
    from shoed.vision import locate

    for seed in range(6):
        filled = effects.fill(shot.image, np.random.default_rng(seed), corners)
        assert h in filled.shape[:2] and max(filled.shape[:2]) <= h
        quads = locate.find_quads(filled)
        fh, fw = filled.shape[:2]  # the picture's frame offered, or the card's own outline found over most of it
        assert quads[-1].frame or abs(cv2.contourArea(quads[0].corners)) >= locate.FRAME_FOUND * fh * fw, seed
        part = effects.zoom(shot.image, np.random.default_rng(seed), corners)
        assert h in part.shape[:2]
        small = effects.shrink(filled, np.random.default_rng(seed))
        assert max(small.shape[:2]) == effects.SHRUNK


def test_a_pale_surface_replaces_the_cloth_and_the_card_is_found_on_it(effects, shot):
    """`pale` leaves the card as it was and lays a pale surface around it (150 levels and more
    on the mean, no channel darker than 100 but in its darkest hundredth: no cloth left). On it
    the card is mostly found by its shadow and read, never as another card: a red card as it is; a
    black one, with no colour left in view, refused as `no_colour` unless the picture is known to be
    a colour camera's (--colour-camera). A surface as bright as the card's paper may hide its
    outline: the card is then refused."""
    from shoed.vision.recognize import NO_COLOUR, Recognizer

    quad, outside = _masks(shot)
    inside = effects._card_shape(shot.image.shape, np.float32(shot.corners)) >= 1  # its corners rounded
    assert (inside & quad).sum() >= 0.97 * quad.sum()
    recognizer = Recognizer()
    black = synth.photograph("7S", np.random.default_rng(41), synth.classic_style(), size=(640, 480),
                             occlusion_p=0.0)
    red_read = black_read = 0
    for seed in range(8):
        out = effects.pale(shot.image, np.random.default_rng(seed), np.float32(shot.corners))
        assert (out[inside] == shot.image[inside]).all(), seed
        surface = out[outside].astype(int)
        assert surface.mean() >= 150 and np.percentile(surface.min(1), 1) >= 100, seed  # no cloth left
        red = recognizer.identify(out).card
        assert red in ("7H", None), seed
        red_read += red == "7H"
        out = effects.pale(black.image, np.random.default_rng(seed), np.float32(black.corners))
        assert recognizer.identify(out).reason == NO_COLOUR, seed
        told = recognizer.identify(out, colour=True).card
        assert told in ("7S", None), seed
        black_read += told == "7S"
    assert red_read >= 6 and black_read >= 6, (red_read, black_read)


def test_the_search_under_them_runs_and_finds_no_wrong_card():
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "vision_effects.py"), "--ranks", "A",
         "--effects", "layout,vignette,smudge,hand,bend,cut", "--size", "320x240", "--seed", "9500"],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    rows = re.findall(r"^(\w+)\s*:\s+(\d+) pictures, right\s+([\d.]+)%, wrong (\d+), refused (\d+)", out.stdout, re.M)
    assert [r[0] for r in rows] == ["layout", "vignette", "smudge", "hand", "bend", "cut"], out.stdout
    for name, pictures, _right, wrong, _refused in rows:
        assert int(pictures) >= 100 and int(wrong) == 0, name
    assert float(rows[0][2]) > 50  # aces are read on a printed layout, not only refused
    assert "WRONG" not in out.stdout


def test_effects_joined_are_applied_in_turn(effects, shot):
    corners = np.float32(shot.corners)
    one = effects.apply_effects(effects.combine("smudge+glare+mirror"), shot.image, np.random.default_rng(5), corners)
    rng = np.random.default_rng(5)
    by_hand = effects.mirror(effects.glare(effects.smudge(shot.image, rng, corners), rng), rng)
    assert (one == by_hand).all()
    with pytest.raises(ValueError, match="put it first"):
        effects.combine("mirror+smudge")  # the card is no longer where its corners say
    with pytest.raises(ValueError, match="no effect"):
        effects.combine("glare+blurry")
    # A monochrome camera renders the lamp's reflection in its own hue: a white reflection over its tinted
    # picture is no picture a camera makes (it showed colour where the camera saw none).
    with pytest.raises(ValueError, match="renders glare in its own hue too; put glare first"):
        effects.combine("tinted+glare")
    assert effects.combine("glare+tinted") == ["glare", "tinted"]
    assert effects.combine("grey+shrink") == ["grey", "shrink"]


def test_a_night_mode_tints_the_picture_and_clips_its_highlights_white(effects):
    ramp = np.repeat(np.repeat(np.arange(256, dtype=np.uint8)[None, :, None], 64, axis=0), 3, axis=2)
    for seed in range(4):
        out = effects.night(ramp, np.random.default_rng(seed)).astype(int)
        assert (out[:, 250:] >= 245).all()  # the brightest clipped white in every channel
        middle = out[:, 120:136].reshape(-1, 3).mean(axis=0)
        assert middle.max() - middle.min() > 3  # the rest in the camera's tint
    with pytest.raises(ValueError, match="put glare first"):
        effects.combine("night+glare")
