"""Exact odds of a coup for any remaining shoe, under any fixed tableau.

The engine counts coups the way the published tables do (see
docs/standards/baccarat-odds.md): every coup is an ordered sequence of six
cards drawn without replacement, and a coup that ends after four or five cards
is padded with every possible fifth and sixth card, so a shoe of N cards gives
N·(N-1)·…·(N-5) combinations. All counts are exact Python integers and every
house edge is an exact Fraction; nothing is sampled or rounded.

A composition is a tuple of counts: 13 counts by rank (ace, 2 … 9, ten, jack,
queen, king), or 10 counts by baccarat value (0 = tens and faces, 1 … 9). The
main bets need only values; the pair bets need ranks (J+J is a pair, J+Q is
not), so a value-class composition leaves the pair bets unpriced rather than
guessing how the tens and faces split.

Fewer than six cards left: no six-card sequence exists, so every count is 0
(`Counts.total == 0`, `Counts.enough_cards` False) and `house_edge` refuses.

Pure: no I/O, no clock. Runs after every coup of a live shoe, so the counting
is vectorised (about a millisecond); `exact_counts_reference` is the plain
nested-loop version it is checked against.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

from shoed.rules.cards import RANK_LETTERS, Card
from shoed.rules.coup import BANKER, PLAYER, TIE, settle
from shoed.rules.ruleset import DRAW, Ruleset

RANKS = 13
VALUES = 10
CARDS_PER_RANK_PER_DECK = 4
PAIR_BETS = ("player_pair", "banker_pair")

# Largest shoe the vectorised count handles in int64: its biggest intermediate
# is below N**6. Larger shoes fall back to the Python-int reference loops.
MAX_VECTOR_CARDS = max(n for n in range(6, 2000) if n**6 < 2**63)


# ----- compositions -------------------------------------------------------

Composition = tuple[int, ...]


def full_shoe(decks: int) -> Composition:
    """A fresh shoe of `decks` decks, as 13 counts by rank."""
    if isinstance(decks, bool) or not isinstance(decks, int) or decks < 1:
        raise ValueError(f"a shoe holds a positive whole number of decks, not {decks!r}")
    return (CARDS_PER_RANK_PER_DECK * decks,) * RANKS


def remaining(decks: int, dealt_cards: Iterable[Card]) -> Composition:
    """What is left of a `decks`-deck shoe after `dealt_cards` (burned cards
    included) left it. A card dealt more often than the shoe holds it is an
    error: the record and the shoe disagree, and the odds would be fiction."""
    counts = list(full_shoe(decks))
    seen = Counter(dealt_cards)
    for card in seen:
        if not isinstance(card, Card):
            raise TypeError(f"dealt cards are Card values, not {card!r}")
    for card, times in sorted(seen.items()):
        if times > decks:
            raise ValueError(
                f"{card} ({card.name}) was dealt {times} times, but a {decks}-deck shoe holds it {decks} times"
            )
        counts[card.rank - 1] -= times
    return tuple(counts)


def value_counts(composition: Composition) -> Composition:
    """The 10 counts by baccarat value of a composition (by rank or by value)."""
    comp = _checked(composition)
    if len(comp) == VALUES:
        return comp
    return (sum(comp[9:]),) + comp[:9]


def parse_remaining(text: str) -> Composition:
    """Read a `--remaining` specification. Two forms are accepted:

    - 13 rank counts, comma-separated, in the order A,2,3,4,5,6,7,8,9,T,J,Q,K:
      `"32,32,32,32,32,32,32,32,32,32,32,32,32"`; this prices every bet.
    - 10 value-class counts written `value=count`, each value 0..9 exactly once
      (0 = tens and faces together): `"0=128,1=32,2=32,...,9=32"`; this prices
      the main bets but not the pair bets, which need ranks.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError("empty shoe composition: give 13 rank counts (A..K) or ten value=count pairs (0..9)")
    items = [item.strip() for item in text.split(",")]
    if any("=" in item for item in items):
        return _parse_value_classes(items)
    if len(items) != RANKS:
        raise ValueError(
            f"expected 13 rank counts in the order {','.join(RANK_LETTERS)}, got {len(items)}; "
            "or write ten value=count pairs, e.g. 0=128,1=32,...,9=32"
        )
    return tuple(_count(item, f"rank {RANK_LETTERS[i]}") for i, item in enumerate(items))


