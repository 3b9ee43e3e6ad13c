"""How fast the reference codec handles a card frame (the daemon decodes every frame; p99 target 2 ms end to end).

Prints medians (and the 99th percentile of single calls) in microseconds:
decode() of one card frame, Decoder.feed() of one card frame, encode() of one
card, and the decoder's cost on bad input: a frame with a flipped bit, a
frame behind garbage, a long stretch of noise, and noise crafted to be the
worst case for the search for a frame behind garbage (SPEC.md §4).

    .venv/bin/python benchmarks/codec_bench.py [--rounds N]
"""

from __future__ import annotations

import argparse
import statistics
import time

from firmware_protocol import CardRead, Decoder, codec, decode, encode


def per_call_us(fn, calls: int, rounds: int) -> tuple[float, float]:
    """Median over rounds of the mean time per call, and the p99 of single timed calls."""
    means = []
    for _ in range(rounds):
        start = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        means.append((time.perf_counter_ns() - start) / calls / 1000)
    singles = []
    for _ in range(calls * 2):
        start = time.perf_counter_ns()
        fn()
        singles.append((time.perf_counter_ns() - start) / 1000)
    singles.sort()
    return statistics.median(means), singles[int(len(singles) * 0.99)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()

    card = CardRead(seq=5, rank=10, suit=1, confidence=250)
    frame = encode(card)
    bad = bytearray(frame)
    bad[5] ^= 1
    bad = bytes(bad)
    behind_garbage = bytes.fromhex("deadbeef") + frame
    # Noise with no frame in it: every fourth byte looks like the start of a card frame.
    worst = bytes.fromhex("04011005") * (codec.MAX_ENCODED // 4) + b"\x00"
    noise = bytes(range(1, 256)) * 2 + b"\x00"  # 510 bytes of noise up to a delimiter
    decoder = Decoder()

    cases = [
        ("decode(card frame)", lambda: decode(frame), 20_000),
        ("Decoder.feed(card frame)", lambda: decoder.feed(frame), 20_000),
        ("encode(card)", lambda: encode(card), 20_000),
        ("decode(card frame, one bit flipped)", lambda: decode(bad), 5_000),
        ("Decoder.feed(4 garbage bytes + card frame)", lambda: decoder.feed(behind_garbage), 5_000),
        ("decode(510 bytes of noise, then a delimiter)", lambda: decode(noise), 500),
        ("decode(worst-case crafted noise, 513 bytes)", lambda: decode(worst), 20),
    ]
    print(f"card frame: {len(frame)} bytes ({frame.hex(' ')})")
    print(f"{'case':48} {'median µs':>10} {'p99 µs':>10}")
    results = {}
    for name, fn, calls in cases:
        median, p99 = per_call_us(fn, calls, args.rounds)
        results[name] = median
        print(f"{name:48} {median:10.2f} {p99:10.2f}")
    per_frame = results["Decoder.feed(card frame)"]
    print(f"card frames decoded per second on one core: {1e6 / per_frame:,.0f}")
    print(f"share of the 2 ms budget used by decoding one card: {per_frame / 2000:.2%}")


if __name__ == "__main__":
    main()
