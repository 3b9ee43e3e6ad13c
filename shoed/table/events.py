"""The schema: shoed's vocabulary. What the table takes (input kinds, commands and their
arguments) and what it publishes and journals (events), version 1.

Every event is one JSON object with a `kind`; the ZeroMQ topic is
`<table>.<first word of kind>` (`t1.coup` carries coup.opened, coup.result,
coup.void, ...). Every event carries the table id, a per-table `seq` that
strictly increases and survives restarts, the shoe id and coup number, the
monotonic time (`mono_ns`) and UTC (`utc`) of the input that caused it.
Heartbeats repeat the last `seq` (they are not events of their own) so a
subscriber can tell a quiet table from lost messages.

These structs are the schema: `shoed schema` prints them as JSON Schema, and
the tests validate every event of whole dealt shoes against them, byte for
byte: an event read into its struct and written again is the same JSON. A field
that some events of a kind carry and others leave out defaults to `UNSET`
(left out when written); a field every event carries is there even when null.
Fields are added, never renamed; unknown fields are allowed so a newer daemon
does not break an older display.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

SCHEMA_VERSION = "1.0"

# The canonical JSON of events and records: msgspec's, keys (and struct fields) sorted. What the
# journal writes and hashes (shoed.journal.chain), and what a replay compares byte for byte.
canonical: Callable[[Any], bytes] = msgspec.json.Encoder(order="sorted").encode

# ----- inputs -----------------------------------------------------------------
# What the table controller takes, by `kind`: what a shoe reports (a driver's Reading) and what
# the daemon itself notices (power on and off, a command, live odds, an integrity fault).
READING_KINDS = (
    "card", "unreadable", "button", "cut_card", "shoe_removed", "shoe_inserted",
    "tamper", "alarm", "warning", "hello", "link", "forged_frame",
    # A card-reading shuffler's reports (firmware_protocol/SPEC.md §5.15, the `shuffler` driver).
    "shuffle_started", "deck_check", "order_chunk", "shuffle_completed", "shuffler_error", "meters",
    # A plain shoe's signal that a card came out, with no identity (docs/shuffler.md).
    "draw",
)
# `clock`: the daemon saw its wall clock step, or its loop stall (shoed/daemon/clockwatch.py);
# `tick`: time passed with no other input (a wait may have lasted too long: shoed/table/waits.py);
# `refused_commands`: the count of one key's refused commands not journaled one by one (shoed/table/refusals.py).
INPUT_KINDS = (*READING_KINDS, "odds", "power", "integrity", "command", "clock", "tick", "refused_commands")


# ----- commands -----------------------------------------------------------------
class CommandRejected(Exception):
    """A command refused, for its shape or its meaning now: its message goes back to the sender."""


# Free text from a console (a void's reason): one printable line. A line break or a terminal's escape
# (ESC) would be printed as it is by the reports and boards that show it; so would the invisible format
# characters: a bidirectional override or isolate (U+202E shows "a\u202e9HK" as "aKH9") or a zero-width one.
TEXT_REFUSED = ("\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f"
                "\ufeff\ufff9-\ufffb")
Text = Annotated[str, msgspec.Meta(min_length=1, max_length=200, pattern=f"^[^{TEXT_REFUSED}]*$")]
CardText = Annotated[str, msgspec.Meta(min_length=2, max_length=3)]  # "9H", "10H", "TD", "H3"
MisdealId = Annotated[int, msgspec.Meta(ge=0)]  # the `id` of a "misdeal" event's entry


class CommandArgs(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    pass


class NoArgs(CommandArgs):
    pass


class OpenShoeArgs(CommandArgs):
    decks: Annotated[int, msgspec.Meta(ge=1, le=16)] | None = None  # the ruleset's default if absent


class ConfirmArgs(CommandArgs):
    # The coup this confirm is for: refused if the table has moved on to another (a confirm pressed
    # twice, or one that crossed the shoe's own button, never confirms the next coup).
    coup: Annotated[int, msgspec.Meta(ge=1)] | None = None


class VoidArgs(CommandArgs):
    reason: Text | None = None


class DrawArgs(CommandArgs):
    mode: Literal["game", "burn"] = "game"


class DecideArgs(CommandArgs):
    side: Literal["player", "banker"]
    draw: bool


class CorrectionArgs(CommandArgs):
    misdeal: MisdealId | None = None  # which open misdeal this corrects; the oldest one if absent


class ClearAlarmArgs(CommandArgs):
    alarm: Annotated[str, msgspec.Meta(min_length=1, max_length=40, pattern="^[a-z_]+$")]  # a held alarm's name


class EnterCardArgs(CommandArgs):
    card: CardText
    misdeal: MisdealId | None = None  # the unreadable-card misdeal this answers


@dataclass(frozen=True)
class CommandSpec:
    """One command: its arguments' shape (checked at the endpoint) and what it does."""

    name: str
    args: type[CommandArgs]
    help: str
    read_only: bool = False  # answered from the table's state: not an input, never journaled