def _parse_value_classes(items: list[str]) -> Composition:
    counts: dict[int, int] = {}
    for item in items:
        key, sep, number = item.partition("=")
        key = key.strip()
        if not sep or key not in {str(v) for v in range(VALUES)}:
            raise ValueError(f"bad value-class count {item!r}: write value=count with a value of 0..9, e.g. 0=128")
        value = int(key)
        if value in counts:
            raise ValueError(f"value {value} is given twice")
        counts[value] = _count(number, f"value {value}")
    missing = [str(v) for v in range(VALUES) if v not in counts]
    if missing:
        raise ValueError(f"value-class counts must name every value 0..9; missing {', '.join(missing)}")
    return tuple(counts[v] for v in range(VALUES))


def _count(text: str, what: str) -> int:
    text = text.strip()
    if not text.isdigit():
        raise ValueError(f"the count for {what} must be a whole number of cards, 0 or more, not {text!r}")
    return int(text)


def _checked(composition: Iterable[int]) -> Composition:
    comp = tuple(composition)
    if len(comp) not in (RANKS, VALUES):
        raise ValueError(f"a composition has 13 counts by rank or 10 by value, not {len(comp)}")
    for count in comp:
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
            raise ValueError(f"card counts are whole numbers, 0 or more, not {count!r}")
    return tuple(int(c) for c in comp)


# ----- counts ---------------------------------------------------------------


@dataclass(frozen=True)
class Counts:
    """Exact counts of six-card sequences (the published convention).

    `grid[k][p][b]` counts the coups that used 4 + k cards and ended with the
    Player on p and the Banker on b; every other figure but the naturals and
    the pairs is a sum over it. `player_pair` / `banker_pair` are None when the
    composition was given by value class (pairs need ranks).
    """

    cards: int
    total: int
    banker: int
    player: int
    tie: int
    banker_six: int  # Banker wins with a total of 6
    by_cards: dict[int, int]  # 4, 5, 6 -> count
    natural: int  # at least one natural
    player_pair: int | None
    banker_pair: int | None
    grid: tuple[tuple[tuple[int, ...], ...], ...]

    @property
    def enough_cards(self) -> bool:
        return self.total > 0

    def probability(self, name: str) -> Fraction:
        """Exact probability of one of the counted events, e.g. 'banker', 'tie'."""
        if not self.enough_cards:
            raise ValueError(_not_enough(self.cards))
        count = getattr(self, name)
        if count is None:
            raise ValueError(f"{name} needs counts by rank, not by value class")
        return Fraction(count, self.total)

    def to_json(self) -> dict[str, Any]:
        """The counts as JSON-ready data; unpriced pair counts are left out."""
        out = {
            "total": self.total,
            "banker": self.banker,
            "player": self.player,
            "tie": self.tie,
            "banker_six": self.banker_six,
            "natural": self.natural,
            "by_cards": {str(k): v for k, v in self.by_cards.items()},
        }
        for name in PAIR_BETS:
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        return out


def _not_enough(cards: int) -> str:
    return f"not enough cards: {cards} left; the odds count every coup as six cards drawn, so they need 6 or more"


def _falling(n: int, k: int) -> int:
    out = 1
    for i in range(k):
        out *= n - i
    return out


def _pair_count(composition: Composition, cards: int) -> int | None:
    """Sequences whose two cards of one hand share a rank: the pair needs only
    those two cards, the other four positions are any of the rest."""
    if len(composition) != RANKS:
        return None
    return sum(n * (n - 1) for n in composition) * _falling(cards - 2, 4)


