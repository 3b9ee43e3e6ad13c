"""How fast the exact odds engine prices a shoe: the target is 5 ms or less per
composition on one core, since it runs after every coup of a live shoe.

Prints medians, in one run, of `exact_counts` on a fresh 8-deck shoe and on a
mid-shoe composition, of `house_edge` on top, and of the plain nested-loop
reference (fewer runs: it is slow), with the ratio between them.

    .venv/bin/python benchmarks/odds_bench.py [--runs 50] [--reference-runs 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from shoed.rules import odds
from shoed.rules.cards import full_deck
from shoed.rules.ruleset import load_ruleset


def median_ms(fn, runs: int) -> float:
    fn()  # warm caches: index tables, tableau masks, settlement table
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def mid_shoe(decks: int, seed: int = 8) -> tuple[int, ...]:
    """What is left of a shuffled shoe after half of it was dealt."""
    cards = full_deck() * decks
    random.Random(seed).shuffle(cards)
    return odds.remaining(decks, cards[: len(cards) // 2])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--reference-runs", type=int, default=5)
    parser.add_argument("--ruleset", default="macau-statutory")
    args = parser.parse_args()

    ruleset = load_ruleset(args.ruleset)
    shoes = {"8 decks, fresh": odds.full_shoe(8), "8 decks, half dealt": mid_shoe(8)}
    print(f"ruleset {ruleset.name}; medians of {args.runs} runs (reference: {args.reference_runs} runs)")
    print(f"{'shoe':<22} {'cards':>5} {'exact_counts':>13} {'+house_edge':>12} {'reference':>11} {'ratio':>7}")
    for label, composition in shoes.items():
        counts = odds.exact_counts(ruleset, composition)
        assert counts == odds.exact_counts_reference(ruleset, composition)
        fast = median_ms(lambda c=composition: odds.exact_counts(ruleset, c), args.runs)
        both = median_ms(lambda c=composition: odds.house_edge(ruleset, odds.exact_counts(ruleset, c)), args.runs)
        slow = median_ms(lambda c=composition: odds.exact_counts_reference(ruleset, c), args.reference_runs)
        print(
            f"{label:<22} {counts.cards:>5} {fast:>10.3f} ms {both:>9.3f} ms {slow:>8.1f} ms {slow / fast:>6.0f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
