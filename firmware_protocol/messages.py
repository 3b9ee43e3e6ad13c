"""Messages of the shoed shoe protocol (see SPEC.md), as plain Python values.

This module is the shared vocabulary of the reference codec, the daemon's
`native` drivers and the virtual shoe. The wire layout of each message is in
SPEC.md; `firmware_protocol.codec` turns these values into frames and back.

Every message travels in a frame that carries the sender's sequence number
(`seq`, 16 bits, per direction). Messages marked RELIABLE are kept by the shoe
until the host acknowledges them (cumulative ACK) and repeated unchanged until
then; the host drops any reliable message whose seq it has already taken.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

PROTOCOL_MAJOR = 1
PROTOCOL_MINOR = 1  # 1.1 adds the card-reading shuffler's messages (types 0x50 - 0x55) and a plain shoe's draw (0x12)

# Suits on the wire, in this order: 0=C, 1=D, 2=H, 3=S. Ranks: 1 (ace) .. 13 (king).
WIRE_SUITS = "CDHS"

# Card modes.
MODE_GAME = 0
MODE_BURN = 1

# Dealer buttons.
BUTTON_CONFIRM = 1  # confirm the result / open the next coup
BUTTON_PLAYER_DRAW = 2  # free-choice games: the active Player draws
BUTTON_PLAYER_STAND = 3
BUTTON_BANKER_DRAW = 4
BUTTON_BANKER_STAND = 5
BUTTON_BURN_START = 6  # the dealer starts burning cards (burn mode)
BUTTON_BURN_END = 7
BUTTON_NAMES = {
    BUTTON_CONFIRM: "confirm",
    BUTTON_PLAYER_DRAW: "player_draw",
    BUTTON_PLAYER_STAND: "player_stand",
    BUTTON_BANKER_DRAW: "banker_draw",
    BUTTON_BANKER_STAND: "banker_stand",
    BUTTON_BURN_START: "burn_start",
    BUTTON_BURN_END: "burn_end",
}

# Unreadable-card reasons.
UNREADABLE_NO_INDEX = 1  # the index could not be seen
UNREADABLE_LOW_CONFIDENCE = 2
UNREADABLE_DOUBLE_FEED = 3  # two cards passed together

# What signalled a plain shoe's draw (protocol 1.1).
DRAW_SENSOR = 1  # the shoe's own sensor saw a card leave
DRAW_BUTTON = 2  # the dealer pressed the shoe's draw button
DRAW_TRIGGERS = {DRAW_SENSOR: "sensor", DRAW_BUTTON: "button"}

# Tamper sources.
TAMPER_LID = 1
TAMPER_CASE = 2


@dataclass(frozen=True)
class Message:
    """Base of all messages. `seq` is the frame sequence number of the sender."""

    seq: int = 0

    TYPE = 0x00
    RELIABLE = False  # kept and repeated by the shoe until acknowledged
    NAME = "message"
    MINOR = 0  # the protocol minor version that defines this message (SPEC.md §8.1)


# ----- shoe to host ---------------------------------------------------------


@dataclass(frozen=True)
class Hello(Message):
    """First message of the shoe after power on or reconnect; also its answer to a Hello from the host."""

    major: int = PROTOCOL_MAJOR
    minor: int = PROTOCOL_MINOR
    vendor: str = ""
    model: str = ""
    serial: str = ""
    firmware: str = ""
    boot: int = 0  # 32-bit random number drawn at power on: a new value means the shoe restarted

    TYPE = 0x01
    NAME = "hello"


@dataclass(frozen=True)
class CardRead(Message):
    rank: int = 1  # 1..13
    suit: int = 0  # 0..3 = C D H S
    confidence: int = 255  # 0..255, 255 = certain
    faced: bool = False  # the card came out face up (Macau statutory rules Art. IV: still valid)
    mode: int = MODE_GAME

    TYPE = 0x10
    RELIABLE = True
    NAME = "card"


@dataclass(frozen=True)
class Unreadable(Message):
    mode: int = MODE_GAME
    reason: int = UNREADABLE_NO_INDEX

    TYPE = 0x11
    RELIABLE = True
    NAME = "unreadable"


@dataclass(frozen=True)
class Draw(Message):
    """A plain shoe, which reads no card, signals that one card left it (protocol 1.1). Reliable like a
    card: the host takes each draw exactly once, and the card's identity comes from the shuffled order."""

    mode: int = MODE_GAME
    trigger: int = DRAW_SENSOR  # 1 the shoe's sensor, 2 the dealer's draw button, 3 - 255 vendor-defined

    TYPE = 0x12
    RELIABLE = True
    NAME = "draw"
    MINOR = 1


