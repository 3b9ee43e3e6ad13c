"""The coup: a state machine fed one card at a time, following the ruleset's tableau.

The 1st and 3rd cards go to the Player, the 2nd and 4th to the Banker; then the
tableau decides whether the Player and the Banker take a third card. At every
step the coup says who the next card is for, that a decision is awaited (a free
choice cell, as in Baccarat Royal), or that it is complete. A card that breaks
the sequence is not taken: the coup answers with a misdeal and stays as it was.

Coups are immutable values: every step returns a new coup, so the table
controller can keep, compare and replay them freely.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Any, TypeVar

import msgspec
from msgspec.structs import force_setattr

from shoed.rules import misdeal as md
from shoed.rules.cards import Card
from shoed.rules.ruleset import CHOICE, DRAW, Ruleset

T = TypeVar("T")

PLAYER, BANKER, TIE = "player", "banker", "tie"
DEAL_ORDER = (PLAYER, BANKER, PLAYER, BANKER)


def draw_order(player_cards: Sequence[T], banker_cards: Sequence[T]) -> list[T]:
    """The cards of a coup in the order they were drawn: Player, Banker, Player, Banker,
    then the Player's third card, then the Banker's (also for a coup voided part-way)."""
    first = []
    for i in range(2):
        first += [hand[i] for hand in (player_cards, banker_cards) if len(hand) > i]
    return first + list(player_cards[2:]) + list(banker_cards[2:])


def hand_total(cards: Iterable[Card]) -> int:
    total = 0
    for card in cards:
        total += card.value
    return total % 10


def _two_card_total(hand: tuple[Card, ...]) -> int:
    """The total of a hand's first two cards (what a natural and the tableau read)."""
    return (hand[0].value + hand[1].value) % 10


def is_pair(cards: Sequence[Card]) -> bool:
    """The first two cards of a hand have the same rank (J+J is a pair, J+Q is
    not: Macau statutory rules Art. XIII)."""
    return len(cards) >= 2 and cards[0].rank == cards[1].rank


def settle(ruleset: Ruleset, winner: str, banker_total: int, player_pair: bool, banker_pair: bool) -> dict[str, Fraction]:
    """Net units won (positive) or lost (negative) per unit staked on every bet
    the ruleset offers, for a finished coup."""
    return dict(_settlement(ruleset, winner, banker_total, player_pair, banker_pair)[0])


def _settlement(ruleset: Ruleset, winner: str, banker_total: int, player_pair: bool, banker_pair: bool
                ) -> tuple[dict[str, Fraction], dict[str, float | int]]:
    """The settlement and its JSON form, worked out once per ruleset and case: it
    depends only on the winner, a banker total of 6, and the pairs (24 cases)."""
    key = ("settle", winner, banker_total == 6, bool(player_pair), bool(banker_pair))
    known = ruleset.memo.get(key)
    if known is None:
        nets = _settle(ruleset, winner, banker_total, player_pair, banker_pair)
        known = ruleset.memo[key] = (nets, settlement_json(nets))
    return known


def _settle(ruleset: Ruleset, winner: str, banker_total: int, player_pair: bool, banker_pair: bool
            ) -> dict[str, Fraction]:
    out: dict[str, Fraction] = {}
    for name, bet in ruleset.bets.items():
        if name in (PLAYER, BANKER, "active_player", "active_banker"):
            side = BANKER if name.endswith(BANKER) else PLAYER
            if winner == TIE:
                net = bet.on_tie
            elif winner != side:
                net = Fraction(-1)
            else:
                net = bet.pays
                if side == BANKER and bet.banker_six_pays is not None and banker_total == 6:
                    net = bet.banker_six_pays
                net = net * (1 - bet.commission)
        elif name == TIE:
            net = bet.pays if winner == TIE else Fraction(-1)
        elif name == "player_pair":
            net = bet.pays if player_pair else Fraction(-1)
        elif name == "banker_pair":
            net = bet.pays if banker_pair else Fraction(-1)
        else:  # pragma: no cover - rulesets reject unknown bets on load
            raise ValueError(name)
        out[name] = net
    return out


