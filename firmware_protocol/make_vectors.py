"""Builds the protocol's test vectors (firmware_protocol/vectors/*.json) from named cases.

The cases are written here; the bytes come from the reference codec. Run
`python -m firmware_protocol.make_vectors` to rewrite the files after a
deliberate change (and say why in the commit), `--check` to verify that the
files on disk are what the codec produces. The tests run the check.

Files:
  frames.json   valid frames: {"name", "note", "hex", "content", "message"}; "canonical": false
                marks a frame a receiver must accept but a sender never produces.
  rejects.json  {"name", "note", "hex", "reject": true, "kind"}: must not yield a message.
  streams.json  {"name", "note", "hex", "items": [{"offset", "message"} | {"offset", "length", "reject", "kind"}]}
"""

from __future__ import annotations

import json
import struct
import sys
import zlib
from pathlib import Path

from firmware_protocol import codec
from firmware_protocol import messages as m

VECTORS_DIR = Path(__file__).with_name("vectors")


def _frame(content_wo_crc: bytes) -> bytes:
    """A frame around arbitrary content, with a correct CRC (to build invalid-but-intact frames)."""
    content = content_wo_crc + struct.pack("<I", zlib.crc32(content_wo_crc))
    return codec.cobs_encode(content) + b"\x00"


def _header(type_id: int, seq: int, version: int = 1) -> bytes:
    return struct.pack("<BBH", version, type_id, seq)


