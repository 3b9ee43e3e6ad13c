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
        ("hello_empty_strings", "every string empty", m.Hello(seq=1, boot=1)),
        ("hello_longest_strings", "64 bytes of UTF-8 in each string (the maximum), multi-byte characters",
         m.Hello(seq=65535, major=1, minor=255, vendor="V" * 64, model="Macau-\u6fb3\u9580" + "m" * 52,
                 serial="0" * 64, firmware="\u00e9" * 32, boot=0xFFFFFFFF)),
        ("hello_newer_minor", "a shoe speaking 1.3: the host answers 1.0 and both use 1.0", m.Hello(
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
        ("heartbeat_max", "uptime about to wrap, window full", m.Heartbeat(seq=65535, uptime_ms=0xFFFFFFFF,
                                                                          unacked=65535)),
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
        ("button_0", "", _frame(_header(0x20, 5) + bytes((0,)))),
        ("button_8", "", _frame(_header(0x20, 5) + bytes((8,)))),
        ("tamper_source_0", "", _frame(_header(0x24, 5) + bytes((0, 1)))),
        ("tamper_active_2", "a boolean byte must be 0 or 1", _frame(_header(0x24, 5) + bytes((1, 2)))),
        ("gate_locked_2", "", _frame(_header(0x81, 0) + bytes((2,)))),
        ("hello_bad_utf8", "vendor bytes are not UTF-8",
         _frame(_header(0x01, 0) + bytes((1, 0)) + bytes(4) + b"\x02\xff\xfe" + bytes(3))),
        ("hello_string_overrun", "vendor length 9 with 3 bytes left",
         _frame(_header(0x01, 0) + bytes((1, 0)) + bytes(4) + b"\x09abc")),
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
        ("overflow_then_frame", f"{3 * codec.MAX_WIRE} bytes without a delimiter, then a frame",
         b"\x41" * (3 * codec.MAX_WIRE) + a),
    ]


def frame_vectors() -> list[dict]:
    out = []
    for name, note, msg in _message_cases():
        out.append({"name": name, "note": note, "hex": codec.encode(msg).hex(),
                    "content": codec.frame_content(msg).hex(), "message": codec.to_json(msg)})
    for name, note, frame, msg in _noncanonical_cases():
        out.append({"name": name, "note": note, "hex": frame.hex(), "canonical": False,
                    "content": codec.cobs_decode(frame[:-1]).hex(), "message": codec.to_json(msg)})
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