@dataclass(frozen=True)
class Button(Message):
    button: int = BUTTON_CONFIRM

    TYPE = 0x20
    RELIABLE = True
    NAME = "button"


@dataclass(frozen=True)
class CutCard(Message):
    """The cut card has passed the reader."""

    TYPE = 0x21
    RELIABLE = True
    NAME = "cut_card"


@dataclass(frozen=True)
class ShoeRemoved(Message):
    """The card magazine (shoe) was taken out."""

    TYPE = 0x22
    RELIABLE = True
    NAME = "shoe_removed"


@dataclass(frozen=True)
class ShoeInserted(Message):
    TYPE = 0x23
    RELIABLE = True
    NAME = "shoe_inserted"


@dataclass(frozen=True)
class Tamper(Message):
    source: int = TAMPER_LID
    active: bool = True  # True: opened / triggered; False: closed / cleared

    TYPE = 0x24
    RELIABLE = True
    NAME = "tamper"


@dataclass(frozen=True)
class Alarm(Message):
    code: int = 0  # 16-bit vendor fault code
    text: str = ""

    TYPE = 0x30
    RELIABLE = True
    NAME = "alarm"


@dataclass(frozen=True)
class Heartbeat(Message):
    """Sent by both sides when idle (at least once a second)."""

    uptime_ms: int = 0  # 32-bit, wraps
    unacked: int = 0  # shoe: reliable messages waiting for an ACK; host: 0

    TYPE = 0x40
    NAME = "heartbeat"


@dataclass(frozen=True)
class Status(Message):
    """The shoe's answer to a StatusRequest."""

    gate_locked: bool = False
    shoe_present: bool = True
    lid_closed: bool = True
    unacked: int = 0
    utc_ms: int = 0  # the shoe's clock, 0 when unset

    TYPE = 0x41
    NAME = "status"


# ----- host to shoe ---------------------------------------------------------


@dataclass(frozen=True)
class Ack(Message):
    """Cumulative: every reliable message with seq up to and including `ack` is
    durably recorded by the host (compared modulo 2**16, see SPEC.md)."""

    ack: int = 0

    TYPE = 0x80
    NAME = "ack"


@dataclass(frozen=True)
class Gate(Message):
    """Lock (hold the next card back) or unlock the card gate."""

    locked: bool = True

    TYPE = 0x81
    NAME = "gate"


@dataclass(frozen=True)
class SetTime(Message):
    utc_ms: int = 0  # milliseconds since 1970-01-01 UTC, 64-bit

    TYPE = 0x82
    NAME = "set_time"


@dataclass(frozen=True)
class StatusRequest(Message):
    TYPE = 0x83
    NAME = "status_request"


# ----- card-reading shuffler to host (protocol 1.1) -------------------------
#
# A shuffler is a device on the same protocol: its Hello says minor 1 or more,
# and it sends these reliable messages about each shuffle, numbered by a
# 32-bit `shuffle` id it draws per shuffle. Cards in them are dealer notation
# ("TD"); on the wire each card is one byte, suit << 4 | rank (SPEC.md §5.15).

SHUFFLER_JAM = 1  # cards jammed in the mechanism
SHUFFLER_DOOR = 2  # a door or cover opened
SHUFFLER_RECOGNITION = 3  # the card reader (camera) failed
SHUFFLER_FAULT_NAMES = {SHUFFLER_JAM: "jam", SHUFFLER_DOOR: "door", SHUFFLER_RECOGNITION: "recognition"}

DECKS_MAX = 16  # decks in one shuffle at most
DECK_LIST_MAX = 64  # cards in each list of a deck check at most
CHUNK_MAX = 255  # cards in one order chunk at most
SHUFFLER_TEXT_MAX = 200


@dataclass(frozen=True)
class ShuffleStarted(Message):
    """The shuffler took a batch of cards and started shuffling it."""

    shuffle: int = 0  # u32 id of this shuffle, drawn by the shuffler
    decks: int = 8  # decks the batch should hold (1 .. 16)

    TYPE = 0x50
    RELIABLE = True
    NAME = "shuffle_started"
    MINOR = 1


