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
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from shoed.rules.roads import Outcome, Roads, roads, roads_after
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

    @property
    def results(self) -> tuple[Outcome, ...]:
        return self.shoe_results.outcomes

    @property
    def result_coups(self) -> tuple[int | None, ...]:
        """The table's coup number of each result."""
        return self.shoe_results.coups


def initial(table: str) -> DisplayState:
    return DisplayState(table=table)


def apply(state: DisplayState, item: dict) -> DisplayState:
    """The state after one snapshot, event or shell item."""
    kind = item.get("kind")
    if kind == "snapshot":
        return from_snapshot(state, item)
    if kind == "watch.connection":
        return replace(state, connection=str(item.get("state")))
    if kind == "watch.odds":
        return replace(state, odds=item.get("odds"), odds_local=True)
    handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
    if isinstance(kind, str) and kind.startswith("device."):
        handler = _on_device
    state = replace(state, seq=item.get("seq", state.seq), events=state.events + 1)
    if kind in WAIT_CHANGES or (kind == "alarm" and item.get("alarm") in LOCKING_ALARMS) or (
            kind == "table.started" and state.wait_since is None):
        state = replace(state, wait_since=item.get("utc", state.wait_since))
    return handler(state, item) if handler else state


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
        table=snap.get("table") or item.get("table") or state.table,
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
        roads=roads(results.outcomes),
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
        shoe_results=NO_RESULTS, roads=EMPTY_ROADS, voids=(), coup=None, last=None, odds=None,
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
    return replace(state, phase="burning", cards_left=_seen(state, _read(e)))


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


def _roads(state: DisplayState, results: ShoeResults, e: dict) -> Roads:
    """The roads after a coup.result or coup.void: the coup's road step, as the table published
    it, added to the roads; laid out again from the results only where no step follows the
    roads shown (a result voided, or a table that publishes no steps)."""
    if results is state.shoe_results:
        return state.roads
    step = e.get("road")
    if e.get("kind") == "coup.result" and isinstance(step, dict):
        try:
            return roads_after(state.roads, step)
        except (ValueError, KeyError, TypeError):
            pass
    return roads(results.outcomes)


def _on_coup_result(state: DisplayState, e: dict) -> DisplayState:
    results = state.shoe_results.after(e)
    view = CoupView.of_record(e)
    return replace(state, shoe_results=results, roads=_roads(state, results, e), coup=view, last=view)


def _on_coup_void(state: DisplayState, e: dict) -> DisplayState:
    results = state.shoe_results.after(e)  # voided after its result: no longer a result
    view = CoupView.of_record(e)
    return replace(
        state, shoe_results=results, roads=_roads(state, results, e),
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
    return replace(state, note=f"daemon started{how} ({e.get('utc', '')[:19]})")


def _on_table_stopped(state: DisplayState, e: dict) -> DisplayState:
    return replace(state, note=f"daemon stopped ({e.get('utc', '')[:19]})")


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
