"""The table controller's side of stream integrity and command roles (docs/stream-integrity.md).

Holds (forged_frame, device_changed) stop play until the pit decides; a burn while a coup
card is due is a misdeal (Macau statutory rules Art. X); clock inputs become events; only
pit and surveillance keys unlock or void; and a refused command changes nothing: a property
over random tables and random commands.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shoed.table.events import validate
from shoed.rules.ruleset import load_ruleset
from shoed.table.events import COMMANDS, ROLES
from shoed.table import TableController
from tests.test_table import Clock, dealer_inputs

SOURCE = "native:/dev/shoe"
HELLO = {"vendor": "Acme", "serial": "SN1", "boot": 1}


def table_at_first_coup():
    """A table with a shoe's Hello, the burn done and coup 1 open, its first card dealt."""
    ruleset = load_ruleset("punto-banco")
    table = TableController("t1", ruleset, ruleset.decks)
    at = Clock()
    table.feed(at("hello", source=SOURCE, detail=HELLO))
    for item in dealer_inputs(coups=1)[:-1]:
        table.feed(item)
        if table.coup_no == 1 and table.coup.order:
            break
    assert table.coup_no == 1 and len(table.coup.order) == 1
    return table, at


def held_by(table) -> list[str]:
    return [name for name in ("integrity", "forged_frame", "device_changed") if name in table.alarms]


def test_a_forged_frame_holds_the_table_until_the_pit_decides():
    table, at = table_at_first_coup()
    step = table.feed(at("forged_frame", source=SOURCE, raw="aa", detail={"seq": 9, "boot": 1, "taken": "bb"}))
    assert [e["alarm"] for e in step.events] == ["forged_frame"] and table.locked and not table.card_due
    for event in step.events:
        validate(event)
    # A card that comes anyway is not dealt: a misdeal to correct once the pit has decided.
    step = table.feed(at("card", source=SOURCE, card="9D", mode="game"))
    assert [(e["kind"], e.get("recipient")) for e in step.events] == [("card", "none"), ("misdeal", None)]
    assert len(table.coup.order) == 1
    refused = table.feed(at("command", cmd="unlock", client="dealer-1", role="dealer"))
    assert refused.reply == {"ok": False, "error": "unlock needs the pit or surveillance role; dealer-1 is dealer"}
    assert table.feed(at("command", cmd="void", args={"reason": "forged"}, client="pit", role="pit")).reply["ok"]
    step = table.feed(at("command", cmd="unlock", client="cctv", role="surveillance"))
    assert step.reply == {"ok": True} and table.locked is None and held_by(table) == []
    assert [(e["alarm"], e["active"]) for e in step.events] == [("forged_frame", False)]


def test_commands_recorded_before_roles_replay_as_recorded():
    """A journal written before roles has no role on its commands: they did what they did."""
    table, at = table_at_first_coup()
    assert table.feed(at("command", cmd="void", args={"reason": "old journal"}, client="console")).reply["ok"]


@pytest.mark.parametrize(("changed", "mid_coup", "held"), [
    ({"boot": 2}, True, True),
    ({"boot": 2}, False, False),  # the shoe restarted between coups: ordinary
    ({"vendor": "Other"}, False, True),
    ({"serial": "SN2"}, True, True),
    ({}, True, False),
])
def test_another_shoe_or_a_restart_mid_coup_holds(changed, mid_coup, held):
    table, at = table_at_first_coup()
    if not mid_coup:
        table, at = TableController("t1", table.ruleset, table.decks), Clock()
        table.feed(at("hello", source=SOURCE, detail=HELLO))
        table.feed(at("shoe_inserted", source=SOURCE))
    step = table.feed(at("hello", source=SOURCE, detail=HELLO | changed))
    assert step.events[0]["kind"] == "device.hello"
    assert bool(table.locked) is held and (held_by(table) == ["device_changed"]) is held


def test_identities_survive_a_checkpoint():
    ruleset = load_ruleset("punto-banco")
    table = TableController("t1", ruleset, ruleset.decks)
    table.feed(Clock()("hello", source=SOURCE, detail=HELLO))
    again = TableController.from_checkpoint("t1", ruleset, ruleset.decks, json.loads(json.dumps(table.checkpoint())))
    assert again.identities == {SOURCE: HELLO}


