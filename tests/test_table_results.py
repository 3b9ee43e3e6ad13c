"""A shoe's results from the table's events and a snapshot's coups (shoed/table/results.py):
the one fold of results less voids, outside the rules, which know no event kinds."""

from __future__ import annotations

import pytest

from shoed.rules.roads import ResultsError
from shoed.rules.roads import results_text as notation
from shoed.table.results import outcome_of, results_from_events, results_of

# Results from the table's own records: coup.result events and a snapshot's coups.
RESULT = {"kind": "coup.result", "coup": 1, "winner": "banker", "natural": True, "banker_pair": False,
          "player_pair": True, "player_cards": ["9H", "9S"], "banker_cards": ["KS", "9D"], "void": False}


@pytest.mark.parametrize(
    "record, expected",
    [
        (RESULT, "Bpn"),
        (RESULT | {"winner": "player", "natural": False, "player_pair": False}, "P"),
        (RESULT | {"winner": "tie"}, "Tpn"),
        ({"coup": 4, "void": True, "reason": "misdeal: foreign_card"}, None),  # a snapshot's void
        ({"kind": "coup.void", "coup": 4, "reason": "voided by the pit"}, None),
    ],
)
def test_outcome_of_a_record(record, expected):
    outcome = outcome_of(record)
    assert (None if outcome is None else str(outcome)) == expected


def test_outcome_of_a_record_without_a_winner_is_an_error():
    with pytest.raises(ResultsError, match="coup 3: no winner"):
        outcome_of({"coup": 3, "void": False})


def test_results_of_a_snapshot_skip_voids():
    coups = [RESULT, {"coup": 2, "void": True, "reason": "x"}, RESULT | {"coup": 3, "winner": "tie"}]
    assert notation(results_of(coups)) == "BpnTpn"


def test_results_from_events_take_back_a_voided_result():
    def result(coup, winner, shoe="s1"):
        return RESULT | {"coup": coup, "winner": winner, "natural": False, "player_pair": False, "shoe": shoe}

    events = [
        {"kind": "shoe.opened", "shoe": "s1"}, result(1, "banker"), result(2, "player"),
        {"kind": "coup.void", "coup": 2, "shoe": "s1"},  # voided after its result: not a result
        {"kind": "coup.void", "coup": 3, "shoe": "s1"},  # voided during the coup: nothing to take back
        result(4, "tie"), {"kind": "card", "coup": 5, "shoe": "s1"},
        {"kind": "shoe.opened", "shoe": "s2"}, result(1, "player", "s2"),
    ]
    assert notation(results_from_events(events)) == "P"
    assert notation(results_from_events(events, shoe="s1")) == "BT"


def test_the_rules_know_no_event_kinds():
    """The rules are pure outcomes and roads: the table's events are read on the table side. No
    rules module spells an event kind with a dot (coup.result, shoe.opened...) or reads a record's
    `kind` (a kind without a dot, such as `card`, is also a field name the rules may write)."""
    from pathlib import Path

    import shoed.rules
    from shoed.table.events import EVENT_TYPES

    rules = Path(shoed.rules.__file__).parent
    for path in sorted(rules.glob("*.py")):
        code = path.read_text()
        for kind in EVENT_TYPES:
            assert "." not in kind or f'"{kind}"' not in code, f"{path.name} spells the event kind {kind!r}"
        assert 'get("kind")' not in code and '["kind"]' not in code, f"{path.name} reads an event's kind"
