"""Reference codec of the shoed shoe protocol 1.1 (SPEC.md): frames to messages and back.

Pure functions over byte buffers, no I/O and no clock. A frame on the wire is
COBS(version, type, seq u16 LE, payload, CRC-32 LE) followed by one 0x00
delimiter. `decode` looks at the start of a buffer and says how many bytes it
used and what they were: a message, a `Rejected` stretch (garbage, a corrupt
frame, a frame this version cannot use), or nothing yet. It never raises and
never guesses: a frame whose CRC does not match is never read as a card, and an
intact frame is found even when garbage without a delimiter sits right before it.
"""

from __future__ import annotations

import dataclasses
import struct
import unicodedata
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from firmware_protocol import messages as m

FRAME_VERSION = m.PROTOCOL_MAJOR  # first byte of every frame's content
HEADER_SIZE = 4  # version u8, type u8, seq u16
CRC_SIZE = 4
MIN_FRAME = HEADER_SIZE + CRC_SIZE  # a message with an empty payload
MAX_FRAME = 512  # frame content (version .. CRC) before COBS
MAX_PAYLOAD = MAX_FRAME - MIN_FRAME
MAX_ENCODED = MAX_FRAME + MAX_FRAME // 254 + 1  # COBS adds at most one byte per 254, plus one
MAX_WIRE = MAX_ENCODED + 1  # with the 0x00 delimiter: the receive buffer a firmware needs

HELLO_STRING_MAX = 64  # bytes of UTF-8 in each of vendor, model, serial, firmware
UNACKED_MAX = 0x7FFF  # a heartbeat's or status's unacked at most (SPEC.md §6.1: seq comparison stays unambiguous)
ALARM_TEXT_MAX = 255

# Kinds of Rejected stretches; a receiver counts them by kind (SPEC.md §9).
GARBAGE = "garbage"  # bytes before a frame that are not part of it
OVERFLOW = "overflow"  # no delimiter within MAX_WIRE bytes: cannot belong to a frame
COBS = "cobs"  # the stuffing does not decode
SHORT = "short"  # shorter than the smallest frame
LONG = "long"  # longer than MAX_FRAME
CRC = "crc"  # checksum mismatch: corrupted on the way
VERSION = "version"  # intact frame of another protocol major version
TYPE = "type"  # intact frame of a message type this version does not know: ignored and counted
PAYLOAD = "payload"  # intact frame whose payload is invalid (a firmware fault)

_HEADER = struct.Struct("<BBH")
_CRC = struct.Struct("<I")
_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_HEARTBEAT = struct.Struct("<IH")
_STATUS = struct.Struct("<BHQ")
_U64 = struct.Struct("<Q")
_HELLO_FIXED = struct.Struct("<BBI")


@dataclass(frozen=True, slots=True)
class Rejected:
    """A stretch of input that is not a usable message.

    `offset` is where it starts (in `decode`'s buffer, or in the whole stream
    for `Decoder`), `length` how many bytes it covers (with its delimiter when
    it had one), `raw` those bytes, `reason` one line for a person and `kind`
    one of the kind constants of this module for counting.
    """

    offset: int
    length: int
    reason: str
    raw: bytes
    kind: str = GARBAGE


NEED_MORE = (0, None)


class EncodeError(ValueError):
    """A message whose fields cannot go on the wire (out of range, too long)."""


class _PayloadError(Exception):
    pass


# ----- COBS -----------------------------------------------------------------


def cobs_encode(data: bytes | bytearray) -> bytes:
    """Consistent Overhead Byte Stuffing (Cheshire and Baker), canonical form, no delimiter."""
    out = bytearray()
    parts = bytes(data).split(b"\x00")
    last = len(parts) - 1
    for index, part in enumerate(parts):
        size = len(part)
        if size < 254:
            out.append(size + 1)
            out += part
            continue
        pos = 0
        while size - pos >= 254:
            out.append(0xFF)
            out += part[pos:pos + 254]
            pos += 254
        # A full 254-byte block implies no zero; the final block is left out when nothing follows.
        if pos < size or index != last:
            out.append(size - pos + 1)
            out += part[pos:]
    return bytes(out)


def cobs_decode(data: bytes | bytearray) -> bytes | None:
    """Undo COBS on one frame (without its delimiter); None when the stuffing is inconsistent."""
    out = _unstuff(bytes(data))
    return None if out is None else bytes(out)


def _unstuff(chunk: bytes) -> bytearray | None:
    n = len(chunk)
    if not n:
        return None
    out = bytearray()
    i = 0
    while True:
        code = chunk[i]
        if not code:
            return None
        j = i + code
        if j > n:
            return None
        out += chunk[i + 1:j]
        if j == n:
            return out
        if code != 0xFF:
            out.append(0)
        i = j


