"""Identifying the card in a photograph, and never guessing one.

The deck: "Macau Baccarat is played with eight decks, each containing 52
cards" (docs/rules/macau-baccarat-casinos-austria.txt, opening paragraph); every one of the 52
faces must be readable from a photograph (issue: camera fallback).

Never guessing: "a garbled token must be reported as unreadable (never
guessed)" (docs/standards/beetek-shoe.md, consequences for a driver) and "an
uncorrectable corruption of critical data stops play rather than guessing"
(docs/standards/table-game-standards.md, item 5). For the camera: below the
confidence threshold the answer is no card, with a reason.

Accuracy floors below were measured on these very sets (fixed seeds) with the
shipped model, then lowered by a margin: classic 104/104, held-out 51/52 when
written (see benchmarks/vision_bench.py for larger sets).
"""

from __future__ import annotations

import pathlib

import cv2
import numpy as np
import pytest

from shoed.vision import locate as L
from shoed.vision.recognize import (CUES_DISAGREE, DEFAULT_THRESHOLD, MIN_RANK_PX, NO_COLOUR, TOO_SMALL,
                                    Identification, Recognizer, _both_ends, has_colour, identify, picture_scale)
from tests.vision.framing import corner_error, filling, on_grey_cloth
from vision_lab.hard_sets import side_by_side

DATA = pathlib.Path(__file__).parent / "data"


def _refused(recognizer, name: str, card: str | None) -> Identification:
    """The answer for a stored picture (`name` under DATA) that read as a wrong card: a refusal,
    and at a threshold lowered to 0.5 still a refusal or the card itself, `card` (None: a card
    shoed is not meant to read), never another."""
    image = cv2.imread(str(DATA / name))
    result = recognizer.identify(image)
    assert result.card is None, result
    assert Recognizer(recognizer.model, threshold=0.5).identify(image).card in (None, card)
    return result
CLASSIC_FLOOR = 0.95
HELD_OUT_FLOOR = 0.85


def tally(reads, threshold=DEFAULT_THRESHOLD):
    """Right, wrong and unread answers at `threshold` from lenient reads."""
    right = wrong = unread = 0
    mistakes = []
    for shot, result in reads:
        card = result.card if result.card is not None and result.confidence >= threshold else None
        if card is None:
            unread += 1
        elif card == shot.card:
            right += 1
        else:
            wrong += 1
            mistakes.append((shot.card, card, result.confidence))
    return right, wrong, unread, mistakes


def test_every_card_of_two_decks_in_the_style_it_learnt(classic_reads):
    right, wrong, unread, mistakes = tally(classic_reads)
    assert wrong == 0, f"cards reported wrongly: {mistakes}"
    assert right / len(classic_reads) >= CLASSIC_FLOOR, (right, unread)


def test_a_deck_in_lettering_it_never_saw(held_out_reads):
    # held-out style: stroke font and OpenCV's "uni" font, smaller suit under the rank,
    # index closer to the edge, yellowish stock (vision_lab.synth.held_out_style)
    right, wrong, unread, mistakes = tally(held_out_reads)
    assert wrong == 0, f"cards reported wrongly: {mistakes}"
    assert right / len(held_out_reads) >= HELD_OUT_FLOOR, (right, unread)


def test_a_wrong_card_is_never_above_the_threshold(classic_reads, held_out_reads):
    """Wrong answers stay below the threshold even when it is lowered to 0.7:
    the margin behind 0.9."""
    right, wrong, unread, mistakes = tally(classic_reads + held_out_reads, threshold=0.7)
    assert wrong == 0, mistakes


