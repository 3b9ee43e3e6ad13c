"""The shoe: its decks, the burn, the cut card, the last coup, and every card seen.

A shoe is filled with `decks` full decks. Before the first coup the dealer
exposes the first card and burns that many cards, tens and faces counting 10
(Macau statutory rules, docs/rules/macau-statutory-rules.txt, Art. II). The cut card lies
at least `cut_card_min_from_end` cards from the end; when it comes out, the
coup in progress is the last, or one more coup follows (Art. III, per ruleset).

The shoe counts every card by identity. An identity seen more often than the
decks hold is a foreign (or duplicated) card: an alarm, never silently taken.
At the end, a reconciliation puts every card in one category (`CATEGORIES`):
dealt in coups that counted, dealt in voided coups, burned, discarded by
misdeal corrections, or left in the shoe behind the cut card. A face-down
burn card the reader could not identify is out of the shoe, burned, though no
identity counts it. The shoe is balanced when every card out of it, seen or
burned unread, is in one of them and no identity is in excess.

Pure: no I/O, no clock. Mutable, but every change comes from a method call
with its inputs, so replaying the same calls gives the same shoe.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from shoed.rules.cards import Card, full_deck
from shoed.rules.ruleset import Ruleset

_DECK = tuple(full_deck())  # the 52 identities, in index order
_CARD_OF_TEXT = {card.text: card for card in _DECK}  # a card's notation ("9H", "TD") -> its identity

# Phases of a shoe.
BURN_FIRST = "burn_first"  # waiting for the exposed first card
BURNING = "burning"  # burning the cards the first card called for
DEALING = "dealing"  # coups are dealt
FINISHED = "finished"  # the last coup is over; no further coup from this shoe
CLOSED = "closed"  # reconciled and closed


@dataclass(slots=True)
class CardCount:
    """Where the shoe's cards went."""

    coups: int = 0  # dealt in coups whose result counted
    burned: int = 0  # read or not
    unread: int = 0  # of the burned: face down and never read, their identity unknown
    discarded: int = 0  # misdeal corrections: extra cards burned, cards after the last coup
    voided: int = 0  # dealt in coups that were voided (and cards a void closed the misdeal of)


# Where a card of the shoe can end, as named in the reconciliation.
CATEGORIES = ("in_coups", "in_void_coups", "burned", "discarded", "left_in_shoe")


