"""Topics and event checks on the wire (shoed.net.wire).

The topic scheme is what lets a display subscribe by prefix
(table-game-standards item 16: every event carries table and seq).
"""

from __future__ import annotations

import pytest

from shoed.net import wire

# (table, kind, topic)
TOPICS = [
    ("t1", "card", "t1.card"),
    ("t1", "card.dealt", "t1.card"),
    ("t1", "card_dealt", "t1.card"),
    ("t1", "coup.result", "t1.coup"),
    ("t1", "coup-opened", "t1.coup"),
    ("t1", "shoe.opened", "t1.shoe"),
    ("t1", "device.lost", "t1.device"),
    ("t1", "misdeal", "t1.misdeal"),
    ("t1", "alarm.tamper", "t1.alarm"),
    ("t1", "heartbeat", "t1.heartbeat"),
    ("MACAU-07", "coup.void", "MACAU-07.coup"),
]


@pytest.mark.parametrize(("table", "kind", "topic"), TOPICS)
def test_topic_is_table_dot_first_word_of_kind(table, kind, topic):
    assert wire.topic_for(table, kind) == topic


def test_every_kind_of_the_event_schema_has_a_known_topic_group():
    import inspect

    import msgspec

    from shoed.table import events

    kinds = {
        cls.__struct_config__.tag
        for _, cls in inspect.getmembers(events, inspect.isclass)
        if issubclass(cls, msgspec.Struct) and isinstance(cls.__struct_config__.tag, str) and cls is not events.Base
    }
    assert len(kinds) > 10
    for kind in kinds:
        assert wire.group_of(kind) in wire.GROUPS, kind


@pytest.mark.parametrize("kind", ["", "Card", "card..dealt", ".card", "card.", "card dealt", None, 7, "9card"])
def test_malformed_kinds_are_refused(kind):
    with pytest.raises(wire.WireError):
        wire.group_of(kind)


@pytest.mark.parametrize("table", ["", "t.1", "t 1", "ü", "-t", "x" * 65, None])
def test_table_ids_are_one_topic_word(table):
    with pytest.raises(wire.WireError):
        wire.check_table_id(table)


# (event, why it is refused)
BAD_EVENTS = [
    ([1, 2], "a dict"),
    ({"table": "t2", "seq": 1, "kind": "card"}, "table"),
    ({"table": "t1", "kind": "card"}, "seq"),
    ({"table": "t1", "seq": "1", "kind": "card"}, "seq"),
    ({"table": "t1", "seq": True, "kind": "card"}, "seq"),
    ({"table": "t1", "seq": -1, "kind": "card"}, "seq"),
    ({"table": "t1", "seq": 1}, "kind"),
]


@pytest.mark.parametrize(("event", "why"), BAD_EVENTS)
def test_check_event_refuses(event, why):
    with pytest.raises(wire.WireError, match=why):
        wire.check_event(event, "t1")


def test_check_event_returns_seq():
    assert wire.check_event({"table": "t1", "seq": 42, "kind": "coup.result"}, "t1") == 42


# (topic, payload, why a subscriber drops it)
BAD_MESSAGES = [
    (b"t1.card", b"{not json", "not JSON"),
    (b"t1.card", b"[1]", "not a JSON object"),
    (b"t1.card", b'{"table":"t1","seq":"3","kind":"card"}', "seq"),
    (b"t1.card", b'{"table":"t2","seq":3,"kind":"card"}', "table"),
    (b"t1.coup", b'{"table":"t1","seq":3,"kind":"card"}', "topic"),
    (b"t1.card", b'{"table":"t1","seq":3,"kind":"Card"}', "kind"),
]


@pytest.mark.parametrize(("topic", "payload", "why"), BAD_MESSAGES)
def test_decode_event_refuses(topic, payload, why):
    with pytest.raises(wire.WireError, match=why):
        wire.decode_event(topic, payload, "t1")


def test_decode_event_accepts_heartbeat_without_seq():
    beat = wire.decode_event(b"t1.heartbeat", b'{"table":"t1","kind":"heartbeat","interval":1.0}', "t1")
    assert beat["kind"] == "heartbeat" and "seq" not in beat


# (frames read from a ROUTER, envelope, body)
ENVELOPES = [
    ([b"id", b"{}"], [b"id"], b"{}"),  # DEALER peer
    ([b"id", b"", b"{}"], [b"id", b""], b"{}"),  # REQ peer
    ([b"id"], [b"id"], None),
    ([b"id", b"a", b"b"], [b"id"], None),
    ([b"id", b"", b"a", b"b"], [b"id"], None),
]


@pytest.mark.parametrize(("frames", "envelope", "body"), ENVELOPES)
def test_split_envelope(frames, envelope, body):
    assert wire.split_envelope(frames) == (envelope, body)


@pytest.mark.parametrize(("body", "rid"), [
    (b'{"id": 7, "op": 3}', 7),
    (b'{"id": "abc"}', "abc"),
    (b'{"id": true}', None),
    (b'{"id": [1]}', None),
    (b'{"id": "' + b"x" * 200 + b'"}', None),
    (b"garbage", None),
])
def test_salvage_id(body, rid):
    assert wire.salvage_id(body) == rid
