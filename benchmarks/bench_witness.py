"""What the external witness costs: on the table, in the witness's database, and in `verify --witness`.

- publish: the time `Publisher.publish()` takes per event with the journal head added and without
  it (the daemon's side; phases interleaved, medians of the rounds);
- record: the witness writing a poll's news in one transaction, per transaction and per event,
  on SQLite (always) and on PostgreSQL (with `--pg URL`), for 1 and for 100 events a transaction;
- compare: `journal verify --witness`'s look-up of every head and every event of a journal of
  `--shoes` shoes that the witness saw whole.

    .venv/bin/python benchmarks/bench_witness.py [--shoes 20] [--pg postgresql://...]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def bench_publish(rounds: int, events: int) -> dict:
    import zmq

    from shoed.net.publisher import Publisher

    head = {"file": 12, "jseq": 417, "hash": "5c" * 32}
    ctx = zmq.Context()
    phases = {"without head": [], "with head": []}
    seq = 0
    with Publisher(ctx, "tcp://127.0.0.1:*", "t1") as plain, \
            Publisher(ctx, "tcp://127.0.0.1:*", "t1", journal_head=lambda: head) as headed:
        sub = ctx.socket(zmq.SUB)  # a reader on each, so the messages are really queued and sent
        sub.setsockopt(zmq.SUBSCRIBE, b"")
        sub.rcvhwm = 0
        sub.connect(plain.endpoint)
        sub.connect(headed.endpoint)
        time.sleep(0.3)
        for _ in range(rounds):
            for name, pub in (("without head", plain), ("with head", headed)):
                start = time.perf_counter_ns()
                for _ in range(events):
                    seq += 1
                    pub.publish({"table": "t1", "seq": seq, "kind": "card", "card": "QH", "recipient": "banker",
                                 "index": 3, "total": 7, "shoe": "20261123T150053-1", "coup": 12,
                                 "mono_ns": seq, "utc": "2026-11-23T15:00:55.921Z", "source": "native:/dev/shoe"})
                phases[name].append((time.perf_counter_ns() - start) / events)
                while sub.poll(0):
                    sub.recv_multipart()
        sub.close(0)
    ctx.term()
    return {name: round(statistics.median(values)) for name, values in phases.items()}


def bench_record(url: str, transactions: int) -> dict:
    from shoed.witness.store import Head, SeenEvent, SeenHead, WitnessStore, utc_now

    out = {}
    with WitnessStore(url) as store:
        seq = (store.last_seq("bench") or 0) + 1
        for size in (1, 100):
            times = []
            for _ in range(transactions):
                head = Head(1, seq, "ab" * 32)
                batch = [SeenEvent("bench", s, "card", {"table": "bench", "seq": s, "kind": "card", "card": "9D"},
                                   head, "live", utc_now()) for s in range(seq, seq + size)]
                start = time.perf_counter()
                store.record(batch, [SeenHead("bench", head, seq + size - 1, "event", utc_now())])
                times.append(time.perf_counter() - start)
                seq += size
            median = statistics.median(times)
            out[f"{size} a transaction"] = {"ms per transaction": round(median * 1000, 2),
                                            "events per s": round(size / median)}
    return out


def bench_compare(shoes: int) -> dict:
    from shoed.witness.compare import compare
    from shoed.witness.store import WitnessStore
    from harness.records import write_journal
    from tests.witness.seen import saw_everything

    work = Path(tempfile.mkdtemp(prefix="shoed-bench-witness-"))
    try:
        journal = work / "journal"
        write_journal(journal, shoes=shoes, seed=1, odds=True)
        url = f"sqlite://{work}/w.db"
        saw_everything(journal, url)
        with WitnessStore(url) as store:
            runs = []
            for _ in range(3):
                start = time.perf_counter()
                report = compare(journal, store)
                runs.append(time.perf_counter() - start)
        assert report.ok
        return {"shoes": shoes, "heads": report.heads, "events": report.events,
                "seconds (median of 3)": round(statistics.median(runs), 3)}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="publish: interleaved rounds of each phase")
    parser.add_argument("--events", type=int, default=2000, help="publish: events a round")
    parser.add_argument("--transactions", type=int, default=200, help="record: transactions of each size")
    parser.add_argument("--shoes", type=int, default=20, help="compare: shoes in the journal")
    parser.add_argument("--pg", metavar="URL", help="also record on this PostgreSQL database")
    args = parser.parse_args()

    print("publish, ns per event (median of rounds):", bench_publish(args.rounds, args.events))
    work = Path(tempfile.mkdtemp(prefix="shoed-bench-witness-"))
    try:
        print("record on SQLite:", bench_record(f"sqlite://{work}/w.db", args.transactions))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.pg:
        print("record on PostgreSQL:", bench_record(args.pg, args.transactions))
    print("compare:", bench_compare(args.shoes))


if __name__ == "__main__":
    main()
