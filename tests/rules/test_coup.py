"""Coups: results, settlement of every bet, misdeals, and random shoes dealt through the engine.

The property tests deal whole shuffled shoes coup after coup and check every
coup against an independent statement of the standard tableau (the Player
draws on 0-5; the Banker as in docs/rules/punto-banco-casino-schaanwald.txt "Ziehregeln BANCO").
"""

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoed.rules import misdeal as md
from shoed.rules.cards import Card, full_deck, parse_card
from shoed.rules.coup import Coup, hand_total
from shoed.rules.ruleset import load_ruleset


def deal(ruleset_name, *cards, decisions=()):
    coup = Coup(load_ruleset(ruleset_name))
    for side, draws in decisions:
        coup = coup.decide(side, draws)
    for text in cards:
        coup, misdeal = coup.deal(parse_card(text))
        assert misdeal is None, misdeal
    return coup


# ----- settlement -------------------------------------------------------------
# (ruleset, cards, bet, net units per unit staked, document and rule)
SETTLEMENTS = [
    # Player 6 (6S TC), Banker 7 (7H KD): both stand, Banker wins with 7.
    ("punto-banco", "6S 7H TC KD", "banker", Fraction(1), "004 AUSZAHLUNGEN: Banco 1:1, no commission as written"),
    ("punto-banco", "6S 7H TC KD", "player", Fraction(-1), "004"),
    ("punto-banco", "6S 7H TC KD", "tie", Fraction(-1), "004"),
    ("macau-statutory", "6S 7H TC KD", "banker", Fraction(19, 20), "003 Art. XVIII: 5% commission"),
    ("macau-casinos-austria", "6S 7H TC KD", "banker", Fraction(1), "000 Banker 1:1"),
    # Banker wins with a total of 6: Player 5+0+0=5 ... use Player 7 vs? Player 0 draws 5 -> 5; Banker 6 draws? no:
    # Player TS KS (0) draws 5H -> 5; Banker 3C 3D (6) with third card 5 stands: Banker 6 beats 5.
    ("macau-casinos-austria", "TS 3C KS 3D 5H", "banker", Fraction(1, 2), "000: mit der Punktezahl 6, half paid"),
    ("mini-baccarat-luzern", "TS 3C KS 3D 5H", "banker", Fraction(1, 2), "001: Taxe von 50%"),
    ("punto-banco", "TS 3C KS 3D 5H", "banker", Fraction(1), "004: no six rule"),
    ("macau-statutory", "TS 3C KS 3D 5H", "banker", Fraction(19, 20), "003 Art. XVIII"),
    # Tie: Player 7 (7S TH) vs Banker 7 (7D KC).
    ("punto-banco", "7S 7D TH KC", "tie", Fraction(8), "004: Tie zahlt 8:1"),
    ("punto-banco", "7S 7D TH KC", "player", Fraction(0), "004: Sätze bleiben unverändert"),
    ("punto-banco", "7S 7D TH KC", "banker", Fraction(0), "004"),
    ("macau-statutory", "7S 7D TH KC", "banker", Fraction(0), "003 Art. XII"),
    ("baccarat-royal", "7S 7D TH KC", "active_player", Fraction(-1, 2), "002: verlieren beide die Hälfte"),
    ("baccarat-royal", "7S 7D TH KC", "active_banker", Fraction(-1, 2), "002"),
    ("baccarat-royal", "7S 7D TH KC", "tie", Fraction(8), "002: bei Unentschieden 8:1"),
    # Royal: Player 7 stands, Banker 8 is a natural.
    ("baccarat-royal", "7S 8H TC KD", "active_banker", Fraction(1), "002"),
    ("baccarat-royal", "7S 8H TC KD", "active_player", Fraction(-1), "002"),
    # Pairs: Player J J, Banker 7 7 (4 vs 4) ... Player JS JH = 0, Banker 7C 7D = 4.
    ("macau-casinos-austria", "JS 7C JH 7D 9S", "player_pair", Fraction(11), "000: Pair Player 11:1"),
    ("macau-casinos-austria", "JS 7C JH 7D 9S", "banker_pair", Fraction(11), "000: Pair Banker 11:1"),
    ("macau-statutory", "JS 7C QH 7D 9S", "player_pair", Fraction(-1), "003 Art. XIII: J and Q is not a pair"),
]


@pytest.mark.parametrize("name, cards, bet, net, rule", SETTLEMENTS)
def test_settlement(name, cards, bet, net, rule):
    coup = deal(name, *cards.split())
    assert coup.complete, coup.next
    assert coup.result().settlement[bet] == net


def test_settlement_names_every_bet_offered():
    for name in ["punto-banco", "macau-casinos-austria", "baccarat-royal"]:
        coup = deal(name, "7S", "8H", "TC", "KD")
        assert set(coup.result().settlement) == set(load_ruleset(name).bets)


def test_royal_rotation():
    # 002: "Verliert der Banker oder der Player, wechselt die jeweilige Position ...;
    # spielen sie unentschieden, wandern beide Positionen."
    assert deal("baccarat-royal", "7S", "8H", "TC", "KD").result().rotate == ("player",)
    assert deal("baccarat-royal", "7S", "7D", "TH", "KC").result().rotate == ("player", "banker")
    assert deal("punto-banco", "7S", "7D", "TH", "KC").result().rotate == ()


