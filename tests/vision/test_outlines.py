"""Every outline the locator offers of a card is read, and what one shows of
the card's print holds for the others: a contradiction of the index by the
middle, two corners that read two cards, and the number of pips (a card never
shows more pips than its rank)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import cv2
import numpy as np
import pytest

from shoed.vision import locate
from shoed.vision.recognize import CUES_DISAGREE, TOO_SMALL, CornerRead, PipEvidence, Recognizer, picture_scale
from vision_lab import decks, synth

DATA = Path(__file__).parent / "data" / "outlines"


def _installed(design: str) -> bool:
    return design in decks.designs()


class _FirstOutlineContested(Recognizer):
    """Reads every outline as the shipped recogniser does, but answers for the
    first as a card whose pips read as both suits of its colour would be."""

    def read_card(self, card, scale=1.0):
        result = super().read_card(card, scale)
        self.outlines = getattr(self, "outlines", 0) + 1
        if self.outlines == 1 and result.card is not None:
            return dataclasses.replace(result, card=None, reason=CUES_DISAGREE, contested=(result.card,),
                                       detail=f"index {result.card}, pips that read as S and as C")
        return result


@pytest.mark.skipif(not _installed("kde-jolly-royal"),
                    reason="needs KDE's deck artwork (apt-get install kdegames-card-data-kf5 librsvg2-bin)")
def test_a_card_contested_on_one_outline_is_not_read_from_another():
    """The locator offers this photograph two outlines (the card, and the card
    with a chip beside it); both read the same print. Where the first finds the
    card's suit contested, the second's reading of the same card does not
    count."""
    face = decks.face("kde-jolly-royal", "9C")
    shot = synth.photograph("9C", np.random.default_rng(10628326), synth.classic_style(), size=(1280, 960),
                            occlusion_p=0.0, face=face)
    assert len(locate.find_quads(shot.image)) >= 2
    assert Recognizer().identify(shot.image).card == "9C"
    result = _FirstOutlineContested().identify(shot.image)
    assert result.card is None and result.reason == CUES_DISAGREE


class _FirstOutlineShowsTen(Recognizer):
    """Reads every outline as the shipped recogniser does, but answers for the
    first as a refusal that saw ten pips of one size."""

    def read_card(self, card, scale=1.0):
        result = super().read_card(card, scale)
        self.outlines = getattr(self, "outlines", 0) + 1
        if self.outlines == 1:
            return dataclasses.replace(result, card=None, confidence=0.2, reason="low confidence", pip_count=10)
        return result


@pytest.mark.skipif(not _installed("kde-jolly-royal"),
                    reason="needs KDE's deck artwork (apt-get install kdegames-card-data-kf5 librsvg2-bin)")
def test_a_reading_through_one_outline_is_ruled_out_by_the_pips_another_showed():
    """A card never shows more pips than its rank: where one outline of the
    card showed ten, a nine read through another (an outline running off the
    picture, a chip beside the card: some pips left out) is no answer."""
    face = decks.face("kde-jolly-royal", "9C")
    shot = synth.photograph("9C", np.random.default_rng(10628326), synth.classic_style(), size=(1280, 960),
                            occlusion_p=0.0, face=face)
    result = _FirstOutlineShowsTen().identify(shot.image)
    assert result.card is None and result.reason == CUES_DISAGREE
    assert result.detail == "index 9C, 10 pips in the middle through another outline"


def test_two_corners_that_read_a_six_and_a_nine_rule_the_nine_out_for_every_outline():
    """A 192 x 192 frame of a six of diamonds of KDE's ancient-egyptians (a rank with its suit
    beside it, 6 and 9 alike), upside down, a chip beside it. Through the card's own outline one
    corner reads "6D", the other "9D", and the six pips show none in the middle column. The
    next outline takes the chip in: the card's middle bends (two side pips move to the middle
    column) and one corner drops out, and what is left reads "9D". What the first outline saw
    against the nine holds."""
    image = cv2.imread(str(DATA / "6D-read-as-9D-through-an-outline-over-a-chip.png"))
    recognizer = Recognizer()
    quads = locate.find_quads(image)
    assert len(quads) >= 2
    wider = [turn for q in quads[1:] for turn in (q, q.turned())]
    through = [recognizer.read_card(locate.warp_card(image, q), picture_scale(q)) for q in wider]
    assert "9D" in [r.card for r in through]  # read alone, the wider outline would give the wrong card
    result = recognizer.identify(image)
    # the corners' two readings, in either order (the surer first)
    assert result.card is None and result.reason in ("corner indices disagree (6D or 9D)",
                                                     "corner indices disagree (9D or 6D)")


@pytest.mark.parametrize(("reads", "pips", "contested"), [
    # a "9" over six pips, none in the middle column: a six the wrong way up, for every outline
    ([("top-left", "9D")], PipEvidence("D", 0.99, 6, 30.0), ("9D",)),
    # pips of another suit than the index's
    ([("top-left", "8S")], PipEvidence("C", 0.99, 8, 30.0), ("8S",)),
    # more pips than the rank
    ([("top-left", "7H")], PipEvidence("H", 0.99, 8, 30.0), ("7H",)),
    # two corners, two cards: both
    ([("top-left", "6D"), ("bottom-right", "9D")], PipEvidence("D", 0.99, 6, 30.0), ("6D", "9D")),
    # pips too few: an outline cutting the card short shows that too, another may show them all
    ([("top-left", "8S")], PipEvidence("S", 0.99, 2, 30.0), ()),
])
def test_what_a_reading_contests_for_the_other_outlines(reads, pips, contested):
    corner_reads = [CornerRead(corner, card, 0.99, 0.99, 0.99, 0.0 if card[-1] in "SC" else 1.0, 30.0, 30.0)
                    for corner, card in reads]
    result = Recognizer()._decide(corner_reads, pips)
    assert result.card is None and result.contested == contested


def test_a_count_standing_in_for_a_tiny_rank_holds_only_where_every_outline_counts_alike(monkeypatch):
    """A 128 x 128 frame of an eight of hearts whose index hearts are as large
    as its pips. Through the card's own outline eight pips are counted and no
    index read; through an outline that takes in more than the card, an index
    heart is counted as a ninth pip and the 7 px "8" is weakly read as "9":
    two cues that seem to agree, where the count is what stands in for a rank
    too small to read. What that outline takes in beyond the card is other print
    in the middle, where the count stands in for no rank; its nine pips lie
    lopsided, as no nine prints them, and count no rank either; and, those guards
    left aside, another outline counting otherwise leaves it no answer. (The index's
    thin "8" stands out at a lower ink level, where the card is read whole: the
    guards are tested without it.)"""
    from shoed.vision import index, recognize

    image = cv2.imread(str(DATA / "8H-counted-9-through-a-wrong-outline.png"))
    assert len(locate.find_quads(image)) >= 2
    result = Recognizer().identify(image)
    assert result.card == "8H" and result.pip_count == 8, result
    monkeypatch.setattr(index, "FAINT_LEVELS", ())
    result = Recognizer().identify(image)
    assert result.card is None and result.reason == TOO_SMALL
    assert "other print in the middle" in result.detail
    monkeypatch.setattr(recognize, "STRAY_PRINT", float("inf"))
    result = Recognizer().identify(image)
    assert result.card is None and result.reason == TOO_SMALL
    assert "other print" not in result.detail
    monkeypatch.setattr(recognize, "mirrored", lambda group: True)
    result = Recognizer().identify(image)
    assert result.card is None and result.reason == CUES_DISAGREE
    assert result.detail == "index 9H, 9 pips in the middle, 8 through another outline"


def test_a_box_printed_on_the_cloth_around_the_card_reads_no_other_card():
    """A two of diamonds of held-out serif lettering lying in a betting box printed on the cloth, a
    little wider than the card, a hard shadow across it (a 340 x 270 crop of a 640 x 480
    photograph). The box is offered first: through it the card's left-hand indices lie inward,
    where pips are looked for, and counted as pips with the shadow's edge as print that may hide
    more, the "2" misread as a "7" passes. The card's own outline, within the box, reads its
    corners otherwise: the two outlines of one card do not tell one card, and it is refused."""
    image = cv2.imread(str(DATA / "2D-read-as-7D-through-a-box-printed-on-the-cloth.png"))
    recognizer = Recognizer()
    quads = locate.find_quads(image)
    first = recognizer.read_card(locate.warp_card(image, quads[0]), picture_scale(quads[0]))
    assert first.card == "7D"  # read alone, the box would give the wrong card
    inner = [q for q in quads[1:] if locate.overlap(quads[0], q) >= 0.8]
    assert any("2D" in recognizer.read_card(locate.warp_card(image, q), picture_scale(q)).contested for q in inner)
    result = recognizer.identify(image)
    assert result.card is None
    assert result.reason == "corner indices disagree (7D or 2D)"
    assert result.detail == "two outlines of the card, one within the other, read two cards"


def test_the_pips_laid_out_through_the_card_s_own_outline_hold_against_a_box_around_it():
    """A five of clubs of held-out serif lettering in a betting box printed on the cloth, in the
    dark half of a hard shadow (a 640 x 480 photograph). The card's own outline is offered first:
    its "5"s read as "7"s, too weakly to answer, over five pips in a five's layout, nothing over
    them. Through the box, wider, the same glyphs read "7C" surely, and the five pips, the layout
    lost and the cloth inside the box counted as print that may hide two more, pass for a seven's.
    What the card's own outline showed of its middle holds for the box."""
    image = cv2.imread(str(DATA / "5C-read-as-7C-through-a-box-printed-on-the-cloth.webp"))
    recognizer = Recognizer()
    quads = locate.find_quads(image)
    through = [recognizer.read_card(locate.warp_card(image, q), picture_scale(q)) for q in quads]
    assert "7C" in [r.card for r in through]  # read alone, the box would give the wrong card
    assert any(r.pip_layout == "5" and not r.pips_covered for r in through)
    result = recognizer.identify(image)
    assert result.card is None and result.reason == CUES_DISAGREE
    assert result.detail == "index 7C, a 5's pips in the middle through another outline of the card"
