"""What a table display knows: a pure fold of the table's snapshot and the events after it.

A display joins late (shoed.net.client.TableClient): it gets a snapshot of the
table, then every later event once and in seq order. `apply(state, item)`
takes either and returns the new state; a snapshot replaces what the display
knew (the table is the authority), an event changes only what it names. No
I/O and no clock: the shell (`shoed.display.live`) says when the link is
silent with an item of its own, `{"kind": "watch.connection", "state": ...}`.

The fold applies what the table publishes: a coup voided after its result is no
longer a result, misdeals stay pending until corrected or the coup is void, and
the alarms the table holds until it clears them (the schema's `HELD_ALARMS`, the
set the controller holds) are told apart from one-off notices; a display that
stayed connected and one that joined late show the same
(tests/display/test_late_joiners.py).

What comes from the wire is checked where it enters (`checked`): an item whose fields the
fold reads have the wrong type, a result without a winner, or more results, voids or
misdeals than a shoe of its decks can hold, is dropped and counted (`dropped`, shown on the
display), never folded. Every string it carries is made one printable line of at most
TEXT_MAX characters (`shown`), once, here: a text from the wire never drives the terminal.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from shoed.net.wire import one_line
from shoed.rules.roads import Outcome, RoadBuilder, Roads, roads, roads_after
from shoed.table.results import NO_RESULTS, ShoeResults
from shoed.rules.misdeal import OUTLIVE_VOID
from shoed.rules.stats import CARDS_PER_DECK
from shoed.table.events import HELD_ALARMS, LOCKING_ALARMS, ODDS_FIELDS

# Link states, set by the shell.
CONNECTING, LIVE, RECONNECTING = "connecting", "live", "reconnecting"

NOTICES_KEPT = 4

# Events after which the table waits for something else (or for the same thing afresh); besides
# these, a locking alarm raised or cleared, and the table's first start. A start after a stop
# (`table.started` with a wait already known) goes on with the wait the table had.
WAIT_CHANGES = frozenset({
    "shoe.opened", "shoe.burn", "shoe.burn_complete", "shoe.finished", "shoe.closed", "coup.opened", "card",
    "coup.result", "coup.void", "coup.confirmed", "coup.decision", "misdeal", "misdeal.corrected",
})
EMPTY_ROADS = roads(())

TEXT_MAX = 200  # characters of one string from the wire, once made one printable line
MAX_DECKS = 16  # the most decks a shoe is opened with (shoed.table.events.OpenShoeArgs)
DEVICES_KEPT = 64  # readers whose link state is shown


class Malformed(ValueError):
    """An item from the wire the display does not fold: its message says why, on one line."""


def shown(text: str) -> str:
    """A string from the wire as the display keeps it: one printable line (shoed.net.wire.one_line
    writes a control, a C1 control, a line break and a bidirectional or invisible format character
    as its escape), cut to TEXT_MAX characters."""
    line = one_line(text)
    return line if len(line) <= TEXT_MAX else line[:TEXT_MAX - 1] + "\u2026"


def _clean(value: Any) -> Any:
    """Every string in `value` (keys included) made `shown`; other values as they are."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def coups_held(decks: object) -> int:
    """The most coups a shoe of `decks` decks can deal (four cards each at least); a shoe of
    unknown or implausible decks counts as MAX_DECKS."""
    n = decks if isinstance(decks, int) and not isinstance(decks, bool) and 1 <= decks <= MAX_DECKS else MAX_DECKS
    return n * CARDS_PER_DECK // 4