def _message_cases() -> list[tuple[str, str, m.Message]]:
    run = "E" * 255
    return [
        ("hello_shoe", "a shoe's Hello after power on", m.Hello(
            seq=0, major=1, minor=0, vendor="Acme Gaming", model="CR-8", serial="SN0001234", firmware="2.4.1",
            boot=0x5EED1234)),
        ("hello_host", "the host's Hello when it opens the link", m.Hello(
            seq=0, major=1, minor=0, vendor="shoed", model="table-daemon", serial="", firmware="0.1.0", boot=0)),
        ("hello_empty_strings", "every string empty", m.Hello(seq=1, minor=0, boot=1)),
        ("hello_longest_strings", "64 bytes of UTF-8 in each string (the maximum), multi-byte characters",
         m.Hello(seq=65535, major=1, minor=255, vendor="V" * 64, model="Macau-\u6fb3\u9580" + "m" * 52,
                 serial="0" * 64, firmware="\u00e9" * 32, boot=0xFFFFFFFF)),
        ("hello_newer_minor", "a shoe speaking 1.3: a 1.1 host answers 1.1 and both use 1.1", m.Hello(
            seq=17, major=1, minor=3, vendor="Acme Gaming", model="CR-9", serial="SN0009999", firmware="3.0.0",
            boot=0x00000100)),
        ("card_ten_diamonds", "TD, seq 5, confidence 250 (SPEC.md worked example)",
         m.CardRead(seq=5, rank=10, suit=1, confidence=250)),
        ("card_ace_clubs_seq0", "AC at seq 0: rank 1, suit 0 and seq 0 need stuffing",
         m.CardRead(seq=0, rank=1, suit=0, confidence=255)),
        ("card_king_spades_seq65535", "KS at seq 65535, the last before wrapping to 0",
         m.CardRead(seq=65535, rank=13, suit=3, confidence=255)),
        ("card_seq256", "seq 256 = 00 01 on the wire", m.CardRead(seq=256, rank=9, suit=2, confidence=200)),
        ("card_faced", "a card that came out face up (Macau statutory rules Art. IV: still valid)",
         m.CardRead(seq=12, rank=7, suit=2, confidence=255, faced=True)),
        ("card_burn", "a burnt card, read in burn mode", m.CardRead(seq=3, rank=8, suit=0, confidence=255,
                                                                    mode=m.MODE_BURN)),
        ("card_confidence_0", "the reader's lowest confidence", m.CardRead(seq=40, rank=12, suit=3, confidence=0)),
        ("unreadable_no_index", "a card passed, index not seen", m.Unreadable(seq=6, reason=m.UNREADABLE_NO_INDEX)),
        ("unreadable_low_confidence", "", m.Unreadable(seq=7, reason=m.UNREADABLE_LOW_CONFIDENCE)),
        ("unreadable_double_feed_burn", "two cards together while burning",
         m.Unreadable(seq=8, mode=m.MODE_BURN, reason=m.UNREADABLE_DOUBLE_FEED)),
        ("unreadable_vendor_reason", "a vendor-defined reason (accepted: the card is unreadable either way)",
         m.Unreadable(seq=9, reason=200)),
        *[(f"button_{name}", f"dealer button {code}", m.Button(seq=100 + code, button=code))
          for code, name in sorted(m.BUTTON_NAMES.items())],
        ("cut_card", "the cut card passed the reader", m.CutCard(seq=300)),
        ("shoe_removed", "", m.ShoeRemoved(seq=301)),
        ("shoe_inserted", "", m.ShoeInserted(seq=302)),
        ("tamper_lid_open", "", m.Tamper(seq=400, source=m.TAMPER_LID, active=True)),
        ("tamper_case_cleared", "", m.Tamper(seq=401, source=m.TAMPER_CASE, active=False)),
        ("tamper_vendor_source", "a vendor-defined sensor", m.Tamper(seq=402, source=200, active=True)),
        ("alarm_card_not_read", "", m.Alarm(seq=500, code=3, text="E3 Card Not Read")),
        ("alarm_empty_text", "", m.Alarm(seq=501, code=0, text="")),
        ("alarm_long_run", "255 bytes of text: a run of more than 254 non-zero bytes",
         m.Alarm(seq=0x0101, code=0x0303, text=run)),
        ("alarm_run_253", "a zero after exactly 253 non-zero bytes",
         m.Alarm(seq=0x0101, code=0, text="x" * 252 + "\x00" + "y" * 2)),
        ("alarm_run_254", "a zero after exactly 254 non-zero bytes (a full COBS block)",
         m.Alarm(seq=0x0101, code=0, text="x" * 253 + "\x00" + "y")),
        ("alarm_run_255", "a zero after exactly 255 non-zero bytes",
         m.Alarm(seq=0x0101, code=0, text="x" * 254 + "\x00")),
        ("alarm_zeros", "text of 200 NUL characters: a long run of zeros",
         m.Alarm(seq=0, code=0, text="\x00" * 200)),
        ("heartbeat_zero", "", m.Heartbeat(seq=0, uptime_ms=0, unacked=0)),
        ("heartbeat_max", "uptime about to wrap, the most unacknowledged messages a shoe may report (32767)",
         m.Heartbeat(seq=65535, uptime_ms=0xFFFFFFFF, unacked=32767)),
        ("heartbeat_shoe", "", m.Heartbeat(seq=42, uptime_ms=3_600_000, unacked=2)),
        ("status_all_set", "", m.Status(seq=42, gate_locked=True, shoe_present=True, lid_closed=True, unacked=0,
                                        utc_ms=1_717_243_200_123)),
        ("status_none_set", "clock unset", m.Status(seq=0, gate_locked=False, shoe_present=False, lid_closed=False,
                                                    unacked=3, utc_ms=0)),
        ("ack_0", "", m.Ack(seq=0, ack=0)),
        ("ack_5", "", m.Ack(seq=0, ack=5)),
        ("ack_65535", "", m.Ack(seq=0, ack=65535)),
        ("gate_lock", "", m.Gate(seq=0, locked=True)),
        ("gate_unlock", "", m.Gate(seq=0, locked=False)),
        ("set_time", "2024-06-01 12:00:00.123 UTC", m.SetTime(seq=0, utc_ms=1_717_243_200_123)),
        ("set_time_zero", "", m.SetTime(seq=0, utc_ms=0)),
        ("set_time_max", "", m.SetTime(seq=0, utc_ms=0xFFFFFFFFFFFFFFFF)),
        ("status_request", "", m.StatusRequest(seq=0)),
        *_shuffler_cases(),
    ]


# Protocol 1.1: a card-reading shuffler. The order of the example shuffle is fixed and public.
EXAMPLE_ORDER = ("7H", "KD", "4C", "AS", "TD", "2C", "QH", "9S")
EXAMPLE_SHUFFLE = 0x0000BEEF


