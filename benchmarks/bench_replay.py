"""Replay throughput: a journal of 1,000 shoes driven back through the table controller with full validation.

Generation (not timed as the figure): the virtual dealer deals 1,000
punto-banco shoes (shoed.simulate.dealer); each shoe event becomes the input
the native driver would give the daemon; the table controller takes it and the
input with its events is written with shoed.journal.Journal exactly as the
daemon writes it (one step record per input, a new file with a checkpoint at
each shoe, the live odds fed back after each coup). To generate fast, fsync
is skipped (a FileOps whose fsync does nothing): the bytes are the same.

Replay, timed (cards per second; records and events per second):

- verify: every line proved (SHA-256 over the line's own bytes, links,
  headers), a step's envelope and input decoded, its events left as bytes
  (`shoed.journal.reader.file_records(steps=True)`);
- controller: every recorded input driven through a controller started from
  its file's checkpoint, and the replayed events' canonical bytes compared
  with the recorded ones (`shoed.table.replay.Replay.feed_line`);
- both, as `shoed replay` does them (`shoed.journal.replay`): in one process,
  and in one process per CPU (the files apart, joined at their seams).

With `--against REV` the version at REV (a `git worktree` of it, in its own
processes) first writes its own journal of the same shoes (the same seed; with
`--keep`, give the `--shoes` the kept journal was made with), then the two
versions replay their journals in turn, `--rounds` times each; the figures are
medians. The controller alone is timed
in CPU time (µs a card: each input fed, nothing compared), the replays in wall time.

    .venv/bin/python benchmarks/bench_replay.py [--shoes 1000] [--dir /var/tmp] [--keep DIR]
                                                [--against REV] [--rounds 3] [--profile]

Target: 60,000 cards per second or more for the full validation on 2 cores, the
controller at 15 µs a card or less.
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
    from harness.records import write_journal

    return write_journal(directory, shoes, seed=seed, odds=odds)


def split(directory: Path) -> dict:
    """Verification and controller replay timed apart, file by file (as a replay holds one file
    at a time): each file verified and read (`shoed.journal.reader.file_records`, steps as
    StepLines), then its records driven through a Replay started from its checkpoint."""
    from shoed.journal.chain import StepLine
    from shoed.journal.reader import file_records, journal_files
    from shoed.table.replay import Replay

    verify_ns = replay_ns = 0
    records = cards = steps = events = differences = 0
    for files in journal_files(directory).tables:
        for path, name in files:
            t0 = time.perf_counter_ns()
            batch = list(file_records(path, name, None, steps=True))
            t1 = time.perf_counter_ns()
            state = Replay()
            for record in batch:
                if type(record) is StepLine:
                    state.feed_line(record, None)
                else:
                    state.feed(record, None)
            t2 = time.perf_counter_ns()
            assert not any(isinstance(r, Exception) or r.get("kind") is None for r in batch), "journal not intact"
            verify_ns += t1 - t0
            replay_ns += t2 - t1
            records += len(batch)
            cards += sum(1 for r in batch if r.get("kind") == "step" and r["input"].get("kind") == "card")
            steps, events, differences = steps + state.steps, events + state.events, differences + len(state.differences)
    return {"verify_s": verify_ns / 1e9, "replay_s": replay_ns / 1e9, "records": records, "cards": cards,
            "steps": steps, "events": events, "differences": differences}


# Run in a process of its own, by the version under test and by the one it is compared with (`--against`),
# each on a journal it wrote itself (the same seed: the same shoes, cards and events). The names are looked
# up where either layout keeps them (the table package, or the flat modules of versions before it).
MEASURE = r"""
import json, sys, time
try:
    from shoed.table.replay import controller_from_checkpoint
    from shoed.journal.replay import replay_journal
except ImportError:
    from shoed.replay import controller_from_checkpoint
    from shoed.replay_journal import replay_journal
from shoed.journal.reader import file_records, journal_files

directory, what = sys.argv[1], sys.argv[2]
if what == "generate":
    try:
        from harness.records import write_journal
    except ImportError:
        from tests.reliability.harness import write_journal
    from pathlib import Path
    print(json.dumps(write_journal(Path(directory), int(sys.argv[3]), seed=1, odds=True)))
elif what == "controller":
    cpu = 0.0
    cards = 0
    for files in journal_files(directory).tables:
        for path, name in files:
            table = None
            inputs = []
            for record in file_records(path, name, None):
                if record.get("kind") == "checkpoint" and table is None:
                    table = controller_from_checkpoint(record)
                elif record.get("kind") == "step":
                    inputs.append(record["input"])
            cards += sum(1 for item in inputs if item.get("kind") == "card")
            feed = table.feed
            t0 = time.process_time()
            for item in inputs:
                feed(item)
            cpu += time.process_time() - t0
    print(json.dumps({"us_per_card": cpu / cards * 1e6, "cards": cards}))
else:
    t0 = time.perf_counter()
    result = replay_journal(directory, jobs=int(what))
    took = time.perf_counter() - t0
    assert result.identical, "the replay must be identical"
    print(json.dumps({"seconds": took, "cards": result.cards, "cards_per_s": result.cards / took}))
