"""What the host's protocol end (NativeSession) does with a stream someone else writes on
(docs/stream-integrity.md): a repeat is compared with the bytes taken under its seq, a card
below the confidence floor is unreadable, a Hello naming another shoe is reported. Exact:
the session reads no clock. The same on a real pty: tests/reliability/test_stream_integrity.py.
"""

from __future__ import annotations

import pytest

from firmware_protocol import encode
from firmware_protocol import messages as m
from shoed.drivers.native import host_hello
from shoed.drivers.native_session import DEFAULT_CONFIDENCE_FLOOR, NativeSession
from tests.drivers.test_native_session import BOOT, UTC, Host, card, shoe_hello


def test_a_different_frame_under_a_seq_already_taken_is_a_forged_frame_once():
    h = Host()
    h.start()
    taken = h.feed(card(1, rank=10, suit=2))
    assert [r.kind for r in taken] == ["card"]
    forged = h.feed(card(1, rank=1, suit=2))
    assert [r.kind for r in forged] == ["forged_frame"]
    reading = forged[0]
    assert reading.raw == encode(card(1, rank=1, suit=2)) and reading.shoe_seq is None
    assert reading.detail == {"seq": 1, "boot": BOOT, "taken": encode(card(1, rank=10, suit=2)).hex()}
    assert h.feed(card(1, rank=1, suit=2)) == [], "said once per frame"
    assert h.feed(card(1, rank=10, suit=2)) == [], "the shoe's own repeat is a plain duplicate"
    assert h.session.stats.duplicates == 3


def test_after_a_restart_the_repeat_is_compared_with_the_journaled_bytes():
    session = NativeSession("native:test", host_hello("t", boot=42))
    session.restore(7, BOOT, encode(card(7, rank=5)))
    session.link_up(0, 0, UTC)
    readings, _ = session.receive(encode(shoe_hello()) + encode(card(7, rank=5)) + encode(card(7, rank=6)), 1, UTC)
    assert [r.kind for r in readings] == ["hello", "forged_frame"]


def test_a_new_boot_forgets_the_frames_of_the_old_one():
    h = Host()
    h.start()
    h.feed(card(1, rank=10))
    h.feed(shoe_hello(boot=BOOT + 1, seq=0), m.Heartbeat(seq=0, unacked=0))
    assert [r.kind for r in h.feed(card(1, rank=3))] == ["card"]


@pytest.mark.parametrize(("confidence", "kind"), [(0, "unreadable"), (127, "unreadable"), (128, "card"), (255, "card")])
def test_the_confidence_floor(confidence, kind):
    assert DEFAULT_CONFIDENCE_FLOOR == 0.5
    h = Host()
    h.start()
    (reading,) = h.feed(m.CardRead(seq=1, rank=13, suit=0, confidence=confidence, mode=m.MODE_GAME))
    assert reading.kind == kind and reading.confidence == confidence / 255
    if kind == "unreadable":
        assert reading.code == "low_confidence" and reading.card is None and reading.shoe_seq == 1


def test_the_floor_is_configurable_and_checked():
    session = NativeSession("native:test", host_hello("t"), confidence_floor=1.0)
    assert session.confidence_floor == 1.0
    with pytest.raises(ValueError, match="between 0 and 1"):
        NativeSession("native:test", host_hello("t"), confidence_floor=2)


def test_a_hello_naming_another_shoe_on_the_same_boot_is_reported():
    h = Host()
    h.start()
    assert h.feed(shoe_hello(), advance=1.5) == [], "the same shoe repeating its Hello: nothing new"
    other = m.Hello(seq=0, major=1, minor=0, vendor="Other", model="CR-8", serial="SN2", firmware="1", boot=BOOT)
    (reading,) = h.feed(other, advance=1.5)
    assert reading.kind == "hello" and reading.detail["vendor"] == "Other" and reading.detail["serial"] == "SN2"