# The one command table: the endpoint checks shapes against it, the controller carries out what
# it lists, `shoed command` shows it. Meaning (is there a coup to confirm?) is the controller's.
COMMANDS: dict[str, CommandSpec] = {spec.name: spec for spec in (
    CommandSpec("open_shoe", OpenShoeArgs, "open a shoe (decks: the ruleset's default if absent)"),
    CommandSpec("close_shoe", NoArgs, "close the shoe: its reconciliation"),
    CommandSpec("confirm", ConfirmArgs, "confirm the result, or the void, and open the next coup (coup: only that one)"),
    CommandSpec("void", VoidArgs, "void the coup in play (reason); pit or surveillance"),
    CommandSpec("burn_card", CorrectionArgs, "misdeal correction: the card goes to the discard (misdeal)"),
    CommandSpec("return_card", CorrectionArgs, "misdeal correction: the card goes back into the shoe (misdeal)"),
    CommandSpec("end_burn", CorrectionArgs,
                "misdeal correction (burn_short): the burn ends short, the card is the coup's next card "
                "(misdeal); pit or surveillance"),
    CommandSpec("decide", DecideArgs, "Baccarat Royal: an active player's free choice (side, draw)"),
    CommandSpec("enter_card", EnterCardArgs, "enter by hand a card the shoe could not read (card, misdeal)"),
    CommandSpec("draw", DrawArgs, "a card came out of a plain shoe: it takes the shuffled order's card (mode)"),
    CommandSpec("status", NoArgs, "the table's state", read_only=True),
    CommandSpec("unlock", NoArgs, "clear a hold (integrity, forged_frame, device_changed); pit or surveillance"),
    CommandSpec("clear_alarm", ClearAlarmArgs,
                "clear a held alarm that tells what happened, once seen to (alarm: foreign_card, reader_mismatch, "
                "sequence_mismatch, weak_shuffle, deck_incomplete, shuffle_order_invalid); pit or surveillance"),
)}

# Roles of the keys on the command allow-list (docs/stream-integrity.md): a command input carries
# its sender's role; a key file without one is a dealer's, the least a key may do.
ROLES = ("dealer", "pit", "surveillance", "display")  # display: read-only (shoed.net.curve.READ_ONLY_ROLES)
DEFAULT_ROLE = "dealer"
# The roles that see the whole table: `status` whole, the surveillance endpoints (the dealer's `status`
# is the displays' view, shoed.table.audience).
SEES_ALL: tuple[str, ...] = ("pit", "surveillance")
# Commands only the pit or surveillance may give: they clear what stopped the table or undo a coup.
# end_burn: the burn Art. II calls for ends short, on the pit's word.
NEEDS_ROLE: dict[str, tuple[str, ...]] = {"unlock": ("pit", "surveillance"), "void": ("pit", "surveillance"),
                                          "end_burn": ("pit", "surveillance"), "clear_alarm": ("pit", "surveillance")}


# ----- events ---------------------------------------------------------------------