@pytest.mark.parametrize(
    "kind, reasons",
    [
        ("empty", {"no card found", "no corner index found"}),  # the table alone (clutter may look card-like)
        # a card face down (a back's pattern printed in blue, taken for an index, is neither red nor black)
        ("back", {"no card found", "no corner index found", "low confidence", "colour unclear"}),
        ("blank", {"no card found", "no corner index found"}),  # a white card without print
        # indices covered (print warped into a corner through another outline of the card may look like an
        # index, weakly: the pips then contradict it)
        ("hidden", {"no card found", "no corner index found", "low confidence", "colour unclear", "cues_disagree"}),
    ],
)
def test_no_card_where_none_can_be_read(recognizer, hard_shots, kind, reasons):
    shots = [s for s in hard_shots if s.kind == kind]
    assert shots
    for shot in shots:
        result = recognizer.identify(shot.image)
        assert result.card is None, f"{kind}: reported {result.card} ({result.confidence})"
        assert result.reason.split(" (")[0] in reasons, result.reason


@pytest.mark.parametrize("turns", [1, 2, 3])
def test_any_rotation_reads_the_same(recognizer, classic_reads, turns):
    checked = 0
    for shot, upright in classic_reads[:8]:
        if upright.card != shot.card or checked == 4:
            continue
        turned = recognizer.identify(np.ascontiguousarray(np.rot90(shot.image, turns)))
        assert turned.card == shot.card
        checked += 1
    assert checked == 4


