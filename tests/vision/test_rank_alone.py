"""Corners that show a rank and no suit under it (issue: camera fallback that
reads real decks; never a wrong card).

Some decks print a large rank alone in the corner, or split the index: the
rank in one corner, the suit alone in the other corner of the same end. Such a
card is read only where its other print tells the suit and every cue agrees
(docs/vision.md, "How a card is read"): the suit alone beside the rank with
the middle in its colour, or pips numbering the rank and showing the suit. A
court card's rank alone tells no suit: `no_suit_in_index`, never a guess; a
court card whose index is split is read from its rank and the suit beside it,
where they stand on clear paper across the top and the middle is a picture.
"""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np
import pytest

from shoed.vision import locate as L
from shoed.vision.recognize import CUES_DISAGREE, NO_SUIT_IN_INDEX, Recognizer
from vision_lab import synth


def style(layout: str) -> synth.CardStyle:
    return dataclasses.replace(synth.classic_style(), index_layout=layout)


def face(label: str, layout: str, seed: int = 500) -> synth.Face:
    return synth.draw_face(label, np.random.default_rng(seed), style(layout))


def flat(image: np.ndarray) -> np.ndarray:
    """A face as the canonical card the recogniser reads."""
    return cv2.resize(image, (L.CANON_W, L.CANON_H), interpolation=cv2.INTER_AREA)


@pytest.fixture(scope="module")
def recognizer():
    return Recognizer()


@pytest.mark.parametrize("layout", ["rank-alone", "split"])
@pytest.mark.parametrize("label", ["2C", "5D", "7H", "9S", "TD", "TC"])
def test_a_number_card_without_a_suit_under_its_rank_is_read(recognizer, layout, label):
    """The rank from the corner; the suit from the pips (whose number is the
    rank) and, in a split index, from the suit beside the rank as well."""
    result = recognizer.read_card(flat(face(label, layout).image))
    assert result.card == label and result.confidence >= 0.9


@pytest.mark.parametrize("layout", ["rank-alone", "split"])
@pytest.mark.parametrize("label, seed", [("6H", 11), ("8C", 12), ("TS", 13)])
def test_a_photograph_of_such_a_card_is_read(recognizer, layout, label, seed):
    shot = synth.photograph(label, np.random.default_rng(seed), style(layout), size=(1280, 960),
                            occlusion_p=0.0, tilt=0.1, blur=0.8, face=face(label, layout, seed))
    assert recognizer.identify(shot.image).card == label


@pytest.mark.parametrize("label", ["JC", "QD", "KH", "KS"])
def test_a_court_card_with_its_rank_alone_is_refused(recognizer, label):
    """A court card shows a picture, not pips: its rank alone does not tell
    the suit."""
    result = recognizer.read_card(flat(face(label, "rank-alone").image))
    assert result.card is None and result.reason == NO_SUIT_IN_INDEX


def split_court_style() -> synth.CardStyle:
    """A split index printed above the court card's picture (as decks that
    split their index print it): the rank in the top-left corner, the suit
    alone in the top-right, clear paper between them."""
    return dataclasses.replace(style("split"), rank_mm=(5.0, 6.5), margin_mm=(2.5, 3.0))


def split_court(label: str, seed: int = 500) -> synth.Face:
    return synth.draw_face(label, np.random.default_rng(seed), split_court_style())


@pytest.mark.parametrize("label", ["JC", "QD", "KH", "KS", "JH", "QS", "KD", "QC"])
def test_a_court_card_with_a_split_index_is_read(recognizer, label):
    """The rank in one corner, the suit alone in the other corner of the same
    end, both in one colour, over a picture in colours: read as the index a
    rank over its suit would be, by the suit's shape and colour."""
    result = recognizer.read_card(flat(split_court(label).image))
    assert result.card == label and result.confidence >= 0.9


@pytest.mark.parametrize("label, seed", [("JS", 20), ("QH", 22), ("KC", 23), ("KH", 26)])
def test_a_photograph_of_a_split_index_court_card_is_read(recognizer, label, seed):
    shot = synth.photograph(label, np.random.default_rng(seed), split_court_style(), size=(1280, 960),
                            occlusion_p=0.0, tilt=0.1, blur=0.8, face=split_court(label, seed))
    assert recognizer.identify(shot.image).card == label