class CoupResult(msgspec.Struct, frozen=True, gc=False):
    """A finished coup. A frozen struct (msgspec), made in C: one is made for every coup (no cycle
    can run through it, so the garbage collector need not track it)."""

    player_cards: tuple[Card, ...]
    banker_cards: tuple[Card, ...]
    player_total: int
    banker_total: int
    winner: str
    natural: bool
    player_pair: bool
    banker_pair: bool
    settlement: dict[str, Fraction]
    rotate: tuple[str, ...]  # Baccarat Royal: positions that move on after this coup
    # The settlement as JSON numbers, when it was worked out with it (`Coup.result`): derived from
    # `settlement`, so not part of the value; shared with the ruleset's memo, so read only (to_json copies it).
    settlement_numbers: dict[str, float | int] | None = None

    def __eq__(self, other: object) -> bool:  # settlement_numbers left out: derived, not part of the value
        if type(other) is not CoupResult:
            return NotImplemented
        return self._value() == other._value()

    __hash__ = None  # type: ignore[assignment]  # holds a dict: unhashable, as the settlement is

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in zip(_RESULT_FIELDS, self._value(), strict=True))
        return f"CoupResult({fields})"

    def _value(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in _RESULT_FIELDS)

    @property
    def cards(self) -> int:
        return len(self.player_cards) + len(self.banker_cards)

    def to_json(self) -> dict[str, Any]:
        return {
            "player_cards": [c.text for c in self.player_cards],
            "banker_cards": [c.text for c in self.banker_cards],
            "player_total": self.player_total,
            "banker_total": self.banker_total,
            "winner": self.winner,
            "natural": self.natural,
            "player_pair": self.player_pair,
            "banker_pair": self.banker_pair,
            "cards": len(self.player_cards) + len(self.banker_cards),
            "settlement": (settlement_json(self.settlement) if self.settlement_numbers is None
                           else dict(self.settlement_numbers)),
            "rotate": list(self.rotate),
        }


_RESULT_FIELDS = CoupResult.__struct_fields__[:-1]  # the value: every field but settlement_numbers


def settlement_json(settlement: dict[str, Fraction]) -> dict[str, float | int]:
    """Fractions as JSON numbers: integers stay integers, the rest become floats."""
    return {k: int(v) if v.denominator == 1 else float(v) for k, v in settlement.items()}


class _CoupValue(msgspec.Struct, frozen=True):
    """The fields of a coup that make its value (Coup adds what is due next)."""

    ruleset: Ruleset
    player: tuple[Card, ...] = ()
    banker: tuple[Card, ...] = ()
    order: tuple[str, ...] = ()  # recipient of each card, in draw order
    decisions: tuple[tuple[str, bool], ...] = ()  # (side, draws)


_WORK_IT_OUT = "work it out"  # Coup.next's default: worked out from the other fields when the coup is made


