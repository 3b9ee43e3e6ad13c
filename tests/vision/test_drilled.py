"""Cards of a cancelled casino deck (casinos cancel the decks they retire, and test labs buy
them): drilled through the middle, or with a corner cut off.

A hole shows the cloth under the card, a mark of a pip's size at the card's centre. Where its
colour is no print's, it is no pip: the pips are counted without it and the card read. Where it
could be print (black cloth under a black card), the card is refused, never read as another card
(`recognize._holes`). A corner cut off leaves the other corner's index to read."""

from __future__ import annotations

import pytest

from shoed.vision import recognize as R
from tests.vision.framing import clipped, drilled
from vision_lab.hard_sets import held_out_styles

GREEN, BLUE, BLACK, GREY = (40, 100, 20), (110, 60, 30), (30, 30, 30), (90, 90, 90)  # BGR
# ranks with no pip at the card's centre, so that the hole is all that lies there
EVEN = ["2H", "4C", "6D", "8S", "TH", "TS", "6C", "8H"]


@pytest.fixture
def no_hole_rule(monkeypatch):
    monkeypatch.setattr(R, "HOLE_CENTRE", -1.0)  # no mark is ever at the centre


@pytest.mark.parametrize("cloth", [GREEN, BLUE], ids=["green", "blue"])
def test_a_drilled_card_over_coloured_cloth_is_read_through_its_hole(recognizer, cloth):
    answers = [recognizer.identify(drilled(label, cloth, seed=40 + i)).card for i, label in enumerate(EVEN)]
    assert answers == EVEN


def test_without_the_hole_the_drilled_cards_count_one_pip_too_many(recognizer, no_hole_rule):
    """The premise: the hole is of a pip's size, and counted as one, the card refused."""
    results = [recognizer.identify(drilled(label, GREEN, seed=40 + i)) for i, label in enumerate(EVEN)]
    assert [r.card for r in results].count(None) >= 6
    assert sum(r.reason == R.CUES_DISAGREE for r in results) >= 6


@pytest.mark.parametrize("label", ["3C", "5H", "5S", "9D", "9C", "3H", "AS", "AD", "7H", "7S"])
@pytest.mark.parametrize("cloth", [GREEN, BLACK, GREY], ids=["green", "black", "grey"])
def test_a_hole_through_a_pip_or_over_cloth_as_dark_as_print_never_reads_another_card(recognizer, label, cloth):
    """A three's, five's or nine's middle pip drilled away leaves an even count of pips: a two, a
    four or an eight by the count, were it trusted. It is not where the middle is not whole, and the
    index must read its rank itself; black or grey cloth under a black card is as dark as print."""
    for seed in (7, 8):
        card = recognizer.identify(drilled(label, cloth, seed=seed)).card
        assert card in (label, None), f"{label} over {cloth} read as {card}"


def test_a_card_with_a_corner_cut_off_is_read_from_its_other_corner_or_refused(recognizer):
    styles = held_out_styles()
    labels = ["AS", "3D", "5C", "7H", "9S", "TD", "JC", "QH", "KS", "2C", "4H", "8D"]
    answers = [recognizer.identify(clipped(label, GREEN, seed=300 + i, style=styles[i % len(styles)])).card
               for i, label in enumerate(labels)]
    assert all(card in (label, None) for card, label in zip(answers, labels, strict=True)), answers
    assert sum(card == label for card, label in zip(answers, labels, strict=True)) >= 10, answers
