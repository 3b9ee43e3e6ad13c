"""Finding the corner index (rank above suit) on a flattened card.

The index is a rank glyph above a suit symbol in two opposite corners (four
on some decks); ten is two digits side by side (issue: camera fallback).
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from shoed.vision import index as X
from shoed.vision import locate as L
from tests.vision.pip_masks import black_pip
from vision_lab import hard_sets, synth


def flat_face(label: str, seed: int = 3, style=None) -> tuple[np.ndarray, synth.Face]:
    """A drawn face scaled straight to the canonical card, on white (no photograph)."""
    face = synth.draw_face(label, np.random.default_rng(seed), style)
    img = face.image.copy()
    img[face.alpha < 128] = (40, 110, 30)  # the felt shows at the rounded corners
    return cv2.resize(img, (L.CANON_W, L.CANON_H), interpolation=cv2.INTER_AREA), face


@pytest.mark.parametrize("label", ["AS", "7H", "TD", "QC", "KD", "JS", "2C", "9H"])
def test_the_top_left_index_is_paired_where_it_was_printed(label):
    card, face = flat_face(label)
    views = X.read_views(card)
    top_left = views[0]
    assert top_left.name == "top-left"
    assert top_left.pairings, "no rank-over-suit pair found"
    # the printed index box, in canonical pixels
    x0, y0, x1, y1 = (v * L.CANON_W / synth.FACE_W for v in face.index_boxes[0])
    found = [p for p in top_left.pairings
             if abs(p.rank.x - x0) < 4 and abs(p.rank.y - y0) < 4 and abs(p.suit.bottom - y1) < 4]
    assert found, [(p.rank.x, p.rank.y, p.suit.bottom) for p in top_left.pairings]


def test_ten_is_read_as_one_mark_from_two_digits():
    card, _ = flat_face("TS", seed=11)
    pairs = X.read_views(card)[0].pairings
    assert any(len(p.rank.labels) == 2 for p in pairs)  # "1" and "0" merged


@pytest.mark.parametrize("label, red", [("5H", True), ("5D", True), ("5C", False), ("5S", False)])
def test_print_colour_is_measured(label, red):
    card, _ = flat_face(label)
    pair = X.read_views(card)[0].pairings[0]
    assert (pair.redness > 0.3) if red else (pair.redness < 0.1), pair.redness


def _disc_mark(colours: list[tuple[int, int, int]], radius: int = 13, fringe: int = 0) -> tuple[X.CornerView, X.Mark]:
    """A round mark where a corner index's suit is printed, in horizontal stripes of `colours`
    (BGR) with a black rim; `fringe`: a lens's colour fringes, blue and red shifted that many
    pixels apart either way."""
    card = np.full((L.CANON_H, L.CANON_W, 3), 245, np.uint8)
    centre = (32, 90)
    disc = np.zeros(card.shape[:2], np.uint8)
    cv2.circle(disc, centre, radius, 1, -1)
    rows = np.arange(L.CANON_H)[:, None] - (centre[1] - radius)
    stripe = np.clip(rows * len(colours) // (2 * radius + 1), 0, len(colours) - 1)
    painted = np.array(colours, np.uint8)[stripe[:, 0]][:, None, :]
    card = np.where(disc[..., None] > 0, np.broadcast_to(painted, card.shape), card)
    cv2.circle(card, centre, radius, (20, 20, 20), 2)
    if fringe:
        card[..., 0] = np.roll(card[..., 0], fringe, axis=1)
        card[..., 2] = np.roll(card[..., 2], -fringe, axis=1)
    view = X.corner_views(cv2.GaussianBlur(card, (0, 0), 0.7))[0]
    marks = X.find_marks(view)
    assert len(marks) == 1, marks
    return view, marks[0]


BLACK, SCARLET, CRIMSON = (20, 20, 20), (25, 40, 215), (70, 25, 200)
YELLOW, BLUE, GREEN = (30, 220, 240), (200, 90, 30), (50, 150, 40)


@pytest.mark.parametrize("colours, fringe", [([BLACK], 0), ([BLACK], 2), ([SCARLET], 0), ([CRIMSON], 0),
                                             ([CRIMSON], 2)])
def test_red_and_black_print_lies_on_red_and_black(colours, fringe):
    """Black and red print, a scarlet's or a crimson's, through a lens's colour fringes too,
    measures below the level from which its colour is doubted (recognize.OFF_COLOUR)."""
    from shoed.vision.recognize import OFF_COLOUR

    view, mark = _disc_mark(colours, fringe=fringe)
    assert X.off_colour(view.norm, mark) < OFF_COLOUR[0]


@pytest.mark.parametrize("colours, doubt", [([YELLOW, BLUE, SCARLET, BLUE, YELLOW], 0), ([YELLOW, BLUE], 1),
                                            ([BLUE], 1), ([GREEN], 1), ([YELLOW], 1)])
def test_print_in_other_colours_lies_off_red_and_black(colours, doubt):
    """A German bell striped in yellow, blue and red (its colour doubted), a four-colour deck's
    blue or green suit (taken as evenly red or black, recognize.OFF_COLOUR)."""
    from shoed.vision.recognize import OFF_COLOUR

    view, mark = _disc_mark(colours)
    assert X.off_colour(view.norm, mark) > OFF_COLOUR[doubt]


def test_a_mark_with_no_core_has_its_colour_not_asked():
    view, mark = _disc_mark([YELLOW], radius=2)
    assert X.off_colour(view.norm, mark) == 0.0


def test_marks_running_out_of_the_window_are_not_index_marks():
    card = np.full((L.CANON_H, L.CANON_W, 3), 250, np.uint8)
    # a picture frame line entering the corner window from the middle of the card
    cv2.rectangle(card, (60, 50), (280, 400), (20, 20, 20), 3)
    view = X.corner_views(card)[0]
    assert X.find_marks(view) == []


def test_the_card_edge_is_not_a_mark():
    card = np.full((L.CANON_H, L.CANON_W, 3), 250, np.uint8)
    card[:, :3] = (30, 90, 20)  # a sliver of felt along the left edge (the warp was a little wide)
    card[:2, :] = (30, 90, 20)
    assert X.find_marks(X.corner_views(card)[0]) == []


def test_glyph_vector_is_fixed_length_and_scale_free():
    canvas = np.zeros((60, 40), np.uint8)
    cv2.putText(canvas, "K", (2, 55), cv2.FONT_HERSHEY_SIMPLEX, 2.0, 255, 5, cv2.LINE_AA)
    big = canvas.astype(np.float32) / 255
    small = cv2.resize(big, (20, 30), interpolation=cv2.INTER_AREA)
    va = X.glyph_vector(big, big > 0.4)
    vb = X.glyph_vector(small, small > 0.4)
    assert va.shape == vb.shape == (X.FEATURES,)
    assert np.corrcoef(va[:400], vb[:400])[0, 1] > 0.9


def test_a_blank_card_has_no_index():
    card = np.full((L.CANON_H, L.CANON_W, 3), 245, np.uint8)
    assert all(not v.pairings for v in X.read_views(card))


@pytest.mark.parametrize("sigma", [2.5, 3.5])
def test_a_rank_blurred_into_its_suit_is_split_apart(sigma):
    """Blur runs a rank into the suit printed just under it: one tall mark and
    no index at the window's own ink level. Raised, the level parts them, and
    the corner has its rank over its suit again."""
    card = np.full((420, 300, 3), 235, np.uint8)
    cv2.putText(card, "8", (14, 52), cv2.FONT_HERSHEY_SIMPLEX, 1.3, (30, 30, 30), 4, cv2.LINE_AA)
    cv2.fillPoly(card, [np.array([[30, 55], [42, 69], [30, 83], [18, 69]], np.int32)], (30, 30, 30), cv2.LINE_AA)
    view = X.corner_views(cv2.GaussianBlur(card, (0, 0), sigma))[0]
    marks = X.find_marks(view)
    assert len(marks) == 1 and X.pairings(view, marks) == []
    found = X.index_pairings(view)
    assert found and all(p.rank.bottom <= p.suit.y + 2 and p.rank.h > 20 and p.suit.h > 20 for p in found)


def _faint_corner(rank_ink: float, suit_ink: float) -> X.CornerView:
    """A corner window: a thin "7" and a suit under it, a large solid pip beside them."""
    ink = np.zeros((180, 100), np.float32)
    cv2.line(ink, (16, 16), (34, 16), rank_ink, 2)
    cv2.line(ink, (34, 16), (24, 50), rank_ink, 2)
    cv2.circle(ink, (25, 68), 9, suit_ink, -1)
    cv2.circle(ink, (95, 90), 22, 1.0, -1)  # a pip, running off the window: no mark of its own
    return X.CornerView("top-left", cv2.GaussianBlur(ink, (0, 0), 0.8), np.zeros_like(ink), right=False)


def test_a_faint_rank_over_a_solid_suit_is_found_at_a_lower_level():
    """A thin stroke blurred in a small picture fades below the ink level that large pips beside it
    set: at the window's own level the suit stands alone. Lowered, the level finds the rank over it."""
    view = _faint_corner(0.4, 1.0)
    marks = X.find_marks(view)
    assert X.pairings(view, marks) == [] and len(marks) == 1
    found = X.index_pairings(view)
    assert found and all(p.rank.y < 20 and p.rank.h > 25 and p.suit.y > 50 for p in found)


