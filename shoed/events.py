"""The event schema: what shoed publishes and journals, version 1.

Every event is one JSON object with a `kind`; the ZeroMQ topic is
`<table>.<first word of kind>` (`t1.coup` carries coup.opened, coup.result,
coup.void, ...). Every event carries the table id, a per-table `seq` that
strictly increases and survives restarts, the shoe id and coup number, the
monotonic time (`mono_ns`) and UTC (`utc`) of the input that caused it.
Heartbeats repeat the last `seq` (they are not events of their own) so a
subscriber can tell a quiet table from lost messages.

These structs are the schema: `shoed schema` prints them as JSON Schema, and
the tests validate every event of whole dealt shoes against them. Fields are
added, never renamed; unknown fields are allowed so a newer daemon does not
break an older display.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from shoed.table import SCHEMA_VERSION

Recipient = Literal["player", "banker", "unreadable", "foreign", "none"]
Winner = Literal["player", "banker", "tie"]


class Base(msgspec.Struct, tag_field="kind", kw_only=True):
    table: str
    seq: int
    shoe: str | None = None
    coup: int | None = None
    mono_ns: int
    utc: str


# ----- shoe -----------------------------------------------------------------
class ShoeOpened(Base, tag="shoe.opened", kw_only=True):
    source: str | None = None
    decks: int
    ruleset: str
    burn: str


class ShoeBurnMode(Base, tag="shoe.burn_mode", kw_only=True):
    active: bool
    source: str | None = None


class ShoeBurn(Base, tag="shoe.burn", kw_only=True):
    card: str | None  # None: a face-down burn card the reader could not identify
    exposed: bool  # the first card, exposed to set the burn count
    burn_due: int
    source: str | None = None
    card_withheld: bool = False  # display audience: the card was read, its identity is not shown (shoed.audience)


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


class ShoeOdds(Base, tag="shoe.odds", kw_only=True):
    cards_left: int
    probabilities: dict[str, float]
    player_expectation: dict[str, float]  # expected net win per unit staked; > 0 favours the player
    favourable: list[str]


# ----- coups -----------------------------------------------------------------
class CoupOpened(Base, tag="coup.opened", kw_only=True):
    last: bool


class Card(Base, tag="card", kw_only=True):
    card: str | None
    recipient: Recipient
    index: int | None = None  # position in the coup, 0 = the Player's first card
    total: int | None = None  # the recipient's total after this card
    source: str | None = None
    confidence: float | None = None
    faced: bool = False
    manual: bool = False
    card_withheld: bool = False  # display audience: the card was read, its identity is not shown (shoed.audience)


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
    settlement: dict[str, float]
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
    card_withheld: bool = False  # display audience: the card was read, its identity is not shown (shoed.audience)


class Alarm(Base, tag="alarm", kw_only=True):
    alarm: str  # tamper, foreign_card, integrity, shoe, unclean_stop, ...
    active: bool
    text: str | None = None
    code: str | None = None
    source: str | None = None
    bets: list[str] | None = None  # favourable_bet: the bets that favour the player


# ----- devices and the table ----------------------------------------------------
class DeviceConnected(Base, tag="device.connected", kw_only=True):
    source: str | None = None
    detail: dict[str, Any] = {}


class DeviceLost(Base, tag="device.lost", kw_only=True):
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


class TableStarted(Base, tag="table.started", kw_only=True):
    clean: bool
    recovery: list[Any] = []
    ruleset: str
    locked: str | None = None


class TableStopped(Base, tag="table.stopped", kw_only=True):
    clean: bool


class Withheld(Base, tag="withheld", kw_only=True):
    """The display audience's placeholder for an event only surveillance sees (shoed.audience)."""


Event = (
    ShoeOpened | ShoeBurnMode | ShoeBurn | ShoeBurnComplete | ShoeCutCard | ShoeFinished | ShoeClosed | ShoeOdds
    | CoupOpened | Card | CoupDecision | CoupResult | CoupVoid | CoupConfirmed
    | Misdeal | MisdealCorrected | Alarm
    | DeviceConnected | DeviceLost | DeviceRestored | DeviceFallback | DevicePrimary | CardDuplicate | DeviceHello | DeviceWarning
    | TableStarted | TableStopped | Withheld
)


def validate(event: dict) -> Base:
    """Check one event against the schema; raises msgspec.ValidationError."""
    return msgspec.convert(event, Event)


def json_schema() -> dict:
    schema = msgspec.json.schema(Event)
    schema["title"] = "shoed events"
    schema["description"] = (
        f"shoed event schema version {SCHEMA_VERSION}. ZeroMQ PUB: multipart [topic, JSON], topic "
        "'<table>.<first word of kind>'. Heartbeats ({'kind': 'heartbeat', 'table', 'seq': last seq}) are "
        "sent when idle, at least once a second."
    )
    schema["version"] = SCHEMA_VERSION
    return schema
