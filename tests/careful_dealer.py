"""A careful dealer at the table controller: whole shoes with dealing faults, each corrected
as the table asks (shoed.table.waits names what it waits for; the pending misdeal names its
correction). The dealer makes one fault per coup listed in `faults`:

    missing      confirm pressed while the third card is due, then the card dealt
    extra        a card drawn after the result, then corrected as the ruleset says
    unreadable   a card the reader cannot identify, entered by hand
    early        a card drawn before the free choice, then the decision given
    void_open    the pit voids the coup after two cards
    void_result  the pit voids the coup after its result
    after_last   a card drawn after the last coup (burned)

Used by the tests to show that every misdeal ends (corrected or void), the shoe closes
balanced, and a display that stayed open shows what a late joiner shows.
"""

from __future__ import annotations

import random
from collections import deque

from shoed.rules.cards import full_deck, parse_card
from shoed.rules.ruleset import load_ruleset
from shoed.table import TableController

T0 = 1_790_000_000_000_000_000
STEP_NS = 1_000_000_000  # a second between inputs


class Table:
    """The controller with a clock, every event, and the snapshot after every input."""

    def __init__(self, ruleset: str = "punto-banco", decks: int | None = None) -> None:
        rules = load_ruleset(ruleset)
        self.controller = TableController("t1", rules, decks or rules.decks)
        self.n = 0
        self.events: list[dict] = []
        self.after: list[tuple[int, dict]] = []  # (events so far, snapshot) after each input

    def feed(self, kind: str, **fields) -> dict | None:
        self.n += 1
        item = {"kind": kind, "mono_ns": self.n * STEP_NS, "utc_ns": T0 + self.n * STEP_NS, **fields}
        step = self.controller.feed(item)
        self.events.extend(step.events)
        self.after.append((len(self.events), self.controller.snapshot()))
        return step.reply

    def command(self, cmd: str, **args) -> dict:
        return self.feed("command", cmd=cmd, args=args, client="pit")

    def kinds(self) -> list[str]:
        return [e["kind"] for e in self.events]


def deal_shoe(table: Table, faults: dict[int, str], seed: int = 1, cut_from_end: int = 14) -> Table:
    """Deal one whole shoe, making the faults, until it is closed."""
    controller = table.controller
    rng = random.Random(seed)
    cards = deque(full_deck() * controller.decks)
    rng.shuffle(cards)
    made: set[int] = set()
    cut = False
    table.feed("shoe_inserted", source="shoe")
    for _ in range(20_000):
        waiting = controller.waiting()["for"]
        coup = controller.coup_no
        fault = faults.get(coup) if coup not in made else None
        order = len(controller.coup.order) if controller.coup is not None else 0
        if waiting == "burn":
            table.feed("card", card=str(cards.popleft()), mode="burn", source="shoe")
        elif waiting == "card":
            if not cut and len(cards) <= cut_from_end:
                cut = True
                table.feed("cut_card", source="shoe")
            elif fault == "missing" and order == 4:
                made.add(coup)
                table.feed("button", button="confirm", source="shoe")
            elif fault == "unreadable" and order == 1:
                made.add(coup)
                card = cards.popleft()
                table.feed("card", card=None, source="shoe")
                assert controller.waiting()["for"] == "correction"
                table.command("enter_card", card=str(card))
            elif fault == "void_open" and order == 2:
                made.add(coup)
                table.command("void", reason="card exposed")
            else:
                table.feed("card", card=str(cards.popleft()), mode="game", source="shoe")
        elif waiting == "decision":
            side = controller.coup.next.partition(":")[2] if controller.coup.next else "player"
            if fault == "early":
                made.add(coup)
                table.feed("card", card=str(cards.popleft()), mode="game", source="shoe")
                continue
            table.feed("button", button=f"{side}_{rng.choice(('draw', 'stand'))}", source="shoe")
        elif waiting == "confirm":
            if fault == "extra" and controller.coup_state == "complete":
                made.add(coup)
                table.feed("card", card=str(cards.popleft()), mode="game", source="shoe")
            elif fault == "void_result" and controller.coup_state == "complete":
                made.add(coup)
                table.command("void", reason="wrong hand dealt")
            else:
                table.feed("button", button="confirm", source="shoe")
        elif waiting == "correction":
            entry = next(p for p in controller.pending if p["kind"] != "missing_card")
            correction = entry["correction"]
            if correction == "burn":
                table.command("burn_card", misdeal=entry["id"])
            elif correction == "return":
                table.command("return_card", misdeal=entry["id"])
                cards.appendleft(parse_card(entry["card"]))  # read again when it is dealt
            elif correction == "decide":
                side = controller.coup.next.partition(":")[2]
                table.feed("button", button=f"{side}_{rng.choice(('draw', 'stand'))}", source="shoe")
            else:
                raise AssertionError(f"no correction known for {entry}")
        elif waiting == "close_shoe":
            if "after_last" in faults.values() and -1 not in made:
                made.add(-1)
                table.feed("card", card=str(cards.popleft()), mode="game", source="shoe")
                continue
            table.feed("shoe_removed", source="shoe")
            return table
        else:
            raise AssertionError(f"the table waits for {controller.waiting()}")
    raise AssertionError("the shoe never ended")

