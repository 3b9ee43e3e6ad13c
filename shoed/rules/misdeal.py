"""Misdeals: what went wrong in a deal, which rule it breaks, and how it is put right.

The Macau statutory rules (docs/rules/macau-statutory-rules.txt, Art. X) say a deal that
breaks the drawing rules is corrected at once, and where it cannot be corrected
the coup is void. Each misdeal here names the rule, the card it concerns, and
whether and how the dealer corrects it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Kinds of misdeal, and how each is corrected.
EXTRA_CARD = "extra_card"  # a card drawn after the coup is complete, before the next is opened
MISSING_CARD = "missing_card"  # the coup was closed while a card was still due
UNREADABLE_CARD = "unreadable_card"  # the reader saw a card but could not identify it
FOREIGN_CARD = "foreign_card"  # an identity seen more often than the decks hold
CARD_AFTER_LAST_COUP = "card_after_last_coup"  # the cut card came out and the last coup is over
CARD_BEFORE_DECISION = "card_before_decision"  # a free-choice cell: a card came before the decision
CARD_OUT_OF_SEQUENCE = "card_out_of_sequence"  # a card while no coup is open (shoe not ready, burn over)
BURN_DURING_COUP = "burn_during_coup"  # a burn (card read in burn mode, or the burn button) while a coup card is due
BURN_SHORT = "burn_short"  # a card the shoe reported as a game card while the burn was still due
# Misdeals that a void leaves pending: they are not about the coup.
OUTLIVE_VOID = (CARD_AFTER_LAST_COUP, CARD_OUT_OF_SEQUENCE, BURN_SHORT)

# Corrections.
BURN = "burn"  # put the card to the discards; the coup goes on without it
RETURN = "return"  # the card is returned to its place (only where the shoe allows it)
ENTER_BY_HAND = "enter_by_hand"  # the dealer enters the identity at the console
DEAL = "deal"  # the dealer deals the card that is due
DECIDE = "decide"  # the active player gives the decision that is due
END_BURN = "end_burn"  # the burn ends short: the card is the coup's (burn_short's other correction)
VOID = "void"  # the coup cannot be corrected; it is void


@dataclass(frozen=True, slots=True)
class Misdeal:
    kind: str
    card_index: int | None  # index of the card in the coup (0 = the Player's first card)
    correctable: bool
    correction: str  # one of the corrections above
    reason: str
    card: str | None = None  # the card concerned, when it was read

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "card_index": self.card_index,
            "correctable": self.correctable,
            "correction": self.correction,
            "reason": self.reason,
            "card": self.card,
        }


def extra_card(card_index: int, card: str | None, correction_allowed: bool = True) -> Misdeal:
    return Misdeal(
        EXTRA_CARD,
        card_index,
        correction_allowed,
        BURN if correction_allowed else VOID,
        "the coup was already complete by the tableau: no further card is due "
        "until the next coup is opened; burn the card (Macau statutory rules Art. X)",
        card,
    )


def missing_card(card_index: int, due: str, correction_allowed: bool = True) -> Misdeal:
    return Misdeal(
        MISSING_CARD,
        card_index,
        correction_allowed,
        DEAL if correction_allowed else VOID,
        f"the coup was closed while a card was still due to the {due} by the tableau; "
        "deal the missing card (Macau statutory rules Art. X)",
        None,
    )


def unreadable_card(card_index: int, correction_allowed: bool = True) -> Misdeal:
    return Misdeal(
        UNREADABLE_CARD,
        card_index,
        correction_allowed,
        ENTER_BY_HAND if correction_allowed else VOID,
        "the reader saw a card but could not identify it; a card is never guessed: "
        "the dealer enters it by hand from the exposed card",
        None,
    )


def foreign_card(card_index: int | None, card: str, seen: int, held: int) -> Misdeal:
    return Misdeal(
        FOREIGN_CARD,
        card_index,
        False,
        VOID,
        f"{card} was seen {seen} times but the shoe holds only {held}: a foreign or "
        "duplicated card; the coup is void and the shoe must be checked",
        card,
    )


def card_after_last_coup(card: str | None) -> Misdeal:
    return Misdeal(
        CARD_AFTER_LAST_COUP,
        None,
        True,
        BURN,
        "the cut card has come out and the last coup is over (Macau statutory rules "
        "Art. III): no further coup is dealt from this shoe; burn the card",
        card,
    )


def card_before_decision(card_index: int, side: str, card: str | None) -> Misdeal:
    return Misdeal(
        CARD_BEFORE_DECISION,
        card_index,
        True,
        DECIDE,
        f"the {side} has a free choice (Baccarat Royal, Ziehungstabellen) and has not "
        "decided yet; enter the decision: on draw the card stands, on stand it is burned",
        card,
    )


def card_out_of_sequence(card: str | None, state: str) -> Misdeal:
    return Misdeal(
        CARD_OUT_OF_SEQUENCE,
        None,
        True,
        BURN,
        f"a card was drawn while {state}: cards are only accepted for an open coup "
        "or the burn; burn the card",
        card,
    )


def burn_during_coup(card_index: int, card: str | None) -> Misdeal:
    """A card read in burn mode, or the burn button, while the open coup has a card due:
    never burned silently (the coup would take the next card in its place)."""
    what = f"{card} was read in burn mode" if card else "the burn button was pressed"
    return Misdeal(
        BURN_DURING_COUP,
        card_index,
        True,
        BURN,
        f"{what} while the coup had a card due by the tableau (Macau statutory rules Art. X); "
        "the pit confirms the burn (burn_card: the coup takes the next card) or has the card returned",
        card,
    )


def burn_short(due: int | None, card: str | None, earlier: int | None = None) -> Misdeal:
    """A card the shoe itself reported as a game card (Bee-Tek `[Game]`, native mode game) while
    the burn was still due: `due` cards more (None: the exposed first card was due). Never burned
    silently (the coup would open on a later card, every card after it in the wrong hand), never
    dealt unasked (the burn would end short). `earlier`: a burn_short misdeal still open, which this
    card came after. The pit decides: burn_card (a burn after all; the burn goes on) or end_burn
    (the burn ends short; the card is the coup's next card)."""
    what = f"{card} was reported by the shoe as a game card" if card else \
        "a card the reader could not identify was reported by the shoe as a game card"
    if earlier is not None:
        state = f"misdeal {earlier} (burn_short) was open"
    elif due is None:
        state = "the burn's exposed first card was due (Macau statutory rules Art. II)"
    else:
        state = f"the burn called for {due} more card{'s' if due != 1 else ''} (Macau statutory rules Art. II)"
    return Misdeal(
        BURN_SHORT,
        None,
        True,
        BURN,
        f"{what} while {state}: it is neither burned nor dealt; the pit decides: burn_card "
        "(a burn after all: the burn goes on) or end_burn (the burn ends short: the card is the coup's next card)",
        card,
    )