@dataclass(frozen=True, slots=True)
class CoupView:
    """One coup as the display shows it: being dealt, with its result, or void."""

    number: int | None
    status: str  # "dealing", "result" or "void"
    player_cards: tuple[str, ...] = ()
    banker_cards: tuple[str, ...] = ()
    player_total: int | None = None
    banker_total: int | None = None
    winner: str | None = None  # "player", "banker" or "tie"
    natural: bool = False
    player_pair: bool = False
    banker_pair: bool = False
    reason: str | None = None  # why it is void

    @classmethod
    def of_record(cls, record: dict, number: int | None = None) -> CoupView:
        """From a coup.result or coup.void event, or a snapshot's coup record."""
        void = bool(record.get("void")) or record.get("kind") == "coup.void"
        return cls(
            number=record.get("coup", number) if number is None else number,
            status="void" if void else "result",
            player_cards=tuple(record.get("player_cards") or ()),
            banker_cards=tuple(record.get("banker_cards") or ()),
            player_total=None if void else record.get("player_total"),
            banker_total=None if void else record.get("banker_total"),
            winner=None if void else record.get("winner"),
            natural=not void and bool(record.get("natural")),
            player_pair=not void and bool(record.get("player_pair")),
            banker_pair=not void and bool(record.get("banker_pair")),
            reason=record.get("reason") if void else None,
        )


@dataclass(frozen=True, slots=True)
class DisplayState:
    """Everything one table display shows. Build with `initial(table)`, then `apply`."""

    table: str
    connection: str = CONNECTING
    seq: int | None = None
    ruleset: str | None = None
    decks: int | None = None
    shoe: str | None = None
    phase: str | None = None  # burn_first, burning, dealing, finished, closed
    cards_left: int | None = None
    cut_card: bool = False
    last_coup: int | None = None  # the shoe's last coup, once the cut card is out
    shoe_results: ShoeResults = NO_RESULTS  # the shoe's results, less those voided after them
    roads: Roads = EMPTY_ROADS
    voids: tuple[tuple[int | None, str], ...] = ()  # (coup, reason)
    coup: CoupView | None = None  # the coup on the table now
    last: CoupView | None = None  # the last coup finished (result or void)
    odds: dict | None = None  # as in a shoe.odds event
    odds_local: bool = False  # computed by the display from the snapshot, not sent by the table
    alarms: tuple[tuple[str, str], ...] = ()  # (name, text), held by the table until cleared
    notices: tuple[tuple[int | None, str, str], ...] = ()  # (coup, name, text), the last few one-off alarms
    pending: tuple[tuple[int, str, str], ...] = ()  # misdeals awaiting correction: (id, kind, correction)
    locked: str | None = None
    replay: bool = False  # the table shown is a journal's replay (`shoed replay --publish`), not the live one
    devices: tuple[tuple[str, str], ...] = ()  # (source, link state: connected, lost or restored)
    fallback: str | None = None  # the fallback reader that deals now (device.fallback), None: the first one
    remaining_by_rank: tuple[int, ...] | None = None  # from the snapshot (for odds computed here)
    reconciliation: dict | None = None  # from shoe.closed
    note: str | None = None  # the daemon started or stopped
    # UTC of the input that began the table's current wait (the snapshot's `waiting.since`, then the
    # time of each event that moves the table on); what it waits for is told from this state
    # (shoed.display.terminal.waiting_of), so a display left open and a late joiner agree.
    wait_since: str | None = None
    snapshots: int = 0
    events: int = 0
    dropped: int = 0  # items from the wire not folded (Malformed), kept across snapshots
    dropped_why: str | None = None  # why the last one was
    wire_dropped: int = 0  # messages the client dropped before the fold (shoed.net.client, stats "malformed")
    # The roads built one coup at a time (RoadBuilder) and the Roads they gave: used while this
    # state's roads are those Roads (the fold stays pure: an older state builds its own).
    layout: _Layout | None = field(default=None, compare=False, repr=False)

    @property
    def results(self) -> tuple[Outcome, ...]:
        return self.shoe_results.outcomes

    @property
    def result_coups(self) -> tuple[int | None, ...]:
        """The table's coup number of each result."""
        return self.shoe_results.coups


class _Layout:
    __slots__ = ("builder", "roads")

    def __init__(self, builder: RoadBuilder, shown: Roads) -> None:
        self.builder, self.roads = builder, shown


def initial(table: str) -> DisplayState:
    return DisplayState(table=table)