def _counts_from_grid(grid: Any, natural: int, composition: Composition, cards: int) -> Counts:
    banker = player = tie = banker_six = 0
    for layer in grid:
        for p, row in enumerate(layer):
            for b, count in enumerate(row):
                if b > p:
                    banker += count
                    if b == 6:
                        banker_six += count
                elif p > b:
                    player += count
                else:
                    tie += count
    pairs = _pair_count(composition, cards)
    return Counts(
        cards=cards,
        total=banker + player + tie,
        banker=banker,
        player=player,
        tie=tie,
        banker_six=banker_six,
        by_cards={4 + k: sum(map(sum, layer)) for k, layer in enumerate(grid)},
        natural=natural,
        player_pair=pairs,
        banker_pair=pairs,
        grid=tuple(tuple(tuple(row) for row in layer) for layer in grid),
    )


def _empty_grid() -> list[list[list[int]]]:
    return [[[0] * VALUES for _ in range(VALUES)] for _ in range(3)]


# ----- the tableau as masks ----------------------------------------------------


def _tableau_key(ruleset: Ruleset) -> tuple[Any, ...]:
    if not ruleset.fixed_tableau:
        raise ValueError(
            f"odds need a fixed tableau; {ruleset.name} leaves some draws to a free choice of the active players"
        )
    if not {8, 9} <= ruleset.natural:
        raise ValueError(f"odds need 8 and 9 to be naturals (the tableau covers totals 0..7); {ruleset.name} differs")
    return (ruleset.natural, ruleset.player_rule, ruleset.banker_rule)


@lru_cache(maxsize=32)
def _masks(key: tuple[Any, ...]) -> tuple[np.ndarray[Any, Any], ...]:
    """For one tableau, which (player two-card total, banker two-card total,
    player's third card) cells end how: the four ways a coup can go."""
    natural_set, player_rule, banker_rule = key
    p2 = np.arange(VALUES)[:, None]
    b2 = np.arange(VALUES)[None, :]
    natural = np.isin(p2, list(natural_set)) | np.isin(b2, list(natural_set))
    open_ = ~natural
    player_draws = np.array([t < 8 and player_rule[t] == DRAW for t in range(VALUES)])[:, None]
    banker_draws_alone = np.array([t < 8 and banker_rule[t][10] == DRAW for t in range(VALUES)])[None, :]
    banker_draws_after = np.array([[t < 8 and banker_rule[t][e] == DRAW for e in range(VALUES)] for t in range(VALUES)])
    four = natural | (open_ & ~player_draws & ~banker_draws_alone)
    five_banker = open_ & ~player_draws & banker_draws_alone  # (p2, b2), then the banker's third f
    drawing = (open_ & player_draws)[:, :, None]
    five_player = drawing & ~banker_draws_after[None, :, :]  # (p2, b2, e)
    six = drawing & banker_draws_after[None, :, :]  # (p2, b2, e), then f
    masks = (natural, four, five_banker, five_player, six)
    for mask in masks:
        mask.setflags(write=False)  # shared by every later call
    return masks


# ----- index tables, built once ---------------------------------------------------