def crc32(data: bytes | bytearray | memoryview) -> int:
    """CRC-32/ISO-HDLC (IEEE 802.3), as zlib.crc32: check value 0xCBF43926 over b'123456789'."""
    return zlib.crc32(data) & 0xFFFFFFFF


# ----- payloads -------------------------------------------------------------


def _byte(value: object, name: str, low: int = 0, high: int = 255) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise EncodeError(f"{name} must be an integer {low}..{high}, not {value!r}")
    return value


def _flag(value: object, name: str) -> int:
    if not isinstance(value, bool):
        raise EncodeError(f"{name} must be true or false, not {value!r}")
    return int(value)


def _text(value: object, name: str, limit: int) -> bytes:
    if not isinstance(value, str):
        raise EncodeError(f"{name} must be text, not {value!r}")
    try:
        raw = value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise EncodeError(f"{name} is not valid Unicode text: {exc}") from None
    if len(raw) > limit:
        raise EncodeError(f"{name} is {len(raw)} bytes of UTF-8; at most {limit} fit")
    return bytes((len(raw),)) + raw


def _unprintable(text: str) -> int | None:
    """Index of the first character a one-line identity may not hold (SPEC.md §5.2): any character
    Python's str.isprintable() refuses (controls, format characters such as U+202E, separators other
    than the space, unassigned and private-use code points); None if there is none."""
    for i, ch in enumerate(text):
        if not ch.isprintable():
            return i
    return None


def _what(ch: str) -> str:
    return "control character" if unicodedata.category(ch) == "Cc" else "unprintable character"


def _identity(value: object, name: str) -> bytes:
    raw = _text(value, name, HELLO_STRING_MAX)
    if (i := _unprintable(str(value))) is not None:
        raise EncodeError(f"{name} holds the {_what(str(value)[i])} U+{ord(str(value)[i]):04X} at {i}; "
                          "a hello's strings are one line of printable text")
    return raw


def _read_identity(buf: bytes | bytearray, pos: int, end: int, name: str) -> tuple[str, int]:
    if pos < end and buf[pos] > HELLO_STRING_MAX:
        raise _PayloadError(f"{name} is {buf[pos]} bytes, at most {HELLO_STRING_MAX}")
    text, stop = _read_text(buf, pos, end, name)
    if (i := _unprintable(text)) is not None:
        raise _PayloadError(f"{name} holds the {_what(text[i])} U+{ord(text[i]):04X} at character {i}")
    return text, stop


def _counted(buf: bytes | bytearray, pos: int, end: int, name: str, unit: str = "bytes") -> tuple[bytes, int]:
    """A u8 count followed by that many bytes (a str, a card list): (the bytes, where they end)."""
    if pos >= end:
        raise _PayloadError(f"{name}: payload ends before its length byte")
    size = buf[pos]
    stop = pos + 1 + size
    if stop > end:
        raise _PayloadError(f"{name}: {size} {unit} announced, {end - pos - 1} left in the payload")
    return bytes(buf[pos + 1:stop]), stop


def _read_text(buf: bytes | bytearray, pos: int, end: int, name: str) -> tuple[str, int]:
    raw, stop = _counted(buf, pos, end, name)
    try:
        return raw.decode("utf-8"), stop
    except UnicodeDecodeError as exc:
        raise _PayloadError(f"{name} is not valid UTF-8: {exc.reason} at byte {exc.start}") from None


def _need(start: int, end: int, size: int, what: str) -> None:
    if end - start < size:
        raise _PayloadError(f"{what} payload is {end - start} bytes, needs {size}")


def _read_bool(value: int, name: str) -> bool:
    if value > 1:
        raise _PayloadError(f"{name} must be 0 or 1, not {value}")
    return value == 1


def _check_mode(mode: int) -> int:
    if mode not in (m.MODE_GAME, m.MODE_BURN):
        raise _PayloadError(f"mode {mode} is neither 0 (game) nor 1 (burn)")
    return mode


# Each message type: (pack fields -> payload bytes, unpack payload -> message).
# Unpackers read the fields they know and ignore trailing bytes (SPEC.md §8.1:
# a later minor version may append fields).


def _pack_hello(msg: m.Hello) -> bytes:
    return (
        _HELLO_FIXED.pack(_byte(msg.major, "major"), _byte(msg.minor, "minor"),
                          _byte(msg.boot, "boot", 0, 0xFFFFFFFF))
        + _identity(msg.vendor, "vendor")
        + _identity(msg.model, "model")
        + _identity(msg.serial, "serial")
        + _identity(msg.firmware, "firmware")
    )


