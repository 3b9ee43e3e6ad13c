"""The rules' values made for every card and coup (Coup, CoupResult, Cell, RoadStep: frozen msgspec
structs): what a step makes equals what is constructed from the same fields, and stays as it was."""

import copy
import pickle

import msgspec
import pytest

from shoed.rules.cards import parse_card
from shoed.rules.coup import Coup, CoupResult
from shoed.rules.roads import Cell, RoadBuilder
from shoed.rules.ruleset import load_ruleset


def test_a_cell_equals_its_construction_hashes_alike_and_stays_frozen() -> None:
    cell = Cell("B", 3, 1, 0, True, False, True)
    assert cell == Cell("B", 3, ties=1, banker_pair=True, natural=True) and hash(cell) == hash(Cell(**{
        "winner": "B", "coup": 3, "ties": 1, "ties_before": 0, "banker_pair": True, "player_pair": False,
        "natural": True}))
    assert cell != Cell("B", 3, 2, 0, True, False, True)
    assert repr(cell) == "Cell(winner='B', coup=3, ties=1, ties_before=0, banker_pair=True, player_pair=False, natural=True)"
    with pytest.raises(AttributeError):
        cell.ties = 2  # type: ignore[misc]
    assert cell.ties == 1 and msgspec.structs.replace(cell, ties=2) == Cell("B", 3, 2, 0, True, False, True)


def test_coup_steps_and_roads_equal_their_plain_construction() -> None:
    ruleset = load_ruleset("punto-banco")
    coup = Coup(ruleset)
    for text in ("4S", "KH", "2D", "2C", "3H"):
        before = coup
        coup, misdeal = coup.deal(parse_card(text))
        assert misdeal is None and before != coup
        plain = Coup(ruleset, coup.player, coup.banker, coup.order, coup.decisions)
        assert coup == plain and coup.next == plain.next and repr(coup) == repr(plain)
        assert "next" not in repr(coup)  # it follows from the value's fields
        with pytest.raises(AttributeError):
            coup.next = "player"  # type: ignore[misc]
    step = RoadBuilder.from_results("BBPTPb").add("B")
    assert step == msgspec.structs.replace(step) == copy.deepcopy(step) == pickle.loads(pickle.dumps(step))
    assert step.cell == Cell("B", 6, 0, 0, False, False, False)
    with pytest.raises(AttributeError):
        step.new_cell = False  # type: ignore[misc]


def test_a_result_is_its_value_without_the_json_of_its_settlement() -> None:
    ruleset = load_ruleset("macau-statutory")
    coup = Coup(ruleset)
    for text in ("6S", "7H", "TC", "KD"):
        coup, _ = coup.deal(parse_card(text))
    result = coup.result()
    assert result is not None and result.settlement_numbers is not None
    plain = CoupResult(result.player_cards, result.banker_cards, result.player_total, result.banker_total,
                       result.winner, result.natural, result.player_pair, result.banker_pair,
                       dict(result.settlement), result.rotate)
    assert result == plain and repr(result) == repr(plain) and "settlement_numbers" not in repr(result)
    assert result != msgspec.structs.replace(plain, winner="tie")
    with pytest.raises(TypeError):
        hash(result)  # it holds the settlement, a dict
    with pytest.raises(AttributeError):
        result.winner = "tie"  # type: ignore[misc]