def _index_tables() -> tuple[np.ndarray[Any, Any], ...]:
    a, b, c, d = (x.ravel() for x in np.indices((VALUES,) * 4))  # draw order P1, B1, P2, B2
    # Swapping a hand's two cards changes neither the weight of the prefix (it
    # depends only on which values it holds), nor the totals: keep one order of
    # each hand and count it as many times as it has orders. 3025 prefixes, not 10**4.
    keep = (a <= c) & (b <= d)
    a, b, c, d = a[keep], b[keep], c[keep], d[keep]
    orders = (1 + (a < c).astype(np.int64)) * (1 + (b < d))
    positions = np.stack([a, b, c, d])
    # How many earlier cards of the prefix share each card's value.
    before_b = (b == a).astype(np.int64)
    before_c = (c == a).astype(np.int64) + (c == b)
    before_d = (d == a).astype(np.int64) + (d == b) + (d == c)
    group = ((a + c) % VALUES) * VALUES + (b + d) % VALUES  # (player total, banker total)
    # For the second moments Q[g, e, f] = sum of W4 * occ_e * occ_f over a group,
    # which is symmetric in (e, f): the position pairs i == j (first, four of
    # them) and i < j (six) suffice.
    pairs = [(i, i) for i in range(4)] + [(i, j) for i in range(4) for j in range(i + 1, 4)]
    moment_bins = np.concatenate([group * 100 + positions[i] * 10 + positions[j] for i, j in pairs]).astype(np.intp)
    r = np.arange(VALUES)
    shift = (r[:, None] - r[None, :]) % VALUES  # [final total, added card] -> earlier total
    return a, b, c, d, orders, before_b, before_c, before_d, moment_bins, shift


_A, _B, _C, _D, _ORDERS, _BEFORE_B, _BEFORE_C, _BEFORE_D, _MOMENT_BINS, _SHIFT = _index_tables()
_CARD = np.arange(VALUES)
_EYE = np.eye(VALUES, dtype=np.int64)


# ----- the engine ---------------------------------------------------------------


def exact_counts(ruleset: Ruleset, composition: Composition) -> Counts:
    """Exact counts for one shoe composition under the ruleset's fixed tableau.

    Raises ValueError for a ruleset with free-choice cells (Baccarat Royal) or
    a malformed composition. Fewer than six cards: all counts 0."""
    key = _tableau_key(ruleset)
    comp = _checked(composition)
    n_list = value_counts(comp)
    cards = sum(n_list)
    if cards < 6:
        return _counts_from_grid(_empty_grid(), 0, comp, cards)
    if cards > MAX_VECTOR_CARDS:
        return exact_counts_reference(ruleset, comp)
    natural_m, four_m, five_banker_m, five_player_m, six_m = _masks(key)
    n = np.array(n_list, dtype=np.int64)

    # Weight of every four-card value prefix: ordered draws without replacement.
    w4 = n[_A] * (n[_B] - _BEFORE_B) * (n[_C] - _BEFORE_C) * (n[_D] - _BEFORE_D) * _ORDERS
    # Grouped by (player total, banker total), the second moments of how often
    # each value occurs in the prefix are all the third cards need:
    #   Q[p, b, e, f] = sum W4 * occ_e * occ_f,  Occ = sum W4 * occ_v,  A = sum W4.
    # float64 sums are exact here: they stay below 16 * N**4 < 2**52.
    # Half weight on i == j, so that adding the transpose counts i < j both ways
    # and i == j once; halves of integers are exact in float64 too.
    w4f = w4.astype(np.float64)
    half = np.bincount(_MOMENT_BINS, np.concatenate((np.tile(w4f * 0.5, 4), np.tile(w4f, 6))), minlength=10**4)
    half = half.reshape(VALUES, VALUES, VALUES, VALUES)
    q = (half + half.transpose(0, 1, 3, 2)).astype(np.int64)
    occ = q.sum(axis=3) // 4  # every prefix holds four cards
    a = occ.sum(axis=2) // 4

    # A third card v after the prefix: S[p, b, v] = sum W4 * (n_v - occ_v).
    s = n[None, None, :] * a[:, :, None] - occ
    # The banker's third card f after e: sum W5 * (n_f - occ5_f) = n_f * S - T with
    # T = sum W5 * occ5_f = n_e * Occ_f - Q[e, f] + [e == f] * S.
    t = n[None, None, :, None] * occ[:, :, None, :] - q + _EYE * s[:, :, :, None]
    six = n[None, None, None, :] * s[:, :, :, None] - t
    six *= six_m[:, :, :, None]
    # Banker draws after a standing player: f lands on the banker's total.
    five_banker = s * five_banker_m[:, :, None]
    five_player = s * five_player_m

    four = (a * four_m).tolist()
    # Move third cards onto final totals: final = (two-card total + card) % 10.
    five = five_banker[:, _SHIFT, _CARD].sum(axis=2)  # (p, b3)
    five += five_player[_SHIFT, :, _CARD].sum(axis=1)  # (p3, b)
    six_by_final = six[_SHIFT[:, :, None, None], _SHIFT[None, None, :, :], _CARD[None, :, None, None],
                       _CARD[None, None, None, :]].sum(axis=(1, 3))

    pad4, pad5 = (cards - 4) * (cards - 5), cards - 5
    grid = [
        [[x * pad4 for x in row] for row in four],
        [[x * pad5 for x in row] for row in five.tolist()],
        six_by_final.tolist(),
    ]
    natural = int((a * natural_m).sum()) * pad4
    return _counts_from_grid(grid, natural, comp, cards)


