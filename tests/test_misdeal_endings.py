"""Every misdeal ends, every card is accounted for, and every wait is named (issue: the
dealer's, pit's and surveillance's workflows).

Whole shoes are dealt through the controller by a careful dealer (tests/careful_dealer.py)
that makes one dealing fault per coup and corrects it as the table asks. After every input:
a display that stayed open shows what a late joiner shows; at the end every misdeal has
its `misdeal.corrected` or its coup's `coup.void`, and the reconciliation puts every card
in one category (in coups that counted, in voided coups, burned, discarded, left).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from shoed.display.state import apply, fold, initial
from tests.careful_dealer import Table, deal_shoe

FAULTS = {2: "missing", 4: "extra", 6: "unreadable", 8: "void_open", 10: "void_result", 12: "missing",
          14: "extra", 16: "after_last"}
ROYAL_FAULTS = FAULTS | {3: "early", 5: "early", 7: "early", 9: "early", 11: "early", 13: "early"}


def visible(state):
    return replace(state, snapshots=0, events=0, notices=(), note=None, remaining_by_rank=None, odds_local=False)


def late_joiner(snap: dict):
    return apply(initial("t1"), {"table": "t1", "kind": "snapshot", "seq": snap["seq"], "state": snap,
                                 "reason": "initial"})


@pytest.fixture(scope="module", params=[("punto-banco", FAULTS), ("baccarat-royal", ROYAL_FAULTS),
                                        ("macau-statutory", FAULTS)], ids=lambda p: p[0])
def shoe(request):
    ruleset, faults = request.param
    return deal_shoe(Table(ruleset), faults, seed=7)


def ended(events: list[dict]) -> dict[int, str]:
    """Misdeal id -> how it ended ('corrected:<how>' or 'void')."""
    out: dict[int, str] = {}
    open_by_coup: dict[int, list[int]] = {}
    for e in events:
        if e["kind"] == "misdeal":
            detail = e["misdeal"]
            if not detail["correctable"]:
                out[detail["id"]] = "void"  # its coup.void follows at once
            open_by_coup.setdefault(e["coup"], []).append(detail["id"])
        elif e["kind"] == "misdeal.corrected":
            out[e["misdeal"]] = f"corrected:{e['correction']}"
        elif e["kind"] == "coup.void":
            for mid in open_by_coup.pop(e["coup"], []):
                out.setdefault(mid, "void")
    return out


def test_every_misdeal_ends_corrected_or_void(shoe):
    misdeals = [e["misdeal"] for e in shoe.events if e["kind"] == "misdeal"]
    kinds = {m["kind"] for m in misdeals}
    assert {"missing_card", "extra_card", "unreadable_card", "card_after_last_coup"} <= kinds
    endings = ended(shoe.events)
    assert sorted(endings) == sorted(m["id"] for m in misdeals)
    # A missing card that is then dealt is corrected by dealing it (it was left pending, silently).
    missing = [m["id"] for m in misdeals if m["kind"] == "missing_card"]
    assert missing and all(endings[i] == "corrected:deal" for i in missing)
    assert shoe.after[-1][1]["pending_misdeals"] == []


def test_the_shoe_closes_balanced_with_every_card_in_one_category(shoe):
    closed = [e for e in shoe.events if e["kind"] == "shoe.closed"]
    assert len(closed) == 1
    rec = closed[0]["reconciliation"]
    voids = [e for e in shoe.events if e["kind"] == "coup.void"]
    assert len(voids) >= 2 and rec["in_void_coups"] >= sum(len(v["player_cards"]) + len(v["banker_cards"])
                                                            for v in voids)
    categories = rec["categories"]
    assert sum(categories.values()) == rec["capacity"]
    assert rec["unaccounted"] == 0 and rec["balanced"] is True
    dealt = sum(e["cards"] for e in shoe.events if e["kind"] == "coup.result"
                and e["coup"] not in {v["coup"] for v in voids})
    assert categories["in_coups"] == dealt


def test_a_display_left_open_shows_what_a_late_joiner_shows_after_every_input(shoe):
    state, done = initial("t1"), 0
    for upto, snap in shoe.after:
        state = fold(shoe.events[done:upto], state)
        done = upto
        late = late_joiner(snap)
        assert visible(state) == visible(late), f"after event {upto}: {shoe.events[upto - 1]['kind']}"


def test_the_readme_void_example_leaves_the_table_waiting_for_a_confirm_it_names():
    table = Table()
    deal_shoe(table, {}, seed=3)  # a whole shoe first: the table is then waiting for a shoe
    assert table.controller.waiting()["for"] == "shoe"
    table.feed("shoe_inserted", source="shoe")
    while table.controller.waiting()["for"] == "burn":
        table.feed("card", card="5H" if table.controller.shoe.phase == "burn_first" else "2C", mode="burn")
    table.feed("card", card="9S", mode="game")
    reply = table.command("void", reason="card exposed")
    assert reply == {"ok": True}
    waiting = table.controller.waiting()
    assert waiting["for"] == "confirm" and "void" in waiting["text"]
    assert table.after[-1][1]["waiting"]["since"] == table.events[-1]["utc"]
    table.feed("button", button="confirm", source="shoe")
    assert table.controller.waiting()["for"] == "card" and table.controller.coup_state == "open"


def test_a_long_wait_raises_stalled_and_the_next_input_clears_it():
    table = Table()
    table.feed("shoe_inserted", source="shoe")
    table.feed("card", card="AS", mode="burn")
    table.feed("card", card="2C", mode="burn")
    table.feed("card", card="9S", mode="game")
    since = table.controller.wait_since[0]
    assert not table.controller.stall_due(since + 119 * 10**9, 120 * 10**9)
    assert table.controller.stall_due(since + 120 * 10**9, 120 * 10**9)
    # A tick before the time is up raises nothing.
    table.n += 5
    table.feed("tick", stall_after_s=120)
    assert "stalled" not in table.controller.alarms and table.events[-1]["kind"] == "card"
    table.n += 200
    table.feed("tick", stall_after_s=120)
    alarm = table.events[-1]
    assert alarm["kind"] == "alarm" and alarm["alarm"] == "stalled" and alarm["active"] is True
    assert alarm["code"] == "card" and "a card for the banker" in alarm["text"]
    table.feed("tick", stall_after_s=120)  # raised once per wait
    assert table.events[-1] is alarm
    table.feed("card", card="3D", mode="game")
    assert table.events[-1]["alarm"] == "stalled" and table.events[-1]["active"] is False
    assert "stalled" not in table.controller.alarms
    # A table with no shoe is closed, not stalled.
    table.feed("shoe_removed", source="shoe")
    table.n += 10_000
    assert not table.controller.stall_due(table.n * 10**9, 120 * 10**9)


def test_a_wait_goes_on_across_a_reboot_and_stalled_comes_on_time():
    # The box lost power while the table waited for a card; after the reboot its monotonic clock began
    # again near 0. The wait is timed from when it began on the wall clock: `stalled` comes when it is due.
    table = Table()
    table.feed("shoe_inserted", source="shoe")
    for card, mode in (("AS", "burn"), ("2C", "burn"), ("9S", "game")):
        table.feed("card", card=card, mode=mode)
    since_mono, since_utc = table.controller.wait_since
    booted = since_mono // 4  # the new boot's monotonic clock, behind where the wait began
    table.controller.feed({"kind": "power", "state": "on", "clean": False, "sources": ["shoe"],
                           "mono_ns": booted, "utc_ns": since_utc + 100 * 10**9})
    assert table.controller.wait_since == (booted - 100 * 10**9, since_utc)
    assert not table.controller.stall_due(booted + 19 * 10**9, 120 * 10**9)
    step = table.controller.feed({"kind": "tick", "stall_after_s": 120, "mono_ns": booted + 20 * 10**9,
                                  "utc_ns": since_utc + 120 * 10**9})
    assert [(e["kind"], e.get("alarm"), e.get("active")) for e in step.events] == [("alarm", "stalled", True)]


def test_a_confirm_before_a_free_choice_ends_with_the_decision():
    table = Table("baccarat-royal")
    table.feed("shoe_inserted", source="shoe")
    controller = table.controller
    while controller.waiting()["for"] == "burn":
        table.feed("card", card="5H" if controller.shoe.phase == "burn_first" else "2C", mode="burn")
    # Player 5 (5C + KD): Baccarat Royal leaves the player a free choice; banker 2 (AD + AS).
    for card in ("5C", "AD", "KD", "AS"):
        table.feed("card", card=card, mode="game")
    assert controller.waiting()["for"] == "decision"
    table.feed("button", button="confirm", source="shoe")
    misdeal = table.events[-1]["misdeal"]
    assert misdeal["kind"] == "missing_card" and misdeal["correction"] == "decide"
    assert controller.waiting()["for"] == "decision"
    table.feed("button", button="player_stand", source="shoe")
    corrected = [e for e in table.events if e["kind"] == "misdeal.corrected"]
    assert [(e["misdeal"], e["correction"]) for e in corrected] == [(misdeal["id"], "decide")]
    assert controller.pending == []
