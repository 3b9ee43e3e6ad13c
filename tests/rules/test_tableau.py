"""Every tableau cell of every ruleset, driven through the coup engine.

Each table below is written from its seed document's own drawing rules
(docs/rules/), independently of the ruleset data files, and every
cell of the engine is checked against it: the Player's two-card totals 0-7,
and the Banker's totals 0-7 against every Player third card 0-9 and "no third
card".
"""

import pytest

from shoed.rules.cards import Card
from shoed.rules.coup import Coup
from shoed.rules.ruleset import load_ruleset

D, S, C = "draw", "stand", "choice"
NONE = None  # the Player took no third card


def two_cards(total: int, suit: str) -> tuple[Card, Card]:
    """Two cards (no natural unless asked) that make `total`: a ten and the total."""
    return (Card(10, suit), Card(total, suit)) if total else (Card(10, suit), Card(13, suit))


def third_card(value: int) -> Card:
    return Card(value if value else 12, "D")


# ---------------------------------------------------------------------------
# Player: "0, 1, 2, 3, 4, 5 ... bekommt eine dritte Karte. 6, 7 ... keine dritte Karte."
# docs/rules/punto-banco-casino-schaanwald.txt (Ziehregeln PUNTO), docs/rules/macau-baccarat-casinos-austria.txt (Player),
# docs/rules/mini-baccarat-grand-casino-luzern.txt (ZIEHREGELN PLAYER), docs/rules/macau-statutory-rules.txt Art. IX (a), (b).
def standard_player(total):
    return D if total <= 5 else S


# Baccarat Royal, docs/rules/baccarat-royal.txt, Ziehungstabellen für den Player:
# "0 – 2 ✓ / 3 – 6 freie Wahl / 7 X"
def royal_player(total):
    return D if total <= 2 else C if total <= 6 else S


# Banker, standard tableau, as the Schaanwald and Casinos Austria sheets word it:
#   0, 1, 2: bekommt eine dritte Karte
#   3: es sei denn, die dritte Karte von Punto hat den Wert 8
#   4: es sei denn, ... den Wert 0, 1, 8 oder 9
#   5: wenn Punto 6 oder 7 hat („no card“), oder wenn die dritte Karte ... 4, 5, 6 oder 7
#   6: nur dann, wenn die dritte Karte ... 6 oder 7
#   7: keine dritte Karte
def standard_banker(total, third):
    if third is NONE:
        # Player stood: "5 ... wenn Punto 6 oder 7 hat („no card“)"; 6 only on a third card;
        # Luzern: "Wenn Player keine dritte Karte zieht, dann bleibt Banker bei 6 stehen."
        return D if total <= 5 else S
    return {
        0: D, 1: D, 2: D,
        3: S if third == 8 else D,
        4: S if third in (0, 1, 8, 9) else D,
        5: D if third in (4, 5, 6, 7) else S,
        6: D if third in (6, 7) else S,
        7: S,
    }[total]


# Macau statutory rules, docs/rules/macau-statutory-rules.txt, Art. IX (c) "must increase" and
# (d) "shall not increase", read with "10" = 0 (the reading of the translation).
def statutory_banker(total, third):
    if third is NONE:
        return D if total <= 5 else S  # (c)(6) and (d)(4) "or 'Player' card does not increase"
    if total in (0, 1, 2):
        return D  # (c)(1)
    if total == 3:
        return S if third == 8 else D  # (c)(2), (d)(1)
    if total == 4:
        return S if third in (1, 8, 9, 0) else D  # (d)(2)
    if total == 5:
        return S if third in (1, 2, 3, 8, 9, 0) else D  # (d)(3)
    if total == 6:
        return D if third in (6, 7) else S  # (c)(5), (d)(4)
    return S  # (d)(5)