def _shuffler_cases() -> list[tuple[str, str, m.Message]]:
    every_card = tuple(r + s for s in m.WIRE_SUITS for r in "A23456789TJQK")
    return [
        ("hello_shuffler", "a card-reading shuffler's Hello: it speaks 1.1", m.Hello(
            seq=0, major=1, minor=1, vendor="Acme Gaming", model="CS-8", serial="SH0000042", firmware="1.1.0",
            boot=0x0BADCAFE)),
        ("shuffle_started", "shuffle 0xBEEF of 8 decks", m.ShuffleStarted(seq=1, shuffle=EXAMPLE_SHUFFLE, decks=8)),
        ("shuffle_started_one_deck", "", m.ShuffleStarted(seq=2, shuffle=0xFFFFFFFF, decks=1)),
        ("deck_check_complete", "deck 1 complete: 52 present, every list empty",
         m.DeckCheck(seq=2, shuffle=EXAMPLE_SHUFFLE, deck=1, present=52)),
        ("deck_check_faults", "deck 3: the ace of spades missing, a foreign king of hearts, the two of clubs twice, "
         "the seven of diamonds face up, one card unreadable",
         m.DeckCheck(seq=3, shuffle=EXAMPLE_SHUFFLE, deck=3, present=52, unreadable=1, missing=("AS",),
                     extra=("2C",), foreign=("KH",), face_reversed=("7D",))),
        ("deck_check_longest", "64 cards in every list (the maximum)",
         m.DeckCheck(seq=4, shuffle=1, deck=16, present=0xFFFF, unreadable=255, missing=every_card[:52] + every_card[:12],
                     extra=every_card[-64:], foreign=("AC",) * 64, face_reversed=("KS",) * 64)),
        ("order_chunk", "the first eight cards of the example order",
         m.OrderChunk(seq=5, shuffle=EXAMPLE_SHUFFLE, position=0, cards=EXAMPLE_ORDER)),
        ("order_chunk_one_card", "one card at position 415, the last of 8 decks",
         m.OrderChunk(seq=6, shuffle=EXAMPLE_SHUFFLE, position=415, cards=("KS",))),
        ("order_chunk_longest", "255 cards (the maximum): a run of more than 254 non-zero bytes",
         m.OrderChunk(seq=256, shuffle=0x01010101, position=65280, cards=(every_card * 5)[:255])),
        ("shuffle_completed", "the example shuffle: 8 cards, digest of their bytes",
         m.ShuffleCompleted(seq=7, shuffle=EXAMPLE_SHUFFLE, shoe=42, cards=len(EXAMPLE_ORDER),
                            digest=m.order_digest(EXAMPLE_ORDER))),
        ("shuffle_completed_416", "a whole 8-deck shoe", m.ShuffleCompleted(
            seq=65535, shuffle=2, shoe=0xFFFFFFFF, cards=416, digest=m.order_digest(every_card * 8))),
        ("shuffler_error_jam", "a jam during the example shuffle", m.ShufflerError(
            seq=8, shuffle=EXAMPLE_SHUFFLE, fault=m.SHUFFLER_JAM, active=True, code=0x0101, text="E11 jam at elevator")),
        ("shuffler_error_jam_cleared", "", m.ShufflerError(
            seq=9, shuffle=EXAMPLE_SHUFFLE, fault=m.SHUFFLER_JAM, active=False, code=0x0101, text="")),
        ("shuffler_error_door", "the door opened between shuffles",
         m.ShufflerError(seq=10, shuffle=0, fault=m.SHUFFLER_DOOR, active=True, code=2, text="door open")),
        ("shuffler_error_recognition", "the card camera failed",
         m.ShufflerError(seq=11, shuffle=EXAMPLE_SHUFFLE, fault=m.SHUFFLER_RECOGNITION, active=True, code=3,
                         text="camera: no image")),
        ("shuffler_error_vendor", "a vendor-defined fault", m.ShufflerError(seq=12, fault=200, code=0xFFFF,
                                                                           text="\u00e9" * 100)),
        ("meters", "lifetime counters", m.Meters(seq=13, shuffles=1200, cards=499_200, jams=3, door_opens=17,
                                                 recognition_faults=1)),
        ("meters_zero", "", m.Meters(seq=0)),
        # A plain shoe, which reads no card: each card out is a draw, reliable like a card.
        ("draw_game_sensor", "a card left a plain shoe, seen by its sensor, in game mode",
         m.Draw(seq=14, mode=m.MODE_GAME, trigger=m.DRAW_SENSOR)),
        ("draw_burn_button", "the dealer pressed the draw button while burning",
         m.Draw(seq=15, mode=m.MODE_BURN, trigger=m.DRAW_BUTTON)),
        ("draw_vendor_trigger_seq0", "a vendor-defined trigger at seq 0", m.Draw(seq=0, trigger=200)),
    ]


