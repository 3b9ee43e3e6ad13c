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


def numbered(inputs, boot=7):
    """The shoe's cards as the native driver gives them: each with its frame's seq and the shoe's boot."""
    out, seq = [], 0
    for item in inputs:
        if item["kind"] == "card":
            seq += 1
            item = dict(item, shoe_seq=seq, detail={"boot": boot})
        out.append(item)
    return out


def camera_read(item):
    """The camera's read of a card the shoe reads too: the card, without the shoe's frame numbers."""
    return {k: v for k, v in item.items() if k not in ("shoe_seq", "detail")} | {"source": CAMERA}


def test_shoe_returns_with_its_backlog_counted_once():
    inputs = numbered(dealer_inputs(coups=15))
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
            events += t.feed(camera_read(item)).events
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


# ----- handover after a standby reader fell out of step ----------------------------------------------
PIT = {"kind": "command", "client": "pit", "role": "pit"}


def shoe_with_lagging_camera(inputs, game_cards, missed=(), read_instead=None):
    """Feed the shoe's inputs up to `game_cards` game cards, the camera reading each card one card
    after the shoe delivered it (lag 1). It reports nothing for the game cards numbered in `missed`
    (0-based) and, for those in `read_instead`, that card instead of the one dealt."""
    t, events, late, n = table(), [], None, 0
    for item in inputs:
        if item["kind"] != "card":
            events += t.feed(item).events
            continue
        events += t.feed(dict(item, source=SHOE)).events
        if late is not None:
            events += t.feed(late).events
        game = item["mode"] == "game"
        card = (read_instead or {}).get(n, item["card"]) if game else item["card"]
        late = None if game and n in missed else {"kind": "card", "card": card, "source": CAMERA}
        n += game
        if n == game_cards:
            break
    return t, events


def dealt_to_hands(events):
    return [e["card"] for e in events if e["kind"] == "card" and e.get("recipient") in ("player", "banker")]


def test_a_standby_camera_that_missed_a_card_catches_up_and_never_deals_a_card_twice():
    inputs = dealer_inputs(coups=3)
    shoe_cards = [x["card"] for x in inputs if x["kind"] == "card" and x["mode"] == "game"][:6]
    t, events = shoe_with_lagging_camera(inputs, 6, missed=(3,))
    alarms = [e for e in events if e["kind"] == "alarm"]
    assert [a["alarm"] for a in alarms] == ["reader_mismatch"] and shoe_cards[3] in alarms[0]["text"]
    assert t.ahead.get(CAMERA, []) == [] and t.behind[CAMERA] == [shoe_cards[5]]  # in step again, one card late
    events += t.feed({"kind": "link", "link": "lost", "source": SHOE}).events
    assert t.active_source == CAMERA and not t.locked
    # The camera's late read of the last card the shoe dealt is counted once; then it deals on.
    events += t.feed({"kind": "card", "card": shoe_cards[5], "source": CAMERA}).events
    assert dealt_to_hands(events) == shoe_cards
    assert [e["card"] for e in events if e["kind"] == "card.duplicate"] == [shoe_cards[5]]


def test_a_camera_out_of_step_takes_over_without_dealing_its_reads_and_the_table_is_held():
    inputs = dealer_inputs(coups=3)
    shoe_cards = [x["card"] for x in inputs if x["kind"] == "card" and x["mode"] == "game"][:6]
    wrong = next(c for c in ("KS", "QH", "JD", "TC") if c not in shoe_cards)
    t, events = shoe_with_lagging_camera(inputs, 6, read_instead={4: wrong})
    assert t.ahead[CAMERA] == [wrong] and CAMERA in t.unsure  # a read that matches no card dealt
    step = t.feed({"kind": "link", "link": "lost", "source": SHOE})
    kinds = [e["kind"] for e in step.events]
    assert "device.fallback" in kinds and t.active_source == CAMERA
    assert not [e for e in step.events if e["kind"] == "card"]  # nothing it read is dealt unconfirmed
    held = [e for e in step.events if e["kind"] == "alarm" and e["alarm"] == "reader_out_of_step"]
    assert held and held[0]["active"] and wrong in held[0]["text"] and held[0]["source"] == CAMERA
    assert t.locked and "reader_out_of_step" in t.alarms and not t.card_due
    assert dealt_to_hands(events) == shoe_cards
    # The pit checks the layout and unlocks: the camera deals from there on.
    step = t.feed(PIT | {"cmd": "unlock"})
    assert [(e["alarm"], e["active"]) for e in step.events] == [("reader_out_of_step", False)] and not t.locked


