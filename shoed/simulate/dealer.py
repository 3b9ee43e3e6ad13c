"""The virtual dealer: shuffles real shoes and deals them by the ruleset, as a
sequence of shoe events with their ground truth.

Pure: no I/O and no clock. The same ruleset, seed and fault plan always give
the same events, so a test can replay a run and the daemon's count of every
card can be checked against what was really dealt.

Per shoe the dealer follows the procedure of the Macau statutory rules
(docs/rules/macau-statutory-rules.txt): the shoe goes in, the first card is exposed and
that many cards are burned (Art. II: tens and faces count 10), then coups are
dealt by the tableau (shoed.rules.coup.Coup) and each is confirmed with the
confirm button, which opens the next. The cut card lies a set number of cards
from the end; when it comes out, the coup in progress is the last ("current")
or one more follows ("one-more") (Art. III). Then the shoe is taken out.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, fields

from shoed.rules.cards import Card, full_deck, parse_card
from shoed.rules.coup import Coup
from shoed.rules.ruleset import Ruleset
from shoed.simulate.faults import FaultPlan

# Event kinds, named as the shoe protocol names its messages.
SHOE_INSERTED = "shoe_inserted"
BUTTON = "button"
CARD = "card"
UNREADABLE = "unreadable"
CUT_CARD = "cut_card"
SHOE_REMOVED = "shoe_removed"
ALARM = "alarm"

# Recipients of a card beyond the Player and the Banker.
BURN = "burn"
EXTRA = "extra"  # drawn after the coup was complete (misdeal: extra card)

# Faults recorded in the ground truth.
FAULT_UNREADABLE = "unreadable"
FAULT_EXTRA_CARD = "extra_card"
FAULT_MISSING_CARD = "missing_card"
FAULT_FOREIGN_CARD = "foreign_card"

# Unreadable reasons, as the native protocol numbers them.
REASON_NO_INDEX = 1
REASON_LOW_CONFIDENCE = 2

# Alarm raised when a card is due and the shoe holds none.
ALARM_SHOE_EMPTY = (0x0E07, "E7 Shoe empty")


class DealError(ValueError):
    """A deal that cannot be set up (bad deck count, cut card outside the shoe)."""


@dataclass(frozen=True)
class ShoeEvent:
    """One thing that happened at the shoe, with its ground truth.

    `card` is the real card, also for an unreadable read (the card still left
    the shoe: the dealer enters it by hand). `recipient` is who the card was
    for: 'player', 'banker', 'burn' or 'extra'. `number` counts cards over the
    run from 1; `position` is the card's place in the shuffled shoe (None for a
    foreign card, which was never part of it)."""

    n: int  # index of this event in the run's ground truth, from 0
    kind: str
    shoe: int  # from 1
    coup: int | None = None  # coup of this shoe, from 1
    coup_number: int | None = None  # coup of the run, from 1
    card: str | None = None
    mode: str | None = None  # 'game' or 'burn', for cards and unreadable reads
    recipient: str | None = None
    button: str | None = None
    fault: str | None = None
    number: int | None = None
    position: int | None = None
    reason: int | None = None  # unreadable reason
    code: int | None = None  # alarm code
    text: str | None = None  # alarm text
    decks: int | None = None  # shoe_inserted
    cut_from_end: int | None = None  # shoe_inserted
    left: tuple[str, ...] | None = None  # shoe_removed: the cards never drawn
    result: dict | None = field(default=None, compare=False)  # confirm closing a complete coup
    last: bool | None = None  # confirm: this coup was the shoe's last; shoe_removed: the shoe ended at its last coup

    @property
    def is_card(self) -> bool:
        """A card left the shoe (read or not)."""
        return self.kind in (CARD, UNREADABLE)

    def to_json(self) -> dict:
        """The event as a JSON object; absent attributes are omitted."""
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out


@dataclass(frozen=True)
class DealSetup:
    """Everything a deal depends on."""

    ruleset: Ruleset
    seed: int = 0
    shoes: int = 1  # 0: shoe after shoe, without end
    decks: int | None = None  # None: the ruleset's deck count
    cut_from_end: int | None = None  # None: the ruleset's default
    faults: FaultPlan = field(default_factory=FaultPlan)
    # Shoes handed over by a shuffler, as the dealer cut them (card texts), shoe 1 first;
    # shoes beyond them are shuffled from the seed.
    orders: tuple[tuple[str, ...], ...] = ()
    # The first shoe is not put in but resumed where the table left it (shoed/simulate/resume.py).
    resume: dict | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.shoes, int) or self.shoes < 0:
            raise DealError(f"shoes must be a whole number (0 for no end), not {self.shoes!r}")
        if self.decks is not None and (not isinstance(self.decks, int) or not 1 <= self.decks <= 16):
            raise DealError(f"a shoe holds 1 to 16 decks, not {self.decks!r}")
        size = 52 * self.deck_count
        cut = self.cut_card_from_end
        if not isinstance(cut, int) or not 0 <= cut < size:
            raise DealError(f"the cut card lies 0 to {size - 1} cards from the end of a {size}-card shoe, not {cut!r}")

    @property
    def deck_count(self) -> int:
        return self.decks if self.decks is not None else self.ruleset.decks

    @property
    def cut_card_from_end(self) -> int:
        return self.cut_from_end if self.cut_from_end is not None else self.ruleset.cut_card_default_from_end


def shuffled_shoe(seed: int, shoe: int, decks: int) -> list[Card]:
    """The cards of one shoe in dealing order (a fair shuffle from the seed)."""
    cards = full_deck() * decks
    random.Random(f"shoed-simulate:{seed}:shoe:{shoe}").shuffle(cards)
    return cards


def deal(setup: DealSetup) -> Iterator[ShoeEvent]:
    """All events of a run, in the order they happen at the shoe."""
    return _Dealer(setup).run()


class _Dealer:
    """The state of one run; used only through `deal`."""

    def __init__(self, setup: DealSetup):
        self.setup = setup
        self.rules = setup.ruleset
        self.plan = setup.faults
        seed = setup.seed
        # Separate generators, so a fault plan never changes the shuffle or the players' choices.
        self.choices = random.Random(f"shoed-simulate:{seed}:choices")
        self.fault_rng = random.Random(f"shoed-simulate:{seed}:faults")
        self.out: list[ShoeEvent] = []
        self.n = 0
        self.cards_drawn = 0
        self.coups_dealt = 0
        self.foreign_armed = False
        self.unreadable_at = frozenset(self.plan.unreadable_at)
        self.foreign_at = sorted(self.plan.foreign_card_at)
        # Per shoe:
        self.shoe = 0
        self.cards: list[Card] = []
        self.pos = 0
        self.cut_pos = 0
        self.cut_seen = False
        self.last_coup: int | None = None
        self.coup_in_shoe = 0
        # True while the coup being dealt has a card due by its tableau: the coup in progress for the
        # cut card. Once it is complete the table counts a cut card as coming out before the next coup.
        self.coup_open = False
        self.seen: Counter = Counter()

    # ----- output ------------------------------------------------------------
    def emit(self, kind: str, **kw) -> ShoeEvent:
        event = ShoeEvent(n=self.n, kind=kind, shoe=self.shoe, **kw)
        self.n += 1
        self.out.append(event)
        return event

    def flush(self) -> list[ShoeEvent]:
        out, self.out = self.out, []
        return out

    def coup_fields(self) -> dict:
        if self.coup_in_shoe == 0:
            return {}
        return {"coup": self.coup_in_shoe, "coup_number": self.coups_dealt}

    # ----- the run -----------------------------------------------------------
    def run(self) -> Iterator[ShoeEvent]:
        shoes = itertools.count(1) if self.setup.shoes == 0 else range(1, self.setup.shoes + 1)
        for shoe in shoes:
            if shoe == 1 and self.setup.resume is not None:
                yield from self.shoe_resume(self.setup.resume)
            else:
                yield from self.shoe_start(shoe)
            while not self.shoe_over():
                yield from self.deal_coup()
            left = tuple(str(c) for c in self.cards[self.pos :])
            self.emit(SHOE_REMOVED, left=left, last=self.last_coup is not None and self.coup_in_shoe >= self.last_coup)
            yield from self.flush()

    def shoe_start(self, shoe: int) -> list[ShoeEvent]:
        decks = self.setup.deck_count
        self.shoe = shoe
        orders = self.setup.orders
        if shoe <= len(orders):
            self.cards = [parse_card(text) for text in orders[shoe - 1]]
        else:
            self.cards = shuffled_shoe(self.setup.seed, shoe, decks)
        self.pos = 0
        self.cut_pos = len(self.cards) - self.setup.cut_card_from_end
        self.cut_seen = False
        self.last_coup = None
        self.coup_in_shoe = 0
        self.coup_open = False
        self.seen = Counter()
        self.emit(SHOE_INSERTED, decks=decks, cut_from_end=self.setup.cut_card_from_end)
        if self.rules.burn == "first-card":
            # Macau statutory rules Art. II: the first card is exposed and that
            # many cards are burned; tens and faces count 10.
            self.emit(BUTTON, button="burn_start")
            first = self.draw(mode="burn", recipient=BURN)
            if first is not None:
                for _ in range(first.burn_count):
                    if self.draw(mode="burn", recipient=BURN) is None:
                        break
            self.emit(BUTTON, button="burn_end")
        return self.flush()

    def shoe_resume(self, state: dict) -> Iterator[ShoeEvent]:
        """Go on with the shoe the table has open (resume.py): no shoe goes in; the rest of the burn,
        the coup in progress, then the coups that follow, from the cards left, in a new order."""
        decks = self.setup.deck_count
        self.shoe = 1
        self.cards = [parse_card(text) for text in state["left"]]
        random.Random(f"shoed-simulate:{self.setup.seed}:resume").shuffle(self.cards)
        self.pos = 0
        self.cut_seen = bool(state["cut_card"])
        self.cut_pos = -1 if self.cut_seen else max(0, len(self.cards) - self.setup.cut_card_from_end)
        self.last_coup = state["last_coup"]
        self.coup_in_shoe = self.coups_dealt = state["coup"]
        self.coup_open = False
        self.seen = Counter({card: decks for card in full_deck()}) - Counter(self.cards)
        phase = state["phase"]
        if phase in ("burn_first", "burning"):
            self.emit(BUTTON, button="burn_start")
            due = state["burn_due"]
            if phase == "burn_first":
                first = self.draw(mode="burn", recipient=BURN)
                due = first.burn_count if first is not None else 0
            for _ in range(due):
                if self.draw(mode="burn", recipient=BURN) is None:
                    break
            self.emit(BUTTON, button="burn_end")
            yield from self.flush()
        elif phase == "dealing" and state["coup_state"] == "open":
            cards = {"player": iter(state["player"]), "banker": iter(state["banker"])}
            coup = Coup(self.rules)
            for side, draws in state["decisions"]:
                coup = coup.decide(side, draws)
            for who in state["order"]:
                coup, _ = coup.deal(parse_card(next(cards[who])))
            self.coup_in_shoe -= 1  # deal_coup counts the coup in progress again
            self.coups_dealt -= 1
            yield from self.deal_coup(coup)
        elif phase == "dealing" and state["coup_state"] in ("complete", "void"):
            coup = None
            if state["coup_state"] == "complete":
                coup = Coup(self.rules, tuple(map(parse_card, state["player"])),
                            tuple(map(parse_card, state["banker"])), tuple(state["order"]))
            self.confirm(coup)  # the result stands (or the void does): the confirm is all that is due
            yield from self.flush()

    def shoe_over(self) -> bool:
        if self.last_coup is not None and self.coup_in_shoe >= self.last_coup:
            return True
        return self.pos >= len(self.cards)

    # ----- drawing one card ----------------------------------------------------
    def draw(self, mode: str, recipient: str, fault: str | None = None, game: bool = False) -> Card | None:
        """Take the next card out of the shoe and report it; None when the shoe is empty."""
        if self.pos == self.cut_pos and not self.cut_seen:
            self.cut_card_out()
        foreign = self.foreign_due() if game else None
        if foreign is not None:
            card, position = foreign, None
            fault = FAULT_FOREIGN_CARD
        else:
            if self.pos >= len(self.cards):
                code, text = ALARM_SHOE_EMPTY
                self.emit(ALARM, code=code, text=text, **self.coup_fields())
                return None
            card, position = self.cards[self.pos], self.pos
            self.pos += 1
        self.cards_drawn += 1
        self.seen[card] += 1
        number = self.cards_drawn
        plan = self.plan
        unreadable = foreign is None and (
            number in self.unreadable_at or (plan.unreadable and self.fault_rng.random() < plan.unreadable)
        )
        common = dict(
            card=str(card), mode=mode, recipient=recipient, number=number, position=position, **self.coup_fields()
        )
        if unreadable:
            reason = self.fault_rng.choice((REASON_NO_INDEX, REASON_LOW_CONFIDENCE))
            self.emit(UNREADABLE, fault=FAULT_UNREADABLE if fault is None else fault, reason=reason, **common)
        else:
            self.emit(CARD, fault=fault, **common)
        return card

    def cut_card_out(self) -> None:
        """The cut card comes out: Macau statutory rules Art. III. The coup in progress is the one
        with a card still due, as the table counts it: out on a card drawn after the coup was
        complete (an extra card), or in the burn, the cut card comes before the next coup."""
        self.cut_seen = True
        current = self.coup_in_shoe if self.coup_open else self.coup_in_shoe + 1
        self.last_coup = current if self.rules.last_coup == "current" else current + 1
        self.emit(CUT_CARD, **self.coup_fields())

    def foreign_due(self) -> Card | None:
        """A card from another deck, slipped in now: an identity whose every copy
        in this shoe has already been dealt, so it is one more than the decks hold."""
        plan = self.plan
        if not self.foreign_armed:
            if self.foreign_at and self.cards_drawn + 1 >= self.foreign_at[0]:
                self.foreign_at.pop(0)
                self.foreign_armed = True
            elif plan.foreign_card and self.fault_rng.random() < plan.foreign_card:
                self.foreign_armed = True
        if not self.foreign_armed:
            return None
        decks = self.setup.deck_count
        spent = sorted(card for card, count in self.seen.items() if count >= decks)
        if not spent:
            return None  # stays armed until some identity is used up
        self.foreign_armed = False
        return self.fault_rng.choice(spent)

    # ----- one coup ------------------------------------------------------------
    def deal_coup(self, coup: Coup | None = None) -> list[ShoeEvent]:
        """One coup, from its first card or from `coup`, the cards of it already dealt."""
        self.coup_in_shoe += 1
        self.coups_dealt += 1
        self.coup_open = True
        number = self.coups_dealt
        plan, rng = self.plan, self.fault_rng
        missing = number in plan.missing_card_in or (plan.missing_card and rng.random() < plan.missing_card)
        extra = number in plan.extra_card_after or (plan.extra_card and rng.random() < plan.extra_card)
        coup = coup if coup is not None else Coup(self.rules)
        while (due := coup.next) is not None:
            if due.startswith("decision:"):
                side = due.split(":")[1]
                draws = self.choices.random() < 0.5
                self.emit(BUTTON, button=f"{side}_{'draw' if draws else 'stand'}", **self.coup_fields())
                coup = coup.decide(side, draws)
                continue
            if missing and self.last_card_due(coup):
                # The dealer confirms one card too early; then puts it right and
                # deals the card that is due (Macau statutory rules Art. X).
                self.emit(BUTTON, button="confirm", fault=FAULT_MISSING_CARD, recipient=due, **self.coup_fields())
                missing = False
            card = self.draw(mode="game", recipient=due, game=True)
            if card is None:
                return self.flush()  # the shoe ran out: the coup stays incomplete
            coup, misdeal = coup.deal(card)
            assert misdeal is None, misdeal  # the dealer only deals what is due
        self.coup_open = False
        if extra:
            self.draw(mode="game", recipient=EXTRA, fault=FAULT_EXTRA_CARD)
        self.confirm(coup)
        return self.flush()

    def confirm(self, coup: Coup | None) -> None:
        """The confirm that closes the coup: with its result, or none for a void coup."""
        result = coup.result() if coup is not None else None
        last = self.last_coup is not None and self.coup_in_shoe >= self.last_coup
        more = {} if result is None else {"result": {
            "player": [str(c) for c in result.player_cards],
            "banker": [str(c) for c in result.banker_cards],
            "player_total": result.player_total,
            "banker_total": result.banker_total,
            "winner": result.winner,
        }}
        self.emit(BUTTON, button="confirm", last=last, **more, **self.coup_fields())

    def last_card_due(self, coup: Coup) -> bool:
        """The next card out of the shoe would complete the coup."""
        if self.pos >= len(self.cards):
            return False
        after, _ = coup.deal(self.cards[self.pos])
        return after.next is None