@pytest.mark.parametrize("label", ["QD", "KS"])
def test_a_split_court_index_over_no_picture_is_refused(recognizer, label):
    """A court card's rank and a suit beside it over a middle printed in no
    colours (no picture): the middle does not say court card, so no card."""
    f = split_court(label)
    image = f.image.copy()
    h, w = image.shape[:2]
    image[int(0.15 * h) : int(0.85 * h), int(0.1 * w) : int(0.9 * w)] = image[2, w // 2]
    result = recognizer.read_card(flat(image))
    assert result.card is None and result.reason == CUES_DISAGREE


@pytest.mark.parametrize("label, number", [("KS", "9S"), ("QD", "8D")])
def test_a_split_court_index_over_rows_of_pips_is_refused(recognizer, label, number):
    """A "K" and a spade beside it over nine pips: a court card's picture
    never shows rows of pips; the cues disagree."""
    court, pips = split_court(label), split_court(number)
    image = pips.image.copy()
    for x0, y0, x1, y1 in court.index_boxes + pips.index_boxes:
        image[max(0, y0 - 4) : y1 + 4, max(0, x0 - 4) : x1 + 4] = court.image[max(0, y0 - 4) : y1 + 4,
                                                                               max(0, x0 - 4) : x1 + 4]
    result = recognizer.read_card(flat(image))
    assert result.card is None and result.reason == CUES_DISAGREE


@pytest.mark.parametrize("label", ["JC", "KH"])
def test_print_between_a_court_rank_and_the_mark_beside_it_is_refused(recognizer, label):
    """Where print lies between the rank and the mark beside it (a picture
    reaching up to the index's line, whose details can look like a suit), the
    mark is not taken for the index's suit: no card."""
    f = split_court(label)
    image = f.image.copy()
    for suit, rank in (f.index_boxes[0:2], f.index_boxes[2:4]):  # the top end, the bottom end
        left, right = sorted((suit, rank))
        image[suit[1] + 5 : suit[3] - 5, left[2] + 25 : right[0] - 25] = (40, 160, 220)  # a yellow shape
    result = recognizer.read_card(flat(image))
    assert result.card is None and result.reason == NO_SUIT_IN_INDEX


def test_a_split_court_index_in_two_colours_is_refused(recognizer):
    """A black "K" beside a red heart over a picture: a rank is printed in its
    suit's colour, so there is no card."""
    f = split_court("KH")
    image = f.image.copy()
    for x0, y0, x1, y1 in f.index_boxes[1::2]:  # the ranks, top and bottom
        box = image[y0:y1, x0:x1]
        box[box.min(axis=2) < 160] = (30, 30, 30)
    result = recognizer.read_card(flat(image))
    assert result.card is None


def _swap_index(label: str, other: str, layout: str) -> np.ndarray:
    """The face of `label` with the corner indices of `other` (one deck, one
    seed: the same lettering, sizes and places) printed over its own."""
    base, donor = face(label, layout), face(other, layout)
    image = base.image.copy()
    for x0, y0, x1, y1 in donor.index_boxes + base.index_boxes:
        image[max(0, y0 - 4) : y1 + 4, max(0, x0 - 4) : x1 + 4] = donor.image[max(0, y0 - 4) : y1 + 4,
                                                                               max(0, x0 - 4) : x1 + 4]
    return image


@pytest.mark.parametrize("layout", ["rank-alone", "split"])
@pytest.mark.parametrize("label, rank_of", [("6S", "7S"), ("9D", "8D"), ("4C", "5C")])
def test_a_pip_count_that_contradicts_the_rank_is_refused(recognizer, layout, label, rank_of):
    """A "7" alone in the corner over six pips: the two cues tell different
    cards, so there is no card (never the index's rank, never the count's)."""
    result = recognizer.read_card(flat(_swap_index(label, rank_of, layout)))
    assert result.card is None and result.reason == CUES_DISAGREE


@pytest.mark.parametrize("layout", ["rank-alone", "split"])
@pytest.mark.parametrize("label, other", [("7S", "6S"), ("9D", "8D")])
def test_corners_that_show_different_ranks_are_refused(recognizer, layout, label, other):
    """The rank at the bottom is another than at the top: whichever agrees with
    the pips, the corners disagree and there is no card."""
    base, donor = face(label, layout), face(other, layout)
    image = base.image.copy()
    for x0, y0, x1, y1 in donor.index_boxes + base.index_boxes:
        # the rank at the bottom (the top-left index turned half a turn; a split index's suit stays)
        if y0 > synth.FACE_H / 2 and (x0 > synth.FACE_W / 2 or layout == "rank-alone"):
            image[y0 - 4 : y1 + 4, max(0, x0 - 4) : x1 + 4] = donor.image[y0 - 4 : y1 + 4, max(0, x0 - 4) : x1 + 4]
    result = recognizer.read_card(flat(image))
    assert result.card is None and result.reason.startswith("corner indices disagree")


@pytest.mark.parametrize("label, suit_of", [("7S", "7C"), ("5D", "5H")])
def test_a_suit_beside_the_rank_that_contradicts_the_pips_is_refused(recognizer, label, suit_of):
    """A split index whose suit is another than its pips' (a spade beside the
    rank over clubs): refused, whichever cue is right."""
    result = recognizer.read_card(flat(_swap_index(label, suit_of, "split")))
    assert result.card is None and result.reason == CUES_DISAGREE


def test_a_rank_printed_in_another_suits_colour_is_refused(recognizer):
    """A rank is printed in its suit's colour: a red "7" beside a black spade
    over black pips is no card."""
    f = face("7S", "split")
    image = f.image.copy()
    for x0, y0, x1, y1 in f.index_boxes:
        box = image[y0:y1, x0:x1]
        dark = box.max(axis=2) < 128
        if (x0 + x1) / 2 < synth.FACE_W / 2 if y0 < synth.FACE_H / 2 else (x0 + x1) / 2 > synth.FACE_W / 2:
            box[dark] = (40, 40, 200)  # the rank (top-left, and bottom-right turned): red ink
    result = recognizer.read_card(flat(image))
    assert result.card is None and result.reason == CUES_DISAGREE


def test_a_card_with_no_index_at_all_is_refused(recognizer):
    """Pips alone, no rank anywhere: nothing tells the rank but the count, and a
    count alone is never a card."""
    f = face("6D", "rank-alone")
    image = f.image.copy()
    for x0, y0, x1, y1 in f.index_boxes:
        image[max(0, y0 - 4) : y1 + 4, max(0, x0 - 4) : x1 + 4] = image[2, synth.FACE_W // 2]
    result = recognizer.read_card(flat(image))
    assert result.card is None and result.reason == "no corner index found"


def _tango_nuevo_installed() -> bool:
    from vision_lab import decks

    return "tango_nuevo" in decks.designs()


@pytest.mark.skipif(not _tango_nuevo_installed(),
                    reason="needs the tango_nuevo deck artwork (apt-get install gnome-cards-data librsvg2-bin)")
def test_a_deck_design_with_a_rank_alone_in_its_corners_is_read_or_refused(recognizer):
    """tango_nuevo (aisleriot's artwork, never trained on) prints a large rank
    in the top-left corner, the suit alone in the top-right and one large suit
    symbol, cut by the card's edges, in the middle; its court cards, the rank
    and the suit above a picture at the top end only. Read flat: no card is
    ever taken for another, the court cards are read from their split index
    (all but at most two: a red court's small suit glyph is read at about 0.9,
    at the threshold), and the black number cards and aces are read (the
    large red suit glyphs are read by shape at 0.7-0.85 only: below it)."""
    from vision_lab import decks

    read = []
    for label in synth.all_labels():
        f = decks.face("tango_nuevo", label)
        assert f is not None
        result = recognizer.read_card(flat(f.image))
        assert result.card in (None, label), f"{label} read as {result.card}"
        if result.card is not None:
            read.append(label)
    black_numbers = [lab for lab in synth.all_labels() if lab[-1] in "CS" and lab[:-1] not in "JQK"]
    assert set(black_numbers) <= set(read)
    courts = [lab for lab in synth.all_labels() if lab[:-1] in "JQK"]
    assert len(set(courts) & set(read)) >= 10, sorted(set(courts) - set(read))