def _unpack_hello(buf, start, end, seq):
    _need(start, end, 6 + 4, "hello")
    major, minor, boot = _HELLO_FIXED.unpack_from(buf, start)
    pos = start + 6
    vendor, pos = _read_identity(buf, pos, end, "vendor")
    model, pos = _read_identity(buf, pos, end, "model")
    serial, pos = _read_identity(buf, pos, end, "serial")
    firmware, pos = _read_identity(buf, pos, end, "firmware")
    return m.Hello(seq=seq, major=major, minor=minor, vendor=vendor, model=model, serial=serial,
                   firmware=firmware, boot=boot)


def _pack_card(msg: m.CardRead) -> bytes:
    return bytes((
        _byte(msg.rank, "rank", 1, 13),
        _byte(msg.suit, "suit", 0, 3),
        _byte(msg.confidence, "confidence"),
        _byte(msg.mode, "mode", 0, 1),
        _flag(msg.faced, "faced"),
    ))


def _unpack_card(buf, start, end, seq):
    if end - start < 5:
        raise _PayloadError(f"card payload is {end - start} bytes, needs 5")
    rank, suit, confidence, mode, flags = buf[start:start + 5]
    if not 1 <= rank <= 13:
        raise _PayloadError(f"card rank {rank} is not 1..13")
    if suit > 3:
        raise _PayloadError(f"card suit {suit} is not 0..3")
    if mode > 1:
        raise _PayloadError(f"mode {mode} is neither 0 (game) nor 1 (burn)")
    return m.CardRead(seq=seq, rank=rank, suit=suit, confidence=confidence, faced=bool(flags & 1), mode=mode)


def _pack_mode_and_code(mode: int, code: int, field: str) -> bytes:
    """A payload of two bytes: the mode (0 game, 1 burn), then a code 1..255 (0 is not defined)."""
    return bytes((_byte(mode, "mode", 0, 1), _byte(code, field, 1, 255)))


def _unpack_mode_and_code(buf, start, end, what: str, field: str) -> tuple[int, int]:
    _need(start, end, 2, what)
    mode, code = buf[start:start + 2]
    if not code:
        raise _PayloadError(f"{what} {field} 0 is not defined")
    return _check_mode(mode), code


def _pack_unreadable(msg: m.Unreadable) -> bytes:
    return _pack_mode_and_code(msg.mode, msg.reason, "reason")


def _unpack_unreadable(buf, start, end, seq):
    mode, reason = _unpack_mode_and_code(buf, start, end, "unreadable", "reason")
    return m.Unreadable(seq=seq, mode=mode, reason=reason)


def _pack_draw(msg: m.Draw) -> bytes:
    return _pack_mode_and_code(msg.mode, msg.trigger, "trigger")


def _unpack_draw(buf, start, end, seq):
    mode, trigger = _unpack_mode_and_code(buf, start, end, "draw", "trigger")
    return m.Draw(seq=seq, mode=mode, trigger=trigger)


def _pack_button(msg: m.Button) -> bytes:
    if msg.button not in m.BUTTON_NAMES:
        raise EncodeError(f"button must be one of {sorted(m.BUTTON_NAMES)}, not {msg.button!r}")
    return bytes((msg.button,))


def _unpack_button(buf, start, end, seq):
    _need(start, end, 1, "button")
    button = buf[start]
    if button not in m.BUTTON_NAMES:
        raise _PayloadError(f"button {button} is not defined")
    return m.Button(seq=seq, button=button)


def _pack_empty(msg: m.Message) -> bytes:
    return b""


def _unpacker_empty(cls):
    def unpack(buf, start, end, seq):
        return cls(seq=seq)

    return unpack


def _pack_tamper(msg: m.Tamper) -> bytes:
    return bytes((_byte(msg.source, "source", 1, 255), _flag(msg.active, "active")))


def _unpack_tamper(buf, start, end, seq):
    _need(start, end, 2, "tamper")
    source, active = buf[start:start + 2]
    if not source:
        raise _PayloadError("tamper source 0 is not defined")
    return m.Tamper(seq=seq, source=source, active=_read_bool(active, "active"))


def _pack_alarm(msg: m.Alarm) -> bytes:
    return _U16.pack(_byte(msg.code, "code", 0, 0xFFFF)) + _text(msg.text, "text", ALARM_TEXT_MAX)


def _unpack_alarm(buf, start, end, seq):
    _need(start, end, 3, "alarm")
    (code,) = _U16.unpack_from(buf, start)
    text, _ = _read_text(buf, start + 2, end, "text")
    return m.Alarm(seq=seq, code=code, text=text)