# ----- misdeals -----------------------------------------------------------------
def test_extra_card_after_complete_coup():
    coup = deal("punto-banco", "6S", "7H", "TC", "KD")
    after, misdeal = coup.deal(parse_card("2C"))
    assert after is coup
    assert misdeal.kind == md.EXTRA_CARD and misdeal.card_index == 4
    assert misdeal.correctable and misdeal.correction == md.BURN
    assert misdeal.card == "2C"


def test_missing_card_when_closed_early():
    coup = deal("punto-banco", "TS", "3C", "KS", "3D")  # Player 0 must draw
    misdeal = coup.close()
    assert misdeal.kind == md.MISSING_CARD and misdeal.card_index == 4
    assert "player" in misdeal.reason


def test_closing_a_complete_coup_is_fine():
    assert deal("punto-banco", "6S", "7H", "TC", "KD").close() is None


def test_card_before_royal_decision():
    coup = deal("baccarat-royal", "2S", "3C", "2D", "3D")  # Player 4: free choice
    assert coup.next == "decision:player"
    same, misdeal = coup.deal(parse_card("9H"))
    assert same is coup and misdeal.kind == md.CARD_BEFORE_DECISION and misdeal.correction == md.DECIDE
    assert coup.decide("player", True).next == "player"
    assert coup.decide("player", False).next == "banker"  # Banker 6, no third card: draws (literal reading)


# ----- random shoes -------------------------------------------------------------
def independent_coup(cards):
    """The standard tableau stated once more, independently: returns (player, banker) hands."""
    p, b = [cards[0], cards[2]], [cards[1], cards[3]]
    rest = list(cards[4:])
    pt, bt = hand_total(p), hand_total(b)
    if pt >= 8 or bt >= 8:
        return p, b
    third = None
    if pt <= 5:
        third = rest.pop(0)
        p.append(third)
    if third is None:
        banker_draws = bt <= 5
    else:
        v = third.value
        banker_draws = (
            bt <= 2
            or (bt == 3 and v != 8)
            or (bt == 4 and 2 <= v <= 7)
            or (bt == 5 and 4 <= v <= 7)
            or (bt == 6 and v in (6, 7))
        )
    if banker_draws:
        b.append(rest.pop(0))
    return p, b


def deal_shoe(ruleset, cards, rng=None):
    """Deal cards through the engine coup after coup; returns the finished coups."""
    coups, coup = [], Coup(ruleset)
    for card in cards:
        coup, misdeal = coup.deal(card)
        assert misdeal is None
        while coup.next and coup.next.startswith("decision:"):
            coup = coup.decide(coup.next.split(":")[1], rng.random() < 0.5)
        if coup.complete:
            coups.append(coup)
            coup = Coup(ruleset)
    return coups


STANDARD = ["punto-banco", "macau-casinos-austria", "mini-baccarat-luzern", "macau-statutory"]


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(STANDARD), seed=st.randoms(use_true_random=False), decks=st.integers(1, 8))
def test_random_shoes_follow_the_tableau(name, seed, decks):
    cards = full_deck() * decks
    seed.shuffle(cards)
    ruleset = load_ruleset(name)
    position = 0
    for coup in deal_shoe(ruleset, cards):
        n = len(coup.order)
        player, banker = independent_coup(cards[position : position + 6])
        assert list(coup.player) == player and list(coup.banker) == banker
        result = coup.result()
        pt, bt = hand_total(player), hand_total(banker)
        assert result.winner == ("player" if pt > bt else "banker" if bt > pt else "tie")
        position += n


@settings(max_examples=25, deadline=None)
@given(seed=st.randoms(use_true_random=False))
def test_random_royal_shoes_respect_their_cells(seed):
    # Every Royal coup ends with 2 or 3 cards a side and only draws where the
    # sheet (002) lets it: never on a Player 7, never on a Banker 7.
    cards = full_deck() * 6
    seed.shuffle(cards)
    for coup in deal_shoe(load_ruleset("baccarat-royal"), cards, seed):
        if len(coup.player) == 3:
            assert hand_total(coup.player[:2]) <= 6
        if len(coup.banker) == 3:
            assert hand_total(coup.banker[:2]) <= 6
        if not coup.natural and hand_total(coup.player[:2]) <= 2:
            assert len(coup.player) == 3
        assert coup.result() is not None


def test_card_indices_are_draw_order():
    coup = deal("punto-banco", "TS", "3C", "KS", "3D", "5H")
    assert [str(c) for c in coup.cards] == ["TS", "3C", "KS", "3D", "5H"]
    assert coup.order == ("player", "banker", "player", "banker", "player")
    assert str(Card(10, "S")) == "TS"


@pytest.mark.parametrize(
    "player, banker, order",
    [
        (["TS", "KS"], ["3C", "3D"], ["TS", "3C", "KS", "3D"]),
        (["TS", "KS", "5H"], ["3C", "3D"], ["TS", "3C", "KS", "3D", "5H"]),
        (["6S", "TC"], ["2C", "3D", "9H"], ["6S", "2C", "TC", "3D", "9H"]),
        (["TS", "KS", "5H"], ["3C", "3D", "4D"], ["TS", "3C", "KS", "3D", "5H", "4D"]),
        (["TS"], ["3C"], ["TS", "3C"]),  # a coup voided after two cards
    ],
)
def test_draw_order(player, banker, order):
    # "Die 1. und 3. Karte für die „Punto“-Seite, die 2. und 4. Karte für die „Banco“-Seite" (004),
    # then the Player's third card, then the Banker's.
    from shoed.rules.coup import draw_order

    assert draw_order(player, banker) == order
