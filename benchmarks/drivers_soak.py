"""The drivers against the virtual shoe (`shoed simulate`) on a faulty line: nothing lost, nothing doubled.

Starts `shoed simulate` on a pseudo-terminal behind a symlink with line noise,
lost frames, repeated frames, bit errors and unplugs, reads it with a driver
exactly as the daemon would (journal, then acknowledge), and compares what was
taken with the shoe's ground truth (`--truth`). Prints the figures: events,
cards, mismatches, duplicates dropped, gaps, rejected stretches by kind, link
losses, and how long the run took.

    .venv/bin/python benchmarks/drivers_soak.py [--protocol native|beetek] [--shoes N] [--seed S]

For beetek the run is clean unless faults are asked for with
--beetek-faults; then the figures show what the link cannot protect against
(beetek-shoe.md: no sequence number, no checksum): tokens lost, a token
repeated on the line taken as a second card, a bit error that still spells a
card, and what was caught and reported unreadable.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from shoed.drivers import open_driver


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocol", choices=("native", "beetek"), default="native")
    parser.add_argument("--shoes", type=int, default=1)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--beetek-faults", action="store_true", help="line faults on a Bee-Tek run too")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as d:
        link, truth_path = os.path.join(d, "shoe"), os.path.join(d, "truth.jsonl")
        faults = ["--garbage", "0.05", "--ber", "0.0002", "--lose", "0.05", "--repeat", "0.05",
                  "--disconnect-every", "2", "--reconnect-after", "0.3"]
        if args.protocol == "beetek" and not args.beetek_faults:
            faults = []
        cmd = [sys.executable, "-m", "shoed", "simulate", "--protocol", args.protocol, "--link", link, "--pace", "0",
               "--seed", str(args.seed), "--shoes", str(args.shoes), "--gate", "open", "--truth", truth_path, *faults]
        shoe = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            shoe.stdout.readline()  # the path: the shoe is up
            deadline = time.monotonic() + 10
            while not os.path.lexists(link) and time.monotonic() < deadline:
                time.sleep(0.01)
            t0 = time.monotonic()
            driver = open_driver(args.protocol, link, backoff_initial=0.05, backoff_max=0.5)
            journal, readings = [], []
            quiet_since = time.monotonic()
            while True:
                got = driver.poll(0.2)
                readings += got
                for r in got:
                    if r.kind in ("card", "unreadable", "button", "cut_card", "shoe_removed", "shoe_inserted", "alarm"):
                        journal.append(r)
                    if r.shoe_seq is not None:
                        driver.acknowledge(r)
                if got:
                    quiet_since = time.monotonic()
                if shoe.poll() is not None and time.monotonic() - quiet_since > 1.0:
                    break
                if time.monotonic() - quiet_since > 20:
                    print("no progress for 20 s: giving up", file=sys.stderr)
                    break
            elapsed = time.monotonic() - t0
            driver.close()
        finally:
            if shoe.poll() is None:
                shoe.send_signal(signal.SIGTERM)
            shoe.wait(timeout=10)
        with open(truth_path) as f:
            truth = [json.loads(line) for line in f if line.strip()]

    # The truth file also logs the line faults ("wire") and unplugs ("link"): not shoe events.
    reported = {"card", "unreadable", "alarm"} if args.protocol == "beetek" else None
    want = [t for t in truth if t["kind"] not in ("wire", "link") and (reported is None or t["kind"] in reported)]
    want_cards = [(t["card"], t["mode"]) for t in want if t["kind"] == "card"]
    got_cards = [(r.card, r.mode) for r in journal if r.kind == "card"]
    mismatched = sum(1 for a, b in zip(want_cards, got_cards) if a != b) + abs(len(want_cards) - len(got_cards))
    links = [r.link for r in readings if r.kind == "link"]
    print(f"protocol {args.protocol}, {args.shoes} shoe(s), seed {args.seed}, {elapsed:.1f} s")
    from collections import Counter

    print(f"events: truth {len(want)} {dict(Counter(t['kind'] for t in want))}")
    print(f"        taken {len(journal)} {dict(Counter(r.kind for r in journal))}")
    print(f"cards:  truth {len(want_cards)}, taken {len(got_cards)}"
          + (f", mismatched or missing {mismatched}" if args.protocol == "native" else ""))
    want_seq = [(t["kind"], t.get("card"), t.get("button")) for t in want]
    got_seq = [(r.kind, r.card, r.button) for r in journal]
    print(f"events in the shoe's order, exactly once: {'yes' if want_seq == got_seq else 'NO'}")
    print(f"link:   lost {links.count('lost')}, restored {links.count('restored')}")
    warnings = [r.code for r in readings if r.kind == "warning"]
    print(f"warnings: {len(warnings)} ({', '.join(sorted(set(warnings))) or 'none'})")
    if args.protocol == "native":
        s = driver.stats
        print(f"native: duplicates dropped {s.duplicates}, gaps {s.gaps}, acks sent {s.acks_sent}, "
              f"rejected {dict(sorted(s.rejected.items()))}")
    else:
        # No sequence numbers: align what was taken with the truth to see what the line did to it.
        import difflib

        ops = difflib.SequenceMatcher(a=want_cards, b=got_cards, autojunk=False).get_opcodes()
        same = sum(i2 - i1 for tag, i1, i2, _, _ in ops if tag == "equal")
        lost = sum(i2 - i1 for tag, i1, i2, _, _ in ops if tag in ("delete", "replace"))
        extra = sum(j2 - j1 for tag, _, _, j1, j2 in ops if tag in ("insert", "replace"))
        print(f"beetek: cards as sent {same}, not delivered {lost}, delivered but not as sent {extra} "
              f"(repeated tokens, bit errors that still spell a card), "
              f"unreadable reported {sum(1 for r in journal if r.kind == 'unreadable')}")
    return 0 if (mismatched == 0 and want_seq == got_seq) or args.protocol == "beetek" else 1


if __name__ == "__main__":
    sys.exit(main())
