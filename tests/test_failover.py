"""Failover between readers: a shoe first, a camera over its exit second.

Issue "camera fallback": when the shoe is lost the camera takes over, announced as a
device event; when the shoe returns it takes back; a card seen by both is counted once;
the journal records which reader read each card.
"""

from __future__ import annotations

import random

import pytest

from shoed.rules.ruleset import load_ruleset
from shoed.table import TableController
from tests.test_table import dealer_inputs

SHOE, CAMERA = "native:/dev/shoe-native", "camera:/dev/shoe-camera"


def table():
    t = TableController("t1", load_ruleset("punto-banco"), 6)
    t.feed({"kind": "power", "state": "on", "clean": True, "sources": [SHOE, CAMERA]})
    return t


def cards_dealt(events):
    return [e["card"] for e in events if e["kind"] in ("card", "shoe.burn") and e.get("card")]


def feed_all(t, inputs):
    out = []
    for item in inputs:
        out.extend(t.feed(item).events)
    return out


def with_camera(inputs, lag: int, rng: random.Random, seen=lambda i: True):
    """The shoe's inputs, and the camera reading the same cards `lag` cards later (or earlier if negative)."""
    shoe = [dict(x, source=SHOE) if x["kind"] == "card" else x for x in inputs]
    card_positions = [i for i, x in enumerate(shoe) if x["kind"] == "card"]
    before: dict[int, list] = {}  # position in the shoe's inputs -> camera reads just before it
    after: list = []  # camera reads after the last input
    for n, i in enumerate(card_positions):
        if not seen(n):
            continue
        read = {"kind": "card", "card": shoe[i]["card"], "source": CAMERA}
        m = n + lag
        if m < 0:
            before.setdefault(0, []).append(read)
        elif lag >= 0 and m + 1 < len(card_positions):
            before.setdefault(card_positions[m + 1], []).append(read)
        elif lag < 0:
            before.setdefault(card_positions[m], []).append(read)
        else:
            after.append(read)
    out = []
    for i, item in enumerate(shoe):
        out.extend(before.get(i, []))
        out.append(item)
    return out + after


@pytest.mark.parametrize("lag", [0, 1, 3, -1])
def test_camera_in_step_with_a_working_shoe_changes_nothing(lag):
    inputs = dealer_inputs(coups=20)
    alone = TableController("t1", load_ruleset("punto-banco"), 6)
    expected = cards_dealt(feed_all(alone, [dict(x, source=SHOE) if x["kind"] == "card" else x for x in inputs]))
    t = table()
    events = feed_all(t, with_camera(inputs, lag, random.Random(1)))
    assert cards_dealt(events) == expected
    assert not [e for e in events if e["kind"] in ("misdeal", "alarm")]


def test_shoe_lost_mid_coup_the_camera_deals_the_rest_once():
    inputs = dealer_inputs(coups=15)
    alone = TableController("t1", load_ruleset("punto-banco"), 6)
    expected = cards_dealt(feed_all(alone, inputs))
    # The shoe delivers its cards up to card 60, then its link is lost; the camera, a moment
    # ahead of the shoe all along (it sees each card as it leaves), sees every card.
    camera_first = []
    for item in inputs:
        if item["kind"] == "card":
            camera_first.append({"kind": "card", "card": item["card"], "source": CAMERA})
            item = dict(item, source=SHOE)
        camera_first.append(item)
    t = table()
    events, shoe_cards = [], 0
    for item in camera_first:
        if item.get("source") == SHOE and item["kind"] == "card":
            shoe_cards += 1
            if shoe_cards == 60:
                events += t.feed({"kind": "link", "link": "lost", "source": SHOE}).events
            if shoe_cards >= 60:
                continue  # the shoe's reads no longer arrive
        events += t.feed(item).events
    kinds = [e["kind"] for e in events]
    assert "device.fallback" in kinds and t.active_source == CAMERA
    assert cards_dealt(events) == expected
    assert not [e for e in events if e["kind"] == "misdeal"]
    sources = {e["source"] for e in events if e["kind"] == "card"}
    assert sources == {SHOE, CAMERA}  # the journal says which reader read each card


