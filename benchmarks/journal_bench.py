"""How fast the journal is on this disk: append latency with fsync, verify and recall throughput.

Run: .venv/bin/python benchmarks/journal_bench.py [--dir DIR] [--appends N] [--records N]
     .venv/bin/python benchmarks/journal_bench.py --ready-shoes 1000 [--keep DIR] [--rounds N]
     .venv/bin/python benchmarks/journal_bench.py --open-shoes 2000

The third form opens that many shoes' files in one journal, with fsync, and prints the time
each opening takes (its verified mark, rewritten whole, grows with every finished file) by
500s, with the mark's size.

The second form builds a sealed (forward-secure) journal of that many shoes as
the daemon writes it, then times, in interleaved rounds: `shoed journal verify
--verify-key` over the whole chain, and the real daemon's time to READY on it
with its verified mark, and without it (the first start, or a removed mark:
every finished file proved by its links and form).

DIR must be on the disk the daemon will journal to (the default, a temporary
directory under /var/tmp, usually is; /tmp may be a tmpfs where fsync costs
nothing). Figures are printed, not asserted: medians and 99th percentiles of
one run, and the ratio of the two canonical encoders measured side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from shoed.journal import Journal, read_recent, recall, verify
from shoed.journal import chain as ch

ROOT = Path(__file__).resolve().parents[1]

RESULT = {
    "kind": "event",
    "event": {
        "kind": "coup_result",
        "shoe": "S1",
        "coup": 1,
        "player_cards": ["9H", "KS"],
        "banker_cards": ["TD", "3C", "4H"],
        "player_total": 9,
        "banker_total": 7,
        "winner": "player",
        "natural": True,
        "player_pair": False,
        "banker_pair": False,
    },
}
READING = {
    "kind": "reading",
    "shoe": "S1",
    "card": "4H",
    "device_seq": 1234,
    "utc": "2024-05-01T20:01:02.345678Z",
    "mono_ns": 123456789012,
    "raw": "02 41 34 48 03 5a",
}


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def timed(fn, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter_ns()
        fn()
        out.append((time.perf_counter_ns() - t) / 1e3)
    return out


def line(name: str, samples_us: list[float]) -> str:
    return (
        f"{name:48} median {statistics.median(samples_us):9.1f} us   p99 {percentile(samples_us, 0.99):9.1f} us"
        f"   (n={len(samples_us)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", help="where to write (default: a temporary directory under /var/tmp)")
    parser.add_argument("--appends", type=int, default=400, help="appends timed per case")
    parser.add_argument("--records", type=int, default=50_000, help="records in the journal verified")
    parser.add_argument("--ready-shoes", type=int, metavar="N",
                        help="instead: verify time and time to READY on a sealed journal of N shoes")
    parser.add_argument("--keep", metavar="DIR", help="with --ready-shoes: use (or build and keep) the journal here")
    parser.add_argument("--rounds", type=int, default=3, help="with --ready-shoes: interleaved rounds")
    parser.add_argument("--open-shoes", type=int, metavar="N",
                        help="instead: the time to open each of N shoes' files, by 500s")
    args = parser.parse_args()
    if args.ready_shoes:
        ready_bench(args)
        return
    if args.open_shoes:
        open_bench(args)
        return
    base = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="shoed-journal-bench-", dir="/var/tmp"))
    print(f"journal bench in {base}")
    try:
        run(base, args)
    finally:
        if not args.dir:
            shutil.rmtree(base, ignore_errors=True)


def open_bench(args) -> None:
    base = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="shoed-journal-bench-", dir="/var/tmp"))
    try:
        times: dict[int, list[float]] = {}
        with Journal(base / "open", "T1") as journal:
            for n in range(1, args.open_shoes + 1):
                start = time.perf_counter()
                journal.open_shoe(f"S{n}")
                times.setdefault((n - 1) // 500, []).append((time.perf_counter() - start) * 1e6)
                journal.append(READING)
                if n % 500 == 0:
                    size = (base / "open" / "T1.verified").stat().st_size
                    print(line(f"open a file, {n - 499}-{n} (mark {size // 1024} KB)",
                               times[(n - 1) // 500]))
    finally:
        if not args.dir:
            shutil.rmtree(base, ignore_errors=True)


def run(base: Path, args) -> None:

    # The pure part of an append: canonical JSON and the hash, both encoders side by side.
    def seal_msgspec():
        ch.seal(READING, 7, ch.GENESIS, None)

    def seal_json():
        body = dict(READING, jseq=7, prev=ch.GENESIS)
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
        body["hash"] = ch.digest(text, None)
        json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()

    m = timed(seal_msgspec, 20_000)
    j = timed(seal_json, 20_000)
    print(line("seal one record (msgspec, used)", m))
    print(line("seal one record (json.dumps)", j))
    print(f"{'':48} json.dumps / msgspec = {statistics.median(j) / statistics.median(m):.2f}x")

    for keyed in (None, b"k" * 32):
        tag = "HMAC-SHA-256" if keyed else "SHA-256"
        with Journal(base / f"append-{tag}", "T1", keyed) as journal:
            journal.open_shoe("S1")
            single = timed(lambda journal=journal: journal.append(READING), args.appends)
            group = timed(lambda journal=journal: journal.append_many([READING, RESULT, RESULT]), args.appends)
        print(line(f"append 1 record + fsync ({tag})", single))
        print(line(f"append_many 3 records + 1 fsync ({tag})", group))

    t = time.perf_counter()
    directory = base / "verify"
    with Journal(directory, "T1") as journal:
        # A shoe of 80 coups, each five card readings and its result, as the
        # daemon would journal them (here 100 coups to a write, to build it fast).
        for shoe in range(max(1, args.records // 480)):
            journal.open_shoe(f"S{shoe + 1}")
            batch = []
            for coup in range(1, 81):
                result = {"kind": "event", "event": dict(RESULT["event"], shoe=f"S{shoe + 1}", coup=coup)}
                batch += [READING] * 5 + [result]
            journal.append_many(batch)
    built = time.perf_counter() - t
    t = time.perf_counter()
    report = verify(directory)
    took = time.perf_counter() - t
    assert report.ok
    print(f"{'built a journal to verify':48} {report.records} records in {report.files} files, {built:.1f} s")
    print(f"{'verify (SHA-256)':48} {report.records / took:9.0f} records/s   ({took:.2f} s)")
    t = time.perf_counter()
    reading = read_recent(directory, 10)
    coups = recall(reading.records, 10)
    took = time.perf_counter() - t
    print(
        f"{'recall last 10 coups':48} {took * 1e3:9.1f} ms   ({len(coups)} coups, {len(reading.records)} records read)"
    )



def ready_bench(args) -> None:
    sys.path.insert(0, str(ROOT))  # the test suite's daemon runner and journal writer
    from harness.processes import Daemon, remove_dir, run_shoed, short_dir
    from harness.records import write_journal

    base = short_dir("shoed-ready-bench-")
    keep = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="shoed-ready-", dir="/var/tmp"))
    journal, verify_key = keep / "journal", keep / "verify.key"
    try:
        if not journal.is_dir():
            run_shoed("keys", "journal", "--journal", str(journal), "--table", "t1", "--verify-key", str(verify_key),
                      check=True)
            started = time.perf_counter()
            counts = write_journal(journal, args.ready_shoes, odds=False)
            print(f"built a sealed journal of {args.ready_shoes} shoes in {time.perf_counter() - started:.1f} s: "
                  f"{counts}")
        files = sorted(journal.glob("t1-*.jsonl"))
        size = sum(f.stat().st_size for f in files)
        print(f"{len(files)} files, {size / 1e6:.1f} MB, in {journal}")
        phases: dict[str, list[float]] = {"verify --verify-key": [], "ready, with the mark": [],
                                          "ready, without the mark": []}
        for _ in range(args.rounds):
            started = time.perf_counter()
            done = run_shoed("journal", "verify", str(journal), "--verify-key", str(verify_key), "--json",
                             timeout=600)
            phases["verify --verify-key"].append(time.perf_counter() - started)
            report = json.loads(done.stdout)
            assert done.returncode == 0 and report["sealed"], done.stdout[-500:]
            for phase, mark in (("ready, with the mark", True), ("ready, without the mark", False)):
                if not mark:
                    (journal / "t1.verified").unlink(missing_ok=True)
                daemon = Daemon(base, "--source", f"native:{base}/no-shoe", journal=journal, ready_timeout=600)
                try:
                    line = next(x for x in daemon.lines if x.get("event") == "ready")
                    phases[phase].append(float(line["seconds"]))
                finally:
                    assert daemon.stop() == 0
        print(f"medians of {args.rounds} interleaved rounds (CPU count {os.cpu_count()}):")
        for phase, samples in phases.items():
            print(f"  {phase:28} {statistics.median(samples):7.3f} s   (all: {', '.join(f'{x:.3f}' for x in samples)})")
    finally:
        remove_dir(base)
        if not args.keep:
            shutil.rmtree(keep, ignore_errors=True)


if __name__ == "__main__":
    main()
