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


def test_forged_frames_under_one_seq_are_said_once_and_kept_bounded():
    # A CardRead ignores its flag bits and trailing bytes: frames under one seq are countless.
    from shoed.drivers.native_session import TAKEN_KEPT

    h = Host()
    h.start()
    h.feed(card(1, rank=10, suit=2))
    said = [r.kind for rank in range(1, 14) for suit in range(4) if (rank, suit) != (10, 2)
            for r in h.feed(card(1, rank=rank, suit=suit))]
    assert said == ["forged_frame"]
    assert len(h.session._forged_said) <= TAKEN_KEPT


def test_another_shoe_on_the_same_boot_number_is_a_new_session_its_cards_taken():
    # An unseeded shoe says boot 0 like the one before it: its seqs 1, 2... are its own, not repeats.
    h = Host()
    h.start()
    assert [r.kind for r in h.feed(card(1, rank=10), card(2, rank=3))] == ["card", "card"]
    other = m.Hello(seq=0, major=1, minor=0, vendor="Other", model="CR-8", serial="SN2", firmware="1", boot=BOOT)
    h.feed(other, m.Heartbeat(seq=0, unacked=0), advance=1.5)
    assert [(r.kind, r.card) for r in h.feed(card(1, rank=5))] == [("card", "5D")]


def _intact(type_id: int, seq: int, payload: bytes) -> bytes:
    """A frame with a right CRC around any content (a hostile shoe computes CRCs as well as a real one)."""
    import struct
    import zlib

    from firmware_protocol.codec import cobs_encode

    body = struct.pack("<BBH", 1, type_id, seq) + payload
    return cobs_encode(body + struct.pack("<I", zlib.crc32(body))) + b"\0"


def test_intact_frames_of_no_known_type_are_said_once_a_type():
    # Each frame a new seq and new bytes: before, each was its own warning (and journal record).
    h = Host()
    h.start()
    said = h.feed(raw=b"".join(_intact(0x7E, seq, bytes([seq & 0xFF])) for seq in range(1, 2000)))
    assert [(r.kind, r.code) for r in said] == [("warning", "frame_rejected")]
    assert len(h.feed(raw=_intact(0x7D, 5, b""))) == 1  # another type: said


def test_impossible_frames_are_said_once_a_seq_and_a_few_in_all_until_a_message_is_taken():
    from shoed.drivers.native_session import FAULTS_SAID

    h = Host()
    h.start()
    bad = [_intact(m.CardRead.TYPE, 1, bytes([99, 9, 255, 0])), _intact(m.CardRead.TYPE, 1, bytes([98, 9, 255, 0]))]
    said = h.feed(raw=b"".join(bad * 500))  # two impossible frames under one seq, alternating
    assert [(r.kind, r.code) for r in said] == [("alarm", "firmware_fault")]
    many = h.feed(raw=b"".join(_intact(m.CardRead.TYPE, seq, bytes([99, 9, 255, 0])) for seq in range(2, 500)))
    assert len(many) == FAULTS_SAID - 1
    assert [r.kind for r in h.feed(card(1, rank=4))] == ["card"]  # taken: faults are said again
    assert len(h.feed(raw=bad[0])) == 1 and len(h.feed(raw=bad[1])) == 0