def _pack_heartbeat(msg: m.Heartbeat) -> bytes:
    return _HEARTBEAT.pack(_byte(msg.uptime_ms, "uptime_ms", 0, 0xFFFFFFFF), _byte(msg.unacked, "unacked", 0, UNACKED_MAX))


def _check_unacked(unacked: int) -> int:
    if unacked > UNACKED_MAX:
        raise _PayloadError(f"unacked {unacked} is above {UNACKED_MAX}")
    return unacked


def _unpack_heartbeat(buf, start, end, seq):
    _need(start, end, 6, "heartbeat")
    uptime, unacked = _HEARTBEAT.unpack_from(buf, start)
    _check_unacked(unacked)
    return m.Heartbeat(seq=seq, uptime_ms=uptime, unacked=unacked)


def _pack_status(msg: m.Status) -> bytes:
    flags = (_flag(msg.gate_locked, "gate_locked") | _flag(msg.shoe_present, "shoe_present") << 1
             | _flag(msg.lid_closed, "lid_closed") << 2)
    return _STATUS.pack(flags, _byte(msg.unacked, "unacked", 0, UNACKED_MAX),
                        _byte(msg.utc_ms, "utc_ms", 0, 0xFFFFFFFFFFFFFFFF))


def _unpack_status(buf, start, end, seq):
    _need(start, end, 11, "status")
    flags, unacked, utc_ms = _STATUS.unpack_from(buf, start)
    _check_unacked(unacked)
    return m.Status(seq=seq, gate_locked=bool(flags & 1), shoe_present=bool(flags & 2), lid_closed=bool(flags & 4),
                    unacked=unacked, utc_ms=utc_ms)


def _pack_ack(msg: m.Ack) -> bytes:
    return _U16.pack(_byte(msg.ack, "ack", 0, 0xFFFF))


def _unpack_ack(buf, start, end, seq):
    _need(start, end, 2, "ack")
    return m.Ack(seq=seq, ack=_U16.unpack_from(buf, start)[0])


def _pack_gate(msg: m.Gate) -> bytes:
    return bytes((_flag(msg.locked, "locked"),))


def _unpack_gate(buf, start, end, seq):
    _need(start, end, 1, "gate")
    return m.Gate(seq=seq, locked=_read_bool(buf[start], "locked"))


def _pack_set_time(msg: m.SetTime) -> bytes:
    return _U64.pack(_byte(msg.utc_ms, "utc_ms", 0, 0xFFFFFFFFFFFFFFFF))


def _unpack_set_time(buf, start, end, seq):
    _need(start, end, 8, "set_time")
    return m.SetTime(seq=seq, utc_ms=_U64.unpack_from(buf, start)[0])


# ----- shuffler messages (protocol 1.1) --------------------------------------


def _card_list(cards: object, name: str, low: int, high: int) -> bytes:
    if not isinstance(cards, tuple):
        raise EncodeError(f"{name} must be a list of cards, not {cards!r}")
    if not low <= len(cards) <= high:
        raise EncodeError(f"{name} holds {len(cards)} cards; {low} to {high} fit")
    try:
        return bytes((len(cards),)) + bytes(m.card_byte(card) for card in cards)
    except ValueError as exc:
        raise EncodeError(f"{name}: {exc}") from None


def _read_cards(buf, pos: int, end: int, name: str) -> tuple[tuple[str, ...], int]:
    raw, stop = _counted(buf, pos, end, name, "cards")
    try:
        return tuple(m.card_of_byte(b) for b in raw), stop
    except ValueError as exc:
        raise _PayloadError(f"{name}: {exc}") from None


_SHUFFLE_STARTED = struct.Struct("<IB")
_DECK_CHECK = struct.Struct("<IBHB")
_CHUNK = struct.Struct("<IH")
_COMPLETED = struct.Struct("<IIH32s")
_SHUFFLER_ERROR = struct.Struct("<IBBH")
_METERS = struct.Struct("<IIIII")
_DECK_LISTS = ("missing", "extra", "foreign", "face_reversed")


def _pack_shuffle_started(msg: m.ShuffleStarted) -> bytes:
    return _SHUFFLE_STARTED.pack(_byte(msg.shuffle, "shuffle", 0, 0xFFFFFFFF), _byte(msg.decks, "decks", 1, m.DECKS_MAX))


def _unpack_shuffle_started(buf, start, end, seq):
    _need(start, end, _SHUFFLE_STARTED.size, "shuffle_started")
    shuffle, decks = _SHUFFLE_STARTED.unpack_from(buf, start)
    if not 1 <= decks <= m.DECKS_MAX:
        raise _PayloadError(f"decks {decks} is not 1..{m.DECKS_MAX}")
    return m.ShuffleStarted(seq=seq, shuffle=shuffle, decks=decks)


