"""Publish latency of shoed's event socket: one subscriber, then 100 and a stalled one.

Measures, over TCP loopback with the real `shoed.net.publisher.Publisher`:

- the time a `publish()` call takes in the daemon (it must never wait);
- the latency from `publish()` to a subscriber's `recv` (monotonic clock,
  shared by the processes on one Linux machine);

first with one subscriber, then with 100 subscribers reading plus one that
stopped reading with its queue full. The stalled display must not move the
figures. Prints medians and 99th percentiles, and the ratios of the two runs.

    .venv/bin/python benchmarks/net_bench.py [--events 2000] [--rate 500]
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


def crowd(endpoint: str, count: int, ready, stop) -> None:
    """`count` subscribers that keep reading, in one process."""
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


def stalled(endpoint: str, ready, stop) -> None:
    """A display that connects, reads one message, and then never again."""
    import zmq

    ctx = zmq.Context()
    sub = ctx.socket(zmq.SUB)
    sub.rcvhwm = 10
    sub.setsockopt(zmq.RCVBUF, 4096)
    sub.setsockopt(zmq.SUBSCRIBE, b"t1.")
    sub.connect(endpoint)
    sub.poll(30_000)
    sub.recv_multipart()
    ready.put("stalled")
    stop.wait()
    sub.close(0)
    ctx.term()


def run(events: int, rate: float, crowd_size: int) -> dict:
    import zmq

    from shoed.net.publisher import Publisher

    mpctx = mp.get_context("spawn")
    ready, results, stop = mpctx.Queue(), mpctx.Queue(), mpctx.Event()
    ctx = zmq.Context()
    pub = Publisher(ctx, "tcp://127.0.0.1:*", "t1", sndhwm=1000)
    procs = [mpctx.Process(target=measuring_subscriber, args=(pub.endpoint, ready, results, events))]
    if crowd_size:
        procs.append(mpctx.Process(target=crowd, args=(pub.endpoint, crowd_size, ready, stop)))
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
        # Fill the stalled display's queue and socket buffers before measuring.
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2000, help="measured events per run")
    parser.add_argument("--rate", type=float, default=500.0, help="events per second")
    parser.add_argument("--crowd", type=int, default=99, help="extra reading subscribers in the second run")
    args = parser.parse_args()
    one = run(args.events, args.rate, 0)
    many = run(args.events, args.rate, args.crowd)
    print(f"events per run: {args.events} at {args.rate:g}/s, TCP loopback, one Publisher")
    print(f"{'':38} {'p50 µs':>9} {'p99 µs':>9}")
    for label, r in (("1 subscriber", one), (f"{args.crowd + 1} subscribers + 1 stalled", many)):
        print(f"{label + ': publish() call':38} {r['publish_p50_us']:9.1f} {r['publish_p99_us']:9.1f}")
        print(f"{label + ': publish to recv':38} {r['latency_p50_us']:9.1f} {r['latency_p99_us']:9.1f}"
              f"   ({r['received']} received)")
    print(f"ratio (crowd+stalled / one): latency p50 {many['latency_p50_us'] / one['latency_p50_us']:.2f}, "
          f"p99 {many['latency_p99_us'] / one['latency_p99_us']:.2f}; "
          f"publish() p50 {many['publish_p50_us'] / one['publish_p50_us']:.2f}, "
          f"p99 {many['publish_p99_us'] / one['publish_p99_us']:.2f}")
    print(f"longest publish() call with the stalled subscriber: {many['publish_max_us']:.0f} µs")


if __name__ == "__main__":
    main()