def apply(state: DisplayState, item: dict) -> DisplayState:
    """The state after one snapshot, event or shell item. A snapshot or event that does not
    pass `checked` is dropped and counted: the state is otherwise the one before it."""
    kind = item.get("kind") if isinstance(item, dict) else None
    if kind == "watch.connection":
        return replace(state, connection=str(item.get("state")))
    if kind == "watch.odds":
        return replace(state, odds=item.get("odds"), odds_local=True)
    if kind == "watch.dropped":
        return replace(state, wire_dropped=int(item.get("count") or 0))
    try:
        item = checked(state, item)
    except Malformed as exc:
        return replace(state, dropped=state.dropped + 1, dropped_why=shown(str(exc)))
    if kind == "snapshot":
        return from_snapshot(state, item)
    handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
    if isinstance(kind, str) and kind.startswith("device."):
        handler = _on_device
    state = replace(state, seq=item.get("seq", state.seq), events=state.events + 1)
    if kind in WAIT_CHANGES or (kind == "alarm" and item.get("alarm") in LOCKING_ALARMS) or (
            kind == "table.started" and state.wait_since is None):
        state = replace(state, wait_since=item.get("utc", state.wait_since))
    return handler(state, item) if handler else state


# ----- what is folded -------------------------------------------------------------
# The fields the fold reads, by kind, and what each must be when it is there (None allowed
# unless the field is in REQUIRED). The schema (shoed.table.events) says the same of a whole
# event; the fold asks only what it reads, so an event of a newer daemon with more fields, or
# fewer that it does not read, is still shown.
def _int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _str(v: object) -> bool:
    return isinstance(v, str)


def _strs(v: object) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _dict(v: object) -> bool:
    return isinstance(v, dict)


def _number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _numbers(v: object) -> bool:
    return isinstance(v, dict) and all(isinstance(k, str) and _number(x) for k, x in v.items())


def _list(v: object) -> bool:
    return isinstance(v, list)


def _names(v: object) -> bool:
    return isinstance(v, dict) and all(isinstance(k, str) and isinstance(x, str) for k, x in v.items())


def _winner(v: object) -> bool:
    return v in ("player", "banker", "tie")


_COMMON = {"seq": _int, "utc": _str, "coup": _int, "shoe": _str}
_ODDS = {"cards_left": _int, "probabilities": _numbers, "player_expectation": _numbers, "favourable": _strs}
_HANDS = {"player_cards": _strs, "banker_cards": _strs, "player_total": _int, "banker_total": _int}
FIELDS: dict[str, dict[str, Any]] = {
    "shoe.opened": {"decks": _int, "ruleset": _str},
    "shoe.burn": {"card": _str},
    "shoe.cut_card": {"last_coup": _int},
    "shoe.closed": {"reconciliation": _dict},
    "shoe.odds": _ODDS,
    "card": {"card": _str, "total": _int, "recipient": _str},
    "coup.result": {**_HANDS, "winner": _winner, "road": _dict},
    "coup.void": {**_HANDS, "reason": _str},
    "misdeal": {"misdeal": _dict},
    "misdeal.corrected": {"misdeal": _int, "correction": _str, "card": _str},
    "alarm": {"alarm": _str, "text": _str, "code": _str},
}
REQUIRED = {"coup.result": ("winner",), "misdeal": ("misdeal",), "alarm": ("alarm",)}
_MISDEAL = {"id": _int, "kind": _str, "correction": _str, "card": _str}
_SNAPSHOT = {"table": _str, "ruleset": _str, "decks": _int, "shoe": _dict, "coups": _list, "coup": _dict,
             "odds": _dict, "alarms": _names, "pending_misdeals": _list, "locked": _str, "devices": _names,
             "fallback": _str, "waiting": _dict}
_SNAPSHOT_SHOE = {"id": _str, "phase": _str, "cards_left": _int, "last_coup": _int,
                  "remaining_by_rank": lambda v: isinstance(v, list) and len(v) == 13 and all(
                      _int(x) and x <= 4 * MAX_DECKS for x in v),
                  "reconciliation": _dict}
_OPEN_COUP = {"state": _str, "number": _int, **_HANDS}


