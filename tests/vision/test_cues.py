"""Cues that must agree, and a guard on resolution (issue: camera fallback that
reads real decks; never a wrong card).

"A wrong card is the one thing the camera must never produce; a refused card
costs the dealer a button press" (issue 17). A ten has ten pips, a court card
a picture; where the glyphs are too few pixels to tell a spade from a club or
a "10" from a "J", the answer is a refusal with that reason, never a guess.
"""

from __future__ import annotations

import dataclasses
import math

import cv2
import numpy as np
import pytest

from shoed.vision import index as X
from tests.vision.pip_masks import black_pip
from shoed.vision.recognize import (
    COURT_ALONE_P,
    CUES_DISAGREE,
    NO_PIPS,
    OFF_COLOUR,
    PIPS_SUIT_P,
    SECONDING_P,
    TOO_SMALL,
    CornerRead,
    PipEvidence,
    Recognizer,
    _disagreement,
    _pip_vectors,
    red_probability,
)


@pytest.mark.parametrize(
    "card, pips, clash",
    [
        ("JC", PipEvidence("C", 0.99, 10, 30.0), True),  # a ten's pips under a "J" read from the ten's "1"
        ("QS", PipEvidence("S", 0.99, 7, 30.0), True),  # a court card shows a picture, not rows of pips
        ("KH", PipEvidence("H", 0.99, 2, 30.0), False),  # two marks in a picture are not rows of pips
        ("AD", PipEvidence("D", 0.99, 3, 30.0), True),  # an ace has one pip
        ("6D", PipEvidence("D", 0.99, 7, 30.0), True),  # never more pips than the rank
        ("8H", PipEvidence("H", 0.99, 6, 30.0), False),  # fewer may be in view (a finger over the middle)
        ("9D", PipEvidence("D", 0.86, 1, 13.0), True),  # ... but not most of them: a queen's picture read as a 9
        ("TC", PipEvidence("C", 0.99, 10, 30.0), False),
        ("6D", PipEvidence("C", 0.95, 6, 30.0), True),  # pips of another suit
        ("6D", PipEvidence("C", 0.95, 6, 5.0), False),  # ... too small to say so
        ("9S", NO_PIPS, True),  # a nine with nothing in the middle: a picture misread, or the middle covered
        ("9D", PipEvidence("D", 0.99, 6, 30.0), True),  # six pips under a "9": a "6" read the wrong way up
        ("9D", PipEvidence("D", 0.99, 7, 30.0), False),
        ("9D", PipEvidence("D", 0.99, 6, 30.0, centred=True), False),  # one in the middle column: no six's
        ("6D", PipEvidence("D", 0.99, 6, 30.0, centred=True), True),  # ... under a "6": a "9" the wrong way up
        ("6D", PipEvidence("D", 0.99, 5, 30.0), False),
        ("3S", NO_PIPS, False),  # a finger may cover all three
        ("5S", PipEvidence("S", 0.99, 3, 30.0, three=True), True),  # a three's layout: no five has three middle pips
        ("7S", PipEvidence("S", 0.99, 3, 30.0, three=True), True),
        ("3S", PipEvidence("S", 0.99, 3, 30.0, three=True), False),
        # pips printed alike whose shapes read some as spades and some as clubs: the
        # design's black suits are not told apart, whichever the index says
        ("9S", PipEvidence("S", 0.87, 9, 56.0, split="C"), True),
        ("9C", PipEvidence("S", 0.87, 9, 56.0, split="C"), True),
        ("QS", PipEvidence("S", 0.87, 2, 56.0, split="C"), False),  # a court card's picture is no pips
        # a court card's middle with no picture in colours and two marks of its suit: aisleriot's simplistic
        # prints its court cards so, beside a big letter; down the middle column they are a two's pips
        # (a mirrored "2" read as a "Q")
        ("QC", PipEvidence("C", 0.99, 2, 30.0, alike=True), False),
        ("QC", PipEvidence("C", 0.99, 2, 30.0, alike=True, two=True), True),
        ("QC", PipEvidence("C", 0.99, 2, 30.0, alike=True, two=True, picture=True), False),
        ("2C", PipEvidence("C", 0.99, 2, 30.0, alike=True, two=True), False),
        # pips laid out as only one rank lays them are that rank's (a mirrored "5" read as a "6")
        ("6C", PipEvidence("C", 0.99, 5, 30.0, alike=True, layout="5"), True),
        ("5C", PipEvidence("C", 0.99, 5, 30.0, alike=True, layout="5"), False),
        ("TC", PipEvidence("C", 0.99, 10, 30.0, alike=True, layout="10"), False),
        ("KC", PipEvidence("C", 0.99, 9, 30.0, alike=True, layout="9", picture=True), True),
    ],
)
def test_the_middle_of_the_card_must_agree_with_its_index(card, pips, clash):
    assert (_disagreement(card, pips) is not None) == clash


def corner(card: str, rank_px: float, suit_px: float, p: float = 0.99) -> CornerRead:
    return CornerRead("top-left", card, p * p, p, p, 0.99 if card[-1] in "HD" else 0.01, rank_px, suit_px)


def _corners(card: str, rank_p: float, suit_ps: list[float]) -> list[CornerRead]:
    """The corners of a black card, each reading it with these glyph probabilities, at a phone's size."""
    names = ("bottom-right", "bottom-left", "top-right", "top-left")
    return [CornerRead(name, card, rank_p * p, rank_p, p, 0.001, 23.0, 30.0) for name, p in zip(names, suit_ps)]


def test_corners_that_doubt_one_glyph_alike_make_the_card_no_surer():
    """KDE's German-suited deck prints bells in stripes of colour in its four corners; a king of
    bells read each time as a spade at 0.5-0.7 is a shape the classifier doubts, printed four
    times alike, not four blurred prints of a spade. The corners' agreement adds nothing: the
    card is as sure as its surest corner, and refused. Corners that read both glyphs surely
    enough (SECONDING_P) second each other as before."""
    doubted = _corners("KS", 0.97, [0.69, 0.65, 0.62, 0.56])
    result = Recognizer()._decide(doubted, NO_PIPS)
    assert result.card is None and result.reason == "low confidence"
    assert result.confidence == pytest.approx(0.97 * 0.69, abs=1e-4)
    assert result.confidence < Recognizer()._decide(_corners("KS", 0.97, [0.71, 0.71, 0.62, 0.56]),
                                                    NO_PIPS).confidence - 0.1
    sure = _corners("KS", 0.97, [0.93, 0.9, 0.88, 0.85])
    result = Recognizer()._decide(sure, NO_PIPS)
    assert result.card == "KS" and result.confidence > 0.97 * 0.93 + 0.04
    # a top corner sure of both, another doubting its suit: the doubting one adds nothing
    mixed = _corners("KS", 0.97, [0.93, SECONDING_P - 0.01])
    assert Recognizer()._decide(mixed, NO_PIPS).confidence == pytest.approx(0.97 * 0.93, abs=1e-4)


@pytest.mark.parametrize(
    "read, pips, reason",
    [
        (corner("QS", 9.0, 6.0), NO_PIPS, TOO_SMALL),  # a spade or a club in six pixels
        (corner("JC", 8.0, 12.0), NO_PIPS, TOO_SMALL),  # "J" or the "1" of a "10" in eight pixels
        (corner("QS", 14.0, 11.0), NO_PIPS, None),
        (corner("8C", 7.0, 5.0), PipEvidence("C", 0.99, 8, 12.0, agreeing=8, alike=True), None),  # eight pips counted, clubs in the pips
        # one large mark read as a spade beside one that is not: a piece of a picture (a sprig of leaves), no pips
        (corner("5S", 14.0, 9.5), PipEvidence("S", 0.93, 2, 26.0, agreeing=1), TOO_SMALL),
        (corner("AS", 14.0, 9.5), PipEvidence("S", 0.93, 1, 26.0, agreeing=1, alike=True), None),  # an ace's one pip
        (corner("8C", 7.0, 5.0), PipEvidence("C", 0.99, 8, 6.0, agreeing=8, alike=True), TOO_SMALL),  # pips too small for a club
        # eight pips of 8 px, all in view and read alike, tell clubs where one glyph of 5 px does not
        (corner("8C", 7.0, 5.0), PipEvidence("C", 0.99, 8, 8.0, agreeing=8, alike=True), None),
        (corner("8C", 12.0, 5.0), PipEvidence("C", 0.99, 7, 8.0, agreeing=7, alike=True), TOO_SMALL),  # not all in view
        (corner("2S", 12.0, 5.0), PipEvidence("S", 0.99, 2, 8.0, agreeing=1), TOO_SMALL),  # one read, one not
        (corner("6S", 12.0, 5.0), PipEvidence("S", 0.85, 6, 8.0, agreeing=5), TOO_SMALL),  # not nearly all agree
        (corner("6S", 12.0, 5.0), PipEvidence("S", 0.99, 6, 8.0, split="C", agreeing=6, alike=True), TOO_SMALL),  # some lean to clubs
        (corner("5H", 12.0, 4.0), PipEvidence("H", 0.98, 5, 6.5, agreeing=5, alike=True), None),  # red pips from fewer pixels
        (corner("QH", 12.0, 4.0), PipEvidence("H", 0.98, 5, 6.5, agreeing=5, alike=True), TOO_SMALL),  # a picture has no pips
        # an ace's one large pip of the index's suit reads its rank a second time
        (corner("AH", 7.0, 12.0), PipEvidence("H", 0.98, 1, 20.0, agreeing=1, alike=True), None),
        (corner("AH", 7.0, 12.0), PipEvidence("H", 0.98, 1, 9.0, agreeing=1, alike=True), TOO_SMALL),  # no larger than a rank
        (corner("AH", 7.0, 12.0), PipEvidence("D", 0.98, 1, 20.0, agreeing=1, alike=True), TOO_SMALL),  # of another suit
        (corner("AH", 7.0, 12.0, p=0.45), PipEvidence("H", 0.98, 1, 20.0, agreeing=1, alike=True), TOO_SMALL),  # "A" unsure
        # print beside the pips (a finger, a chip) may hide one: the count stands in for no rank, nor the pip for an "A"
        (corner("8C", 7.0, 5.0), PipEvidence("C", 0.99, 8, 12.0, agreeing=8, alike=True, stray=0.6), TOO_SMALL),
        (corner("AH", 7.0, 12.0), PipEvidence("H", 0.98, 1, 20.0, agreeing=1, alike=True, stray=3.0), TOO_SMALL),
        (corner("8C", 12.0, 11.0), PipEvidence("C", 0.99, 8, 12.0, stray=3.0), None),  # an index read on its own
        # a large mark of no suit's shape (the suit read from other print) is no ace's pip
        (corner("AH", 7.0, 12.0), PipEvidence("H", 0.98, 1, 20.0), TOO_SMALL),
        (corner("3H", 12.0, 8.5), NO_PIPS, None),  # a heart is told from a diamond in fewer pixels
        # a court card's picture printing its suit again, larger, tells the suit its index is too small for
        (corner("QS", 12.0, 6.0), PipEvidence(None, 0.0, 2, 0.0, large="S", large_p=0.97, picture=True), None),
        # a "J", "Q" or "K" under 10 px read in one corner only: one glyph that small reads as another court
        # rank as surely (test_a_small_court_rank_is_read_where_two_corners_read_it)
        (corner("QS", 9.0, 6.0), PipEvidence(None, 0.0, 2, 0.0, large="S", large_p=0.97, picture=True), TOO_SMALL),
        # no picture in colours: the large marks may be a number card's pips, the rank a "10"
        (corner("QS", 12.0, 6.0), PipEvidence(None, 0.0, 2, 0.0, large="S", large_p=0.97), TOO_SMALL),
        (corner("QS", 9.0, 12.0), PipEvidence(None, 0.0, 2, 0.0), TOO_SMALL),
        (corner("QS", 12.0, 6.0), PipEvidence(None, 0.0, 2, 0.0, large="C", large_p=0.97, picture=True),
         TOO_SMALL),  # another suit
        (corner("JS", 7.0, 12.0), PipEvidence(None, 0.0, 2, 0.0, picture=True), TOO_SMALL),  # under 8 px
        (corner("JS", 9.0, 12.0), PipEvidence("S", 0.99, 6, 12.0, picture=True), TOO_SMALL),  # a ten's pips in view
        (corner("JS", 9.0, 12.0), PipEvidence(None, 0.0, 5, 12.0, picture=True), TOO_SMALL),  # one corner
        (corner("8S", 12.0, 5.0), PipEvidence(None, 0.0, 0, 0.0, large="S", large_p=0.97), TOO_SMALL),  # no court
        (corner("8S", 9.0, 12.0), PipEvidence(None, 0.0, 0, 0.0, picture=True), TOO_SMALL),
    ],
)
def test_glyphs_too_small_to_separate_the_candidates_are_refused(read, pips, reason):
    result = Recognizer()._decide([read], pips)
    assert result.reason == reason, result
    assert (result.card is None) == (reason is not None)
    if reason == TOO_SMALL:
        assert "px tall" in result.detail