def test_faint_marks_with_no_solid_suit_under_them_are_no_index():
    """Lowered, the level finds faint print anywhere (a pattern, the grain of the paper); only a rank
    over a suit that stands at the window's own level is an index."""
    view = _faint_corner(0.35, 0.35)
    assert X.find_marks(view) == [] and X.index_pairings(view) == []
    assert X.pairings(view, X.find_marks(view, -max(X.FAINT_LEVELS)))  # the marks are there, lowered


def _random_marks(rng: np.random.Generator, n: int) -> list[X.Mark]:
    """Marks of random boxes and shapes, crowded enough that pieces lie within others."""
    marks = []
    for k in range(n):
        w, h = int(rng.integers(1, 25)), int(rng.integers(1, 25))
        mask = rng.random((h, w)) < rng.uniform(0.3, 1.0)
        mask[h // 2, w // 2] = True
        marks.append(X.Mark(int(rng.integers(0, 50)), int(rng.integers(0, 50)), w, h, mask, (k + 1,)))
    return marks


def test_marks_side_by_side_are_found_alike_one_pair_at_a_time_and_all_at_once():
    rng = np.random.default_rng(5)
    pairs = 0
    for _ in range(100):
        marks = _random_marks(rng, int(rng.integers(1, 30)))
        beside = X.side_by_side_matrix(marks)
        expected = [[X.side_by_side(a, b) for b in marks] for a in marks]
        assert beside.tolist() == expected
        pairs += int(beside.sum())
    assert pairs > 100  # the marks were close enough to be read as "10"s


def _absorb_one_by_one(marks: list[X.Mark]) -> list[X.Mark]:
    """absorb_fragments as it is defined: largest first, each piece into the
    first kept mark whose outline holds it (as that mark has grown so far)."""
    out: list[X.Mark] = []
    for m in sorted(marks, key=lambda m: -int(m.mask.sum())):
        for i, big in enumerate(out):
            mx, my = 0.1 * big.w + 1, 0.15 * big.h + 1
            inside = (m.x >= big.x - mx and m.x + m.w <= big.x + big.w + mx and m.y >= big.y - my
                      and m.bottom <= big.bottom + my and big.x <= m.cx <= big.x + big.w)
            if inside and int(m.mask.sum()) < 0.25 * int(big.mask.sum()):
                out[i] = X._merge(big, m)
                break
        else:
            out.append(m)
    return sorted(out, key=lambda m: (m.y, m.x))


def test_fragments_are_absorbed_as_one_by_one():
    rng = np.random.default_rng(6)
    merged = 0
    for _ in range(300):
        marks = _random_marks(rng, int(rng.integers(1, 40)))
        got, expected = X.absorb_fragments(marks), _absorb_one_by_one(marks)
        assert [(m.x, m.y, m.w, m.h, m.labels) for m in got] == [(m.x, m.y, m.w, m.h, m.labels) for m in expected]
        assert all((a.mask == b.mask).all() for a, b in zip(got, expected, strict=True))
        merged += sum(len(m.labels) > 2 for m in got)
    assert merged > 50  # marks took in several pieces, some after growing


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.uint8])
def test_percentile_and_median_are_numpys_to_the_last_bit(dtype):
    """The corner reader's own percentile and median give numpy's answers exactly, on arrays of
    every size from one element up, with ties, in the types the reader measures (float32 ink,
    float64, uint8): its thresholds are compared with them."""
    rng = np.random.default_rng(7)
    for n in list(range(1, 40)) + [97, 256, 1001]:
        for trial in range(6):
            if dtype is np.uint8:
                values = rng.integers(0, 256, n).astype(np.uint8)
            else:
                values = (rng.random(n) * 3 - 1).astype(dtype)
                if trial % 2:
                    values = (np.round(values * 4) / 4).astype(dtype)  # ties
            for q in (10, 25, 50, 75, 90, 100, 0):
                assert X.percentile(values.copy(), q) == float(np.percentile(values, q)), (n, q)
            assert X.median(values.copy()) == float(np.median(values)), n