Recipient = Literal["player", "banker", "unreadable", "foreign", "none"]
Winner = Literal["player", "banker", "tie"]


class JournalHead(msgspec.Struct, kw_only=True):
    """The journal record that holds an event (on the wire only, not journaled): its file number,
    its jseq in that file and its hash. Heartbeats carry the last record written the same way."""

    file: int
    jseq: int
    hash: str


class Base(msgspec.Struct, tag_field="kind", kw_only=True):
    table: str
    seq: int
    shoe: str | None = None
    coup: int | None = None
    mono_ns: int
    utc: str
    # Published events only (never journaled, so unset, and then not written): the chain head for a
    # witness (docs/witness.md).
    journal: JournalHead | UnsetType = UNSET


# ----- shoe -----------------------------------------------------------------
class ShoeOpened(Base, tag="shoe.opened", kw_only=True):
    source: str | None = None
    decks: int
    ruleset: str
    burn: str
    shuffle: int | UnsetType = UNSET  # the card-reading shuffler's shuffle this shoe holds
    commitment: str | UnsetType = UNSET  # SHA-256 of (salt, order): the order fixed before the first card (docs/shuffler.md)


class ShoeBurnMode(Base, tag="shoe.burn_mode", kw_only=True):
    active: bool
    source: str | None = None


class ShoeBurn(Base, tag="shoe.burn", kw_only=True):
    card: str | None  # None: a face-down burn card the reader could not identify
    exposed: bool  # the first card, exposed to set the burn count
    burn_due: int
    source: str | None = None
    confidence: float | None | UnsetType = UNSET  # the reader's, for a card it read
    faced: bool | UnsetType = UNSET
    manual: bool | UnsetType = UNSET  # entered by hand (true only)
    card_withheld: bool | UnsetType = UNSET  # display audience: read, its identity not shown (shoed.table.audience)
    drawn_by: str | UnsetType = UNSET  # source "shuffler": the plain shoe or console that signalled the draw


class ShoeBurnComplete(Base, tag="shoe.burn_complete", kw_only=True):
    burned: int


class ShoeCutCard(Base, tag="shoe.cut_card", kw_only=True):
    last_coup: int
    rule: Literal["current", "one-more"]


class ShoeFinished(Base, tag="shoe.finished", kw_only=True):
    coups: int


class ShoeClosed(Base, tag="shoe.closed", kw_only=True):
    reason: str
    reconciliation: dict[str, Any]
    # A shoe from a card-reading shuffler: {shuffle, order, salt, commitment}, revealed once the shoe is closed.
    reveal: dict[str, Any] | UnsetType = UNSET


class ShoeOdds(Base, tag="shoe.odds", kw_only=True):
    cards_left: int
    probabilities: dict[str, float]
    player_expectation: dict[str, float]  # expected net win per unit staked; > 0 favours the player
    favourable: list[str]


# The live odds as the controller keeps them for its snapshot and a display shows them: a
# shoe.odds event without the fields every event carries.
ODDS_FIELDS = tuple(f for f in ShoeOdds.__struct_fields__ if f not in Base.__struct_fields__)


# ----- coups -----------------------------------------------------------------
class CoupOpened(Base, tag="coup.opened", kw_only=True):
    last: bool


class Card(Base, tag="card", kw_only=True):
    card: str | None
    recipient: Recipient
    index: int | UnsetType = UNSET  # position in the coup, 0 = the Player's first card (cards dealt to a hand)
    total: int | UnsetType = UNSET  # the recipient's total after this card (cards dealt to a hand)
    source: str | None = None
    confidence: float | None | UnsetType = UNSET  # the reader's (absent for an unreadable card)
    faced: bool | UnsetType = UNSET
    manual: bool | UnsetType = UNSET  # entered by hand (true only)
    reason: str | None | UnsetType = UNSET  # why an unreadable card was not read (the reader's code)
    # A card drawn before a decision, dealt once the decision is to draw (counted once; true only).
    held: bool | UnsetType = UNSET
    card_withheld: bool | UnsetType = UNSET  # display audience: read, its identity not shown (shoed.table.audience)
    drawn_by: str | UnsetType = UNSET  # source "shuffler": the plain shoe or console that signalled the draw


