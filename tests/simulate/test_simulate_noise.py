"""Link noise does to frames what the fault plan says, and only that."""

from __future__ import annotations

import random

import pytest

from shoed.simulate.faults import FaultPlan, LinkNoise

FRAME = bytes(range(1, 40)) + b"\x00"


def noise(seed=1, **kw):
    return LinkNoise(FaultPlan(**kw), random.Random(seed))


def test_no_faults_leaves_frames_alone():
    n = noise()
    for _ in range(100):
        assert n.apply(FRAME) == (FRAME, [])
    assert n.stats.frames == 100 and n.stats.lost == 0


@pytest.mark.parametrize(
    "kw, check",
    [
        ({"lose": 1.0}, lambda out: out == b""),
        ({"repeat": 1.0}, lambda out: out == FRAME + FRAME),
        ({"garbage": 1.0}, lambda out: out.endswith(FRAME) and 1 <= len(out) - len(FRAME) <= 32),
        ({"ber": 1.0}, lambda out: out == bytes(b ^ 0xFF for b in FRAME)),
    ],
    ids=["lose", "repeat", "garbage", "every-bit"],
)
def test_each_fault_at_rate_one(kw, check):
    out, applied = noise(**kw).apply(FRAME)
    assert check(out), out.hex()
    assert applied


def test_bit_error_rate_is_per_bit():
    n = noise(seed=3, ber=1e-3)
    frames = 5000
    for _ in range(frames):
        n.apply(FRAME)
    bits = frames * len(FRAME) * 8
    expected = bits * 1e-3  # 1600
    assert 0.85 * expected < n.stats.flipped_bits < 1.15 * expected
    assert n.stats.corrupted_frames <= n.stats.flipped_bits


def test_rates_are_rates():
    n = noise(seed=4, lose=0.1, repeat=0.2, garbage=0.3)
    for _ in range(10_000):
        n.apply(FRAME)
    s = n.stats
    assert 900 < s.lost < 1100
    assert 1700 < s.repeated < 2100  # repeats are drawn only for frames that were not lost
    assert 0.3 * 10_000 * 1 < s.garbage_bytes


def test_same_seed_same_noise():
    a, b = noise(seed=9, ber=0.01, lose=0.1), noise(seed=9, ber=0.01, lose=0.1)
    assert [a.apply(FRAME) for _ in range(200)] == [b.apply(FRAME) for _ in range(200)]