def exact_counts_reference(ruleset: Ruleset, composition: Composition) -> Counts:
    """The same counts by plain nested loops over the ten value classes, with
    Python integers throughout: slow (a tenth of a second or so) but plainly right. The
    fast engine is tested against it, and uses it beyond int64's range."""
    key = _tableau_key(ruleset)
    comp = _checked(composition)
    n = list(value_counts(comp))
    cards = sum(n)
    grid = _empty_grid()
    if cards < 6:
        return _counts_from_grid(grid, 0, comp, cards)
    natural_set, player_rule, banker_rule = key
    pad4, pad5 = (cards - 4) * (cards - 5), cards - 5
    natural = 0
    four, five, six = grid
    for p1 in range(10):
        w1 = n[p1]
        if not w1:
            continue
        n[p1] -= 1
        for b1 in range(10):
            w2 = w1 * n[b1]
            if not w2:
                continue
            n[b1] -= 1
            for p2 in range(10):
                w3 = w2 * n[p2]
                if not w3:
                    continue
                n[p2] -= 1
                for b2 in range(10):
                    w4 = w3 * n[b2]
                    if not w4:
                        continue
                    n[b2] -= 1
                    pt, bt = (p1 + p2) % 10, (b1 + b2) % 10
                    if pt in natural_set or bt in natural_set:
                        four[pt][bt] += w4 * pad4
                        natural += w4 * pad4
                    elif player_rule[pt] != DRAW:
                        if banker_rule[bt][10] != DRAW:
                            four[pt][bt] += w4 * pad4
                        else:
                            for f in range(10):
                                five[pt][(bt + f) % 10] += w4 * n[f] * pad5
                    else:
                        for e in range(10):
                            w5 = w4 * n[e]
                            if not w5:
                                continue
                            p3 = (pt + e) % 10
                            if banker_rule[bt][e] != DRAW:
                                five[p3][bt] += w5 * pad5
                            else:
                                n[e] -= 1
                                for f in range(10):
                                    six[p3][(bt + f) % 10] += w5 * n[f]
                                n[e] += 1
                    n[b2] += 1
                n[p2] += 1
            n[b1] += 1
        n[p1] += 1
    return _counts_from_grid(grid, natural, comp, cards)


# ----- bets ---------------------------------------------------------------------


