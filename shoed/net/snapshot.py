"""The snapshot endpoint: the current table state and past events, on request.

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

`id` is optional and echoed, so a client can match replies to requests.

The daemon supplies two callbacks and keeps ownership of the socket:
`snapshot()` returns the state as a dict whose `seq` is the last event already
reflected in it (it must include every event published so far), and
`events(a, b)` yields the journal's events with a <= seq <= b in order (it may
raise LookupError when they are no longer kept). Both are called from
`handle()`, on the caller's thread: this class starts no thread. The daemon
serves these same requests from a thread of its own, with per-client limits
(shoed.net.catchup).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Annotated, Self

import msgspec
import zmq

from shoed.net import wire
from shoed.net.curve import DEFAULT_DOMAIN, ServerCurve

DEFAULT_ENDPOINT = "tcp://127.0.0.1:5557"
MAX_REQUEST_BYTES = 64 * 1024
CHUNK_EVENTS = 200
MAX_RANGE = 10_000
MAX_CREDIT = 64  # replies a catch-up client may allow ahead (shoed.net.catchup)

log = logging.getLogger("shoed.net.snapshot")

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
        return decoder.decode(body)
    except msgspec.ValidationError as exc:
        raise RequestError(f"bad request: {exc}") from None
    except msgspec.DecodeError as exc:
        raise RequestError(f"request is not JSON: {exc}") from None
    except (RecursionError, UnicodeDecodeError) as exc:  # msgspec lets these out
        raise RequestError(f"request is not JSON: {type(exc).__name__}") from None


class SnapshotServer:
    """A ROUTER socket serving snapshots and event ranges for one table."""

    def __init__(
        self,
        context: zmq.Context,
        endpoint: str,
        table_id: str,
        snapshot: Callable[[], dict],
        events: Callable[[int, int], Iterable[dict]],
        curve: ServerCurve | None = None,
        *,
        curve_domain: str = DEFAULT_DOMAIN,
        chunk_events: int = CHUNK_EVENTS,
        max_range: int = MAX_RANGE,
        max_per_handle: int = 16,
    ) -> None:
        self.table_id = wire.check_table_id(table_id)
        self._snapshot = snapshot
        self._events = events
        self.chunk_events = chunk_events
        self.max_range = max_range
        self.max_per_handle = max_per_handle
        self.stats = {"requests": 0, "errors": 0, "events_sent": 0, "send_failures": 0}
        sock = context.socket(zmq.ROUTER)
        try:
            # A hard cap far above any valid request: ZeroMQ drops the
            # connection of a peer that sends more, before it reaches memory.
            sock.maxmsgsize = MAX_REQUEST_BYTES
            sock.linger = 0
            # Report a vanished or full peer instead of dropping silently, so
            # a range reply is abandoned rather than sent with holes.
            sock.router_mandatory = 1
            sock.sndhwm = max(1000, 4 * (max_range // max(1, chunk_events) + 2))
            if curve is not None:
                curve.apply(sock, curve_domain)
            sock.bind(endpoint)
        except Exception:
            sock.close(0)
            raise
        self.socket = sock
        self.endpoint = sock.last_endpoint.decode()

    def sockets(self) -> list[zmq.Socket]:
        return [self.socket]

    def handle(self, socket: zmq.Socket | None = None) -> int:
        """Serve the requests waiting on the socket (at most `max_per_handle`).

        Never blocks and never raises for a bad request; returns how many
        requests were served.
        """
        served = 0
        while served < self.max_per_handle:
            try:
                frames = self.socket.recv_multipart(flags=zmq.NOBLOCK)
            except zmq.Again:
                break
            served += 1
            self.stats["requests"] += 1
            envelope, body = wire.split_envelope(frames)
            self._serve(envelope, body)
        return served

    def _serve(self, envelope: list, body: bytes | None) -> None:
        request_id: RequestId = None
        try:
            try:
                request = decode_request(body)
            except RequestError:
                request_id = wire.salvage_id(body) if body is not None else None  # to match the error reply
                raise
            request_id = request.id
            if isinstance(request, SnapshotRequest):
                self._send(envelope, self._snapshot_reply(request_id))
            else:
                self._serve_events(envelope, request)
        except RequestError as exc:
            self.stats["errors"] += 1
            self._send(envelope, _error(request_id, str(exc)))

    def _snapshot_reply(self, request_id: RequestId) -> dict:
        try:
            state = self._snapshot()
        except Exception as exc:
            log.exception("snapshot callback failed")
            raise RequestError(f"snapshot unavailable: {exc}") from None
        seq = state.get("seq") if isinstance(state, dict) else None
        if not isinstance(seq, int) or isinstance(seq, bool):
            log.error("snapshot callback returned no int seq: %r", type(state))
            raise RequestError("snapshot unavailable: the state carries no seq")
        reply = {"ok": True, "op": "snapshot", "table": self.table_id, "seq": seq, "state": state}
        if request_id is not None:
            reply["id"] = request_id
        return reply

    def _serve_events(self, envelope: list, request: EventsRequest) -> None:
        first, last = request.first, request.last
        if first < 0 or last < first:
            raise RequestError(f"bad range {first}..{last}: want 0 <= from <= to")
        if last - first + 1 > self.max_range:
            raise RequestError(f"range {first}..{last} too large: at most {self.max_range} events per request")
        base: dict = {"ok": True, "op": "events"}
        if request.id is not None:
            base["id"] = request.id
        chunk: list[dict] = []
        count = 0
        previous = first - 1
        try:
            for event in self._events(first, last):
                seq = event.get("seq") if isinstance(event, dict) else None
                if not isinstance(seq, int) or isinstance(seq, bool) or not previous < seq <= last:
                    log.error("events callback gave seq %r after %d for range %d..%d", seq, previous, first, last)
                    raise RequestError(f"events {first}..{last} unavailable: journal returned seq {seq!r} out of order")
                previous = seq
                chunk.append(event)
                if len(chunk) >= self.chunk_events:
                    if not self._send(envelope, {**base, "events": chunk}):
                        return
                    count += len(chunk)
                    chunk = []
        except RequestError:
            raise
        except LookupError as exc:
            raise RequestError(f"events {first}..{last} unavailable: {exc}") from None
        except Exception as exc:
            log.exception("events callback failed")
            raise RequestError(f"events {first}..{last} unavailable: {exc}") from None
        if chunk:
            if not self._send(envelope, {**base, "events": chunk}):
                return
            count += len(chunk)
        self.stats["events_sent"] += count
        self._send(envelope, {**base, "done": True, "count": count})

    def _send(self, envelope: list, reply: dict) -> bool:
        try:
            payload = wire.encode(reply)
        except TypeError as exc:
            log.error("reply not JSON-serialisable: %s", exc)
            payload = wire.encode(_error(reply.get("id"), "internal error: state is not JSON-serialisable"))
        try:
            self.socket.send_multipart([*envelope, payload], flags=zmq.NOBLOCK)
        except zmq.ZMQError as exc:  # peer gone (EHOSTUNREACH) or its queue full (EAGAIN)
            self.stats["send_failures"] += 1
            log.info("snapshot reply not delivered: %s", exc)
            return False
        return True

    def close(self) -> None:
        self.socket.close(0)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _error(request_id: RequestId, message: str) -> dict:
    reply: dict = {"ok": False, "error": message}
    if request_id is not None:
        reply["id"] = request_id
    return reply

