"""The virtual card-reading shuffler: it shuffles each shoe, reports it in protocol 1.1, and hands the
virtual shoe the cards it shuffled.

The pure part, `shuffle_run`, works out every shoe of a run from a seed: the
batch of cards (with the planned faults: a card missing, a foreign card), the
shuffled order (a fair shuffle, or a weak one that keeps runs of the previous
shoe's dealt order together), the dealer's cut, and the messages the
shuffler sends (firmware_protocol/SPEC.md §5.15): shuffle started, one deck
check per deck, the order in chunks, shuffle completed, meters, and a jam
when planned. `VirtualShuffler` is the shell: the virtual shoe's loop, link
and firmware, speaking these messages on a real pseudo-terminal or TCP port.

    run = shuffle_run(seed=1, decks=8, shoes=2, faults=ShufflerFaults(missing_card=True))
    shuffler = VirtualShuffler(run)        # on its own pty
    shoe = VirtualShoe(..., orders=run.dealt_orders)   # deals exactly what was shuffled
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

from firmware_protocol import messages as m
from shoed.rules.cards import full_deck
from shoed.simulate.shoe import SimulatorError, VirtualShoe

CHUNK = 64  # cards per order chunk
MODEL = "virtual shuffler"

MISSING_CARD = "missing-card"
FOREIGN_CARD = "foreign-card"
JAM = "jam"
LOSE_LINK = "lose-link"
WEAK_SHUFFLE = "weak-shuffle"
# At the table, after the shuffle: the shoe dealt is not the shoe shuffled (the shuffler reports the true order).
SWITCH_CARD = "switch-card"  # one card swapped for another
REMOVE_CARD = "remove-card"  # one card taken out
INSERT_CARD = "insert-card"  # one card slipped in
SWAP_CARDS = "swap-cards"  # two cards next to each other dealt out of order
TAMPERING = (SWITCH_CARD, REMOVE_CARD, INSERT_CARD, SWAP_CARDS)
FAULTS = (MISSING_CARD, FOREIGN_CARD, JAM, LOSE_LINK, WEAK_SHUFFLE, *TAMPERING)


@dataclass(frozen=True)
class ShufflerFaults:
    """Seeded faults of a run, each in shoe `shoe` (a weak shuffle needs a previous shoe: shoe 2 or later)."""

    faults: frozenset[str] = frozenset()
    shoe: int = 1

    def __post_init__(self) -> None:
        unknown = sorted(set(self.faults) - set(FAULTS))
        if unknown:
            raise SimulatorError(f"unknown shuffler fault {', '.join(unknown)}: choose from {', '.join(FAULTS)}")
        if not isinstance(self.shoe, int) or self.shoe < 1:
            raise SimulatorError(f"the shuffler's faults go into shoe 1 or later, not {self.shoe!r}")
        if WEAK_SHUFFLE in self.faults and self.shoe < 2:
            raise SimulatorError("a weak shuffle keeps runs of the previous shoe: put it in shoe 2 or later")

    def has(self, fault: str, shoe: int) -> bool:
        return shoe == self.shoe and fault in self.faults


@dataclass(frozen=True)
class ShufflerEvent:
    """One message the shuffler sends, with what the ground truth records of it."""

    n: int
    kind: str  # the message's name
    shoe: int
    message: m.Message
    unplug_after: bool = False  # the link is lost once this message is out (fault lose-link)
    is_card = False

    def to_json(self) -> dict:
        out = {"n": self.n, "kind": self.kind, "shoe": self.shoe, "device": "shuffler"}
        for name in self.message.__dataclass_fields__:
            if name != "seq":
                value = getattr(self.message, name)
                out[name] = list(value) if isinstance(value, tuple) else value
        return out


@dataclass(frozen=True)
class ShuffledShoe:
    """One shoe of a run: the shuffled `order`, the dealer's `cut` and what the shoe deals (`dealt`)."""

    number: int
    shuffle: int
    order: tuple[str, ...]
    cut: int
    missing: tuple[tuple[int, str], ...] = ()  # (deck, card)
    foreign: tuple[tuple[int, str], ...] = ()
    weak: bool = False
    # (fault, position in the dealt shoe, card switched in or inserted; for swapped cards, the one dealt first)
    tamper: tuple[str, int, str] | None = None

    @property
    def dealt(self) -> tuple[str, ...]:
        """The cards as the dealing shoe gives them: the order as cut, with any tampering at the table."""
        cards = list(self.order[self.cut:] + self.order[: self.cut])
        if self.tamper is not None:
            fault, position, card = self.tamper
            if fault == SWITCH_CARD:
                cards[position] = card
            elif fault == REMOVE_CARD:
                del cards[position]
            elif fault == SWAP_CARDS:
                cards[position], cards[position + 1] = cards[position + 1], cards[position]
            else:
                cards.insert(position, card)
        return tuple(cards)


@dataclass(frozen=True)
class ShuffleRun:
    seed: int
    decks: int
    shoes: tuple[ShuffledShoe, ...]
    events: tuple[ShufflerEvent, ...] = field(repr=False)

    @property
    def dealt_orders(self) -> tuple[tuple[str, ...], ...]:
        """What the virtual shoe deals, shoe by shoe: each order as the dealer cut it."""
        return tuple(s.dealt for s in self.shoes)


def _riffle(cards: list[str], rng: random.Random) -> list[str]:
    """One riffle (Gilbert-Shannon-Reeds): far too little, runs of the old order survive."""
    cut = sum(rng.random() < 0.5 for _ in cards)
    left, right = cards[:cut][::-1], cards[cut:][::-1]
    out = []
    while left or right:
        out.append((left if rng.random() < len(left) / (len(left) + len(right)) else right).pop())
    return out


