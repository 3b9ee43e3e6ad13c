"""Pictures of decks the classifier never saw, small frames and colour casts:
every answer is the right card or a refusal (issue: camera fallback that reads
real decks - "0 wrong cards claimed, including 128x128 frames and colour casts").

The pictures are stored in tests/vision/data/hard/ (written by
tools/make_vision_fixtures.py from the held-out Debian font families): narrow
lettering at 480 x 360 (tens, courts, number cards), 128 x 128 frames of a
small camera, 320 x 240 photographs under green, amber, blue and magenta light.
The floors on right answers were measured on these files with the shipped
model, then lowered by a margin; the figures are in docs/vision.md.
"""

from __future__ import annotations

import json
import pathlib

import cv2
import pytest

from shoed.vision.recognize import COLOUR_SIDE, NO_COLOUR, Recognizer
from vision_lab.hard_sets import monochrome

HARD = pathlib.Path(__file__).parent / "data" / "hard"
FLOORS = {"narrow": 0.9, "casts": 0.85, "frames": 0.65}  # measured: 35/36, 30/32, 35/48


@pytest.fixture(scope="module")
def hard_reads():
    manifest = json.loads((HARD / "manifest.json").read_text())
    lenient = Recognizer(threshold=0.7)
    reads = []
    for entry in manifest:
        image = cv2.imread(str(HARD / entry["file"]), cv2.IMREAD_COLOR)
        assert image is not None, entry["file"]
        reads.append((entry, lenient.identify(image)))
    return reads


def test_no_wrong_card_in_any_hard_picture(hard_reads):
    """Not at the threshold, and not even at a lowered threshold of 0.7."""
    wrong = [(e["file"], r.card, r.confidence) for e, r in hard_reads if r.card not in (None, e["card"])]
    assert wrong == []


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_most_hard_pictures_are_still_read(hard_reads, name):
    entries = [(e, r) for e, r in hard_reads if e["set"] == name]
    assert entries
    right = sum(r.card == e["card"] and r.confidence >= 0.9 for e, r in entries)
    assert right / len(entries) >= FLOORS[name], (right, len(entries))


def test_small_frames_are_refused_for_their_size(hard_reads):
    """A 128 x 128 frame's index is a few pixels tall: refusals there say so."""
    reasons = [r.reason for e, r in hard_reads if e["set"] == "frames" and r.card is None]
    assert reasons.count("too_small") >= len(reasons) // 2, reasons


def test_a_monochrome_camera_reads_no_card(hard_reads):
    """The same pictures as a monochrome camera gives them, grey or (at 320 px and more) in one tint
    (a night mode's purple, a lamp's amber), after a JPEG's round trip: a red card's print is as dark
    as black there, so no card is read, and where the colour picture gave a card the reason is
    `no_colour`, even at the lowered threshold of 0.7. A 128 x 128 frame in a tint is not told from
    a colour picture (recognize.colour_share): those are grey only here."""
    lenient = Recognizer(threshold=0.7)
    tints = ((1.0, 1.0, 1.0), (0.95, 0.7, 1.0), (0.6, 0.85, 1.0))  # BGR: grey, purple, amber
    checked = tinted = 0
    for k, (entry, read) in enumerate(hard_reads):
        image = cv2.imread(str(HARD / entry["file"]), cv2.IMREAD_COLOR)
        tint = tints[k % 3] if max(image.shape[:2]) >= COLOUR_SIDE else tints[0]
        result = lenient.identify(monochrome(image, tint, 85))
        assert result.card is None, (entry["file"], tint, result)
        if read.card is not None:
            assert result.reason == NO_COLOUR, (entry["file"], tint, result)
            checked += 1
            tinted += tint != tints[0]
    assert checked >= 80 and tinted >= 20, (checked, tinted)


def test_two_cards_one_over_the_other_are_never_read_as_a_card_not_in_view():
    """Two different cards, the second lying partly over the first (hard_sets.overlapping): the
    paper of both is often traced as one outline, and the answer may be one of them (a limit in
    docs/vision.md), never a card that is not in the picture."""
    from vision_lab.hard_sets import overlapping

    recognizer = Recognizer()
    seen = []
    for picture, (under, over), _ in overlapping(8, 11):
        assert under != over and picture.shape == (960, 1280, 3)
        result = recognizer.identify(picture)
        assert result.card in (None, under, over), (under, over, result)
        seen.append(result.card)
    assert any(card is None for card in seen)
