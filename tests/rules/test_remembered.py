"""What the rules work out once and keep: a card's value, a coup's next step, settlements,
the built-in rulesets. Remembering must never change an answer: each is checked against
the same thing worked out afresh, and what a caller gets back is its own to change."""

import copy
import pickle
from dataclasses import replace

import msgspec
import pytest

from shoed.rules import coup as coup_module
from shoed.rules.cards import Card, full_deck, parse_card
from shoed.rules.coup import BANKER, PLAYER, TIE, Coup, settle, settlement_json
from shoed.rules.ruleset import builtin_names, load_ruleset, with_decks
from shoed.rules.shoe import Shoe


# ----- cards ------------------------------------------------------------------
def test_a_cards_value_is_its_baccarat_value_and_not_part_of_its_identity():
    for card in full_deck():
        assert card.value == (card.rank if card.rank < 10 else 0)  # A=1, 2-9, tens and faces 0
    king = parse_card("kh")
    assert king == Card(13, "H") and hash(king) == hash(Card(13, "H"))
    assert repr(king) == "Card('KH')" and str(king) == "KH"
    assert sorted([king, Card(1, "S"), Card(13, "C")]) == [Card(1, "S"), Card(13, "C"), king]  # rank, then suit
    assert pickle.loads(pickle.dumps(king)).value == 0 and copy.deepcopy(Card(7, "D")).value == 7
    assert replace(king, rank=9).value == 9


# ----- the coup's next step -------------------------------------------------------
def every_coup(ruleset, coup=None, depth=0):
    """Every coup reachable with a few distinct values, decisions both ways."""
    coup = coup or Coup(ruleset)
    yield coup
    if coup.next is None or depth >= 6:
        return
    if coup.next.startswith("decision:"):
        for draws in (True, False):
            yield from every_coup(ruleset, coup.decide(coup.next.split(":")[1], draws), depth + 1)
        return
    for rank in (1, 6, 10):  # a natural, the tableau's draws and stands, a zero
        yield from every_coup(ruleset, coup.deal(Card(rank, "S"))[0], depth + 1)


@pytest.mark.parametrize("name", builtin_names())
def test_next_is_worked_out_when_the_coup_is_made_and_survives_copies(name):
    ruleset = load_ruleset(name)
    seen = 0
    for coup in every_coup(ruleset):
        assert coup.next == coup._due()  # what is kept is what the tableau says now
        assert coup.complete == (len(coup.order) >= 4 and coup.next is None)
        for other in (copy.deepcopy(coup), copy.copy(coup), msgspec.structs.replace(coup), pickle.loads(pickle.dumps(coup))):
            assert other == coup and other.next == coup.next
        seen += 1
    assert seen > 100


# ----- settlements ----------------------------------------------------------------
@pytest.mark.parametrize("name", builtin_names())
def test_a_remembered_settlement_is_the_one_worked_out_afresh(name):
    ruleset = with_decks(load_ruleset(name), load_ruleset(name).max_decks)  # a ruleset of its own: a fresh memo
    for winner in (PLAYER, BANKER, TIE):
        for banker_total in range(10):
            for player_pair in (False, True):
                for banker_pair in (False, True):
                    fresh = coup_module._settle(ruleset, winner, banker_total, player_pair, banker_pair)
                    for _ in range(2):  # worked out, then remembered
                        nets = settle(ruleset, winner, banker_total, player_pair, banker_pair)
                        assert nets == fresh
                        nets[next(iter(nets))] = 99  # the caller's own copy
    assert len([key for key in ruleset.memo if key[0] == "settle"]) <= 3 * 2 * 2 * 2


def test_a_results_settlement_json_is_the_callers_own():
    ruleset = load_ruleset("macau-statutory")  # 5% commission: a float among the integers
    coup = Coup(ruleset)
    for text in ("6S", "7H", "TC", "KD"):
        coup, _ = coup.deal(parse_card(text))
    result = coup.result()
    first = result.to_json()
    assert first["settlement"] == settlement_json(result.settlement)
    assert first["settlement"]["banker"] == 0.95 and type(first["settlement"]["player"]) is int
    first["settlement"]["banker"] = 7
    assert result.to_json()["settlement"]["banker"] == 0.95
    assert coup.result().to_json() == result.to_json()


# ----- rulesets ---------------------------------------------------------------------
def test_a_builtin_ruleset_is_read_once_and_with_decks_keeps_an_equal_value():
    ruleset = load_ruleset("macau-statutory")
    assert load_ruleset("macau-statutory") is ruleset
    assert with_decks(ruleset, ruleset.decks) is ruleset
    other = with_decks(ruleset, ruleset.min_decks)
    assert other.decks == ruleset.min_decks and other.memo is not ruleset.memo
    assert replace(other, decks=ruleset.decks) == ruleset  # the memo is not part of the value


# ----- the shoe ------------------------------------------------------------------------
def test_excess_cards_are_listed_in_card_order():
    shoe = Shoe(load_ruleset("punto-banco"), 6)
    for text in ["KS"] * 8 + ["2C"] * 7 + ["AH"] * 6:
        shoe.note(parse_card(text))
    assert list(shoe.excess_cards().items()) == [("2C", 1), ("KS", 2)]
    report = shoe.reconcile()
    assert report["excess"] == {"2C": 1, "KS": 2} and report["balanced"] is False
