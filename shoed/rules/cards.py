"""Playing cards: identity, notation and baccarat value.

A card is a rank and a suit. Notation follows what dealers, shoes and
surveillance write: rank then suit (`9H`, `10h`, `TD`, `KS`, `as`), and the
suit-first form the Bee-Tek shoe sends (`H3`). Anything else is an error:
a card is never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Rank numbers: A=1, 2-9, T=10, J=11, Q=12, K=13.
RANK_LETTERS = "A23456789TJQK"
SUITS = "CDHS"
SUIT_NAMES = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
RANK_NAMES = {
    1: "ace", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven",
    8: "eight", 9: "nine", 10: "ten", 11: "jack", 12: "queen", 13: "king",
}

_RANK_BY_TOKEN = {letter: i + 1 for i, letter in enumerate(RANK_LETTERS)}
_RANK_BY_TOKEN["10"] = 10


class CardError(ValueError):
    """A card notation that does not name exactly one card."""


@dataclass(frozen=True, slots=True, order=True)
class Card:
    """One card of a standard 52-card French-suited deck."""

    rank: int  # 1 (ace) .. 13 (king)
    suit: str  # one of "CDHS"
    # Baccarat value: A=1, 2-9 face value, 10/J/Q/K = 0. Worked out from the rank
    # when the card is made (every coup reads it several times), not part of its identity.
    value: int = field(init=False, repr=False, compare=False)
    text: str = field(init=False, repr=False, compare=False)  # its notation, `str(card)`: "9H", "TD"

    def __post_init__(self) -> None:
        if not (isinstance(self.rank, int) and 1 <= self.rank <= 13):
            raise CardError(f"rank must be 1..13, not {self.rank!r}")
        if self.suit not in SUITS or len(self.suit) != 1:
            raise CardError(f"suit must be one of C, D, H, S, not {self.suit!r}")
        object.__setattr__(self, "value", self.rank if self.rank < 10 else 0)
        object.__setattr__(self, "text", RANK_LETTERS[self.rank - 1] + self.suit)

    @property
    def burn_count(self) -> int:
        """How many cards this card burns when exposed at the start of a shoe:
        its pip value, tens and faces counting 10 (Macau statutory rules, Art. II)."""
        return self.rank if self.rank < 10 else 10

    @property
    def index(self) -> int:
        """0..51, suit-major; stable across the project (journal, odds, vision)."""
        return SUITS.index(self.suit) * 13 + (self.rank - 1)

    @classmethod
    def from_index(cls, index: int) -> Card:
        if not 0 <= index < 52:
            raise CardError(f"card index must be 0..51, not {index}")
        return cls(index % 13 + 1, SUITS[index // 13])

    @property
    def name(self) -> str:
        return f"{RANK_NAMES[self.rank]} of {SUIT_NAMES[self.suit]}"

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Card({str(self)!r})"


def parse_card(text: str) -> Card:
    """Parse one card notation; raise CardError with a clear message otherwise."""
    if not isinstance(text, str):
        raise CardError(f"a card is written as text, not {type(text).__name__}")
    token = text.strip(" \t\r\n")
    if not token.isascii():  # "4\u017f".upper() is "4S": a letter outside ASCII never stands for a rank or suit
        raise CardError(f"unknown card {text!r}: a card is written in ASCII letters and digits")
    token = token.upper()
    if not token:
        raise CardError("empty card")
    # Rank then suit: "9H", "10H", "TH".
    if token[-1] in SUITS and token[:-1] in _RANK_BY_TOKEN:
        return Card(_RANK_BY_TOKEN[token[:-1]], token[-1])
    # Suit then rank: "H3", "H10" (as the Bee-Tek shoe sends).
    if token[0] in SUITS and token[1:] in _RANK_BY_TOKEN:
        return Card(_RANK_BY_TOKEN[token[1:]], token[0])
    raise CardError(
        f"unknown card {text!r}: write rank then suit, e.g. 9H, 10H, TD, KS, AS "
        "(ranks A 2-9 T/10 J Q K, suits C D H S)"
    )


def full_deck() -> list[Card]:
    """The 52 cards of one deck, in index order."""
    return [Card.from_index(i) for i in range(52)]
