"""Ranges the SPEC states, held by the encoder, from_json, the decoder and the vectors alike.

firmware_protocol/SPEC.md §5.2 (hello strings: at most 64 bytes, printable), §5.9/§5.10 with §6.1
(unacked at most 32767), §5.18 (an order chunk ends at position 65535 at most), §13 (a reject vector
for each field with a range, a value just outside it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from firmware_protocol import Decoder, Rejected, codec, encode, from_json
from firmware_protocol import messages as m

VECTORS = Path(__file__).resolve().parents[2] / "firmware_protocol" / "vectors"


def test_an_order_chunk_past_position_65535_is_refused_by_the_encoder_and_from_json():
    chunk = m.OrderChunk(seq=1, shuffle=1, position=65535, cards=("AC", "2C"))
    with pytest.raises(codec.EncodeError, match="run past position 65535"):
        encode(chunk)
    with pytest.raises(ValueError, match="run past position 65535"):
        from_json({"type": "order_chunk", "seq": 1, "shuffle": 1, "position": 65535, "cards": ["AC", "2C"]})
    last = m.OrderChunk(seq=1, shuffle=1, position=65534, cards=("AC", "2C"))
    assert Decoder().feed(encode(last))[0][1] == last


@pytest.mark.parametrize("cls", [m.Heartbeat, m.Status])
def test_unacked_above_32767_is_refused_both_ways(cls):
    with pytest.raises(codec.EncodeError, match="unacked"):
        encode(cls(seq=1, unacked=32768))
    ok = cls(seq=1, unacked=32767)
    assert Decoder().feed(encode(ok))[0][1] == ok


def test_a_hello_string_of_65_bytes_is_refused_by_the_decoder():
    content = codec.frame_content(m.Hello(seq=0, vendor="V" * 64, model="M", serial="S", firmware="1", boot=1))
    body = bytearray(content[:-4])
    at = body.index(64)  # vendor's length byte
    body[at:at + 65] = bytes((65,)) + b"V" * 65
    frame = codec.cobs_encode(bytes(body) + codec.crc32(bytes(body)).to_bytes(4, "little")) + b"\0"
    (_, item), = Decoder().feed(frame)
    assert isinstance(item, Rejected) and item.kind == "payload" and "vendor is 65 bytes" in item.reason


PROMISED = ["unreadable_mode_2", "deck_check_deck_17", "shuffler_error_text_201", "hello_string_65",
            "order_chunk_rank_0", "heartbeat_unacked_32768", "status_unacked_65535", "hello_format_character"]


@pytest.mark.parametrize("name", PROMISED)
def test_the_reject_vectors_the_spec_promises_are_there_and_rejected_as_payload(name):
    vectors = {v["name"]: v for v in json.loads((VECTORS / "rejects.json").read_text())}
    vector = vectors[name]
    assert vector["kind"] == "payload"
    (_, item), = Decoder().feed(bytes.fromhex(vector["hex"]))
    assert isinstance(item, Rejected) and item.kind == "payload"


def test_the_frame_vectors_describe_themselves_truly():
    frames = {v["name"]: v for v in json.loads((VECTORS / "frames.json").read_text())}
    assert frames["heartbeat_max"]["message"]["unacked"] <= 32767
    assert "1.1" in frames["hello_newer_minor"]["note"] and "1.0" not in frames["hello_newer_minor"]["note"]