def _pack_deck_check(msg: m.DeckCheck) -> bytes:
    out = _DECK_CHECK.pack(_byte(msg.shuffle, "shuffle", 0, 0xFFFFFFFF), _byte(msg.deck, "deck", 1, m.DECKS_MAX),
                           _byte(msg.present, "present", 0, 0xFFFF), _byte(msg.unreadable, "unreadable"))
    return out + b"".join(_card_list(getattr(msg, name), name, 0, m.DECK_LIST_MAX) for name in _DECK_LISTS)


def _unpack_deck_check(buf, start, end, seq):
    _need(start, end, _DECK_CHECK.size + len(_DECK_LISTS), "deck_check")
    shuffle, deck, present, unreadable = _DECK_CHECK.unpack_from(buf, start)
    if not 1 <= deck <= m.DECKS_MAX:
        raise _PayloadError(f"deck {deck} is not 1..{m.DECKS_MAX}")
    pos = start + _DECK_CHECK.size
    lists = {}
    for name in _DECK_LISTS:
        lists[name], pos = _read_cards(buf, pos, end, name)
        if len(lists[name]) > m.DECK_LIST_MAX:
            raise _PayloadError(f"{name}: {len(lists[name])} cards, at most {m.DECK_LIST_MAX}")
    return m.DeckCheck(seq=seq, shuffle=shuffle, deck=deck, present=present, unreadable=unreadable, **lists)


def _pack_order_chunk(msg: m.OrderChunk) -> bytes:
    head = _CHUNK.pack(_byte(msg.shuffle, "shuffle", 0, 0xFFFFFFFF), _byte(msg.position, "position", 0, 0xFFFF))
    cards = _card_list(msg.cards, "cards", 1, m.CHUNK_MAX)
    if msg.position + len(msg.cards) > 0x10000:
        raise EncodeError(f"cards {msg.position} .. {msg.position + len(msg.cards) - 1} run past position 65535")
    return head + cards


def _unpack_order_chunk(buf, start, end, seq):
    _need(start, end, _CHUNK.size + 2, "order_chunk")
    shuffle, position = _CHUNK.unpack_from(buf, start)
    cards, _ = _read_cards(buf, start + _CHUNK.size, end, "cards")
    if not cards:
        raise _PayloadError("an order chunk holds at least one card")
    if position + len(cards) > 0x10000:
        raise _PayloadError(f"cards {position} .. {position + len(cards) - 1} run past position 65535")
    return m.OrderChunk(seq=seq, shuffle=shuffle, position=position, cards=cards)


def _pack_shuffle_completed(msg: m.ShuffleCompleted) -> bytes:
    digest = msg.digest
    if not isinstance(digest, str) or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise EncodeError(f"digest must be 64 lower-case hex digits (SHA-256), not {digest!r}")
    return _COMPLETED.pack(_byte(msg.shuffle, "shuffle", 0, 0xFFFFFFFF), _byte(msg.shoe, "shoe", 0, 0xFFFFFFFF),
                           _byte(msg.cards, "cards", 0, 0xFFFF), bytes.fromhex(digest))


def _unpack_shuffle_completed(buf, start, end, seq):
    _need(start, end, _COMPLETED.size, "shuffle_completed")
    shuffle, shoe, cards, digest = _COMPLETED.unpack_from(buf, start)
    return m.ShuffleCompleted(seq=seq, shuffle=shuffle, shoe=shoe, cards=cards, digest=digest.hex())


def _pack_shuffler_error(msg: m.ShufflerError) -> bytes:
    return _SHUFFLER_ERROR.pack(
        _byte(msg.shuffle, "shuffle", 0, 0xFFFFFFFF), _byte(msg.fault, "fault", 1, 255), _flag(msg.active, "active"),
        _byte(msg.code, "code", 0, 0xFFFF)) + _text(msg.text, "text", m.SHUFFLER_TEXT_MAX)


def _unpack_shuffler_error(buf, start, end, seq):
    _need(start, end, _SHUFFLER_ERROR.size + 1, "shuffler_error")
    shuffle, fault, active, code = _SHUFFLER_ERROR.unpack_from(buf, start)
    if not fault:
        raise _PayloadError("shuffler fault 0 is not defined")
    text, _ = _read_text(buf, start + _SHUFFLER_ERROR.size, end, "text")
    if len(text.encode()) > m.SHUFFLER_TEXT_MAX:
        raise _PayloadError(f"text is {len(text.encode())} bytes, at most {m.SHUFFLER_TEXT_MAX}")
    return m.ShufflerError(seq=seq, shuffle=shuffle, fault=fault, active=_read_bool(active, "active"), code=code,
                           text=text)