class CoupDecision(Base, tag="coup.decision", kw_only=True):
    side: Literal["player", "banker"]
    draws: bool
    by: str | None = None


class CoupResult(Base, tag="coup.result", kw_only=True):
    player_cards: list[str]
    banker_cards: list[str]
    player_total: int
    banker_total: int
    winner: Winner
    natural: bool
    player_pair: bool
    banker_pair: bool
    cards: int
    settlement: dict[str, int | float]  # net win per unit staked: whole numbers stay whole
    rotate: list[str] = []
    void: bool = False
    sources: list[str] = []
    road: dict[str, Any] | None = None  # what this coup added to the roads (shoed.rules.roads.RoadStep)


class CoupVoid(Base, tag="coup.void", kw_only=True):
    reason: str
    by: str | None = None
    player_cards: list[str] = []
    banker_cards: list[str] = []


class CoupConfirmed(Base, tag="coup.confirmed", kw_only=True):
    by: str | None = None
    state: str


# ----- misdeals and alarms -----------------------------------------------------
# Alarms the table holds: raised until it clears them, and listed meanwhile in the snapshot's
# `alarms` (the controller holds an alarm only through TableController._alarm, and only these).
# Every other alarm event is a one-off notice. A display tells them apart by this set alone, so
# one that stayed connected and one that joined late show the same alarms.
HELD_ALARMS = frozenset({
    "tamper", "foreign_card", "integrity", "favourable_bet", "stalled", "no_reader", "reader_mismatch",
    "forged_frame", "device_changed", "reader_out_of_step",
    # A card-reading shuffler's (shoed.table.shuffle): its faults are shuffler_<fault name>.
    "shuffle_order_invalid", "deck_incomplete", "shoe_unverified", "weak_shuffle", "sequence_mismatch",
    "shuffler_jam", "shuffler_door", "shuffler_recognition", "shuffler_fault",
})
# Held alarms that also stop play (the table is locked) until the pit unlocks it.
LOCKING_ALARMS = ("integrity", "forged_frame", "device_changed", "reader_out_of_step")
# Held alarms that tell of something that happened, not of a state that still holds: nothing ends them but
# the pit's word (clear_alarm) once it has seen to them. Every other held alarm clears when what raised it
# ends (a reader reads again, the shuffler's fault clears, the table goes on) or with `unlock`.
PIT_CLEARED_ALARMS = ("foreign_card", "reader_mismatch", "sequence_mismatch", "weak_shuffle", "deck_incomplete",
                      "shuffle_order_invalid")
# What ends each of the other held alarms, for the pit that asks to clear one (clear_alarm).
CLEARED_BY = {
    **{name: "it holds the table: `unlock` clears it" for name in LOCKING_ALARMS},
    "tamper": "it clears when the shoe reports its case closed",
    "favourable_bet": "it clears when no bet is favourable to the player any more",
    "stalled": "it clears when the table moves on",
    "no_reader": "it clears when a reader reads again",
    "shoe_unverified": "a shoe whose shuffle was verified, or `open_shoe`, clears it",
    **{name: "it clears when the shuffler reports the fault cleared"
       for name in ("shuffler_jam", "shuffler_door", "shuffler_recognition", "shuffler_fault")},
}


class MisdealDetail(msgspec.Struct, kw_only=True):
    id: int
    kind: str
    card_index: int | None
    correctable: bool
    correction: str
    reason: str
    card: str | None = None


class Misdeal(Base, tag="misdeal", kw_only=True):
    misdeal: MisdealDetail
    source: str | None = None


class MisdealCorrected(Base, tag="misdeal.corrected", kw_only=True):
    misdeal: int
    correction: str
    card: str | None = None
    by: str | None = None
    card_withheld: bool | UnsetType = UNSET  # display audience: read, its identity not shown (shoed.table.audience)