def test_a_camera_back_in_step_deals_what_it_read_ahead_at_takeover():
    """A read that matched no card dealt makes the camera unsure only until a read matches again."""
    inputs = dealer_inputs(coups=3)
    game = [x for x in inputs if x["kind"] == "card" and x["mode"] == "game"]
    wrong = next(c for c in ("KS", "QH", "JD", "TC") if c not in [x["card"] for x in game[:8]])
    t, _ = shoe_with_lagging_camera(inputs, 5, read_instead={3: wrong})
    assert CAMERA in t.unsure
    t.feed({"kind": "card", "card": game[4]["card"], "source": CAMERA})  # the camera's late read of card 5
    t.feed({"kind": "card", "card": game[5]["card"], "source": CAMERA})  # card 6, seen before the shoe sends it
    assert CAMERA not in t.unsure and t.ahead[CAMERA] == [game[5]["card"]]
    step = t.feed({"kind": "link", "link": "lost", "source": SHOE})
    assert not t.locked and [e["card"] for e in step.events if e["kind"] == "card"] == [game[5]["card"]]


def camera_dealt_then_shoe_back(card="7H", after=("7H", "2C"), shoe_item=lambda item: item, hello=None):
    """Coup 1 dealt by the shoe; the shoe's link is lost; the camera deals `card`, the first card of
    coup 2; the shoe comes back (saying `hello` first, if given) and deals `after`, the camera
    reading each card after the shoe."""
    t, events = table(), []
    seq = 0
    for item in dealer_inputs(coups=1):
        if item["kind"] == "card":
            seq += 1
            item = shoe_item(dict(item, source=SHOE, shoe_seq=seq, detail={"boot": 7}))
        events += t.feed(item).events
    events += t.feed({"kind": "link", "link": "lost", "source": SHOE}).events
    events += t.feed({"kind": "card", "card": card, "source": CAMERA, "confidence": 0.99}).events
    events += t.feed({"kind": "link", "link": "restored", "source": SHOE}).events
    if hello is not None:
        events += t.feed({"kind": "hello", "source": SHOE, "detail": hello}).events
    for c in after:
        seq += 1
        events += t.feed(shoe_item({"kind": "card", "card": c, "source": SHOE, "mode": "game",
                                    "shoe_seq": seq, "detail": {"boot": (hello or {}).get("boot", 7)}})).events
        events += t.feed({"kind": "card", "card": c, "source": CAMERA, "confidence": 0.99}).events
    return t, events


def without_frame_numbers(item):
    return {k: v for k, v in item.items() if k not in ("shoe_seq", "detail")}


def test_a_shoe_without_numbered_frames_never_repeats_so_a_second_copy_of_the_camera_s_card_is_dealt():
    # A Bee-Tek shoe: no sequence numbers, no backlog. The first card out of it after its return is
    # another 7H (a multi-deck shoe holds six): dealt, not dropped as a repeat.
    t, events = camera_dealt_then_shoe_back(shoe_item=without_frame_numbers)
    assert not [e for e in events if e["kind"] == "card.duplicate"]
    assert [str(c) for c in t.coup.player + t.coup.banker] == ["7H", "2C", "7H"]
    assert [(e["card"], e["source"]) for e in events if e["kind"] == "card" and e["coup"] == 2] == [
        ("7H", CAMERA), ("7H", SHOE), ("2C", SHOE)]
    assert not [e for e in events if e["kind"] in ("alarm", "misdeal")] and not t.locked


def test_a_numbered_shoe_that_restarted_repeats_nothing_so_a_second_copy_is_dealt():
    # A new boot: the shoe's queue of the old session is gone; its next 7H is another card.
    t, events = camera_dealt_then_shoe_back(hello={"vendor": "acme", "serial": "1", "boot": 8})
    assert not [e for e in events if e["kind"] == "card.duplicate"]
    assert [str(c) for c in t.coup.player + t.coup.banker] == ["7H", "2C", "7H"]
    assert not t.locked and t.behind.get(SHOE) == []


def test_a_numbered_shoe_back_in_the_same_session_repeats_the_camera_s_card_once():
    t, events = camera_dealt_then_shoe_back(after=("7H", "2C", "9D"),
                                            hello={"vendor": "acme", "serial": "1", "boot": 7})
    assert [(e["card"], e["source"]) for e in events if e["kind"] == "card.duplicate"] == [("7H", SHOE)]
    assert [str(c) for c in t.coup.player + t.coup.banker] == ["7H", "9D", "2C"]
    assert not t.locked


def test_a_numbered_shoe_that_repeats_another_card_than_the_camera_dealt_holds_the_table():
    # The camera dealt 7H; the shoe's queue says that card was 7D: one of the readers misread it.
    t, events = camera_dealt_then_shoe_back(after=("7D", "2C"))
    held = [e for e in events if e["kind"] == "alarm" and e["alarm"] == "reader_out_of_step"]
    assert held and "7D" in held[0]["text"] and "7H" in held[0]["text"] and t.locked
    assert [(e["card"], e["source"]) for e in events if e["kind"] == "card" and e["coup"] == 2][:1] == [
        ("7H", CAMERA)]
    assert not [e for e in events if e["kind"] == "card" and e["card"] == "7D"]  # not dealt a second time


def test_handover_holds_and_repeats_follow_the_schema():
    from shoed.table.events import validate

    _, events = camera_dealt_then_shoe_back(after=("7D", "2C"))
    _, more = camera_dealt_then_shoe_back(hello={"vendor": "acme", "serial": "1", "boot": 7})
    for e in events + more:
        validate(e)
