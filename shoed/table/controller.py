"""The table controller: every input in, events out. Pure and deterministic.

Inputs are what happened at the table, each a dict with its `kind` and its time
as data (`mono_ns`, `utc_ns`): a card read (or an unreadable one), a dealer's
button, a command from the console or the pit, a device change, the cut card,
the shoe taken out or put in. Events are what shoed publishes and journals.
The controller reads no clock and does no I/O, so the same inputs always give
the same events: a journal of inputs replays to exactly its recorded events,
and a restart rebuilds the state by replaying the current shoe's inputs.

The flow of a shoe: opened (shoe put in, or the `open_shoe` command) -> the
burn (first card exposed, that many burned: Macau statutory rules Art. II) ->
coup 1 opens -> cards follow the tableau (shoed.rules.coup) -> the result ->
the dealer confirms, which opens the next coup -> ... the cut card marks the
last coup (Art. III) -> after it the shoe is finished -> shoe out or
`close_shoe`: the reconciliation. A card that breaks the sequence is a misdeal
(Art. X): corrected at once where it can be (burn or return the card, enter it
by hand, deal the missing card), otherwise the coup is void.
"""

from __future__ import annotations

import datetime as _dt
import functools
import math
from dataclasses import dataclass, field
from typing import Any

import msgspec
from msgspec import UNSET

from shoed.table import events as ev
from shoed.table import shuffle as shuffle_table
from shoed.table import waits
from shoed.table.events import (
    CLEARED_BY,
    COMMANDS,
    LOCKING_ALARMS,
    NEEDS_ROLE,
    ODDS_FIELDS,
    PIT_CLEARED_ALARMS,
    SCHEMA_VERSION,
    CommandRejected,
)
from shoed.rules import misdeal as md
from shoed.rules.cards import Card, CardError, parse_card
from shoed.rules.coup import Coup, hand_total, new_coup
from shoed.rules.ruleset import Ruleset
from shoed.rules.roads import Outcome, RoadBuilder
from shoed.rules.shoe import BURN_FIRST, BURNING, CLOSED, DEALING, FINISHED, Shoe

UNKNOWN = "?"  # a card a reader saw but could not identify
TRACKED = 416  # reads kept in step per reader: a whole 8-deck shoe

# Coup states.
NO_COUP = "none"  # between coups: waiting for the confirm that opens the next
OPEN = "open"  # cards are due
COMPLETE = "complete"  # the result stands; waiting for confirm
VOID = "void"  # voided; waiting for confirm

# What of a shoe's Hello must not change while a coup is dealt (and vendor, serial: never unnoticed).
IDENTITY = ("vendor", "serial", "boot")

_BURN_PHASES = frozenset((BURN_FIRST, BURNING))  # the shoe's phases in which a card out of it is burned

# How the table takes what comes, as a number journaled in its checkpoints ("behaviour"; 1 where a checkpoint
# names none): a journal replays under the behaviour it was recorded under, and a table moves to a newer one
# only with a new shoe, told by the power-on input ("behaviour"), so that replay equals record across versions.
# 2: a game card the shoe reports while the burn is due is the misdeal burn_short; a card drawn while an
# unreadable card waits to be entered is out of sequence; a burn card burned unread is counted out of the shoe;
# the cut card placed too near the end is a notice (cut_card_too_late); a shuffle abandoned is said.
# 3: a misdeal still open when its shoe closes ends with the shoe (unaccounted in its reconciliation; enter_card
# needs an open shoe); a void that closes a burn_during_coup counts its card with the void coup's; end_burn waits
# while an unreadable card an earlier end_burn left is to be entered; an unreadable card while the table is held is
# not burned (an unreadable_card, entered once the table goes on); a card is checked against a shuffler's order in
# the table's own notation (a card it cannot parse, as not read); a card does not open a shoe refused for its shuffle
# (auto_confirm), a shoe refused when it goes in closes the shoe that was in, a refused shoe taken out takes its
# shuffle with it, and a verified shoe going in clears shoe_unverified; a card returned to the shoe (return_card)
# is taken back by the order's check, so that it comes out again in its place; a plain shoe's draw while a card drawn
# before it waits to be entered takes no identity from the order (it would take the waiting card's place); a camera
# taking over from a plain shoe checks the draws it had not seen before it deals (it dealt the last one again); a
# card is checked against the order where the table takes it out of the shoe (a shoe's repeats after its link came
# back were checked again, a card a camera dealt at a handover not at all); unreadable cards are entered oldest first.
# 4: a confirm with no coup to confirm is refused (confirm_refused, or the command's error): while the burn is due
# (it did nothing), and after the shoe's last coup was confirmed (it said the shoe finished again); the wait goes on
# when a face-down burn card is identified later (it began again, with no event to tell the displays); enter_card
# names its misdeal while two or more unreadable cards wait (unnamed, it answered the oldest); a plain shoe's cut is
# confirmed only by a card at a place not identified before (the same card entered and read by a camera confirmed it).
BEHAVIOUR = 4


