"""The weak-shuffle threshold: how long the longest surviving run is in a truly random shuffle.

For each shoe size, draws seeded random pairs (the previous shoe's dealt
order, the new order: two independent uniform permutations of the shoe) and
measures `longest_surviving_run` between them, the figure `alarm weak_shuffle`
is raised on. Prints the distribution of that length, the tail P(run >= L)
with its 95% upper bound (Clopper-Pearson; the rule of three when no trial
reached L), and the smallest L whose upper bound is at most the target
false-alarm rate: the value of shoed.rules.shuffle.WEAK_RUN for that size.

The previous shoe is dealt down to the cut card (14 cards behind it, the
rulesets' default), which is how the daemon compares them.

    .venv/bin/python benchmarks/shuffle_threshold.py [--trials 20000] [--decks 1,2,4,6,8] [--seed 16] [--rate 0.001]
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter

from shoed.rules.cards import full_deck
from shoed.rules.shuffle import FALSE_ALARM_RATE, WEAK_RUN, longest_surviving_run

BEHIND_CUT = 14


def upper_bound(hits: int, trials: int, confidence: float = 0.95) -> float | None:
    """One-sided upper confidence bound of a binomial proportion (Clopper-Pearson, by bisection); None for
    more than 100 hits, where the tail is far above any threshold and the sum below would underflow."""
    if hits > 100:
        return None
    alpha = 1 - confidence
    low, high = hits / trials, 1.0
    for _ in range(60):
        mid = (low + high) / 2
        # P(X <= hits | p = mid)
        term = (1 - mid) ** trials
        cdf = term
        for k in range(hits):
            term *= (trials - k) / (k + 1) * mid / (1 - mid)
            cdf += term
        if cdf > alpha:
            low = mid
        else:
            high = mid
    return high


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20000)
    parser.add_argument("--decks", default="1,2,4,6,8")
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--rate", type=float, default=FALSE_ALARM_RATE)
    args = parser.parse_args()
    cards = [str(card) for card in full_deck()]
    for decks in (int(d) for d in args.decks.split(",")):
        rng = random.Random(f"shuffle-threshold:{args.seed}:{decks}")
        shoe = cards * decks
        dealt = len(shoe) - BEHIND_CUT if len(shoe) > 2 * BEHIND_CUT else len(shoe)
        lengths: Counter[int] = Counter()
        start = time.perf_counter()
        for _ in range(args.trials):
            previous = shoe[:]
            rng.shuffle(previous)
            order = shoe[:]
            rng.shuffle(order)
            lengths[longest_surviving_run(previous[:dealt], order).length] += 1
        seconds = time.perf_counter() - start
        print(f"{decks} deck(s), {len(shoe)} cards, previous shoe dealt {dealt}: {args.trials} trials, "
              f"{seconds:.1f} s")
        chosen = None
        for length in range(1, max(lengths) + 2):
            tail = sum(n for size, n in lengths.items() if size >= length)
            bound = upper_bound(tail, args.trials)
            shown = "-" if bound is None else f"{bound:.5f}"
            print(f"  longest = {length:2d}: {lengths.get(length, 0):6d}   P(>= {length}) = {tail / args.trials:.5f}"
                  f"   95% upper bound {shown}")
            if chosen is None and bound is not None and bound <= args.rate:
                chosen = length
        print(f"  threshold for a false-alarm rate of at most {args.rate:g}: {chosen} "
              f"(shoed.rules.shuffle.WEAK_RUN: {WEAK_RUN.get(decks)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