class Coup(_CoupValue, frozen=True, kw_only=True):
    """A coup in progress. `deal`, `decide` return a new Coup.

    A frozen struct (msgspec), made in C: a replay makes one for every card."""

    # What is due next: 'player', 'banker', 'decision:player', 'decision:banker', or None
    # when complete. Worked out once, when the coup is made (the controller asks it several
    # times per card); it follows from the fields above. Given only by the coup's own steps,
    # which know it already. msgspec.structs.replace copies it as it is: a coup of other cards
    # is made as Coup(ruleset, player, banker, order, decisions), which works it out.
    next: str | None = _WORK_IT_OUT

    def __post_init__(self) -> None:
        if self.next is _WORK_IT_OUT:
            force_setattr(self, "next", self._due())

    def __repr__(self) -> str:  # the value's fields: `next` follows from them
        return (f"Coup(ruleset={self.ruleset!r}, player={self.player!r}, banker={self.banker!r}, "
                f"order={self.order!r}, decisions={self.decisions!r})")

    # ----- what is due -------------------------------------------------
    @property
    def cards(self) -> tuple[Card, ...]:
        """All cards in draw order."""
        p, b = iter(self.player), iter(self.banker)
        return tuple(next(p) if who == PLAYER else next(b) for who in self.order)

    def decision(self, side: str) -> bool | None:
        for who, draws in self.decisions:
            if who == side:
                return draws
        return None

    @property
    def natural(self) -> bool:
        if len(self.order) < 4:
            return False
        nat = self.ruleset.natural
        return _two_card_total(self.player) in nat or _two_card_total(self.banker) in nat

    def _due(self) -> str | None:
        n = len(self.order)
        if n < 4:
            return DEAL_ORDER[n]
        rs = self.ruleset
        player_two, banker_two = _two_card_total(self.player), _two_card_total(self.banker)
        if player_two in rs.natural or banker_two in rs.natural:
            return None
        if len(self.player) == 2:
            action = rs.player_action(player_two)
            if action == CHOICE:
                choice = self.decision(PLAYER)
                if choice is None:
                    return "decision:player"
                action = DRAW if choice else "S"
            if action == DRAW:
                return PLAYER
        if len(self.banker) == 2:
            third = self.player[2].value if len(self.player) == 3 else None
            action = rs.banker_action(banker_two, third)
            if action == CHOICE:
                choice = self.decision(BANKER)
                if choice is None:
                    return "decision:banker"
                action = DRAW if choice else "S"
            if action == DRAW:
                return BANKER
        return None

    @property
    def complete(self) -> bool:
        return len(self.order) >= 4 and self.next is None

    # ----- steps --------------------------------------------------------
    def deal(self, card: Card) -> tuple[Coup, md.Misdeal | None]:
        """Give the card to whoever it is due to. A card that is not due leaves the
        coup as it was and comes back as a misdeal."""
        due = self.next
        n = len(self.order) + 1
        # What is due after the first four cards is the deal order's; after those, the tableau's.
        after = DEAL_ORDER[n] if n < 4 else _WORK_IT_OUT
        if due == PLAYER:
            return Coup(self.ruleset, self.player + (card,), self.banker, self.order + (PLAYER,), self.decisions,
                        next=after), None
        if due == BANKER:
            return Coup(self.ruleset, self.player, self.banker + (card,), self.order + (BANKER,), self.decisions,
                        next=after), None
        if due is None:
            return self, md.extra_card(len(self.order), str(card), self.ruleset.misdeal_correction)
        return self, md.card_before_decision(len(self.order), due.split(":")[1], str(card))

    def decide(self, side: str, draws: bool) -> Coup:
        """Record an active player's free choice. A decision for a cell that is
        not a free choice is kept but has no effect: the tableau rules there."""
        if side not in (PLAYER, BANKER):
            raise ValueError(f"a decision is made by the player or the banker, not {side!r}")
        kept = tuple((w, d) for w, d in self.decisions if w != side)
        return Coup(self.ruleset, self.player, self.banker, self.order, kept + ((side, bool(draws)),))

    def close(self) -> md.Misdeal | None:
        """The dealer declares the coup over. A card still due is a missing card."""
        due = self.next
        if due is None:
            return None
        if due.startswith("decision:"):
            side = due.split(":")[1]
            return md.Misdeal(
                md.MISSING_CARD,
                len(self.order),
                True,
                md.DECIDE,
                f"the coup was closed while the {side}'s free choice was still awaited",
            )
        return md.missing_card(len(self.order), due, self.ruleset.misdeal_correction)

    # ----- outcome ------------------------------------------------------
    def result(self) -> CoupResult | None:
        if len(self.order) < 4 or self.next is not None:  # not complete
            return None
        player, banker = self.player, self.banker
        pt, bt = hand_total(player), hand_total(banker)
        winner = PLAYER if pt > bt else BANKER if bt > pt else TIE
        pp, bp = is_pair(player), is_pair(banker)
        natural = self.ruleset.natural
        is_natural = _two_card_total(player) in natural or _two_card_total(banker) in natural
        rotate: tuple[str, ...] = ()
        if self.ruleset.rotation:
            rotate = (PLAYER, BANKER) if winner == TIE else (BANKER,) if winner == PLAYER else (PLAYER,)
        nets, numbers = _settlement(self.ruleset, winner, bt, pp, bp)
        return CoupResult(
            player,
            banker,
            pt,
            bt,
            winner,
            is_natural,
            pp,
            bp,
            dict(nets),
            rotate,
            numbers,  # the ruleset's memo, read only: to_json copies it
        )

    def to_json(self) -> dict[str, Any]:
        """The coup as the stable JSON contract of `shoed rules check`."""
        result = self.result()
        return {
            "complete": result is not None,
            "next": self.next,
            "player_cards": [str(c) for c in self.player],
            "banker_cards": [str(c) for c in self.banker],
            "player_total": hand_total(self.player),
            "banker_total": hand_total(self.banker),
            "winner": result.winner if result else None,
            "natural": self.natural,
            "player_pair": is_pair(self.player),
            "banker_pair": is_pair(self.banker),
            "cards": len(self.order),
            "settlement": settlement_json(result.settlement) if result else None,
            "rotate": list(result.rotate) if result else [],
        }


_NEW_COUP = ("new_coup",)  # its key in the ruleset's memo


def new_coup(ruleset: Ruleset) -> Coup:
    """A coup before its first card. Coups are values, so every coup of a ruleset starts from one
    shared value (kept in the ruleset's memo), made once."""
    coup: Coup | None = ruleset.memo.get(_NEW_COUP)
    if coup is None:
        coup = ruleset.memo[_NEW_COUP] = Coup(ruleset)
    return coup