def _noncanonical_cases() -> list[tuple[str, str, bytes, m.Message]]:
    card = m.CardRead(seq=21, rank=4, suit=3, confidence=255)
    body = _header(0x10, 21) + bytes((4, 3, 255, 0, 0))
    # A final 254-byte block followed by an empty block 0x01: not minimal, but it decodes to the same content.
    stuffed = None
    for seq in range(1, 65536):
        text = "z" * 249
        body_alarm = _header(0x30, seq) + struct.pack("<H", 0x0001) + bytes((len(text),)) + text.encode()
        content = body_alarm + struct.pack("<I", zlib.crc32(body_alarm))
        if b"\x00" not in content[-254:] and len(content) - content.rfind(b"\x00") - 1 == 254 and 0 in content:
            stuffed = (seq, text, content)
            break
    assert stuffed is not None
    seq, text, content = stuffed
    encoded = codec.cobs_encode(content)
    assert encoded[-255] == 0xFF
    return [
        ("card_extra_payload", "a later minor version appended a byte: receivers ignore what they do not know",
         _frame(body + b"\x7f"), card),
        ("card_reserved_flags", "reserved flag bits set: ignored (faced is bit 0 only)",
         _frame(_header(0x10, 21) + bytes((4, 3, 255, 0, 0xFE))), card),
        ("alarm_noncanonical_cobs", "an empty final COBS block after a full one: accepted",
         encoded + b"\x01\x00", m.Alarm(seq=seq, code=0x0001, text=text)),
    ]


