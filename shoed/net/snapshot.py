"""The snapshot endpoint's requests and replies: the current table state and past events, on request.

A subscriber that joins late, or lost messages, asks here (the Clone pattern,
table-game-standards item 17). Requests and replies are JSON objects on a
ROUTER socket; a request is one frame (after the envelope a REQ or DEALER adds):

    {"op": "snapshot", "id": ...}
        -> {"ok": true, "op": "snapshot", "id": ..., "table": T, "seq": N, "state": {...}}
    {"op": "events", "from": A, "to": B, "id": ...}
        -> {"ok": true, "op": "events", "id": ..., "events": [...]}      (zero or more chunks)
        -> {"ok": true, "op": "events", "id": ..., "done": true, "count": K}
    anything wrong
        -> {"ok": false, "id": ..., "error": "..."}

`id` is optional and echoed, so a client can match replies to requests. The
daemon serves these requests from a thread of its own, with per-client limits
(shoed.net.catchup); this module decodes them.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from shoed.net.wire import duplicate_key, one_line

MAX_REQUEST_BYTES = 64 * 1024
MAX_CREDIT = 64  # replies a catch-up client may allow ahead (shoed.net.catchup)

# Echoed back verbatim, so bounded.
RequestId = Annotated[str, msgspec.Meta(max_length=128)] | int | None


class SnapshotRequest(msgspec.Struct, tag_field="op", tag="snapshot", forbid_unknown_fields=True):
    id: RequestId = None


class EventsRequest(msgspec.Struct, tag_field="op", tag="events", forbid_unknown_fields=True, rename={"first": "from", "last": "to"}):
    first: int
    last: int
    id: RequestId = None
    # Replies the client allows the server to send before it grants more (shoed.net.catchup's credit).
    credit: Annotated[int, msgspec.Meta(ge=1, le=MAX_CREDIT)] | None = None


_request_decoder = msgspec.json.Decoder(SnapshotRequest | EventsRequest)


class RequestError(Exception):
    """A request this endpoint answers with `{"ok": false, "error": ...}`."""


def decode_request(body: bytes | None, decoder: msgspec.json.Decoder = _request_decoder):
    """The request in a body frame (one of `decoder`'s types: by default a SnapshotRequest or an
    EventsRequest); RequestError with a one-line reason if it is not one."""
    if body is None:
        raise RequestError("a request is one JSON frame")
    try:
        request = decoder.decode(body)
    except msgspec.ValidationError as exc:
        raise RequestError(f"bad request: {exc}") from None
    except msgspec.DecodeError as exc:
        raise RequestError(f"request is not JSON: {exc}") from None
    except (RecursionError, UnicodeDecodeError) as exc:  # msgspec lets these out
        raise RequestError(f"request is not JSON: {type(exc).__name__}") from None
    duplicate = duplicate_key(body)
    if duplicate is not None:  # which one counts is the parser's choice: the request is ambiguous
        raise RequestError(f"bad request: the key {duplicate!r} is given twice in one object")
    return request


def _error(request_id: RequestId, message: str) -> dict:
    """An error reply; its text one line (it may quote the request's own bytes)."""
    reply: dict = {"ok": False, "error": one_line(message)}
    if request_id is not None:
        reply["id"] = request_id
    return reply

