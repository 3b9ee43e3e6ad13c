"""What travels on shoed's sockets: topics, event checks and JSON encoding.

An event is a JSON object with at least `table` (the table id), `seq` (the
table's strictly increasing sequence number, owned by the daemon) and `kind`.
On the PUB socket each event is a two-frame message `[topic, json]` where the
topic is `<table>.<group>` and the group is the first word of the kind
(`card.dealt` and `card_dealt` are both in group `card`), so a subscriber can
filter by prefix: `t1.` for everything at table t1, `t1.card` for cards only.

Pure functions: no sockets, no clock.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

import msgspec

HEARTBEAT = "heartbeat"
SNAPSHOT = "snapshot"

# Kinds the transport itself emits or delivers; the daemon may not publish them.
RESERVED_KINDS = frozenset({HEARTBEAT, SNAPSHOT})

# Groups the daemon's events fall into (documentation and display filters; any
# group is carried, these are the ones the project uses).
GROUPS = ("card", "coup", "shoe", "shuffle", "device", "misdeal", "alarm", "table", "withheld", HEARTBEAT)

# A table id is one topic word: no dot (the topic separator), no spaces.
_TABLE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_KIND_RE = re.compile(r"[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*")

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder()


class WireError(ValueError):
    """An event or message that does not follow the wire format."""


def check_table_id(table: str) -> str:
    if not isinstance(table, str) or not _TABLE_RE.fullmatch(table):
        raise WireError(f"table id must be 1-64 letters, digits, '_' or '-' (no dot), not {table!r}")
    return table


def group_of(kind: object) -> str:
    """The topic group of an event kind: its first word (`coup.result` -> `coup`)."""
    if not isinstance(kind, str):
        raise WireError(f"event kind must be a string, not {kind!r}")
    return _group_of(kind)


@lru_cache(maxsize=1024)  # a table has a few dozen kinds; spare the regex per event
def _group_of(kind: str) -> str:
    if not _KIND_RE.fullmatch(kind):
        raise WireError(f"event kind must be lower-case words joined by '.', '_' or '-', not {kind!r}")
    return re.split(r"[._-]", kind, maxsplit=1)[0]


@lru_cache(maxsize=1024)
def _topic(table: str, group: str) -> str:
    return f"{table}.{group}"


def topic_for(table: str, kind: object) -> str:
    return _topic(table, group_of(kind))


def check_event(event: object, table: str) -> int:
    """Check an event the daemon wants published; return its seq.

    A failure here is a bug in the caller, so it raises rather than dropping.
    """
    if not isinstance(event, dict):
        raise WireError(f"an event is a dict, not {type(event).__name__}")
    if event.get("table") != table:
        raise WireError(f"event for table {event.get('table')!r} given to the publisher of table {table!r}")
    seq = event.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        raise WireError(f"event seq must be a non-negative int, not {seq!r}")
    group_of(event.get("kind"))
    return seq


def encode(obj: object) -> bytes:
    """Compact JSON. Raises TypeError for values JSON cannot carry."""
    return _encoder.encode(obj)


def decode(raw: bytes | memoryview) -> object:
    """JSON to Python values; raises WireError for anything that is not JSON."""
    try:
        return _decoder.decode(raw)
    except msgspec.DecodeError as exc:
        raise WireError(f"not JSON: {exc}") from None
    except (RecursionError, UnicodeDecodeError) as exc:  # msgspec lets these out: deep nesting, bad UTF-8 in a key
        raise WireError(f"not JSON: {type(exc).__name__}") from None


def decode_event(topic: bytes, payload: bytes, table: str) -> dict:
    """A message taken off a SUB socket, checked against its topic.

    Raises WireError for anything malformed; a subscriber drops such a message
    and counts it rather than guessing what it meant.
    """
    event = decode(payload)
    if not isinstance(event, dict):
        raise WireError("event is not a JSON object")
    seq = event.get("seq")
    seq_optional = event.get("kind") == HEARTBEAT and seq is None  # a heartbeat before any event
    if not seq_optional and (not isinstance(seq, int) or isinstance(seq, bool) or seq < 0):
        raise WireError(f"event seq must be a non-negative int, not {seq!r}")
    if event.get("table") != table:
        raise WireError(f"event for table {event.get('table')!r}, expected {table!r}")
    expected = topic_for(table, event.get("kind"))
    if topic != expected.encode():
        raise WireError(f"topic {topic!r} does not match event kind (expected {expected!r})")
    return event


def one_line(text: str) -> str:
    """An error as one line: a character that breaks or hides a line (`\\n`, `\\u2028`, NUL, ESC) is written
    as its escape. The parsers' messages quote the request's own text (`unknown field `x\\ny``)."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def split_envelope(frames: list) -> tuple[list, object]:
    """(routing envelope, body frame) of a message read from a ROUTER socket.

    A DEALER peer's message is [identity, body]; a REQ peer's is
    [identity, b"", body]. Anything else keeps its envelope but has no body.
    """
    if len(frames) == 2:
        return frames[:1], frames[1]
    if len(frames) == 3 and len(frames[1]) == 0:
        return frames[:2], frames[2]
    return frames[:1], None


def salvage_id(body: bytes) -> str | int | None:
    """The `id` of a request that failed validation, so its error reply can be matched."""
    try:
        obj = decode(body)
    except WireError:
        return None
    rid = obj.get("id") if isinstance(obj, dict) else None
    if isinstance(rid, bool) or not isinstance(rid, str | int):
        return None
    return rid if not isinstance(rid, str) or len(rid) <= 128 else None


class _Duplicate(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    seen: dict = {}
    for key, value in pairs:
        if key in seen:
            raise _Duplicate(key)
        seen[key] = value
    return seen


def duplicate_key(body: bytes) -> str | None:
    """A key given twice in one object of a request (`{"cmd":"status","cmd":"unlock"}`): msgspec keeps
    the last, another reader of the same bytes may keep the first, so such a request is ambiguous and
    is refused on every endpoint. None if there is none."""
    try:
        json.loads(body, object_pairs_hook=_no_duplicates)
    except _Duplicate as dup:
        return str(dup.args[0])
    except (ValueError, RecursionError):  # what msgspec took, json may not (nesting): not a duplicate
        return None
    return None
