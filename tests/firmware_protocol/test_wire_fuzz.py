"""Property tests of the reference decoder (SPEC.md §4): random and mutated byte streams.

- Random bytes never crash it, and it always makes progress within bounds.
- A corrupted stream never yields a card that was not sent.
- Every intact frame around noise is decoded, at its offset.
- Every message of every type survives encode, decode and JSON.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from firmware_protocol import (
    Decoder,
    Message,
    Rejected,
    codec,
    decode,
    encode,
    from_json,
    to_json,
)
from firmware_protocol import (
    messages as m,
)

# SHOED_FUZZ_EXAMPLES=5000 for a longer run (test labs, before a release).
SETTINGS = settings(max_examples=int(os.environ.get("SHOED_FUZZ_EXAMPLES", "150")), deadline=None, suppress_health_check=[HealthCheck.too_slow])

u8 = st.integers(0, 0xFF)
u16 = st.integers(0, 0xFFFF)
unacked = st.integers(0, 0x7FFF)  # SPEC.md §6.1: at most 32767 unacknowledged
u32 = st.integers(0, 0xFFFFFFFF)
u64 = st.integers(0, 0xFFFFFFFFFFFFFFFF)


def text(limit: int) -> st.SearchStrategy[str]:
    return st.text(st.characters(exclude_categories=("Cs",)), max_size=limit).filter(
        lambda s: len(s.encode()) <= limit)


def line(limit: int) -> st.SearchStrategy[str]:
    """A hello's string: one line of printable text (SPEC.md §5.2)."""
    return st.text(st.characters(exclude_categories=("Cs", "Cc", "Cf", "Co", "Cn", "Zl", "Zp")), max_size=limit).filter(
        lambda s: len(s.encode()) <= limit and s.isprintable())


def cards(limit: int, least: int = 0) -> st.SearchStrategy[tuple[str, ...]]:
    card = st.builds(lambda rank, suit: "A23456789TJQK"[rank] + "CDHS"[suit], st.integers(0, 12), st.integers(0, 3))
    return st.lists(card, min_size=least, max_size=limit).map(tuple)


MESSAGE_STRATEGIES = {
    m.Hello: st.builds(m.Hello, seq=u16, major=u8, minor=u8, vendor=line(64), model=line(64), serial=line(64),
                       firmware=line(64), boot=u32),
    m.CardRead: st.builds(m.CardRead, seq=u16, rank=st.integers(1, 13), suit=st.integers(0, 3), confidence=u8,
                          faced=st.booleans(), mode=st.sampled_from([m.MODE_GAME, m.MODE_BURN])),
    m.Unreadable: st.builds(m.Unreadable, seq=u16, mode=st.sampled_from([0, 1]), reason=st.integers(1, 255)),
    m.Draw: st.builds(m.Draw, seq=u16, mode=st.sampled_from([0, 1]), trigger=st.integers(1, 255)),
    m.Button: st.builds(m.Button, seq=u16, button=st.sampled_from(sorted(m.BUTTON_NAMES))),
    m.CutCard: st.builds(m.CutCard, seq=u16),
    m.ShoeRemoved: st.builds(m.ShoeRemoved, seq=u16),
    m.ShoeInserted: st.builds(m.ShoeInserted, seq=u16),
    m.Tamper: st.builds(m.Tamper, seq=u16, source=st.integers(1, 255), active=st.booleans()),
    m.Alarm: st.builds(m.Alarm, seq=u16, code=u16, text=text(255)),
    m.Heartbeat: st.builds(m.Heartbeat, seq=u16, uptime_ms=u32, unacked=unacked),
    m.Status: st.builds(m.Status, seq=u16, gate_locked=st.booleans(), shoe_present=st.booleans(),
                        lid_closed=st.booleans(), unacked=unacked, utc_ms=u64),
    m.Ack: st.builds(m.Ack, seq=u16, ack=u16),
    m.Gate: st.builds(m.Gate, seq=u16, locked=st.booleans()),
    m.SetTime: st.builds(m.SetTime, seq=u16, utc_ms=u64),
    m.StatusRequest: st.builds(m.StatusRequest, seq=u16),
    m.ShuffleStarted: st.builds(m.ShuffleStarted, seq=u16, shuffle=u32, decks=st.integers(1, m.DECKS_MAX)),
    m.DeckCheck: st.builds(m.DeckCheck, seq=u16, shuffle=u32, deck=st.integers(1, m.DECKS_MAX), present=u16,
                           unreadable=u8, missing=cards(m.DECK_LIST_MAX), extra=cards(m.DECK_LIST_MAX),
                           foreign=cards(m.DECK_LIST_MAX), face_reversed=cards(m.DECK_LIST_MAX)),
    m.OrderChunk: st.builds(m.OrderChunk, seq=u16, shuffle=u32, position=st.integers(0, 0xFFFF - m.CHUNK_MAX),
                            cards=cards(m.CHUNK_MAX, 1)),
    m.ShuffleCompleted: st.builds(m.ShuffleCompleted, seq=u16, shuffle=u32, shoe=u32, cards=u16,
                                  digest=st.binary(min_size=32, max_size=32).map(bytes.hex)),
    m.ShufflerError: st.builds(m.ShufflerError, seq=u16, shuffle=u32, fault=st.integers(1, 255),
                               active=st.booleans(), code=u16, text=text(m.SHUFFLER_TEXT_MAX)),
    m.Meters: st.builds(m.Meters, seq=u16, shuffles=u32, cards=u32, jams=u32, door_opens=u32,
                        recognition_faults=u32),
}
assert set(MESSAGE_STRATEGIES) == set(m.MESSAGE_TYPES.values())
any_message = st.one_of(*MESSAGE_STRATEGIES.values())
# Streams are mostly cards, as at a table, with the other reports mixed in.
stream_message = st.one_of(MESSAGE_STRATEGIES[m.CardRead], MESSAGE_STRATEGIES[m.CardRead], any_message)


