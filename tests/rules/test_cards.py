"""Card notation and values.

Values: Casino Schaanwald (docs/rules/punto-banco-casino-schaanwald.txt, "Kartenwerte"): 2-9 face
value, 10, Bube, Dame, König zählen null, Ass zählt eins. Pairs: Macau
statutory rules (docs/rules/macau-statutory-rules.txt, Art. XIII): J+J is a pair, J+Q is not.
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shoed.rules.cards import Card, CardError, full_deck, parse_card
from shoed.rules.coup import hand_total, is_pair


@pytest.mark.parametrize(
    "text, rank, suit",
    [
        ("9H", 9, "H"),
        ("10h", 10, "H"),
        ("TD", 10, "D"),
        ("td", 10, "D"),
        ("KS", 13, "S"),
        ("as", 1, "S"),
        ("H3", 3, "H"),  # suit first, as the Bee-Tek shoe sends (beetek-shoe.md)
        ("c10", 10, "C"),
        ("QC", 12, "C"),
        (" jd ", 11, "D"),
    ],
)
def test_notations(text, rank, suit):
    assert parse_card(text) == Card(rank, suit)


@pytest.mark.parametrize("text", ["", "X", "1H", "11H", "9", "H", "9X", "ZZ", "10", "AHS", "9H9", "0S", "ÄS",
                                  # letters outside ASCII whose upper case is a rank or suit, other spaces
                                  "4\u017f", "\u017fA", "\u01314S", "\u00a04S", "4S\u2003", "4S\x85", "4S\x1c"])
def test_bad_notation_is_a_clear_error(text):
    with pytest.raises(CardError, match="card"):
        parse_card(text)


@pytest.mark.parametrize(
    "text, value",
    [("AS", 1), ("2C", 2), ("5D", 5), ("9H", 9), ("TH", 0), ("JS", 0), ("QD", 0), ("KC", 0)],
)
def test_values(text, value):
    assert parse_card(text).value == value


@pytest.mark.parametrize(
    "cards, total",
    [
        # the document's own examples: "Bube (0) + ein Dreier (3) = 3", "9 + 5 = 14 ... = 4", "6 + 4 = 10 ... = 0"
        (["JS", "3H"], 3),
        (["9C", "5D"], 4),
        (["6H", "4S"], 0),
        (["7H", "8S", "9D"], 4),
    ],
)
def test_totals_keep_the_unit_digit(cards, total):
    assert hand_total([parse_card(c) for c in cards]) == total


@pytest.mark.parametrize(
    "cards, pair",
    [(["JS", "JH"], True), (["JS", "QS"], False), (["TS", "KS"], False), (["7H", "7H"], True), (["AS", "2S"], False)],
)
def test_pairs_are_same_rank(cards, pair):
    assert is_pair([parse_card(c) for c in cards]) is pair


@given(st.integers(0, 51))
def test_printed_card_parses_back(index):
    card = Card.from_index(index)
    assert parse_card(str(card)) == card
    assert card.index == index


def test_burn_count_tens_and_faces_count_ten():
    # Macau statutory rules Art. II: the first card "count[s] the number of cards" burned.
    assert [c.burn_count for c in map(parse_card, ["AS", "7H", "TD", "KC"])] == [1, 7, 10, 10]


def test_full_deck():
    deck = full_deck()
    assert len(set(deck)) == 52
    assert sum(c.value for c in deck) == 4 * 45
