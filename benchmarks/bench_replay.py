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
    from tests.reliability.harness import write_journal

    return write_journal(directory, shoes, seed=seed, odds=odds)


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


def _file_job(job: tuple[str, str | None, int]) -> dict:
    """Verify and replay one shoe file on its own: it starts with a checkpoint, so it needs
    nothing from the files before it but the hash its first record links to (checked at the seam)."""
    from shoed.journal import chain as ch
    from shoed.replay import Replay

    path, _, _ = job
    state = Replay()
    first = last = None
    checkpoint = None
    cards = 0
    for item in ch.chain(Path(path).read_bytes(), prev=None, secret=None):
        if isinstance(item, ch.Bad):
            return {"path": path, "bad": item.reason}
        first = first or item
        last = item
        if checkpoint is None and item.get("kind") == "checkpoint":
            checkpoint = item.get("state")
        state.feed(item, None)
        if item.get("kind") == "step" and item["input"].get("kind") == "card":
            cards += 1
    end = state.controller.checkpoint() if state.controller is not None and state._checkpointable() else None
    return {"path": path, "bad": None, "prev": first["prev"], "hash": last["hash"], "checkpoint": checkpoint,
            "end": end, "differences": len(state.differences), "cards": cards, "file_seq": first["file_seq"]}


def parallel(directory: Path, processes: int) -> dict:
    """Both checks, shoe file by shoe file in `processes` processes, then the seams: each file links to
    the last hash of the file before it, and starts from the state the file before it ended in."""
    import multiprocessing as mp

    from shoed.journal.reader import journal_files

    files = [str(path) for chain in journal_files(directory).tables for path, _ in chain]
    t0 = time.perf_counter()
    with mp.get_context("fork").Pool(processes) as pool:
        results = pool.map(_file_job, [(f, None, i) for i, f in enumerate(files)], chunksize=8)
    seams = 0
    for before, after in zip(results, results[1:]):
        assert before["bad"] is None and after["bad"] is None, (before, after)
        assert after["prev"] == before["hash"], f"{after['path']} does not link to {before['path']}"
        if before["end"] is not None and after["checkpoint"] is not None:
            recorded = after["checkpoint"]  # compared on what it holds, as shoed.replay does
            assert {k: before["end"].get(k) for k in recorded} == recorded, \
                f"{after['path']} does not start where {before['path']} ended"
            seams += 1
    return {"seconds": time.perf_counter() - t0, "cards": sum(r["cards"] for r in results),
            "differences": sum(r["differences"] for r in results), "seams": seams}


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
        para = parallel(directory, os.cpu_count() or 2)
        assert para["differences"] == 0 and para["cards"] == cards
        print(f"  both, shoe files in {os.cpu_count()} processes + the seams   {para['seconds']:7.2f} s   "
              f"{cards / para['seconds']:>10,.0f} cards/s   ({para['seams']} seams checked)")
        rate = cards / whole["seconds"]
        print(f"target 100,000 cards/s for the full validation: {'met' if rate >= 100_000 else 'MISSED'} "
              f"({rate:,.0f})")
    finally:
        if not args.keep:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
