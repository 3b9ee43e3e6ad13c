"""Recall of the last coups.

table-game-standards.md item 1: "Recall: the last coup and at least nine
before it (cards in draw order, totals, outcome, void flag) can be shown in
their original order, also while the system is in an error state."
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shoed.journal import Journal, events_of, read_recent, recall

RESULT = {"kind": "coup_result", "shoe": "S1", "coup": 1}

WHERE_EVENTS_ARE = [
    # (record, the events it carries)
    (RESULT, [RESULT]),
    ({"kind": "event", "event": RESULT}, [RESULT]),
    ({"kind": "reading", "card": "TD", "events": [RESULT, {"kind": "card"}, "junk"]}, [RESULT, {"kind": "card"}]),
    ({"kind": "reading", "card": "TD"}, [{"kind": "reading", "card": "TD"}]),
]


@pytest.mark.parametrize("record, events", WHERE_EVENTS_ARE)
def test_where_a_record_keeps_its_events(record, events):
    assert events_of(record) == events


# Draw order: "The 1st and 3rd cards go to the Player, the 2nd and 4th to the
# Banker" (Macau statutory rules, Art. VI), then the Player's third card, then
# the Banker's (the tableau).
DRAW_ORDER = [
    (["9H", "KS"], ["TD", "8C"], ["9H", "TD", "KS", "8C"]),
    (["2H", "3S", "4D"], ["TD", "8C"], ["2H", "TD", "3S", "8C", "4D"]),
    (["7H", "KS"], ["2D", "3C", "4H"], ["7H", "2D", "KS", "3C", "4H"]),
    (["2H", "3S", "4D"], ["AD", "2C", "5H"], ["2H", "AD", "3S", "2C", "4D", "5H"]),
    ([], [], []),
]


@pytest.mark.parametrize("player, banker, order", DRAW_ORDER)
def test_cards_are_shown_in_draw_order(coup, player, banker, order):
    records = [coup("S1", 1, player, banker, 0, 0, "tie")] if player else [{"kind": "void", "shoe": "S1", "coup": 1}]
    (line,) = recall(records)
    assert line.draw_order == order


def test_the_last_ten_coups_in_their_original_order(coup):
    records = [coup("S1", n, ["9H", "KS"], ["TD", "8C"], 9, 8, "player", natural=True) for n in range(1, 16)]
    lines = recall(records, last=10)
    assert [line.coup for line in lines] == list(range(6, 16))
    assert lines[-1].to_json() == {
        "shoe": "S1",
        "coup": 15,
        "draw_order": ["9H", "TD", "KS", "8C"],
        "player_cards": ["9H", "KS"],
        "banker_cards": ["TD", "8C"],
        "player_total": 9,
        "banker_total": 8,
        "winner": "player",
        "natural": True,
        "player_pair": False,
        "banker_pair": False,
        "void": False,
        "void_reason": None,
        "seq": None,
        "utc": None,
        "void_by": None,
        "void_utc": None,
    }
    assert lines[-1].describe() == "shoe S1 coup 15:  Player 9H KS (9)  Banker TD 8C (8)  player wins, natural"


def test_a_coup_is_recalled_with_when_it_ended_and_who_voided_it(coup):
    records = [
        coup("S1", 1, ["9H", "9S"], ["TD", "8C"], 8, 8, "tie") | {"seq": 40, "utc": "2026-11-23T15:00:53.125Z"},
        {"kind": "void", "shoe": "S1", "coup": 1, "reason": "card exposed\u001b]0;x\u0007", "by": "pit-1",
         "seq": 41, "utc": "2026-11-23T15:01:10.000Z"},
        {"kind": "void", "shoe": "S1", "coup": 2, "reason": "misdeal", "seq": 50, "utc": "2026-11-23T15:02:00.000Z"},
    ]
    one, two = recall(records)
    assert (one.seq, one.utc, one.void_by, one.void_utc) == (40, "2026-11-23T15:00:53.125Z", "pit-1",
                                                             "2026-11-23T15:01:10.000Z")
    text = one.describe()
    assert text.endswith("VOID: card exposed\\x1b]0;x\\x07 (by pit-1, 2026-11-23T15:01:10.000Z)  "
                         "[2026-11-23T15:00:53.125Z, seq 40]"), text  # a reason's escapes shown, never sent
    assert (two.seq, two.utc, two.void_by) == (50, "2026-11-23T15:02:00.000Z", None)


def test_voids_are_flagged_on_their_coup(coup):
    records = [
        coup("S1", 1, ["9H", "9S"], ["TD", "8C"], 8, 8, "tie"),
        {"kind": "event", "event": {"kind": "void", "shoe": "S1", "coup": 1, "reason": "card exposed"}},
        {"kind": "void", "shoe": "S1", "coup": 2, "reason": "card after the coup was closed"},
        coup("S1", 3, ["2H", "3S"], ["AD", "AC"], 5, 2, "player"),
    ]
    one, two, three = recall(records)
    assert one.void and one.void_reason == "card exposed" and one.player_pair and one.winner == "tie"
    assert two.void and two.player_cards == [] and two.describe().endswith("VOID: card after the coup was closed")
    assert not three.void and three.banker_pair and three.describe().endswith("player wins, banker pair")


def test_recall_reads_a_whole_journal(build):
    directory = build(shoes=3, coups=5)
    reading = read_recent(directory, 10)
    lines = recall(reading.records, 10)
    assert reading.stopped_at is None
    assert [(line.shoe, line.coup) for line in lines] == [("S2", c) for c in range(1, 6)] + [
        ("S3", c) for c in range(1, 6)
    ]


def test_recall_reads_only_the_newest_files_it_needs(build):
    directory = build(shoes=6, coups=5, nested=False)
    oldest = min(directory.glob("*.jsonl"))
    oldest.chmod(0o644)
    oldest.write_bytes(b"damaged beyond reading\n")  # never read: the two newest files hold ten coups
    reading = read_recent(directory, 10)
    assert reading.stopped_at is None
    assert [line.shoe for line in recall(reading.records, 10)] == ["S5"] * 5 + ["S6"] * 5


def test_recall_works_on_a_corrupted_journal_up_to_the_bad_record(build):
    directory = build(shoes=2, coups=6)
    second = sorted(directory.glob("*.jsonl"))[1]
    second.chmod(0o644)
    lines = second.read_bytes().splitlines(keepends=True)
    # the result of coup 4 of shoe S2 is on line 1 + 3*4 = 13; damage line 11 (coup 4's reading)
    damaged = lines[10].replace(b'"seq":4', b'"seq":5')
    second.write_bytes(b"".join(lines[:10] + [damaged] + lines[11:]))
    reading = read_recent(directory, 10)
    assert (Path(reading.stopped_at.file), reading.stopped_at.line) == (second, 11)
    shown = [(line.shoe, line.coup) for line in recall(reading.records, 10)]
    assert shown == [("S1", c) for c in range(1, 7)] + [("S2", c) for c in range(1, 4)]


def test_recall_of_a_keyed_journal_without_its_secret_checks_the_links(tmp_path, build):
    secret = b"kept off the box"
    directory = build(shoes=1, coups=3, secret=secret)
    reading = read_recent(directory, 10)
    assert reading.stopped_at is None and "hashes not" in reading.notes[0]
    assert len(recall(reading.records)) == 3


def test_recall_while_the_journal_is_locked(tmp_path, clock, coup):
    with Journal(tmp_path, "T1", clock=clock) as journal:
        journal.open_shoe("S1")
        for c in range(1, 4):
            journal.append(coup("S1", c, ["9H", "KS"], ["TD", "8C"], 9, 8, "player"))
        journal.append({"kind": "reading"})
        journal.append({"kind": "reading"})
    path = next(tmp_path.glob("*.jsonl"))
    data = bytearray(path.read_bytes())
    data[data.find(b'"coup":3') + 7] = ord("4")
    path.write_bytes(bytes(data))
    with pytest.raises(Exception, match="locked"):
        Journal(tmp_path, "T1", clock=clock)
    reading = read_recent(tmp_path, 10)
    assert reading.stopped_at.line == 4
    assert [line.coup for line in recall(reading.records)] == [1, 2]


def _event(kind, seq, coup, **fields):
    return {
        "table": "T1",
        "seq": seq,
        "kind": kind,
        "shoe": "S7",
        "coup": coup,
        "mono_ns": seq,
        "utc": "2024-05-01T20:00:00.000000Z",
        **fields,
    }


def test_recall_reads_the_daemons_step_records():
    """The daemon journals each input with the events it caused (shoed.daemon,
    shoed.table.replay.step_record); coup.result and coup.void as in shoed.table.events."""
    from shoed.table.events import validate

    result = _event(
        "coup.result",
        3,
        1,
        player_cards=["9H", "KS"],
        banker_cards=["TD", "3C", "4H"],
        player_total=9,
        banker_total=7,
        winner="player",
        natural=True,
        player_pair=False,
        banker_pair=False,
        cards=5,
        settlement={"player": 1.0},
    )
    void = _event(
        "coup.void", 9, 2, reason="misdeal: extra_card", by="console", player_cards=["2H"], banker_cards=["3S"]
    )
    for event in (result, void):
        validate(event)
    records = [
        {"kind": "checkpoint", "table": "T1", "state": {}},
        {
            "kind": "step",
            "input": {"kind": "card", "card": "4H"},
            "events": [_event("card", 2, 1, card="4H", recipient="banker"), result],
        },
        {"kind": "step", "input": {"kind": "command", "cmd": "void"}, "events": [void]},
    ]
    one, two = recall(records)
    assert (one.coup, one.winner, one.draw_order, one.void) == (1, "player", ["9H", "TD", "KS", "3C", "4H"], False)
    assert (two.coup, two.void, two.void_reason, two.draw_order) == (2, True, "misdeal: extra_card", ["2H", "3S"])
