"""How long the shoe drivers take from a card's last byte to the daemon holding its Reading.

SPEC.md §2 gives the host 2 ms at the 99th percentile from a frame's last
byte to the published event; the driver's share is measured here, in
microseconds (median and 99th percentile over single cards):

- session: NativeSession.receive() of one card frame (pure protocol logic:
  decode, duplicate filter, Reading);
- beetek framer: TokenStream.feed() of one ` [Game]<Card:4S> ` token;
- pty native / pty beetek: a real pseudo-terminal, from os.write() of the
  bytes on the shoe's side to driver.poll() returning the card (kernel pty,
  select, read, decode, Reading), same thread, nothing else running;
- acknowledge: NativeDriver.acknowledge() up to the Ack frame written.

    .venv/bin/python benchmarks/drivers_latency.py [--cards N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import tty

from firmware_protocol import CardRead, Heartbeat, Hello, encode
from shoed.drivers import open_driver
from shoed.drivers.beetek import TokenStream
from shoed.drivers.native import host_hello
from shoed.drivers.native_session import NativeSession


def summary(samples_ns: list[int]) -> str:
    us = sorted(s / 1000 for s in samples_ns)
    return f"median {statistics.median(us):8.1f} us   p99 {us[int(len(us) * 0.99)]:8.1f} us   (n={len(us)})"


def bench_session(cards: int) -> list[int]:
    session = NativeSession("native:bench", host_hello(boot=1))
    now = time.monotonic_ns()
    session.link_up(0, now, time.time_ns())
    session.receive(encode(Hello(boot=7)) + encode(Heartbeat(seq=0, unacked=0)), now, time.time_ns())
    frames = [encode(CardRead(seq=(i + 1) % 65536, rank=i % 13 + 1, suit=i % 4)) for i in range(cards)]
    out = []
    for frame in frames:
        t0 = time.perf_counter_ns()
        readings, _ = session.receive(frame, now, 0)
        out.append(time.perf_counter_ns() - t0)
        assert readings[0].kind == "card"
    return out


def bench_framer(cards: int) -> list[int]:
    stream = TokenStream()
    out = []
    for _ in range(cards):
        t0 = time.perf_counter_ns()
        found = stream.feed(b" [Game]<Card:4S> ")
        out.append(time.perf_counter_ns() - t0)
        assert found
    return out


def pty_pair(directory: str) -> tuple[int, str]:
    master, slave = os.openpty()
    tty.setraw(slave)
    path = os.path.join(directory, "shoe")
    os.symlink(os.ttyname(slave), path)
    os.close(slave)
    return master, path


def drain(master: int) -> None:
    os.set_blocking(master, False)
    try:
        while os.read(master, 65536):
            pass
    except (BlockingIOError, OSError):
        pass


def bench_pty(name: str, cards: int) -> tuple[list[int], list[int]]:
    with tempfile.TemporaryDirectory() as d:
        master, path = pty_pair(d)
        driver = open_driver(name, path)
        try:
            if name == "native":
                os.write(master, encode(Hello(boot=7)) + encode(Heartbeat(seq=0, unacked=0)))
                while not any(r.kind == "hello" for r in driver.poll(0.5)):
                    pass
            latency, ack = [], []
            for i in range(cards):
                if name == "native":
                    data = encode(CardRead(seq=i + 1, rank=i % 13 + 1, suit=i % 4))
                else:
                    data = f" [Game]<Card:{'A23456789TJQK'[i % 13]}{'CDHS'[i % 4]}> ".encode()
                t0 = time.perf_counter_ns()
                os.write(master, data)
                readings = []
                while not readings:
                    readings = [r for r in driver.poll(1.0) if r.kind == "card"]
                latency.append(time.perf_counter_ns() - t0)
                t0 = time.perf_counter_ns()
                driver.acknowledge(readings[0])
                ack.append(time.perf_counter_ns() - t0)
                if i % 64 == 0:
                    drain(master)  # what the driver sent (acks, heartbeats): keep the pty buffer empty
            return latency, ack
        finally:
            driver.close()
            os.close(master)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=2000)
    args = parser.parse_args()
    print(f"session  receive(card frame)       {summary(bench_session(args.cards))}")
    print(f"beetek   framer feed(token)        {summary(bench_framer(args.cards))}")
    latency, ack = bench_pty("native", args.cards)
    print(f"native   pty write -> poll card    {summary(latency)}")
    print(f"native   acknowledge -> Ack sent   {summary(ack)}")
    latency, _ = bench_pty("beetek", args.cards)
    print(f"beetek   pty write -> poll card    {summary(latency)}")


if __name__ == "__main__":
    main()
