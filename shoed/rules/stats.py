"""Statistics of one shoe for the table display: what has been won, and what is left.

Counts of Banker, Player and Tie wins, pairs and naturals come from the
results (the same outcomes the roads read, see `shoed.rules.roads`). Cards
dealt, and the cards left in each value class 0-9, come from the deck count
and the cards seen. Pure functions, no I/O.

Value classes: a card's baccarat value, so class 0 holds the tens and the
faces (16 cards a deck) and classes 1-9 hold four cards a deck each.

A card burned face down has been taken from the shoe but no one knows its
value: it stays among the cards left of its (unknown) class, and is counted
in `burned_face_down` so that `cards_in_shoe` is still exact. More copies of
a card than the shoe holds is an error: the count is never bent to fit.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from shoed.rules.cards import Card, parse_card
from shoed.rules.roads import BANKER, PLAYER, TIE, as_outcomes

if TYPE_CHECKING:
    from shoed.rules.coup import CoupResult

CARDS_PER_DECK = 52


class StatsError(ValueError):
    """Cards or counts that cannot come from the shoe described."""


@dataclass(frozen=True, slots=True)
class Tally:
    """What the shoe's coups came to."""

    coups: int
    banker: int
    player: int
    tie: int
    banker_pairs: int
    player_pairs: int
    naturals: int

    def to_json(self) -> dict[str, Any]:
        return {
            "coups": self.coups,
            "banker": self.banker,
            "player": self.player,
            "tie": self.tie,
            "banker_pairs": self.banker_pairs,
            "player_pairs": self.player_pairs,
            "naturals": self.naturals,
        }


def tally(results: Iterable[object]) -> Tally:
    """Count wins, pairs and naturals in results (text notation, outcomes or finished coups)."""
    outcomes = as_outcomes(results)
    return Tally(
        coups=len(outcomes),
        banker=sum(o.winner == BANKER for o in outcomes),
        player=sum(o.winner == PLAYER for o in outcomes),
        tie=sum(o.winner == TIE for o in outcomes),
        banker_pairs=sum(o.banker_pair for o in outcomes),
        player_pairs=sum(o.player_pair for o in outcomes),
        naturals=sum(o.natural for o in outcomes),
    )


def value_classes(decks: int) -> tuple[int, ...]:
    """Cards of each value 0..9 in a full shoe of `decks` decks."""
    return (16 * decks,) + (4 * decks,) * 9


@dataclass(frozen=True, slots=True)
class ShoeStats:
    """Statistics of one shoe so far."""

    decks: int
    tally: Tally
    cards_dealt: int  # cards dealt into coups
    cards_burned: int  # burned face up (seen) and face down
    burned_face_down: int
    cards_left_by_value: tuple[int, ...]  # value 0..9: not yet seen (includes face-down burns)

    @property
    def cards_left(self) -> int:
        """Cards not yet seen, face-down burns included."""
        return sum(self.cards_left_by_value)

    @property
    def cards_in_shoe(self) -> int:
        """Cards still in the shoe (face-down burns are out of it)."""
        return self.cards_left - self.burned_face_down

    def to_json(self) -> dict[str, Any]:
        return {
            "decks": self.decks,
            **self.tally.to_json(),
            "cards_dealt": self.cards_dealt,
            "cards_burned": self.cards_burned,
            "burned_face_down": self.burned_face_down,
            "cards_left": self.cards_left,
            "cards_in_shoe": self.cards_in_shoe,
            "cards_left_by_value": {str(v): n for v, n in enumerate(self.cards_left_by_value)},
        }


def _cards(items: Iterable[Card | str]) -> list[Card]:
    return [item if isinstance(item, Card) else parse_card(item) for item in items]


def shoe_stats(
    results: Iterable[object] = (),
    *,
    decks: int,
    dealt: Iterable[Card | str] = (),
    burned: Iterable[Card | str] = (),
    burned_face_down: int = 0,
) -> ShoeStats:
    """Statistics of a shoe of `decks` decks: `results` as for `tally`, `dealt` the
    cards dealt into coups, `burned` the burn cards seen face up, `burned_face_down`
    how many were burned unseen. Cards may be Card values or notation ("9H")."""
    if not isinstance(decks, int) or decks < 1:
        raise StatsError(f"a shoe holds one deck or more, not {decks!r}")
    if not isinstance(burned_face_down, int) or burned_face_down < 0:
        raise StatsError(f"cards burned face down must be a count, not {burned_face_down!r}")
    dealt_cards, burned_cards = _cards(dealt), _cards(burned)
    copies = [0] * CARDS_PER_DECK
    for card in dealt_cards + burned_cards:
        copies[card.index] += 1
        if copies[card.index] > decks:
            raise StatsError(f"{copies[card.index]} x {card.name} seen; a shoe of {decks} decks holds {decks}")
    left = list(value_classes(decks))
    for card in dealt_cards + burned_cards:
        left[card.value] -= 1
    if burned_face_down > sum(left):
        raise StatsError(f"{burned_face_down} cards burned face down, only {sum(left)} left unseen")
    return ShoeStats(
        decks=decks,
        tally=tally(results),
        cards_dealt=len(dealt_cards),
        cards_burned=len(burned_cards) + burned_face_down,
        burned_face_down=burned_face_down,
        cards_left_by_value=tuple(left),
    )


def from_coups(
    coups: Iterable[CoupResult], *, decks: int, burned: Iterable[Card | str] = (), burned_face_down: int = 0
) -> ShoeStats:
    """Statistics from the shoe's finished coups (`shoed.rules.coup.CoupResult`)."""
    coups = list(coups)
    dealt = [card for coup in coups for card in (*coup.player_cards, *coup.banker_cards)]
    return shoe_stats(coups, decks=decks, dealt=dealt, burned=burned, burned_face_down=burned_face_down)
