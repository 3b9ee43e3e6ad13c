"""The test vectors (firmware_protocol/vectors, SPEC.md §13) through the reference decoder, every way bytes arrive.

SPEC.md §4: a frame is decoded whether it arrives whole, split anywhere, one
byte at a time or behind garbage; a frame with any flipped bit never yields a
message; the vector files are exactly what the codec produces.
"""

from __future__ import annotations

import json
import random

import pytest

from firmware_protocol import (
    Decoder,
    Message,
    Rejected,
    codec,
    decode,
    encode,
    from_json,
    make_vectors,
    messages,
    to_json,
)


def _load(name: str) -> list[dict]:
    return json.loads((make_vectors.VECTORS_DIR / name).read_text(encoding="utf-8"))


FRAMES = _load("frames.json")
REJECTS = _load("rejects.json")
STREAMS = _load("streams.json")
CANONICAL = [v for v in FRAMES if v.get("canonical", True)]
# A shorter sample for the slow loops: every message type once plus the stuffing edge cases.
_seen: set[str] = set()
SAMPLE = []
for _v in FRAMES:
    if _v["message"]["type"] not in _seen or "run" in _v["name"] or not _v.get("canonical", True):
        _seen.add(_v["message"]["type"])
        SAMPLE.append(_v)


def name_of(vector: dict) -> str:
    return vector["name"]


def frame_of(vector: dict) -> bytes:
    return bytes.fromhex(vector["hex"])


def messages_in(items: list) -> list:
    return [(offset, item) for offset, item in items if not isinstance(item, Rejected)]


def feed_pieces(pieces: list[bytes]) -> list:
    decoder = Decoder()
    items = []
    for piece in pieces:
        items += decoder.feed(piece)
    assert decoder.offset + decoder.pending == sum(map(len, pieces))
    return items


def test_vector_files_are_what_the_codec_produces():
    assert make_vectors.main(["--check"]) == 0


def test_vectors_cover_every_message_type_and_the_edge_values():
    """SPEC.md §13: every type; seq 0 and 65535; ranks 1 and 13; empty and 64-byte strings; long runs."""
    seen = {v["message"]["type"] for v in FRAMES}
    assert seen == set(messages.MESSAGE_NAMES)
    seqs = {v["message"]["seq"] for v in FRAMES}
    assert {0, 256, 65535} <= seqs
    cards = [v["message"] for v in FRAMES if v["message"]["type"] == "card"]
    assert {1, 13} <= {c["rank"] for c in cards}
    assert {0, 1, 2, 3} <= {c["suit"] for c in cards}
    strings = [len(v["message"][k].encode()) for v in FRAMES if v["message"]["type"] == "hello"
               for k in ("vendor", "model", "serial", "firmware")]
    assert 0 in strings and 64 in strings
    runs = set()
    for v in FRAMES:
        runs.update(len(run) for run in bytes.fromhex(v["content"]).split(b"\x00"))
    assert {253, 254, 255} <= runs and max(runs) > 255
    assert any(b"\x00" * 100 in bytes.fromhex(v["content"]) for v in FRAMES)
    kinds = {v["kind"] for v in REJECTS}
    assert kinds == {codec.COBS, codec.SHORT, codec.LONG, codec.CRC, codec.VERSION, codec.TYPE, codec.PAYLOAD}


@pytest.mark.parametrize("vector", FRAMES, ids=name_of)
def test_frame_decodes_whole(vector):
    frame = frame_of(vector)
    used, item = decode(frame)
    assert used == len(frame)
    assert to_json(item) == vector["message"]
    assert item == from_json(vector["message"])


@pytest.mark.parametrize("vector", CANONICAL, ids=name_of)
def test_encoding_the_message_gives_the_vector(vector):
    msg = from_json(vector["message"])
    assert encode(msg).hex() == vector["hex"]
    assert codec.frame_content(msg).hex() == vector["content"]


@pytest.mark.parametrize("vector", FRAMES, ids=name_of)
def test_content_is_the_unstuffed_frame_with_its_crc(vector):
    content = bytes.fromhex(vector["content"])
    assert codec.cobs_decode(frame_of(vector)[:-1]) == content
    assert int.from_bytes(content[-4:], "little") == codec.crc32(content[:-4])
    assert b"\x00" not in frame_of(vector)[:-1]


@pytest.mark.parametrize("vector", FRAMES, ids=name_of)
def test_frame_in_two_halves_at_every_split(vector):
    frame = frame_of(vector)
    want = [(0, from_json(vector["message"]))]
    for split in range(len(frame) + 1):
        assert feed_pieces([frame[:split], frame[split:]]) == want, split


@pytest.mark.parametrize("vector", FRAMES, ids=name_of)
def test_frame_one_byte_at_a_time(vector):
    frame = frame_of(vector)
    decoder = Decoder()
    items = []
    for i in range(len(frame)):
        got = decoder.feed(frame[i:i + 1])
        assert got == [] or i == len(frame) - 1
        items += got
    assert items == [(0, from_json(vector["message"]))]
    assert decoder.pending == 0 and decoder.offset == len(frame)


_rng = random.Random(20240601)
GARBAGE = {
    "noise": bytes.fromhex("deadbeef"),
    "idle_zeros": b"\x00\x00\x00",
    "noise_then_zero": bytes.fromhex("5aa5ff00"),
    "truncated_frame": encode(messages.CardRead(seq=9, rank=2, suit=2))[:7],
    "chained_codes": b"\x01" * 20,  # code bytes that chain straight into the frame
    "random_300": bytes(_rng.randrange(1, 256) for _ in range(300)),
    "overflow_1200": b"\xff" * 1200,
}