def in_corner(name: str, card: str, suit_px: float, p: float = 0.99, rank_px: float = 12.0) -> CornerRead:
    return dataclasses.replace(corner(card, rank_px, suit_px, p), corner=name)


@pytest.mark.parametrize(
    "reads, pips, card",
    [
        # a picture in colours with no rows of pips (no ten's) and two corners reading the card:
        # a "J", "Q" or "K" of 8 px is read
        ([in_corner("top-left", "QS", 12.0, rank_px=9.0), in_corner("bottom-right", "QS", 12.0, rank_px=9.0)],
         PipEvidence(None, 0.0, 2, 0.0, picture=True), "QS"),
        ([in_corner("top-left", "JS", 12.0, rank_px=8.0), in_corner("bottom-right", "JS", 12.0, rank_px=8.5)],
         PipEvidence(None, 0.0, 5, 12.0, picture=True), "JS"),
        # the other corner doubtful (under even odds), or reading another rank
        ([in_corner("top-left", "QS", 12.0, rank_px=9.0), in_corner("bottom-right", "QS", 12.0, p=0.45, rank_px=9.0)],
         PipEvidence(None, 0.0, 2, 0.0, picture=True), None),
        ([in_corner("top-left", "QS", 12.0, rank_px=9.0), in_corner("bottom-right", "KS", 12.0, p=0.3, rank_px=9.0)],
         PipEvidence(None, 0.0, 2, 0.0, picture=True), None),
        # two corners, no picture in colours: the rank may be the "1" of a "10"
        ([in_corner("top-left", "JS", 12.0, rank_px=9.0), in_corner("bottom-right", "JS", 12.0, rank_px=9.0)],
         PipEvidence(None, 0.0, 2, 0.0), None),
    ],
)
def test_a_small_court_rank_is_read_where_two_corners_read_it(reads, pips, card):
    result = Recognizer()._decide(reads, pips)
    assert result.card == card, result
    if card is None and result.reason == TOO_SMALL:
        assert "rank glyph" in result.detail


def test_a_pale_court_rank_in_one_corner_reads_no_card():
    """A queen of diamonds of gnomangelo's design, 640 x 480 and brightly lit, its paper clipped
    white: one corner in view read as a "K" (0.93) of 9.9 px over a picture in colours, and the
    card as the king of diamonds at 0.92. A court rank under 10 px is read only where another
    corner reads the same card."""
    import pathlib

    card = cv2.imread(str(pathlib.Path(__file__).parent / "data" / "pips" / "QD-pale-court-rank-in-one-corner.png"))
    result = Recognizer().read_card(card, 0.2204)
    assert result.card in (None, "QD"), result
    assert [r.card for r in result.reads] == ["KD"]  # the one corner's reading, kept for the log


@pytest.mark.parametrize("name, detail", [
    ("5C-mirrored-read-as-6", "index 6C, a 5's pips in the middle"),
    ("2C-mirrored-read-as-Q", "index QC, a two's pips in the middle, no picture"),
])
def test_a_mirrored_card_whose_pips_speak_against_its_index_is_no_card(name, detail):
    """Photographs mirrored left to right (a camera set to mirror its image), flattened as the
    recogniser flattens them, at a phone's resolution: aisleriot's anglo_poker five of clubs, whose
    mirrored "5" read as a "6" (0.98) in two corners over a five's layout of pips, and a held-out
    lettering's two of clubs, whose mirrored "2" read as a "Q" (0.99) over a two's two pips down the
    middle and no picture. No card is printed mirrored: `cues_disagree`."""
    import pathlib

    card = cv2.imread(str(pathlib.Path(__file__).parent / "data" / "mirrored" / f"{name}.png"))
    result = Recognizer().read_card(card, 1.0)
    assert result.card is None and result.reason == "cues_disagree", result
    assert result.detail == detail


PICTURE = PipEvidence(None, 0.0, 2, 0.0, picture=True)


@pytest.mark.parametrize(
    "reads, pips, card",
    [
        # a spade of 8 px read surely in two corners: two prints of one shape, as a number card's pips
        ([in_corner("top-left", "QS", 8.0), in_corner("bottom-right", "QS", 8.0)], PICTURE, "QS"),
        ([in_corner("top-left", "QS", 8.0)], PICTURE, None),  # one corner in view: one glyph, a guess
        ([in_corner("top-left", "QS", 8.0), in_corner("bottom-right", "QS", 6.0)], PICTURE, None),  # one too small
        ([in_corner("top-left", "QS", 8.0), in_corner("bottom-right", "QS", 8.0, p=0.85)], PICTURE, None),  # unsure
        # a third corner leaning to clubs, however weakly
        ([in_corner("top-left", "QS", 8.0), in_corner("bottom-right", "QS", 8.0),
          in_corner("top-right", "QC", 8.0, p=0.6)], PICTURE, None),
        ([in_corner("top-left", "QH", 6.5), in_corner("bottom-right", "QH", 6.5)], PICTURE, "QH"),  # red: from 6 px
        ([in_corner("top-left", "QH", 5.5), in_corner("bottom-right", "QH", 5.5)], PICTURE, None),
        # the corners tell the suit, never the rank: a "J" of 7 px is as much the "1" of a "10" in two corners
        ([in_corner("top-left", "JS", 8.0, rank_px=7.0), in_corner("bottom-right", "JS", 8.0, rank_px=7.0)],
         PICTURE, None),
        # a number card's corners alike, its pips too small to tell the suit
        ([in_corner("top-left", "7C", 7.5), in_corner("bottom-right", "7C", 7.5)],
         PipEvidence("C", 0.99, 7, 5.0, agreeing=7), "7C"),
    ],
)
def test_the_index_suit_in_two_corners_is_read_from_fewer_pixels(reads, pips, card):
    result = Recognizer()._decide(reads, pips)
    assert result.card == card, result
    if card is None:
        assert result.reason == TOO_SMALL and "px tall" in result.detail


@pytest.mark.parametrize(
    "rank_p, pip_px, card",
    [
        (0.36, 9.0, None),  # small pips may be counted short, a tiny index weakly agreeing: refused
        (0.36, 12.0, "5D"),  # pips that lie apart are counted surely
        (0.75, 9.0, "5D"),  # an index that reads the rank at better than even odds, and the count agrees
    ],
)
def test_a_count_stands_in_for_a_tiny_rank_only_where_it_can_be_trusted(rank_p, pip_px, card):
    """A rank glyph of 5 px cannot be read; five pips counted can stand in for it.
    But pips of 9 px run together and a six is counted as five, agreeing with
    a tiny "6" weakly misread as "5": the count stands in for the rank only where
    the pips are large enough to lie apart, or the index itself reads the rank."""
    read = CornerRead("bottom-right", "5D", rank_p * 0.98, rank_p, 0.98, 0.99, 5.0, 3.8)
    result = Recognizer()._decide([read], PipEvidence("D", 0.98, 5, pip_px, agreeing=5, alike=True))
    assert result.card == card, result
    if card is None:
        assert result.reason == TOO_SMALL


