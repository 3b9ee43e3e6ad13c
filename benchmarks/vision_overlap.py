"""Two cards in view, one lying partly over the other: what the camera answers.

Which of two cards in view was dealt, the picture does not tell, so the answer
wanted is no card (`several_cards`, or any other refusal). This script
photographs `--count` pairs of different cards, the second partly over the
first (`vision_lab.hard_sets.overlapping`: the lettering designs in turn, at
1280 x 960), and counts the answers: refused (by reason), read as the card
underneath, read as the card on top, read as a card not in view (which must be
0), printing every card read.

    .venv/bin/python benchmarks/vision_overlap.py [--count 200] [--seed 11] [--keep DIR]
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import collections  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import cv2  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # vision_lab lives beside shoed; a shoed on PYTHONPATH (another version) comes first


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--keep", help="save the picture of every card read in this folder")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    from shoed.vision.recognize import Recognizer
    from vision_lab import hard_sets

    recognizer = Recognizer()
    answers: collections.Counter[str] = collections.Counter()
    reasons: collections.Counter[str] = collections.Counter()
    for i, (picture, (under, over), design) in enumerate(hard_sets.overlapping(args.count, args.seed)):
        result = recognizer.identify(picture)
        if result.card is None:
            answers["refused"] += 1
            reasons[(result.reason or "").split(" (")[0]] += 1
            continue
        answer = "under" if result.card == under else "over" if result.card == over else "NOT IN VIEW"
        answers[answer] += 1
        print(f"  {i}: {under} under {over} ({design}): read as {result.card} at {result.confidence:.2f} ({answer})",
              flush=True)
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
            cv2.imwrite(os.path.join(args.keep, f"{i}_{under}_{over}_{result.card}.png"), picture)
    n = sum(answers.values())
    print(f"{n} pictures: refused {answers['refused']} ({', '.join(f'{r} {c}' for r, c in reasons.most_common())}); "
          f"read as the card underneath {answers['under']}, as the card on top {answers['over']}, "
          f"as a card not in view {answers['NOT IN VIEW']}")
    return 1 if answers["NOT IN VIEW"] else 0


if __name__ == "__main__":
    sys.exit(main())
