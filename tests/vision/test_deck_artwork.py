"""Deck artwork never trained on, from Debian's packages (vision_lab.decks):
cards drawn by other hands than the project's own, read or refused, never
taken for another card."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from shoed.vision import locate
from shoed.vision.recognize import CUES_DISAGREE, Recognizer
from vision_lab import decks, synth


def _installed(design: str) -> bool:
    return design in decks.designs()


@pytest.fixture(scope="module")
def recognizer() -> Recognizer:
    return Recognizer()


def test_kde_decks_are_held_out_and_their_foreign_cards_named():
    """KDE's decks are designs never trained on, but for its redrawing of a
    trained design; its German-suited deck is not one shoed reads."""
    assert "kde-tigullio-international" in decks.NEAR_TRAINED
    assert not set(decks.held_out_designs()) & set(decks.NEAR_TRAINED)
    assert decks.to_refuse("kde-xskat-german", "KH")
    assert not decks.to_refuse("kde-standard", "KH")
    if _installed("kde-standard"):
        assert "kde-standard" in decks.held_out_designs("kde")
        assert "kde-standard" not in decks.held_out_designs("aisleriot")
        assert "paris" not in decks.held_out_designs("kde")


@pytest.mark.skipif(not _installed("kde-jolly-royal"),
                    reason="needs KDE's deck artwork (apt-get install kdegames-card-data-kf5 librsvg2-bin)")
@pytest.mark.parametrize("seed", [10628326, 1, 2])
def test_clubs_whose_shape_the_classifier_cannot_tell_are_never_spades(recognizer, seed):
    """jolly-royal (KDE) prints clubs with small lobes over slender stems that
    flare to a broad foot, as spades' stems do. Photographed whole, no club of
    it is ever a spade, and most are read."""
    answers = []
    for label in [lab for lab in synth.all_labels() if lab[-1] == "C"]:
        face = decks.face("kde-jolly-royal", label)
        assert face is not None
        rng = np.random.default_rng(seed)
        shot = synth.photograph(label, rng, synth.classic_style(), size=(1280, 960), occlusion_p=0.0, face=face)
        result = recognizer.identify(shot.image)
        assert result.card in (None, label), f"{label} read as {result.card}"
        answers.append(result.card)
    assert sum(card is not None for card in answers) >= 10, answers


class _FirstOutlineContested(Recognizer):
    """Reads every outline as the shipped recogniser does, but answers for the
    first as a card whose pips read as both suits of its colour would be."""

    def read_card(self, card, scale=1.0):
        result = super().read_card(card, scale)
        self.outlines = getattr(self, "outlines", 0) + 1
        if self.outlines == 1 and result.card is not None:
            return dataclasses.replace(result, card=None, reason=CUES_DISAGREE, contested=True,
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
