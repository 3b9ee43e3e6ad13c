"""Noticing each card dealt under the camera: once per card, in order.

Issue (camera fallback): a new card appearing in the region of interest,
present and stable for N frames, then absent before the next, is one card;
the per-frame test is cheap and full identification runs only when a card
settles. Whatever is not a card is not reported; a card is never guessed.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision_lab import synth
from tests.vision.framing import framed_tightly
from shoed.vision.recognize import NO_COLOUR
from shoed.vision.watch import CardWatcher, WatchConfig

ROI = (300, 60, 400, 400)
SIZE = (960, 540)


def run(watcher, frames):
    reads = []
    for i, (frame, _) in enumerate(frames):
        reads += watcher.feed(frame, i, 1_000_000 * i)
    return reads


def test_each_card_once_in_deal_order(recognizer):
    cards = ["4C", "JD", "AH", "TS", "7D"]
    frames = list(synth.deal_frames(cards, np.random.default_rng(8), size=SIZE, roi=ROI))
    watcher = CardWatcher(WatchConfig(roi=ROI), recognizer)
    reads = run(watcher, frames)
    assert [r.card for r in reads] == cards
    at_rest = [i for i, (_, label) in enumerate(frames) if label]
    for read in reads:
        assert frames[read.frame_index][1] == read.card  # read while the card lay still
        assert read.mono_ns == 1_000_000 * read.frame_index
        assert read.frame_index in at_rest
    # the expensive part ran about once per card, not once per frame
    assert watcher.identifications <= len(cards) + 2
    assert watcher.frames == len(frames)


def test_a_card_left_lying_is_reported_once(recognizer):
    frames = list(synth.deal_frames(["9S"], np.random.default_rng(2), size=SIZE, roi=ROI,
                                    plan=synth.DealPlan(empty=5, slide=5, rest=60)))
    rest_end = 5 + 5 + 60
    reads = run(CardWatcher(WatchConfig(roi=ROI), recognizer), frames[:rest_end])
    assert [r.card for r in reads] == ["9S"]


def test_the_same_card_twice_in_a_row_is_two_cards(recognizer):
    # eight decks: the same card can come twice running; the region empties in between
    frames = list(synth.deal_frames(["QH", "QH"], np.random.default_rng(4), size=SIZE, roi=ROI))
    reads = run(CardWatcher(WatchConfig(roi=ROI), recognizer), frames)
    assert [r.card for r in reads] == ["QH", "QH"]


def test_a_hand_resting_in_view_is_not_a_card(recognizer):
    rng = np.random.default_rng(3)
    table = synth.draw_background(*SIZE, rng, clutter=0)
    hand = table.copy()
    x, y, w, h = ROI
    cv2.ellipse(hand, (x + w // 2, y + h // 2), (160, 100), 30, 0, 360, (120, 150, 200), -1, cv2.LINE_AA)
    frames = [(table, None)] * 5 + [(hand, None)] * 30 + [(table, None)] * 5
    watcher = CardWatcher(WatchConfig(roi=ROI), recognizer)
    assert run(watcher, frames) == []
    assert 1 <= watcher.identifications <= 2  # looked, saw no card, waited for a change


def test_slow_change_of_light_is_not_a_card(recognizer):
    rng = np.random.default_rng(6)
    table = synth.draw_background(*SIZE, rng, clutter=2).astype(np.float32)
    frames = [((table * (1.0 - 0.004 * i)).astype(np.uint8), None) for i in range(60)]
    watcher = CardWatcher(WatchConfig(roi=ROI), recognizer)
    assert run(watcher, frames) == []
    assert watcher.identifications == 0


def test_a_lasting_change_becomes_the_new_table(recognizer):
    """The light is switched up and stays so: after relearn_frames the brighter
    table is the empty background, so each card leaving is seen to leave and
    the next one is seen to come."""
    rng = np.random.default_rng(13)
    frames = list(synth.deal_frames(["6H", "3S"], rng, size=SIZE, roi=ROI))
    brighter = [(cv2.convertScaleAbs(f, alpha=1.5), label) for f, label in frames]
    config = WatchConfig(roi=ROI, relearn_frames=20)
    watcher = CardWatcher(config, recognizer)
    before = [(frames[0][0], None)] * 5
    lit = [(brighter[0][0], None)] * 40  # the empty table, lit up
    reads = run(watcher, before + lit + brighter)
    assert [r.card for r in reads] == ["6H", "3S"]


def test_light_changing_while_a_card_lies_there(recognizer):
    """The light changes while a card lies in the region, and the card then
    leaves: the region never looks like the old empty table again, yet the
    next card is seen."""
    frames = list(synth.deal_frames(["KC", "8D"], np.random.default_rng(14), size=SIZE, roi=ROI))
    first_rest = next(i for i, (_, label) in enumerate(frames) if label)
    lit = [(cv2.convertScaleAbs(f, alpha=1.3, beta=45), label) for f, label in frames[first_rest:]]
    watcher = CardWatcher(WatchConfig(roi=ROI), recognizer)
    reads = run(watcher, frames[: first_rest + 8] + lit[:1] * 30 + lit)
    assert [r.card for r in reads] == ["KC", "8D"]


def test_an_unreadable_card_is_reported_as_such(recognizer, monkeypatch):
    """A card comes face down: a card was dealt, but it cannot be read."""
    back = synth.draw_back(np.random.default_rng(1))
    monkeypatch.setattr(synth, "draw_face", lambda label, rng, style=None: back)
    frames = list(synth.deal_frames(["5C"], np.random.default_rng(12), size=SIZE, roi=ROI))
    reads = run(CardWatcher(WatchConfig(roi=ROI), recognizer), frames)
    assert len(reads) == 1 and reads[0].card is None and reads[0].reason


@pytest.mark.parametrize(
    "options, message",
    [
        ({"roi": (0, 0, 0, 10)}, "roi"),
        ({"roi": (0, 0, 10)}, "roi"),
        ({"still_frames": 0}, "at least 1"),
    ],
)
def test_bad_configuration_is_a_clear_error(options, message):
    with pytest.raises(ValueError, match=message):
        WatchConfig(**options)


def test_a_region_outside_the_frame_is_a_clear_error(recognizer):
    watcher = CardWatcher(WatchConfig(roi=(600, 300, 100, 100)), recognizer)
    with pytest.raises(ValueError, match="does not fit"):
        watcher.feed(np.zeros((360, 640, 3), np.uint8), 0, 0)


@pytest.mark.parametrize("label, cloth", [("TS", (40, 100, 20)), ("AC", (40, 100, 20)), ("TS", (25, 40, 20))])
def test_a_black_card_filling_the_region_is_read_where_the_cloth_shows_colour(recognizer, label, cloth):
    """A black card filling the region shows no colour: alone, its picture cannot be told from a
    monochrome camera's (`no_colour`). The same camera's empty view, green felt (or a dark bottle
    green) of another colour than the card's print as bright, shows that it sees colour: the card
    is read."""
    alone = framed_tightly(label, cloth)[8][0]
    assert recognizer.identify(alone).reason == NO_COLOUR
    reads = run(CardWatcher(WatchConfig(), recognizer), framed_tightly(label, cloth))
    assert [r.card for r in reads] == [label]


@pytest.mark.parametrize("label, cloth, camera", [
    ("TS", (40, 100, 20), "grey"),  # a monochrome camera: cloth and card in one tint
    ("5D", (40, 100, 20), "grey"),  # its red print as dark as black: never read as a black card
    ("TS", (40, 100, 20), "toned"),  # in a tint that is not one colour from dark to light
    ("TS", (25, 40, 20), "toned"),  # dark cloth, where such a tint differs most from the paper's
    ("TS", (70, 70, 70), "colour"),  # grey cloth: a colour camera's view shows no colour either
])
def test_a_card_filling_the_region_with_no_colour_in_view_is_refused(recognizer, label, cloth, camera):
    reads = run(CardWatcher(WatchConfig(), recognizer), framed_tightly(label, cloth, camera))
    assert [(r.card, r.reason) for r in reads] == [(None, NO_COLOUR)]


def test_a_camera_turned_monochrome_before_the_card_came_shows_no_colour(recognizer):
    """The camera turns to its monochrome night mode while the region is empty, as bright as
    before (its grey picture changes nothing the watcher compares), and a black card comes a few
    frames later: the cloth's colour is the last empty view's, grey, and the card is refused."""
    colour = framed_tightly("TS", (40, 100, 20))
    grey = framed_tightly("TS", (40, 100, 20), "grey")
    reads = run(CardWatcher(WatchConfig(), recognizer), colour[:6] + grey)
    assert [(r.card, r.reason) for r in reads] == [(None, NO_COLOUR)]


def test_frames_in_grey_or_with_alpha_are_read_as_any_frames(recognizer):
    """A source may give grey frames (one channel: a monochrome camera's) or frames with an alpha
    channel: the watcher reads them as ever, a black card filling the region refused in grey and
    read in colour."""
    frames = framed_tightly("TS", (40, 100, 20))
    grey = [(cv2.cvtColor(f, cv2.COLOR_BGR2GRAY), None) for f, _ in frames]
    alpha = [(cv2.cvtColor(f, cv2.COLOR_BGR2BGRA), None) for f, _ in frames]
    assert [(r.card, r.reason) for r in run(CardWatcher(WatchConfig(), recognizer), grey)] == [(None, NO_COLOUR)]
    assert [r.card for r in run(CardWatcher(WatchConfig(), recognizer), alpha)] == ["TS"]


def test_a_colour_camera_told_so_reads_a_black_card_on_grey_cloth(recognizer):
    """On grey cloth a colour camera's view of a black card filling the region shows no colour, and
    the card is refused (`no_colour`); configured as a colour camera (`colour_camera`), it reads it."""
    frames = framed_tightly("TS", (70, 70, 70))
    assert [(r.card, r.reason) for r in run(CardWatcher(WatchConfig(), recognizer), frames)] == [(None, NO_COLOUR)]
    assert [r.card for r in run(CardWatcher(WatchConfig(colour_camera=True), recognizer), frames)] == ["TS"]


@pytest.mark.parametrize("label", ["TS", "5D"])
def test_a_camera_told_colour_that_gives_monochrome_frames_is_still_refused(recognizer, label):
    """A camera configured as a colour camera that gives frames whose three channels are one (its
    monochrome night mode) or grey frames: its red print is as dark as black, and the card is
    refused (`no_colour`), never read as a black card."""
    frames = framed_tightly(label, (40, 100, 20), "grey")
    grey = [(cv2.cvtColor(f, cv2.COLOR_BGR2GRAY), None) for f, _ in frames]
    for shown in (frames, grey):
        reads = run(CardWatcher(WatchConfig(colour_camera=True), recognizer), shown)
        assert [(r.card, r.reason) for r in reads] == [(None, NO_COLOUR)]


def test_a_camera_gone_over_to_frames_of_other_proportions_starts_afresh(recognizer):
    """A camera framed on the region (no `roi`) goes over to another resolution between two cards:
    its frames change their proportions (square, then 4:3). The watcher starts afresh, the first
    such frame its empty table, and reads the cards after it; no error stops the camera."""
    x, y, w, h = ROI
    first = [(f[y : y + h, x : x + w], label)
             for f, label in synth.deal_frames(["9S", "4H"], np.random.default_rng(5), size=SIZE, roi=ROI)]
    wide = (260, 80, 480, 360)
    x, y, w, h = wide
    second = [(f[y : y + h, x : x + w], label)
              for f, label in synth.deal_frames(["KD", "2C"], np.random.default_rng(6), size=SIZE, roi=wide)]
    assert first[0][0].shape != second[0][0].shape
    reads = run(CardWatcher(WatchConfig(), recognizer), first + second)
    assert [r.card for r in reads] == ["9S", "4H", "KD", "2C"]


@pytest.mark.parametrize("gap", [0, 1, 2])
def test_a_card_dealt_before_the_region_was_seen_empty_is_reported_unreadable_not_passed_over(recognizer, gap):
    """A fast dealer's next card comes within fewer empty frames than tell the region empty (3): the
    watcher, still on the card it reported, finds another card there. It cannot say that the first
    left and the second was dealt, so it reports a card it could not read, `card_replaced` (the
    table raises its misdeal for an unreadable card, and the dealer enters the card); the card
    after, dealt as ever, is read."""
    from shoed.vision.watch import CARD_REPLACED

    plan = synth.DealPlan()
    block = plan.empty + 2 * plan.slide + plan.rest  # the frames of one card: empty, slide in, rest, slide out
    frames = list(synth.deal_frames(["8H", "TD", "KS"], np.random.default_rng(8), size=SIZE, roi=ROI, plan=plan))
    # 8H comes and lies still; then `gap` frames of the empty region, and TD lies there (8H swept
    # off and TD put down between two frames); then KS is dealt as ever
    resting = [(frame, label) for frame, label in frames[block: 2 * block] if label == "TD"]
    frames = frames[:block - plan.slide] + frames[:gap] + resting + frames[2 * block:]
    reads = run(CardWatcher(WatchConfig(roi=ROI), recognizer), frames)
    assert [(r.card, r.reason) for r in reads] == [("8H", None), (None, CARD_REPLACED), ("KS", None)]
    assert frames[reads[1].frame_index][1] == "TD"  # said while TD lay still


def test_the_card_reported_moved_where_it_lies_is_not_reported_again(recognizer):
    """A card pushed along where it lies, and left there: the same card, not reported again."""
    frames = list(synth.deal_frames(["9S"], np.random.default_rng(2), size=SIZE, roi=ROI,
                                    plan=synth.DealPlan(empty=5, slide=5, rest=30)))[:40]
    shifted = [(np.roll(frame, 24, axis=1), label) for frame, label in frames[20:40]]  # pushed 24 px along
    reads = run(CardWatcher(WatchConfig(roi=ROI), recognizer), frames + shifted)
    assert [(r.card, r.reason) for r in reads] == [("9S", None)]
