"""The display audience's view of events and snapshots (shoed.table.audience), case by case."""

from __future__ import annotations

import pytest

from shoed.table.audience import display_event, display_snapshot, for_audience
from shoed.table.events import validate

BASE = {"table": "t1", "shoe": "s1", "coup": 3, "mono_ns": 1, "utc": "2026-01-01T00:00:00Z"}


def ev(seq: int, kind: str, **fields) -> dict:
    return {**BASE, "seq": seq, "kind": kind, **fields}


# (event, reveal, what the display gets: "same", "withheld", or the fields that must be null/absent)
CASES = [
    (ev(1, "card", card="9H", recipient="player", index=0, total=9), "dealt", "same"),
    (ev(2, "card", card="9H", recipient="player", index=0, total=9), "result", {"card": None, "card_withheld": True}),
    (ev(3, "card", card="7D", recipient="none"), "dealt", {"card": None, "card_withheld": True}),  # an extra card: may be dealt later
    (ev(4, "card", card="7D", recipient="foreign"), "dealt", {"card": None, "card_withheld": True}),
    (ev(5, "shoe.burn", card="3H", exposed=True, burn_due=3), "dealt", "same"),
    (ev(6, "shoe.burn", card="KC", exposed=False, burn_due=2), "dealt", {"card": None, "card_withheld": True}),
    (ev(7, "misdeal", misdeal={"id": 1, "kind": "extra_card", "card_index": 4, "correctable": True,
                               "correction": "burn_or_return", "reason": "x", "card": "7D"}), "dealt", {"misdeal.card": None}),
    (ev(8, "misdeal.corrected", misdeal=1, correction="return_card", card="7D"), "dealt", {"card": None, "card_withheld": True}),
    (ev(9, "misdeal.corrected", misdeal=2, correction="enter_card", card="5S"), "dealt", "same"),
    (ev(10, "alarm", alarm="favourable_bet", active=True, text="banker +0.1%", bets=["banker"]), "dealt", "withheld"),
    (ev(11, "alarm", alarm="foreign_card", active=True, text="9H seen 33 times"), "dealt", {"text": None}),
    (ev(12, "shoe.odds", cards_left=300, probabilities={}, player_expectation={}, favourable=[]), "dealt", "withheld"),
    (ev(13, "card.duplicate", card="9H"), "dealt", "withheld"),
    # A squeezed hand's total after a card gives the card's value.
    (ev(14, "card", card="7D", recipient="banker", index=1, total=7), "result",
     {"card": None, "card_withheld": True, "total": None}),
    # A misdeal's reason may name its card: told by its kind alone.
    (ev(15, "misdeal", misdeal={"id": 2, "kind": "burn_during_coup", "card_index": 2, "correctable": True,
                                "correction": "burn_card", "reason": "5D was read in burn mode", "card": "5D"}),
     "dealt", {"misdeal.card": None, "misdeal.reason": "burn during coup"}),
    # Where cards are faced at the result, a card entered by hand is not shown before it either.
    (ev(16, "misdeal.corrected", misdeal=2, correction="enter_card", card="5S"), "result",
     {"card": None, "card_withheld": True}),
    # An alarm's details may name the shuffled order's next card, or cards missing from the shoe.
    (ev(17, "alarm", alarm="sequence_mismatch", active=True, text="2D expected", position=40, expected="2D",
        got="9C", mismatch="inserted", source="native:/dev/shoe"), "dealt",
     {"expected": None, "got": None, "position": None, "text": None, "alarm": "sequence_mismatch",
      "source": "native:/dev/shoe"}),
    (ev(18, "alarm", alarm="deck_incomplete", active=True, deck=1, missing=["AS"], extra=["KD"], foreign=[]), "dealt",
     {"missing": None, "extra": None, "foreign": None, "deck": None}),
    (ev(19, "alarm", alarm="weak_shuffle", active=True, run={"length": 8, "previous": 214}), "dealt", {"run": None}),
    # The cards a closed shoe left, by identity, with those faced give the face-down ones.
    (ev(20, "shoe.closed", reason="removed", reconciliation={"seen": 12, "left_in_shoe": 404, "balanced": True,
                                                             "left_by_identity": {"KC": 31}}), "dealt",
     {"reconciliation.left_by_identity": None, "reconciliation.seen": 12, "reconciliation.balanced": True}),
    # Its excess by identity names the foreign cards the display was shown withheld: counted, not named.
    (ev(23, "shoe.closed", reason="closed", reconciliation={"seen": 40, "balanced": False, "excess": {"9C": 2, "AS": 1}}),
     "dealt", {"reconciliation.excess": None, "reconciliation.excess_cards": 3, "reconciliation.seen": 40}),
    # A shuffled shoe's order, revealed at its close, gives the face-down burns; closed before its end
    # (taken out to clear a jam), every card still in it.
    (ev(22, "shoe.closed", reason="removed", reconciliation={"seen": 41, "balanced": True},
        reveal={"shuffle": 7, "order": ["4H", "4S", "JS", "KH"], "salt": "ab" * 32, "commitment": "cd" * 32}),
     "dealt", {"reveal.order": None, "reveal.salt": None, "reveal.shuffle": 7, "reveal.commitment": "cd" * 32}),
    # The text that locked the table may quote a forged frame's bytes (a card).
    # Squeezed cards voided before their result were never faced; dealt as faced, they were.
    (ev(24, "coup.void", reason="card exposed", player_cards=["9H"], banker_cards=["KD"]), "result",
     {"player_cards": [], "banker_cards": []}),
    (ev(25, "coup.void", reason="card exposed", player_cards=["9H"], banker_cards=["KD"]), "dealt", "same"),
    (ev(21, "table.started", clean=True, ruleset="punto-banco", locked="forged frame 5a0312..."), "dealt",
     {"locked": "locked"}),
]