class Alarm(Base, tag="alarm", kw_only=True):
    # tamper, foreign_card, integrity, shoe, unclean_stop, stalled (code: what the table waits for), ...;
    # forged_frame and device_changed hold the table like integrity does, until the pit unlocks it
    # (docs/stream-integrity.md)
    alarm: str
    active: bool
    text: str | None = None
    code: str | None | UnsetType = UNSET  # the shoe's own alarm code (alarm "shoe")
    source: str | None | UnsetType = UNSET  # the reader or button it concerns
    bets: list[str] | UnsetType = UNSET  # favourable_bet: the bets that favour the player
    by: str | None | UnsetType = UNSET  # who cleared it (integrity)
    deck: int | UnsetType = UNSET  # deck_incomplete: the deck
    missing: list[str] | UnsetType = UNSET  # deck_incomplete: cards of the deck not found
    extra: list[str] | UnsetType = UNSET  # deck_incomplete: cards found more than once
    foreign: list[str] | UnsetType = UNSET  # deck_incomplete: cards of another design
    run: dict[str, int] | UnsetType = UNSET  # weak_shuffle: {length, previous: its start in the previous shoe's cards}
    position: int | UnsetType = UNSET  # sequence_mismatch: the card's number out of the shoe, from 0
    expected: str | None | UnsetType = UNSET  # sequence_mismatch: the card the shuffled order has there
    got: str | None | UnsetType = UNSET  # sequence_mismatch: the card that came
    mismatch: str | UnsetType = UNSET  # sequence_mismatch: substituted, inserted, removed, out_of_order, unexplained


# ----- devices and the table ----------------------------------------------------
class DeviceConnected(Base, tag="device.connected", kw_only=True):
    source: str | None = None
    detail: dict[str, Any] = {}


class DeviceLost(Base, tag="device.lost", kw_only=True):
    source: str | None = None
    detail: dict[str, Any] = {}


class DeviceGone(Base, tag="device.gone", kw_only=True):
    """A source the table knew is not among the daemon's sources any more (announced at power on,
    e.g. the embedded default's virtual shoe of a previous run): it leaves `devices`."""

    source: str | None = None
    detail: dict[str, Any] = {}


class DeviceRestored(Base, tag="device.restored", kw_only=True):
    source: str | None = None
    detail: dict[str, Any] = {}


class DeviceFallback(Base, tag="device.fallback", kw_only=True):
    source: str | None = None
    detail: dict[str, Any] = {}


class DevicePrimary(Base, tag="device.primary", kw_only=True):
    """The first reader in priority order deals again (detail.previous: the fallback)."""

    source: str | None = None
    detail: dict[str, Any] = {}


class CardDuplicate(Base, tag="card.duplicate", kw_only=True):
    """A card read by a second reader after another had already dealt it: counted once."""

    card: str
    source: str | None = None


class DeviceHello(Base, tag="device.hello", kw_only=True):
    source: str | None = None
    detail: dict[str, Any] = {}


class DeviceWarning(Base, tag="device.warning", kw_only=True):
    code: str | None = None
    text: str | None = None
    source: str | None = None


# ----- card-reading shuffler (docs/shuffler.md) -----------------------------------
class ShuffleStarted(Base, tag="shuffle.started", kw_only=True):
    shuffle: int
    decks: int
    source: str | None = None


class ShuffleDeckChecked(Base, tag="shuffle.deck_checked", kw_only=True):
    """One deck's verification: the deck's composition, never the order."""

    shuffle: int
    deck: int
    complete: bool
    present: int
    unreadable: int = 0
    missing: list[str] = []
    extra: list[str] = []
    foreign: list[str] = []
    face_reversed: list[str] = []
    source: str | None = None


class ShuffleChunk(Base, tag="shuffle.chunk", kw_only=True):
    """A chunk of the order was recorded: where and how many cards, never which."""

    shuffle: int
    position: int
    count: int
    source: str | None = None


