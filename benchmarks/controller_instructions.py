"""The table controller's instructions a card, counted by callgrind: a figure that a loaded machine
does not blur (CPU times under load vary by 10% and more; the instructions executed do not).

The first FILES files of a journal (bench_replay.py's: `--keep DIR` there) are loaded, then every
file's inputs are fed REPS times through a controller started from its checkpoint; a second run
that only loads them is subtracted. `--against REV` counts the version at REV too (a git worktree),
in the same run, on the same journal or, with `--against-journal DIR2`, on one that version wrote of
the same shoes (bench_replay.py of that version, `--keep DIR2`: a version reads its own format).

    .venv/bin/python benchmarks/controller_instructions.py DIR [--files 4] [--reps 9] [--against REV]
                                                           [--against-journal DIR2]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FEED = r"""
import sys
from shoed.journal.reader import file_records, journal_files
try:
    from shoed.table.replay import controller_from_checkpoint
except ImportError:  # a version before the table package
    from shoed.replay import controller_from_checkpoint

directory, files, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
recorded, cards = [], 0
for table in journal_files(directory).tables:
    for path, name in table[:files]:
        checkpoint, inputs = None, []
        for record in file_records(path, name, None):
            if record.get("kind") == "checkpoint" and checkpoint is None:
                checkpoint = record
            elif record.get("kind") == "step":
                inputs.append(record["input"])
        cards += sum(1 for item in inputs if item.get("kind") == "card")
        recorded.append((checkpoint, inputs))
for _ in range(reps):
    for checkpoint, inputs in recorded:
        feed = controller_from_checkpoint(checkpoint).feed
        for item in inputs:
            feed(item)
print(cards * reps)
"""


def count(tree: Path, directory: str, files: int, reps: int) -> tuple[int, int]:
    """(instructions, cards fed) of one run under callgrind."""
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONHASHSEED="0")
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c",
                          FEED, directory, str(files), str(reps)], env=env, cwd=tree, capture_output=True,
                         text=True, check=True)
    refs = re.search(r"I\s+refs:\s+([\d,]+)", out.stderr)
    if refs is None:
        raise SystemExit(f"no instruction count from callgrind:\n{out.stderr[-2000:]}")
    return int(refs.group(1).replace(",", "")), int(out.stdout.split()[-1])


def per_card(tree: Path, directory: str, files: int, reps: int) -> float:
    loaded, _ = count(tree, directory, files, 0)
    fed, cards = count(tree, directory, files, reps)
    return (fed - loaded) / cards


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("journal", help="a journal directory (bench_replay.py --keep DIR)")
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--against", metavar="REV", help="count the version at this git revision too")
    parser.add_argument("--against-journal", metavar="DIR2", help="with --against: the journal that version wrote")
    args = parser.parse_args()
    journal = str(Path(args.journal).resolve())
    trees = {"this version": ROOT}
    journals = {"this version": journal}
    other = None
    if args.against:
        other = Path(tempfile.mkdtemp(prefix="shoed-count-against-"))
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(other), args.against],
                       check=True)
        trees[f"at {args.against}"] = other
        journals[f"at {args.against}"] = str(Path(args.against_journal or args.journal).resolve())
    try:
        for name, tree in trees.items():
            print(f"{name:>22}: {per_card(tree, journals[name], args.files, args.reps):10,.0f} instructions a card")
    finally:
        if other is not None:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(other)], check=False)


if __name__ == "__main__":
    main()