_METER_FIELDS = ("shuffles", "cards", "jams", "door_opens", "recognition_faults")


def _pack_meters(msg: m.Meters) -> bytes:
    return _METERS.pack(*(_byte(getattr(msg, name), name, 0, 0xFFFFFFFF) for name in _METER_FIELDS))


def _unpack_meters(buf, start, end, seq):
    _need(start, end, _METERS.size, "meters")
    return m.Meters(seq=seq, **dict(zip(_METER_FIELDS, _METERS.unpack_from(buf, start), strict=True)))


# Each message class: (its payload's packer, its payload's unpacker).
_CODECS: dict[type[m.Message], tuple[Callable[..., bytes], Callable[..., m.Message]]] = {
    m.Hello: (_pack_hello, _unpack_hello),
    m.CardRead: (_pack_card, _unpack_card),
    m.Unreadable: (_pack_unreadable, _unpack_unreadable),
    m.Draw: (_pack_draw, _unpack_draw),
    m.Button: (_pack_button, _unpack_button),
    m.CutCard: (_pack_empty, _unpacker_empty(m.CutCard)),
    m.ShoeRemoved: (_pack_empty, _unpacker_empty(m.ShoeRemoved)),
    m.ShoeInserted: (_pack_empty, _unpacker_empty(m.ShoeInserted)),
    m.Tamper: (_pack_tamper, _unpack_tamper),
    m.Alarm: (_pack_alarm, _unpack_alarm),
    m.Heartbeat: (_pack_heartbeat, _unpack_heartbeat),
    m.Status: (_pack_status, _unpack_status),
    m.Ack: (_pack_ack, _unpack_ack),
    m.Gate: (_pack_gate, _unpack_gate),
    m.SetTime: (_pack_set_time, _unpack_set_time),
    m.StatusRequest: (_pack_empty, _unpacker_empty(m.StatusRequest)),
    m.ShuffleStarted: (_pack_shuffle_started, _unpack_shuffle_started),
    m.DeckCheck: (_pack_deck_check, _unpack_deck_check),
    m.OrderChunk: (_pack_order_chunk, _unpack_order_chunk),
    m.ShuffleCompleted: (_pack_shuffle_completed, _unpack_shuffle_completed),
    m.ShufflerError: (_pack_shuffler_error, _unpack_shuffler_error),
    m.Meters: (_pack_meters, _unpack_meters),
}
assert set(_CODECS) == set(m.MESSAGE_TYPES.values()), "every message type needs a wire layout"
_PACKERS = {cls: pack for cls, (pack, _) in _CODECS.items()}
_UNPACKERS = {cls.TYPE: unpack for cls, (_, unpack) in _CODECS.items()}


# ----- frames ---------------------------------------------------------------


def frame_content(msg: m.Message) -> bytes:
    """The frame before COBS: version, type, seq, payload and CRC. Raises EncodeError."""
    pack = _PACKERS.get(type(msg))
    if pack is None:
        raise EncodeError(f"{type(msg).__name__} is not a message of protocol {m.PROTOCOL_MAJOR}.{m.PROTOCOL_MINOR}")
    body = _HEADER.pack(FRAME_VERSION, msg.TYPE, _byte(msg.seq, "seq", 0, 0xFFFF)) + pack(msg)
    return body + _CRC.pack(zlib.crc32(body) & 0xFFFFFFFF)


def encode(msg: m.Message) -> bytes:
    """The whole frame of `msg` as sent on the wire, ending with the 0x00 delimiter. Raises EncodeError."""
    return cobs_encode(frame_content(msg)) + b"\x00"


def _check_content(content: bytearray | None) -> tuple[str, str] | None:
    """Why a candidate frame content is not a frame (kind, reason), or None when it is intact."""
    if content is None:
        return COBS, "COBS stuffing does not decode (a code byte runs past the frame)"
    size = len(content)
    if size < MIN_FRAME:
        return SHORT, f"frame of {size} bytes is shorter than the minimum of {MIN_FRAME}"
    if size > MAX_FRAME:
        return LONG, f"frame of {size} bytes is longer than the maximum of {MAX_FRAME}"
    (want,) = _CRC.unpack_from(content, size - 4)
    got = zlib.crc32(memoryview(content)[:-4]) & 0xFFFFFFFF
    if got != want:
        return CRC, f"CRC mismatch: frame says {want:08x}, content gives {got:08x}"
    return None