def _spade(stem: bool) -> X.Pip:
    """A spade's pip drawn as a mask: a body 40 px tall, and its thin stem joined under it or not."""
    mask = np.zeros((52 if stem else 40, 36), np.uint8)
    cv2.circle(mask, (10, 26), 10, 1, -1)
    cv2.circle(mask, (26, 26), 10, 1, -1)
    cv2.fillPoly(mask, [np.array([[18, 0], [2, 24], [34, 24]], np.int32)], 1)
    if stem:
        cv2.rectangle(mask, (16, 36), (19, 51), 1, -1)
    return black_pip(mask.astype(bool))


def test_spades_with_their_stem_joined_or_parted_are_one_group():
    """A spade's thin stem joins its pip in one print and parts from it in the next: the pips of a
    four measure 40 and 52 px tall, 30% apart, yet they are printed alike; their bodies measure alike."""
    pips = [_spade(True), _spade(False), _spade(True), _spade(False)]
    assert pips[0].mark.h > 1.15 * pips[1].mark.h
    assert X.body_height(pips[0].mask) == X.body_height(pips[1].mask)
    assert len(X.pip_group(pips)) == 4
    other = black_pip(np.ones((20, 36), bool))
    assert len(X.pip_group([*pips, other])) == 4  # a mark half as tall is of another size