def _reject_cases() -> list[tuple[str, str, bytes]]:
    card = codec.encode(m.CardRead(seq=5, rank=10, suit=1, confidence=250))
    card_content = codec.frame_content(m.CardRead(seq=5, rank=10, suit=1, confidence=250))
    flipped = bytearray(card)
    flipped[5] ^= 0x01  # the rank byte: TD would become JD
    bad_crc = bytearray(card_content)
    bad_crc[-1] ^= 0x80
    long_body = _header(0x30, 1) + struct.pack("<H", 1) + bytes((255,)) + b"a" * 255
    long_body += b"b" * (codec.MAX_FRAME - codec.CRC_SIZE + 1 - len(long_body))
    return [
        ("card_bit_flipped", "one bit flipped in the rank: TD must not become another card", bytes(flipped)),
        ("card_crc_wrong", "the CRC's last byte altered", codec.cobs_encode(bad_crc) + b"\x00"),
        ("card_truncated", "the first 8 bytes of a card frame, then a delimiter", card[:8] + b"\x00"),
        ("card_no_payload", "a card type with an empty payload (intact frame, firmware fault)", _frame(_header(0x10, 5))),
        ("card_short_payload", "four of the five payload bytes", _frame(_header(0x10, 5) + bytes((10, 1, 250, 0)))),
        ("card_rank_0", "", _frame(_header(0x10, 5) + bytes((0, 1, 250, 0, 0)))),
        ("card_rank_14", "", _frame(_header(0x10, 5) + bytes((14, 1, 250, 0, 0)))),
        ("card_suit_4", "", _frame(_header(0x10, 5) + bytes((10, 4, 250, 0, 0)))),
        ("card_mode_2", "", _frame(_header(0x10, 5) + bytes((10, 1, 250, 2, 0)))),
        ("unreadable_reason_0", "", _frame(_header(0x11, 5) + bytes((0, 0)))),
        ("unreadable_mode_2", "", _frame(_header(0x11, 5) + bytes((2, 1)))),
        ("button_0", "", _frame(_header(0x20, 5) + bytes((0,)))),
        ("button_8", "", _frame(_header(0x20, 5) + bytes((8,)))),
        ("tamper_source_0", "", _frame(_header(0x24, 5) + bytes((0, 1)))),
        ("tamper_active_2", "a boolean byte must be 0 or 1", _frame(_header(0x24, 5) + bytes((1, 2)))),
        ("gate_locked_2", "", _frame(_header(0x81, 0) + bytes((2,)))),
        ("hello_bad_utf8", "vendor bytes are not UTF-8",
         _frame(_header(0x01, 0) + bytes((1, 0)) + bytes(4) + b"\x02\xff\xfe" + bytes(3))),
        ("hello_line_break", "serial holds a line break: a hello's strings are one line of printable text",
         _frame(_header(0x01, 0) + bytes((1, 1)) + bytes(4) + b"\x04Acme\x00\x04SN\n1\x00")),
        ("hello_string_overrun", "vendor length 9 with 3 bytes left",
         _frame(_header(0x01, 0) + bytes((1, 0)) + bytes(4) + b"\x09abc")),
        ("hello_string_65", "a vendor of 65 bytes: at most 64",
         _frame(_header(0x01, 0) + bytes((1, 1)) + bytes(4) + b"\x41" + b"V" * 65 + b"\x04CR-8\x03SN1\x011")),
        ("hello_format_character", "serial holds U+202E RIGHT-TO-LEFT OVERRIDE: not printable",
         _frame(_header(0x01, 0) + bytes((1, 1)) + bytes(4) + b"\x04Acme\x00\x06SN\xe2\x80\xae1\x00")),
        ("heartbeat_unacked_32768", "more unacknowledged messages than a shoe may hold (at most 32767)",
         _frame(_header(0x40, 40000) + struct.pack("<IH", 1000, 32768))),
        ("status_unacked_65535", "", _frame(_header(0x41, 3) + struct.pack("<BHQ", 0, 65535, 0))),
        ("alarm_text_overrun", "", _frame(_header(0x30, 5) + struct.pack("<H", 3) + b"\x05E3")),
        ("unknown_type_0x7f", "intact frame of a type protocol 1.0 does not define: ignored and counted",
         _frame(_header(0x7F, 9) + b"\x01\x02")),
        ("unknown_type_0x00", "", _frame(_header(0x00, 9))),
        ("version_2", "intact frame of protocol major version 2", _frame(_header(0x10, 5, version=2)
                                                                        + bytes((10, 1, 250, 0, 0)))),
        ("version_0", "", _frame(_header(0x40, 5, version=0) + bytes(6))),
        ("frame_too_short", "seven bytes of content: less than header and CRC",
         codec.cobs_encode(b"\x01\x40\x00\x00\x01\x02\x03") + b"\x00"),
        ("frame_too_long", f"{codec.MAX_FRAME + 1} bytes of content with a correct CRC", _frame(long_body)),
        ("cobs_overrun", "the first code byte points past the delimiter", b"\x09\x01\x10\x05\x00"),
        ("shuffle_started_decks_0", "", _frame(_header(0x50, 5) + struct.pack("<IB", 1, 0))),
        ("shuffle_started_decks_17", "", _frame(_header(0x50, 5) + struct.pack("<IB", 1, 17))),
        ("deck_check_deck_0", "", _frame(_header(0x51, 5) + struct.pack("<IBHB", 1, 0, 52, 0) + bytes(4))),
        ("deck_check_deck_17", "", _frame(_header(0x51, 5) + struct.pack("<IBHB", 1, 17, 52, 0) + bytes(4))),
        ("deck_check_rank_0", "a missing card of rank 0", _frame(_header(0x51, 5) + struct.pack("<IBHB", 1, 1, 51, 0)
                                                                  + bytes((1, 0x30, 0, 0, 0)))),
        ("deck_check_rank_14", "", _frame(_header(0x51, 5) + struct.pack("<IBHB", 1, 1, 51, 0)
                                          + bytes((1, 0x0E, 0, 0, 0)))),
        ("deck_check_list_overrun", "five extra cards announced, two bytes left",
         _frame(_header(0x51, 5) + struct.pack("<IBHB", 1, 1, 52, 0) + bytes((0, 5, 0x01, 0x02)))),
        ("deck_check_list_65", "65 foreign cards: more than a list holds",
         _frame(_header(0x51, 5) + struct.pack("<IBHB", 1, 1, 52, 0) + bytes((0, 0, 65)) + bytes((1,)) * 65
                + bytes((0,)))),
        ("order_chunk_empty", "a chunk without cards", _frame(_header(0x52, 5) + struct.pack("<IH", 1, 0) + b"\x00")),
        ("order_chunk_rank_13_plus", "a card byte of rank 15", _frame(_header(0x52, 5) + struct.pack("<IH", 1, 0)
                                                                     + bytes((2, 0x01, 0x0F)))),
        ("order_chunk_rank_0", "a card byte of rank 0", _frame(_header(0x52, 5) + struct.pack("<IH", 1, 0)
                                                              + bytes((2, 0x01, 0x20)))),
        ("order_chunk_past_65535", "two cards from position 65535",
         _frame(_header(0x52, 5) + struct.pack("<IH", 1, 65535) + bytes((2, 0x01, 0x02)))),
        ("shuffle_completed_short", "a digest of 31 bytes",
         _frame(_header(0x53, 5) + struct.pack("<IIH", 1, 1, 8) + bytes(range(1, 32)))),
        ("shuffler_error_fault_0", "", _frame(_header(0x54, 5) + struct.pack("<IBBH", 1, 0, 1, 0) + b"\x00")),
        ("shuffler_error_text_201", "a text of 201 bytes: at most 200",
         _frame(_header(0x54, 5) + struct.pack("<IBBH", 1, 1, 1, 0) + bytes((201,)) + b"t" * 201)),
        ("shuffler_error_active_2", "", _frame(_header(0x54, 5) + struct.pack("<IBBH", 1, 1, 2, 0) + b"\x00")),
        ("meters_short", "four of the five counters", _frame(_header(0x55, 5) + bytes(16))),
        ("draw_trigger_0", "", _frame(_header(0x12, 5) + bytes((0, 0)))),
        ("draw_mode_2", "", _frame(_header(0x12, 5) + bytes((2, 1)))),
        ("draw_short", "the mode without its trigger", _frame(_header(0x12, 5) + bytes((0,)))),
        ("noise", "line noise up to a zero", bytes.fromhex("5a a5 ff 13 37 c0 de 42 99 00".replace(" ", ""))),
    ]