@pytest.mark.parametrize("garbage", list(GARBAGE), ids=str)
@pytest.mark.parametrize("vector", SAMPLE, ids=name_of)
def test_frame_after_leading_garbage(vector, garbage):
    """SPEC.md §4: an intact frame is never lost because of garbage before it."""
    junk = GARBAGE[garbage]
    frame = frame_of(vector)
    want = [(len(junk), from_json(vector["message"]))]
    whole = feed_pieces([junk + frame])
    assert messages_in(whole) == want
    assert all(isinstance(item, Rejected) for _, item in whole[:-1])
    assert messages_in(feed_pieces([bytes((b,)) for b in junk + frame])) == want
    used, item = decode(junk + frame)
    if set(junk) == {0}:
        assert (used, item) == (len(junk) + len(frame), want[0][1])
    else:
        assert isinstance(item, Rejected) and used <= len(junk) + 1


@pytest.mark.parametrize("vector", CANONICAL, ids=name_of)
def test_any_flipped_bit_is_rejected(vector):
    """SPEC.md §3.2, §4: no single-bit error anywhere in a frame (delimiter included) yields a message."""
    frame = frame_of(vector)
    for index in range(len(frame)):
        for bit in range(8):
            bad = bytearray(frame)
            bad[index] ^= 1 << bit
            # The extra delimiter ends a frame whose own delimiter was hit, as a sender's next frame would.
            items = Decoder().feed(bytes(bad) + b"\x00")
            assert not messages_in(items), (index, bit, items)
            assert items, (index, bit)


@pytest.mark.parametrize("vector", [v for v in FRAMES if not v.get("canonical", True)], ids=name_of)
def test_flipped_bit_in_a_noncanonical_frame_yields_nothing_new(vector):
    """A flip can turn the needless final block 01 of a non-canonical frame into a delimiter: the frame
    is then the canonical encoding of the same content and rightly decodes to the same message. It
    must never decode to anything else."""
    frame = frame_of(vector)
    original = from_json(vector["message"])
    for index in range(len(frame)):
        for bit in range(8):
            bad = bytearray(frame)
            bad[index] ^= 1 << bit
            assert all(item == original for _, item in messages_in(Decoder().feed(bytes(bad) + b"\x00")))


@pytest.mark.parametrize("vector", REJECTS, ids=name_of)
def test_reject_vector_whole(vector):
    frame = frame_of(vector)
    used, item = decode(frame)
    assert used == len(frame)
    assert isinstance(item, Rejected)
    assert item.kind == vector["kind"]
    assert item.reason == vector["reason"]
    assert (item.offset, item.length, item.raw) == (0, len(frame), frame)


@pytest.mark.parametrize("vector", REJECTS, ids=name_of)
def test_reject_vector_split_anywhere_yields_nothing(vector):
    frame = frame_of(vector)
    for split in range(len(frame) + 1):
        items = feed_pieces([frame[:split], frame[split:]])
        assert not messages_in(items)
        assert [item.kind for _, item in items] == [vector["kind"]]
    assert not messages_in(feed_pieces([bytes((b,)) for b in frame]))


@pytest.mark.parametrize("vector", REJECTS, ids=name_of)
def test_reject_vector_does_not_hide_the_next_frame(vector):
    card = messages.CardRead(seq=77, rank=13, suit=3)
    frame = frame_of(vector)
    assert messages_in(feed_pieces([frame + encode(card)])) == [(len(frame), card)]


def _stream_items(items: list) -> list[dict]:
    out = []
    for offset, item in items:
        if isinstance(item, Rejected):
            out.append({"offset": offset, "length": item.length, "reject": True, "kind": item.kind})
        else:
            out.append({"offset": offset, "message": to_json(item)})
    return out


@pytest.mark.parametrize("vector", STREAMS, ids=name_of)
def test_stream_whole(vector):
    stream = bytes.fromhex(vector["hex"])
    assert _stream_items(feed_pieces([stream])) == vector["items"]


@pytest.mark.parametrize("vector", STREAMS, ids=name_of)
def test_stream_in_pieces_gives_the_same_messages_at_the_same_offsets(vector):
    """SPEC.md §4: read boundaries never change which messages come out, nor where they start."""
    stream = bytes.fromhex(vector["hex"])
    want = [item for item in vector["items"] if "message" in item]
    for split in range(0, len(stream) + 1, max(1, len(stream) // 40)):
        got = _stream_items(messages_in(feed_pieces([stream[:split], stream[split:]])))
        assert got == want, split
    assert _stream_items(messages_in(feed_pieces([bytes((b,)) for b in stream]))) == want
    rng = random.Random(len(stream))
    for _ in range(10):
        pieces, pos = [], 0
        while pos < len(stream):
            step = rng.randrange(1, 40)
            pieces.append(stream[pos:pos + step])
            pos += step
        assert _stream_items(messages_in(feed_pieces(pieces))) == want


def test_no_card_ever_comes_from_a_rejected_vector():
    """The strongest form of 'never guess a card': across every reject vector, no CardRead, split or whole."""
    for vector in REJECTS:
        frame = frame_of(vector)
        for item in (decode(frame)[1], *[i for _, i in feed_pieces([bytes((b,)) for b in frame])]):
            assert not isinstance(item, Message)