class ShuffleCompleted(Base, tag="shuffle.completed", kw_only=True):
    shuffle: int
    shuffler_shoe: int | None = None  # the shuffler's id of the shoe (magazine)
    cards: int
    verified: bool  # every deck complete, the order whole and matching the shuffler's digest
    problems: list[str] = []
    source: str | None = None


class ShufflerMeters(Base, tag="shuffle.meters", kw_only=True):
    meters: dict[str, int | None]
    source: str | None = None


class TableStarted(Base, tag="table.started", kw_only=True):
    clean: bool
    recovery: list[Any] = []
    ruleset: str
    locked: str | None = None


class TableStopped(Base, tag="table.stopped", kw_only=True):
    clean: bool


class TableClockStep(Base, tag="table.clock_step", kw_only=True):
    """The wall clock stepped against the monotonic clock by more than a second: `utc` is the
    new wall time, `utc_before` where it would have been, `step_ns` the difference."""

    step_ns: int
    utc_before: str


class TableStall(Base, tag="table.stall", kw_only=True):
    """The daemon's loop was not run for `stalled_ns` (more than `limit_ns`, half the watchdog)."""

    stalled_ns: int
    limit_ns: int


class Heartbeat(msgspec.Struct, tag_field="kind", tag="heartbeat", kw_only=True):
    """Sent when idle, at least once a second; not journaled, not an event of its own: `seq`
    repeats the last event's (absent before the table's first event)."""

    table: str
    interval: float
    seq: int | None = None
    journal: JournalHead | UnsetType = UNSET  # the last journal record written (see docs/witness.md)


class Withheld(Base, tag="withheld", kw_only=True):
    """The display audience's placeholder for an event only surveillance sees (shoed.table.audience)."""


Event = (
    ShoeOpened | ShoeBurnMode | ShoeBurn | ShoeBurnComplete | ShoeCutCard | ShoeFinished | ShoeClosed | ShoeOdds
    | CoupOpened | Card | CoupDecision | CoupResult | CoupVoid | CoupConfirmed
    | Misdeal | MisdealCorrected | Alarm
    | DeviceConnected | DeviceLost | DeviceGone | DeviceRestored | DeviceFallback | DevicePrimary | CardDuplicate | DeviceHello | DeviceWarning
    | TableStarted | TableStopped | TableClockStep | TableStall | Heartbeat | Withheld
    | ShuffleStarted | ShuffleDeckChecked | ShuffleChunk | ShuffleCompleted | ShufflerMeters
)


def kind_of(struct: type[Base]) -> str:
    """The event kind an event struct is written with (its tag), e.g. "shoe.opened"."""
    tag: str = struct.__struct_config__.tag  # type: ignore[assignment]
    return tag


# Event kind -> its struct (the controller builds its events from the structs themselves).
EVENT_TYPES: dict[str, type[Base]] = {
    kind_of(cls): cls for cls in Event.__args__ if issubclass(cls, Base)
}


# A reader's link state (a `link` input) -> the event that reports it.
DEVICE_LINK: dict[str, type[Base]] = {"connected": DeviceConnected, "lost": DeviceLost, "restored": DeviceRestored}


def validate(event: dict[str, Any]) -> msgspec.Struct:
    """Check one event against the schema; raises msgspec.ValidationError."""
    struct: msgspec.Struct = msgspec.convert(event, Event)
    return struct


def json_schema() -> dict[str, Any]:
    schema = msgspec.json.schema(Event)
    schema["title"] = "shoed events"
    schema["description"] = (
        f"shoed event schema version {SCHEMA_VERSION}. ZeroMQ PUB: multipart [topic, JSON], topic "
        "'<table>.<first word of kind>'. Heartbeats ({'kind': 'heartbeat', 'table', 'seq': last seq, "
        "'journal': {'file', 'jseq', 'hash'} of the last journal record}) are sent when idle, at least once a "
        "second. On the surveillance endpoints events and heartbeats carry 'journal' too: the journal record that "
        "holds them; the display endpoints carry no 'journal' (a hash would test a guess at a face-down card)."
    )
    schema["version"] = SCHEMA_VERSION
    return schema
