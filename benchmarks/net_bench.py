"""Publish latency of shoed's event socket: one subscriber, then 100 and a stalled one.

Measures, over TCP loopback with the real `shoed.net.publisher.Publisher`:

- the time a `publish()` call takes in the daemon (it must never wait);
- the latency from `publish()` to a subscriber's `recv` (monotonic clock,
  shared by the processes on one Linux machine);

with one subscriber, with 100 subscribers reading, and with the same 100 plus
one that stopped reading with its queue full. The stalled display must not
move the figures: the ratio of the last two runs is the one to watch (the
first two show what fan-out to 100 costs). Prints medians, 99th percentiles
and the ratios, all from one invocation.

    .venv/bin/python benchmarks/net_bench.py [--events 1000] [--rate 200]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import statistics
import time


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def measuring_subscriber(endpoint: str, ready, results, expected: int) -> None:
    import zmq

    ctx = zmq.Context()
    sub = ctx.socket(zmq.SUB)
    sub.rcvhwm = 100_000
    sub.setsockopt(zmq.SUBSCRIBE, b"t1.")
    sub.connect(endpoint)
    latencies = []
    signalled = False
    while len(latencies) < expected:
        if not sub.poll(10_000):
            break
        topic, payload = sub.recv_multipart()
        now = time.monotonic_ns()
        if not signalled:
            ready.put("measuring")
            signalled = True
        if topic == b"t1.card":
            event = json.loads(payload)
            if event.get("measure"):
                latencies.append((now - event["sent_ns"]) / 1000.0)
    results.put(latencies)
    sub.close(0)
    ctx.term()


def crowd(endpoint: str, count: int, ready, stop, pause: float = 0.02) -> None:
    """`count` subscribers that keep reading, in one process (in batches `pause`
    seconds apart, to leave the machine's CPU to the measured subscriber)."""
    import zmq

    ctx = zmq.Context()
    subs = []
    poller = zmq.Poller()
    for _ in range(count):
        sub = ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.SUBSCRIBE, b"t1.")
        sub.connect(endpoint)
        poller.register(sub, zmq.POLLIN)
        subs.append(sub)
    heard = set()
    while not stop.is_set():
        if pause:
            time.sleep(pause)
        for sock, _ in poller.poll(50):
            while True:
                try:
                    sock.recv_multipart(zmq.NOBLOCK)
                except zmq.Again:
                    break
            if sock not in heard:
                heard.add(sock)
                if len(heard) == count:
                    ready.put("crowd")
    for sub in subs:
        sub.close(0)
    ctx.term()


def stalled(endpoint: str, ready, stop, wait: float = 30.0) -> None:
    """A display that connects, reads one message (waiting up to `wait` seconds for
    it), and then never again."""
    import zmq

    ctx = zmq.Context()
    sub = ctx.socket(zmq.SUB)
    sub.rcvhwm = 10
    sub.setsockopt(zmq.RCVBUF, 4096)
    sub.setsockopt(zmq.SUBSCRIBE, b"t1.")
    sub.connect(endpoint)
    sub.poll(int(wait * 1000))
    sub.recv_multipart()
    ready.put("stalled")
    stop.wait()
    sub.close(0)
    ctx.term()


def run(events: int, rate: float, crowd_size: int, with_stalled: bool) -> dict:
    import zmq

    from shoed.net.publisher import Publisher

    mpctx = mp.get_context("spawn")
    ready, results, stop = mpctx.Queue(), mpctx.Queue(), mpctx.Event()
    ctx = zmq.Context()
    pub = Publisher(ctx, "tcp://127.0.0.1:*", "t1", sndhwm=1000)
    procs = [mpctx.Process(target=measuring_subscriber, args=(pub.endpoint, ready, results, events))]
    if crowd_size:
        procs.append(mpctx.Process(target=crowd, args=(pub.endpoint, crowd_size, ready, stop)))
    if with_stalled:
        procs.append(mpctx.Process(target=stalled, args=(pub.endpoint, ready, stop)))
    for p in procs:
        p.start()
    waiting = len(procs)
    deadline = time.monotonic() + 60
    while waiting:
        pub.heartbeat()
        time.sleep(0.05)
        while not ready.empty():
            ready.get()
            waiting -= 1
        if time.monotonic() > deadline:
            raise SystemExit("subscribers did not connect")
    seq = 0
    if crowd_size:
        # Fill the stalled display's queue and socket buffers before measuring
        # (the same burst without one, so the runs differ only by it).
        pad = "x" * 500
        for _ in range(20_000):
            seq += 1
            pub.publish({"table": "t1", "seq": seq, "kind": "card.dealt", "pad": pad})
        time.sleep(1.0)  # let the readers drain the burst
    publish_us = []
    interval = 1.0 / rate
    next_at = time.monotonic()
    for _ in range(events):
        seq += 1
        event = {"table": "t1", "seq": seq, "kind": "card.dealt", "card": "9H", "side": "player",
                 "coup": 17, "measure": True, "sent_ns": time.monotonic_ns()}
        t0 = time.perf_counter_ns()
        pub.publish(event)
        publish_us.append((time.perf_counter_ns() - t0) / 1000.0)
        next_at += interval
        pause = next_at - time.monotonic()
        if pause > 0:
            time.sleep(pause)
    latencies = results.get(timeout=60)
    stop.set()
    for p in procs:
        p.join(10)
        if p.is_alive():
            p.terminate()
    pub.close()
    ctx.term()
    return {
        "received": len(latencies),
        "latency_p50_us": statistics.median(latencies),
        "latency_p99_us": percentile(latencies, 99),
        "publish_p50_us": statistics.median(publish_us),
        "publish_p99_us": percentile(publish_us, 99),
        "publish_max_us": max(publish_us),
    }