def _fields(what: str, record: object, spec: dict[str, Any], required: tuple[str, ...] = ()) -> dict:
    if not isinstance(record, dict):
        raise Malformed(f"{what}: not an object")
    for name in required:
        if record.get(name) is None:
            raise Malformed(f"{what}: no {name}")
    for name, ok in spec.items():
        value = record.get(name)
        if value is not None and not ok(value):
            raise Malformed(f"{what}: {name} of the wrong type ({type(value).__name__})")
    return record


def checked(state: DisplayState, item: dict) -> dict:
    """A snapshot or event from the wire, its strings cleaned (`shown`), if the fold can take
    it; raises Malformed if not."""
    if not isinstance(item, dict):
        raise Malformed("not an object")
    kind = item.get("kind")
    if not isinstance(kind, str):
        raise Malformed("no kind")
    what = shown(kind)
    if kind == "snapshot":
        if not _int(item.get("seq")):
            raise Malformed("snapshot: no seq")
        snap = _fields("snapshot", item.get("state"), _SNAPSHOT)
        _fields("snapshot shoe", snap.get("shoe") or {}, _SNAPSHOT_SHOE)
        _fields("snapshot coup", snap.get("coup") or {}, _OPEN_COUP)
        _fields("snapshot waiting", snap.get("waiting") or {}, {"since": _str})
        _fields("snapshot odds", snap.get("odds") or {}, _ODDS)
        coups = snap.get("coups") or []
        held = coups_held(snap.get("decks"))
        if len(coups) > held:
            raise Malformed(f"snapshot: {len(coups)} coups, more than a shoe holds ({held})")
        for record in coups:
            _fields("snapshot coups", record, {**_HANDS, "reason": _str, "coup": _int},
                    () if isinstance(record, dict) and record.get("void") else ("winner",))
            if not record.get("void") and not _winner(record.get("winner")):
                raise Malformed("snapshot coups: a result without a winner")
        pending = snap.get("pending_misdeals") or []
        if len(pending) > held:
            raise Malformed(f"snapshot: {len(pending)} pending misdeals, more than a shoe holds ({held})")
        for entry in pending:
            _fields("snapshot pending_misdeals", entry, _MISDEAL, ("id",))
        if len(snap.get("devices") or {}) > DEVICES_KEPT:
            raise Malformed(f"snapshot: more than {DEVICES_KEPT} devices")
        return _clean(item)
    _fields(what, item, {**_COMMON, **FIELDS.get(kind, {})}, REQUIRED.get(kind, ()))
    held = coups_held(state.decks)
    if kind == "misdeal":
        _fields(what, item["misdeal"], _MISDEAL, ("id",) if item["misdeal"].get("correctable") else ())
        if item["misdeal"].get("correctable") and len(state.pending) >= held:
            raise Malformed(f"misdeal: more pending misdeals than a shoe holds ({held})")
    elif kind == "coup.result" and len(state.results) >= held:
        raise Malformed(f"coup.result: more results than a shoe holds ({held})")
    elif kind == "coup.void" and len(state.voids) >= held:
        raise Malformed(f"coup.void: more voids than a shoe holds ({held})")
    elif kind in ("device.connected", "device.lost", "device.restored") and len(state.devices) >= DEVICES_KEPT \
            and shown(str(item.get("source"))) not in dict(state.devices):
        raise Malformed(f"{what}: more than {DEVICES_KEPT} devices")
    return _clean(item)


def fold(items, state: DisplayState | None = None, table: str = "t1") -> DisplayState:
    """Apply items in order, from `state` or from nothing."""
    state = state if state is not None else initial(table)
    for item in items:
        state = apply(state, item)
    return state


