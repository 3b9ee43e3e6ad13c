"""The decoding API other parts of shoed build on: decode(), Decoder, to_json/from_json (SPEC.md §4, §9, §13)."""

from __future__ import annotations

import json

import pytest

from firmware_protocol import (
    MAX_WIRE,
    NEED_MORE,
    CardRead,
    Decoder,
    Heartbeat,
    Hello,
    Rejected,
    codec,
    decode,
    encode,
    from_json,
    messages,
    to_json,
)

CARD = CardRead(seq=5, rank=10, suit=1, confidence=250)
FRAME = encode(CARD)


# (case, buffer, result)
DECODE_CASES = [
    ("empty buffer: need more", b"", NEED_MORE),
    ("half a frame: need more", FRAME[:7], NEED_MORE),
    ("a frame without its delimiter: need more", FRAME[:-1], NEED_MORE),
    ("a whole frame", FRAME, (15, CARD)),
    ("a frame and the start of the next: only the first", FRAME + FRAME[:4], (15, CARD)),
    ("idle delimiters only: consumed, nothing to report", b"\x00\x00\x00", (3, None)),
    ("idle delimiters then half a frame: the delimiters are consumed", b"\x00\x00" + FRAME[:5], (2, None)),
    ("idle delimiters then a frame: one step", b"\x00\x00" + FRAME, (17, CARD)),
]


@pytest.mark.parametrize(("case", "buf", "result"), DECODE_CASES, ids=[c[0] for c in DECODE_CASES])
def test_decode(case, buf, result):
    assert decode(buf) == result
    assert decode(bytearray(buf)) == result
    assert decode(memoryview(buf)) == result
    assert decode(memoryview(b"xx" + buf)[2:]) == result


def test_decode_rejects_garbage_then_returns_the_frame_behind_it():
    buf = b"\x13\x37" + FRAME
    used, item = decode(buf)
    assert isinstance(item, Rejected)
    assert (used, item.offset, item.length, item.raw, item.kind) == (2, 0, 2, b"\x13\x37", codec.GARBAGE)
    assert decode(buf[used:]) == (15, CARD)


def test_rejected_offset_skips_idle_delimiters_and_covers_the_delimiter():
    bad = bytearray(FRAME)
    bad[3] ^= 4
    used, item = decode(b"\x00" + bytes(bad))
    assert used == 16
    assert (item.offset, item.length, item.raw, item.kind) == (1, 15, bytes(bad), codec.CRC)
    assert "CRC" in item.reason


@pytest.mark.parametrize("value", [None, 42, "04 01", 3.5, [1, 2], object()], ids=repr)
def test_decode_never_raises_on_values_that_are_not_bytes(value):
    assert decode(value) == NEED_MORE  # type: ignore[arg-type]


def test_decoder_offsets_are_absolute_in_the_stream():
    hb = Heartbeat(seq=5, uptime_ms=1, unacked=0)
    stream = b"\x00" + FRAME + b"junk" + encode(hb) + FRAME
    decoder = Decoder()
    items = decoder.feed(stream[:20]) + decoder.feed(stream[20:])
    assert [(o, type(i).__name__) for o, i in items] == [(1, "CardRead"), (16, "Rejected"), (20, "Heartbeat"),
                                                          (20 + len(encode(hb)), "CardRead")]
    assert items[1][1].offset == 16 and items[1][1].raw == b"junk"
    assert decoder.offset == len(stream) and decoder.pending == 0


def test_decoder_keeps_the_unfinished_tail():
    decoder = Decoder()
    assert decoder.feed(FRAME + FRAME[:9]) == [(0, CARD)]
    assert (decoder.offset, decoder.pending) == (15, 9)
    assert decoder.feed(FRAME[9:]) == [(15, CARD)]


def test_decoder_buffer_stays_bounded_under_endless_noise():
    """SPEC.md §4: a run without a delimiter is rejected, not kept forever; nothing of it is lost from the count."""
    decoder = Decoder()
    noise = bytes(range(1, 256)) * 16
    rejected = 0
    for _ in range(250):  # about 1 MB
        for _, item in decoder.feed(noise):
            assert isinstance(item, Rejected) and item.kind == codec.OVERFLOW
            rejected += item.length
        assert decoder.pending <= 2 * MAX_WIRE + len(noise)
    assert rejected + decoder.pending == 250 * len(noise)
    # And a frame right after the noise is still found.
    assert [i for _, i in decoder.feed(FRAME) if not isinstance(i, Rejected)] == [CARD]


def test_decoder_byte_by_byte_noise_is_rejected_in_large_stretches():
    decoder = Decoder()
    items = []
    for b in bytes(range(1, 256)) * 20:
        items += decoder.feed(bytes((b,)))
    assert items and all(item.length > MAX_WIRE for _, item in items)


# ----- JSON -----------------------------------------------------------------


def test_json_of_a_card_names_the_card():
    assert to_json(CARD) == {"type": "card", "seq": 5, "rank": 10, "suit": 1, "confidence": 250, "faced": False,
                             "mode": 0, "card": "TD"}


def test_json_of_every_type_round_trips_through_text():
    for cls in messages.MESSAGE_TYPES.values():
        msg = cls(seq=65535)
        assert from_json(json.loads(json.dumps(to_json(msg)))) == msg


def test_json_of_a_rejected_stretch():
    assert to_json(Rejected(3, 2, "noise", b"\x13\x37", codec.GARBAGE)) == {
        "type": "rejected", "kind": "garbage", "reason": "noise", "offset": 3, "length": 2, "raw": "1337"}


def test_from_json_fills_missing_fields_with_defaults():
    assert from_json({"type": "gate"}) == messages.Gate(seq=0, locked=True)
    assert from_json({"type": "hello", "vendor": "Acme"}) == Hello(vendor="Acme")


# (case, JSON, words the error names)
BAD_JSON = [
    ("not an object", ["card"], "JSON object"),
    ("no type", {"seq": 1}, "unknown message type"),
    ("unknown type", {"type": "dice"}, "unknown message type 'dice'"),
    ("unknown field", {"type": "card", "colour": "red"}, "no field colour"),
    ("rank out of range", {"type": "card", "rank": 14}, "rank"),
    ("rank as text", {"type": "card", "rank": "10"}, "rank must be an integer"),
    ("bool as int", {"type": "card", "faced": 1}, "true or false"),
    ("int as bool", {"type": "ack", "ack": True}, "integer"),
    ("text as int", {"type": "alarm", "text": 3}, "text"),
    ("card notation disagrees", {"type": "card", "rank": 10, "suit": 1, "card": "TS"}, "does not match"),
    ("seq out of range", {"type": "ack", "seq": 70000}, "seq"),
    ("string too long", {"type": "hello", "vendor": "v" * 65}, "vendor"),
]


@pytest.mark.parametrize(("case", "data", "words"), BAD_JSON, ids=[c[0] for c in BAD_JSON])
def test_from_json_refuses_with_a_clear_error(case, data, words):
    with pytest.raises(ValueError, match=words):
        from_json(data)


def test_noise_crafted_to_look_like_frame_starts_still_lets_the_frame_through():
    """SPEC.md §4: the garbage search is bounded, and tries the frame at the end first."""
    crafted = bytes.fromhex("04011005") * 120
    used, item = decode(crafted + b"\x00")
    assert isinstance(item, Rejected) and used == len(crafted) + 1
    items = Decoder().feed(crafted + FRAME)
    assert [(o, i) for o, i in items if not isinstance(i, Rejected)] == [(len(crafted), CARD)]
