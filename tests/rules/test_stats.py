"""Shoe statistics: wins, pairs, naturals, cards dealt and cards left by value.

A deck holds sixteen cards of value 0 (tens, jacks, queens, kings: "10, J, Q
und K zählen 0", docs/rules/punto-banco-casino-schaanwald.txt, Kartenwerte; Macau statutory
rules docs/rules/macau-statutory-rules.txt, Art. VIII) and four of each value 1-9; the
shoe's deck count comes from its ruleset. Coups are dealt through the real
coup engine.
"""

from __future__ import annotations

import json

import pytest

from shoed.rules.cards import Card, full_deck, parse_card
from shoed.rules.coup import Coup
from shoed.rules.roads import ResultsError, roads
from shoed.rules.ruleset import load_ruleset
from shoed.rules.stats import StatsError, from_coups, shoe_stats, tally, value_classes


def play(ruleset, *cards: str):
    """Deal one coup through the coup engine and return its result."""
    coup = Coup(ruleset)
    for text in cards:
        coup, misdeal = coup.deal(parse_card(text))
        assert misdeal is None
    result = coup.result()
    assert result is not None, "the coup should be complete"
    return result


@pytest.mark.parametrize(
    "text, counts",
    [
        # coups, banker, player, tie, banker pairs, player pairs, naturals
        ("", (0, 0, 0, 0, 0, 0, 0)),
        ("BPTB", (4, 2, 1, 1, 0, 0, 0)),
        ("TTT", (3, 0, 0, 3, 0, 0, 0)),
        ("BbPpTbpn", (3, 1, 1, 1, 2, 2, 1)),
        ("BnPnBbpn", (3, 2, 1, 0, 1, 1, 3)),
    ],
)
def test_tally(text, counts):
    t = tally(text)
    assert (t.coups, t.banker, t.player, t.tie, t.banker_pairs, t.player_pairs, t.naturals) == counts


def test_tally_reads_the_same_results_as_the_roads():
    road = roads("TBbPpT")
    assert tally(road.results) == tally("TBbPpT")
    with pytest.raises(ResultsError):
        tally("BQ")


@pytest.mark.parametrize("decks", [1, 6, 8])
def test_value_classes_of_a_full_shoe(decks):
    classes = value_classes(decks)
    assert classes[0] == 16 * decks
    assert classes[1:] == (4 * decks,) * 9
    assert sum(classes) == 52 * decks
    # The same count, card by card.
    by_value = [0] * 10
    for card in full_deck():
        by_value[card.value] += decks
    assert tuple(by_value) == classes


@pytest.mark.parametrize(
    "dealt, burned, face_down, left_changes",
    [
        ([], [], 0, {}),
        (["9H", "9S", "KD", "2C"], [], 0, {9: -2, 0: -1, 2: -1}),
        (["TD", "JD", "QD", "KD", "AS"], [], 0, {0: -4, 1: -1}),
        ([], ["7C"], 7, {7: -1}),  # first card exposed, its value in cards burned face down
    ],
)
def test_cards_left_by_value(dealt, burned, face_down, left_changes):
    s = shoe_stats(decks=8, dealt=dealt, burned=burned, burned_face_down=face_down)
    expected = list(value_classes(8))
    for value, change in left_changes.items():
        expected[value] += change
    assert s.cards_left_by_value == tuple(expected)
    assert s.cards_dealt == len(dealt)
    assert s.cards_burned == len(burned) + face_down
    assert s.cards_left == 416 - len(dealt) - len(burned)
    assert s.cards_in_shoe == 416 - len(dealt) - len(burned) - face_down


def test_whole_deck_seen_leaves_nothing():
    s = shoe_stats(decks=1, dealt=full_deck())
    assert s.cards_left_by_value == (0,) * 10 and s.cards_in_shoe == 0


@pytest.mark.parametrize(
    "kwargs, says",
    [
        ({"decks": 0}, "one deck or more"),
        ({"decks": 1, "dealt": ["AS", "AS"]}, "2 x ace of spades seen; a shoe of 1 decks holds 1"),
        ({"decks": 2, "dealt": ["AS", "AS"], "burned": ["AS"]}, "3 x ace of spades"),
        ({"decks": 1, "dealt": full_deck(), "burned_face_down": 1}, "1 cards burned face down, only 0 left"),
        ({"decks": 1, "burned_face_down": -1}, "must be a count"),
    ],
)
def test_impossible_shoes_are_errors(kwargs, says):
    with pytest.raises(StatsError, match=says):
        shoe_stats(**kwargs)


def test_bad_card_is_an_error_not_a_guess():
    with pytest.raises(ValueError, match="unknown card"):
        shoe_stats(decks=8, dealt=["9H", "1X"])


def test_from_coups_of_the_engine():
    ruleset = load_ruleset("punto-banco")
    coups = [
        play(ruleset, "9H", "9S", "KD", "2C"),  # Player 9 natural against Banker 1
        play(ruleset, "3H", "4S", "3D", "4C"),  # both pairs; Banker 8 natural against Player 6
        play(ruleset, "TH", "KS", "JD", "QC", "2C", "5D"),  # 0 - 0, both draw: Banker 5 against 2
    ]
    s = from_coups(coups, decks=ruleset.decks, burned=[Card(7, "C")], burned_face_down=7)
    assert (s.tally.player, s.tally.banker, s.tally.tie) == (1, 2, 0)
    assert (s.tally.player_pairs, s.tally.banker_pairs, s.tally.naturals) == (1, 1, 2)
    assert s.cards_dealt == 14
    # 6 decks: 96 cards of value 0 and 24 of each other value.
    assert s.cards_left_by_value == (96 - 5, 24, 24 - 2, 24 - 2, 24 - 2, 24 - 1, 24, 24 - 1, 24, 24 - 2)
    assert s.cards_in_shoe == 312 - 14 - 1 - 7


def test_to_json():
    s = shoe_stats("BbTPn", decks=8, dealt=["9H", "9S", "KD", "2C"])
    data = json.loads(json.dumps(s.to_json()))
    assert data["banker"] == 1 and data["player"] == 1 and data["tie"] == 1
    assert data["banker_pairs"] == 1 and data["naturals"] == 1 and data["coups"] == 3
    assert data["cards_dealt"] == 4 and data["cards_left"] == 412 and data["cards_in_shoe"] == 412
    assert data["cards_left_by_value"] == {"0": 127, "1": 32, "2": 31, **{str(v): 32 for v in range(3, 9)}, "9": 30}