def player_expectation(ruleset: Ruleset, counts: Counts) -> dict[str, Fraction]:
    """Expected net win per unit staked on every bet the ruleset offers, exact.

    Payouts, commission and the banker-six rule come from `coup.settle`, the
    same code that settles a live coup. Each bet's settlement reads either the
    coup's result (winner, banker total) or one pair flag, never both, so its
    expectation needs only the marginal counts. Pair bets are left out when the
    composition was given by value class."""
    _tableau_key(ruleset)
    total = counts.total
    if total == 0:
        raise ValueError(_not_enough(counts.cards))
    results: Counter[tuple[str, int]] = Counter()
    for layer in counts.grid:
        for p, row in enumerate(layer):
            for b, count in enumerate(row):
                if count:
                    winner = BANKER if b > p else PLAYER if p > b else TIE
                    results[winner, b] += count
    player_pairs: list[tuple[bool, int]] = [(False, total)]
    banker_pairs: list[tuple[bool, int]] = [(False, total)]
    priced = counts.player_pair is not None and counts.banker_pair is not None
    if counts.player_pair is not None and counts.banker_pair is not None:
        player_pairs = [(True, counts.player_pair), (False, total - counts.player_pair)]
        banker_pairs = [(True, counts.banker_pair), (False, total - counts.banker_pair)]
    weights = {}
    for (winner, banker_total), count in results.items():
        for pp, pp_count in player_pairs:
            for bp, bp_count in banker_pairs:
                weights[winner, banker_total, pp, bp] = count * pp_count * bp_count
    # Every weight is a count of the result times one count of each pair flag.
    scale = total**3
    out = {}
    for name, payouts in _payouts(ruleset).items():
        expectation = Fraction(0)
        for net, cases in payouts:
            expectation += net * sum(weights.get(case, 0) for case in cases)
        out[name] = expectation / scale
    if not priced:
        for name in PAIR_BETS:
            out.pop(name, None)
    return out


_PAYOUTS: dict[tuple[Any, ...], dict[str, list[tuple[Fraction, list[tuple[Any, ...]]]]]] = {}


def _payouts(ruleset: Ruleset) -> dict[str, list[tuple[Fraction, list[tuple[Any, ...]]]]]:
    """For every bet, its distinct net results and the (winner, banker total,
    player pair, banker pair) cases paying each, from `settle`: the odds and
    the live table pay by the same code. Kept per set of bets."""
    key = tuple(sorted(ruleset.bets.items()))
    payouts = _PAYOUTS.get(key)
    if payouts is None:
        by_net: dict[str, dict[Fraction, list[tuple[Any, ...]]]] = {name: {} for name in ruleset.bets}
        for winner in (PLAYER, BANKER, TIE):
            for banker_total in range(VALUES):
                for pp in (True, False):
                    for bp in (True, False):
                        case = (winner, banker_total, pp, bp)
                        for name, net in settle(ruleset, *case).items():
                            by_net[name].setdefault(net, []).append(case)
        payouts = {name: list(nets.items()) for name, nets in by_net.items()}
        if len(_PAYOUTS) < 64:
            _PAYOUTS[key] = payouts
    return payouts


def house_edge(ruleset: Ruleset, counts: Counts) -> dict[str, Fraction]:
    """House edge per bet: minus the player's expected net win per unit staked
    (pushes count as staked, as in the published tables)."""
    return {name: -value for name, value in player_expectation(ruleset, counts).items()}


def unpriced_bets(ruleset: Ruleset, counts: Counts) -> list[str]:
    """Bets the ruleset offers that these counts cannot price (pairs from value classes)."""
    if counts.player_pair is not None:
        return []
    return [name for name in PAIR_BETS if name in ruleset.bets]


def live_odds(ruleset: Ruleset, composition: Composition) -> dict[str, Any] | None:
    """What a table display and surveillance are shown after every coup: the exact
    probabilities and the player's expectation of every bet on the remaining shoe.
    None when the ruleset has no fixed tableau or fewer than six cards are left."""
    if not ruleset.fixed_tableau:
        return None
    counts = exact_counts(ruleset, composition)
    if counts.total == 0:
        return None
    expectation = player_expectation(ruleset, counts)
    total = counts.total
    probabilities = {"banker": counts.banker / total, "player": counts.player / total, "tie": counts.tie / total}
    if counts.player_pair is not None and counts.banker_pair is not None:
        probabilities["player_pair"] = counts.player_pair / total
        probabilities["banker_pair"] = counts.banker_pair / total
    return {
        "cards_left": counts.cards,
        "remaining_by_rank": list(composition),
        "probabilities": probabilities,
        "player_expectation": {k: float(v) for k, v in expectation.items()},
        "favourable": sorted(k for k, v in expectation.items() if v > 0),
    }