@pytest.mark.parametrize(
    "pips, card",
    [
        (PipEvidence("D", 0.99, 8, 15.0, agreeing=8, alike=True), None),  # eight pips, nothing over them
        (PipEvidence("D", 0.99, 9, 15.0, agreeing=9, alike=True), "9D"),
        (PipEvidence("D", 0.99, 8, 15.0, agreeing=8, alike=True, stray=0.6), "9D"),  # a finger may hide one
        (PipEvidence("D", 0.99, 8, 8.0, agreeing=8, alike=True), "9D"),  # small pips run together, counted short
    ],
)
def test_fewer_pips_than_the_rank_in_view_with_nothing_over_them_doubt_the_index(pips, card):
    """An "8" read as a "9" over eight pips: pips large enough to lie apart and nothing over the
    middle that could hide the ninth. The refusal contests no other outline's reading (an outline
    that cuts the card short shows fewer pips too)."""
    result = Recognizer()._decide([corner("9D", 12.0, 12.0, p=0.98)], pips)
    assert result.card == card, result
    if card is None:
        assert result.reason == CUES_DISAGREE and result.contested == ()
        assert result.detail == "index 9D, 8 pips in the middle and nothing over it"


@pytest.mark.parametrize(
    "count, stray, card",
    [
        (6, 0.6, "8D"),  # print of 0.6 of a pip may lie over parts of two
        (5, 0.6, None),  # not three
        (5, 1.2, "8D"),  # three
        (3, 40.0, None),  # never more than four (MAX_HIDDEN_PIPS)
    ],
)
def test_more_pips_missing_than_what_lies_over_the_middle_hides_doubt_the_index(count, stray, card):
    """Print over the middle (a finger, a chip) hides a pip for each half of a pip's area it
    measures, or part of one: a "4" read as a "7" over three pips beside a finger's print of 0.6
    of a pip's area is doubted."""
    pips = PipEvidence("D", 0.99, count, 15.0, agreeing=count, alike=True, stray=stray)
    result = Recognizer()._decide([corner("8D", 12.0, 12.0, p=0.98)], pips)
    assert result.card == card, result
    if card is None:
        assert result.reason == CUES_DISAGREE and result.detail.startswith(f"index 8D, {count} pips in the middle")


def test_a_ten_beside_a_jack_is_refused_not_guessed():
    read = corner("JD", 30.0, 20.0)
    result = Recognizer()._decide([read], PipEvidence("D", 0.99, 10, 30.0, alike=True))
    assert result.card is None and result.reason == CUES_DISAGREE and "10 pips" in result.detail
    assert result.to_json()["detail"] == result.detail


def ink_view(draw) -> X.CornerView:
    ink = np.zeros((180, 100), np.float32)
    draw(ink)
    return X.CornerView("top-left", ink, np.zeros_like(ink), right=False)


def test_one_glyph_of_a_two_glyph_index_is_never_read_alone():
    """A narrow "10": the "1" alone must not make a rank (it reads as a "J"),
    only the pair does."""

    def ten_over_suit(ink):
        cv2.rectangle(ink, (16, 14), (21, 52), 1.0, -1)  # "1"
        cv2.ellipse(ink, (37, 33), (9, 19), 0, 0, 360, 1.0, 5)  # "0"
        cv2.circle(ink, (29, 72), 10, 1.0, -1)  # the suit below

    view = ink_view(ten_over_suit)
    found = X.pairings(view, X.find_marks(view))
    singles = [p for p in found if len(p.rank.labels) == 1]
    pairs = [p for p in found if len(p.rank.labels) == 2]
    assert pairs and not any(p.partial for p in pairs)
    assert singles and all(p.partial for p in singles)


def test_a_single_glyph_rank_is_whole():
    def jack_over_suit(ink):
        cv2.rectangle(ink, (20, 14), (27, 52), 1.0, -1)
        cv2.circle(ink, (24, 72), 10, 1.0, -1)

    view = ink_view(jack_over_suit)
    found = X.pairings(view, X.find_marks(view))
    assert found and not any(p.partial for p in found)


def assert_red_and_black(light, side: int, jpeg: bool) -> None:
    """A thin red "8" and a black one printed on a card, shrunk to `side` pixels tall under
    `light` (and through a camera's JPEG): the red reads red, the black black."""
    card = np.full((420, 300, 3), (235, 242, 245), np.uint8)
    cv2.putText(card, "8", (20, 90), cv2.FONT_HERSHEY_SIMPLEX, 2.2, (40, 30, 190), 3, cv2.LINE_AA)  # thin red
    cv2.putText(card, "8", (160, 90), cv2.FONT_HERSHEY_SIMPLEX, 2.2, (30, 30, 30), 3, cv2.LINE_AA)  # black
    small = cv2.resize(card, (side * 300 // 420, side), interpolation=cv2.INTER_AREA)
    small = np.clip(small * np.array(light, np.float32), 0, 255).astype(np.uint8)
    if jpeg:
        small = cv2.imdecode(cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_QUALITY, 85])[1], cv2.IMREAD_COLOR)
    card = cv2.resize(small, (300, 420), interpolation=cv2.INTER_LINEAR)
    ink, red, _ = X.print_maps(card)
    reds = []
    for x0 in (0, 150):
        window = (ink[:, x0 : x0 + 150] > 0.25).astype(np.uint8)
        n, labels, stats, _ = cv2.connectedComponentsWithStats(window)
        k = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
        x, y, w, h = (int(v) for v in stats[k][:4])
        mark = X.Mark(x0 + x, y, w, h, labels[y : y + h, x : x + w] == k)
        reds.append(red_probability(X._print_redness(ink, red, mark)))
    assert reds[0] > 0.9 and reds[1] < 0.1, reds


@pytest.mark.parametrize("light", [(1.0, 1.0, 1.0), (0.75, 1.25, 0.65), (0.55, 0.95, 1.25)])
@pytest.mark.parametrize("side", [24, 60])
def test_red_stays_red_against_the_cards_own_white(light, side):
    """Colour is judged against the card's paper, and a thin red stroke blurred
    into the paper (a small glyph) is still red: red-minus-green over ink."""
    assert_red_and_black(light, side, jpeg=False)


@pytest.mark.parametrize("light", [(0.75, 1.25, 0.65), (1.3, 1.0, 0.7), (1.15, 0.7, 1.2), (0.55, 0.95, 1.25)])
@pytest.mark.parametrize("side", [90, 140])
def test_red_stays_red_through_a_cameras_compression_under_a_cast(light, side):
    """A camera keeps colour at half resolution (JPEG's 4:2:0): under a strong
    cast a thin red stroke takes the tint of the paper around it, and its red
    lands beside it. Colour is summed over the mark and the paper around it,
    so it is still found; black stays black."""
    assert_red_and_black(light, side, jpeg=True)


@pytest.mark.parametrize("label, three", [("3C", True), ("3H", True), ("2S", False), ("5D", False), ("7C", False),
                                          ("AH", False)])
def test_three_pips_down_the_middle_are_a_threes_layout(label, three):
    """A three prints its three pips in one column down the middle; no other
    card shows three pips in its middle column and nothing beside them."""
    from shoed.vision import locate as L
    from vision_lab import synth

    rng = np.random.default_rng(3)
    shot = synth.photograph(label, rng, synth.classic_style(), size=(1280, 960), occlusion_p=0.0, tilt=0.1, blur=0.8)
    quad = L.find_quads(shot.image)[0]
    recognizer = Recognizer()
    views, pips = X.read_card_marks(L.warp_card(shot.image, quad))
    probs = recognizer.model.predict(np.vstack(_pip_vectors(pips)))
    assert recognizer._pip_evidence(pips, probs, 1.0).three == three


@pytest.mark.parametrize("counted, card", [(True, "3C"), (False, None)])
def test_a_threes_layout_reads_the_rank_the_index_only_allows(counted, card):
    """Lettering no classifier has seen (a flat-topped "3" taken for a "5"): the
    index leaves a three possible, the pips lie as only a three's do and count
    three; the two cues agree on a three. Without the layout, an index this
    unsure is no card."""
    read = CornerRead("top-left", "3C", 0.1 * 0.99, 0.1, 0.99, 0.01, 30.0, 20.0, 1, counted)
    result = Recognizer()._decide([read], PipEvidence("C", 0.99, 3, 30.0, three=counted, alike=True))
    assert result.card == card, result


@pytest.mark.parametrize("glyphs, card", [(2, "TH"), (1, None)])
def test_a_two_glyph_rank_over_ten_pips_is_a_ten(glyphs, card):
    """Deck artwork letters "10" in ways no classifier has seen (a bare bar and
    a narrow oval); two glyphs side by side over ten pips of one size is a ten."""
    read = CornerRead("top-left", "TH", 0.01 * 0.99, 0.01, 0.99, 0.99, 30.0, 20.0, glyphs)
    result = Recognizer()._decide([read], PipEvidence("H", 0.99, 10, 30.0, alike=True))
    assert result.card == card, result


@pytest.mark.parametrize("label", ["9H", "8C", "6S", "TD", "4D", "7C"])
def test_pips_printed_near_the_edges_are_all_counted(label):
    """Some decks print their outer rows of pips close to the top and bottom
    edges (well beyond a fifth of the height): every pip is counted, so the
    count can confirm the rank instead of contradicting it."""
    from shoed.vision import locate as L
    from vision_lab import synth

    style = dataclasses.replace(synth.classic_style(), pip_reach=(1.3, 1.3))
    rng = np.random.default_rng(5)
    shot = synth.photograph(label, rng, style, size=(1280, 960), occlusion_p=0.0, tilt=0.1, blur=0.8)
    quad = L.find_quads(shot.image)[0]
    card = L.warp_card(shot.image, quad)
    views, pips = X.read_card_marks(card)
    rotated = len(X.pip_group(X.read_card_marks(np.ascontiguousarray(card[::-1, ::-1]))[1]))
    assert len(X.pip_group(pips)) == rotated == synth.RANKS.index(label[:-1].replace("T", "10")) + 1


@pytest.mark.parametrize("label", ["TC", "TD", "8S"])
def test_the_marks_of_a_corner_index_are_no_pips(label):
    """A large index printed well in from the edge: the "0" of its "10" and its
    suit are as large as the pips and lie beside them, but belong to the index."""
    from vision_lab import synth

    style = dataclasses.replace(synth.classic_style(), rank_mm=(8.5, 8.5), margin_mm=(4.5, 4.5),
                                width_factor=(1.0, 1.0))
    for seed in range(4):
        face = synth.draw_face(label, np.random.default_rng(seed), style)
        card = cv2.resize(face.image, (300, 420), interpolation=cv2.INTER_AREA)
        assert len(X.pip_group(X.read_card_marks(card)[1])) == (10 if label[0] == "T" else 8)