def test_shoe_returns_with_its_backlog_counted_once():
    inputs = dealer_inputs(coups=15)
    alone = TableController("t1", load_ruleset("punto-banco"), 6)
    expected = cards_dealt(feed_all(alone, inputs))
    t = table()
    events, backlog, lost = [], [], False
    n = 0
    for item in inputs:
        if item["kind"] != "card":
            events += t.feed(item).events
            continue
        n += 1
        if n == 40:
            events += t.feed({"kind": "link", "link": "lost", "source": SHOE}).events
            lost = True
        if lost and n < 55:
            backlog.append(dict(item, source=SHOE))  # the shoe kept reading, unacknowledged
            events += t.feed(dict(item, source=CAMERA)).events
            continue
        if lost and n == 55:
            events += t.feed({"kind": "link", "link": "restored", "source": SHOE}).events
            for old in backlog:
                events += t.feed(old).events  # the shoe repeats what was never acknowledged
            lost = False
        events += t.feed(dict(item, source=SHOE)).events
    kinds = [e["kind"] for e in events]
    assert kinds.count("card.duplicate") == len(backlog)
    assert "device.fallback" in kinds and "device.primary" in kinds and t.active_source == SHOE
    assert cards_dealt(events) == expected
    assert not [e for e in events if e["kind"] == "misdeal"]


def test_readers_that_disagree_raise_an_alarm():
    inputs = dealer_inputs(coups=3)
    t = table()
    first = next(i for i, x in enumerate(inputs) if x["kind"] == "card" and x["mode"] == "game")
    feed_all(t, inputs[:first])
    wrong = "KS" if inputs[first]["card"] != "KS" else "QH"
    t.feed({"kind": "card", "card": wrong, "source": CAMERA})
    step = t.feed(dict(inputs[first], source=SHOE))
    alarms = [e for e in step.events if e["kind"] == "alarm"]
    assert alarms and alarms[0]["alarm"] == "reader_mismatch" and wrong in alarms[0]["text"]


@pytest.mark.parametrize("bad", ["zz", "", 5, "1S"])
def test_a_card_the_standby_reader_cannot_read_is_never_dealt_as_a_guess(bad):
    inputs = dealer_inputs(coups=3)
    t = table()
    first = next(i for i, x in enumerate(inputs) if x["kind"] == "card" and x["mode"] == "game")
    feed_all(t, inputs[:first])
    step = t.feed({"kind": "card", "card": bad, "source": CAMERA})
    assert [(e["kind"], e["alarm"], e["source"]) for e in step.events] == [("alarm", "bad_card", CAMERA)]
    # The shoe is lost before it delivers that card: the camera takes over with what it saw.
    events = t.feed({"kind": "link", "link": "lost", "source": SHOE}).events
    assert t.active_source == CAMERA
    dealt = [e for e in events if e["kind"] in ("card", "shoe.burn")]
    assert [(e["card"], e["recipient"]) for e in dealt] == [(None, "unreadable")]
    assert any(e["kind"] == "misdeal" and e["misdeal"]["kind"] == "unreadable_card" for e in events)


def test_a_standby_reader_s_card_text_is_kept_in_its_one_written_form():
    inputs = dealer_inputs(coups=3)
    t = table()
    first = next(i for i, x in enumerate(inputs) if x["kind"] == "card" and x["mode"] == "game")
    feed_all(t, inputs[:first])
    assert t.feed({"kind": "card", "card": inputs[first]["card"].lower(), "source": CAMERA}).events == []
    step = t.feed(dict(inputs[first], source=SHOE))  # the same card: no mismatch
    assert not [e for e in step.events if e["kind"] == "alarm"]


def test_every_reader_lost_asks_for_manual_entry():
    t = table()
    t.feed({"kind": "link", "link": "lost", "source": SHOE})
    step = t.feed({"kind": "link", "link": "lost", "source": CAMERA})
    assert step.events[-1]["alarm"] == "no_reader" and t.active_source is None


def test_failover_events_follow_the_schema():
    from shoed.table.events import validate

    t = table()
    events = feed_all(t, dealer_inputs(coups=2))
    events += t.feed({"kind": "link", "link": "lost", "source": SHOE}).events
    events += t.feed({"kind": "link", "link": "restored", "source": SHOE}).events
    for e in events:
        validate(e)
    assert {"device.primary", "device.fallback"} <= {e["kind"] for e in events}