def _glyph_ink(smear: tuple[int, float] | None = None) -> tuple[np.ndarray, X.Mark]:
    """A "Q" 34 px tall as ink (print 1, paper 0), smeared (length in px, degrees), and its mark."""
    drawn = np.zeros((120, 120), np.uint8)
    cv2.putText(drawn, "Q", (30, 80), cv2.FONT_HERSHEY_SIMPLEX, 1.5, 255, 3, cv2.LINE_AA)
    card = drawn.astype(np.float32) / 255
    if smear is not None:
        card = hard_sets.smear(card, *smear)
    mask = card > 0.5
    ys, xs = np.nonzero(mask)
    y, x = int(ys.min()), int(xs.min())
    h, w = int(ys.max()) - y + 1, int(xs.max()) - x + 1
    return card, X.Mark(x, y, w, h, mask[y : y + h, x : x + w])


@pytest.mark.parametrize("degrees", [0, 30, 45, 90, 120, 160])
def test_a_glyph_smeared_one_way_is_as_blurred_as_its_smear_in_every_direction(degrees, monkeypatch):
    """A moving camera smears print one way and leaves the edges along that way sharp: the blur is
    the edges' steepness where they are least steep, whatever the way of the smear. A smear of
    11 px over a glyph 34 px tall has the steepest edge of a Gaussian blur of 11 / sqrt(2 pi) =
    4.4 px, 0.13 of the glyph: past the 0.12 where small shapes run together. The same glyph
    sharp measures as sharp print does."""
    ink, mark = _glyph_ink()
    assert X._blur(ink, mark) < 0.07
    ink, mark = _glyph_ink((11, degrees))
    assert X._blur(ink, mark) > 0.1
    # all the edges measured together, the sharp ones along the smear hide it
    monkeypatch.setattr(X, "BLUR_DIRECTIONS", 1)
    assert X._blur(ink, mark) < 0.08
