"""The Bee-Tek framer under line noise (hypothesis).

ref: beetek-shoe.md, "there is no sequence number and no checksum, so a
garbled token must be reported as unreadable (never guessed)". The properties:
random and mutated byte streams never crash the framer, every card it yields
was in the stream intact (a whole `[MODE]<Card:XX>` token at the reported
offset), and a clean stream gives exactly its cards, however it is split.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from shoed.drivers.beetek import OUTSIDE_TEXT, token_reading
from shoed.rules.cards import RANK_LETTERS, SUITS, parse_card
from tests.drivers.test_beetek_tokens import feed

INTACT_CARD = re.compile(rb"\[ *(game|gamealarm|manual burn cards) *\] *<card:([0-9a-z]{2,3})>", re.IGNORECASE)
MODES = [b"Game", b"Manual Burn Cards", b"GameAlarm"]


def card_token(rank: int, suit: str, mode: bytes, suit_first: bool, ten_as_10: bool, lower: bool) -> bytes:
    r = "10" if rank == 10 and ten_as_10 else RANK_LETTERS[rank - 1]
    text = f"{suit}{r}" if suit_first else f"{r}{suit}"
    if lower:
        text = text.lower()
    return b"[" + mode + b"]<Card:" + text.encode() + b">"


cards = st.tuples(
    st.integers(1, 13), st.sampled_from(SUITS), st.sampled_from([b"Game", b"Manual Burn Cards"]),
    st.booleans(), st.booleans(), st.booleans(),
)
other_tokens = st.sampled_from([
    b"[Game]<Game>", b"[Manual Burn Cards]<Game>", b"[GameAlarm]<Alarm:E3 Card Not Read>", b"<W0x01>", b"<W0x02>",
])
fillers = st.sampled_from([b" ", b"  ", b" \xff ", b"\r\n", b" \x00 "])


@st.composite
def clean_streams(draw):
    parts, expected = [], []
    for _ in range(draw(st.integers(0, 12))):
        parts.append(draw(fillers))
        if draw(st.booleans()):
            spec = draw(cards)
            parts.append(card_token(*spec))
            expected.append((f"{RANK_LETTERS[spec[0] - 1]}{spec[1]}", "burn" if b"Burn" in spec[2] else "game"))
        else:
            parts.append(draw(other_tokens))
    parts.append(b" ")
    return b"".join(parts), expected


def readings(stream: bytes, chunks: list[bytes]):
    return [token_reading(t, "beetek:fuzz", off, 0, 0) for off, t in feed(chunks)]


def assert_only_intact_cards(stream: bytes, found) -> None:
    for offset, token in found:
        r = token_reading(token, "beetek:fuzz", offset, 0, 0)
        if r.kind != "card":
            continue
        assert stream[offset:offset + len(token.raw)] == token.raw
        m = INTACT_CARD.fullmatch(token.raw)
        assert m, f"card {r.card} from a token that is not intact: {token.raw!r}"
        assert str(parse_card(m.group(2).decode())) == r.card
        assert r.mode == ("burn" if b"burn" in m.group(1).lower() else "game")


def split(stream: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(stream) + 1) for c in cuts})
    out, last = [], 0
    for p in points:
        out.append(stream[last:p])
        last = p
    out.append(stream[last:])
    return out


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.lists(st.integers(0, 400), max_size=6))
def test_random_bytes_never_crash_and_never_invent_a_card(stream, cuts):
    found = feed(split(stream, cuts))
    assert_only_intact_cards(stream, found)


@settings(max_examples=300, deadline=None)
@given(clean_streams(), st.lists(st.integers(0, 2000), max_size=8))
def test_a_clean_stream_gives_exactly_its_cards_however_split(stream_expected, cuts):
    stream, expected = stream_expected
    got = [(r.card, r.mode) for r in readings(stream, split(stream, cuts)) if r.kind == "card"]
    assert got == expected
    # the fillers' control and non-ASCII bytes are noise (no shoe sends them), and nothing else is
    assert not [r for r in readings(stream, [stream]) if r.code == "garbled" and r.text != OUTSIDE_TEXT]
    assert bool([r for r in readings(stream, [stream]) if r.text == OUTSIDE_TEXT]) == bool(re.search(rb"[\x00\xff]", stream))


@settings(max_examples=500, deadline=None)
@given(
    clean_streams(),
    st.lists(st.tuples(st.integers(0, 2000), st.integers(0, 255), st.sampled_from(["flip", "drop", "insert"])),
             min_size=1, max_size=4),
    st.lists(st.integers(0, 2000), max_size=4),
)
def test_mutated_streams_never_invent_a_card(stream_expected, mutations, cuts):
    stream, expected = stream_expected
    data = bytearray(stream)
    for pos, value, how in mutations:
        if not data:
            break
        i = pos % len(data)
        if how == "flip":
            data[i] ^= 1 << (value % 8)
        elif how == "drop":
            del data[i]
        else:
            data.insert(i, value)
    data = bytes(data)
    found = feed(split(data, cuts))
    assert_only_intact_cards(data, found)
    # Damage costs at most the cards it touched: each mutation can break at most two tokens
    # (a dropped '>' joins two), so nearly all cards still come through.
    got = [token_reading(t, "x", o, 0, 0) for o, t in found]
    assert len([r for r in got if r.kind == "card"]) >= len(expected) - 2 * len(mutations)
