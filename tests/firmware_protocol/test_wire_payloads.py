"""Payload layouts of SPEC.md §5, written out by hand from the document, one table row per message.

The expected bytes here come from reading the SPEC's tables, not from the
codec: the header (§3.1) is version 01, type, seq LE; the CRC is zlib's.
"""

from __future__ import annotations

import struct
import zlib

import pytest

from firmware_protocol import EncodeError, codec, decode, encode
from firmware_protocol import messages as m


def content(type_id: int, seq: int, payload: str) -> bytes:
    body = bytes([0x01, type_id]) + struct.pack("<H", seq) + bytes.fromhex(payload)
    return body + struct.pack("<I", zlib.crc32(body))


# (SPEC section, message, type, payload hex as the table lays it out)
LAYOUTS = [
    ("§5.2 hello: major, minor, boot u32 LE, four u8-length UTF-8 strings",
     m.Hello(seq=3, major=1, minor=2, boot=0x01020304, vendor="Ab", model="", serial="\u00e9", firmware="9"),
     0x01, "01 02 04030201 02 4162 00 02 c3a9 01 39"),
    ("§5.3 card: rank, suit, confidence, mode, flags", m.CardRead(seq=0x1234, rank=12, suit=2, confidence=7),
     0x10, "0c 02 07 00 00"),
    ("§5.3 card: faced is flags bit 0; burn is mode 1",
     m.CardRead(seq=1, rank=1, suit=3, confidence=255, faced=True, mode=m.MODE_BURN), 0x10, "01 03 ff 01 01"),
    ("§5.4 unreadable: mode, reason", m.Unreadable(seq=2, mode=m.MODE_BURN, reason=m.UNREADABLE_DOUBLE_FEED),
     0x11, "01 03"),
    ("§5.5 button: banker stand is 5", m.Button(seq=2, button=m.BUTTON_BANKER_STAND), 0x20, "05"),
    ("§5.6 cut card: empty", m.CutCard(seq=9), 0x21, ""),
    ("§5.6 shoe removed: empty", m.ShoeRemoved(seq=9), 0x22, ""),
    ("§5.6 shoe inserted: empty", m.ShoeInserted(seq=9), 0x23, ""),
    ("§5.7 tamper: source, active", m.Tamper(seq=4, source=m.TAMPER_CASE, active=False), 0x24, "02 00"),
    ("§5.8 alarm: code u16 LE, text", m.Alarm(seq=4, code=0xBEEF, text="E3"), 0x30, "efbe 02 4533"),
    ("§5.9 heartbeat: uptime u32 LE, unacked u16 LE", m.Heartbeat(seq=7, uptime_ms=0x01020304, unacked=2),
     0x40, "04030201 0200"),
    ("§5.10 status: flags (gate, shoe, lid), unacked, utc_ms u64 LE",
     m.Status(seq=7, gate_locked=False, shoe_present=True, lid_closed=False, unacked=0x0102, utc_ms=0x0102030405),
     0x41, "02 0201 0504030201000000"),
    ("§5.11 ack: u16 LE", m.Ack(ack=0xFFFE), 0x80, "feff"),
    ("§5.12 gate: bool", m.Gate(locked=False), 0x81, "00"),
    ("§5.13 set time: u64 LE", m.SetTime(utc_ms=1), 0x82, "0100000000000000"),
    ("§5.14 status request: empty", m.StatusRequest(), 0x83, ""),
    ("§5.16 shuffle started: shuffle u32 LE, decks", m.ShuffleStarted(seq=1, shuffle=0x0A0B0C0D, decks=6),
     0x50, "0d0c0b0a 06"),
    ("§5.17 deck check: shuffle, deck, present u16, unreadable, four card lists (suit << 4 | rank)",
     m.DeckCheck(seq=2, shuffle=1, deck=2, present=0x0133, unreadable=4, missing=("AC", "KS"), extra=(),
                 foreign=("TD",), face_reversed=("QH", "2D", "3S")),
     0x51, "01000000 02 3301 04 02 01 3d 00 01 1a 03 2c 12 33"),
    ("§5.18 order chunk: shuffle, position u16, card list", m.OrderChunk(seq=3, shuffle=2, position=0x0102,
                                                                         cards=("9C", "JH")),
     0x52, "02000000 0201 02 09 2b"),
    ("§5.19 shuffle completed: shuffle, shoe u32, cards u16, SHA-256",
     m.ShuffleCompleted(seq=4, shuffle=3, shoe=0x11223344, cards=416, digest="ab" * 32),
     0x53, "03000000 44332211 a001" + "ab" * 32),
    ("§5.20 shuffler error: shuffle, fault, active, code u16, text",
     m.ShufflerError(seq=5, shuffle=0, fault=m.SHUFFLER_DOOR, active=False, code=0x0102, text="ok"),
     0x54, "00000000 02 00 0201 02 6f6b"),
    ("§5.21 meters: five u32 LE", m.Meters(seq=6, shuffles=1, cards=2, jams=3, door_opens=4, recognition_faults=5),
     0x55, "01000000 02000000 03000000 04000000 05000000"),
    ("§5.22 draw: mode, trigger", m.Draw(seq=7, mode=m.MODE_BURN, trigger=m.DRAW_BUTTON), 0x12, "01 02"),
]


