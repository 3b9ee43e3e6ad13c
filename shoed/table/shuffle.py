"""The table controller's handling of a card-reading shuffler (firmware_protocol SPEC.md §5.15).

Pure like the controller: inputs in, events out, no I/O and no clock. The
controller keeps one `ShufflerState` once a shuffler has reported anything;
these handlers take the `shuffler` driver's readings:

- `shuffle_started`: a new shuffle (an unfinished one before it is dropped);
- `deck_check`: one deck's verification. A deck with missing, extra, foreign
  or unreadable cards raises `alarm deck_incomplete` naming the deck and the
  cards; the shuffle is then not verified;
- `order_chunk`: cards of the order, each chunk where the last ended, sealed
  with the order key (a chunk in plain text is refused: `alarm
  shuffle_order_invalid`, nothing taken); only positions and counts are
  published, never a card;
- `shuffle_completed`: the order must hold the announced count and match the
  shuffler's SHA-256 digest, which comes as a keyed hash (`digest_hmac`)
  (`alarm shuffle_order_invalid` otherwise); the
  shuffle then waits for its shoe, oldest first;
- `shuffler_error`: `alarm shuffler_jam`, `shuffler_door`, `shuffler_recognition`
  (or `shuffler_fault` for vendor faults), raised and cleared;
- `meters`: `shuffle.meters`.

When a shoe goes in at a table with a shuffler, it takes the oldest completed
shuffle. A shoe whose shuffle was not verified complete (or that has no
shuffle) is not opened: `alarm shoe_unverified` says why, and only the
authorised `open_shoe` command (journaled with the client's key) opens it.
A verified shoe opens, and its order is compared with the previous shoe's
dealt cards: a run of cards that survived the shuffle together, as long as
`shoed.rules.shuffle.weak_run_threshold` or longer, raises `alarm weak_shuffle`
with its length and where it lay in the previous shoe.

At a plain shoe, which reads no card, each card out is a `draw` (an input
kind, or the dealer's `draw` command): once the cut is found from the cards
the dealer enters or a camera reads, and confirmed by one more, it takes the
order's card at its place (`source: shuffler`); a camera's reads are paired
with the draws and check them (`alarm sequence_mismatch` at the exact card).

The order itself is kept here, in memory and in the journal's checkpoints
(sealed with the order key; without a key it is left out of them); it is in
no event and not in the snapshot. The commitment's salt is worked out from a
random nonce the shell journals with the input, under the order key: it is
in the journal nowhere until the reveal.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from firmware_protocol.messages import DECKS_MAX, SHUFFLER_FAULT_NAMES, order_digest
from shoed.rules import misdeal as md
from shoed.rules.cards import CardError, parse_card
from shoed.table import events as ev
from shoed.table.events import CommandRejected
from shoed.rules.shuffle import (
    Check,
    Mismatch,
    Tracker,
    chunk_context,
    commit,
    commitment_salt,
    digest_mac,
    is_weak,
    longest_surviving_run,
    seal_cards,
    unseal_cards,
    weak_run_threshold,
)

if TYPE_CHECKING:
    from shoed.table.controller import Step, TableController

Item = dict[str, Any]  # an input, as journaled
Handler = Callable[["TableController", Item, "Step"], None]  # an entry of the controller's table of input kinds

DECK_LISTS = ("missing", "extra", "foreign", "face_reversed")
FAULT_ALARMS = {name: f"shuffler_{name}" for name in SHUFFLER_FAULT_NAMES.values()}
Finding = tuple[int, Check, str]  # a drawn card's position, its check against the order, who read it
PENDING_MAX = 4  # completed shuffles kept waiting for their shoes; older ones are dropped


@dataclass
class PlainDraws:
    """A shoe whose cards come as draws (a plain shoe's `draw`, or the dealer's `draw` command): the readers'
    reads (a camera's) paired with the draws one for one, in whichever order they come, to check each."""

    unchecked: list[int] = field(default_factory=list)  # positions drawn that no reader has seen yet, oldest first
    seen: list[tuple[str | None, str]] = field(default_factory=list)  # (card or None, reader) before their draw
    unread: dict[int, int] = field(default_factory=dict)  # unreadable-card misdeal id -> its card's position
    burned: list[int] = field(default_factory=list)  # face-down burns not identified: counted once the cut is found
    confirmed: bool = False  # a card identified after the cut was found agreed with it: identities are taken
    identified: set[int] = field(default_factory=set)  # positions identified (entered or read) before that
    doubted: bool = False  # a reader or the dealer disagreed with the order: no identity is taken from it now


@dataclass
class ShufflerState:
    """What the controller knows of the shuffler: the shuffle in progress and those waiting for a shoe."""

    current: dict[str, Any] | None = None  # {shuffle, decks, checks: {deck: detail}, order: [cards], invalid: str|None}
    pending: list[dict[str, Any]] = field(default_factory=list)  # completed: {shuffle, shoe, order, verified, problems}
    opening: dict[str, Any] | None = None  # the shuffle of the shoe being opened, with its salt's nonce
    open: dict[str, Any] | None = None  # the open shoe's: {shuffle, order, salt_nonce, commitment}
    tracker: Tracker | None = field(default=None, repr=False)  # checks the open shoe's cards (not serialised)
    plain: PlainDraws | None = field(default=None, repr=False)  # the open shoe's draws, if a plain shoe (not serialised)
    draws: bool = False  # the table's shoe signals draws (a plain shoe): set by the first draw, kept

    def to_json(self, key: bytes | None = None) -> dict[str, Any]:
        """For the journal's checkpoints: every order sealed under `key`; without a key no order is kept (it
        is never written in plain text: a restart then has no order, as the replay without the key)."""
        return {"current": _sealed_copy(self.current, key), "pending": [_sealed_copy(p, key) for p in self.pending],
                "open": _sealed_copy(self.open, key), **({"draws": True} if self.draws else {})}

    @classmethod
    def from_json(cls, data: dict[str, Any] | None, key: bytes | None = None) -> ShufflerState | None:
        if not isinstance(data, dict):
            return None
        state = cls(current=_opened_copy(data.get("current"), key),
                    pending=[p for p in (_opened_copy(p, key) for p in data.get("pending") or []) if p is not None],
                    open=_opened_copy(data.get("open"), key), draws=data.get("draws") is True)
        if state.open:
            # Checkpoints are taken with no card of the shoe seen: its check starts from the beginning.
            # An order that could not be opened (no key) checks nothing: the events then differ.
            state.tracker = Tracker(state.open["order"]) if state.open.get("order") else None
            state.plain = PlainDraws() if state.draws else None
        return state


def _context(entry: dict[str, Any]) -> str:
    return f"order of shuffle {entry.get('shuffle')} in a checkpoint"


def _sealed_copy(entry: dict[str, Any] | None, key: bytes | None) -> dict[str, Any] | None:
    if entry is None or "order" not in entry:
        return entry
    out = {k: v for k, v in entry.items() if k != "order"}
    if key is not None:
        out["sealed_order"] = seal_cards(key, entry["order"], _context(entry))
    return out


def _opened_copy(entry: dict[str, Any] | None, key: bytes | None) -> dict[str, Any] | None:
    if entry is None:
        return entry
    out = {k: v for k, v in entry.items() if k not in ("sealed_order", "order")}
    try:
        if "sealed_order" not in entry:
            raise ValueError("no order key: the order was not kept")
        out["order"] = unseal_cards(key, entry["sealed_order"], _context(entry)) if key else []
        unopened = None if key else "no order key: the order could not be read"
    except ValueError as exc:
        out["order"], unopened = [], str(exc)
    if unopened:
        out["unopened"] = unopened  # only then: an entry read back whole is the entry as it was written
        if "verified" in out:
            out["verified"] = False  # a shoe whose order cannot be read is not opened without the pit
            out["problems"] = [*out.get("problems", []), unopened]
    return out


def _state(table: TableController) -> ShufflerState:
    if table.shuffler is None:
        table.shuffler = ShufflerState()
    return table.shuffler


def _detail(item: Item) -> dict[str, Any]:
    detail = item.get("detail")
    return detail if isinstance(detail, dict) else {}


def _cards(value: object) -> list[str]:
    return [str(card) for card in value] if isinstance(value, list) else []


def deck_problems(check: dict[str, Any]) -> list[str]:
    """What is wrong with one deck check, in words naming the cards; empty for a complete deck."""
    out = [f"{name.replace('_', ' ')} {', '.join(_cards(check.get(name)))}"
           for name in ("missing", "extra", "foreign") if check.get(name)]
    if check.get("unreadable"):
        out.append(f"{check['unreadable']} unreadable")
    if not out and check.get("present") != 52:
        out.append(f"{check.get('present')} cards present")
    return out


def on_shuffle_started(table: TableController, item: Item, step: Step) -> None:
    """A new shuffle. One still in progress (a jam, a batch taken out and shuffled again) is abandoned: its
    order is never used, and a `device.warning` (code `shuffle_abandoned`) says so for surveillance.
    A shuffle of decks outside 1..DECKS_MAX (what no shuffler sends) is invalid from its start: nothing of it
    is taken, and no deck of it is looked for."""
    detail = _detail(item)
    state = _state(table)
    if state.current is not None and table.behaviour >= 2:
        old = state.current
        table._emit(step, ev.DeviceWarning, code="shuffle_abandoned",
                    text=f"shuffle {old['shuffle']} abandoned by shuffle {detail.get('shuffle')}, "
                    f"{len(old['order'])} cards of its order received: its order is not used",
                    source=item.get("source"))
    decks = detail.get("decks")
    valid = type(decks) is int and 0 < decks <= DECKS_MAX
    state.current = {"shuffle": detail.get("shuffle"), "decks": decks if valid else None, "checks": {},
                     "order": [], "invalid": None if valid else f"{decks!r} decks, not 1 to {DECKS_MAX}"}
    table._emit(step, ev.ShuffleStarted, shuffle=detail.get("shuffle"), decks=decks, source=item.get("source"))
    if not valid:
        table._alarm(step, "shuffle_order_invalid", True,
                     f"shuffle {detail.get('shuffle')}: {state.current['invalid']}", source=item.get("source"))


def _current(table: TableController, item: Item, step: Step) -> dict[str, Any] | None:
    """The shuffle in progress that this report belongs to; a report of another shuffle is refused loudly."""
    state = _state(table)
    shuffle = _detail(item).get("shuffle")
    current = state.current
    if current is None or current.get("shuffle") != shuffle:
        table._alarm(step, "shuffle_order_invalid", True,
                     f"a {item.get('kind')} report for shuffle {shuffle}, which was never started",
                     source=item.get("source"))
        return None
    return current


def on_deck_check(table: TableController, item: Item, step: Step) -> None:
    current = _current(table, item, step)
    if current is None:
        return
    detail = _detail(item)
    deck = detail.get("deck")
    check = {"present": detail.get("present"), "unreadable": detail.get("unreadable", 0),
             **{name: _cards(detail.get(name)) for name in DECK_LISTS}}
    current["checks"][str(deck)] = check
    problems = deck_problems(check)
    table._emit(step, ev.ShuffleDeckChecked, shuffle=current["shuffle"], deck=deck, complete=not problems,
                source=item.get("source"), **check)
    if problems:
        table._alarm(step, "deck_incomplete", True, f"deck {deck}: {'; '.join(problems)}", deck=deck,
                     missing=check["missing"], extra=check["extra"], foreign=check["foreign"],
                     source=item.get("source"))


def on_order_chunk(table: TableController, item: Item, step: Step) -> None:
    current = _current(table, item, step)
    if current is None:
        return
    detail = _detail(item)
    position, cards = detail.get("position"), _cards(detail.get("cards"))
    order = current["order"]
    if "sealed" not in detail:
        # Cards in plain text: the order of a shuffler read by a driver that does not seal it. Nothing is
        # taken from it and the shuffle is not verified.
        if current["invalid"] is None:
            current["invalid"] = f"a chunk at position {position} that is not sealed"
            table._alarm(step, "shuffle_order_invalid", True,
                         f"shuffle {current['shuffle']}: {current['invalid']}: the order is taken only from the "
                         "shuffler driver, sealed with the order key", source=item.get("source"))
        return
    if current["invalid"] is None:
        try:
            if table.order_key is None:
                raise ValueError("no order key is configured")
            cards = unseal_cards(table.order_key, str(detail["sealed"]),
                                 chunk_context(detail.get("boot"), detail.get("shuffle"), position))
        except ValueError as exc:
            current["invalid"] = f"chunk at position {position}: {exc}"
            table._alarm(step, "shuffle_order_invalid", True, f"shuffle {current['shuffle']}: {current['invalid']}",
                         source=item.get("source"))
    if current["invalid"] is None and position != len(order):
        current["invalid"] = f"a chunk at position {position} while {len(order)} was due"
        table._alarm(step, "shuffle_order_invalid", True, f"shuffle {current['shuffle']}: {current['invalid']}",
                     source=item.get("source"))
    decks = current.get("decks")
    # The decks' cards and a deck's worth more (foreign cards the shuffler read, checked by the digest).
    capacity = 52 * ((decks if type(decks) is int and 0 < decks <= DECKS_MAX else DECKS_MAX) + 1)
    if current["invalid"] is None and len(order) + len(cards) > capacity:
        current["invalid"] = f"the order runs past {capacity} cards, a deck more than the decks shuffled"
        table._alarm(step, "shuffle_order_invalid", True, f"shuffle {current['shuffle']}: {current['invalid']}",
                     source=item.get("source"))
    if current["invalid"] is None:
        order.extend(cards)
    announced = detail.get("count")  # a number a driver wrote: one that is none counts nothing (never raises)
    table._emit(step, ev.ShuffleChunk, shuffle=current["shuffle"], position=position,
                count=len(cards) or (announced if type(announced) is int and announced > 0 else 0),
                source=item.get("source"))


def on_shuffle_completed(table: TableController, item: Item, step: Step) -> None:
    current = _current(table, item, step)
    if current is None:
        return
    detail = _detail(item)
    state = _state(table)
    order = current["order"]
    problems = []
    if current["invalid"]:
        problems.append(current["invalid"])
    elif detail.get("cards") != len(order):
        problems.append(f"{len(order)} cards received, {detail.get('cards')} announced")
    elif table.order_key is None or not isinstance(detail.get("digest_hmac"), str) or not hmac.compare_digest(
            digest_mac(table.order_key, order_digest(order)), detail["digest_hmac"]):
        problems.append("the order does not match the shuffler's digest")
    if problems:
        table._alarm(step, "shuffle_order_invalid", True, f"shuffle {current['shuffle']}: {problems[0]}",
                     source=item.get("source"))
    decks = current.get("decks") or 0
    checks = current["checks"]
    for deck in range(1, decks + 1):
        check = checks.get(str(deck))
        if check is None:
            problems.append(f"deck {deck} was not checked")
        elif deck_problems(check):
            problems.append(f"deck {deck}: {'; '.join(deck_problems(check))}")
    verified = not problems
    state.pending.append({"shuffle": current["shuffle"], "shoe": detail.get("shoe"), "decks": decks,
                          "order": list(order), "verified": verified, "problems": problems})
    del state.pending[:-PENDING_MAX]
    state.current = None
    table._emit(step, ev.ShuffleCompleted, shuffle=detail.get("shuffle"), shuffler_shoe=detail.get("shoe"),
                cards=len(order), verified=verified, problems=problems, source=item.get("source"))


def on_shuffler_error(table: TableController, item: Item, step: Step) -> None:
    detail = _detail(item)
    name = FAULT_ALARMS.get(str(detail.get("fault_name")), "shuffler_fault")
    active = bool(detail.get("active", True))
    text = detail.get("text") or f"shuffler {detail.get('fault_name')} {'raised' if active else 'cleared'}"
    table._alarm(step, name, active, text, code=str(detail.get("code")), source=item.get("source"))


def on_meters(table: TableController, item: Item, step: Step) -> None:
    detail = _detail(item)
    meters = {k: detail.get(k) for k in ("shuffles", "cards", "jams", "door_opens", "recognition_faults")}
    _state(table)
    table._emit(step, ev.ShufflerMeters, meters=meters, source=item.get("source"))


def dealt_order(results: list[dict[str, Any]]) -> list[str]:
    """A shoe's game cards in the order they were dealt, from its coup records (Player, Banker, Player,
    Banker, then the third cards; void coups as far as they went)."""
    out: list[str] = []
    for coup in results:
        player, banker = list(coup.get("player_cards") or []), list(coup.get("banker_cards") or [])
        for i in range(max(len(player), len(banker))):
            out += player[i:i + 1] + banker[i:i + 1]
    return out


def wrap_shoe_inserted(original: Handler) -> Handler:
    def on_shoe_inserted(table: TableController, item: Item, step: Step) -> None:
        state = table.shuffler
        if state is None:
            return original(table, item, step)  # a table without a shuffler: as before
        shuffled = state.pending.pop(0) if state.pending else None
        state.opening = {"shuffled": shuffled, "salt_nonce": item.get("salt_nonce")}
        if shuffled is None or not shuffled["verified"]:
            if table.behaviour >= 3:  # the shoe that was in is out: its cards and its order are done with
                table._close_shoe(step, "a new shoe went in (not opened: shoe_unverified)")
            why = "no completed shuffle" if shuffled is None else "; ".join(shuffled["problems"])
            table._alarm(step, "shoe_unverified", True,
                         f"the shoe was not opened: its decks were not verified complete ({why}); "
                         "the open_shoe command opens it", source=item.get("source"))
            return None
        previous = dealt_order(table.results)
        decks = shuffled["decks"] or table.decks
        run = longest_surviving_run(previous, shuffled["order"]) if previous else None
        original(table, item, step)
        if "shoe_unverified" in table.alarms and table.behaviour >= 3:  # a shoe refused before: this one is not
            table._alarm(step, "shoe_unverified", False, f"a shoe went in with shuffle {shuffled['shuffle']}, "
                         "verified", source=item.get("source"))
        if run is not None and is_weak(run, decks):
            table._alarm(step, "weak_shuffle", True,
                         f"{run.length} cards dealt together in the previous shoe (from its card "
                         f"{run.previous + 1}) lie together in this one; {weak_run_threshold(decks)} or more "
                         "is a weak shuffle", run={"length": run.length, "previous": run.previous},
                         source=item.get("source"))
        return None

    return on_shoe_inserted


def wrap_command(original: Handler) -> Handler:
    def on_command(table: TableController, item: Item, step: Step) -> None:
        state = table.shuffler
        cmd = item.get("cmd")
        taken = None
        if state is not None and cmd == "open_shoe":
            if state.opening is not None:
                # The authorised opening takes the shuffle refused when the shoe went in (if any).
                shuffled = state.opening.get("shuffled")
            else:
                # No shoe went in (a plain shoe that signals none): the oldest completed shuffle.
                shuffled = taken = state.pending.pop(0) if state.pending else None
            state.opening = {"shuffled": shuffled, "salt_nonce": item.get("salt_nonce")}
        misdeal = _unreadable_answered(table, item) if cmd == "enter_card" else None
        try:
            original(table, item, step)
        except CommandRejected:
            if state is not None and taken is not None:
                state.pending.insert(0, taken)
                state.opening = None
            raise
        if cmd == "draw" and step.reply is None:
            table._require_shoe()
            on_draw(table, item, step)
        elif cmd == "enter_card" and step.reply is None:
            _entered(table, item, step, misdeal)
        elif cmd == "open_shoe" and step.reply is None and (
                "shoe_unverified" in table.alarms or (taken is not None and not taken["verified"])):
            table._alarm(step, "shoe_unverified", False, f"opened by authorised command ({item.get('client')})",
                         by=item.get("client"))
        return None

    return on_command


def _unreadable_answered(table: TableController, item: Item) -> int | None:
    """The id of the unreadable-card misdeal an `enter_card` command answers (before it is corrected)."""
    wanted = (item.get("args") or {}).get("misdeal")
    for entry in table.pending:
        if (wanted is None or entry["id"] == wanted) and entry["kind"] == md.UNREADABLE_CARD:
            return int(entry["id"])
    return None


def needs_salt(item: Item, table: TableController | None) -> bool:
    """Inputs that may open a shoe at a table with a shuffler: the shell adds a fresh random `salt_nonce` to
    them before they are journaled. The commitment's salt is worked out from it with the order key
    (`commitment_salt`): it is in the journal nowhere before the reveal."""
    if table is None or table.shuffler is None:
        return False
    return item.get("kind") == "shoe_inserted" or (item.get("kind") == "command" and item.get("cmd") == "open_shoe")


def shoe_opened_fields(table: TableController) -> dict[str, Any]:
    """Fields `shoe.opened` gains from the shuffle of the shoe: the commitment to its order."""
    state = table.shuffler
    opening = state.opening if state is not None else None
    if state is not None:
        state.opening, state.open, state.tracker, state.plain = None, None, None, None
    if state is None or not opening or not opening.get("shuffled"):
        return {}
    shuffled, nonce = opening["shuffled"], opening.get("salt_nonce")
    if not isinstance(nonce, str) or table.order_key is None:
        return {"shuffle": shuffled["shuffle"]}  # no nonce came with the input, or no key: nothing to commit to
    commitment = commit(shuffled["order"], commitment_salt(table.order_key, nonce))
    state.open = {"shuffle": shuffled["shuffle"], "order": shuffled["order"], "salt_nonce": nonce,
                  "commitment": commitment}
    state.tracker = Tracker(shuffled["order"]) if shuffled["order"] else None  # none: an order not opened
    state.plain = PlainDraws() if state.draws else None
    return {"shuffle": shuffled["shuffle"], "commitment": commitment}


def card_returned(table: TableController, card: str) -> None:
    """The pit's return_card put the last card out back into the shoe: the order's check takes it back, so that
    it comes out again in its place (behaviour 3; before, its second coming was a card inserted)."""
    state = table.shuffler
    if state is None or state.tracker is None or table.behaviour < 3:
        return
    position = state.tracker.returned(card)
    if position is not None and state.plain is not None and position in state.plain.unchecked:
        state.plain.unchecked.remove(position)  # no reader need see it at that place now: it comes out again


def shoe_closed_fields(table: TableController) -> dict[str, Any]:
    """Fields `shoe.closed` gains: the order and the salt, which anyone can check against the commitment."""
    state = table.shuffler
    if state is None or not state.open:
        return {}
    opened = state.open
    state.open, state.tracker, state.plain = None, None, None
    nonce, key = opened.get("salt_nonce"), table.order_key
    salt = commitment_salt(key, nonce).hex() if isinstance(nonce, str) and key is not None else ""
    return {"reveal": {"shuffle": opened["shuffle"], "order": list(opened["order"]), "salt": salt,
                       "commitment": opened["commitment"]}}


def _hold_mismatch(table: TableController, step: Step, found: Mismatch, source: str | None) -> None:
    """`alarm sequence_mismatch` at the card's place, and the coup held for the pit's void."""
    table._alarm(step, "sequence_mismatch", True,
                 f"card {found.position + 1} out of the shoe is {found.got}; the shuffled order has "
                 f"{found.expected} there", source=source, position=found.position,
                 expected=found.expected, got=found.got)
    if table.coup_state in ("open", "complete"):
        table._misdeal(step, md.Misdeal("sequence_mismatch", None, True, "void",
                                        f"card {found.position + 1} is not the next in the shuffled order",
                                        found.got), source)


def _unaligned(table: TableController, step: Step, tracker: Tracker, source: str | None, position: int) -> None:
    table._alarm(step, "sequence_mismatch", True,
                 f"the first {tracker.dealt_count} cards out of the shoe are nowhere in the shuffled order",
                 source=source, position=position)


def wrap_card(original: Handler, readable: bool) -> Handler:
    """Each card out of the shoe checked against the order: `alarm sequence_mismatch` and the coup held.
    At a shoe whose cards come as draws, a reader's card (a camera's) checks a drawn card instead."""

    def on_card(table: TableController, item: Item, step: Step) -> None:
        state = table.shuffler
        if state is None:  # a table without a card-reading shuffler: the card as it is
            return original(table, item, step)
        tracker = state.tracker
        source = item.get("source")
        drawn_unseen = table.behaviour >= 3 and state.plain is not None and bool(state.plain.unchecked)
        if tracker is not None and state.draws and (not (table.priority and source == table.active_source)
                                                     or drawn_unseen):
            # At a shoe that signals draws a reader checks them; it deals only once it is the reader that
            # deals (the shoe's link lost: shoed.table.controller's failover), and then only the cards after
            # those the shoe signalled before it was lost (each of those its reads check first: dealt once).
            state.plain = state.plain or PlainDraws()
            return _reader_saw(table, item, step, state.plain, tracker, readable)
        if tracker is None or (table.active_source is not None and source != table.active_source) \
                or (readable and table.behaviour >= 3):
            # From behaviour 3 a card is checked where the table takes it out of the shoe (card_out): a card a
            # reader repeats is not checked twice, one a reader taking over deals is checked too.
            return original(table, item, step)
        check = tracker.dealt(str(item.get("card"))) if readable else None
        if not readable:
            tracker.unknown()
        original(table, item, step)
        _report_check(table, step, tracker, check, source)
        return None

    return on_card


Checked = tuple[Tracker, Check] | None


def card_out(table: TableController, card: str | None) -> Checked:
    """A card out of the shoe through the reader that deals, as the table took it (`card`: its text, None when
    not read): checked against the order (behaviour 3). What to report once the card is taken (report_out)."""
    state = table.shuffler
    tracker = state.tracker if state is not None else None
    if tracker is None or table.behaviour < 3:
        return None
    if card is None:
        tracker.unknown()
        return None
    return tracker, tracker.dealt(card)


def report_out(table: TableController, step: Step, checked: Checked, source: str | None) -> None:
    if checked is not None:
        _report_check(table, step, checked[0], checked[1], source)


def _report_check(table: TableController, step: Step, tracker: Tracker, check: Check | None,
                  source: str | None) -> None:
    """The alarms a card's check against the order raises, after the card's own events."""
    if check is None:
        return
    if check.unaligned:
        _unaligned(table, step, tracker, source, tracker.dealt_count - 1)
    if check.mismatch is not None:
        _hold_mismatch(table, step, check.mismatch, source)
    if check.resolved is not None:
        found = check.resolved
        table._alarm(step, "sequence_mismatch", True,
                     f"card {found.position + 1} out of the shoe: {(found.kind or '').replace('_', ' ')} "
                     f"({found.got} where {found.expected} was due)", source=source,
                     position=found.position, expected=found.expected, got=found.got, mismatch=found.kind)


# ----- a plain shoe: the card identities from the aligned order ----------------------------------------------

DRAWN = "shuffler"  # the `source` of a card whose identity is the shuffled order's


def on_draw(table: TableController, item: Item, step: Step) -> None:
    """A card came out of a plain shoe that reads no identity (a `draw` reading, or the dealer's `draw`
    command). Once the cut is found, and confirmed by one more card identified where it puts it, it is the
    order's card at its place, dealt with `source: shuffler`; before that, or with no order, or past the
    order's end, or once a reader disagreed with the order, it is a card not read (the dealer enters it:
    never guessed), and what the dealer enters narrows the cut."""
    source = item.get("source") or f"command:{item.get('client')}"
    mode = item.get("mode") or (item.get("args") or {}).get("mode") or "game"
    state = table.shuffler
    tracker = state.tracker if state is not None else None
    if state is None or tracker is None:
        return table._on_unreadable({"source": source, "mode": mode, "code": "no_order"}, step)
    state.draws = True
    plain = state.plain = state.plain or PlainDraws()
    position = tracker.dealt_count
    tracker.unknown()
    plain.unchecked.append(position)
    findings = _pair(tracker, plain, table.behaviour)  # a read that came before this draw narrows the cut first
    card = None
    # A card drawn while one drawn before it waits to be entered is not dealt from the order ahead of it (behaviour
    # 3): it would take the waiting card's place in the coup. It waits to be entered in its turn.
    waiting = table.behaviour >= 3 and any(p["kind"] == md.UNREADABLE_CARD for p in table.pending)
    if plain.confirmed and not plain.doubted and not tracker.lost and position < tracker.size and not waiting:
        card = tracker.dealt_card(position)
    if card is None:
        before = table.misdeal_ids
        table._on_unreadable({"source": source, "mode": mode, "code": "not_identified"}, step)
        if table.misdeal_ids != before:
            plain.unread[table.misdeal_ids] = position
        else:  # a face-down burn card, taken unread
            plain.burned.append(position)
    else:
        first = len(step.typed)
        table._take_card(step, parse_card(card), {"confidence": None, "mode": mode}, DRAWN)
        for event in step.typed[first:]:
            if isinstance(event, ev.Card | ev.ShoeBurn) and event.source == DRAWN:
                event.drawn_by = source
                break
    _report(table, step, tracker, plain, findings)


def _reader_saw(table: TableController, item: Item, step: Step, plain: PlainDraws, tracker: Tracker, readable: bool) -> None:
    """A reader's card at a shoe whose cards come as draws: the cross-check of the drawn card it pairs with."""
    seen = None
    if readable:
        try:
            seen = str(parse_card(str(item["card"])))
        except (CardError, KeyError):
            seen = None  # not read: it checks nothing, never guessed
    plain.seen.append((seen, str(item.get("source"))))
    _report(table, step, tracker, plain, _pair(tracker, plain, table.behaviour))


def _pair(tracker: Tracker, plain: PlainDraws, behaviour: int) -> list[Finding]:
    """Reads and draws paired oldest first: (position, the tracker's check, the reader) for each read card."""
    findings = []
    while plain.unchecked and plain.seen:
        position, (seen, reader) = plain.unchecked.pop(0), plain.seen.pop(0)
        if seen is not None and not plain.doubted:
            check = tracker.identify(position, seen)
            findings.append((position, _weigh(plain, tracker, check, position, behaviour), reader))
    return findings


def _weigh(plain: PlainDraws, tracker: Tracker, check: Check, position: int, behaviour: int) -> Check:
    """What a card identified after it came out tells of the order: it confirms the cut found, or puts it in
    doubt (then no identity is taken from the order in this shoe, from this very draw on). From behaviour 4 only
    a card at a place not identified before confirms it: the same card identified again (entered by the dealer
    and read by the camera) says nothing more of where the cut lies."""
    if check.ok and not check.aligned and tracker.aligned and (behaviour < 4 or position not in plain.identified):
        plain.confirmed = True  # one more card where the cut puts it: one misread card cannot mislead
    if check.unaligned or check.mismatch is not None:
        plain.doubted = True
    if not plain.confirmed:
        plain.identified.add(position)
    return check


def _report(table: TableController, step: Step, tracker: Tracker, plain: PlainDraws, findings: list[Finding]) -> None:
    for position, check, source in findings:
        if check.unaligned:
            _unaligned(table, step, tracker, source, position)
        elif check.mismatch is not None:
            _hold_mismatch(table, step, check.mismatch, source)
    if plain.burned and plain.confirmed and not plain.doubted and table.shoe is not None:
        # The face-down burns are known now: counted in the shoe (its reconciliation), not published.
        for position in plain.burned:
            table.shoe.unread_identified(parse_card(tracker.dealt_card(position)))
        plain.burned.clear()


def _entered(table: TableController, item: Item, step: Step, misdeal: int | None) -> None:
    """The dealer entered a drawn card that was not identified: it narrows the cut, or is checked."""
    plain = table.shuffler.plain if table.shuffler is not None else None
    tracker = table.shuffler.tracker if table.shuffler is not None else None
    if plain is None or tracker is None or misdeal not in plain.unread or plain.doubted:
        return
    position = plain.unread.pop(misdeal)
    card = str(parse_card(str((item.get("args") or {}).get("card"))))
    check = _weigh(plain, tracker, tracker.identify(position, card), position, table.behaviour)
    _report(table, step, tracker, plain, [(position, check, f"command:{item.get('client')}")])


def commitment_problems(records: Iterable[dict[str, Any]]) -> tuple[int, list[str]]:
    """Every `shoe.opened` commitment of a journal checked against the reveal of its `shoe.closed`:
    (commitments checked, one line per shoe whose reveal does not match)."""
    from shoed.rules.shuffle import reveal_matches

    opened, closed = ev.kind_of(ev.ShoeOpened), ev.kind_of(ev.ShoeClosed)
    committed: dict[tuple[Any, Any], str] = {}
    checked, problems = 0, list[str]()
    for record in records:
        for event in record.get("events") or () if record.get("kind") == "step" else ():
            key = (event.get("table"), event.get("shoe"))
            if event.get("kind") == opened and event.get("commitment"):
                committed[key] = event["commitment"]
            elif event.get("kind") == closed and key in committed:
                commitment = committed.pop(key)
                reveal = event.get("reveal") or {}
                checked += 1
                try:
                    ok = reveal_matches(commitment, list(reveal.get("order") or ()), bytes.fromhex(reveal.get("salt", "")))
                except (TypeError, ValueError):
                    ok = False
                if not ok:
                    problems.append(f"table {key[0]} shoe {key[1]}: the revealed order does not match the commitment "
                                    f"made when the shoe opened (seq {event.get('seq')})")
    return checked, problems


HANDLERS: dict[str, Handler] = {
    "shuffle_started": on_shuffle_started,
    "deck_check": on_deck_check,
    "order_chunk": on_order_chunk,
    "shuffle_completed": on_shuffle_completed,
    "shuffler_error": on_shuffler_error,
    "meters": on_meters,
}


def install(handlers: dict[str, Handler]) -> None:
    """Add these handlers to the controller's table of input kinds (shoed.table._HANDLERS)."""
    handlers.update(HANDLERS)
    handlers["shoe_inserted"] = wrap_shoe_inserted(handlers["shoe_inserted"])
    handlers["command"] = wrap_command(handlers["command"])
    handlers["draw"] = on_draw
    handlers["card"] = wrap_card(handlers["card"], readable=True)
    handlers["unreadable"] = wrap_card(handlers["unreadable"], readable=False)