def _parse(content: bytearray) -> m.Message | tuple[str, str]:
    """An intact frame's message, or (kind, reason) when this version cannot use it."""
    version, type_id, seq = _HEADER.unpack_from(content, 0)
    if version != FRAME_VERSION:
        return VERSION, f"frame version {version} is not {FRAME_VERSION} (protocol major versions must match)"
    unpack = _UNPACKERS.get(type_id)
    if unpack is None:
        return TYPE, f"unknown message type 0x{type_id:02x} (seq {seq}): ignored"
    try:
        return unpack(content, HEADER_SIZE, len(content) - CRC_SIZE, seq)
    except _PayloadError as exc:
        name = m.MESSAGE_TYPES[type_id].NAME
        return PAYLOAD, f"invalid {name} payload (seq {seq}): {exc}"


# Frame starts whose CRC the garbage search checks per chunk. Random noise offers one in
# many thousands of chunks; only noise crafted to look like frame headers reaches the bound.
_MAX_TRIES = 32


def _frame_start(chunk: bytes) -> int | None:
    """Where an intact frame starts inside a chunk that is not one as a whole, or None.

    Garbage (or the tail of a truncated frame) can sit before a frame with no
    delimiter between them. The frame is then a suffix of the chunk that starts
    with this version's byte and a known type, whose COBS code bytes chain
    exactly to the chunk's end, and whose CRC matches. Two suffixes can pass only
    by a CRC coincidence, so the shortest is tried first: the frame is usually
    right at the end and found at once. The version and type test is cheap and
    spares the CRC on almost every wrong start.
    """
    n = len(chunk)
    low = max(1, n - MAX_ENCODED)
    reaches = bytearray(n + 1)
    reaches[n] = 1
    for i in range(n - 1, low - 1, -1):
        j = i + chunk[i]
        if j <= n and reaches[j]:
            reaches[i] = 1
    tries = 0
    for i in range(n - MIN_FRAME - 1, low - 1, -1):
        if reaches[i] and chunk[i] > 2 and chunk[i + 1] == FRAME_VERSION and chunk[i + 2] in _UNPACKERS:
            if _check_content(_unstuff(chunk[i:])) is None:
                return i
            tries += 1
            if tries == _MAX_TRIES:
                return None  # noise crafted to look like frame starts: give up rather than stall the link
    return None


def _next(buf: bytes | bytearray, pos: int, base: int) -> tuple[int, m.Message | Rejected | None]:
    """decode() at buf[pos:]; a Rejected's offset is base + its index in buf."""
    n = len(buf)
    start = pos
    while start < n and not buf[start]:
        start += 1  # extra delimiters are idle fill, not errors
    if start == n:
        return start - pos, None
    end = buf.find(0, start)
    if end < 0:
        pending = n - start
        if pending > 2 * MAX_WIRE:
            # No frame can start this far back: reject all but the last MAX_ENCODED bytes,
            # which may still be the start of an intact frame.
            cut = pending - MAX_ENCODED
            raw = bytes(buf[start:start + cut])
            return start - pos + cut, Rejected(
                base + start, cut, f"{cut} bytes without a frame delimiter (longest frame is {MAX_WIRE})", raw,
                OVERFLOW)
        return start - pos, None
    chunk = bytes(buf[start:end])
    fault: tuple[str, str] | None
    if end - start > MAX_ENCODED:
        content = None
        fault = LONG, f"{end - start} bytes between delimiters; the longest frame is {MAX_ENCODED}"
    else:
        content = _unstuff(chunk)
        fault = _check_content(content)
    if fault is None and content is not None:
        item = _parse(content)
        if isinstance(item, m.Message):
            return end + 1 - pos, item
        fault = item
    elif fault is not None and fault[0] != SHORT:
        inner = _frame_start(chunk)
        if inner is not None:
            return start - pos + inner, Rejected(
                base + start, inner, f"{inner} bytes before a frame, with no delimiter between ({fault[1]})",
                chunk[:inner], GARBAGE)
    assert fault is not None  # _check_content faults every content that is None
    return end + 1 - pos, Rejected(base + start, end + 1 - start, fault[1], bytes(buf[start:end + 1]), fault[0])


def decode(buf: bytes | bytearray | memoryview) -> tuple[int, m.Message | Rejected | None]:
    """Decode the item at the start of `buf`: (bytes consumed, item).

    `(0, None)`: no complete frame yet, call again with more bytes. `(n, None)`
    with n > 0: n bytes of idle delimiters were skipped and nothing follows yet.
    Otherwise the item is a Message or a Rejected stretch, and the caller drops
    the first n bytes. Never raises.
    """
    if not isinstance(buf, (bytes, bytearray)):
        try:
            buf = memoryview(buf).tobytes()
        except TypeError:
            return NEED_MORE  # not bytes at all: nothing to decode
    return _next(buf, 0, 0)