@pytest.mark.parametrize(("section", "msg", "type_id", "payload"), LAYOUTS, ids=[row[0] for row in LAYOUTS])
def test_payload_layout(section, msg, type_id, payload):
    want = content(type_id, msg.seq, payload.replace(" ", ""))
    assert codec.frame_content(msg) == want
    frame = encode(msg)
    assert codec.cobs_decode(frame[:-1]) == want and frame[-1] == 0
    assert decode(frame) == (len(frame), msg)


def test_every_message_type_has_a_layout_row():
    assert {type(row[1]) for row in LAYOUTS} == set(m.MESSAGE_TYPES.values())


# (SPEC section, message that must not go on the wire, words the error names)
UNSENDABLE = [
    ("§5.3 rank 0", m.CardRead(rank=0), "rank"),
    ("§5.3 rank 14", m.CardRead(rank=14), "rank"),
    ("§5.3 suit 4", m.CardRead(suit=4), "suit"),
    ("§5.3 mode 2", m.CardRead(mode=2), "mode"),
    ("§5.3 confidence 256", m.CardRead(confidence=256), "confidence"),
    ("§5.3 faced is a bool", m.CardRead(faced=1), "faced"),
    ("§3.1 seq 65536", m.CardRead(seq=65536), "seq"),
    ("§3.1 seq -1", m.Heartbeat(seq=-1), "seq"),
    ("§5.2 vendor of 65 bytes", m.Hello(vendor="v" * 65), "vendor"),
    ("§5.2 firmware of 33 two-byte characters", m.Hello(firmware="\u00e9" * 33), "firmware"),
    ("§5.2 boot above 32 bits", m.Hello(boot=1 << 32), "boot"),
    ("§5.2 text that is not Unicode", m.Hello(serial="\ud800"), "serial"),
    ("§5.4 reason 0", m.Unreadable(reason=0), "reason"),
    ("§5.5 button 8", m.Button(button=8), "button"),
    ("§5.7 tamper source 0", m.Tamper(source=0), "source"),
    ("§5.8 alarm text of 256 bytes", m.Alarm(text="t" * 256), "text"),
    ("§5.8 alarm code above 16 bits", m.Alarm(code=0x10000), "code"),
    ("§5.9 unacked above 16 bits", m.Heartbeat(unacked=0x10000), "unacked"),
    ("§5.10 utc_ms negative", m.Status(utc_ms=-1), "utc_ms"),
    ("§5.11 ack above 16 bits", m.Ack(ack=70000), "ack"),
    ("§5.12 locked is a bool", m.Gate(locked="yes"), "locked"),
    ("§5.13 utc_ms above 64 bits", m.SetTime(utc_ms=1 << 64), "utc_ms"),
    ("§5.16 decks 0", m.ShuffleStarted(decks=0), "decks"),
    ("§5.16 decks 17", m.ShuffleStarted(decks=17), "decks"),
    ("§5.17 deck 0", m.DeckCheck(deck=0), "deck"),
    ("§5.17 65 missing cards", m.DeckCheck(missing=("AC",) * 65), "missing"),
    ("§5.17 not a card", m.DeckCheck(foreign=("1X",)), "foreign"),
    ("§5.18 a chunk without cards", m.OrderChunk(cards=()), "cards"),
    ("§5.18 256 cards in one chunk", m.OrderChunk(cards=("AC",) * 256), "cards"),
    ("§5.19 digest of 31 bytes", m.ShuffleCompleted(digest="ab" * 31), "digest"),
    ("§5.19 digest in upper case", m.ShuffleCompleted(digest="AB" * 32), "digest"),
    ("§5.20 fault 0", m.ShufflerError(fault=0), "fault"),
    ("§5.20 text of 201 bytes", m.ShufflerError(text="t" * 201), "text"),
    ("§5.21 meter above 32 bits", m.Meters(cards=1 << 32), "cards"),
    ("§5.22 draw mode 2", m.Draw(mode=2), "mode"),
    ("§5.22 draw trigger 0", m.Draw(trigger=0), "trigger"),
]


@pytest.mark.parametrize(("section", "msg", "field"), UNSENDABLE, ids=[row[0] for row in UNSENDABLE])
def test_invalid_message_is_not_encoded(section, msg, field):
    with pytest.raises(EncodeError, match=field):
        encode(msg)


def test_a_value_that_is_not_a_message_is_not_encoded():
    with pytest.raises(EncodeError, match="not a message"):
        encode(m.Message())
    with pytest.raises(EncodeError):
        encode("card")  # type: ignore[arg-type]