@dataclass(frozen=True)
class DeckCheck(Message):
    """What the shuffler's reader found in one deck of the batch."""

    shuffle: int = 0
    deck: int = 1  # 1 .. decks
    present: int = 52  # cards of this deck read
    unreadable: int = 0  # cards that could not be identified
    missing: tuple[str, ...] = ()  # cards of a full deck that were not there
    extra: tuple[str, ...] = ()  # cards of this deck's design found more than once
    foreign: tuple[str, ...] = ()  # cards of another design (back or stock) found with this deck
    face_reversed: tuple[str, ...] = ()  # cards lying face up in the batch

    TYPE = 0x51
    RELIABLE = True
    NAME = "deck_check"
    MINOR = 1


@dataclass(frozen=True)
class OrderChunk(Message):
    """Consecutive cards of the shuffled order, from `position` (0 = the first card out of the shoe)."""

    shuffle: int = 0
    position: int = 0  # u16
    cards: tuple[str, ...] = ("AC",)  # 1 .. 255 cards (a default message, like every one, is valid)

    TYPE = 0x52
    RELIABLE = True
    NAME = "order_chunk"
    MINOR = 1


@dataclass(frozen=True)
class ShuffleCompleted(Message):
    """The shuffle is done and its shoe handed out; the order is complete."""

    shuffle: int = 0
    shoe: int = 0  # u32 id of the shoe (magazine) the cards went into
    cards: int = 0  # u16: cards in the order
    digest: str = "00" * 32  # SHA-256 of the order's card bytes, as 64 hex digits

    TYPE = 0x53
    RELIABLE = True
    NAME = "shuffle_completed"
    MINOR = 1


@dataclass(frozen=True)
class ShufflerError(Message):
    """A fault of the shuffler (raised, `active`) or its end (cleared)."""

    shuffle: int = 0  # the shuffle it interrupted, 0 when none
    fault: int = SHUFFLER_JAM  # 1 jam, 2 door, 3 recognition, 4 - 255 vendor-defined
    active: bool = True
    code: int = 0  # u16 vendor fault code
    text: str = ""

    TYPE = 0x54
    RELIABLE = True
    NAME = "shuffler_error"
    MINOR = 1


@dataclass(frozen=True)
class Meters(Message):
    """The shuffler's lifetime counters, sent after each shuffle."""

    shuffles: int = 0
    cards: int = 0
    jams: int = 0
    door_opens: int = 0
    recognition_faults: int = 0

    TYPE = 0x55
    RELIABLE = True
    NAME = "meters"
    MINOR = 1


MESSAGE_TYPES: dict[int, type[Message]] = {
    cls.TYPE: cls
    for cls in (
        Hello, CardRead, Unreadable, Draw, Button, CutCard, ShoeRemoved, ShoeInserted, Tamper, Alarm,
        Heartbeat, Status, Ack, Gate, SetTime, StatusRequest,
        ShuffleStarted, DeckCheck, OrderChunk, ShuffleCompleted, ShufflerError, Meters,
    )
}
MESSAGE_NAMES: dict[str, type[Message]] = {cls.NAME: cls for cls in MESSAGE_TYPES.values()}


def card_text(msg: CardRead) -> str:
    """The card of a CardRead in shoed's notation, e.g. 'TD'."""
    return _RANKS[msg.rank - 1] + WIRE_SUITS[msg.suit]



def card_byte(card: str) -> int:
    """A card in dealer notation ('TD') as its shuffler wire byte, suit << 4 | rank (SPEC.md §5.15).
    ValueError for anything that is not a card."""
    if not isinstance(card, str) or len(card) != 2 or card[0] not in _RANKS or card[1] not in WIRE_SUITS:
        raise ValueError(f"{card!r} is not a card (write rank and suit, e.g. TD)")
    return WIRE_SUITS.index(card[1]) << 4 | (_RANKS.index(card[0]) + 1)


def card_of_byte(value: int) -> str:
    """The card a shuffler wire byte names; ValueError for a rank outside 1..13 (bits 6-7 are reserved)."""
    rank, suit = value & 0x0F, (value >> 4) & 0x03
    if not 1 <= rank <= 13:
        raise ValueError(f"card byte 0x{value:02x}: rank {rank} is not 1..13")
    return _RANKS[rank - 1] + WIRE_SUITS[suit]


def order_digest(cards) -> str:
    """SHA-256 of an order's card bytes, position 0 first, as 64 hex digits (ShuffleCompleted.digest)."""
    return hashlib.sha256(bytes(card_byte(card) for card in cards)).hexdigest()


_RANKS = "A23456789TJQK"