# ----- snapshot -----------------------------------------------------------------
def from_snapshot(state: DisplayState, item: dict) -> DisplayState:
    """The table's state replaces what the display knew; only the link state is kept."""
    snap = item.get("state") or {}
    shoe = snap.get("shoe") or {}
    coups = list(snap.get("coups") or ())
    results = ShoeResults.of_coups(coups)
    builder = RoadBuilder.from_results(results.outcomes)
    layout = _Layout(builder, builder.roads())
    voids = [(record.get("coup"), _reason(record)) for record in coups if record.get("void")]
    last = CoupView.of_record(coups[-1]) if coups else None
    coup = last
    open_coup = snap.get("coup")
    if open_coup and open_coup.get("state") == "open":
        coup = CoupView(
            number=open_coup.get("number"), status="dealing",
            player_cards=tuple(open_coup.get("player_cards") or ()),
            banker_cards=tuple(open_coup.get("banker_cards") or ()),
            player_total=open_coup.get("player_total") if open_coup.get("player_cards") else None,
            banker_total=open_coup.get("banker_total") if open_coup.get("banker_cards") else None,
        )
    alarms = snap.get("alarms") or {}
    remaining = shoe.get("remaining_by_rank")
    return DisplayState(
        # the table the client checked the snapshot's reply against, not what the state inside says
        table=item.get("table") or state.table,
        connection=state.connection,
        seq=item.get("seq", snap.get("seq")),
        ruleset=snap.get("ruleset"),
        decks=snap.get("decks"),
        shoe=shoe.get("id"),
        phase=shoe.get("phase"),
        cards_left=shoe.get("cards_left"),
        cut_card=bool(shoe.get("cut_card")),
        last_coup=shoe.get("last_coup"),
        shoe_results=results,
        roads=layout.roads,
        layout=layout,
        voids=tuple(voids),
        coup=coup,
        last=last,
        odds=snap.get("odds"),
        alarms=tuple((str(k), str(v)) for k, v in alarms.items()),
        pending=tuple(_pending(p) for p in snap.get("pending_misdeals") or ()),
        locked=snap.get("locked"),
        replay=snap.get("replay") is True,
        devices=tuple(sorted((str(k), str(v)) for k, v in (snap.get("devices") or {}).items())),
        fallback=snap.get("fallback"),
        remaining_by_rank=tuple(remaining) if remaining is not None else None,
        reconciliation=shoe.get("reconciliation"),
        wait_since=(snap.get("waiting") or {}).get("since"),
        snapshots=state.snapshots + 1,
        events=state.events,
        dropped=state.dropped,
        dropped_why=state.dropped_why,
        wire_dropped=state.wire_dropped,
    )


def _reason(void: dict) -> str:
    return str(void.get("reason") or "void")


def _pending(entry: dict) -> tuple[int, str, str]:
    return (int(entry.get("id") or 0), str(entry.get("kind")), str(entry.get("correction")))


# ----- events --------------------------------------------------------------------
def _on_shoe_opened(state: DisplayState, e: dict) -> DisplayState:
    decks = e.get("decks", state.decks)
    return replace(
        state, shoe=e.get("shoe"), ruleset=e.get("ruleset", state.ruleset), decks=decks, phase="burn_first",
        cards_left=decks * CARDS_PER_DECK if isinstance(decks, int) else None, cut_card=False, last_coup=None,
        shoe_results=NO_RESULTS, roads=EMPTY_ROADS, layout=None, voids=(), coup=None, last=None, odds=None,
        odds_local=False, pending=(), remaining_by_rank=None, reconciliation=None,
    )


def _read(e: dict) -> bool:
    """The event's card was read: it counts as seen, whether or not its identity is shown
    (`card_withheld`, shoed.table.audience); a card the reader could not identify does not."""
    return e.get("card") is not None or bool(e.get("card_withheld"))


def _seen(state: DisplayState, n: int) -> int | None:
    """Cards left once `n` more are seen (a negative `n`: put back in the shoe, unseen again)."""
    return None if state.cards_left is None else state.cards_left - n


def _on_shoe_burn(state: DisplayState, e: dict) -> DisplayState:
    # A burn card is out of the shoe whether or not it was read (a face-down one need not be).
    return replace(state, phase="burning", cards_left=_seen(state, 1))


def _on_burn_complete(state: DisplayState, e: dict) -> DisplayState:
    return replace(state, phase="dealing")


def _on_cut_card(state: DisplayState, e: dict) -> DisplayState:
    return replace(state, cut_card=True, last_coup=e.get("last_coup"))


def _on_shoe_finished(state: DisplayState, e: dict) -> DisplayState:
    return replace(state, phase="finished")