def utc_text(utc_ns: int) -> str:
    """ISO 8601 UTC with microseconds, from the input's own timestamp: what
    `datetime.fromtimestamp(utc_ns / 1e9, UTC).isoformat()` writes, at a fraction of the cost
    (a replay formats the time of every input)."""
    global _last_hour
    # Seconds and microseconds split as fromtimestamp splits the float (half to even); in whole
    # numbers where the float cannot round otherwise: before 2038 (2**31 s) the float is within
    # 247 ns of the time (128 ns converting the integer, 119 ns dividing), so a time 250 ns or
    # more from a half microsecond rounds the same either way.
    whole, nanos = divmod(utc_ns, 1_000_000_000)  # the one division of the large number; the rest are small
    micro = nanos // 1000
    rest = nanos % 1000
    if 0 <= whole < _WHOLE_NUMBERS_UNTIL_S and (rest < 250 or rest > 750):
        if rest > 750:
            micro += 1
            if micro == 1_000_000:
                micro = 0
                whole += 1
    else:
        fraction, seconds = math.modf(utc_ns / 1e9)
        micro = round(fraction * 1e6)
        whole = int(seconds)
        if micro >= 1_000_000:
            micro -= 1_000_000
            whole += 1
        elif micro < 0:
            micro += 1_000_000
            whole -= 1
    start, hour = _last_hour  # one tuple, read at once: another thread may put another hour in its place
    second = whole - start
    if not 0 <= second < 3600:
        second = whole % 3600
        start = whole - second
        hour = _hour_text(start // 3600)
        _last_hour = (start, hour)
    return f"{hour}{_MINUTE_SECOND[second]}{_THREE_DIGITS[micro // 1000]}{_THREE_DIGITS[micro % 1000]}Z"


_WHOLE_NUMBERS_UNTIL_S = 2**31
# The hour utc_text formatted last: (its first second from the epoch, "YYYY-MM-DDTHH:"). Inputs are
# seconds apart: the next one is most often in the same hour, told by one subtraction.
_last_hour: tuple[int, str] = (0, "1970-01-01T00:")


_MINUTE_SECOND = tuple(f"{second // 60:02d}:{second % 60:02d}." for second in range(3600))  # "MM:SS." of an hour
_THREE_DIGITS = tuple(f"{n:03d}" for n in range(1000))  # the milliseconds, and the microseconds of a millisecond


@functools.lru_cache(maxsize=16)
def _hour_text(hour: int) -> str:
    """'YYYY-MM-DDTHH:' of an hour counted from the epoch."""
    return _dt.datetime.fromtimestamp(hour * 3600, _dt.UTC).isoformat()[:14]


# Card texts already parsed -> their card (a Card is immutable); a few hundred spellings at most.
_CARD_OF_TEXT: dict[str, Card] = {}


def card_of(text: Any) -> Card:
    """parse_card, remembered: card texts repeat (52 identities) and a Card is immutable.
    Errors are not remembered: a bad text raises CardError every time."""
    card = _CARD_OF_TEXT.get(text) if type(text) is str else None
    if card is None:
        card = parse_card(text)
        if len(_CARD_OF_TEXT) < 1024:
            _CARD_OF_TEXT[text] = card
    return card


class StartShoeFile(msgspec.Struct, frozen=True, gc=False):
    """Effect: a shoe was opened; the journal starts its file now, headed by a checkpoint."""

    shoe_id: str


class WorkOutOdds(msgspec.Struct, frozen=True, gc=False):
    """Effect: a coup (or the burn) ended; the live odds of what is left in the shoe are due,
    fed back as an `odds` input. Read `composition` before the next input is fed. A frozen
    struct (msgspec), made in C: one is made for every coup."""

    ruleset: Ruleset
    shoe: Shoe

    @property
    def composition(self) -> tuple[int, ...]:
        return self.shoe.remaining_by_rank()


Effect = StartShoeFile | WorkOutOdds


class Step(msgspec.Struct, gc=False):
    """What one input produced: events to journal and publish, a reply for commands, and the
    effects the shell carries out (the controller decides them; the shell only schedules).

    The events are the schema's structs (shoed.table.events), in `typed`; `events` is the same
    events as plain dicts (what the journal and the publisher take), made once when first asked.
    A struct (msgspec), not a class with an __init__: one is made for every input, in C. Nothing
    it holds refers back to it (events, effects and the reply are made for it), so it is made
    untracked by the garbage collector."""

    typed: list[ev.Base] = msgspec.field(default_factory=list)
    reply: dict[str, Any] | None = None
    effects: list[Effect] = msgspec.field(default_factory=list)
    _events: list[dict[str, Any]] | None = None

    @property
    def events(self) -> list[dict[str, Any]]:
        if self._events is None or len(self._events) != len(self.typed):
            self._events = msgspec.to_builtins(self.typed)
        return self._events


@dataclass(slots=True)
class TableController:
    table_id: str
    ruleset: Ruleset
    decks: int
    seq: int = 0  # last event seq; strictly increasing across restarts
    shoes_opened: int = 0
    shoe: Shoe | None = None
    closed_stub: Shoe | None = None  # the closed shoe a checkpoint named (its id alone), until the next opens
    burn_mode: bool = False
    coup: Coup | None = None
    coup_no: int = 0
    coup_state: str = NO_COUP
    coup_cards_source: list[str | None] = field(default_factory=list)
    roads: RoadBuilder = field(default_factory=RoadBuilder)  # the shoe's roads, one coup at a time
    odds: dict[str, Any] | None = None  # the last live odds of the shoe, for the snapshot
    results: list[dict[str, Any]] = field(default_factory=list)  # finished coups of this shoe (results and voids)
    pending: list[dict[str, Any]] = field(default_factory=list)  # open misdeals, each {id, misdeal, card}
    misdeal_ids: int = 0
    locked: str | None = None  # integrity lock reason; play stops until unlocked
    alarms: dict[str, str] = field(default_factory=dict)  # active alarms by name
    devices: dict[str, str] = field(default_factory=dict)  # source -> link state
    now_mono: int = 0
    now_utc: int = 0
    # Shoes without dealer buttons (Bee-Tek): the first card opens the shoe and a
    # card after a finished coup opens the next one. An extra card can then not be
    # told from the first card of the next coup: the pit's confirmation is the net.
    auto_confirm: bool = False
    # Last reliable shoe sequence number journaled per source, with the shoe's boot:
    # after a restart the driver drops what the shoe repeats from before it.
    links: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Failover between readers (a shoe, a camera over its exit), in priority order, set by
    # the power-on input. The first reader not reported lost deals; the reads of the others
    # are kept in step with what was dealt (`ahead`: read but not dealt yet; `behind`: dealt
    # but not read yet), so a card seen by two readers counts once, and a reader that takes
    # over deals at once what it saw before the one it replaces could deliver it.
    priority: tuple[str, ...] = ()
    active_source: str | None = None
    # The readers whose `mode` (burn or game) is the shoe's own word on each card, as the power-on names them
    # (the drivers that declare `tells_mode`); None where it named none: then every reader's but a camera's.
    mode_told: tuple[str, ...] | None = None
    ahead: dict[str, list[str]] = field(default_factory=dict)
    behind: dict[str, list[str]] = field(default_factory=dict)
    # Readers whose reads are out of step with what was dealt (a read that matched no card dealt),
    # with that read: until one of its reads matches a card dealt again, what such a reader read
    # ahead is never dealt unconfirmed (TableController._choose_reader holds the table instead).
    unsure: dict[str, str] = field(default_factory=dict)
    # The identity (vendor, serial, boot) each source last said in its Hello.
    identities: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The bytes (hex) of the frame under each source's `links` seq, to compare a repeat with.
    frames: dict[str, str] = field(default_factory=dict)
    # What the table waits for since when (TableController.waiting): the key of the wait and
    # the time of the input that began it; the `stalled` alarm is held for one wait at most.
    wait_key: tuple[Any, ...] | None = None
    wait_since: tuple[int, int] = (0, 0)
    # A card-reading shuffler's shuffles (shoed.table.shuffle); None at a table without one.
    shuffler: shuffle_table.ShufflerState | None = None
    order_key: bytes | None = None  # opens the shuffler's sealed order (docs/shuffler.md); set by the shell
    behaviour: int = BEHAVIOUR  # how this table takes what comes (BEHAVIOUR); a journal's own from its checkpoint
    behaviour_next: int = 0  # the behaviour the power-on asked for, taken with the next shoe
    # now_utc as its events carry it (utc_text), made with the input: most inputs make events, and an input of
    # the time of the one before it (the live odds) keeps the text made for that one.
    utc: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.utc = utc_text(self.now_utc)  # the time the controller was made with, as text

    # ----- public ----------------------------------------------------------
    def feed(self, item: dict[str, Any]) -> Step:
        """Take one input and return what it produced."""
        get = item.get
        mono, utc = get("mono_ns", self.now_mono), get("utc_ns", self.now_utc)
        self.now_mono = mono if type(mono) is int else int(mono)  # an int as it is: no call
        if utc != self.now_utc:
            utc = utc if type(utc) is int else int(utc)
            self.utc = utc_text(utc)  # made first: a time with no text leaves the time and its text as they were
            self.now_utc = utc
        step = Step()
        kind: Any = get("kind")
        source = get("source")
        if source and get("shoe_seq") is not None:
            detail = get("detail")
            boot = detail.get("boot") if detail else None
            if self.behind and self.behind.get(source) and not self._follows_last(source, item["shoe_seq"], boot):
                # Not the next frame of the queue the shoe kept while away: that queue, which would
                # repeat the cards dealt meanwhile, is not what comes (TableController._repeat_of_dealt).
                self.behind[source] = []
            self.links[source] = {"seq": item["shoe_seq"], "boot": boot}
            # The frame's bytes too: a later frame under the same seq must be the same frame.
            raw = get("raw")
            if raw:
                self.frames[source] = raw
            elif self.frames:
                self.frames.pop(source, None)
        try:
            handler = (_HANDLERS if self.shuffler is not None else _NO_SHUFFLER_HANDLERS)[kind]
        except (KeyError, TypeError):  # not a kind of input, or not even a name
            self._emit(step, ev.Alarm, alarm="unknown_input", active=True, text=f"unknown input kind {kind!r}")
            return step
        try:
            handler(self, item, step)
        except CommandRejected as exc:
            step.reply = {"ok": False, "error": str(exc)}
        reply = step.reply
        if reply is None:
            if kind == "command":
                step.reply = {"ok": True}
        elif not reply.get("ok"):
            return step  # a refused command changes nothing, not even when the wait began
        key = waits.wait_key(self)
        if key != self.wait_key:  # the table moved on: the wait begins at this input's time
            self.wait_key = key
            self.wait_since = (self.now_mono, self.now_utc)
            if "stalled" in self.alarms:
                self._alarm(step, "stalled", False,
                            f"the table goes on: waiting for {waits.what_table_waits_for(self)[1]}")
        return step

    def resume_point(self, source: str) -> tuple[int, int | None, bytes | None] | None:
        """The last shoe sequence number journaled from `source`, with the shoe's boot and the
        frame's bytes: a driver that opens again drops what the shoe repeats from before it, and
        compares a repeat of that seq with the frame. None: nothing journaled."""
        link = self.links.get(source)
        if link is None:
            return None
        raw = self.frames.get(source)
        return link["seq"], link["boot"], bytes.fromhex(raw) if raw else None

    # ----- waits -------------------------------------------------------------
    def waiting(self) -> dict[str, Any]:
        """What the table waits for now, from whom, and since when (shoed.table.waits)."""
        what, text = waits.what_table_waits_for(self)
        mono, utc = self.wait_since
        return {"for": what, "text": text, "since": utc_text(utc) if utc else None, "since_mono_ns": mono}

    def stall_due(self, now_mono: int, after_ns: int) -> bool:
        """True when a `tick` input at `now_mono` would raise the `stalled` alarm (the shell asks
        this on every turn of its loop, so the cheap test comes first)."""
        return now_mono - self.wait_since[0] >= after_ns and "stalled" not in self.alarms \
            and waits.what_table_waits_for(self)[0] in waits.STALLS

    def _on_tick(self, item: dict[str, Any], step: Step) -> None:
        """Time passed with no other input: a wait longer than `stall_after_s` (data of the
        input, from the configuration) raises the `stalled` alarm; the next change clears it."""
        after_ns = int(float(item.get("stall_after_s") or 0) * 1e9)
        if after_ns <= 0 or not self.stall_due(self.now_mono, after_ns):
            return
        what, text = waits.what_table_waits_for(self)
        seconds = (self.now_mono - self.wait_since[0]) // 1_000_000_000
        self._alarm(step, "stalled", True, f"waiting for {text} since {utc_text(self.wait_since[1])} ({seconds} s)",
                    code=what)

    @property
    def card_due(self) -> bool:
        """True while the table expects a card from the shoe (the gate may open)."""
        if self.locked or self.shoe is None:
            return False
        # A missing card is corrected by dealing it (Art. X): that card must pass the gate.
        if any(p["kind"] != md.MISSING_CARD for p in self.pending):
            return False
        if self.shoe.phase in _BURN_PHASES:
            return True
        if self.coup_state == OPEN and self.coup is not None:
            nxt = self.coup.next
            return nxt in ("player", "banker")
        return False

    def snapshot(self) -> dict[str, Any]:
        """The table's state for late joiners (Clone pattern): ends with `seq`."""
        shoe = self.shoe
        coup = None
        if self.coup is not None and self.coup_state != NO_COUP:
            coup = self.coup.to_json() | {"number": self.coup_no, "state": self.coup_state}
        return {
            "table": self.table_id,
            "ruleset": self.ruleset.name,
            "decks": self.decks,
            "shoe": (
                {"id": shoe.shoe_id, "phase": shoe.phase} if shoe is not None and shoe is self.closed_stub else
                {
                    "id": shoe.shoe_id,
                    "phase": shoe.phase,
                    "burned": shoe.counts.burned,
                    "cards_seen": shoe.total_seen,
                    "cards_left": shoe.cards_left,
                    "remaining_by_rank": list(shoe.remaining_by_rank()),
                    "cut_card": shoe.cut_card_seen,
                    "last_coup": shoe.last_coup,
                } | ({"reconciliation": shoe.reconcile()} if shoe.phase == CLOSED else {})
                if shoe
                else None
            ),
            "coups": list(self.results),
            "roads": self.roads.to_json(),
            "odds": self.odds,
            "coup": coup,
            "pending_misdeals": [p | {} for p in self.pending],
            "locked": self.locked,
            "alarms": dict(self.alarms),
            "devices": dict(self.devices),
            # The fallback reader that deals now (device.fallback), None while the first one does.
            "fallback": self.active_source if self.priority and self.active_source != self.priority[0] else None,
            "waiting": self.waiting(),
            "schema": SCHEMA_VERSION,
            "seq": self.seq,
        }

    @property
    def between_shoes(self) -> bool:
        """True when no shoe is open: the next input may open one (a card, with auto_confirm)."""
        return self.shoe is None or self.shoe.phase == CLOSED

    @property
    def checkpointable(self) -> bool:
        """True when a checkpoint can be taken: no shoe, or a fresh one (no card seen yet)."""
        shoe = self.shoe
        return shoe is None or shoe.phase == CLOSED or not shoe.total_seen

    def checkpoint(self) -> dict[str, Any]:
        """What carries over from one shoe file of the journal to the next.

        Written at the head of each file: when the table has no shoe, or right
        after a shoe was opened (a fresh shoe: no card seen yet)."""
        if not self.checkpointable:
            raise ValueError("a checkpoint is taken only with no shoe or a fresh one")
        shoe = self.shoe if self.shoe is not None and self.shoe.phase != CLOSED else None
        return {
            "seq": self.seq,
            "shoes_opened": self.shoes_opened,
            "locked": self.locked,
            "alarms": dict(self.alarms),
            "devices": dict(self.devices),
            "misdeal_ids": self.misdeal_ids,
            "shoe": {"id": shoe.shoe_id, "decks": shoe.decks, "phase": shoe.phase} if shoe else None,
            # The shoe closed last: what the events before the next shoe opens name (their `shoe`, `coup`).
            **({"closed_shoe": {"id": self.shoe.shoe_id, "decks": self.shoe.decks}}
               if self.shoe is not None and shoe is None else {}),
            "coup_no": self.coup_no,
            "coup_state": self.coup_state,
            "burn_mode": self.burn_mode,
            "links": dict(self.links),
            "priority": list(self.priority),
            "active_source": self.active_source,
            **({"mode_told": list(self.mode_told)} if self.mode_told is not None else {}),
            "ahead": {k: list(v) for k, v in self.ahead.items()},
            "behind": {k: list(v) for k, v in self.behind.items()},
            # Left out while empty: a journal without them records the same bytes as before them.
            **({"unsure": dict(self.unsure)} if self.unsure else {}),
            **({"identities": dict(self.identities)} if self.identities else {}),
            **({"frames": dict(self.frames)} if self.frames else {}),
            **({"shuffler": self.shuffler.to_json(self.order_key)} if self.shuffler is not None else {}),
            # The behaviour it was recorded under, and the one it takes with its next shoe (left out: 1, none).
            **({"behaviour": self.behaviour} if self.behaviour > 1 else {}),
            **({"behaviour_next": self.behaviour_next} if self.behaviour_next > self.behaviour else {}),
            # Since when the table waits (mono_ns, utc_ns): a stall after the file opened is timed from it.
            **({"wait_since": list(self.wait_since)} if self.wait_since != (0, 0) else {}),
        }

    @classmethod
    def from_checkpoint(cls, table_id: str, ruleset: Ruleset, decks: int, state: dict[str, Any],
                        **options: Any) -> TableController:
        table = cls(
            table_id,
            ruleset,
            decks,
            **options,
            seq=int(state.get("seq", 0)),
            shoes_opened=int(state.get("shoes_opened", 0)),
            locked=state.get("locked"),
            alarms=dict(state.get("alarms", {})),
            devices=dict(state.get("devices", {})),
            misdeal_ids=int(state.get("misdeal_ids", 0)),
            links=dict(state.get("links", {})),
            priority=tuple(state.get("priority", ())),
            active_source=state.get("active_source"),
            mode_told=None if state.get("mode_told") is None else tuple(state["mode_told"]),
            ahead={k: list(v) for k, v in state.get("ahead", {}).items()},
            behind={k: list(v) for k, v in state.get("behind", {}).items()},
            unsure=dict(state.get("unsure", {})),
            identities=dict(state.get("identities", {})),
            frames=dict(state.get("frames", {})),
            shuffler=shuffle_table.ShufflerState.from_json(state.get("shuffler"), options.get("order_key")),
            behaviour=_behaviour(state.get("behaviour"), 1),
            behaviour_next=_behaviour(state.get("behaviour_next"), 0),
        )
        shoe = state.get("shoe")
        closed = state.get("closed_shoe")
        named = shoe or (closed if isinstance(closed, dict) else None)
        if named:
            # A shoe closed last: only what names it; its cards and counts are in the file before (the snapshot
            # shows none of them).
            table.shoe = Shoe(ruleset, int(named["decks"]), shoe_id=named["id"],
                              phase=shoe.get("phase", BURN_FIRST) if shoe else CLOSED, counts_unread=table.behaviour >= 2)
            table.coup_no = int(state.get("coup_no", 0))
            table.coup_state = state.get("coup_state", NO_COUP)
            if not shoe:
                table.closed_stub = table.shoe
        # As it stood, a shoe open or not (the next shoe starts without it): the state read back is the state written.
        table.burn_mode = bool(state.get("burn_mode", False))
        if shoe:
            if table.coup_state == OPEN:
                table.coup = new_coup(ruleset)
        since = state.get("wait_since")
        if isinstance(since, list) and len(since) == 2 and all(type(t) is int for t in since):
            table.wait_key = waits.wait_key(table)
            table.wait_since = (since[0], since[1])
        return table

    # ----- events ----------------------------------------------------------
    def _emit(self, step: Step, kind: type[ev.Base], **fields: Any) -> None:
        """One event of `kind` (its struct in shoed.table.events) with the fields every event
        carries: table, seq (the next one, taken), shoe, coup, mono_ns, utc.

        The events of every coup (card, coup.opened, coup.result, coup.confirmed, shoe.odds) are
        built where they happen instead, each field named in the call: a struct given its fields
        as keywords is made at a third of the cost of one given them through a dict (`**fields`)."""
        shoe = self.shoe
        self.seq = seq = self.seq + 1
        step.typed.append(kind(
            table=self.table_id, seq=seq, shoe=shoe.shoe_id if shoe else None, coup=self.coup_no or None,
            mono_ns=self.now_mono, utc=self.utc, **fields))

    def _misdeal(self, step: Step, misdeal: md.Misdeal, source: str | None = None) -> None:
        """Record a misdeal; one that cannot be corrected voids the coup at once."""
        self.misdeal_ids += 1
        entry = {"id": self.misdeal_ids, **misdeal.to_json()}
        self._emit(step, ev.Misdeal, misdeal=entry, source=source)
        if misdeal.correctable:
            self.pending.append(entry)
        elif self.coup_state in (OPEN, COMPLETE):
            self._void(step, f"misdeal: {misdeal.kind}")

    def _void(self, step: Step, reason: str, by: str | None = None) -> None:
        if self.coup_state == COMPLETE and self.results and not self.results[-1]["void"]:
            self.results.pop()  # a voided result is no result: not in the coups, not on the roads
            self.roads.pop()
        record = {
            "coup": self.coup_no,
            "void": True,
            "reason": reason,
            "player_cards": [str(c) for c in self.coup.player] if self.coup else [],
            "banker_cards": [str(c) for c in self.coup.banker] if self.coup else [],
        }
        self.results.append(record)
        self._count_void_cards()
        self.coup_state = VOID
        # Misdeals of a void coup are closed with it.
        self.pending = [p for p in self.pending if p["kind"] in md.OUTLIVE_VOID]
        self._emit(step, ev.CoupVoid, reason=reason, by=by, player_cards=record["player_cards"],
                   banker_cards=record["banker_cards"])
        if self.shoe:
            self.shoe.coup_finished(self.coup_no)

    def _count_void_cards(self) -> None:
        """A void moves the coup's cards to the voided ones in the reconciliation: those
        dealt to the hands (out of the coups that counted, if its result had stood), and the
        cards of the misdeals the void closes (an extra card lies on the table with them)."""
        shoe = self.shoe
        if shoe is None:
            return
        dealt = len(self.coup.order) if self.coup is not None and self.coup_state in (OPEN, COMPLETE) else 0
        kinds = _CLOSED_BY_VOID if self.behaviour >= 3 else _CLOSED_BY_VOID_2
        closed = sum(1 for p in self.pending if p.get("card") and p["kind"] in kinds)
        shoe.coup_voided(dealt, self.coup_state == COMPLETE, closed)

    def _require_shoe(self) -> Shoe:
        if self.shoe is None or self.shoe.phase == CLOSED:
            raise CommandRejected("no shoe is open")
        return self.shoe

    # ----- shoe --------------------------------------------------------------
    def _open_shoe(self, step: Step, source: str, decks: int | None = None) -> None:
        if self.shoe is not None and self.shoe.phase != CLOSED:
            self._close_shoe(step, "a new shoe was opened")
        self.shoes_opened += 1
        if self.behaviour_next > self.behaviour:  # a newer behaviour, asked for at the power-on: from this shoe
            self.behaviour, self.behaviour_next = self.behaviour_next, 0
        shoe_id = f"{self.utc[:19].replace('-', '').replace(':', '')}-{self.shoes_opened}"
        self.shoe = Shoe(self.ruleset, decks or self.decks, shoe_id=shoe_id, counts_unread=self.behaviour >= 2)
        self.coup, self.coup_no, self.coup_state = None, 0, NO_COUP
        self.results, self.pending, self.burn_mode = [], [], False
        self.roads, self.odds = RoadBuilder(), None
        self._emit(step, ev.ShoeOpened, source=source, decks=self.shoe.decks, ruleset=self.ruleset.name,
                   burn=self.ruleset.burn, **shuffle_table.shoe_opened_fields(self))
        step.effects.append(StartShoeFile(shoe_id))
        if self.shoe.phase == DEALING:
            self._open_coup(step)

    def _close_shoe(self, step: Step, reason: str) -> None:
        shoe = self.shoe
        if shoe is None or shoe.phase == CLOSED:
            return
        if self.coup_state == OPEN and self.coup is not None and self.coup.order:
            self._void(step, "the shoe was closed during the coup")
        report = shoe.close()
        self._emit(step, ev.ShoeClosed, reason=reason, reconciliation=report, **shuffle_table.shoe_closed_fields(self))
        self.coup_state = NO_COUP
        if self.behaviour >= 3:
            # Its misdeals end with it: their cards went with the shoe (unaccounted in its reconciliation), and the
            # next shoe's file starts from a checkpoint that holds none.
            self.pending = []

    def _on_shoe_inserted(self, item: dict[str, Any], step: Step) -> None:
        self._open_shoe(step, item.get("source", "shoe"))

    def _on_shoe_removed(self, item: dict[str, Any], step: Step) -> None:
        if self.behaviour >= 3 and self.shuffler is not None:
            self.shuffler.opening = None  # a shoe refused when it went in: its shuffle goes with it
        self._close_shoe(step, "the shoe was removed")

    def _on_cut_card(self, item: dict[str, Any], step: Step) -> None:
        if self.shoe is None or self.shoe.phase == CLOSED:
            self._emit(step, ev.Alarm, alarm="cut_card_without_shoe", active=True, text="cut card with no shoe open")
            return
        first = not self.shoe.cut_card_seen
        # An open coup, even before its first card, is the coup in progress.
        last = self.shoe.cut_card(self.coup_state == OPEN)
        self._emit(step, ev.ShoeCutCard, last_coup=last, rule=self.ruleset.last_coup)
        left, least = self.shoe.cards_left, self.ruleset.cut_card_min_from_end
        if first and left < least and self.behaviour >= 2:
            # The cut card lies at least `cut_card_min_from_end` cards from the end (Macau statutory rules Art. II):
            # a notice for surveillance, the shoe goes on.
            self._emit(step, ev.Alarm, alarm="cut_card_too_late", active=True,
                       text=f"the cut card came out with {left} card{'s' if left != 1 else ''} left in the shoe; "
                            f"{self.ruleset.name} places it at least {least} from the end",
                       source=item.get("source"))

    # ----- open and close coups -------------------------------------------
    def _open_coup(self, step: Step) -> None:
        shoe = self.shoe
        if shoe is None or not shoe.may_open_coup:
            return
        self.coup_no = shoe.open_coup()
        self.coup = new_coup(self.ruleset)
        self.coup_state = OPEN
        self.coup_cards_source = []
        self.seq = seq = self.seq + 1
        step.typed.append(ev.CoupOpened(
            table=self.table_id, seq=seq, shoe=shoe.shoe_id, coup=self.coup_no or None, mono_ns=self.now_mono,
            utc=self.utc, last=shoe.last_coup == self.coup_no))

    def _confirm(self, step: Step, by: str | None) -> None:
        shoe = self._require_shoe()
        if self.locked:
            raise CommandRejected(f"the table is locked: {self.locked}")
        if self.pending:
            raise CommandRejected(f"misdeal {self.pending[0]['id']} ({self.pending[0]['kind']}) is not corrected yet")
        if self.coup_state == NO_COUP and self.behaviour >= 4:
            if shoe.phase == FINISHED:
                raise CommandRejected("the shoe's last coup is over: take the shoe out, or close_shoe")
            if shoe.phase in _BURN_PHASES:
                raise CommandRejected("no coup to confirm: the burn is due")
        if self.coup_state == OPEN:
            misdeal = self.coup.close() if self.coup else None
            if misdeal is not None:
                self._misdeal(step, misdeal, by)
                return
        if self.coup_state in (COMPLETE, VOID, OPEN):
            self.seq = seq = self.seq + 1
            step.typed.append(ev.CoupConfirmed(
                table=self.table_id, seq=seq, shoe=shoe.shoe_id, coup=self.coup_no or None, mono_ns=self.now_mono,
                utc=self.utc, by=by, state=self.coup_state))
        self.coup_state = NO_COUP
        shoe.coup_finished(self.coup_no) if self.coup_no else None
        if shoe.phase == FINISHED:
            self._emit(step, ev.ShoeFinished, coups=shoe.coups_dealt)
        elif shoe.phase == DEALING:
            self._open_coup(step)

    def _finish_coup(self, step: Step) -> None:
        coup, shoe = self.coup, self.shoe
        result = coup.result() if coup is not None else None
        assert result is not None and shoe is not None, "a coup finishes complete, in a shoe"
        self.coup_state = COMPLETE
        road = self.roads.add(Outcome.from_coup(result)).to_json()
        record = result.to_json()  # the result as the snapshot lists it
        record["coup"], record["void"] = self.coup_no, False
        self.results.append(record)
        # The event shares the record's lists, but has its own settlement. Made with 15 keywords at most
        # (CPython compiles a call with more into one that builds a dict of them first: twice the cost),
        # the other fields set once it is made (void: False by default).
        self.seq = seq = self.seq + 1
        event = ev.CoupResult(
            table=self.table_id, seq=seq, shoe=shoe.shoe_id, mono_ns=self.now_mono, utc=self.utc,
            player_cards=record["player_cards"], banker_cards=record["banker_cards"],
            player_total=record["player_total"], banker_total=record["banker_total"], winner=record["winner"],
            natural=record["natural"], player_pair=record["player_pair"], banker_pair=record["banker_pair"],
            cards=record["cards"], settlement=dict(record["settlement"]))
        event.coup = self.coup_no or None
        event.rotate = record["rotate"]
        event.sources = list(self.coup_cards_source)  # type: ignore[arg-type]  # a decision's `by` may be None
        event.road = road
        step.typed.append(event)
        shoe.coup_counted(record["cards"])
        step.effects.append(WorkOutOdds(self.ruleset, shoe))

    # ----- cards ---------------------------------------------------------------
    def _on_card(self, item: dict[str, Any], step: Step) -> None:
        source = item.get("source", "shoe")
        text = item.get("card")
        failover = source in self.priority  # one of the readers kept in step (none: an empty tuple)
        if failover and source != self.active_source:
            if text is not None:
                try:
                    text = str(card_of(text))
                except CardError as exc:
                    # Not read, so kept as unread: never guessed, never dealt when this reader takes over.
                    self._emit(step, ev.Alarm, alarm="bad_card", active=True, text=str(exc), source=source)
                    text = None
            return self._shadow_read(step, text, source)
        if text is None:
            if failover and item.get("shoe_seq") is not None and self.behind.get(source) \
                    and self._repeat_of_dealt(step, item, None, source):
                return
            self._track_dealt(step, None, source)
            return self._on_unreadable(item, step)
        try:
            card = card_of(text)
        except CardError as exc:
            # A card that does not parse was not read: never guessed.
            self._emit(step, ev.Alarm, alarm="bad_card", active=True, text=str(exc), source=source)
            if failover and item.get("shoe_seq") is not None and self.behind.get(source) \
                    and self._repeat_of_dealt(step, item, None, source):
                return
            self._track_dealt(step, None, source)
            return self._on_unreadable(item | {"card": None}, step)
        if failover:
            if self.behind.get(source) and self._repeat_of_dealt(step, item, card.text, source):
                return
            checked = self._track_dealt(step, card.text, source)
        else:
            checked = shuffle_table.card_out(self, card.text)
        self._take_card(step, card, item, source)
        shuffle_table.report_out(self, step, checked, source)

    # ----- failover between readers --------------------------------------------
    @property
    def _fallback_dealing(self) -> bool:
        """A fallback reader (a camera) deals: it has no dealer's buttons, so the next
        coup opens with its first card, as for a shoe without buttons."""
        return bool(self.priority) and self.active_source not in (None, self.priority[0])

    def _follows_last(self, source: str, seq: Any, boot: Any) -> bool:
        """True when shoe seq `seq` of session `boot` is the next after the last one taken from `source`."""
        link = self.links.get(source)
        return link is not None and link["boot"] == boot and type(seq) is int and type(link["seq"]) is int \
            and (seq - link["seq"]) % 65536 == 1

    def _repeat_of_dealt(self, step: Step, item: dict[str, Any], text: str | None, source: str) -> bool:
        """A read from the dealing reader while cards dealt by another wait for it (`behind`): True
        when it is one of those cards, counted once (or held: the readers disagree on it); False
        when it is a card of its own, to deal.

        A shoe's numbered frames (`shoe_seq`) are its queue of one session: kept through a lost
        link, the queue holds every card that left the shoe meanwhile, in order, so while its
        frames go on from the last one taken (the same session, the next seq) its next reads are
        those cards, one for each. A frame that does not go on from it (another session, a gap)
        is not that queue, and `feed` cleared `behind` at it. A fallback reader
        (a camera) reads each card after it left, so its read of the card dealt first is that
        card, late. A first reader without numbered frames (a Bee-Tek shoe) never repeats: the
        cards dealt while it was away are not read again, and a card equal to one of them is
        another copy of it."""
        behind = self.behind[source]
        seen = text if text is not None else UNKNOWN
        if item.get("shoe_seq") is not None:
            first = behind.pop(0)
            if first == seen or UNKNOWN in (first, seen):
                counted = seen if seen != UNKNOWN else first
                if counted != UNKNOWN:
                    self._emit(step, ev.CardDuplicate, card=counted, source=source)
                return True
            self._hold(step, "reader_out_of_step",
                       f"{source} repeats {seen} for the card dealt as {first}: the readers disagree on a card "
                       f"dealt; it is not dealt again", source=source)
            return True
        if source == self.priority[0]:
            behind.clear()
            return False
        first = behind.pop(0)
        if first in (seen, UNKNOWN):
            # Dealt already from another reader while this one lagged: counted once.
            self._emit(step, ev.CardDuplicate, card=seen, source=source)
            return True
        behind.clear()  # it did not see those cards: from here on it reads afresh
        return False

    def _shadow_read(self, step: Step, text: str | None, source: str) -> None:
        """A read from a reader that is not dealing: keep it in step with the table."""
        seen = text if text is not None else UNKNOWN
        behind = self.behind.setdefault(source, [])
        if behind:
            first = behind.pop(0)
            if UNKNOWN in (first, seen) or first == seen:
                if first == seen:
                    self._in_step(source, self.ahead)
                return
            if seen in behind:
                # It missed cards (a card pushed out over the last one): it catches up with this read.
                missed = [first, *behind[:behind.index(seen)]]
                del behind[:len(missed)]
                self._alarm(step, "reader_mismatch", True,
                            f"{source} missed {' '.join(missed)}, dealt before {seen}")
                self._in_step(source, self.ahead)
                return
            # A read that matches no card dealt: a misread of the card dealt first, or a card that no
            # other reader delivered yet (it missed every card it was behind with). Kept as read
            # ahead, but not trusted: the reader is out of step until one of its reads matches a
            # card dealt again, on either side.
            self._alarm(step, "reader_mismatch", True, f"{source} read {seen} where {first} was dealt")
            self.unsure[source] = seen
        ahead = self.ahead.setdefault(source, [])
        ahead.append(seen)
        del ahead[:-TRACKED]

    def _in_step(self, source: str, other_side: dict[str, list[str]]) -> None:
        """A reader's read matched a card dealt: it is in step. A reader that lags has read
        nothing ahead, and one that leads lags behind nothing: what the other side still holds
        of it was a misread or cards it missed."""
        if self.unsure:
            self.unsure.pop(source, None)
        stale = other_side.get(source)
        if stale:
            stale.clear()

    def _track_dealt(self, step: Step, card: str | None, source: str) -> shuffle_table.Checked:
        """A card left the shoe through the dealing reader: the others see it now or later, and a card-reading
        shuffler's order checks it (what to report once it is taken: shoed.table.shuffle.report_out)."""
        seen = card if card is not None else UNKNOWN
        for other in self.priority:
            if other == source:
                continue
            ahead = self.ahead.get(other)
            if ahead:
                first = ahead.pop(0)
                if UNKNOWN in (first, seen) or first == seen:
                    if first == seen:
                        self._in_step(other, self.behind)
                    continue
                self.unsure[other] = first
                self._alarm(step, "reader_mismatch", True, f"{other} read {first} where {seen} was dealt")
                ahead.clear()
            behind = self.behind.setdefault(other, [])
            behind.append(seen)
            del behind[:-TRACKED]
        return shuffle_table.card_out(self, card)

    def _choose_reader(self, step: Step) -> None:
        """The first reader in priority order that is not lost deals."""
        if not self.priority:
            return
        up = [s for s in self.priority if self.devices.get(s) != "lost"]
        new = up[0] if up else None
        old = self.active_source
        if new == old:
            return
        self.active_source = new
        if new is None:
            self._alarm(step, "no_reader", True, "every card reader is lost: enter cards by hand")
            return
        if "no_reader" in self.alarms:
            self._alarm(step, "no_reader", False, f"{new} reads again")
        kind = ev.DevicePrimary if new == self.priority[0] else ev.DeviceFallback
        self._emit(step, kind, source=new, detail={"previous": old})
        ahead = self.ahead.pop(new, [])
        doubt = self.unsure.pop(new, None)
        if doubt is not None and ahead:
            # Its reads are out of step with what was dealt: what it read ahead may be cards dealt
            # already. Nothing of it is dealt; the pit checks the cards on the table.
            self._hold(step, "reader_out_of_step",
                       f"{new} took over out of step with the cards dealt (it read {doubt} where no card "
                       f"dealt matched): its reads {' '.join(ahead)} are not dealt", source=new)
            return
        # What the new reader saw before the old one could deliver it is dealt now, in order.
        for seen in ahead:
            if seen == UNKNOWN:
                self._track_dealt(step, None, new)
                self._on_unreadable({"source": new}, step)
                continue
            checked = self._track_dealt(step, seen, new)
            self._take_card(step, card_of(seen), {"confidence": None}, new)
            shuffle_table.report_out(self, step, checked, new)

    def _take_card(self, step: Step, card: Card, item: dict[str, Any], source: str, manual: bool = False) -> None:
        shoe = self.shoe
        text = card.text
        get = item.get
        confidence, faced = get("confidence"), bool(get("faced", False))
        if shoe is None or shoe.phase == CLOSED:
            # A shoe that went in and was refused (its shuffle not verified) is opened by the pit's open_shoe only.
            refused = self.behaviour >= 3 and self.shuffler is not None and self.shuffler.opening is not None
            if self.auto_confirm and not self.locked and not refused:
                self._open_shoe(step, source)
                shoe = self.shoe
            if shoe is None or shoe.phase == CLOSED:
                return self._not_dealt(step, card, source, confidence, faced, manual, md.card_out_of_sequence(
                    text, "the shoe was refused (shoe_unverified; the pit's open_shoe opens it)" if refused
                    else "no shoe was open"))
        seen, excess = shoe.note(card)
        phase = shoe.phase
        if excess:
            self._not_dealt(step, card, source, confidence, faced, manual, None, "foreign")
            self._alarm(step, "foreign_card", True, f"{card} seen {seen} times in a {shoe.decks}-deck shoe")
            index = len(self.coup.order) if self.coup and self.coup_state == OPEN else None
            self._misdeal(step, md.foreign_card(index, text, seen, shoe.decks), source)
            shoe.discard()
            return
        if self.locked:
            # Held (an integrity fault, a forged frame, another shoe): nothing is dealt until the pit decides.
            return self._not_dealt(step, card, source, confidence, faced, manual,
                                   md.card_out_of_sequence(text, f"the table was held ({self.locked})"))
        # (A plain shoe's draw is the shuffle's own to place: shoed.table.shuffle.on_draw keeps its positions.)
        unread = None if manual or self.behaviour < 2 or source == shuffle_table.DRAWN else next(
            (p for p in self.pending if p["kind"] == md.UNREADABLE_CARD), None)
        if unread is not None:
            # The card the reader could not identify holds its place until it is entered: a card drawn meanwhile
            # (a shoe without a gate, or one out before the gate locked) would take that place, and every card
            # after it the wrong hand; or, where it was the exposed first burn card, set the burn's count.
            # It is not dealt nor burned (burn it, as a held table's).
            return self._not_dealt(step, card, source, confidence, faced, manual, md.card_out_of_sequence(
                text, f"misdeal {unread['id']} (unreadable_card) was open: enter that card first"))
        if get("mode") == "game" and not manual and (phase in _BURN_PHASES or self._burn_short_open) \
                and self.behaviour >= 2 and self._tells_mode(source):
            # The shoe's own word: a game card. Burned, the coup would open on a later card (every card after it
            # in the wrong hand); dealt, the burn would end short. Held for the pit (end_burn or burn_card).
            return self._not_dealt(step, card, source, confidence, faced, manual, self._burn_short(text))
        if phase in _BURN_PHASES or self.burn_mode or get("mode") == "burn":
            if phase == DEALING and self._coup_card_due:
                # Burned now, the coup would silently take the next card in its place.
                return self._not_dealt(step, card, source, confidence, faced, manual,
                                       md.burn_during_coup(len(self.coup.order), text))  # type: ignore[union-attr]
            shoe.burn(card)
            self._emit(step, ev.ShoeBurn, card=text, exposed=phase == BURN_FIRST, burn_due=shoe.burn_due,
                       source=source, confidence=confidence, faced=faced, manual=True if manual else UNSET)
            if shoe.phase == DEALING and self.coup_state == NO_COUP and not self.coup_no:
                self._emit(step, ev.ShoeBurnComplete, burned=shoe.counts.burned)
                step.effects.append(WorkOutOdds(self.ruleset, shoe))
                self._open_coup(step)
            return
        if phase == FINISHED:
            return self._not_dealt(step, card, source, confidence, faced, manual, md.card_after_last_coup(text))
        if self.coup_state != OPEN and (self.auto_confirm or self._fallback_dealing) and not self.pending:
            self._confirm(step, source)
        coup = self.coup
        if self.coup_state != OPEN or coup is None:
            index = len(coup.order) if coup is not None else None
            return self._not_dealt(step, card, source, confidence, faced, manual,
                                   md.extra_card(index or 0, text, self.ruleset.misdeal_correction))
        coup, misdeal = coup.deal(card)
        if misdeal is not None:
            return self._not_dealt(step, card, source, confidence, faced, manual, misdeal)
        self.coup = coup
        self.coup_cards_source.append(source)
        order = coup.order
        recipient = order[-1]
        # The event of every card dealt, built here rather than through _emit: a quarter of its cost.
        self.seq = seq = self.seq + 1
        step.typed.append(ev.Card(
            table=self.table_id, seq=seq, shoe=shoe.shoe_id, coup=self.coup_no or None, mono_ns=self.now_mono,
            utc=self.utc, card=text,
            recipient=recipient, index=len(order) - 1,  # type: ignore[arg-type]
            total=hand_total(coup.player if recipient == "player" else coup.banker), source=source,
            confidence=confidence, faced=faced, manual=True if manual else UNSET))
        # A missing-card misdeal is corrected by the card it was waiting for.
        if self.pending:
            self._corrected_by(step, (md.MISSING_CARD,), "deal", source, text)
        if coup.next is None:  # complete: four cards at least, and none due
            self._finish_coup(step)

    def _not_dealt(self, step: Step, card: Card, source: str, confidence: Any, faced: bool, manual: bool,
                   misdeal: md.Misdeal | None, recipient: str = "none") -> None:
        """A card out of the shoe that no hand takes: its event, and the misdeal it is (if given)."""
        self._emit(step, ev.Card, card=card.text, recipient=recipient, source=source, confidence=confidence,
                   faced=faced, manual=True if manual else UNSET)
        if misdeal is not None:
            self._misdeal(step, misdeal, source)

    def _tells_mode(self, source: Any) -> bool:
        """True when a reading's `mode` from `source` is the shoe's own word on the card: a reader the power-on
        names in `mode_told` (Bee-Tek, a native shoe, a package's driver that declares `tells_mode`). Not so for
        a driver that never says (its readings' mode defaults to game), a camera over the shoe's exit (it cannot
        tell), a fallback reader standing in for the shoe, or the shuffled order's card of a plain shoe's draw:
        their cards keep the shoe's phase."""
        if not isinstance(source, str) or source == shuffle_table.DRAWN or source.startswith("camera:"):
            return False
        if self.mode_told is not None and source not in self.mode_told:
            return False
        return not (self.priority and source in self.priority[1:])

    @property
    def _burn_short_open(self) -> bool:
        return any(p["kind"] == md.BURN_SHORT for p in self.pending)

    def _burn_short(self, text: str | None) -> md.Misdeal:
        shoe = self.shoe
        earlier = next((p["id"] for p in self.pending if p["kind"] == md.BURN_SHORT), None)
        if earlier is not None or shoe is None:
            return md.burn_short(None, text, earlier)
        return md.burn_short(shoe.burn_due if shoe.phase == BURNING else None, text)

    def _burn_complete(self, step: Step) -> None:
        """The burn is over: its event, the live odds of the shoe, and the first coup opens."""
        shoe = self.shoe
        if shoe is not None and shoe.phase == DEALING and self.coup_state == NO_COUP and not self.coup_no:
            self._emit(step, ev.ShoeBurnComplete, burned=shoe.counts.burned)
            step.effects.append(WorkOutOdds(self.ruleset, shoe))
            self._open_coup(step)

    def _correct_burn_short(self, step: Step, cmd: str, entry: dict[str, Any], shoe: Shoe, by: str | None) -> None:
        """The pit's answer to a burn_short: burn_card (a burn after all: burned, the burn goes on) or end_burn
        (the burn ends where it is: the card is the coup's next card, dealt now)."""
        self.pending.remove(entry)
        self._emit(step, ev.MisdealCorrected, misdeal=entry["id"], correction=cmd, card=entry.get("card"), by=by)
        text = entry.get("card")
        card = card_of(text) if text else None
        if cmd == "burn_card":
            if card is None:
                if not shoe.burn_unread():  # the burn was over meanwhile: burned all the same, by the pit's word
                    shoe.burned_unread_late()
                self._emit(step, ev.ShoeBurn, card=None, exposed=False, burn_due=shoe.burn_due, source=by)
            else:
                exposed = shoe.phase == BURN_FIRST
                shoe.burn(card)
                self._emit(step, ev.ShoeBurn, card=card.text, exposed=exposed, burn_due=shoe.burn_due, source=by,
                           confidence=None, faced=False)
            self._burn_complete(step)
            return
        if self.burn_mode:  # the burn is over by the pit's word: so is the dealer's burn mode
            self.burn_mode = False
            self._emit(step, ev.ShoeBurnMode, active=False, source=by)
        if shoe.phase in _BURN_PHASES:
            shoe.phase, shoe.burn_due = DEALING, 0
            self._burn_complete(step)
        if card is None:
            # Not read: the coup's card is entered by hand, as any card the reader could not identify.
            self._on_unreadable({"source": by, "code": "burn_short"}, step)
            return
        first = len(step.typed)
        shoe.returned(card)  # counted when it came out: dealt now, it is counted again
        self._take_card(step, card, {"confidence": None}, by)  # type: ignore[arg-type]
        for event in step.typed[first:]:
            if isinstance(event, ev.Card) and event.card == card.text and event.recipient in ("player", "banker"):
                event.held = True  # held by the misdeal, dealt by its correction

    def _on_unreadable(self, item: dict[str, Any], step: Step) -> None:
        source = item.get("source", "shoe")
        # While the table is held nothing is burned nor dealt: the card is entered once it goes on.
        shoe = None if self.locked and self.behaviour >= 3 else self.shoe
        if shoe is not None and item.get("mode") == "game" and item.get("code") not in _DRAW_CODES \
                and (shoe.phase == BURNING or self._burn_short_open) and self.behaviour >= 2 \
                and self._tells_mode(source):
            # Reported a game card by the shoe while the burn was due: not taken as a burn card burned unread.
            self._emit(step, ev.Card, card=None, recipient="unreadable", source=source, reason=item.get("code"))
            self._misdeal(step, self._burn_short(None), source)
            return
        if shoe is not None and shoe.phase in _BURN_PHASES or item.get("mode") == "burn":
            # A burn card need not be read, except the exposed first one, which the dealer enters.
            if shoe is not None and shoe.burn_unread():
                self._emit(step, ev.ShoeBurn, card=None, exposed=False, burn_due=shoe.burn_due, source=source)
                if shoe.phase == DEALING and not self.coup_no:
                    self._emit(step, ev.ShoeBurnComplete, burned=shoe.counts.burned)
                    step.effects.append(WorkOutOdds(self.ruleset, shoe))
                    self._open_coup(step)
                return
        index = len(self.coup.order) if self.coup is not None and self.coup_state == OPEN else None
        self._emit(step, ev.Card, card=None, recipient="unreadable", source=source, reason=item.get("code"))
        self._misdeal(step, md.unreadable_card(index if index is not None else 0, self.ruleset.misdeal_correction),
                      source)

    # ----- buttons -------------------------------------------------------------
    def _on_button(self, item: dict[str, Any], step: Step) -> None:
        button = item.get("button")
        source = item.get("source", "shoe")
        if button == "confirm":
            try:
                self._confirm(step, source)
            except CommandRejected as exc:
                self._emit(step, ev.Alarm, alarm="confirm_refused", active=True, text=str(exc), source=source)
        elif button in ("player_draw", "player_stand", "banker_draw", "banker_stand"):
            side, _, choice = button.partition("_")
            try:
                self._decide(step, side, choice == "draw", source)
            except CommandRejected as exc:
                self._emit(step, ev.Alarm, alarm="decision_refused", active=True, text=str(exc), source=source)
        elif button == "burn_start" and self._coup_card_due and self.coup is not None:
            self._misdeal(step, md.burn_during_coup(len(self.coup.order), None), source)
        elif button == "burn_start":
            self.burn_mode = True
            self._emit(step, ev.ShoeBurnMode, active=True, source=source)
        elif button == "burn_end":
            self.burn_mode = False
            self._emit(step, ev.ShoeBurnMode, active=False, source=source)
        else:
            self._emit(step, ev.Alarm, alarm="unknown_button", active=True, text=f"unknown button {button!r}")

    def _decide(self, step: Step, side: str, draws: bool, by: str | None) -> None:
        if self.coup_state != OPEN or self.coup is None:
            raise CommandRejected("no coup is open")
        if side not in ("player", "banker"):
            raise CommandRejected("side must be player or banker")
        if self.coup.next != f"decision:{side}":
            raise CommandRejected(f"no decision is awaited from the {side}")
        self.coup = self.coup.decide(side, draws)
        early = self._corrected_by(step, (md.CARD_BEFORE_DECISION,), "decide", by)
        if any(p["kind"] == md.MISSING_CARD and p["correction"] == md.DECIDE for p in self.pending):
            self._corrected_by(step, (md.MISSING_CARD,), "decide", by)  # confirmed before this decision
        self._emit(step, ev.CoupDecision, side=side, draws=draws, by=by)
        # The card that came before the decision: on draw it stands, on stand it is burned
        # (shoed.rules.misdeal.card_before_decision).
        for entry in early:
            if not entry.get("card"):
                continue
            card = card_of(entry["card"])
            if draws and self.coup.next in ("player", "banker"):
                self.coup, _ = self.coup.deal(card)
                self.coup_cards_source.append(by)
                recipient = self.coup.order[-1]
                hand = self.coup.player if recipient == "player" else self.coup.banker
                self._emit(step, ev.Card, card=str(card), recipient=recipient, index=len(self.coup.order) - 1,
                           total=hand_total(hand), source=by, confidence=None, faced=False, held=True)
            elif self.shoe is not None:
                self.shoe.discard()
        if self.coup.complete:
            self._finish_coup(step)

    def _corrected_by(self, step: Step, kinds: tuple[str, ...], correction: str, by: str | None,
                      card: str | None = None) -> list[dict[str, Any]]:
        """Misdeals of these kinds that what just happened corrects (the missing card dealt, the
        decision given): each ends with its `misdeal.corrected`, as a correction by command does."""
        done = [p for p in self.pending if p["kind"] in kinds]
        if done:
            self.pending = [p for p in self.pending if p["kind"] not in kinds]
            for entry in done:
                self._emit(step, ev.MisdealCorrected, misdeal=entry["id"], correction=correction,
                           card=card if card is not None else entry.get("card"), by=by)
        return done

    # ----- devices and alarms -------------------------------------------------
    def _alarm(self, step: Step, name: str, active: bool, text: str, **more: Any) -> None:
        if active:
            self.alarms[name] = text
        else:
            self.alarms.pop(name, None)
        shoe = self.shoe
        self.seq = seq = self.seq + 1
        alarm = ev.Alarm(
            table=self.table_id, seq=seq, shoe=shoe.shoe_id if shoe else None, coup=self.coup_no or None,
            mono_ns=self.now_mono, utc=self.utc, alarm=name, active=active, text=text)
        for key, value in more.items():  # the fields only some alarms carry (optional: UNSET until set)
            setattr(alarm, key, value)
        step.typed.append(alarm)

    def _on_link(self, item: dict[str, Any], step: Step) -> None:
        source, state = item.get("source", "shoe"), item.get("link", "lost")
        kind = ev.DEVICE_LINK.get(state)
        if kind is None:
            self._emit(step, ev.Alarm, alarm="unknown_input", active=True, text=f"unknown link state {state!r}")
            return
        self.devices[source] = state
        self._emit(step, kind, source=source, detail=item.get("detail") or {})
        self._choose_reader(step)

    def _on_hello(self, item: dict[str, Any], step: Step) -> None:
        source: Any = item.get("source")
        detail = item.get("detail") or {}
        self._emit(step, ev.DeviceHello, source=source, detail=detail)
        identity = {k: detail.get(k) for k in IDENTITY}
        known = self.identities.get(source)
        self.identities[source] = identity
        was = known.get("boot") if known is not None else (self.links.get(source) or {}).get("boot")
        if was is not None and was != identity["boot"] and self.behind.get(source):
            # A new session of the shoe: its old queue is gone, so it repeats none of the cards
            # dealt while it was away; whatever it sends from now on left the shoe after them.
            self.behind[source] = []
        if known is None:
            return
        changed = [k for k in IDENTITY if known.get(k) != identity[k]]
        # A shoe that restarted between coups is ordinary; another vendor or serial never is.
        if changed and (self._coup_in_progress or changed != ["boot"]):
            said = ", ".join(f"{k} {known.get(k)!r} -> {identity[k]!r}" for k in changed)
            self._hold(step, "device_changed", f"{source} changed {said}" +
                       (f" during coup {self.coup_no}" if self._coup_in_progress else ""), source=source)

    def _on_forged_frame(self, item: dict[str, Any], step: Step) -> None:
        """The shoe's link carried two different frames under one sequence number: one of
        them was not the shoe's. Which was dealt cannot be told here: the coup is held."""
        detail = item.get("detail") or {}
        self._hold(step, "forged_frame",
                   f"two different frames under shoe seq {detail.get('seq')}: the one taken was "
                   f"{detail.get('taken')}, the repeat {item.get('raw') or 'hmac:' + str(detail.get('raw_hmac'))}",
                   source=item.get("source"))

    def _on_clock(self, item: dict[str, Any], step: Step) -> None:
        """The shell saw the wall clock step against the monotonic clock, or its loop not
        scheduled for too long (it measures; the table only records it)."""
        if item.get("what") == "stall":
            self._emit(step, ev.TableStall, stalled_ns=int(item.get("stalled_ns", 0)),
                       limit_ns=int(item.get("limit_ns", 0)))
        else:
            self._emit(step, ev.TableClockStep, step_ns=int(item.get("step_ns", 0)),
                       utc_before=utc_text(int(item.get("utc_before_ns", 0))))

    def _hold(self, step: Step, alarm: str, text: str, **more: Any) -> None:
        """Stop play until the pit decides: the gate locks, cards are not dealt."""
        self.locked = text
        self._alarm(step, alarm, True, text, **more)

    @property
    def _coup_card_due(self) -> bool:
        return self.coup_state == OPEN and self.coup is not None and self.coup.next in ("player", "banker")

    @property
    def _coup_in_progress(self) -> bool:
        return self.coup_state == COMPLETE or (self.coup_state == OPEN and self.coup is not None
                                               and bool(self.coup.order))

    def _on_tamper(self, item: dict[str, Any], step: Step) -> None:
        self._alarm(step, "tamper", bool(item.get("active", True)), item.get("text") or "lid or case opened",
                    source=item.get("source"))

    def _on_alarm(self, item: dict[str, Any], step: Step) -> None:
        self._emit(step, ev.Alarm, alarm="shoe", active=True, code=item.get("code"), text=item.get("text"),
                   source=item.get("source"))

    def _on_warning(self, item: dict[str, Any], step: Step) -> None:
        self._emit(step, ev.DeviceWarning, code=item.get("code"), text=item.get("text"), source=item.get("source"))

    def _on_odds(self, item: dict[str, Any], step: Step) -> None:
        """Live odds of the remaining shoe, computed by the shell after a coup from this
        controller's own counts (shoed.rules.odds.live_odds) and fed back as an input, so
        a replay takes them from the journal instead of counting again. A bet that has
        turned favourable to the player raises an alarm for surveillance; it clears when
        no bet is favourable any more."""
        odds = item.get("odds")
        if not isinstance(odds, dict) or self.shoe is None or not odds.keys() >= _ODDS_NEEDED:
            return
        self.odds = {k: odds[k] for k in ODDS_FIELDS}
        self.seq = seq = self.seq + 1  # the event: the fields every event carries, then ODDS_FIELDS
        step.typed.append(ev.ShoeOdds(
            table=self.table_id, seq=seq, shoe=self.shoe.shoe_id, coup=self.coup_no or None, mono_ns=self.now_mono,
            utc=self.utc, cards_left=odds["cards_left"], probabilities=odds["probabilities"],
            player_expectation=odds["player_expectation"], favourable=odds["favourable"]))
        favourable = list(odds["favourable"] or [])
        was = "favourable_bet" in self.alarms
        if favourable:
            expectation = odds["player_expectation"]
            text = "favourable to the player: " + ", ".join([f"{b} {expectation[b]:+.4%}" for b in favourable])
            if self.alarms.get("favourable_bet") != text:
                self._alarm(step, "favourable_bet", True, text, bets=favourable)
        elif was:
            self._alarm(step, "favourable_bet", False, "no bet is favourable to the player any more", bets=[])

    def _on_power(self, item: dict[str, Any], step: Step) -> None:
        """The daemon started or stopped (table-game-standards item 6: power on, unclean stop)."""
        if item.get("state") == "on":
            clean = bool(item.get("clean", True))
            wanted = _behaviour(item.get("behaviour"), 0)
            if wanted > self.behaviour:  # a newer daemon: its behaviour from the next shoe (now, if none is open)
                if self.between_shoes:
                    self.behaviour = wanted
                    if self.shoe is not None:
                        self.shoe.counts_unread = wanted >= 2
                else:
                    self.behaviour_next = wanted
            since_mono, since_utc = self.wait_since
            if since_utc and max(wanted, self.behaviour) >= 2:
                # The daemon started again, perhaps on a new boot whose monotonic clock began again: the wait goes
                # on from when it began on the wall clock (on the same boot that is where it was), else `stalled`
                # would keep silent for as long as the last boot had run, or come at once.
                self.wait_since = (self.now_mono - max(0, self.now_utc - since_utc), since_utc)
            if "auto_confirm" in item:  # the configured setting, journaled with the power-on (replay learns it)
                self.auto_confirm = bool(item["auto_confirm"])
            sources = tuple(item.get("sources") or ())
            if "mode_told" in item:  # journaled with the power-on, as the sources are (replay learns it)
                self.mode_told = tuple(item.get("mode_told") or ())
            if len(sources) > 1 and sources != self.priority:
                self.priority = sources
                self.active_source = None
                self.ahead = {k: v for k, v in self.ahead.items() if k in sources}
                self.behind = {k: v for k, v in self.behind.items() if k in sources}
                self.unsure = {k: v for k, v in self.unsure.items() if k in sources}
            elif len(sources) <= 1:
                self.priority, self.active_source, self.ahead, self.behind = (), None, {}, {}
                self.unsure = {}
            self._emit(step, ev.TableStarted, clean=clean, recovery=item.get("recovery") or [],
                       ruleset=self.ruleset.name, locked=self.locked)
            if "sources" in item:  # a device of a source no longer read has gone (the power-on's time is when)
                for source in sorted(set(self.devices) - set(sources)):
                    del self.devices[source]
                    self._emit(step, ev.DeviceGone, source=source, detail={})
            if not clean:
                self._emit(step, ev.Alarm, alarm="unclean_stop", active=False,
                           text="started after an unclean stop; state rebuilt from the journal")
            self._choose_reader(step)
        else:
            self._emit(step, ev.TableStopped, clean=True)

    def _on_integrity(self, item: dict[str, Any], step: Step) -> None:
        """The shell found the journal corrupt (or another integrity fault): play stops."""
        self.locked = item.get("text") or "integrity fault"
        self._alarm(step, "integrity", True, self.locked)

    # ----- commands -------------------------------------------------------------
    def _on_refused_commands(self, item: dict[str, Any], step: Step) -> None:
        """The count of one key's refused commands that the shell did not journal one by one
        (shoed.table.refusals): a record for surveillance, which changes nothing."""

    def _on_command(self, item: dict[str, Any], step: Step) -> None:
        cmd, args, by = item.get("cmd"), item.get("args") or {}, item.get("client")
        if cmd not in COMMANDS:
            raise CommandRejected(f"unknown command {cmd!r}")
        if cmd == "status":
            step.reply = {"ok": True, "status": self.snapshot()}
            return
        if cmd in NEEDS_ROLE and "role" in item and item["role"] not in NEEDS_ROLE[cmd]:
            # Journals from before roles have no role on their commands: replayed as recorded.
            raise CommandRejected(f"{cmd} needs the {' or '.join(NEEDS_ROLE[cmd])} role; "
                                  f"{by or 'this key'} is {item['role']}")
        if cmd == "unlock":
            if not self.locked:
                raise CommandRejected("the table is not locked")
            self.locked = None
            for name in [h for h in LOCKING_ALARMS if h in self.alarms] or ["integrity"]:
                self._alarm(step, name, False, "cleared by the pit", by=by)
            return
        if cmd == "clear_alarm":  # a notice for surveillance, seen to: cleared whether the table is held or not
            alarm = str(args.get("alarm"))
            if alarm not in self.alarms:
                raise CommandRejected(f"the alarm {alarm} is not raised")
            if alarm not in PIT_CLEARED_ALARMS:
                raise CommandRejected(f"the alarm {alarm} is not the pit's to clear: "
                                      f"{CLEARED_BY.get(alarm, 'it clears by itself')}")
            self._alarm(step, alarm, False, "cleared by the pit", by=by)
            return
        # Held, the pit may still void the coup (then unlock) or close the shoe.
        if self.locked and cmd not in ("close_shoe", "void"):
            raise CommandRejected(f"the table is locked: {self.locked}")
        if cmd == "open_shoe":
            decks = args.get("decks")
            if decks is not None and not (isinstance(decks, int) and self.ruleset.min_decks <= decks <= self.ruleset.max_decks):
                raise CommandRejected(
                    f"decks must be {self.ruleset.min_decks}..{self.ruleset.max_decks} for {self.ruleset.name}"
                )
            self._open_shoe(step, f"command:{by}", decks)
        elif cmd == "close_shoe":
            self._require_shoe()
            self._close_shoe(step, f"closed by command ({by})")
        elif cmd == "confirm":
            if args.get("coup") is not None and (args["coup"] != self.coup_no or self.coup_state == NO_COUP):
                raise CommandRejected(f"coup {args['coup']} is not the coup waiting for a confirm")
            self._confirm(step, by)
        elif cmd == "void":
            self._require_shoe()
            if self.coup_state not in (OPEN, COMPLETE):
                raise CommandRejected("no coup to void")
            if self.coup_state == OPEN and (self.coup is None or not self.coup.order) and not self.pending:
                # Nothing dealt, nothing open: a void would only take a coup's number (and a result).
                raise CommandRejected(f"coup {self.coup_no} has no card and no misdeal: nothing to void")
            self._void(step, str(args.get("reason") or "voided by the pit"), by)
        elif cmd == "decide":
            self._decide(step, str(args.get("side")), bool(args.get("draw")), by)
        elif cmd in ("burn_card", "return_card", "end_burn"):
            self._correct(step, cmd, args, by)
        elif cmd == "enter_card":
            self._enter_card(step, args, by)
        elif cmd == "draw":
            self._check_draw()  # the draw itself: shoed.table.shuffle.on_draw, after this

    def _check_draw(self) -> None:
        """The dealer's `draw` signals a card out of a shoe that reads none, at a table with a card-reading
        shuffler (docs/shuffler.md). Refused where it cannot be that: at a table without a shuffler, at a shoe
        whose cards came read and none as a draw, and while a misdeal holds the table (a reading shoe's gate is
        locked then): each draw not identified opens a misdeal, so those opened by draws stay one at a time."""
        shoe = self._require_shoe()
        state = self.shuffler
        if state is None:
            raise CommandRejected("draw is for a shoe that reads no card, at a table with a card-reading shuffler; "
                                  "this table has none; nothing was done")
        if not state.draws and shoe.total_seen:
            raise CommandRejected(f"this shoe reads its cards ({shoe.total_seen} came read, none as a draw); "
                                  "draw is for a shoe that reads none; nothing was done")
        holding = next((p for p in self.pending if p["kind"] != md.MISSING_CARD), None)
        if holding is not None:
            raise CommandRejected(f"misdeal {holding['id']} ({holding['kind']}) is open: correct it before the "
                                  "next draw; nothing was done")

    def _find_pending(self, args: dict[str, Any], kinds: tuple[str, ...]) -> dict[str, Any]:
        wanted = args.get("misdeal")
        for entry in self.pending:
            if (wanted is None or entry["id"] == wanted) and entry["kind"] in kinds:
                return entry
        raise CommandRejected("no open misdeal that this corrects")

    def _correct(self, step: Step, cmd: str, args: dict[str, Any], by: str | None) -> None:
        kinds: tuple[str, ...] = (md.EXTRA_CARD, md.CARD_AFTER_LAST_COUP, md.CARD_OUT_OF_SEQUENCE,
                                  md.CARD_BEFORE_DECISION, md.BURN_DURING_COUP)
        if cmd == "burn_card":
            kinds += (md.BURN_SHORT,)
        elif cmd == "end_burn":
            kinds = (md.BURN_SHORT,)
        # Every check before the first change: a refused command changes nothing.
        shoe = self._require_shoe()
        entry = self._find_pending(args, kinds)
        if entry["kind"] == md.BURN_SHORT:
            oldest = next(p for p in self.pending if p["kind"] == md.BURN_SHORT)
            if oldest is not entry:
                # Its card came after the oldest one's: answered in the order the cards came.
                raise CommandRejected(f"misdeal {oldest['id']} (burn_short) came first: correct it first")
            unread = next((p for p in self.pending if p["kind"] == md.UNREADABLE_CARD), None)
            if cmd == "end_burn" and unread is not None and self.behaviour >= 3:
                # An earlier end_burn left its card, not read, to be entered: it is the coup's card before this one.
                raise CommandRejected(f"misdeal {unread['id']} (unreadable_card) came first: enter that card "
                                      "first; nothing was done")
            return self._correct_burn_short(step, cmd, entry, shoe, by)
        self.pending.remove(entry)
        card = parse_card(entry["card"]) if entry.get("card") else None
        if card is None and entry["kind"] == md.BURN_DURING_COUP:
            pass  # the burn button: no card left the shoe
        elif cmd == "burn_card":
            shoe.discard()
        elif card is not None:  # returned to the shoe: it will be read again
            shoe.returned(card)
            shuffle_table.card_returned(self, card.text)
        self._emit(step, ev.MisdealCorrected, misdeal=entry["id"], correction=cmd, card=entry.get("card"), by=by)

    def _enter_card(self, step: Step, args: dict[str, Any], by: str | None) -> None:
        try:
            card = parse_card(str(args.get("card", "")))
        except CardError as exc:
            raise CommandRejected(str(exc)) from None
        if self.behaviour >= 3:
            self._require_shoe()
        waiting = [p["id"] for p in self.pending if p["kind"] == md.UNREADABLE_CARD]
        if len(waiting) > 1 and args.get("misdeal") is None and self.behaviour >= 4:
            # Entered unnamed, the card the dealer looks at (the newest) would take the oldest one's place.
            raise CommandRejected(f"{len(waiting)} cards wait to be entered (misdeals {', '.join(map(str, waiting))}): "
                                  f"name the one entered (misdeal), misdeal {waiting[0]} first; nothing was done")
        entry = self._find_pending(args, (md.UNREADABLE_CARD,))
        oldest = next(p for p in self.pending if p["kind"] == md.UNREADABLE_CARD)
        if oldest is not entry and self.behaviour >= 3:
            # Entered out of turn, its card would take the place of the one that came out before it.
            raise CommandRejected(f"misdeal {oldest['id']} (unreadable_card) came first: enter that card first; "
                                  "nothing was done")
        self.pending.remove(entry)
        self._emit(step, ev.MisdealCorrected, misdeal=entry["id"], correction="enter_card", card=str(card), by=by)
        self._take_card(step, card, {"confidence": None, "mode": "game"}, f"manual:{by}", manual=True)


# The codes of a plain shoe's draw taken as a card not read (shoed.table.shuffle.on_draw): its mode is the draw
# command's, game unless said, not the shoe's own word.
_DRAW_CODES = ("no_order", "not_identified")

# What `shoe.odds` carries of an `odds` input (the rest, remaining_by_rank, is the shell's).
_ODDS_NEEDED = frozenset(ODDS_FIELDS)

# Misdeals about the coup whose cards a void counts with the coup's (TableController._void closes every misdeal
# but md.OUTLIVE_VOID); under behaviour 2, all but burn_during_coup (its card was left unaccounted).
_CLOSED_BY_VOID = (md.EXTRA_CARD, md.CARD_BEFORE_DECISION, md.MISSING_CARD, md.UNREADABLE_CARD, md.BURN_DURING_COUP)
_CLOSED_BY_VOID_2 = (md.EXTRA_CARD, md.CARD_BEFORE_DECISION, md.MISSING_CARD, md.UNREADABLE_CARD)

# Input kind -> its handler: the controller's dispatch table, one entry for each kind in the schema.
_HANDLERS: dict[str, shuffle_table.Handler] = {
    "card": TableController._on_card,
    "unreadable": TableController._on_unreadable,
    "button": TableController._on_button,
    "cut_card": TableController._on_cut_card,
    "shoe_removed": TableController._on_shoe_removed,
    "shoe_inserted": TableController._on_shoe_inserted,
    "tamper": TableController._on_tamper,
    "alarm": TableController._on_alarm,
    "warning": TableController._on_warning,
    "hello": TableController._on_hello,
    "link": TableController._on_link,
    "forged_frame": TableController._on_forged_frame,
    "odds": TableController._on_odds,
    "power": TableController._on_power,
    "integrity": TableController._on_integrity,
    "command": TableController._on_command,
    "clock": TableController._on_clock,
    "tick": TableController._on_tick,
    "refused_commands": TableController._on_refused_commands,
}
shuffle_table.install(_HANDLERS)  # a card-reading shuffler's reports
# The table of a controller without a card-reading shuffler (`shuffler` None): the shuffler's checks of each
# card out of the shoe have no order to check against, so its own handlers take the cards.
_NO_SHUFFLER_HANDLERS: dict[str, shuffle_table.Handler] = _HANDLERS | {
    "card": TableController._on_card, "unreadable": TableController._on_unreadable}


def _behaviour(value: object, default: int) -> int:
    """A behaviour number as a checkpoint or a power-on gives it (BEHAVIOUR); `default` for none."""
    return value if type(value) is int and value > 0 else default