@pytest.mark.parametrize("odd_px, card", [(13.0, "KC"), (33.0, None)])
def test_a_weak_reading_of_marks_of_another_size_is_no_index(odd_px, card):
    """Two corners read the same card from indices of one size; a third corner
    weakly reads another card from marks far smaller (a detail of the picture):
    a deck prints its indices alike, so that reading takes nothing away. One of
    the index's own size still does."""
    reads = [CornerRead("top-left", "KC", 0.99, 0.995, 0.995, 0.01, 34.0, 24.0),
             CornerRead("bottom-right", "KC", 0.98, 0.99, 0.99, 0.01, 34.0, 24.0),
             CornerRead("top-right", "TC", 0.17, 0.18, 0.92, 0.01, odd_px, 11.0)]
    assert Recognizer()._decide(reads).card == card


@pytest.mark.parametrize(
    "other, other_p, card",
    [
        ("9H", 0.4, None),  # eight pips allow a nine with one hidden or two run together: its doubt counts
        ("TH", 0.4, None),
        ("9H", 0.6, None),  # ... and read at better than even odds, the corners disagree
        ("QH", 0.4, "8H"),  # a queen prints a picture, not rows of eight pips: ruled out
        ("QH", 0.9, "8H"),  # ... however surely a finger's edge over that corner makes it read
        ("5H", 0.4, "8H"),  # eight pips are more than a five has: ruled out
        ("5H", 0.9, "8H"),
    ],
)
def test_a_pip_count_outweighs_only_the_readings_it_rules_out(other, other_p, card):
    """One corner reads an eight, the pips count eight; another corner reads another card.
    Pips run together in a small picture and are then counted short, so a count agreeing
    with one corner says nothing against a corner that reads more pips than are counted:
    that corner's doubt still counts, and read at 0.5 or more it makes the corners disagree.
    A reading the pips rule out takes nothing away, however surely it reads (a finger over
    a corner index joins its glyph into a "J" or a "Q")."""
    reads = [CornerRead("bottom-right", "8H", 0.94, 0.976, 0.96, 0.99, 12.0, 9.0),
             CornerRead("top-left", other, other_p, other_p, 0.99, 0.99, 12.0, 9.0)]
    result = Recognizer()._decide(reads, PipEvidence("H", 0.96, 8, 12.0, alike=True))
    assert result.card == card, result


@pytest.mark.parametrize("border", [0, 8])
def test_print_beside_a_mark_does_not_colour_it(border):
    """The paper around a mark counts towards its colour, other print there
    does not: a red index printed close to a card's black border line measures
    as red as it does on open paper."""
    card = np.full((420, 300, 3), (228, 236, 240), np.uint8)
    if border:
        cv2.rectangle(card, (4, 4), (295, 415), (25, 25, 25), border)
    cv2.putText(card, "5", (8, 58), cv2.FONT_HERSHEY_SIMPLEX, 1.7, (30, 20, 200), 4, cv2.LINE_AA)
    cv2.fillPoly(card, [np.array([[24, 66], [38, 82], [24, 98], [10, 82]], np.int32)], (30, 20, 200), cv2.LINE_AA)
    view = X.corner_views(card)[0]
    found = X.pairings(view, X.find_marks(view))
    assert len(found) == 1
    assert found[0].redness > 0.78, found[0].redness


def _pip(x: int, y: int, h: int, w: int | None = None, blur: float = 0.05) -> X.Pip:
    """A black pip h px tall (w wide: square if not given), its box's top-left corner at (x, y)."""
    return black_pip(np.ones((h, w or h), bool), x, y, blur)