def _stream_cases() -> list[tuple[str, str, bytes]]:
    a = codec.encode(m.CardRead(seq=5, rank=10, suit=1, confidence=250))
    b = codec.encode(m.CardRead(seq=6, rank=1, suit=0, confidence=255))
    hb = codec.encode(m.Heartbeat(seq=6, uptime_ms=1000, unacked=1))
    lost_delimiter = a[:-1] + b"\x55"
    corrupt = bytearray(a)
    corrupt[6] ^= 0x10
    return [
        ("two_frames", "back to back", a + b),
        ("idle_delimiters", "extra zeros before, between and after frames are idle fill, not errors",
         b"\x00\x00" + a + b"\x00\x00\x00" + b + b"\x00"),
        ("garbage_then_frame", "line noise with no delimiter right before a frame: the frame is found",
         bytes.fromhex("deadbeef") + a),
        ("truncated_then_frame", "a frame cut off (the shoe reset mid-frame), then the next frame",
         a[:7] + b),
        ("lost_delimiter", ("a frame whose delimiter was corrupted: it is lost (the shoe repeats it), "
                            "the next frame is decoded"), lost_delimiter + b),
        ("corrupt_then_frame", "a frame with a flipped bit, then a good frame", bytes(corrupt) + b + hb),
        ("shuffle_dialogue", "a shuffler's reliable messages for one shuffle, back to back",
         b"".join(codec.encode(msg) for msg in _shuffle_dialogue())),
        ("plain_shoe_coup", "a plain shoe's burn and first coup: draws and the dealer's buttons, back to back",
         b"".join(codec.encode(msg) for msg in _plain_coup())),
        ("overflow_then_frame", f"{3 * codec.MAX_WIRE} bytes without a delimiter, then a frame",
         b"\x41" * (3 * codec.MAX_WIRE) + a),
    ]