class Decoder:
    """Streaming decoder: feed bytes as they arrive, get messages and rejected stretches.

    Items come with their absolute offset in the stream. The unconsumed tail is
    kept for the next feed; it never grows beyond about twice MAX_WIRE bytes.
    """

    __slots__ = ("_buf", "_offset")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._offset = 0

    @property
    def offset(self) -> int:
        """Stream offset of the first byte not yet consumed (bytes fed minus bytes held)."""
        return self._offset

    @property
    def pending(self) -> int:
        """Bytes held back waiting for the rest of a frame."""
        return len(self._buf)

    @property
    def held(self) -> bytes:
        """The bytes held back (from `offset` on): at the end of a stream, a frame cut short."""
        return bytes(self._buf)

    def feed(self, data: bytes | bytearray | memoryview) -> list[tuple[int, m.Message | Rejected]]:
        buf = self._buf
        buf += data
        base = self._offset
        items: list[tuple[int, m.Message | Rejected]] = []
        pos = 0
        while True:
            used, item = _next(buf, pos, base)
            if not used:
                break
            if item is not None:
                if type(item) is Rejected:
                    items.append((item.offset, item))
                else:
                    # The frame starts after any idle delimiters skipped before it.
                    start = pos
                    while not buf[start]:
                        start += 1
                    items.append((base + start, item))
            pos += used
        if pos:
            del buf[:pos]
            self._offset = base + pos
        return items


# ----- JSON -----------------------------------------------------------------


def to_json(item: m.Message | Rejected) -> dict:
    """A message as {"type": NAME, "seq": .., fields...}; a Rejected as {"type": "rejected", ...}.

    A card also carries its notation ("card": "TD") for people reading logs;
    from_json checks it against rank and suit.
    """
    if isinstance(item, Rejected):
        return {"type": "rejected", "kind": item.kind, "reason": item.reason, "offset": item.offset,
                "length": item.length, "raw": item.raw.hex()}
    out: dict[str, Any] = {"type": item.NAME}
    for field in dataclasses.fields(item):
        value = getattr(item, field.name)
        out[field.name] = list(value) if isinstance(value, tuple) else value
    if isinstance(item, m.CardRead) and 1 <= item.rank <= 13 and 0 <= item.suit <= 3:
        out["card"] = m.card_text(item)
    return out


_FIELD_TYPES = {"int": int, "bool": bool, "str": str, "tuple[str, ...]": tuple}


def from_json(data: dict) -> m.Message:
    """The message a to_json dict describes; ValueError naming the problem otherwise."""
    if not isinstance(data, dict):
        # ValueError like every other bad input here: callers catch one exception for any bad JSON.
        raise ValueError(f"a message is a JSON object, not {type(data).__name__}")  # noqa: TRY004
    fields = dict(data)
    name = fields.pop("type", None)
    cls = m.MESSAGE_NAMES.get(name) if isinstance(name, str) else None
    if cls is None:
        raise ValueError(f"unknown message type {name!r}; known: {', '.join(sorted(m.MESSAGE_NAMES))}")
    card = fields.pop("card", None) if cls is m.CardRead else None
    known = {f.name: f for f in dataclasses.fields(cls)}
    extra = sorted(set(fields) - set(known))
    if extra:
        raise ValueError(f"{name} has no field {', '.join(extra)}; fields: {', '.join(known)}")
    for key, value in fields.items():
        want = _FIELD_TYPES[str(known[key].type)]  # the annotation's text (messages has postponed annotations)
        if want is tuple:
            if not isinstance(value, list) or not all(isinstance(card, str) for card in value):
                raise ValueError(f"{name}.{key} must be a list of cards, not {value!r}")
            fields[key] = tuple(value)
            continue
        if want is int and (not isinstance(value, int) or isinstance(value, bool)):
            raise ValueError(f"{name}.{key} must be an integer, not {value!r}")
        if want is not int and not isinstance(value, want):
            raise ValueError(f"{name}.{key} must be {'true or false' if want is bool else 'text'}, not {value!r}")
    msg = cls(**fields)
    try:
        frame_content(msg)
    except EncodeError as exc:
        raise ValueError(f"{name}: {exc}") from None
    if card is not None and isinstance(msg, m.CardRead) and card != m.card_text(msg):
        raise ValueError(f"card {card!r} does not match rank {msg.rank} and suit {msg.suit} ({m.card_text(msg)})")
    return msg