def _minus(cards, other) -> list[str]:
    """The cards of `cards` beyond those of `other`, counting copies."""
    left = Counter(cards)
    left.subtract(Counter(other))
    return [card for card, count in sorted(left.items()) for _ in range(max(count, 0))]


def shuffle_run(seed: int, decks: int = 8, shoes: int = 1, faults: ShufflerFaults | None = None) -> ShuffleRun:
    """Every shoe of a run and the messages reporting them, from the seed (pure)."""
    if not 1 <= decks <= m.DECKS_MAX:
        raise SimulatorError(f"a shuffler takes 1 to {m.DECKS_MAX} decks, not {decks}")
    if shoes < 1:
        raise SimulatorError("the virtual shuffler shuffles at least one shoe")
    faults = faults or ShufflerFaults()
    rng = random.Random(f"shoed-shuffler:{seed}")
    cards = [str(card) for card in full_deck()]
    events: list[ShufflerEvent] = []
    out: list[ShuffledShoe] = []
    meters = {"shuffles": 0, "cards": 0, "jams": 0}

    def emit(shoe: int, msg: m.Message, unplug_after: bool = False) -> None:
        events.append(ShufflerEvent(len(events), msg.NAME, shoe, msg, unplug_after))

    previous: ShuffledShoe | None = None
    for number in range(1, shoes + 1):
        shuffle = rng.getrandbits(32)
        decks_cards = [list(cards) for _ in range(decks)]
        missing: list[tuple[int, str]] = []
        foreign: list[tuple[int, str]] = []
        if faults.has(MISSING_CARD, number):
            deck = rng.randrange(decks)
            card = rng.choice(decks_cards[deck])
            decks_cards[deck].remove(card)
            missing.append((deck + 1, card))
        if faults.has(FOREIGN_CARD, number):
            deck = rng.randrange(decks)
            card = rng.choice(cards)
            decks_cards[deck].append(card)
            foreign.append((deck + 1, card))
        batch = [card for deck in decks_cards for card in deck]
        weak = faults.has(WEAK_SHUFFLE, number) and previous is not None
        if weak and previous is not None:
            # The discards come back in the order they were dealt; one riffle leaves them nearly so.
            # This shoe's own missing and foreign cards taken out of / added to the discards first.
            base = list(previous.dealt)
            for card in _minus(previous.dealt, batch):
                base.remove(card)
            order = _riffle(base + _minus(batch, previous.dealt), rng)
        else:
            order = batch[:]
            rng.shuffle(order)
        cut = rng.randrange(len(order))
        tamper = None
        for fault in TAMPERING:
            if faults.has(fault, number):
                # Well after the burn and the first cards (which find the cut), and a card unlike its neighbours.
                position = rng.randrange(30, min(200, len(order) - 2))
                cut_order = order[cut:] + order[:cut]
                if fault == SWAP_CARDS:
                    # Two different cards, so that the swap changes what is dealt.
                    while cut_order[position] == cut_order[position + 1]:
                        position += 1
                    card = cut_order[position + 1]
                else:
                    card = next(c for c in rng.sample(cards, len(cards)) if c not in cut_order[position - 1:position + 2])
                tamper = (fault, position, card)
        shuffled = ShuffledShoe(number, shuffle, tuple(order), cut, tuple(missing), tuple(foreign), weak, tamper)
        out.append(shuffled)
        emit(number, m.ShuffleStarted(shuffle=shuffle, decks=decks))
        for deck in range(1, decks + 1):
            gone = tuple(card for d, card in missing if d == deck)
            alien = tuple(card for d, card in foreign if d == deck)
            emit(number, m.DeckCheck(shuffle=shuffle, deck=deck, present=52 - len(gone) + len(alien), missing=gone,
                                     foreign=alien))
        if faults.has(JAM, number):
            meters["jams"] += 1
            emit(number, m.ShufflerError(shuffle=shuffle, fault=m.SHUFFLER_JAM, active=True, code=11,
                                         text="E11 cards jammed at the elevator"))
            emit(number, m.ShufflerError(shuffle=shuffle, fault=m.SHUFFLER_JAM, active=False, code=11,
                                         text="jam cleared"))
        chunks = [order[i:i + CHUNK] for i in range(0, len(order), CHUNK)]
        lose_after = len(chunks) // 2 if faults.has(LOSE_LINK, number) else None
        for index, chunk in enumerate(chunks):
            emit(number, m.OrderChunk(shuffle=shuffle, position=index * CHUNK, cards=tuple(chunk)),
                 unplug_after=index == lose_after)
        meters["shuffles"] += 1
        meters["cards"] += len(order)
        emit(number, m.ShuffleCompleted(shuffle=shuffle, shoe=number, cards=len(order),
                                        digest=m.order_digest(order)))
        emit(number, m.Meters(**meters))
        previous = shuffled
    return ShuffleRun(seed, decks, tuple(out), tuple(events))


class VirtualShuffler(VirtualShoe):
    """The shuffler of a `ShuffleRun` on a real link, speaking protocol 1.1 (the shoe's loop and firmware)."""

    def __init__(self, run: ShuffleRun, *, link: str | None = None, listen: str | None = None,
                 serial: str | None = None, **options) -> None:
        super().__init__(seed=run.seed, protocol="native", pace=0.0, shoes=len(run.shoes), link=link,
                         listen=listen, serial=serial or f"SH-{run.seed & 0xFFFFFFFF:08X}",
                         **options)
        self.run = run

    def _events(self):
        return iter(self.run.events)

    def _firmware_options(self) -> dict:
        return {"minor": 1, "model": MODEL}

    def _native_message(self, event) -> m.Message:
        return event.message
