"""Every published event and every heartbeat carries the journal's chain head (docs/witness.md).

The head is added on the wire only (`"journal": {"file", "jseq", "hash"}`), and
the event schema (`shoed schema`) says so: an event with it validates, one
with a malformed head does not.
"""

from __future__ import annotations

import json

import msgspec
import pytest
import zmq

from shoed.table.events import validate
from shoed.net import wire
from shoed.net.publisher import Publisher
from harness.processes import run_shoed

HEAD = {"file": 3, "jseq": 41, "hash": "f" * 64}
CARD = {"table": "t1", "seq": 7, "kind": "card", "card": "QH", "recipient": "banker", "mono_ns": 1,
        "utc": "2026-01-01T00:00:00Z"}


def _next(sub, kind: str) -> dict:
    while True:
        assert sub.poll(3000), f"no {kind} within 3 s"
        message = wire.decode(sub.recv_multipart()[1])
        if message["kind"] == kind:
            return message


def test_events_and_heartbeats_carry_the_journal_head(ctx):
    head = dict(HEAD)
    with Publisher(ctx, "tcp://127.0.0.1:*", "t1", journal_head=lambda: head) as pub:
        sub = ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.SUBSCRIBE, b"t1.")
        sub.connect(pub.endpoint)
        for _ in range(100):  # the subscription reaches the publisher
            pub.heartbeat()
            if sub.poll(50):
                break
        assert _next(sub, "heartbeat")["journal"] == HEAD
        event = dict(CARD)
        pub.publish(event)
        got = _next(sub, "card")
        assert got == {**CARD, "journal": HEAD}
        assert event == CARD  # the caller's event (the journaled one) is not changed
        head.update(jseq=42, hash="e" * 64)  # a record written after: the heartbeat says so
        pub.heartbeat()
        assert _next(sub, "heartbeat")["journal"] == {"file": 3, "jseq": 42, "hash": "e" * 64}
        sub.close(0)


def test_the_schema_carries_the_head():
    assert validate({**CARD, "journal": HEAD}).journal.jseq == 41
    with pytest.raises(msgspec.ValidationError):
        validate({**CARD, "journal": {"file": 3, "jseq": "41", "hash": "f"}})
    schema = json.loads(run_shoed("schema", check=True).stdout)
    assert "JournalHead" in json.dumps(schema) and "'journal'" in schema["description"]
