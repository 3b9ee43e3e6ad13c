"""The display's state (shoed/display/state.py) follows the table exactly.

The table controller (shoed/table/controller.py) is the authority: after every input, the
display's fold of the events so far must show what the controller's own
snapshot says (results, voids, roads, cards left, pending misdeals, alarms,
phase), and a display that joins late (docs/integrators.md, "Catch-up (ZeroMQ's Clone
pattern)": snapshot, then the events after it) must end up showing the same
as one that saw everything. The shoe is dealt through the real controller,
with the irregularities a display meets at a table.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from shoed.display.state import CoupView, apply, fold, initial
from shoed.rules.odds import live_odds
from shoed.rules.roads import results_text, roads
from shoed.table.results import results_of
from shoed.rules.ruleset import load_ruleset
from shoed.table import TableController
from tests.test_table import dealer_inputs


def scripted_shoe():
    """One shoe of macau-statutory through the controller, with, in order: an extra
    card put back (coup 2), a coup voided by the pit after its result (coup 4), an
    unreadable card entered by hand (coup 6), a tamper alarm raised and cleared, the
    shoe's link lost and restored, an unknown button (a one-off alarm), live odds,
    the cut card, and the shoe taken out. Returns (events, snapshots after each input)."""
    ruleset = load_ruleset("macau-statutory")
    table = TableController("t1", ruleset, 8)
    events: list[dict] = []
    checkpoints: list[tuple[int, dict]] = []

    def feed(item):
        step = table.feed(item)
        events.extend(step.events)
        checkpoints.append((len(events), table.snapshot()))
        assert step.reply is None or step.reply.get("ok"), step.reply
        return step

    def command(cmd, **args):
        return feed({"kind": "command", "cmd": cmd, "args": args, "client": "pit"})

    done = set()
    for item in dealer_inputs("macau-statutory", 8, seed=4, coups=10):
        n, state = table.coup_no, table.coup_state
        if item["kind"] == "button" and item["button"] == "confirm":
            if n == 2 and "extra" not in done:
                done.add("extra")
                feed({"kind": "card", "card": "AS", "mode": "game"})
                command("return_card")
            if n == 4 and state == "complete":
                command("void", reason="dealer exposed a card")
            if n == 7:
                feed({"kind": "tamper", "active": True, "text": "lid opened", "source": "shoe"})
                feed({"kind": "tamper", "active": False, "text": "lid closed", "source": "shoe"})
                feed({"kind": "link", "source": "shoe", "link": "lost"})
                feed({"kind": "link", "source": "shoe", "link": "restored"})
                feed({"kind": "button", "button": "sideways"})
                feed({"kind": "odds", "odds": live_odds(ruleset, table.shoe.remaining_by_rank())})
            if n == 9:
                feed({"kind": "cut_card"})
        if item["kind"] == "card" and item.get("mode") == "game" and n == 6 and "unreadable" not in done:
            done.add("unreadable")
            feed(item | {"card": None})
            command("enter_card", card=item["card"])
            continue
        if table.shoe is not None and table.shoe.phase == "finished" and item["kind"] == "card":
            break
        feed(item)
    feed({"kind": "shoe_removed"})
    kinds = {e["kind"] for e in events}
    assert {"misdeal", "misdeal.corrected", "coup.void", "shoe.odds", "shoe.cut_card", "shoe.closed"} <= kinds
    voided = {e["coup"] for e in events if e["kind"] == "coup.void"}
    assert voided == {4} and 4 in {e["coup"] for e in events if e["kind"] == "coup.result"}
    corrections = {e["correction"] for e in events if e["kind"] == "misdeal.corrected"}
    assert corrections == {"return_card", "enter_card"}
    return events, checkpoints


@pytest.fixture(scope="module")
def shoe():
    return scripted_shoe()


def shows_what_the_table_says(state, snap):
    coups = snap["coups"]
    assert results_text(state.results) == results_text(results_of(coups))
    assert state.roads == roads(results_of(coups))
    assert [c for c, _ in state.voids] == [c["coup"] for c in coups if c["void"]]
    assert [p[0] for p in state.pending] == [p["id"] for p in snap["pending_misdeals"]]
    assert dict(state.alarms) == snap["alarms"] and state.locked == snap["locked"]
    assert dict(state.devices) == snap["devices"]
    shoe = snap["shoe"]
    assert (state.shoe, state.phase, state.cards_left) == (shoe["id"], shoe["phase"], shoe["cards_left"])
    assert state.cut_card == shoe["cut_card"] and state.last_coup == shoe["last_coup"]
    if coups:
        assert state.last == CoupView.of_record(coups[-1])
    open_coup = snap["coup"]
    if open_coup is not None and open_coup["state"] == "open":
        assert state.coup.number == open_coup["number"] and state.coup.status == "dealing"
        assert list(state.coup.player_cards) == open_coup["player_cards"]
        assert list(state.coup.banker_cards) == open_coup["banker_cards"]


def test_the_fold_shows_what_the_table_says_after_every_input(shoe):
    events, checkpoints = shoe
    state, done = initial("t1"), 0
    for upto, snap in checkpoints:
        state = fold(events[done:upto], state)
        done = upto
        if snap["shoe"] is not None:
            shows_what_the_table_says(state, snap)
    assert state.phase == "closed" and state.reconciliation["balanced"] is True


def visible(state):
    """What a display shows, without its own counters and the one-off notices
    it could only have seen live."""
    return replace(state, snapshots=0, events=0, notices=(), note=None, remaining_by_rank=None)


def test_a_late_joiner_ends_showing_the_same(shoe):
    events, checkpoints = shoe
    everything = fold(events)
    joined = 0
    for upto, snap in checkpoints[::7]:
        if snap["shoe"] is None:
            continue
        late = apply(initial("t1"), {"table": "t1", "kind": "snapshot", "seq": snap["seq"], "state": snap,
                                     "reason": "initial"})
        late = fold(events[upto:], late)
        if not any(e["kind"] == "shoe.odds" for e in events[upto:]):
            # The odds a late display shows are the snapshot's; a snapshot without them shows
            # none until the next coup (the shell then computes them itself).
            assert late.odds == snap.get("odds")
            late = replace(late, odds=everything.odds)
        assert visible(late) == visible(everything)
        joined += 1
    assert joined > 10


def test_a_coup_voided_after_its_result_leaves_the_roads():
    # shoed/table/controller.py: `void` of a complete coup takes its result back.
    base = {"table": "t1", "shoe": "s", "mono_ns": 0, "utc": "2026-01-01T00:00:00Z"}
    result = base | {"kind": "coup.result", "coup": 1, "winner": "banker", "player_cards": ["9H", "TS"],
                     "banker_cards": ["9S", "TD"], "player_total": 9, "banker_total": 9, "natural": True,
                     "player_pair": False, "banker_pair": False, "void": False}
    state = fold([base | {"kind": "shoe.opened", "seq": 1, "decks": 8, "ruleset": "x"},
                  result | {"seq": 2, "winner": "tie"}, result | {"seq": 3, "coup": 2}])
    assert results_text(state.results) == "TnBn" and state.roads.big_road[0][0].ties_before == 1
    state = apply(state, base | {"kind": "coup.void", "seq": 4, "coup": 2, "reason": "pit",
                                 "player_cards": ["9H", "TS"], "banker_cards": ["9S", "TD"]})
    assert results_text(state.results) == "Tn" and state.roads == roads("Tn")
    assert state.voids == ((2, "pit"),) and state.last.status == "void" and state.last.reason == "pit"


@pytest.mark.parametrize(
    "alarm, active, held, notice",
    [
        # TableController._alarm keeps these raised until it clears them.
        ("tamper", True, True, False),
        ("foreign_card", True, True, False),
        ("favourable_bet", True, True, False),
        ("integrity", True, True, False),
        # One-off alarms the controller emits and never clears: notices.
        ("confirm_refused", True, False, True),
        ("unknown_button", True, False, True),
        ("shoe", True, False, True),
        ("unclean_stop", False, False, True),
    ],
)
def test_held_alarms_and_notices(alarm, active, held, notice):
    state = apply(initial("t1"), {"kind": "alarm", "seq": 1, "alarm": alarm, "active": active, "text": "why"})
    assert (alarm in dict(state.alarms)) == held
    assert bool(state.notices) == notice
    if held:
        cleared = apply(state, {"kind": "alarm", "seq": 2, "alarm": alarm, "active": False, "text": "ok"})
        assert cleared.alarms == () and cleared.notices == ()
        assert (state.locked is not None) == (alarm == "integrity") and cleared.locked is None


def test_notices_keep_the_last_few():
    state = fold({"kind": "alarm", "seq": n, "alarm": "shoe", "active": True, "text": f"n{n}"} for n in range(9))
    assert [text for _, _, text in state.notices] == ["n5", "n6", "n7", "n8"]


def test_a_snapshot_replaces_everything_but_the_link():
    state = apply(initial("t1"), {"kind": "watch.connection", "state": "live"})
    state = apply(state, {"kind": "alarm", "seq": 5, "alarm": "tamper", "active": True, "text": "lid"})
    snap = {"table": "t1", "ruleset": "punto-banco", "decks": 6, "shoe": None, "coups": [], "coup": None,
            "pending_misdeals": [], "locked": None, "alarms": {}, "devices": {}, "seq": 9}
    state = apply(state, {"kind": "snapshot", "seq": 9, "state": snap, "reason": "reset"})
    assert state.connection == "live" and state.alarms == () and state.seq == 9 and state.snapshots == 1
