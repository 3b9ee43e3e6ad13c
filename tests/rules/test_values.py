"""shoed.rules.values.maker: the value it makes is the one the dataclass's own __init__ makes."""

import dataclasses

import pytest

from shoed.rules.cards import parse_card
from shoed.rules.coup import Coup
from shoed.rules.roads import Cell, RoadBuilder
from shoed.rules.ruleset import load_ruleset
from shoed.rules.values import maker


def test_made_equals_constructed_and_stays_frozen() -> None:
    make = maker(Cell, ("winner", "coup", "ties", "ties_before", "banker_pair", "player_pair", "natural"))
    made = make("B", 3, 1, 0, True, False, True)
    assert made == Cell("B", 3, 1, 0, True, False, True) and type(made) is Cell
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.ties = 2  # type: ignore[misc]


def test_not_field_names_refused() -> None:
    with pytest.raises(ValueError):
        maker(Cell, ("winner", "coup); import os; (x",))


def test_coup_steps_and_roads_equal_their_plain_construction() -> None:
    ruleset = load_ruleset("punto-banco")
    coup = Coup(ruleset)
    for text in ("4S", "KH", "2D", "2C", "3H"):
        coup, misdeal = coup.deal(parse_card(text))
        assert misdeal is None
        plain = Coup(ruleset, coup.player, coup.banker, coup.order, coup.decisions)
        assert coup == plain and coup.next == plain.next
    step = RoadBuilder.from_results("BBPTPb").add("B")
    assert step == dataclasses.replace(step) and step.cell == Cell("B", 6, 0, 0, False, False, False)