def _shuffle_dialogue() -> list[m.Message]:
    """One whole shuffle of the example order, as a shuffler sends it (SPEC.md §12.13)."""
    return [
        m.ShuffleStarted(seq=1, shuffle=EXAMPLE_SHUFFLE, decks=1),
        m.DeckCheck(seq=2, shuffle=EXAMPLE_SHUFFLE, deck=1, present=8, missing=()),
        m.OrderChunk(seq=3, shuffle=EXAMPLE_SHUFFLE, position=0, cards=EXAMPLE_ORDER[:5]),
        m.OrderChunk(seq=4, shuffle=EXAMPLE_SHUFFLE, position=5, cards=EXAMPLE_ORDER[5:]),
        m.ShuffleCompleted(seq=5, shuffle=EXAMPLE_SHUFFLE, shoe=42, cards=len(EXAMPLE_ORDER),
                           digest=m.order_digest(EXAMPLE_ORDER)),
        m.Meters(seq=6, shuffles=1, cards=8),
    ]


def _plain_coup() -> list[m.Message]:
    """A plain shoe's first reliable messages for a shoe (SPEC.md §12.15): the magazine in, the exposed
    card and its burns, then four cards of a coup and the confirm."""
    return [
        m.ShoeInserted(seq=1),
        m.Button(seq=2, button=m.BUTTON_BURN_START),
        *(m.Draw(seq=seq, mode=m.MODE_BURN) for seq in range(3, 6)),
        m.Button(seq=6, button=m.BUTTON_BURN_END),
        *(m.Draw(seq=seq) for seq in range(7, 11)),
        m.Button(seq=11, button=m.BUTTON_CONFIRM),
    ]


def frame_vectors() -> list[dict]:
    out: list[dict[str, object]] = []
    for name, note, msg in _message_cases():
        out.append({"name": name, "note": note, "hex": codec.encode(msg).hex(),
                    "content": codec.frame_content(msg).hex(), "message": codec.to_json(msg)})
    for name, note, frame, msg in _noncanonical_cases():
        out.append({"name": name, "note": note, "hex": frame.hex(), "canonical": False,
                    "content": (codec.cobs_decode(frame[:-1]) or b"").hex(), "message": codec.to_json(msg)})
    return out


def reject_vectors() -> list[dict]:
    out = []
    for name, note, frame in _reject_cases():
        used, item = codec.decode(frame)
        assert used == len(frame) and isinstance(item, codec.Rejected), (name, used, item)
        out.append({"name": name, "note": note, "hex": frame.hex(), "reject": True, "kind": item.kind,
                    "reason": item.reason})
    return out


def stream_vectors() -> list[dict]:
    out = []
    for name, note, stream in _stream_cases():
        items = []
        for offset, item in codec.Decoder().feed(stream):
            if isinstance(item, codec.Rejected):
                items.append({"offset": offset, "length": item.length, "reject": True, "kind": item.kind})
            else:
                items.append({"offset": offset, "message": codec.to_json(item)})
        out.append({"name": name, "note": note, "hex": stream.hex(), "items": items})
    return out


def rendered() -> dict[str, str]:
    """File name -> text, exactly as written to vectors/."""
    return {
        name: json.dumps(data, indent=1, ensure_ascii=False) + "\n"
        for name, data in (("frames.json", frame_vectors()), ("rejects.json", reject_vectors()),
                           ("streams.json", stream_vectors()))
    }


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    check = "--check" in args
    stale = []
    for name, text in rendered().items():
        path = VECTORS_DIR / name
        if check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            VECTORS_DIR.mkdir(exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    if stale:
        print(f"stale vectors: {', '.join(stale)}; run python -m firmware_protocol.make_vectors", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
