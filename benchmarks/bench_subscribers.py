"""Card latency with 1 subscriber, with 100, and with 100 plus one that stopped reading, in one run.

The real daemon and its scripted shoe as in bench_latency.py (a card frame
written to the pty until its event reaches the measuring subscriber), in three
phases of one daemon run:

1. the measuring subscriber alone;
2. 99 more subscribers reading everything (one process, so the machine's two
   cores are not taken by 99 processes);
3. the same 100 plus one that connected, read one message and never read
   again (its socket buffers small): its queue fills at the daemon's
   high-water mark and the daemon drops what it cannot take, for it alone.

The stalled display must not move the figures: compare phase 3 with phase 2
(the ratio printed last); phase 2 against phase 1 is what fan-out to 100 costs.

    .venv/bin/python benchmarks/bench_subscribers.py [--cards 3000]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import time

from bench_latency import EndToEnd, cpu_ticks, report_end_to_end, stolen_share
from net_bench import crowd, stalled  # the same subscriber processes as the transport benchmark


def wait_ready(run: EndToEnd, ready, what: str) -> None:
    deadline = time.monotonic() + 60
    while ready.empty():
        if time.monotonic() > deadline:
            raise SystemExit(f"{what} did not connect")
        run.pump(0.05)  # the daemon's heartbeats reach them meanwhile
    ready.get()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=3000, help="cards timed per phase")
    parser.add_argument("--crowd", type=int, default=99, help="extra reading subscribers in phases 2 and 3")
    parser.add_argument("--journal-dir", default="/var/tmp")
    args = parser.parse_args()
    mpctx = mp.get_context("spawn")
    ready, stop = mpctx.Queue(), mpctx.Event()
    run = EndToEnd(args.journal_dir)
    procs = []
    figures = {}
    try:
        one: list = []
        ticks = cpu_ticks()
        run.deal(args.cards, one, warm_up=50)
        figures["stolen 1"] = stolen_share(ticks, cpu_ticks())
        procs.append(mpctx.Process(target=crowd, args=(run.daemon.events, args.crowd, ready, stop, 0.0)))
        procs[-1].start()
        wait_ready(run, ready, "the crowd")
        many: list = []
        ticks = cpu_ticks()
        run.deal(args.cards, many, warm_up=50)
        figures["stolen 100"] = stolen_share(ticks, cpu_ticks())
        procs.append(mpctx.Process(target=stalled, args=(run.daemon.events, ready, stop, 60.0)))
        procs[-1].start()
        wait_ready(run, ready, "the stalled subscriber")
        # Fill the stalled display's queue and buffers before timing (the daemon's SNDHWM is 1000).
        before = run.events_seen
        warm: list = []
        while run.events_seen - before < 5000:
            run.deal(200, warm)
        jammed: list = []
        ticks = cpu_ticks()
        run.deal(args.cards, jammed, warm_up=0)
        figures["stolen stalled"] = stolen_share(ticks, cpu_ticks())
    finally:
        stop.set()
        for p in procs:
            p.join(10)
            if p.is_alive():
                p.terminate()
        run.close()
    print(f"cards per phase: {args.cards}; real daemon, pty -> subscriber on ipc; {os.cpu_count()} cores")
    print(f"1 subscriber (the host stole {figures['stolen 1']:.1%} of the CPU):")
    figures["1"] = report_end_to_end(one, "  ")
    print(f"{args.crowd + 1} subscribers, all reading (stolen {figures['stolen 100']:.1%}):")
    figures["100"] = report_end_to_end(many, "  ")
    print(f"{args.crowd + 1} subscribers reading + 1 stalled (its queue full; stolen {figures['stolen stalled']:.1%}):")
    figures["stalled"] = report_end_to_end(jammed, "  ")
    a, b, c = figures["1"], figures["100"], figures["stalled"]
    print(f"stalled / {args.crowd + 1} reading: p50 {c['p50'] / b['p50']:.2f}, p99 {c['p99'] / b['p99']:.2f}")
    print(f"{args.crowd + 1} reading / 1: p50 {b['p50'] / a['p50']:.2f}, p99 {b['p99'] / a['p99']:.2f}")


if __name__ == "__main__":
    sys.exit(main())
