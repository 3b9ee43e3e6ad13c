"""A search for wrong cards in small camera frames: every combination of frame size, cover over the
card, rank, suit and design, on lettering and deck artwork never trained on.

The camera's one unforgivable answer is a wrong card. This script photographs each card of the
chosen ranks (all four suits) in every held-out lettering design (`vision_lab.hard_sets`) and in
every other held-out deck design (`vision_lab.decks`, alternate halves by `--designs`), framed as
a small camera over the shoe frames it (`hard_sets.FRAMED`: the card filling most of the frame,
tilted, slightly blurred, every third frame under a colour cast, saved as a JPEG), at each side in
`--sides`, with a finger or a chip over the card at each chance in `--cover`. It prints, per side
and cover, how many frames were read right, refused and read wrong (which must be 0), the aces
apart, and every wrong card with its frame's parameters.

    .venv/bin/python benchmarks/vision_search.py [--ranks A,2,3,4,K,Q,J] [--sides 96,112,128,160]
                                                 [--cover 0,0.5] [--seed 7000] [--designs even|odd]
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import cv2  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # vision_lab lives beside shoed; a shoed on PYTHONPATH (another version) comes first


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="A,2,3,4,K,Q,J", help="ranks (T for ten), each in all four suits")
    ap.add_argument("--sides", default="96,112,128,160", help="frame sides in pixels")
    ap.add_argument("--cover", default="0,0.5", help="chances of a finger or a chip over the card")
    ap.add_argument("--seed", type=int, default=7000)
    ap.add_argument("--designs", choices=("even", "odd"), default="even",
                    help="which half of the held-out deck designs (every other one)")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    import shoed
    from shoed.vision.recognize import Recognizer
    from vision_lab import decks, hard_sets

    print(f"shoed from {Path(shoed.__file__).parent}")
    recognizer = Recognizer()
    labels = [rank + suit for rank in args.ranks.split(",") for suit in "CDHS"]
    designs = decks.held_out_designs()[0 if args.designs == "even" else 1 :: 2]
    total = [0, 0, 0]  # right, wrong, refused
    aces = [0, 0, 0]
    for side in (int(s) for s in args.sides.split(",")):
        for cover in (float(c) for c in args.cover.split(",")):
            got = [0, 0, 0]
            options = {**hard_sets.FRAMED, "occlusion_p": cover}
            size = (4 * side, 4 * side)
            for i, label in enumerate(labels):
                seed = args.seed + side * 31 + int(cover * 10) * 7 + i * 101
                shots = hard_sets.held_out_shots(label, seed, size, designs, lettering=options, artwork=options)
                for j, (shot, name, _) in enumerate(shots):
                    frame = hard_sets.small_frame(shot, side, i + j)
                    result = recognizer.identify(frame.image)
                    k = 2 if result.card is None else 0 if result.card == frame.card else 1
                    if k == 1:
                        print(f"  WRONG {frame.card} -> {result.card} at {result.confidence:.2f}: side {side}, "
                              f"cover {cover}, {name}", flush=True)
                    got[k] += 1
                    if label[0] == "A":
                        aces[k] += 1
            n = sum(got)
            print(f"side {side:3} cover {cover:.1f}: {n:5} frames, right {got[0] / n:6.1%}, wrong {got[1]}, "
                  f"refused {got[2]}", flush=True)
            total = [a + b for a, b in zip(total, got, strict=True)]
    n = sum(total)
    print(f"all: {n} frames, right {total[0]} ({total[0] / n:.1%}), wrong {total[1]}, refused {total[2]}; "
          f"aces right {aces[0]}, wrong {aces[1]}, refused {aces[2]}")
    return 1 if total[1] else 0


if __name__ == "__main__":
    sys.exit(main())