def test_colour_constrains_the_suit(recognizer, classic_shots):
    """Hearts and diamonds are red, clubs and spades black: a picture with no colour in it (a
    monochrome camera) cannot tell a red card from a black one, so no card is read in it, black
    or red, and the reason says why."""
    checked = 0
    for shot in classic_shots[:20]:
        grey = cv2.cvtColor(cv2.cvtColor(shot.image, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
        result = recognizer.identify(grey)
        assert result.card is None, (shot.card, result)
        if recognizer.identify(shot.image).card is not None:
            assert result.reason in (NO_COLOUR, TOO_SMALL, CUES_DISAGREE, "low confidence", "colour unclear"), result
            checked += result.reason == NO_COLOUR
    assert checked >= 10


def test_a_monochrome_cameras_wrong_card_is_refused(recognizer):
    """A 128 x 128 frame of a monochrome camera: an ace of hearts whose heart, as dark as black
    print, was read as a spade at 0.96. No colour in the picture: refused as such."""
    image = cv2.imread(str(DATA / "grey" / "AH-monochrome-read-as-AS.png"), cv2.IMREAD_UNCHANGED)
    assert image.ndim == 2
    result = recognizer.identify(image)
    assert (result.card, result.reason) == (None, NO_COLOUR)
    assert "no colour" in result.detail and result.confidence > 0.9  # the reading it withheld
    lenient = Recognizer(recognizer.model, threshold=0.5)
    assert lenient.identify(cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)).reason == NO_COLOUR


def test_a_six_with_a_pip_lost_in_glare_is_no_five(recognizer):
    """A 128 x 128 frame of anglo_modern's six of clubs (a deck design never trained on) with a
    lamp's glare over its lower left pip: five pips are in view, and the 5.7 px "6" reads more
    as a "5". The five pips' count stood in for the rank too small to read, and the card was
    read as the five of clubs at 0.97; they lie lopsided, as no five prints them, and count
    no rank: the card is refused."""
    image = cv2.imread(str(DATA / "glare" / "6C-glare-read-as-5C.png"))
    result = recognizer.identify(image)
    assert result.card is None and result.reason == TOO_SMALL, result
    assert result.pip_count == 5 and result.reads[0].card == "5C"  # what the count agreed with


def test_a_nine_read_from_its_other_end_as_a_six_is_refused(recognizer):
    """KDE's ancient-egyptians (a deck design never trained on) prints its lower index upright, and
    its rank alone: seen from the other end, the nine's lower "9" is a "6" at 0.999, in both corners.
    A shadow across its middle (320 x 240) left six of its nine pips of one size, one of them its
    middle pip: a six prints none in the middle column, and the card is refused, not read as the
    six of diamonds (1.00 before)."""
    image = cv2.imread(str(DATA / "turned" / "9D-upright-lower-index-read-as-6D.png"))
    result = recognizer.identify(image)
    assert result.card is None and result.reason == CUES_DISAGREE, result
    assert result.detail == "index 6D, a pip in the middle column: a 9 the wrong way up"


def test_a_six_read_in_one_corner_alone_over_a_covered_middle_is_refused(recognizer):
    """The same design's nine of diamonds (800 x 600, the lens out of focus), a dealer's finger over
    its upper index and across its middle: the lower "9", printed upright, reads as a "6" at 0.998,
    and six of the nine pips are in view, none in the middle column, the rest under the finger.
    Read in one corner alone, a six is claimed only over a middle that shows nothing but its
    pips; here the finger lies over it, and the card is refused (the six of diamonds at 1.00
    before)."""
    result = _refused(recognizer, "turned/9D-upright-lower-index-read-as-6D-its-middle-under-a-finger.jpg", "9D")
    assert result.reason == "low confidence", result
    assert result.detail == "a 6 read in one corner alone, print over the middle that may hide a 9's"


def test_a_court_card_read_over_pips_and_no_picture_is_refused(recognizer):
    """A five of clubs of KDE's gm-paris design (never trained on), bent, a finger over its upper
    index and glare over its middle, at 1280 x 960: its lower "5" read as a "J" at 0.95, and three of
    its pips in view, lopsided, counted no rank. A court card's middle is a picture in colours: three
    marks of one size or more, the suit's, with no picture, are a number card's pips."""
    result = _refused(recognizer, "covered/5C-bent-a-finger-over-one-corner-read-as-JC.webp", "5C")
    assert result.reason == "cues_disagree" and result.detail == "index JC, 3 pips in the middle, no picture"


@pytest.mark.parametrize("name, card", [
    ("5D-a-finger-wider-than-a-pip-over-one.png", "5D"),
    ("5C-a-finger-over-one-corner-its-5-read-as-a-J.png", "5C"),
])
def test_a_card_under_a_finger_is_read(recognizer, name, card):
    """Two cards photographed at 640 x 480 under a dealer's finger, read right without it:
    - paris's five of diamonds (a deck design never trained on), the finger over one pip. The
      finger, wider than the window the ink map measures the paper in, is its own paper there and
      showed only by its edges: four pips with nothing over them doubted the "5" (cues_disagree).
      Measured in its own colours against the card's paper (index.cover_print), it may hide a pip;
    - a five of clubs of a lettering never trained on (C059 Roman), the finger's edge over its
      lower index, whose "5" it joins into a "J" read at 0.84. Five pips lying as a five's rule a
      court card out, however surely its corner reads (the corners disagreed before)."""
    result = recognizer.identify(cv2.imread(str(DATA / "covered" / name)))
    assert result.card == card, result


def test_a_court_cards_silhouette_is_no_aces_pip(recognizer):
    """KDE's oxygen-air (a deck design never trained on) prints a rank alone in one corner and a
    black silhouette for its jack's picture. On a printed layout with a lamp's glare over a corner
    (480 x 360), the locator traced an outline through the layout's line and the glare: through it
    the jack's "J" read as an "A" at 0.63 and the silhouette, one large mark, was counted as an
    ace's pip, lifting the card to the ace of clubs at 0.95. The silhouette reads as no suit's
    shape: it counts no ace, and the card is refused."""
    _refused(recognizer, "outlines/JC-silhouette-counted-as-an-aces-pip.jpg", "JC")


def test_marks_of_a_middle_in_colours_count_no_rank(recognizer):
    """A 128 x 128 frame of KDE's German-suited xskat nine of leaves (a design shoed is not meant
    to read): its corner shows a 5 px mark alone, read as a "4" at 0.66, and its green leaves, run
    together in four groups, were counted as four pips, standing in for the rank too small to
    read: the four of spades at 0.91. A number card is printed in its suit's ink alone: marks in a
    middle printed in other colours count no rank, and the card is refused."""
    _refused(recognizer, "pips/9S-german-leaves-run-together-counted-as-4S.png", None)


def test_fewer_pips_than_the_rank_with_nothing_over_them_doubt_the_index(recognizer):
    """A 240 x 180 picture of KDE's ancient-egyptians eight of diamonds (a deck design never trained
    on) through a colour sensor's mosaic: its outlined "8", 12 px tall, read as a "9" at 0.95, and
    the card was the nine of diamonds at 0.95 over eight pips in two columns of four (a nine's
    with its middle pip hidden). Nothing lies over the middle to hide a pip, and the pips are large
    enough to lie apart: the count doubts the index, and the card is refused."""
    result = _refused(recognizer, "pips/8D-eight-pips-whole-index-read-as-9.png", "8D")
    assert result.reason == CUES_DISAGREE, result
    assert result.detail == "index 9D, 8 pips in the middle and nothing over it"


def test_a_picture_has_colour_where_a_little_of_it_is_coloured():
    """Grey, or grey in one tint, is no colour; a red patch of 0.5% of the picture is, and a
    small frame's red print is."""
    rng = np.random.default_rng(3)
    grey = np.repeat(cv2.resize(rng.integers(0, 256, (48, 64), dtype=np.uint8), (640, 480))[..., None], 3, axis=2)
    assert not has_colour(grey)
    tinted = np.clip(grey * np.array([0.6, 0.85, 1.0]), 0, 255).astype(np.uint8)  # an amber monochrome picture
    assert not has_colour(tinted)
    red = grey.copy()
    red[200:240, 300:340] = (40, 40, 200)  # a red patch of 0.5% of the picture
    assert has_colour(red)
    speck = grey.copy()
    speck[200:203, 300:303] = (40, 40, 200)  # 9 pixels: 0.003%
    assert not has_colour(speck)
    assert not has_colour(np.zeros((1, 1, 3), np.uint8))
    frame = np.full((128, 128, 3), 235, np.uint8)
    assert not has_colour(frame)
    frame[60:66, 60:66] = (50, 50, 190)  # one red pip, 6 px wide
    assert has_colour(frame) and not has_colour(cv2.cvtColor(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY),
                                                             cv2.COLOR_GRAY2BGR))