# Baccarat Royal, Ziehungstabellen für den Banker, taken literally:
#   0 – 2 alle Fälle ✓; 3 – 4: 0, 1, 8, 9 freie Wahl, alle anderen Fälle X;
#   5 – 6: 0 – 3, 8, 9 freie Wahl, alle anderen Fälle ✓; 7 alle Fälle X
def royal_banker(total, third):
    if total <= 2:
        return D
    if total <= 4:
        return C if third in (0, 1, 8, 9) else S
    if total <= 6:
        return C if third in (0, 1, 2, 3, 8, 9) else D
    return S


TABLES = {
    "punto-banco": (standard_player, standard_banker),
    "macau-casinos-austria": (standard_player, standard_banker),
    "mini-baccarat-luzern": (standard_player, standard_banker),
    "macau-statutory": (standard_player, statutory_banker),
    "baccarat-royal": (royal_player, royal_banker),
}


def engine_player(ruleset, total):
    p1, p2 = two_cards(total, "S")
    b1, b2 = two_cards(5, "H")  # the Banker's 5: no natural
    coup = Coup(ruleset)
    for card in (p1, b1, p2, b2):
        coup, misdeal = coup.deal(card)
        assert misdeal is None
    return {"player": D, "decision:player": C, "banker": S, None: S}[coup.next]


def engine_banker(ruleset, total, third):
    """Deal a Player total that draws (or stands) and the Banker's total; ask the engine."""
    coup = Coup(ruleset)
    player_total = 6 if third is NONE else 0
    if third is not NONE and ruleset.player_action(0) == "C":
        coup = coup.decide("player", True)
    p1, p2 = two_cards(player_total, "S")
    b1, b2 = two_cards(total, "H")
    for card in (p1, b1, p2, b2):
        coup, _ = coup.deal(card)
    if third is not NONE:
        assert coup.next == "player"
        coup, _ = coup.deal(third_card(third))
    elif coup.next == "decision:player":  # Royal: 6 is a free choice for the Player; he stands
        coup = coup.decide("player", False)
    return {"banker": D, "decision:banker": C, None: S}[coup.next]


CASES_PLAYER = [(name, total) for name in TABLES for total in range(8)]
CASES_BANKER = [(name, total, third) for name in TABLES for total in range(8) for third in [*range(10), NONE]]


@pytest.mark.parametrize("name, total", CASES_PLAYER)
def test_player_cell(name, total):
    ruleset = load_ruleset(name)
    expected = TABLES[name][0](total)
    assert engine_player(ruleset, total) == expected


@pytest.mark.parametrize("name, total, third", CASES_BANKER)
def test_banker_cell(name, total, third):
    ruleset = load_ruleset(name)
    expected = TABLES[name][1](total, third)
    assert engine_banker(ruleset, total, third) == expected


@pytest.mark.parametrize("name", list(TABLES))
@pytest.mark.parametrize("natural_side", ["player", "banker"])
@pytest.mark.parametrize("natural", [8, 9])
def test_natural_ends_the_coup(name, natural_side, natural):
    # "Ergeben die beiden ersten Karten ... den Gesamtwert von 8 oder 9, dürfen keine
    # weiteren Karten mehr gezogen werden." (004, 000, 001); Royal: "Natural ... Runde beendet".
    ruleset = load_ruleset(name)
    nat = two_cards(natural, "S")
    low = two_cards(0, "H")
    p, b = (nat, low) if natural_side == "player" else (low, nat)
    coup = Coup(ruleset)
    for card in (p[0], b[0], p[1], b[1]):
        coup, _ = coup.deal(card)
    assert coup.complete and coup.natural
    assert coup.result().winner == natural_side


def test_deal_order_player_banker_player_banker():
    # "Die 1. und 3. Karte für die „Punto“-Seite, die 2. und 4. Karte für die „Banco“-Seite." (004)
    coup = Coup(load_ruleset("punto-banco"))
    seen = []
    for card in [Card(2, "S"), Card(3, "S"), Card(4, "S"), Card(10, "S")]:
        seen.append(coup.next)
        coup, _ = coup.deal(card)
    assert seen == ["player", "banker", "player", "banker"]
    assert [str(c) for c in coup.player] == ["2S", "4S"]
    assert [str(c) for c in coup.banker] == ["3S", "TS"]