def _pips(leanings: list[dict[str, float]],
          positions: list[tuple[float, float]] | None = None) -> tuple[list[X.Pip], np.ndarray]:
    """Black pips of one size, each with the given suit-shape probabilities; centred at
    `positions` (_laid_out), or on a grid."""
    from shoed.vision.model import CLASSES

    pips = _laid_out(positions) if positions is not None else [
        _pip(40 + 60 * (i % 3), 80 + 60 * (i // 3), 20, 16, blur=0.03) for i in range(len(leanings))]
    rows = []
    for lean in leanings:
        row = np.full(len(CLASSES), 0.001, np.float32)
        for suit, p in lean.items():
            row[CLASSES.index(suit)] = p
        rows.append(row / row.sum())
    return pips, np.array(rows)


@pytest.mark.parametrize(
    "leanings, split",
    [
        ([{"S": 0.9}] * 6 + [{"C": 0.45, "S": 0.35}] * 3, "C"),  # a third of the pips lean to clubs
        ([{"S": 0.9}] * 8 + [{"C": 0.45, "S": 0.35}], None),  # one pip alone is a misreading (glare, a finger)
        ([{"S": 0.9}] * 9, None),
        ([{"S": 0.9}] * 6 + [{"none": 0.7, "C": 0.2, "S": 0.1}] * 3, None),  # marks that lean to no suit say nothing
    ],
)
def test_pips_whose_shapes_read_as_both_black_suits_are_split(leanings, split):
    pips, probs = _pips(leanings)
    evidence = Recognizer()._pip_evidence(pips, probs, 1.0)
    assert evidence.suit == "S" and evidence.count == len(leanings)
    assert evidence.split == split


@pytest.mark.parametrize(
    "lean, suit_p",
    [
        # a small club's print half taken for no glyph: among the suits and ranks, a club at 88%
        ({"C": 0.43, "none": 0.46, "S": 0.04}, 0.85),
        ({"C": 0.2, "none": 0.75, "S": 0.03}, None),  # mostly no glyph: the suits' share counts as it is
        ({"C": 0.43, "none": 0.3, "S": 0.25}, None),  # a club or a spade: no more sure without "none"
    ],
)
def test_a_pip_is_asked_which_suit_it_shows_not_whether_it_is_a_glyph(lean, suit_p):
    pips, probs = _pips([lean] * 4)
    evidence = Recognizer()._pip_evidence(pips, probs, 1.0)
    if suit_p is None:
        assert evidence.suit_p < PIPS_SUIT_P
    else:
        assert evidence.suit == "C" and evidence.agreeing == 4 and evidence.suit_p >= suit_p


def _one_way_up_case(upper: dict[str, float], lower: dict[str, float], flipped: dict[str, float],
                     n_upper: int, n_lower: int, monkeypatch):
    """Pips of one size: `n_upper` in the card's upper half reading `upper` as they lie, `n_lower`
    in its lower half reading `lower` turned over (as most designs print them), and every pip read
    the other way up reading `flipped` (the classifier's answer for those, the one it is asked
    only when the pips read their suit unsurely)."""
    pips, probs = _pips([upper] * n_upper + [lower] * n_lower)
    for pip in pips[n_upper:]:
        pip.turned = True
    recognizer = Recognizer()
    asked = []
    row = _pips([flipped])[1][0]

    def predict(vectors):
        asked.append(len(vectors))
        return np.repeat(row[None, :], len(vectors), axis=0)

    monkeypatch.setattr(recognizer.model, "predict", predict)
    return recognizer._pip_evidence(pips, probs, 1.0), asked


def test_pips_printed_one_way_up_read_their_suit_surely(monkeypatch):
    """A design that prints every pip upright: its lower pips, turned over as most designs' are,
    read as a spade unsurely, and the pips tell the suit at under 0.9. Read as they lie, every
    pip reads as a spade surely: that is the reading taken."""
    evidence, asked = _one_way_up_case({"S": 0.97}, {"S": 0.55, "H": 0.2}, {"S": 0.97}, 3, 3, monkeypatch)
    assert asked == [6]
    assert evidence.suit == "S" and evidence.suit_p >= PIPS_SUIT_P and evidence.alike and evidence.agreeing == 6


def test_pips_read_one_way_up_never_change_their_suit(monkeypatch):
    """Five pips read as spades, one as a club, all unsurely; every pip the other way up reads
    as a club surely. The other suit is no reading to take: the spades stand, as unsure as they
    were."""
    evidence, asked = _one_way_up_case({"S": 0.8}, {"C": 0.6}, {"C": 0.97}, 5, 1, monkeypatch)
    assert asked == [6]
    assert evidence.suit == "S" and evidence.suit_p < PIPS_SUIT_P and evidence.agreeing == 5


def test_pips_read_as_both_black_suits_are_not_read_again_one_way_up(monkeypatch):
    """Pips whose shapes read as spades and as clubs (`split`: this picture's spades and clubs
    are not told apart) are not read again the other way up, however surely that would read."""
    evidence, asked = _one_way_up_case({"S": 0.8}, {"C": 0.6}, {"S": 0.99}, 4, 3, monkeypatch)
    assert asked == [] and evidence.split == "C"


def test_a_pip_on_the_middle_row_tells_its_suit_only_where_both_ways_up_agree():
    """An ace's pip, or a three's middle one, is printed upright on the card,
    and the card may lie either way up: upside down, a club's three lobes over
    its stem become a shape the classifier may take for a spade."""
    pips, probs = _pips([{"C": 0.9}])
    pips[0].either_way = True
    turned_spade = _pips([{"S": 0.8}])[1]
    turned_club = _pips([{"C": 0.7}])[1]
    recognizer = Recognizer()
    assert recognizer._pip_evidence(pips, np.vstack([probs, turned_spade]), 1.0).suit is None
    evidence = recognizer._pip_evidence(pips, np.vstack([probs, turned_club]), 1.0)
    assert evidence.suit == "C" and evidence.suit_p > 0.85


@pytest.mark.parametrize(
    "upright, turned, redness, suit",
    [
        ("C", "D", 0.0, "C"),  # a club turned over reads as a diamond: the print is black
        ("D", "S", 0.0, "S"),  # the card lies the other way up: the spade is the turned reading
        ("H", "S", 0.7, "H"),  # a heart turned over reads as a spade: the print is red
        ("S", "H", 0.7, "H"),
        ("C", "S", 0.0, None),  # two black shapes: the colour cannot tell which way up
        ("H", "D", 0.7, None),  # two red shapes
        ("S", "D", 0.35, None),  # a colour between red and black tells nothing
    ],
)
def test_an_aces_lone_pip_that_reads_as_another_colour_turned_over_is_told_by_its_print(upright, turned, redness,
                                                                                       suit):
    """Turned over, a lone pip's shape may read as a suit of the other colour (a heart
    upside down is a spade's outline, a spade's or a club's may pass for a diamond): the
    print's colour then tells which reading is the right way up."""
    pips, probs = _pips([{upright: 0.95}])
    pips[0].either_way = True
    pips[0].redness = redness
    evidence = Recognizer()._pip_evidence(pips, np.vstack([probs, _pips([{turned: 0.95}])[1]]), 1.0)
    assert evidence.suit == suit
    if suit is not None:
        assert evidence.suit_p > 0.85


def test_pips_of_a_number_card_that_read_as_other_colours_turned_over_tell_no_suit():
    """Only a pip alone in the middle is told by its print: where several are in view,
    each must read as one suit both ways up (as before)."""
    pips, probs = _pips([{"C": 0.95}, {"C": 0.95}])
    pips[0].either_way = True
    evidence = Recognizer()._pip_evidence(pips, np.vstack([probs, _pips([{"D": 0.95}])[1]]), 1.0)
    assert evidence.suit == "C" and evidence.agreeing == 1


@pytest.mark.parametrize("label, seed", [("AC", 3), ("AC", 10), ("AC", 12), ("AS", 3), ("3C", 3), ("5S", 10),
                                         ("AH", 12)])
def test_a_card_lying_upside_down_is_read(recognizer, label, seed):
    """Read turned half a turn, its indices look the same and its middle-row
    pip is upside down."""
    from shoed.vision.locate import CANON_H, CANON_W
    from vision_lab import synth

    face = synth.draw_face(label, np.random.default_rng(seed), synth.classic_style())
    turned = cv2.resize(face.image[::-1, ::-1], (CANON_W, CANON_H), interpolation=cv2.INTER_AREA)
    assert recognizer.read_card(turned).card == label


def test_a_count_with_something_over_the_middle_stands_in_for_no_rank():
    """A 112 x 112 frame of a three of clubs (lettering never trained on), its
    middle pip under a round chip: two pips in view, and a 4 px "3" in the corner
    weakly read as "2". The count agreed with that reading, and a two of clubs was
    claimed at 0.93. The chip is print in the middle as large as three pips: the
    count can stand in for no rank there."""
    import pathlib

    image = cv2.imread(str(pathlib.Path(__file__).parent / "data" / "covered" / "3C-middle-pip-covered.png"))
    result = Recognizer().identify(image)
    assert result.card is None and result.reason == TOO_SMALL
    assert "other print in the middle" in result.detail


def test_a_two_glyph_nine_over_ten_of_many_pips_is_no_ten():
    """A nine of hearts of KDE's xskat-german (eighteen hearts in three columns, running into
    the corner windows) photographed at 640 x 480 and seen steeply: ten of its hearts are of one
    size in the middle, and one corner's "9" runs into a mark beside it (two glyphs). A
    two-glyph rank over ten pips is read as a ten only where its index leaves a ten possible;
    this "9" leaves it 0.01, and the heart ten was claimed at 0.95."""
    import pathlib

    image = cv2.imread(str(pathlib.Path(__file__).parent / "data" / "pips" / "9H-eighteen-pips-two-glyph-nine.png"))
    result = Recognizer().identify(image)
    assert result.card in (None, "9H"), result


def test_marks_that_do_not_all_read_as_pips_number_no_rank():
    """A jack of clubs of a held-out lettering, the camera moving: both corners read its "J" as a
    "4" (at 0.68 and 0.39), and the middle shows four marks of one size, two clubs inside the
    picture's frame and two black triangles of the picture. Four marks under a "4" made it the
    four of clubs at 0.97. Marks that do not all read as the suit's pips count no rank."""
    import pathlib

    card = cv2.imread(str(pathlib.Path(__file__).parent / "data" / "pips"
                          / "JC-blurred-four-marks-of-its-picture-as-pips.png"))
    result = Recognizer().read_card(card, 1.0)
    assert result.card in (None, "JC"), result
    reads = [CornerRead("bottom-right", "4C", 0.68, 0.68, 0.999, 0.001, 35.0, 32.0),
             CornerRead("top-left", "4C", 0.39, 0.39, 0.999, 0.001, 37.0, 32.0)]
    picture = PipEvidence("C", 0.99, 4, 28.0, agreeing=2, stray=54.8, large="C", large_p=0.98)
    assert Recognizer()._decide(list(reads), picture).card is None
    # the same corners over four marks that all read as clubs: the count vouches for the "4"
    pips = dataclasses.replace(picture, agreeing=4, stray=0.0, large=None, large_p=0.0, alike=True)
    assert Recognizer()._decide(list(reads), pips).card == "4C"


def test_pips_add_nothing_to_an_index_suit_whose_shape_is_another_s():
    """KDE's ancient-egyptians prints its lower index the way up of the upper one, the suit over
    the rank. A nine of spades under a hard shadow: the upper index is lost in the shadow's edge,
    the lower one read turned is a "6" (0.998) over a spade upside down, whose shape reads as a
    diamond (0.71) and as a spade at 0.012; its black print left the spade. The pips' spades
    (0.998) took that for agreement and made it the six of spades at 0.96. Pips agree with an
    index's suit only where its mark reads as that suit by its shape more than as any other."""
    import pathlib

    card = cv2.imread(str(pathlib.Path(__file__).parent / "data" / "pips"
                          / "9S-upright-lower-index-under-a-shadow.png"))
    result = Recognizer().read_card(card, 1.0)
    assert result.card in (None, "9S"), result
    pips = PipEvidence("S", 0.998, 9, 57.0, agreeing=9, alike=True)
    turned = CornerRead("bottom-right", "6S", 0.998 * 0.012, 0.998, 0.012, 0.001, 54.0, 51.0, suit_shaped=False)
    assert Recognizer()._with_pips(turned, pips).suit_p == turned.suit_p
    # a blurred spade, its shape still a spade's more than another suit's: the pips confirm it
    doubtful = dataclasses.replace(turned, confidence=0.998 * 0.2, suit_p=0.2, suit_shaped=True)
    assert Recognizer()._with_pips(doubtful, pips).suit_p > 0.95


def test_print_beside_the_pips_is_measured_against_a_pip():
    """index.middle_pips and stray_print: nothing but the pips gives 0; a blot as large as two pips
    gives about 2, wherever it lies in the middle, even reaching in from the side;
    a mark where an index is printed, or read as one, is left to the indices, and
    a line framing the middle is no cover."""
    from shoed.vision import locate as L

    card = np.full((L.CANON_H, L.CANON_W, 3), 235, np.uint8)
    for x, y in ((100, 120), (200, 120), (100, 300), (200, 300)):
        cv2.circle(card, (x, y), 14, (30, 30, 30), -1)

    def stray(picture: np.ndarray, boxes: tuple = ()) -> float:
        maps = X.print_maps(picture)
        pips, covering = X.middle_pips(maps, index_boxes=boxes)
        group = X.pip_group(pips)
        assert len(group) == 4
        return X.stray_print(group, covering)

    assert stray(card) == 0.0
    blotted = card.copy()
    cv2.rectangle(blotted, (130, 190), (170, 230), (60, 80, 120), -1)  # 41 x 41 px: about two pips of 14 px radius
    assert 1.5 < stray(blotted) < 2.8
    in_index = card.copy()
    cv2.rectangle(in_index, (8, 40), (40, 80), (60, 80, 120), -1)  # where an index is printed
    assert stray(in_index) == 0.0
    finger = card.copy()
    cv2.rectangle(finger, (0, 190), (40, 230), (60, 80, 120), -1)  # from the side, at the middle's height
    assert stray(finger) > 1.0
    framed = card.copy()
    cv2.rectangle(framed, (40, 60), (260, 360), (30, 30, 30), 2)  # a line framing the middle, as some designs print
    assert stray(framed) == 0.0
    wide_index = card.copy()
    cv2.rectangle(wide_index, (52, 24), (63, 63), (30, 30, 30), -1)  # the "0" of a wide "10", past the index column
    assert stray(wide_index) > 0.5
    assert stray(wide_index, ((50, 22, 65, 65),)) == 0.0  # read as an index's mark: left to the index


def _cover_parts(picture: np.ndarray) -> list[tuple[float, float, int, int, int]]:
    """index.cover_print over the middle's window of a canonical card."""
    ink = X.print_maps(picture).ink
    return X.cover_print(picture, ink, X.middle_box(ink.shape))


def _finger(picture: np.ndarray) -> np.ndarray:
    """A finger 80 px wide (wider than the paper level's window) reaching in from the card's left
    side along y = 210, its tip at x = 180, shaded as a cylinder lit from above."""
    from shoed.vision import locate as L

    ys, xs = np.mgrid[0 : L.CANON_H, 0 : L.CANON_W].astype(np.float32)
    d = np.where(xs > 180, np.hypot(xs - 180, ys - 210), np.abs(ys - 210)) / 40
    lit = np.sqrt(np.clip(1 - d * d, 0, 1)) * 0.45 + 0.55
    skin = np.float32([120, 150, 205])[None, None] * lit[..., None]
    return np.where((d < 1)[..., None], skin, picture.astype(np.float32)).astype(np.uint8)


@pytest.mark.parametrize("ink", [(30, 30, 30), (40, 30, 190)])
def test_a_cover_in_colours_of_its_own_is_measured_whole_and_light_is_no_cover(ink):
    """index.cover_print: the card's paper is its own colour, and what stands off it in colour, not
    in brightness, lies over the card. A finger wider than the paper level's window is measured
    whole, its shaded rim too; a hard shadow, a lamp's glare, a colour cast over the whole card
    and the soft rims of a blurred pip's ink, black or red, are no cover. Through middle_pips the
    finger is print over the pips, as many pips' area as it covers (capped where they are weighed)."""
    from shoed.vision import locate as L

    card = np.full((L.CANON_H, L.CANON_W, 3), 235, np.uint8)
    for x, y in ((100, 120), (200, 120), (100, 300), (200, 300)):
        cv2.circle(card, (x, y), 14, ink, -1)
    card = cv2.GaussianBlur(card, (0, 0), 3)  # the lens's softness: each pip's rim a band of mixed colour
    fingered = _finger(card)
    parts = _cover_parts(fingered)
    assert len(parts) == 1
    x, y, bw, bh, area = parts[0]
    finger_area = 180 * 80 + math.pi * 40 * 40 / 2 - 15 * 80  # within the middle's window (from x = 15)
    assert 0.8 * finger_area < area < 1.15 * finger_area and 70 <= bh <= 84 and abs(y - 210) < 3
    shade = card.copy()
    shade[:, :150] = (shade[:, :150] * 0.55).astype(np.uint8)
    glow = np.zeros(card.shape[:2], np.float32)
    cv2.circle(glow, (150, 210), 90, 1.0, -1)
    glow = cv2.GaussianBlur(glow, (0, 0), 20)[..., None]
    glare = (card * (1 - glow) + 255 * glow).astype(np.uint8)
    cast = np.clip(card * np.float32([0.7, 0.9, 1.1]), 0, 255).astype(np.uint8)
    for lit in (card, shade, glare, cast):
        assert _cover_parts(lit) == []
    maps = X.print_maps(fingered)
    pips, covering = X.middle_pips(maps, card=fingered)
    group = X.pip_group(pips)
    assert len(group) == 4 and X.stray_print(group, covering) > 10


def test_the_suit_a_court_cards_picture_prints_again_adds_to_its_index_or_takes_away():
    read = corner("QS", 14.0, 11.0, p=0.93)
    r = Recognizer()
    agree = r._with_pips(read, PipEvidence(None, 0.0, 2, 0.0, large="S", large_p=0.95, picture=True))
    assert agree.suit_p > read.suit_p and agree.confidence > read.confidence
    other = r._with_pips(read, PipEvidence(None, 0.0, 2, 0.0, large="C", large_p=0.95, picture=True))
    assert other.confidence < 0.1
    assert r._with_pips(read, PipEvidence("C", 0.99, 2, 20.0, picture=True)) == read  # a picture's marks are no pips
    # no picture in colours: large marks are a number card's pips, under a court card's reading misread
    assert r._with_pips(read, PipEvidence("C", 0.99, 5, 20.0, large="C", large_p=0.99)) == read


def _shape(suit: str, p: float) -> np.ndarray:
    """Class probabilities of a black mark whose shape is `suit` with share `p`, "none" the rest."""
    row = np.zeros(18, np.float32)
    row[13 + "CDHS".index(suit)] = p
    row[17] = 1.0 - p
    return row


@pytest.mark.parametrize(
    "shapes, scale, large",
    [
        ([("S", 0.97), ("S", 0.95)], 0.4, "S"),  # two spades of 12 px: the picture's suit
        ([("S", 0.97)], 0.4, "S"),
        ([("S", 0.97), ("S", 0.95)], 0.3, None),  # 9 px: too small to tell a spade from a club
        ([("S", 0.97), ("C", 0.95)], 0.4, None),  # two suits
        ([("S", 0.97), ("S", 0.95), ("C", 0.4)], 0.4, None),  # a mark leaning to another suit
        ([("S", 0.8), ("S", 0.85)], 0.4, None),  # none surely
    ],
)
def test_the_suit_printed_large_in_the_middle_is_named_only_where_every_sure_mark_agrees(shapes, scale, large):
    pips = [_pip(60 + 90 * k, 60, 30) for k in range(len(shapes))]
    probs = np.stack([_shape(s, p) for s, p in shapes])
    evidence = Recognizer()._pip_evidence(pips, probs, scale)
    assert evidence.large == large, evidence
    if large is not None:
        assert evidence.large_p == pytest.approx(min(p for _, p in shapes), abs=0.01)


def test_a_pip_whose_shape_is_no_suits_is_not_measured_for_colour_and_the_evidence_is_the_same():
    """The colour of a middle mark (the paper around it: the dearest measure of a read, for a
    large piece of a court card's picture) is measured only where its shape can count for a
    suit: a mark that leans to no suit shape counts for nothing whatever its colour. The
    evidence is what it is with every colour measured."""
    card = np.full((420, 300), 0.02, np.float32)
    red = np.zeros((420, 300), np.float32)
    card[80:100, 40:56] = card[80:100, 100:116] = 0.9  # two black marks
    pips, probs = _pips([{"S": 0.9}, {"none": 0.8, "C": 0.1, "S": 0.1}])
    for pip in pips:
        pip.redness, pip.card = None, X.PrintMaps(card, red, np.ones((*card.shape, 3), np.float32))
    evidence = Recognizer()._pip_evidence(pips, probs, 1.0)
    assert pips[0].redness is not None and pips[0].redness == X._print_redness(card, red, pips[0].mark)
    assert pips[1].redness is None and "off" not in vars(pips[1])  # never asked for
    measured, _ = _pips([{"S": 0.9}, {"none": 0.8, "C": 0.1, "S": 0.1}])
    for pip in measured:
        pip.redness = X._print_redness(card, red, pip.mark)
    assert Recognizer()._pip_evidence(measured, probs, 1.0) == evidence


def test_pips_printed_in_a_third_colour_count_for_no_suit_of_either_colour():
    """Pips shaped as spades, printed in blue (a four-colour deck's, or a German deck's bells
    striped in blue and yellow: index.off_colour 0.3 and more over their core), count for
    spades no more than a mark of even colour odds: the pips never second an index read as
    spades."""
    ink = np.full((420, 300), 0.02, np.float32)
    norm = np.ones((420, 300, 3), np.float32)  # the paper: white
    pips, probs = _pips([{"S": 0.95}] * 6)
    for pip in pips:
        m = pip.mark
        ink[m.y : m.bottom, m.x : m.x + m.w] = 0.9
        norm[m.y : m.bottom, m.x : m.x + m.w] = (0.5, 0.1, 0.1)  # blue print (BGR)
    black = Recognizer()._pip_evidence(_pips([{"S": 0.95}] * 6)[0], probs, 1.0)
    assert black.suit == "S" and black.suit_p > 0.9
    for pip in pips:
        pip.redness, pip.card = None, X.PrintMaps(ink, np.zeros_like(ink), norm)
    assert min(pip.off for pip in pips) > OFF_COLOUR[1]
    striped = Recognizer()._pip_evidence(pips, probs, 1.0)
    assert striped.suit_p <= 0.5, striped


def _laid_out(positions: list[tuple[float, float]]) -> list[X.Pip]:
    """Pips of one size centred at `positions` (fractions of the flattened card's width and height)."""
    from shoed.vision import locate as L

    return [_pip(round(fx * L.CANON_W) - 8, round(fy * L.CANON_H) - 10, 20, 16, blur=0.03) for fx, fy in positions]


def _printed(rank: int, spread: float, reach: float, rng: np.random.Generator) -> list[tuple[float, float]]:
    """A number card's pips as decks print them (vision_lab.synth's layouts, the columns and rows
    spread as a design spreads them), each a little off where it belongs."""
    from vision_lab.synth import PIP_LAYOUT

    return [(0.5 + (x - 0.5) * spread + rng.normal(0, 0.006), 0.5 + (y - 0.5) * reach + rng.normal(0, 0.006))
            for x, y in PIP_LAYOUT[rank]]


@pytest.mark.parametrize("rank", range(2, 11))
def test_a_layout_tells_the_rank_only_where_no_card_with_pips_hidden_shows_it(rank):
    """A three, five, eight, nine and ten are known by how their pips lie; a two is a
    three with its middle pip hidden (glare hides a pip and leaves no print), a four a five,
    a six a seven, a seven an eight, so those layouts tell nothing alone. No card's layout
    with one or two of its pips hidden is another card's."""
    import itertools

    from shoed.vision.recognize import pip_layout

    rng = np.random.default_rng(rank)
    told = {3: "3", 5: "5", 8: "8", 9: "9", 10: "10"}.get(rank)
    for spread, reach in itertools.product((0.9, 1.0, 1.1), (0.9, 1.0, 1.15)):
        printed = _printed(rank, spread, reach, rng)
        assert pip_layout(_laid_out(printed)) == told, (spread, reach)
        for hidden in (1, 2):
            for gone in itertools.combinations(range(len(printed)), hidden):
                shown = [p for i, p in enumerate(printed) if i not in gone]
                assert pip_layout(_laid_out(shown)) is None, (rank, gone, spread, reach)


@pytest.mark.parametrize("rank", range(2, 11))
def test_pips_count_a_rank_only_lying_mirrored_as_a_number_card_prints_them(rank):
    """Every number card's pips lie mirrored about its middle column; with a pip of a side column
    hidden (glare leaves no print) they lie lopsided and count no rank, whatever their number.
    A pip hidden from the middle column leaves them mirrored: a seven shows a six's pips then,
    and the index must tell it."""
    import itertools

    from shoed.vision.recognize import mirrored

    rng = np.random.default_rng(100 + rank)
    for spread, reach in itertools.product((0.9, 1.0, 1.1), (0.9, 1.0, 1.15)):
        printed = _printed(rank, spread, reach, rng)
        assert mirrored(_laid_out(printed)), (spread, reach)
        for i, (x, _) in enumerate(printed):
            shown = [p for j, p in enumerate(printed) if j != i]
            assert mirrored(_laid_out(shown)) == (abs(x - 0.5) < 0.05), (rank, i, spread, reach)


def test_a_layout_counts_only_where_every_mark_of_it_may_be_a_pip_of_the_suit():
    """A four with a speck of a pip's size at its centre shows a five's layout: a mark of no
    suit's shape, or of another suit's, makes it no layout."""
    from vision_lab.synth import PIP_LAYOUT

    recognizer = Recognizer()
    centre = next(i for i, (x, y) in enumerate(PIP_LAYOUT[5]) if (x, y) == (0.5, 0.5))
    for middle, layout in (({"S": 0.9}, "5"), ({"none": 0.9}, None), ({"H": 0.9}, None)):
        leanings = [{"S": 0.9}] * 5
        leanings[centre] = middle
        pips, probs = _pips(leanings, PIP_LAYOUT[5])
        evidence = recognizer._pip_evidence(pips, probs, 1.0)
        assert evidence.suit == "S" and evidence.count == 5
        assert evidence.layout == layout, middle


@pytest.mark.parametrize("pip_px, layout, card", [(8.0, "10", "TD"), (8.0, None, None), (12.0, None, "TD")])
def test_pips_in_a_layout_stand_in_for_a_tiny_rank_however_small(pip_px, layout, card):
    """Pips of 8 px may run together and be counted short; where they lie as a ten's do, none
    did, and the count stands in for a rank glyph of 5 px."""
    read = CornerRead("top-left", "TD", 0.97 * 0.98, 0.97, 0.98, 0.99, 5.0, 3.8, 1, True)
    pips = PipEvidence("D", 0.98, 10, pip_px, agreeing=10, layout=layout, alike=True)
    if layout is None:
        read = dataclasses.replace(read, rank_p=0.36, confidence=0.36 * 0.98, counted=False)
    result = Recognizer()._decide([read], pips)
    assert result.card == card, result


@pytest.mark.parametrize("first, card", [(16, "9C"), (73, "5S"), (92, "8D"), (212, "3H"), (287, "8H")])
def test_a_small_frames_pips_tell_the_rank_its_tiny_index_misreads(first, card):
    """128 x 128 frames (lettering never trained on) whose rank glyph is 4-7 px, read as a
    queen, a jack, a seven: the pips lie as only this card's do, and tell its rank and suit."""
    from vision_lab import hard_sets

    shot, _ = next(hard_sets.frames(first + 1, 102, first=first))
    assert shot.card == card
    result = Recognizer().identify(shot.image)
    assert result.card == card, result


@pytest.mark.parametrize("first, card, read", [(57, "TH", True), (75, "6C", True), (363, "7S", False),
                                               (376, "7H", True)])
def test_a_small_frames_thin_rank_faded_below_its_pips_level_is_read(first, card, read):
    """128 x 128 frames of light and serif lettering never trained on: the rank's thin strokes,
    blurred, fade below the ink level that the large pips beside them set, and only the suit stood
    at it (no corner index found). At a lower level the rank stands over its suit again, and reads
    as the card. The seven of spades' 5.6 px rank is blurred 0.24 of its height where its edges
    are least steep (0.10 measured all together): too blurred for its pips' count to stand in."""
    from vision_lab import hard_sets

    shot, _ = next(hard_sets.frames(first + 1, 102, first=first))
    assert shot.card == card
    result = Recognizer().identify(shot.image)
    assert result.reads and result.reads[0].card == card, result
    assert result.card == (card if read else None), result
    if not read:
        assert result.reason == TOO_SMALL, result


@pytest.mark.parametrize("seed, side", [(1, 128), (3, 112), (3, 128)])
def test_a_tens_layout_under_a_one_glyph_rank_is_no_ten(seed, side):
    """KDE's xskat-german prints twice its rank's pips: its five ten hearts, laid out as a ten's.
    In a small frame its "5" is too small to read, but it is one glyph, and a ten's rank is two:
    the layout tells no ten there, and the five is refused, never read as the ten of hearts."""
    from vision_lab import decks, hard_sets

    if "kde-xskat-german" not in decks.designs():
        pytest.skip("KDE's card artwork is not installed (apt-get install kdegames-card-data-kf5 librsvg2-bin)")
    shot, _ = list(hard_sets.deck_frames(18, seed, side=side, names=["kde-xskat-german"]))[17]
    assert shot.card == "5H"
    result = Recognizer().identify(shot.image)
    assert result.card in (None, "5H"), result


@pytest.mark.parametrize(
    "name, scale, wrong",
    [
        # RobotoCondensed (a lettering never trained on): the thin ring of the "Q" smeared into a "J"
        # in both corners (0.93 and 0.81 for the rank), read as the jack of diamonds at 0.96
        ("QD-smeared-9px-both-corners-read-J.png", 0.7741, "JD"),
        # simplistic's spades smeared into clubs in both corners, read as the king of clubs at 0.98
        ("KS-smeared-9px-spades-read-as-clubs.png", 0.7541, "KC"),
    ],
)
def test_print_smeared_one_way_by_a_moving_camera_is_trusted_as_blurred(name, scale, wrong):
    """Court cards photographed with the camera moving (a 9 px smear at 1280 x 960): the edges along
    the smear stay sharp, and measured all together they hid it. A mark's blur is its edges' where
    they are least steep (index.blur_ratio), and these smeared suits are too blurred to be trusted."""
    import pathlib

    card = cv2.imread(str(pathlib.Path(__file__).parent / "data" / "smear" / name))
    result = Recognizer().read_card(card, scale)
    assert result.card is None, result
    assert [r.card for r in result.reads] == [wrong, wrong]  # both corners read alike, not surely enough


def test_corners_reading_two_cards_at_nearly_even_odds_contest_both_for_every_outline():
    """An ace of clubs of a held-out lettering (RobotoCondensed Medium), the camera moving 15 px at
    1280 x 960. Through the card's whole outline its corners read AC at 0.53 and 4C at 0.49: the card
    refused. Through an outline that cuts off the upper corner, the lower one reads "4" at 0.98 and
    the smeared pip, 124 px tall, reads as no suit's pip, so no pips are in view and nothing there
    contradicts a four: that outline alone reads 4C at 0.96 (the flattened card, stored). Two corners
    reading two cards at 0.4 or more each contest both cards for every other outline."""
    import pathlib

    from vision_lab import hard_sets, synth

    card = cv2.imread(str(pathlib.Path(__file__).parent / "data" / "smear" / "AC-smeared-15px-one-corner-read-4-no-pips.png"))
    assert Recognizer().read_card(card, 0.6596).card == "4C"  # that one outline, by itself
    style = hard_sets.held_out_styles()[19]
    assert style.name == "RobotoCondensed-Medium@400"
    shot = synth.photograph("AC", np.random.default_rng(10312 + 19), style, size=(1280, 960), occlusion_p=0.0)
    result = Recognizer().identify(hard_sets.smear(shot.image, 15, np.random.default_rng(10312 * 7 + 19 * 13).uniform(0, 180)))
    assert result.card in (None, "AC"), result
    # the two corners' readings, under the threshold each, contest each other's cards
    reads = [CornerRead("top-left", "AC", 0.534, 0.548, 0.975, 0.001, 40.0, 30.0),
             CornerRead("bottom-right", "4C", 0.493, 0.526, 0.937, 0.001, 36.0, 28.0)]
    assert set(Recognizer()._decide(reads, NO_PIPS).contested) == {"AC", "4C"}
    weak = [reads[0], dataclasses.replace(reads[1], confidence=0.2)]
    assert Recognizer()._decide(weak, NO_PIPS).contested == ()


@pytest.mark.parametrize("redness, p", [(-1e6, 0.0), (-40.0, 0.0), (0.35, 0.5), (1e6, 1.0), (float("nan"), 0.0)])
def test_the_odds_of_red_print_hold_for_any_redness(redness, p):
    """Faint print can measure a redness far outside black's 0 and red's 0.5-0.9: its odds stay in [0, 1]."""
    assert red_probability(redness) == pytest.approx(p, abs=1e-9)


def test_an_outline_over_a_yellow_patch_on_green_cloth_is_read_as_no_card():
    """A yellow patch on green cloth outlined as a card, flattened as the recogniser flattens it (an
    outline beside a ten of clubs in a mirrored photograph): its marks measured a redness under -30,
    whose odds of red overflowed and stopped the identification. It is no card."""
    import pathlib

    card = cv2.imread(str(pathlib.Path(__file__).parent / "data" / "outlines" / "yellow-patch-on-green-cloth.png"))
    assert Recognizer().read_card(card, 0.491).card is None


@pytest.mark.parametrize("picture, card", [(False, "3S"), (True, None)])
def test_pips_in_a_picture_in_colours_number_no_rank(picture, card):
    """A "3" read at 0.30 in one corner over three spades alike: a three's pips count it (COUNT_TRUST), but
    not where the middle is a picture in colours (a mirrored king's "K" read as a "2" over the two spades
    its picture's frame prints, at 0.97 when they counted)."""
    read = CornerRead("top-left", "3S", 0.30, 0.30, 0.999, 0.001, 38.0, 25.0)
    result = Recognizer()._decide([read], PipEvidence("S", 0.99, 3, 30.0, alike=True, picture=picture))
    assert result.card == card, result


@pytest.mark.parametrize(
    "label, rank_p, stray, card",
    [
        ("4D", 0.75, 0.0, "4D"),  # an index at better than even odds, a clean middle: the count seconds it
        ("4D", 0.45, 0.0, None),  # a five's middle pip washed out leaves its four: a weak "4" is not seconded
        ("4D", 0.75, 0.6, None),  # other print in the middle (a pale pip, a finger): not seconded either
        ("8D", 0.45, 0.0, None),  # a nine's, a ten's middle column washed out
        ("2D", 0.45, 0.0, None),  # a three's middle pip
        ("6D", 0.45, 0.0, None),  # a seven's
        ("5D", 0.45, 0.0, "5D"),  # no card prints a five's pips but its middle column's
    ],
)
def test_a_two_four_six_or_eight_is_counted_only_over_a_clean_middle(label, rank_p, stray, card):
    """A two, four, six and eight print a three's, five's, seven's, nine's (or ten's) pips but those of
    its middle column, which a lamp's glare washes out: their count seconds the rank only where the index
    reads it at even odds or better (COUNT_RANK_P) and the middle shows nothing but the pips (a defocused
    "5" read as a "4" at 0.42 and 0.54 over a five's four outer pips, its middle one pale in the glare,
    was the four of diamonds at 0.97)."""
    n = int(label[0])
    read = CornerRead("top-left", label, rank_p * 0.99, rank_p, 0.99, 0.99, 30.0, 20.0)
    result = Recognizer()._decide([read], PipEvidence("D", 0.99, n, 30.0, agreeing=n, alike=True, stray=stray))
    assert result.card == card, result
    if card is None:
        assert result.reason == "low confidence" and result.confidence < 0.9, result


@pytest.mark.parametrize(
    "other, card",
    [
        (CornerRead("top-left", "JC", 0.0, 1.0, 0.0, 0.0, 28.0, 14.0), None),  # a sure "J" whatever its suit
        (CornerRead("top-left", "JC", 0.0, 0.6, 0.0, 0.0, 28.0, 14.0), "4S"),  # an unsure one: its doubt counts
        (CornerRead("top-left", "JC", 0.0, 1.0, 0.0, 0.0, 8.0, 6.0), "4S"),  # too small to read
        (CornerRead("top-left", "JC", 0.0, 1.0, 0.0, 0.0, 60.0, 30.0), "4S"),  # not of the index's size
        (CornerRead("top-left", "4C", 0.0, 0.0, 0.0, 0.0, 28.0, 14.0), "4S"),  # the same rank, the suit unread
        (CornerRead("top-left", "8C", 0.0, 0.0, 0.95, 0.0, 28.0, 14.0), None),  # a sure club, the rank unread
        (CornerRead("top-left", "8C", 0.0, 0.0, 0.95, 0.0, 28.0, 8.0), "4S"),  # ... too small to tell from a spade
        # ... named by its colour alone, its shape another suit's
        (CornerRead("top-left", "8C", 0.0, 0.0, 0.95, 0.0, 28.0, 14.0, suit_shaped=False), "4S"),
    ],
)
def test_another_corner_reading_another_glyph_surely_contests_the_card(other, card):
    """One corner reads the four of spades at 0.94; the other corner's rank glyph, of the same size,
    reads a "J" for sure while a lamp's glare leaves its suit unread (confidence 0). A rank read
    as surely as the best one's is a reading of its own: the corners disagree. So is a suit read
    surely by its shape, whatever the rank beside it reads."""
    top = CornerRead("bottom-right", "4S", 0.94, 0.94, 0.99, 0.0, 30.7, 19.0)
    result = Recognizer()._decide([top, other], PipEvidence("S", 0.99, 1, 50.0, alike=True))
    assert result.card == card, result
    if card is None:
        assert set(result.contested) == {"4S", other.card}


def test_a_sure_suit_in_another_corner_contests_nothing_the_pips_rule_out():
    """Four spades, counted, in the middle rule the other corner's club out: the four of spades."""
    top = CornerRead("bottom-right", "4S", 0.94, 0.94, 0.99, 0.0, 30.7, 19.0)
    other = CornerRead("top-left", "4C", 0.0, 0.0, 0.95, 0.0, 28.0, 14.0)
    assert Recognizer()._decide([top, other], PipEvidence("S", 0.99, 4, 50.0, alike=True)).card == "4S"
    assert Recognizer()._decide([top, other], PipEvidence(None, 0.0, 0, 0.0)).card is None


def test_a_six_and_a_nine_are_one_glyph_turned_and_contest_nothing():
    """A design that prints its lower index upright shows a nine's "9" as a "6" from the other end:
    that surer reading is the glyph turned, not another rank (the pips tell a six from a nine)."""
    top = CornerRead("top-left", "9D", 0.98, 0.98, 0.99, 0.99, 20.0, 14.0)
    other = CornerRead("bottom-right", "6D", 0.3, 0.95, 0.3, 0.99, 20.0, 14.0)
    pips = PipEvidence("D", 0.99, 9, 20.0, alike=True, centred=True)
    assert Recognizer()._decide([top, other], pips).card == "9D"


def test_an_ace_over_a_picture_in_colours_is_read_only_where_two_corners_read_it():
    """An ace's middle is one pip: an "A" read in one corner over a picture in colours is a court
    card's rank misread (a black mark of its picture taken for the ace's pip). Some designs print
    their ace of spades in a picture: two corners reading the ace read it."""
    one = CornerRead("top-left", "AC", 0.99, 0.99, 1.0, 0.0, 10.7, 11.4)
    other = CornerRead("bottom-right", "AC", 0.98, 0.98, 1.0, 0.0, 10.5, 11.0)
    picture = PipEvidence("C", 0.99, 1, 10.0, alike=True, picture=True)
    result = Recognizer()._decide([one], picture)
    assert (result.card, result.reason, result.detail) == (None, CUES_DISAGREE, "index AC, a picture in colours in the middle")
    assert Recognizer()._decide([one], dataclasses.replace(picture, picture=False)).card == "AC"
    assert Recognizer()._decide([one, other], picture).card == "AC"


SEVEN_TINY_PIPS = PipEvidence(None, 0.0, 7, 5.0)  # seven pips of 5 px: too small to tell a suit


@pytest.mark.parametrize(
    "reads, pips, card, alone",
    [
        # a court card's middle, a picture, tells no rank: in one corner, its glyph is the only cue
        ([("QC", 0.92)], NO_PIPS, None, "court card"),
        ([("QC", 0.96)], NO_PIPS, "QC", None),
        ([("QC", 0.92), ("QC", 0.92)], NO_PIPS, "QC", None),  # two corners read it
        # a middle that does not show the suit again: the corner's suit glyph is the only cue
        ([("7C", 0.93)], SEVEN_TINY_PIPS, None, "suit"),
        ([("7C", 0.96)], SEVEN_TINY_PIPS, "7C", None),
        ([("7C", 0.93), ("7C", 0.93)], SEVEN_TINY_PIPS, "7C", None),  # two corners read it
        ([("7C", 0.93)], PipEvidence("C", 0.95, 7, 5.0, agreeing=7), "7C", None),  # pips read as its suit
    ],
)
def test_a_card_read_in_one_corner_alone_on_one_glyph_needs_more_than_the_threshold(reads, pips, card, alone):
    """Read in one corner alone, a court card's rank (its middle, a picture, tells no rank) and a
    suit the middle does not show again (pips too small to tell it) rest on that corner's one
    glyph: the card needs COURT_ALONE_P, not only the threshold (a narrow "J" bent by a wide lens,
    its other corner under a finger, read as a "Q" at 0.92; a seven of spades in a 160 x 120 frame
    out of focus through a colour sensor's mosaic, its 11 px spade read as a club at 0.94)."""
    names = ("bottom-right", "top-left")
    corners = [CornerRead(name, c, p, p ** 0.5, p ** 0.5, 0.01, 30.0, 20.0) for name, (c, p) in zip(names, reads)]
    result = Recognizer()._decide(corners, pips)
    assert result.card == card, result
    if card is None:
        assert result.reason == "low confidence"
        assert result.detail == f"a {alone} read in one corner alone, {COURT_ALONE_P} needed"


@pytest.mark.parametrize(
    "count, stray, side_middle, seconded, card",
    [
        (6, 0.0, False, False, "6D"),  # nothing over the middle: six pips in view are a six's
        (6, 1.2, False, False, None),  # print over it that may hide three pips: a nine's middle column
        (6, 1.2, True, False, "6D"),  # ... but a pip on the middle row beside the middle column is a six's
        (6, 1.2, False, True, "6D"),  # two corners read a "6"
        (5, 1.2, False, False, "6D"),  # a nine shows four more than five pips: more than that print may hide
        (5, 1.6, False, False, None),  # ... and print that may hide four
    ],
)
def test_a_six_read_in_one_corner_alone_over_print_that_may_hide_a_nines_pips_is_refused(
        count, stray, side_middle, seconded, card):
    """A design that prints its lower index upright shows a nine's lower "9" as a "6" from the
    card's other end, surely. Read in one corner alone, a six is claimed only where the print over
    the middle may not hide the pips a nine shows more, or where a pip in view lies on the middle
    row beside the middle column, where a six prints two and a nine none."""
    reads = [CornerRead("bottom-right", "6D", 0.998, 0.998, 1.0, 0.99, 25.0, 18.0)]
    if seconded:
        reads.append(CornerRead("top-left", "6D", 0.99, 0.99, 1.0, 0.99, 25.0, 18.0))
    pips = PipEvidence("D", 0.99, count, 30.0, stray=stray, alike=True, side_middle=side_middle)
    result = Recognizer()._decide(reads, pips)
    assert result.card == card, result
    if card is None:
        assert result.detail == "a 6 read in one corner alone, print over the middle that may hide a 9's"


@pytest.mark.parametrize("label, side_middle", [("6D", True), ("7S", True), ("8C", True), ("9D", False),
                                                ("9S", False), ("5H", False), ("3C", False)])
def test_a_pip_on_the_middle_row_beside_the_middle_column_is_a_six_sevens_or_eights(label, side_middle):
    """PipEvidence.side_middle from drawn faces: a six, seven and eight print a pip on each side of
    the middle row; a nine prints four down each side and its one middle-row pip in the middle
    column; a five and a three print theirs there too."""
    from shoed.vision import locate as L
    from vision_lab import synth

    face = synth.draw_face(label, np.random.default_rng(3), synth.classic_style())
    card = cv2.resize(face.image, (L.CANON_W, L.CANON_H), interpolation=cv2.INTER_AREA)
    recognizer = Recognizer()
    _, pips = X.read_card_marks(card)
    rows = _pip_vectors(pips)
    evidence = recognizer._pip_evidence(pips, recognizer.model.predict(np.vstack(rows)), 1.0)
    assert evidence.count == synth.RANKS.index(label[:-1]) + 1
    assert evidence.side_middle == side_middle


@pytest.mark.parametrize("side_middle, card", [(True, "6D"), (False, None)])
def test_a_nine_read_surely_against_six_counted_pips_is_ruled_out_only_by_a_sixs_middle_row(side_middle, card):
    """One corner reads a "6", six pips counted over a clean middle; the other corner reads the same
    glyph turned, a "9", at 0.98 (a design printing its lower index upright). Six pips out of the
    middle column rule a nine out only where one of them lies on the middle row beside it, as a
    six's do and a nine's never (a nine with its middle column and a row washed out shows the
    rest): else the corners disagree."""
    reads = [CornerRead("bottom-right", "6D", 0.994, 1.0, 0.994, 0.99, 25.0, 18.0),
             CornerRead("top-left", "9D", 0.983, 0.983, 1.0, 0.99, 25.0, 18.0)]
    pips = PipEvidence("D", 0.99, 6, 30.0, alike=True, side_middle=side_middle)
    result = Recognizer()._decide(reads, pips)
    assert result.card == card, result
    if card is None:
        assert result.reason == "corner indices disagree (6D or 9D)"