@pytest.mark.parametrize("label, seed", [("3D", 2), ("TH", 3), ("QH", 2)])
def test_a_red_card_shows_the_colour_the_picture_around_it_lacks(recognizer, label, seed):
    """A small red card on grey cloth: in the picture's copy that has_colour judges, its pips are a
    few pixels, no colour to count, but the card read is red, its print redder than its paper, which
    no monochrome camera shows. It is read; the same picture in grey is not, nor a black card so
    photographed (no colour in view at all: it may be a monochrome camera's red card)."""
    picture = on_grey_cloth(label, seed)
    assert not has_colour(picture)
    assert recognizer.identify(picture).card == label
    grey = cv2.cvtColor(cv2.cvtColor(picture, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    assert (recognizer.identify(grey).card, recognizer.identify(grey).reason) == (None, NO_COLOUR)
    black = on_grey_cloth(label[:-1] + "S", seed)
    assert (recognizer.identify(black).card, recognizer.identify(black).reason) == (None, NO_COLOUR)


def test_the_answer_says_where_the_card_is(recognizer, classic_shots):
    shot = classic_shots[0]
    result = recognizer.identify(shot.image)
    assert result.card == shot.card
    # the same four corners, in some order, within 2% of the picture's size
    assert corner_error(result.corners, shot.corners) < 0.02 * max(shot.image.shape[:2])
    assert result.index in ("top-left", "top-right", "bottom-right", "bottom-left")
    assert set(result.to_json()) >= {"card", "confidence", "corners", "index"}


def test_a_higher_threshold_only_withholds(recognizer, classic_shots):
    strict = Recognizer(recognizer.model, threshold=0.999999)
    for shot in classic_shots[:8]:
        normal, high = recognizer.identify(shot.image), strict.identify(shot.image)
        assert high.card in (None, normal.card)
        if high.card is None:
            # the refusal reports its best reading: the same as the card read at
            # the normal threshold, or a surer one from an outline looked at after it
            assert high.reason and high.confidence >= normal.confidence


@pytest.mark.parametrize(
    "image, message",
    [
        (np.zeros((0, 0, 3), np.uint8), "non-empty"),
        (np.zeros((10, 10, 3), np.float32), "8-bit"),
        (np.zeros((10, 10, 2), np.uint8), "3 colour channels"),
        ("picture.jpg", "numpy array"),
    ],
)
def test_bad_input_is_a_clear_error(image, message):
    with pytest.raises(ValueError, match=message):
        identify(image)


def test_grey_and_bgra_images_are_taken(classic_shots):
    shot = classic_shots[1]
    bgra = cv2.cvtColor(shot.image, cv2.COLOR_BGR2BGRA)
    assert identify(bgra).card == shot.card
    grey = cv2.cvtColor(shot.image, cv2.COLOR_BGR2GRAY)
    assert identify(grey).reason == NO_COLOUR  # taken, and refused for its want of colour


def test_identification_json():
    none = Identification(None, 0.0, "no card found")
    assert none.to_json() == {"card": None, "confidence": 0.0, "reason": "no card found"}
    assert DEFAULT_THRESHOLD == 0.9


@pytest.mark.parametrize("seed, labels", [(5, ("9S", "AS")), (7, ("KD", "QD")), (11, ("10H", "9C")),
                                          (13, ("4H", "2C"))])
def test_two_cards_in_view_are_refused_not_one_taken_for_the_card_dealt(recognizer, seed, labels):
    """Which of two cards side by side is the one dealt, the picture does not tell: naming
    either could name the wrong card. Each card alone is read."""
    rng = np.random.default_rng(seed)
    picture = side_by_side(rng, labels)
    result = recognizer.identify(picture)
    assert result.card is None and result.reason == "several_cards", result
    named = {"T" + c[2:] if c.startswith("10") else c for c in labels}
    assert set(result.detail.replace(" in view", "").split(" and ")) == named, result.detail
    half = picture.shape[1] // 2
    assert {recognizer.identify(picture[:, :half]).card, recognizer.identify(picture[:, half:]).card} == named


def test_the_same_card_twice_in_view_is_that_card(recognizer):
    """An eight-deck shoe holds each card eight times: two of them side by side are still one card's identity."""
    rng = np.random.default_rng(17)
    assert recognizer.identify(side_by_side(rng, ("7D", "7D"))).card == "7D"


def test_a_card_beside_a_card_back_is_read(recognizer):
    """Another outline apart from the card that reads no card (a back, face down) leaves the card as read."""
    rng = np.random.default_rng(19)
    picture = side_by_side(rng, ("8S", None), kinds=("card", "back"))
    assert recognizer.identify(picture).card == "8S"


def test_a_sure_rank_in_the_other_corner_contests_a_card_whose_suit_glare_washed_out(recognizer):
    """Aisleriot's simplistic jack of spades (a deck design never trained on), 640 x 480, a lamp's
    glare over its upper corner's spade. Its lower "J", turned, read as a "4" at 0.94 beside a sure
    spade, and its middle's big letter is no rows of pips: the four of spades at 0.94. The upper
    corner read its "J" at 1.00, but its washed-out suit at nothing, so that corner's card counted
    for nothing. A rank read that surely, of the index's size, contests the card: it is refused."""
    _refused(recognizer, "glare/JS-glare-over-one-suit-other-corner-read-4S.jpg", "JS")


def test_a_count_with_a_pale_mark_in_the_middle_seconds_no_two_four_six_or_eight(recognizer):
    """A five of clubs of a held-out lettering (NimbusRoman Regular), 1280 x 960, the lens out of
    focus and a lamp's glare over the middle: its thin "5", defocused, read as a "4" at 0.42 and
    0.54 in its corners, over four pips of one size; its middle pip, pale in the glare, was
    smaller than they at the pips' ink level and stood apart as other print (0.6 of a pip). The
    four pips seconded the "4": the four of clubs at 0.97. A four prints a five's pips but its
    middle one: where the middle shows other print, its count seconds no rank, and the index
    alone is not sure (a threshold lowered under 0.54 takes the index's word alone)."""
    image = cv2.imread(str(DATA / "glare/5C-defocused-5-read-as-4-over-four-pips-its-middle-one-in-glare.jpg"))
    result = recognizer.identify(image)
    assert result.card is None and result.reason == "low confidence", result
    assert result.confidence < 0.6, result  # the index alone, not seconded by the count


def test_a_suit_read_in_one_corner_alone_that_the_middle_does_not_show_is_read_only_surely(recognizer):
    """KDE's nicu-ornamental seven of spades (a deck design never trained on) in a 160 x 120 frame,
    the lens out of focus, through a colour sensor's mosaic, the card about 60 px long: one corner
    read it, its "7" at 0.99 and its large spade, 11.4 px tall, as a club at 0.94; its seven pips,
    5 px, told no suit. The seven of clubs at 0.93 rested on that one glyph: refused. The other
    corner's suit, run into a pip, is read apart from it at a raised ink level, a club at 0.48 under
    9 px: it does not second the card, and a suit glyph so small tells no spade from a club."""
    result = _refused(recognizer, "small/7S-out-of-focus-mosaic-160x120-spade-read-as-club-in-one-corner.png", "7S")
    assert (result.reason == "low confidence" and result.detail.startswith("a suit read in one corner alone")
            or result.reason == TOO_SMALL and result.detail.startswith("suit glyph")), result


@pytest.mark.parametrize("name", sorted(p.name for p in (DATA / "joined").iterdir()))
def test_a_suit_run_into_a_pip_beside_it_is_read_apart(recognizer, name):
    """128 x 128 frames of number cards of clubs, deck designs never trained on (guyenne-classic,
    paris, dondorf), stored in `joined/`: the index's club, its wide lobes close to the pip beside it,
    runs into that pip, print running off the corner's window, so at the window's own ink level the
    rank stands alone, and the card was refused (no suit beside it, pips counted short). Raised, the
    level parts the suit from the pip: the card is read, the same at a threshold lowered to 0.5."""
    image = cv2.imread(str(DATA / "joined" / name))
    result = recognizer.identify(image)
    assert result.card == name[:2], result
    assert Recognizer(recognizer.model, threshold=0.5).identify(image).card == name[:2]


def test_an_ace_over_a_picture_in_colours_is_refused(recognizer):
    """A king of clubs of a held-out lettering (NimbusRoman Regular), 400 x 300, a bright exposure
    through a colour sensor's mosaic: its 11 px "K" read as an "A" at 1.00, and one black mark of its
    picture as a club, an ace's one pip: the ace of clubs at 1.00, read in that corner alone. An
    ace's middle is one pip, no picture: 13% of it printed in colours other than red and black, the
    card is refused."""
    result = _refused(recognizer, "courts/KC-bright-K-read-as-A-over-its-picture.png", "KC")
    assert result.reason == CUES_DISAGREE, result
    assert result.detail == "index AC, a picture in colours in the middle"


def test_pips_counted_through_an_outline_beside_a_finger_stand_in_for_no_rank(recognizer):
    """An eight of diamonds of a held-out lettering (OpenSans Bold) in a 128 x 128 frame through a
    colour sensor's mosaic, a dealer's finger over its upper pips. Through the card's outline its
    8.7 px "8" is too small to read, five pips are in view and the finger's print lies over them.
    The locator offers an outline bounded by the finger's edge and the card's too: through it the
    five pips lie as a five's, and the rank counted from them made the card the five of diamonds
    at 0.96. A count that stands in for the rank is refused where another outline of the card
    shows print over its pips."""
    _refused(recognizer, "covered/8D-finger-over-pips-counted-5-through-an-outline-beside-it.png", "8D")


def test_more_pips_missing_than_a_finger_hides_doubt_the_index(recognizer):
    """KDE's ancient-egyptians four of diamonds (a deck design never trained on) in a 128 x 128
    frame, a dealer's finger reaching over its middle. Its lower "4", 10.2 px, read as a "7" at
    0.92 over three pips in view; the finger's print over the middle measured 0.6 of a pip's area,
    enough to lie over parts of two pips, not four: the card is refused."""
    result = _refused(recognizer, "covered/4D-finger-4-read-as-7-over-three-pips.png", "4D")
    assert result.reason == CUES_DISAGREE, result
    assert result.detail == "index 7D, 3 pips in the middle and print the size of 0.6 pips over it"


def test_a_court_card_read_in_one_corner_alone_is_read_only_surely(recognizer):
    """A jack of clubs of a narrow bold lettering never trained on (NimbusSansNarrow Bold), 1024 x
    768, a dealer's finger over its upper index and a wide lens's barrel distortion: its lower
    "J", a thin hooked stroke bent by the lens, read as a "Q" at 0.92, and nothing else on the card
    tells a court card's rank. Read in one corner alone, a court card needs 0.95: refused."""
    result = _refused(recognizer, "covered/JC-finger-over-one-corner-J-bent-by-a-lens-read-as-Q.jpg", "JC")
    assert result.reason == "low confidence", result


@pytest.mark.parametrize("label, box, height, square, turns", [
    ("7H", (0, 0, 1, 1), 480, False, 0),
    ("TD", (-0.015, -0.015, 1.015, 1.015), 480, False, 1),
    ("QH", (0.01, 0.01, 0.99, 0.99), 640, True, 0),
    ("4D", (0, 0, 1, 1), 224, True, 3),
])
def test_a_card_filling_the_picture_is_read(recognizer, label, box, height, square, turns):
    """A still cut to the card, or a camera framing it tightly, shows no outline of the card: the
    picture's frame is taken as the card's (locate.find_quads offers it last), the card read through it, its
    corners the picture's (or, where a sliver of the table shows, the card's own, as near)."""
    picture = filling(label, box, height, square, turns, seed=23)
    result = recognizer.identify(picture)
    assert result.card == label, result
    h, w = picture.shape[:2]
    frame = [(0, 0), (w - 1, 0), (w - 1, h - 1), (0, h - 1)]
    assert corner_error(result.corners, frame) <= 0.02 * max(h, w)


@pytest.mark.parametrize("label", ["9H", "6D", "4H"])
def test_a_card_filling_a_128_px_picture_is_read_from_its_small_index_at_both_ends(recognizer, label):
    """A card filling a picture 128 px tall: its index glyphs are under MIN_RANK_PX, its rank told
    by its pips as ever. Read through the picture's frame, the two ends' small glyphs, each reading
    the rank surely by itself, show the index at both ends."""
    picture = filling(label, (0.01, 0.01, 0.99, 0.99), 128, seed=25)
    result = recognizer.identify(picture)
    assert result.card == label, result
    ends = [r for r in result.reads if r.card == label]
    assert len(ends) >= 2 and all(r.rank_px < MIN_RANK_PX for r in ends)


def test_a_part_of_a_card_filling_the_picture_is_no_card_of_its_own(recognizer):
    """Part of KDE's standard eight of diamonds (a design never trained on) filling a 128 x 125
    frame, cut by all four edges: five of its pips in a five's layout, a piece of its lower index
    in a corner. Taken as the card, the picture's frame read it as 5D at 0.95, its "8" too small
    to read and the layout standing in for it. The frame is taken as the card's only where two
    opposite corners read the card's index, each with a rank glyph read by itself: refused."""
    name = "framed/8D-part-of-the-card-filling-a-128-frame-five-pips-read-as-5D.png"
    _refused(recognizer, name, "8D")
    image = cv2.imread(str(DATA / name))
    frame = L.find_quads(image)[-1]
    assert frame.frame and frame.ambiguous  # nearly square: read both ways round
    through = [recognizer.read_card(L.warp_card(image, q), picture_scale(q)) for q in frame.ways()]
    assert [r.card for r in through] == [None, "5D"]  # a quarter turn reads the wrong card in one corner
    assert not _both_ends(through[1])


def test_an_outline_within_a_picture_that_is_the_card_reading_another_card_is_refused(recognizer):
    """aisleriot's ornamental ten of diamonds (a design never trained on), the picture cut to the
    card and squeezed to a square (960 x 960): the locator's best outline, three sides of part of
    the card and a fourth placed, read its lower "10" as 7D at 0.92, alone; the picture's frame
    reads TD at both ends. The picture may be the card, the outline a part of it: a card read
    through each, two, is refused, not the outline's taken (7D on the previous version)."""
    result = _refused(recognizer, "framed/TD-cut-to-the-card-squeezed-square-an-outline-within-read-as-7D.jpg",
                      "TD")
    assert result.reason == "corner indices disagree (7D or TD)", result


def test_a_mirrored_picture_is_refused_and_said_to_be_mirrored(recognizer):
    """A camera set to mirror its picture (a webcam's mirror setting, a phone's front camera): no
    card is printed mirrored. Cards of four held-out letterings (25 of the 28 read right as
    photographed), mirrored left to right and top to bottom, are never read as another card, and most are refused
    as `mirrored` (32 of 56 when written; the rest `low confidence`, `cues_disagree`), the detail
    naming the rank each way: the integrator is told what to set right."""
    from vision_lab import hard_sets, synth

    answers = []
    for label in ("2H", "4S", "5D", "7C", "9H", "JS", "KD"):
        for k, style in enumerate(hard_sets.held_out_styles()[:4]):
            shot = synth.photograph(label, np.random.default_rng(k), style, size=(1280, 960), occlusion_p=0.0)
            for flip in (1, 0):
                result = recognizer.identify(cv2.flip(shot.image, flip))
                assert result.card is None, (label, style.name, flip, result)
                answers.append(result)
    said = [r for r in answers if r.reason == "mirrored"]
    assert len(said) >= 30, [r.reason for r in answers]
    for r in said:
        assert r.detail is not None and " mirrored as " in r.detail and " as it is as " in r.detail, r.detail


def test_a_card_whose_mirrored_rank_reads_as_another_is_refused_though_its_middle_agrees(recognizer, monkeypatch):
    """The mirror check guards a card the other cues would let through: a held-out lettering's four
    of spades, mirrored top to bottom, its "4" read as an "A". With the middle's contradictions set
    aside (four pips under an "A"), as if a design printed its ace so, it reads as the ace of spades
    at 0.91; its "4", mirrored back, reads as a four at 1.00, so the picture is refused as `mirrored`."""
    from shoed.vision import recognize
    from vision_lab import hard_sets, synth

    style = hard_sets.held_out_styles()[0]
    shot = synth.photograph("4S", np.random.default_rng(0), style, size=(1280, 960), occlusion_p=0.0)
    mirrored = cv2.flip(shot.image, 0)
    monkeypatch.setattr(recognize, "_disagreement", lambda card, pips: None)
    monkeypatch.setattr(recognize, "_pips_short", lambda card, pips: None)
    result = recognizer.identify(mirrored)
    assert result.card is None and result.reason == "mirrored", result
    assert result.detail is not None and "mirrored as a 4" in result.detail, result.detail
    monkeypatch.setattr(recognize.Recognizer, "_unmirrored", lambda self, result, ranks, scale: result)
    assert recognizer.identify(mirrored).card == "AS"  # what the check stands against