def _on_shoe_closed(state: DisplayState, e: dict) -> DisplayState:
    return replace(state, phase="closed", reconciliation=e.get("reconciliation"), pending=())


def _on_odds(state: DisplayState, e: dict) -> DisplayState:
    odds = {k: e[k] for k in ODDS_FIELDS if k in e}
    return replace(state, odds=odds, odds_local=False)


def _on_coup_opened(state: DisplayState, e: dict) -> DisplayState:
    phase = "dealing" if state.phase in (None, "burn_first", "burning") else state.phase  # a game without burn
    return replace(state, coup=CoupView(number=e.get("coup"), status="dealing"), phase=phase)


def _on_card(state: DisplayState, e: dict) -> DisplayState:
    if not _read(e):
        return state  # an unreadable card: its misdeal says what to do
    if not e.get("held"):  # a held card left the shoe with its misdeal's card event
        state = replace(state, cards_left=_seen(state, 1))
    recipient = e.get("recipient")
    if recipient not in ("player", "banker") or e.get("card") is None:
        return state  # a foreign or extra card, or one not faced yet: counted, but in no hand
    coup = state.coup
    if coup is None or coup.status != "dealing" or coup.number != e.get("coup"):
        coup = CoupView(number=e.get("coup"), status="dealing")
    if recipient == "player":
        coup = replace(coup, player_cards=coup.player_cards + (e["card"],), player_total=e.get("total"))
    else:
        coup = replace(coup, banker_cards=coup.banker_cards + (e["card"],), banker_total=e.get("total"))
    return replace(state, coup=coup)


def _step_fits(step: dict, outcome: Outcome, position: int) -> bool:
    """Whether a coup.result's road step is this coup's: its result, marks and position those of
    the event, its big-road cell a decision, its marks red or blue."""
    if (step.get("position"), step.get("result"), step.get("banker_pair"), step.get("player_pair"),
            step.get("natural")) != (position, outcome.winner, outcome.banker_pair, outcome.player_pair,
                                     outcome.natural):
        return False
    cell = step.get("big_road")
    if cell is not None and not (isinstance(cell, dict) and cell.get("winner") in ("B", "P")):
        return False
    for name in ("big_eye_boy", "small_road", "cockroach_pig"):
        added = step.get(name)
        if added is not None and not (isinstance(added, dict) and added.get("colour") in ("R", "B")):
            return False
    ask = step.get("ask_road")
    return isinstance(ask, dict) and set(ask) == {"banker", "player"} and all(
        isinstance(marks, dict) and all(v in ("R", "B", None) for v in marks.values()) for marks in ask.values())


def _layout(state: DisplayState) -> _Layout:
    """The RoadBuilder of the roads this state shows: kept if it is still theirs, else built again
    from the results (once; then one coup at a time)."""
    layout = state.layout
    if layout is not None and layout.roads is state.roads and len(layout.builder) == len(state.results):
        return layout
    builder = RoadBuilder.from_results(state.results, state.roads.rows)
    return _Layout(builder, state.roads)


def _roads(state: DisplayState, results: ShoeResults, e: dict) -> tuple[Roads, _Layout | None]:
    """The roads after a coup.result or coup.void, with the builder that follows them. A result adds
    one coup: the table's road step (the `road` of its coup.result) where it is this coup's
    (`_step_fits`), else the builder's; a result voided takes the last coup back."""
    if results is state.shoe_results:
        return state.roads, state.layout
    layout = _layout(state)
    if len(results.outcomes) != len(state.results) + 1:  # a result voided: its coup taken back
        layout.builder.pop()
        shown_roads = layout.builder.roads()
        layout.roads = shown_roads
        return shown_roads, layout
    outcome = results.outcomes[-1]
    layout.builder.add(outcome)
    step = e.get("road")
    after = None
    if isinstance(step, dict) and _step_fits(step, outcome, len(results.outcomes)):
        try:
            after = roads_after(state.roads, step)
        except (ValueError, KeyError, TypeError, AttributeError):
            after = None
    if after is None:
        after = layout.builder.roads()
    layout.roads = after
    return after, layout


