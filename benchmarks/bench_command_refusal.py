"""What a refused command request costs the card loop's thread: `shoed.net.commands.parse_request`.

The command endpoint is served on the card loop's thread, so the time its checks take for a
hostile body is time a card may wait. Measured in process, per body (the median and the 99th
percentile of --runs calls, each call timed alone):

- 60 kB of tiny objects as the arguments of a known command, and the same with `args` given
  twice (which got past the cheap checks to the pure-Python duplicate-key pass): both over
  MAX_REQUEST_BYTES now, refused by their size before any parsing;
- the worst that still gets parsed: a body just under MAX_REQUEST_BYTES of tiny objects, as bad
  arguments (refused by msgspec) and with `args` given twice (refused by the duplicate-key pass);
- the longest valid request (a 200-character reason and a 128-character id, every character
  outside the BMP, written as \\u escapes), accepted.

    .venv/bin/python benchmarks/bench_command_refusal.py [--runs 2000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from shoed.net.commands import MAX_REQUEST_BYTES, CommandRejected, parse_request


def tiny_objects(size: int) -> bytes:
    """As many `{}` as fit in `size` bytes, comma-separated."""
    return b",".join([b"{}"] * (size // 3))


def bodies() -> dict[str, bytes]:
    big = tiny_objects(60_000)
    under = tiny_objects(MAX_REQUEST_BYTES - 60)
    longest = json.dumps({"cmd": "void", "args": {"reason": "\U0001F600" * 200}, "id": "\U0001F600" * 128}).encode()
    return {
        "60 kB, bad arguments": b'{"cmd":"status","args":{"x":[' + big + b"]}}",
        "60 kB, args given twice": b'{"cmd":"status","args":{"x":[' + big + b']},"args":{}}',
        "under the cap, bad arguments": b'{"cmd":"status","args":{"x":[' + under + b"]}}",
        "under the cap, args given twice": b'{"cmd":"status","args":{"x":[' + under + b']},"args":{}}',
        "the longest valid request": longest,
    }


def timed(body: bytes, runs: int) -> tuple[list[float], str]:
    times, said = [], ""
    for _ in range(runs):
        start = time.perf_counter_ns()
        try:
            parse_request(body)
            said = "accepted"
        except CommandRejected as exc:
            said = str(exc)[:60]
        times.append((time.perf_counter_ns() - start) / 1e3)
    return times, said


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    args = parser.parse_args()
    print(f"MAX_REQUEST_BYTES {MAX_REQUEST_BYTES}; {args.runs} calls each; microseconds per call")
    print(f"{'body':34} {'bytes':>6} {'median':>8} {'p99':>8}  reply")
    for name, body in bodies().items():
        times, said = timed(body, args.runs)
        p99 = statistics.quantiles(times, n=100)[98]
        print(f"{name:34} {len(body):6} {statistics.median(times):8.1f} {p99:8.1f}  {said}")


if __name__ == "__main__":
    main()