@pytest.mark.parametrize(("event", "reveal", "expected"), CASES, ids=[f"{c[0]['kind']}-{c[0]['seq']}" for c in CASES])
def test_display_event(event, reveal, expected):
    before = dict(event)
    shown = display_event(event, reveal)
    assert event == before, "pure: the event itself is not changed"
    validate(shown)  # the schema holds for the display audience too
    assert shown["seq"] == event["seq"]
    if expected == "same":
        assert shown == event
    elif expected == "withheld":
        assert shown == {"kind": "withheld", **{k: event[k] for k in ("table", "seq", "shoe", "coup", "mono_ns", "utc")}}
    else:
        for path, value in expected.items():
            outer, _, inner = path.partition(".")
            got = shown.get(outer) if not inner else shown[outer].get(inner)
            assert got == value, (path, shown)


def test_display_snapshot_keeps_no_hidden_card():
    snap = {"seq": 9, "shoe": {"id": "s1", "cards_left": 400, "remaining_by_rank": [32] * 10},
            "odds": {"favourable": ["banker"]}, "alarms": {"favourable_bet": "x", "tamper": "lid open"},
            "pending_misdeals": [{"id": 1, "kind": "extra_card", "card": "7D"}],
            "coup": {"complete": False, "player_cards": ["9H"], "banker_cards": [], "player_total": 9}}
    shown = display_snapshot(snap)
    assert "remaining_by_rank" not in shown["shoe"] and shown["odds"] is None
    assert shown["pending_misdeals"] == [{"id": 1, "kind": "extra_card"}]
    assert shown["alarms"] == {"tamper": "tamper"} and shown["coup"]["player_cards"] == ["9H"]
    assert display_snapshot(snap, "result")["coup"]["player_cards"] == []
    voided = {**snap, "coups": [{"coup": 1, "void": False, "player_cards": ["2C"], "banker_cards": ["3C"]},
                                {"coup": 2, "void": True, "player_cards": ["9H"], "banker_cards": ["KD"]}]}
    assert [c["player_cards"] for c in display_snapshot(voided, "result")["coups"]] == [["2C"], []]
    assert [c["player_cards"] for c in display_snapshot(voided)["coups"]] == [["2C"], ["9H"]]
    locked = {**snap, "journal_head": "6942cc", "journal": {"file": 2, "jseq": 417, "hash": "5c0f"},
              "locked": "forged frame 5a0312...", "alarms": {"forged_frame": "forged frame 5a0312..."},
              "waiting": {"for": "unlock", "text": "the pit to clear the lock (forged frame 5a0312...)"},
              "pending_misdeals": [{"id": 2, "kind": "burn_during_coup", "reason": "5D was read in burn mode",
                                    "card": "5D"}],
              "shoe": {**snap["shoe"], "reconciliation": {"seen": 12, "left_by_identity": {"KC": 31},
                                                          "excess": {}}}}
    shown = display_snapshot(locked)
    assert "journal_head" not in shown and "journal" not in shown  # a hash checks a guess at a face-down card
    assert shown["locked"] == "forged_frame" and "5a03" not in shown["waiting"]["text"]
    assert shown["pending_misdeals"] == [{"id": 2, "kind": "burn_during_coup", "reason": "burn during coup"}]
    assert shown["shoe"]["reconciliation"] == {"seen": 12, "excess_cards": 0}
    assert snap["shoe"]["remaining_by_rank"] == [32] * 10, "pure"
    every, whole = for_audience("surveillance")
    assert every(CASES[5][0]) is CASES[5][0] and whole(snap) is snap
    with pytest.raises(ValueError):
        for_audience("players")


def test_the_replay_offers_the_audiences_there_are():
    """`shoed replay --audience/--reveal` names them without importing the table (its --help stays quick)."""
    from shoed.commands import replay
    from shoed.table import audience

    assert (replay.AUDIENCES, replay.DISPLAY, replay.REVEALS) == (audience.AUDIENCES, audience.DISPLAY, audience.REVEALS)