@pytest.mark.parametrize("item", [
    {"mode": "burn", "card": "5D"},
    {"button": "burn_start"},
])
def test_a_burn_while_a_coup_card_is_due_is_a_misdeal(item):
    table, at = table_at_first_coup()
    kind = "card" if "card" in item else "button"
    burned = table.shoe.counts.burned
    step = table.feed(at(kind, source=SOURCE, **item))
    misdeals = [e["misdeal"] for e in step.events if e["kind"] == "misdeal"]
    assert [m["kind"] for m in misdeals] == ["burn_during_coup"] and misdeals[0]["card"] == item.get("card")
    assert table.shoe.counts.burned == burned and not table.burn_mode and not table.card_due
    assert table.feed(at("command", cmd="burn_card", args={}, role="dealer")).reply == {"ok": True}
    assert table.card_due


@pytest.mark.parametrize(("item", "kind", "field", "value"), [
    ({"what": "step", "step_ns": -3600 * 10**9, "utc_before_ns": 1_790_000_000 * 10**9}, "table.clock_step",
     "utc_before", "2026-09-21T14:13:20.000000Z"),
    ({"what": "stall", "stalled_ns": 10 * 10**9, "limit_ns": 5 * 10**9}, "table.stall", "stalled_ns", 10 * 10**9),
])
def test_clock_inputs_are_events(item, kind, field, value):
    ruleset = load_ruleset("punto-banco")
    step = TableController("t1", ruleset, ruleset.decks).feed(Clock()("clock", **item))
    (event,) = step.events
    assert event["kind"] == kind and event[field] == value
    validate(event)


# ----- a refused command changes nothing --------------------------------------------------------

ARGS = st.fixed_dictionaries({}, optional={
    "misdeal": st.integers(0, 4), "card": st.sampled_from(["9H", "KS", "AD", "x"]), "decks": st.integers(0, 9),
    "side": st.sampled_from(["player", "banker", "tie"]), "draw": st.booleans(), "reason": st.just("r"),
})
DISTURB = st.sampled_from([
    {"kind": "card", "card": "5D", "mode": "burn"}, {"kind": "card", "card": "QS", "mode": "game"},
    {"kind": "card", "card": None, "mode": "game"}, {"kind": "button", "button": "burn_start"},
    {"kind": "button", "button": "confirm"}, {"kind": "shoe_removed"}, {"kind": "cut_card"},
    {"kind": "integrity", "text": "journal"}, {"kind": "forged_frame", "detail": {"seq": 1}},
    {"kind": "command", "cmd": "close_shoe", "role": "pit"}, {"kind": "command", "cmd": "unlock", "role": "pit"},
])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prefix=st.integers(0, 60), disturb=st.lists(st.tuples(st.integers(0, 60), DISTURB), max_size=4),
       commands=st.lists(st.tuples(st.sampled_from(sorted(COMMANDS)), ARGS, st.sampled_from(ROLES)), min_size=1, max_size=6))
def test_a_refused_command_leaves_the_table_as_it_was(prefix, disturb, commands):
    ruleset = load_ruleset("punto-banco")
    table = TableController("t1", ruleset, ruleset.decks)
    at = Clock()
    inputs = dealer_inputs(coups=6)[:prefix]
    for where, item in sorted(disturb, key=lambda d: d[0]):
        inputs.insert(min(where, len(inputs)), at(**item))
    for item in inputs:
        table.feed(item)
    for cmd, args, role in commands:
        before = json.dumps(table.snapshot(), sort_keys=True)
        checkpointable = table.checkpointable
        step = table.feed(at("command", cmd=cmd, args=args, client="k", role=role))
        if not step.reply["ok"]:
            assert step.events == [], (cmd, args, role, step.reply)
            assert json.dumps(table.snapshot(), sort_keys=True) == before, (cmd, args, role, step.reply)
            assert table.checkpointable == checkpointable