"""


def measure(tree: Path, directory: Path, what: str, *more: str) -> dict:
    """One measurement (`controller`, or a replay in N processes) by the version in `tree`;
    `generate` writes that version's journal of `more[0]` shoes in `directory`."""
    import json
    import subprocess

    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, "-c", MEASURE, str(directory), what, *more], env=env, cwd=tree,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def compare(directory: Path, against: str, rounds: int, jobs: int, shoes: int) -> None:
    """This version and the one at `against`, in turn, `rounds` times each: medians. The version at
    `against` replays a journal of the same shoes that it writes itself first (a version reads the
    journals of its own format)."""
    import statistics
    import subprocess

    other = Path(tempfile.mkdtemp(prefix="shoed-bench-against-"))
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(other), against], check=True)
    journal = Path(tempfile.mkdtemp(prefix="shoed-bench-against-journal-", dir=directory.parent))
    try:
        print(f"the version at {against} writes its journal of {shoes} shoes")
        measure(other, journal, "generate", str(shoes))
        trees = {"this version": ROOT, f"at {against}": other}
        journals = {"this version": directory, f"at {against}": journal}
        got: dict[str, dict[str, list[float]]] = {name: {"controller": [], "1": [], str(jobs): []} for name in trees}
        for _ in range(rounds):
            for what in ("controller", "1", str(jobs)):
                for name, tree in trees.items():
                    figure = measure(tree, journals[name], what)
                    got[name][what].append(figure["us_per_card"] if what == "controller" else figure["cards_per_s"])
        print(f"medians of {rounds} rounds, the two versions in turn:")
        for name in trees:
            figures = got[name]
            print(f"  {name:>22}: controller {statistics.median(figures['controller']):5.1f} µs a card (CPU)   "
                  f"replay, 1 process {statistics.median(figures['1']):>8,.0f} cards/s   "
                  f"{jobs} processes {statistics.median(figures[str(jobs)]):>8,.0f} cards/s")
    finally:
        shutil.rmtree(journal, ignore_errors=True)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(other)], check=False)


def floor(directory: Path) -> dict:
    """The parts no replay in Python goes below, one process: every file read, every line
    split off, parsed by msgspec and hashed (SHA-256), nothing else (no links, no checks,
    no controller). With the controller's own time this bounds what more cores would give."""
    import hashlib

    import msgspec

    from shoed.journal.reader import journal_files

    decode = msgspec.json.Decoder().decode
    sha256 = hashlib.sha256
    t0 = time.perf_counter_ns()
    for files in journal_files(directory).tables:
        for path, _ in files:
            for line in path.read_bytes().splitlines():
                decode(line)
                sha256(line).hexdigest()
    return {"seconds": (time.perf_counter_ns() - t0) / 1e9}


def full(directory: Path, jobs: int) -> dict:
    """What `shoed replay --jobs N` does: every file verified and replayed, the seams joined."""
    from shoed.journal.replay import replay_journal

    t0 = time.perf_counter()
    result = replay_journal(directory, jobs=jobs)
    return {"seconds": time.perf_counter() - t0, "cards": result.cards, "differences": len(result.differences),
            "steps": result.steps, "events": result.events, "identical": result.identical}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=1000)
    parser.add_argument("--dir", default="/var/tmp", help="where the generated journal goes")
    parser.add_argument("--keep", metavar="DIR", help="use (or build and keep) the journal in DIR")
    parser.add_argument("--no-odds", action="store_true", help="journal without the live odds inputs")
    parser.add_argument("--profile", action="store_true", help="cProfile the full replay; print the top entries")
    parser.add_argument("--against", metavar="REV", help="compare with the version at this git revision")
    parser.add_argument("--rounds", type=int, default=3, help="with --against: measurements of each version")
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
            full(directory, 1)
            profiler.disable()
            pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
            return
        jobs = os.cpu_count() or 2
        if args.against:
            compare(directory, args.against, args.rounds, jobs, args.shoes)
        parts = split(directory)
        least = floor(directory)
        one = full(directory, 1)
        many = full(directory, jobs)
        assert parts["differences"] == 0 and one["identical"] and many["identical"], "the replay must be identical"
        cards = one["cards"]
        assert parts["cards"] == cards == many["cards"] and parts["steps"] == one["steps"] == many["steps"]
        print(f"replay of {parts['records']:,} records ({cards:,} cards, {parts['events']:,} events), "
              f"every event identical: True")
        print(f"  verify (read, SHA-256 over each line, links)      {parts['verify_s']:7.2f} s   "
              f"{cards / parts['verify_s']:>10,.0f} cards/s   {parts['records'] / parts['verify_s']:>10,.0f} records/s")
        print(f"  controller replay + event comparison             {parts['replay_s']:7.2f} s   "
              f"{cards / parts['replay_s']:>10,.0f} cards/s   {parts['events'] / parts['replay_s']:>10,.0f} events/s")
        print(f"  both, one process (shoed replay --jobs 1)        {one['seconds']:7.2f} s   "
              f"{cards / one['seconds']:>10,.0f} cards/s")
        print(f"  both, {jobs} processes (shoed replay, the default)   {many['seconds']:7.2f} s   "
              f"{cards / many['seconds']:>10,.0f} cards/s   ({many['seconds'] and one['seconds'] / many['seconds']:.2f}x)")
        print(f"  the floor: read, parse and hash every line alone  {least['seconds']:7.2f} s   "
              f"{cards / least['seconds']:>10,.0f} cards/s")
        rate = cards / many["seconds"]
        print(f"target 60,000 cards/s for the full validation on {jobs} cores: "
              f"{'met' if rate >= 60_000 else 'MISSED'} ({rate:,.0f})")
    finally:
        if not args.keep:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
