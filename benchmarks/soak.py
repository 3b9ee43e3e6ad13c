"""Soak: the daemon with its embedded virtual shoe dealing N shoes flat out; memory per shoe and the checks.

`shoed run --sim-pace 0 --sim-shoes N` (the virtual shoe on a pty, read by the
real native driver), a display (TableClient) connected throughout. After each
shoe the daemon's VmRSS is sampled. Printed: VmRSS every --every shoes, the
least-squares slope over all shoes and over the second half (after the
in-memory catch-up window of 5,000 events, about 8 shoes, has filled), and
the checks: every shoe reconciled (balanced), seq without gap in the journal
and at the display, the journal verified.

    .venv/bin/python benchmarks/soak.py [--shoes 200] [--every 10]

The same run with assertions is `SHOED_SOAK=1 pytest tests/reliability/test_soak.py` (1,000 shoes).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def slope(points: list[tuple[int, int]]) -> float:
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx


def main() -> None:
    from harness.records import Daemon, Display, iter_journal_events, remove_dir, short_dir, verify_journal

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=200)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--keep", action="store_true", help="keep the journal (its path is printed)")
    args = parser.parse_args()
    base = short_dir("shoed-soak-")
    daemon = display = None
    rss: list[tuple[int, int]] = []
    started = time.monotonic()
    try:
        daemon = Daemon(base, "--sim-pace", "0", "--sim-shoes", str(args.shoes), "--sim-seed", str(args.seed))
        display = Display(daemon)
        closed = 0
        while closed < args.shoes:
            if time.monotonic() - started > 120 * args.shoes:
                raise SystemExit(f"stalled after {closed} shoes")
            for event in display.poll(0.2):
                if event["kind"] == "shoe.closed":
                    closed += 1
                    rss.append((closed, daemon.rss_kb()[0]))
                    if closed % args.every == 0 or closed == 1:
                        print(f"shoe {closed:5d}   VmRSS {rss[-1][1] / 1024:6.1f} MB   "
                              f"{time.monotonic() - started:7.1f} s", flush=True)
        hwm = daemon.rss_kb()[1]
        code = daemon.stop()
        elapsed = time.monotonic() - started
        closed_events, seqs = [], []
        for event in iter_journal_events(base / "journal"):  # streamed: 1,000 shoes are 400 MB
            seqs.append(event["seq"])
            if event["kind"] == "shoe.closed":
                closed_events.append(event)
        got = [e["seq"] for e in display.events]
        report = verify_journal(base / "journal")
        cards = sum(e["reconciliation"]["seen"] for e in closed_events)
        print(f"{args.shoes} shoes, {cards:,} cards, {len(seqs):,} events in {elapsed:.0f} s; daemon exit {code}")
        print(f"VmRSS: shoe 1 {rss[0][1] / 1024:.1f} MB, last {rss[-1][1] / 1024:.1f} MB, peak (VmHWM) {hwm / 1024:.1f} MB")
        print(f"slope: {slope(rss):.1f} kB/shoe over all shoes, {slope(rss[len(rss) // 2:]):.1f} kB/shoe over the "
              "second half")
        print(f"every shoe reconciled (balanced): {all(e['reconciliation']['balanced'] for e in closed_events)} "
              f"({len(closed_events)} shoe.closed)")
        print(f"seq without gap: journal {seqs == list(range(1, len(seqs) + 1))}, display "
              f"{got == list(range(got[0], got[0] + len(got)))} (snapshots {len(display.snapshots)})")
        print(f"journal verifies: {report.get('ok')} ({report.get('records'):,} records)")
    finally:
        if display is not None:
            display.close()
        if daemon is not None:
            daemon.stop()
        if args.keep:
            print(f"journal kept in {base / 'journal'}")
        else:
            remove_dir(base)


if __name__ == "__main__":
    main()