@dataclass(slots=True)
class Shoe:
    ruleset: Ruleset
    decks: int
    shoe_id: str = ""
    phase: str = BURN_FIRST
    burn_due: int = 0  # cards still to burn after the exposed first card
    burn_first: Card | None = None
    burned: list[Card] = field(default_factory=list)
    # A card's notation (Card.text: "9H", "TD") -> times seen, whatever its fate: every identity, from 0.
    # Counted by the text, whose hash is the string's own, in a plain dict that holds every identity (a
    # look-up made at the cost of a dict's, no default to fill in): a card is noted on every card out of the shoe.
    seen: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_CARD_OF_TEXT, 0))
    counts: CardCount = field(default_factory=CardCount)
    cut_card_seen: bool = False
    last_coup: int | None = None  # number of the last coup, once the cut card has come out
    coups_dealt: int = 0  # coups opened so far
    # A burn card burned unread is counted out of the shoe (`counts.unread`); False: as a table of behaviour 1
    # counted it (burned, not out of the shoe), for the journals it recorded (shoed.table.controller.BEHAVIOUR).
    counts_unread: bool = True
    # Cards seen, whatever their fate: the sum of `seen`, kept as the cards come and go back.
    total_seen: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        if self.ruleset.burn == "none" and self.phase == BURN_FIRST:
            self.phase = DEALING

    # ----- cards ---------------------------------------------------------
    @property
    def capacity(self) -> int:
        return 52 * self.decks

    def note(self, card: Card) -> tuple[int, bool]:
        """Count one card out of the shoe. Returns (times seen, excess): excess is
        True when the identity was seen more often than the decks hold."""
        seen, text = self.seen, card.text
        n = seen[text] + 1
        seen[text] = n
        self.total_seen += 1
        return n, n > self.decks

    def returned(self, card: Card) -> None:
        """A card counted out of the shoe was put back (a misdeal correction): it will be read again."""
        self.seen[card.text] -= 1
        self.total_seen -= 1

    def excess_cards(self) -> dict[str, int]:
        excess = sorted((_CARD_OF_TEXT[text], n) for text, n in self.seen.items() if n > self.decks)
        return {card.text: n - self.decks for card, n in excess}

    def remaining_by_rank(self) -> tuple[int, ...]:
        """Cards left in the shoe by rank (ace..king), as far as the reads tell."""
        left = [4 * self.decks] * 13
        for text, n in self.seen.items():
            left[_CARD_OF_TEXT[text].rank - 1] -= n
        return tuple(max(0, v) for v in left)

    def remaining_by_value(self) -> tuple[int, ...]:
        by_rank = self.remaining_by_rank()
        values = [0] * 10
        for rank, n in enumerate(by_rank, start=1):
            values[rank if rank < 10 else 0] += n
        return tuple(values)

    @property
    def cards_out(self) -> int:
        """Cards out of the shoe: those seen, and the burn cards burned unread."""
        return self.total_seen + self.counts.unread

    @property
    def cards_left(self) -> int:
        return max(0, self.capacity - self.cards_out)

    # ----- burn ----------------------------------------------------------
    def burn(self, card: Card) -> None:
        """A card drawn in burn mode. The first one is exposed and sets how many follow."""
        self.burned.append(card)
        self.counts.burned += 1
        if self.phase == BURN_FIRST:
            self.burn_first = card
            self.burn_due = card.burn_count
            self.phase = BURNING if self.burn_due else DEALING
        elif self.phase == BURNING:
            self._burned_one()
        # A burn outside the burn procedure is a dealer's own choice: counted, nothing more.

    def burn_unread(self) -> bool:
        """A face-down burn card the reader could not identify: it need not be read, and counts as
        burned while the burn is due: a card out of the shoe, no identity seen. False, and nothing
        counted, outside that part of the burn (the exposed first card must be known: it sets the count)."""
        if self.phase != BURNING:
            return False
        self.counts.burned += 1
        if self.counts_unread:
            self.counts.unread += 1
        self._burned_one()
        return True

    def burned_unread_late(self) -> None:
        """A card never read, burned by the pit's word once the burn was over (a burn_short's burn_card): a card
        out of the shoe, burned, no identity seen."""
        self.counts.burned += 1
        if self.counts_unread:
            self.counts.unread += 1

    def unread_identified(self, card: Card) -> tuple[int, bool]:
        """A burn card burned unread whose identity is known now (a card-reading shuffler's order): seen,
        no longer unread. Returns what `note` returns."""
        if self.counts.unread:
            self.counts.unread -= 1
        return self.note(card)

    def _burned_one(self) -> None:
        self.burn_due -= 1
        if self.burn_due <= 0:
            self.phase = DEALING

    @property
    def burn_complete(self) -> bool:
        return self.phase not in (BURN_FIRST, BURNING)

    # ----- coups and the cut card -----------------------------------------
    def open_coup(self) -> int:
        """Open the next coup; returns its number (1-based)."""
        self.coups_dealt += 1
        return self.coups_dealt

    def cut_card(self, coup_in_progress: bool) -> int:
        """The cut card came out. Returns the number of the last coup."""
        if not self.cut_card_seen:
            self.cut_card_seen = True
            current = self.coups_dealt if coup_in_progress else self.coups_dealt + 1
            self.last_coup = current + (1 if self.ruleset.last_coup == "one-more" else 0)
        return self.last_coup  # type: ignore[return-value]

    def discard(self) -> None:
        """A card out of the shoe goes to the discard: a misdeal's card burned, a foreign card."""
        self.counts.discarded += 1

    def coup_counted(self, cards: int) -> None:
        """A coup's result stands: its cards are dealt in coups that counted."""
        self.counts.coups += cards

    def coup_voided(self, dealt: int, counted: bool, closed: int = 0) -> None:
        """A coup is voided: its `dealt` cards move to the voided ones (out of the coups that counted
        if its result had stood: `counted`), with the cards of the misdeals the void closes (`closed`:
        an extra card lies on the table with them)."""
        if counted:
            self.counts.coups -= dealt
        self.counts.voided += dealt + closed

    def coup_finished(self, number: int) -> None:
        if self.last_coup is not None and number >= self.last_coup:
            self.phase = FINISHED

    @property
    def may_open_coup(self) -> bool:
        return self.phase == DEALING

    # ----- the end --------------------------------------------------------
    def reconcile(self) -> dict[str, Any]:
        """Account for every card of the shoe."""
        missing_by_identity = {}
        for card in _DECK:
            left = self.decks - self.seen[card.text]
            if left > 0:
                missing_by_identity[card.text] = left
        counts = self.counts
        accounted = counts.coups + counts.voided + counts.burned + counts.discarded
        out = self.cards_out
        excess = self.excess_cards()
        return {
            "decks": self.decks,
            "capacity": self.capacity,
            "seen": self.total_seen,
            "in_coups": counts.coups,
            "in_void_coups": counts.voided,
            "burned": counts.burned,
            # Of the burned, those never read: named only when there are any.
            **({"burned_unread": counts.unread} if counts.unread else {}),
            "discarded": counts.discarded,
            "accounted": accounted,
            "unaccounted": out - accounted,
            "left_in_shoe": self.cards_left,
            "excess": excess,
            "left_by_identity": missing_by_identity,
            "categories": {"in_coups": counts.coups, "in_void_coups": counts.voided, "burned": counts.burned,
                           "discarded": counts.discarded, "left_in_shoe": self.cards_left},
            "balanced": accounted == out and not excess,
            "coups": self.coups_dealt,
            "burn_first": str(self.burn_first) if self.burn_first else None,
        }

    def close(self) -> dict[str, Any]:
        report = self.reconcile()
        self.phase = CLOSED
        return report
