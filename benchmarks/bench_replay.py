"""Replay throughput: a journal of 1,000 shoes driven back through the table controller with full validation.

Generation (not timed as the figure): the virtual dealer deals 1,000
punto-banco shoes (shoed.simulate.dealer); each shoe event becomes the input
the native driver would give the daemon; the table controller takes it and the
input with its events is written with shoed.journal.Journal exactly as the
daemon writes it (one step record per input, a new file with a checkpoint at
each shoe, the live odds fed back after each coup). To generate fast, fsync
is skipped (a FileOps whose fsync does nothing): the bytes are the same.

Replay, timed (cards per second; records and events per second):

- verify: every record read back and proved (canonical form, SHA-256, links),
  `shoed.journal.iter_records`;
- controller: every recorded input driven through a fresh controller and its
  events compared with the recorded ones, `shoed.replay.Replay.feed`, on
  records already read;
- both, as `shoed replay` does them.

    .venv/bin/python benchmarks/bench_replay.py [--shoes 1000] [--dir /var/tmp] [--keep DIR] [--profile]

Target: 100,000 cards per second or more for the full validation.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def generate(directory: Path, shoes: int, odds: bool, seed: int = 1) -> dict:
    from shoed.journal import FileOps, Journal
    from shoed.replay import checkpoint_record, step_record
    from shoed.rules.odds import live_odds
    from shoed.rules.ruleset import load_ruleset
    from shoed.simulate.dealer import DealSetup, deal
    from shoed.table import TableController
    from tests.reliability.harness import controller_inputs

    class NoSync(FileOps):
        def fsync(self, fd: int) -> None:  # generation only: the bytes written are the daemon's
            pass

    ruleset = load_ruleset("punto-banco")
    table = TableController("t1", ruleset, ruleset.decks)
    journal = Journal(directory, "t1", ops=NoSync())
    journal.open_shoe("table")
    journal.append(checkpoint_record(table))
    counts = {"inputs": 0, "cards": 0, "events": 0}

    def handle(item: dict) -> None:
        step = table.feed(item)
        journal.append(step_record(item, step.events))
        counts["inputs"] += 1
        counts["events"] += len(step.events)
        if item["kind"] == "card":
            counts["cards"] += 1
        if any(e["kind"] == "shoe.opened" for e in step.events):
            journal.open_shoe(table.shoe.shoe_id)
            journal.append(checkpoint_record(table))
        if odds and table.shoe is not None and any(e["kind"] in ("coup.result", "shoe.burn_complete")
                                                   for e in step.events):
            computed = live_odds(table.ruleset, table.shoe.remaining_by_rank())
            if computed is not None:
                handle({"kind": "odds", "odds": computed, "mono_ns": item["mono_ns"], "utc_ns": item["utc_ns"]})

    events = deal(DealSetup(ruleset, seed=seed, shoes=shoes))
    for item in controller_inputs(events):
        handle(item)
    journal.close()
    return counts


def replay(directory: Path) -> dict:
    """Time verification and controller replay separately, file by file, on the same records."""
    from shoed.journal.reader import _walk, journal_files
    from shoed.replay import Replay

    state = Replay()
    verify_ns = replay_ns = 0
    records = cards = 0
    tables = journal_files(directory).tables
    for files in tables:
        for i in range(len(files)):
            # One file at a time, chained to the one before (as iter_records does).
            t0 = time.perf_counter_ns()
            batch = []
            for item in _walk([files[: i + 1]], None) if i == 0 else _walk_one(files, i):
                if not isinstance(item, tuple):
                    raise SystemExit(f"journal not intact: {item}")
                batch.append(item[1])
            t1 = time.perf_counter_ns()
            for record in batch:
                state.feed(record, None)
                if record.get("kind") == "step" and record["input"].get("kind") == "card":
                    cards += 1
            t2 = time.perf_counter_ns()
            verify_ns += t1 - t0
            replay_ns += t2 - t1
            records += len(batch)
    return {"verify_s": verify_ns / 1e9, "replay_s": replay_ns / 1e9, "records": records, "cards": cards,
            "steps": state.steps, "events": state.events, "differences": len(state.differences)}


_last_hash: dict = {}


def _walk_one(files, i):
    """The records of file i, checked against the hash the previous file ended with."""
    from shoed.journal import chain as ch

    path, name = files[i]
    prev_path, prev_name = files[i - 1]
    prev = _last_hash.get(prev_path)
    first = True
    for item in ch.chain(path.read_bytes(), prev=prev, secret=None):
        if isinstance(item, ch.Bad):
            yield item
            return
        if first:
            first = False
            reason = ch.check_header(item, name=name, previous=(prev_path.name, prev_name.file_seq))
            if reason is not None:
                yield ch.Bad(1, 0, 1, reason)
                return
        _last_hash[path] = item["hash"]
        yield path, item


def full(directory: Path) -> dict:
    """What `shoed replay` does: iter_records into Replay.feed, timed as one."""
    from shoed.journal import iter_records
    from shoed.replay import Replay

    state = Replay()
    cards = 0
    t0 = time.perf_counter()
    for record in iter_records(directory):
        state.feed(record, None)
        if record.get("kind") == "step" and record["input"].get("kind") == "card":
            cards += 1
    return {"seconds": time.perf_counter() - t0, "cards": cards, "differences": len(state.differences),
            "steps": state.steps, "events": state.events}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=1000)
    parser.add_argument("--dir", default="/var/tmp", help="where the generated journal goes")
    parser.add_argument("--keep", metavar="DIR", help="use (or build and keep) the journal in DIR")
    parser.add_argument("--no-odds", action="store_true", help="journal without the live odds inputs")
    parser.add_argument("--profile", action="store_true", help="cProfile the full replay; print the top entries")
    args = parser.parse_args()
    if args.keep:
        directory = Path(args.keep)
        made = not directory.exists() or not any(directory.glob("*.jsonl"))
    else:
        directory = Path(tempfile.mkdtemp(prefix="shoed-replay-bench-", dir=args.dir))
        made = True
    try:
        if made:
            directory.mkdir(parents=True, exist_ok=True)
            t0 = time.perf_counter()
            counts = generate(directory, args.shoes, not args.no_odds)
            took = time.perf_counter() - t0
            size = sum(p.stat().st_size for p in directory.glob("*.jsonl"))
            print(f"generated {args.shoes} shoes in {took:.1f} s (fsync skipped): {counts['inputs']:,} inputs, "
                  f"{counts['cards']:,} cards, {counts['events']:,} events, {size / 1e6:.0f} MB in "
                  f"{len(list(directory.glob('*.jsonl')))} files")
        if args.profile:
            import cProfile
            import pstats

            profiler = cProfile.Profile()
            profiler.enable()
            full(directory)
            profiler.disable()
            pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
            return
        split = replay(directory)
        whole = full(directory)
        assert split["differences"] == 0 and whole["differences"] == 0, "the replay must be identical"
        cards = whole["cards"]
        print(f"replay of {split['records']:,} records ({cards:,} cards, {split['events']:,} events), "
              f"every event identical: {split['differences'] == 0}")
        print(f"  verify (read, canonical form, SHA-256, links)   {split['verify_s']:7.2f} s   "
              f"{cards / split['verify_s']:>10,.0f} cards/s   {split['records'] / split['verify_s']:>10,.0f} records/s")
        print(f"  controller replay + event comparison             {split['replay_s']:7.2f} s   "
              f"{cards / split['replay_s']:>10,.0f} cards/s   {split['events'] / split['replay_s']:>10,.0f} events/s")
        print(f"  both, as `shoed replay` does (one pass)          {whole['seconds']:7.2f} s   "
              f"{cards / whole['seconds']:>10,.0f} cards/s")
        rate = cards / whole["seconds"]
        print(f"target 100,000 cards/s for the full validation: {'met' if rate >= 100_000 else 'MISSED'} "
              f"({rate:,.0f})")
    finally:
        if not args.keep:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