def _on_coup_result(state: DisplayState, e: dict) -> DisplayState:
    results = state.shoe_results.after(e)
    view = CoupView.of_record(e)
    shown_roads, layout = _roads(state, results, e)
    return replace(state, shoe_results=results, roads=shown_roads, layout=layout, coup=view, last=view)


def _on_coup_void(state: DisplayState, e: dict) -> DisplayState:
    results = state.shoe_results.after(e)  # voided after its result: no longer a result
    view = CoupView.of_record(e)
    shown_roads, layout = _roads(state, results, e)
    return replace(
        state, shoe_results=results, roads=shown_roads, layout=layout,
        voids=state.voids + ((e.get("coup"), _reason(e)),), coup=view, last=view,
        pending=tuple(p for p in state.pending if p[1] in OUTLIVE_VOID),
    )


def _on_misdeal(state: DisplayState, e: dict) -> DisplayState:
    detail = e.get("misdeal") or {}
    if not detail.get("correctable"):
        return state  # the coup is void: its coup.void follows
    return replace(state, pending=state.pending + (_pending(detail),))


def _on_misdeal_corrected(state: DisplayState, e: dict) -> DisplayState:
    pending = tuple(p for p in state.pending if p[0] != e.get("misdeal"))
    # A card put back in the shoe will be read again: it is unseen once more.
    back = e.get("correction") == "return_card" and _read(e)
    return replace(state, pending=pending, cards_left=_seen(state, -back))


def _on_alarm(state: DisplayState, e: dict) -> DisplayState:
    name, active = str(e.get("alarm")), bool(e.get("active"))
    text = str(e.get("text") or e.get("code") or name)
    held = dict(state.alarms)
    locked = state.locked
    if name in LOCKING_ALARMS:
        locked = text if active else None
    if active and name in HELD_ALARMS:
        held[name] = text
        fallback = None if name == "no_reader" else state.fallback  # every reader is lost: none deals
        return replace(state, alarms=tuple(held.items()), locked=locked, fallback=fallback)
    if not active and name in held:
        del held[name]
        return replace(state, alarms=tuple(held.items()), locked=locked)
    coup = state.coup.number if state.coup else None
    notices = (state.notices + ((coup, name, text),))[-NOTICES_KEPT:]
    return replace(state, notices=notices, locked=locked)


def _on_device(state: DisplayState, e: dict) -> DisplayState:
    word = str(e.get("kind")).partition(".")[2]
    if word in ("primary", "fallback"):  # which reader deals, not the state of a link
        return replace(state, fallback=e.get("source") if word == "fallback" else None)
    if word not in ("connected", "lost", "restored", "gone"):
        return state  # hello and warnings change no link state
    devices = dict(state.devices)
    devices[str(e.get("source"))] = word
    if word == "gone":
        del devices[str(e.get("source"))]
    return replace(state, devices=tuple(sorted(devices.items())))


def _on_table_started(state: DisplayState, e: dict) -> DisplayState:
    how = "" if e.get("clean", True) else " after an unclean stop"
    return replace(state, note=f"daemon started{how} ({(e.get('utc') or '')[:19]})")


def _on_table_stopped(state: DisplayState, e: dict) -> DisplayState:
    return replace(state, note=f"daemon stopped ({(e.get('utc') or '')[:19]})")


_HANDLERS = {
    "shoe.opened": _on_shoe_opened,
    "shoe.burn": _on_shoe_burn,
    "shoe.burn_complete": _on_burn_complete,
    "shoe.cut_card": _on_cut_card,
    "shoe.finished": _on_shoe_finished,
    "shoe.closed": _on_shoe_closed,
    "shoe.odds": _on_odds,
    "coup.opened": _on_coup_opened,
    "card": _on_card,
    "coup.result": _on_coup_result,
    "coup.void": _on_coup_void,
    "misdeal": _on_misdeal,
    "misdeal.corrected": _on_misdeal_corrected,
    "alarm": _on_alarm,
    "table.started": _on_table_started,
    "table.stopped": _on_table_stopped,
}