def catch_up(count: int) -> tuple[float, int]:
    """Seconds for a TableClient to fill `count` missed events from a snapshot endpoint."""
    import collections
    import threading

    import zmq

    from shoed.net.catchup import CatchupServer, Endpoint
    from shoed.net.client import TableClient
    from shoed.net.publisher import Publisher

    journal = [{"table": "t1", "seq": s, "kind": "card", "card": "9H", "side": "player", "coup": s // 5}
               for s in range(1, count + 1)]
    ctx = zmq.Context()
    head = [0]  # what the snapshot says: the client joins at 0 and then hears of `count`
    pub = Publisher(ctx, "tcp://127.0.0.1:*", "t1")
    # The daemon's endpoint, every event read from the journal (none in memory).
    snap = CatchupServer(ctx, [Endpoint("tcp://127.0.0.1:*", lambda e: e, lambda s: s)], "t1",
                         collections.deque(), lambda a, b: iter(journal[a - 1:b]))
    snap.start()
    stop = threading.Event()

    def hand_over():  # the daemon's loop: a snapshot when the catch-up thread asks for one
        while not stop.is_set():
            now = time.monotonic()
            if snap.box.wanted(now):
                snap.box.put({"seq": head[0]}, now)
            time.sleep(0.001)

    server = threading.Thread(target=hand_over)
    server.start()
    client = TableClient(pub.endpoint, snap.endpoints[0], "t1", context=ctx)
    got = client.poll(2.0)  # the initial snapshot at seq 0
    pub.last_seq = count  # the events went out while the display was away
    started = time.perf_counter()
    while not got or got[-1]["seq"] < count:
        pub.heartbeat()
        got += client.poll(0.01)
    elapsed = time.perf_counter() - started
    filled = client.stats["filled"]
    stop.set()
    server.join()
    client.close()
    pub.close()
    snap.close()
    ctx.term()
    return elapsed, filled


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000, help="measured events per run")
    parser.add_argument("--rate", type=float, default=200.0, help="events per second")
    parser.add_argument("--crowd", type=int, default=99, help="extra reading subscribers in the later runs")
    args = parser.parse_args()
    runs = [
        ("1 subscriber", run(args.events, args.rate, 0, False)),
        (f"{args.crowd + 1} subscribers", run(args.events, args.rate, args.crowd, False)),
        (f"{args.crowd + 1} subscribers + 1 stalled", run(args.events, args.rate, args.crowd, True)),
    ]
    print(f"events per run: {args.events} at {args.rate:g}/s, TCP loopback, one Publisher")
    print(f"{'':32} {'publish() p50':>14} {'p99 µs':>8} {'to recv p50':>12} {'p99 µs':>8}")
    for label, r in runs:
        print(f"{label:32} {r['publish_p50_us']:14.1f} {r['publish_p99_us']:8.1f} "
              f"{r['latency_p50_us']:12.1f} {r['latency_p99_us']:8.1f}   ({r['received']} received)")
    (_, one), (_, crowd_only), (_, stalled_run) = runs
    print(f"stalled / 100 reading: latency p50 {stalled_run['latency_p50_us'] / crowd_only['latency_p50_us']:.2f}, "
          f"p99 {stalled_run['latency_p99_us'] / crowd_only['latency_p99_us']:.2f}; "
          f"publish() p50 {stalled_run['publish_p50_us'] / crowd_only['publish_p50_us']:.2f}, "
          f"p99 {stalled_run['publish_p99_us'] / crowd_only['publish_p99_us']:.2f}")
    print(f"100 reading / 1: latency p50 {crowd_only['latency_p50_us'] / one['latency_p50_us']:.2f}, "
          f"p99 {crowd_only['latency_p99_us'] / one['latency_p99_us']:.2f}")
    print(f"longest publish() call with the stalled subscriber: {stalled_run['publish_max_us']:.0f} µs")
    for count in (1_000, 10_000):
        elapsed, filled = catch_up(count)
        print(f"catch-up of {count} missed events from the snapshot endpoint: {elapsed * 1000:.0f} ms "
              f"({filled} filled, {filled / elapsed:,.0f} events/s)")


if __name__ == "__main__":
    main()