def feed_in_pieces(stream: bytes, cuts: list[int]) -> list:
    decoder = Decoder()
    items = []
    pos = 0
    for cut in sorted({c % (len(stream) + 1) for c in cuts}) + [len(stream)]:
        items += decoder.feed(stream[pos:cut])
        pos = cut
    assert decoder.offset + decoder.pending == len(stream)
    assert decoder.pending <= 2 * codec.MAX_WIRE
    offsets = [offset for offset, _ in items]
    assert offsets == sorted(offsets)
    return items


@SETTINGS
@given(any_message)
def test_every_message_round_trips(msg):
    frame = encode(msg)
    assert b"\x00" not in frame[:-1] and frame[-1] == 0
    assert len(frame) <= codec.MAX_WIRE
    assert decode(frame) == (len(frame), msg)
    assert from_json(to_json(msg)) == msg


@SETTINGS
@given(st.binary(max_size=3000))
def test_random_bytes_never_crash_decode(data):
    used, item = decode(data)
    assert 0 <= used <= len(data)
    if item is None:
        assert set(data[:used]) <= {0}
    else:
        assert used > 0
        assert isinstance(item, (Rejected, Message))
    if isinstance(item, Rejected):
        assert item.length > 0 and item.raw == data[item.offset:item.offset + item.length]


@SETTINGS
@given(st.binary(max_size=3000), st.lists(st.integers(0, 4000), max_size=8))
def test_random_streams_never_crash_the_decoder_nor_yield_a_card(data, cuts):
    items = feed_in_pieces(data, cuts)
    # Random bytes carry a right CRC-32 about once in 4 × 10⁹ frames: a message here is a decoder bug.
    assert all(isinstance(item, Rejected) for _, item in items)
    for offset, item in items:
        assert item.raw == data[offset:offset + item.length]


mutation = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 10_000), st.integers(0, 7)),
    st.tuples(st.just("delete"), st.integers(0, 10_000), st.integers(1, 20)),
    st.tuples(st.just("insert"), st.integers(0, 10_000), st.binary(min_size=1, max_size=30)),
    st.tuples(st.just("overwrite"), st.integers(0, 10_000), st.binary(min_size=1, max_size=30)),
    st.tuples(st.just("truncate"), st.integers(0, 10_000), st.just(0)),
)


def mutate(stream: bytes, mutations: list) -> bytes:
    data = bytearray(stream)
    for kind, where, arg in mutations:
        if not data:
            break
        at = where % len(data)
        if kind == "flip":
            data[at] ^= 1 << arg
        elif kind == "delete":
            del data[at:at + arg]
        elif kind == "insert":
            data[at:at] = arg
        elif kind == "overwrite":
            data[at:at + len(arg)] = arg
        else:
            del data[at:]
    return bytes(data)


@SETTINGS
@given(st.lists(stream_message, min_size=1, max_size=10), st.lists(mutation, min_size=1, max_size=6),
       st.lists(st.integers(0, 4000), max_size=6))
def test_a_corrupted_stream_never_yields_a_message_that_was_not_sent(sent, mutations, cuts):
    stream = b"".join(encode(msg) for msg in sent)
    corrupted = mutate(stream, mutations)
    assume(corrupted != stream)
    decoded = [item for _, item in feed_in_pieces(corrupted, cuts) if not isinstance(item, Rejected)]
    for item in decoded:
        assert item in sent
    cards = [item for item in decoded if isinstance(item, m.CardRead)]
    assert all(card in sent for card in cards)


@SETTINGS
@given(st.lists(st.tuples(st.binary(max_size=700), stream_message), min_size=1, max_size=6),
       st.binary(max_size=700), st.lists(st.integers(0, 6000), max_size=6))
def test_every_intact_frame_around_noise_is_decoded_at_its_offset(pairs, tail, cuts):
    stream = b""
    want = []
    for noise, msg in pairs:
        stream += noise
        want.append((len(stream), msg))
        stream += encode(msg)
    stream += tail
    got = [(offset, item) for offset, item in feed_in_pieces(stream, cuts) if not isinstance(item, Rejected)]
    assert got == want


@SETTINGS
@given(stream_message, st.integers(0, 10_000), st.integers(0, 7))
def test_one_flipped_bit_never_yields_a_message(msg, where, bit):
    frame = bytearray(encode(msg))
    frame[where % len(frame)] ^= 1 << bit
    assert not [i for _, i in Decoder().feed(bytes(frame) + b"\x00") if not isinstance(i, Rejected)]
