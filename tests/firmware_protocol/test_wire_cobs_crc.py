"""The frame layer's two building blocks: COBS stuffing (SPEC.md §3.3) and CRC-32 (§3.2).

COBS cases are the published examples of the algorithm (Cheshire and Baker);
the CRC's error-detection claims in §3.2 are checked by enumeration.
"""

from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_protocol import codec, encode, messages

SEQ_01_FE = bytes(range(1, 255))

# (case, data, stuffed) — SPEC.md §3.3, canonical form.
COBS_CASES = [
    ("empty", b"", b"\x01"),
    ("one zero", b"\x00", b"\x01\x01"),
    ("two zeros", b"\x00\x00", b"\x01\x01\x01"),
    ("zero, byte, zero", b"\x00\x11\x00", b"\x01\x02\x11\x01"),
    ("zero inside", b"\x11\x22\x00\x33", b"\x03\x11\x22\x02\x33"),
    ("no zero", b"\x11\x22\x33\x44", b"\x05\x11\x22\x33\x44"),
    ("trailing zeros", b"\x11\x00\x00\x00", b"\x02\x11\x01\x01\x01"),
    ("254 non-zero: one full block, nothing after it", SEQ_01_FE, b"\xff" + SEQ_01_FE),
    ("zero then 254 non-zero", b"\x00" + SEQ_01_FE, b"\x01\xff" + SEQ_01_FE),
    ("255 non-zero", SEQ_01_FE + b"\xff", b"\xff" + SEQ_01_FE + b"\x02\xff"),
    ("254 non-zero then zero", bytes(range(2, 256)) + b"\x00", b"\xff" + bytes(range(2, 256)) + b"\x01\x01"),
    ("253 non-zero, zero, one", bytes(range(3, 256)) + b"\x00\x01", b"\xfe" + bytes(range(3, 256)) + b"\x02\x01"),
]


@pytest.mark.parametrize(("case", "data", "stuffed"), COBS_CASES, ids=[c[0] for c in COBS_CASES])
def test_cobs_published_examples(case, data, stuffed):
    assert codec.cobs_encode(data) == stuffed
    assert codec.cobs_decode(stuffed) == data


@pytest.mark.parametrize(("case", "stuffed"), [
    ("code runs past the end", b"\x05\x11\x22"),
    ("zero code byte", b"\x00\x11"),
    ("nothing at all", b""),
    ("second code runs past the end", b"\x02\x11\x09\x01"),
])
def test_cobs_inconsistent_stuffing_is_refused(case, stuffed):
    assert codec.cobs_decode(stuffed) is None


def test_cobs_accepts_the_noncanonical_final_empty_block():
    """SPEC.md §3.3: receivers accept an empty block after a final full block."""
    assert codec.cobs_decode(b"\xff" + SEQ_01_FE + b"\x01") == SEQ_01_FE


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=1100))
def test_cobs_round_trip_has_no_zeros_and_bounded_overhead(data):
    stuffed = codec.cobs_encode(data)
    assert b"\x00" not in stuffed
    assert len(stuffed) <= len(data) + len(data) // 254 + 1
    assert codec.cobs_decode(stuffed) == data


def test_crc_check_value():
    """SPEC.md §3.2: CRC-32/ISO-HDLC of '123456789' is 0xCBF43926, the same as zlib's."""
    assert codec.crc32(b"123456789") == 0xCBF43926 == zlib.crc32(b"123456789")


def _syndromes(body_len: int) -> np.ndarray:
    """Per bit of a frame's content (body then CRC), what flipping it does to (CRC of body) XOR (CRC field).

    The CRC is affine, so an error pattern goes unnoticed exactly when the XOR of its bits'
    syndromes is zero.
    """
    zero = zlib.crc32(bytes(body_len))
    out = []
    for byte in range(body_len):
        for bit in range(8):
            flipped = bytearray(body_len)
            flipped[byte] = 1 << bit
            out.append(zlib.crc32(bytes(flipped)) ^ zero)
    out += [1 << k for k in range(32)]  # the CRC field is sent little-endian
    return np.array(out, dtype=np.uint32)


def test_every_error_of_up_to_five_bits_in_a_card_frame_is_detected():
    """SPEC.md §3.2: a card frame's content is 9 bytes before the CRC (72 bits, Hamming distance 6)."""
    assert len(codec.frame_content(messages.CardRead())) - 4 == 9
    s = _syndromes(9).tolist()
    n = len(s)
    singles = set(s)
    assert len(singles) == n and 0 not in singles  # every 1- and 2-bit error
    pairs = set()
    for i, j in itertools.combinations(range(n), 2):
        value = s[i] ^ s[j]
        assert value not in singles, "a 3-bit error goes unnoticed"
        assert value not in pairs, "a 4-bit error goes unnoticed"  # pairs sharing a bit would mean equal singles
        pairs.add(value)
    # A triple equal to a pair: a 5-bit error (an overlap would reduce it to a 3-bit one, excluded above).
    for i, j, k in itertools.combinations(range(n), 3):
        assert s[i] ^ s[j] ^ s[k] not in pairs, "a 5-bit error goes unnoticed"


def test_every_error_of_up_to_three_bits_in_the_largest_frame_is_detected():
    """SPEC.md §3.2: the largest content (508 bytes before the CRC, 4096 bits with it), Hamming distance 4."""
    s = _syndromes(codec.MAX_FRAME - 4)
    assert len(s) == codec.MAX_FRAME * 8
    ordered = np.sort(s)
    assert ordered[0] != 0 and not np.any(ordered[1:] == ordered[:-1])  # 1 and 2 bits
    for i in range(len(s) - 1):
        pair = s[i] ^ s[i + 1:]
        assert not np.isin(pair, ordered, assume_unique=True).any(), f"3-bit error undetected at bit {i}"


def test_a_card_frame_is_fifteen_bytes():
    """SPEC.md §2: the wire time of a card at 115200 baud is 15 bytes × 86.8 µs = 1.3 ms."""
    assert len(encode(messages.CardRead(seq=5, rank=10, suit=1, confidence=250))) == 15
