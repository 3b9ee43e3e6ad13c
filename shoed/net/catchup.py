"""Snapshots and catch-up, served off the card loop: a thread of their own.

The requests and replies are those of `shoed.net.snapshot` (the Clone
pattern: `{"op": "snapshot"}` and `{"op": "events", "from", "to"}`). What
differs is where they are served: the daemon's loop reads the shoe and
acknowledges cards, and nothing a client sends may hold it up. So the
ROUTER sockets of these endpoints belong to one thread, which

- reads past events from the daemon's in-memory window (a deque the loop only
  appends to) or else from the journal files, a chunk at a time;
- gets snapshots from the loop through a `SnapshotBox`: a request raises a flag,
  the loop makes one snapshot when it has a turn to spare (at most one per
  `snapshot_interval`, however many clients ask) and hands it over whole; the
  thread never touches the controller;
- serves the clients in turn, one chunk each (a fair share: one client's long
  range cannot starve another's snapshot);
- keeps each client within limits: requests in flight (`max_in_flight`), the
  size of a range (`max_range`), the events of one reply (`chunk_events`),
  the replies sent ahead of its reading (below), the number of clients with
  work (`max_clients`), and the ranges read from the journal at once
  (`journal_readers`).

Flow control is by credit, as in the ZeroMQ guide's file transfer (chapter
7): a request may carry `"credit": N` (1 to MAX_CREDIT), and then the server
sends that client at most N replies, no reply even made, until the client
grants more with `{"op": "credit", "n": K}` (no reply; credit is the
client's, capped at MAX_CREDIT, and lasts while it has requests in flight).
A request without credit is held to the peer's pipe instead: a reply is sent
only when ZeroMQ's high-water mark (`peer_hwm` replies) leaves room. Either
way a client that stops reading holds at most a few replies and its request
waits, parked, costing nothing; after `stall_timeout` without credit or room
it is dropped.

Each endpoint has an audience (shoed.table.audience): what it serves passes through
that audience's view of events and snapshots.
"""

from __future__ import annotations

import collections
import logging
from typing import Annotated
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import msgspec
import zmq

from shoed.net import wire
from shoed.net.curve import DEFAULT_DOMAIN, ServerCurve, user_id
from shoed.net.limits import HANDSHAKE_TIMEOUT
from shoed.net.sockets import bind_server
from shoed.net.snapshot import (
    MAX_CREDIT,
    MAX_REQUEST_BYTES,
    EventsRequest,
    RequestError,
    SnapshotRequest,
    _error,
    decode_request,
)

log = logging.getLogger("shoed.net.catchup")


class CreditGrant(msgspec.Struct, tag_field="op", tag="credit", forbid_unknown_fields=True):
    """`{"op": "credit", "n": K}`: the client allows K more replies."""

    n: Annotated[int, msgspec.Meta(ge=1, le=MAX_CREDIT)]


_DECODER = msgspec.json.Decoder(SnapshotRequest | EventsRequest | CreditGrant)


@dataclass(frozen=True)
class Limits:
    max_in_flight: int = 2  # requests of one client being served; more are refused at once
    max_clients: int = 256  # clients with requests in flight, all endpoints together
    max_range: int = 10_000  # events per request
    chunk_events: int = 200  # events per reply
    peer_hwm: int = 4  # replies queued towards one client (its credit)
    stall_timeout: float = 30.0  # seconds a client may leave its replies unread before it is dropped
    journal_readers: int = 2  # ranges read from the journal files at once
    snapshot_interval: float = 0.05  # the loop makes at most one snapshot per this many seconds
    snapshot_wait: float = 5.0  # seconds a snapshot request waits for the loop before it is refused
    handshake_timeout: float = HANDSHAKE_TIMEOUT  # seconds a connection may take to finish its handshake


class SnapshotBox:
    """A snapshot handed from the daemon's loop to the catch-up thread, on request.

    The thread calls `ticket()` when a client asks, then `ready(ticket)` until
    a snapshot made after that moment is there. The loop calls `wanted(now,
    busy)` on each turn and, when true, `put(snapshot)`: making one takes the
    loop about a millisecond, so it is made on a turn that handled no card. The dict handed
    over is never changed again by anyone."""

    def __init__(self, interval: float, patience: float = 0.5) -> None:
        self.interval = interval
        self.patience = patience  # after this long a snapshot is made even on a busy turn of the loop
        self._lock = threading.Lock()
        self._asked_at = 0.0  # when the oldest unanswered ticket was given out
        self._asked = 0  # tickets given out
        self._made = 0  # the newest ticket the current snapshot answers
        self._snapshot: dict | None = None
        self._last_put = float("-inf")

    def ticket(self) -> int:
        with self._lock:
            if self._asked == self._made:
                self._asked_at = time.monotonic()
            self._asked += 1
            return self._asked

    def wanted(self, now: float, busy: bool = False) -> bool:
        """A snapshot is due: asked for, not made in the last `interval`, and the loop has a
        turn to spare (a turn that handled a card makes one only after `patience`)."""
        if self._asked <= self._made or now - self._last_put < self.interval:
            return False
        return not busy or now - self._asked_at >= self.patience

    def put(self, snapshot: dict, now: float) -> None:
        with self._lock:
            self._snapshot, self._made, self._last_put = snapshot, self._asked, now

    def ready(self, ticket: int) -> dict | None:
        with self._lock:
            return self._snapshot if self._made >= ticket else None


@dataclass
class Endpoint:
    """One ROUTER endpoint and what its audience sees."""

    endpoint: str
    event_view: Callable[[dict], dict]
    snapshot_view: Callable[[dict], dict]
    curve: ServerCurve | None = None
    curve_domain: str = DEFAULT_DOMAIN


_WAIT = object()  # a reply generator's "nothing to send yet"


class _Last(bytes):
    """A request's last reply: once it is sent, the request is no longer in flight."""


class _Client:
    __slots__ = ("key", "socket", "envelope", "endpoint", "user", "requests", "pending", "stalled_since", "credit")

    def __init__(self, key, socket, envelope, endpoint: Endpoint | None = None, user: str | None = None) -> None:
        self.key = key
        self.socket = socket
        self.envelope = envelope
        self.endpoint = endpoint
        self.user = user  # its CURVE key (Z85); None on an endpoint without keys
        self.requests: collections.deque = collections.deque()  # reply generators, in order
        self.pending: bytes | None = None  # a reply the peer's pipe had no room for
        self.stalled_since: float | None = None
        self.credit: int | None = None  # replies it allows ahead; None: held by the pipe's HWM alone


class CatchupServer:
    """The snapshot and catch-up endpoints, served by a thread of their own.

    `recent` is the daemon's in-memory window of events (appended to by the
    loop only); `journal_events(first, last)` yields older events from the
    journal files, in seq order. Sockets are bound in the constructor (so a
    bad endpoint fails the daemon's start) and then belong to the thread."""

    def __init__(self, context: zmq.Context, endpoints: list[Endpoint], table_id: str,
                 recent: collections.deque, journal_events: Callable[[int, int], Iterator[dict]],
                 limits: Limits = Limits()) -> None:
        self.table_id = wire.check_table_id(table_id)
        self.limits = limits
        self.recent = recent
        self.journal_events = journal_events
        self.box = SnapshotBox(limits.snapshot_interval)
        self.stats: collections.Counter[str] = collections.Counter()
        self._stop = threading.Event()
        self._sockets: list[tuple[zmq.Socket, Endpoint]] = []
        self._clients: dict = {}
        self._readers = 0
        try:
            for ep in endpoints:
                sock = bind_server(context, zmq.ROUTER, ep.endpoint, ep.curve, ep.curve_domain,
                                   maxmsgsize=MAX_REQUEST_BYTES, linger=0, router_mandatory=1,
                                   sndhwm=limits.peer_hwm, rcvhwm=64,
                                   handshake_ivl=round(limits.handshake_timeout * 1000))
                self._sockets.append((sock, ep))
        except Exception:
            for sock, _ in self._sockets:
                sock.close(0)
            raise
        self.endpoints = [str(sock.getsockopt_string(zmq.LAST_ENDPOINT)) for sock, _ in self._sockets]
        self._thread = threading.Thread(target=self._run, name="shoed-catchup", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)
        else:
            for sock, _ in self._sockets:
                sock.close(0)

    # ----- the thread -------------------------------------------------------
    def _run(self) -> None:
        poller = zmq.Poller()
        for sock, _ in self._sockets:
            poller.register(sock, zmq.POLLIN)
        by_socket = dict(self._sockets)
        try:
            while not self._stop.is_set():
                busy = any(c.requests for c in self._clients.values())
                # Parked or waiting replies are retried every few ms; else wait for requests.
                for sock, _ in poller.poll(2 if busy else 50):
                    self._receive(sock, by_socket[sock])
                self._serve_round()
        except Exception:  # noqa: BLE001 - the table deals on without catch-up; the log says why
            log.exception("the catch-up thread stopped")
        finally:
            for sock, _ in self._sockets:
                sock.close(0)

    def _receive(self, sock: zmq.Socket, ep: Endpoint) -> None:
        for _ in range(64):
            try:
                frames = sock.recv_multipart(flags=zmq.NOBLOCK, copy=False)
            except zmq.Again:
                return
            self.stats["requests"] += 1
            user = user_id(frames[-1]) if ep.curve is not None else None
            envelope, frame = wire.split_envelope([f.bytes for f in frames])
            body = frame if isinstance(frame, bytes) else None
            key = (id(sock), tuple(envelope))
            client = self._clients.get(key)
            try:
                request = decode_request(body, _DECODER)
            except RequestError as exc:
                request = exc
            if user is not None and not self._allowed(user, ep):
                # ZAP checks a key at the handshake only: a connection made before its key was removed
                # (and the allow-list reloaded) stays up, so every request is checked against the list in force.
                self.stats["refused_revoked"] += 1
                if client is not None:
                    self._drop(key, "revoked")
                if not isinstance(request, CreditGrant):  # a grant has no reply
                    self._send_now(sock, envelope, _error(wire.salvage_id(body or b""),
                                                          "this key is not on the allow-list (removed)"))
                continue
            if isinstance(request, CreditGrant):
                self.stats["credit_grants"] += 1
                if client is not None and client.credit is not None:
                    client.credit = min(MAX_CREDIT, client.credit + request.n)
                continue
            if client is None:
                if len(self._clients) >= self.limits.max_clients:
                    self.stats["refused_busy"] += 1
                    self._send_now(sock, envelope, _error(wire.salvage_id(body or b""), "busy: too many clients"))
                    continue
                client = self._clients[key] = _Client(key, sock, envelope, ep, user)
            if len(client.requests) >= self.limits.max_in_flight:
                self.stats["refused_in_flight"] += 1
                self._send_now(sock, envelope, _error(wire.salvage_id(body or b""),
                                                      f"busy: at most {self.limits.max_in_flight} requests in flight"))
                continue
            if isinstance(request, EventsRequest) and request.credit is not None:
                client.credit = min(MAX_CREDIT, (client.credit or 0) + request.credit)
            client.requests.append(self._replies(request, body, ep))

    def _serve_round(self) -> None:
        """One reply to each client with work: a fair share."""
        now = time.monotonic()
        for key, client in list(self._clients.items()):
            if client.user is not None and client.endpoint is not None and not self._allowed(client.user,
                                                                                              client.endpoint):
                self._drop(key, "revoked")  # its key was removed from the allow-list while it was served
                continue
            if client.pending is None and client.credit == 0:  # the client's turn waits for its credit
                if client.stalled_since is None:
                    client.stalled_since = now
            elif client.pending is None:
                while client.requests:
                    reply = next(client.requests[0], None)
                    if reply is None:
                        client.requests.popleft()
                        continue
                    if reply is not _WAIT:
                        client.pending = reply
                    break
            if client.pending is not None:
                sent = self._try_send(client, now)
                if sent is None:
                    self._drop(key, "gone")
                    continue
            if client.pending is None and not client.requests:
                del self._clients[key]
            elif client.stalled_since is not None and now - client.stalled_since > self.limits.stall_timeout:
                self._drop(key, "stalled")
            time.sleep(0)  # let the card loop have the interpreter between clients

    def _try_send(self, client: _Client, now: float) -> bool | None:
        try:
            client.socket.send_multipart([*client.envelope, client.pending], flags=zmq.NOBLOCK)
        except zmq.Again:  # the peer's pipe is full: no credit, the reply waits
            if client.stalled_since is None:
                client.stalled_since = now
            return False
        except zmq.ZMQError:  # EHOSTUNREACH: the peer is gone
            return None
        if isinstance(client.pending, _Last):  # its request is answered: a client may send the next at once
            client.requests.popleft()
        client.pending, client.stalled_since = None, None
        if client.credit is not None:
            client.credit -= 1
        self.stats["replies"] += 1
        return True

    @staticmethod
    def _allowed(user: str, ep: Endpoint) -> bool:
        return ep.curve is None or ep.curve.allowed(user, ep.curve_domain)

    def _drop(self, key, why: str) -> None:
        client = self._clients.pop(key)
        for gen in client.requests:
            gen.close()
        self.stats[f"dropped_{why}"] += 1

    def _send_now(self, sock: zmq.Socket, envelope: list, reply: dict) -> None:
        try:
            sock.send_multipart([*envelope, wire.encode(reply)], flags=zmq.NOBLOCK)
        except zmq.ZMQError:
            self.stats["send_failures"] += 1

    # ----- replies ------------------------------------------------------------
    def _replies(self, request, body: bytes | None, ep: Endpoint) -> Iterator:
        """The encoded replies to one request (decoded, or the RequestError that decoding
        raised), one at a time (_WAIT: not yet)."""
        request_id = None
        try:
            if isinstance(request, RequestError):
                request_id = wire.salvage_id(body) if body is not None else None  # to match the error reply
                raise request
            request_id = request.id
            if isinstance(request, EventsRequest):
                yield from self._event_replies(request, ep)
            else:
                yield from self._snapshot_replies(request_id, ep)
        except RequestError as exc:
            self.stats["errors"] += 1
            yield _Last(wire.encode(_error(request_id, str(exc))))

    def _snapshot_replies(self, request_id, ep: Endpoint) -> Iterator:
        ticket = self.box.ticket()
        deadline = time.monotonic() + self.limits.snapshot_wait
        while (state := self.box.ready(ticket)) is None:
            if time.monotonic() > deadline:
                raise RequestError("snapshot unavailable: the table did not hand one over in time")
            yield _WAIT
        seq = state.get("seq") if isinstance(state, dict) else None
        if not isinstance(seq, int) or isinstance(seq, bool):  # a snapshot ends with its seq, or it is none
            log.error("the snapshot handed over carries no int seq: %r", type(seq))
            raise RequestError("snapshot unavailable: the state carries no seq")
        reply = {"ok": True, "op": "snapshot", "table": self.table_id, "seq": seq, "state": ep.snapshot_view(state)}
        if request_id is not None:
            reply["id"] = request_id
        yield _Last(wire.encode(reply))

    def _event_replies(self, request: EventsRequest, ep: Endpoint) -> Iterator:
        first, last = request.first, request.last
        if first < 0 or last < first:
            raise RequestError(f"bad range {first}..{last}: want 0 <= from <= to")
        if last - first + 1 > self.limits.max_range:
            raise RequestError(f"range {first}..{last} too large: at most {self.limits.max_range} events per request")
        base: dict = {"ok": True, "op": "events"}
        if request.id is not None:
            base["id"] = request.id
        count = 0
        for chunk in self._chunks(first, last):
            if chunk is _WAIT:
                yield _WAIT
                continue
            count += len(chunk)
            yield wire.encode({**base, "events": [ep.event_view(e) for e in chunk]})
        self.stats["events_sent"] += count
        yield _Last(wire.encode({**base, "done": True, "count": count}))

    def _chunks(self, first: int, last: int) -> Iterator:
        size = self.limits.chunk_events
        window = list(self.recent)  # the loop only appends; a copy of the references is consistent
        if window and window[0]["seq"] <= first:
            picked = [e for e in window if first <= e["seq"] <= last]
            for i in range(0, len(picked), size):
                yield picked[i:i + size]
            return
        while self._readers >= self.limits.journal_readers:
            yield _WAIT
        self._readers += 1
        try:
            chunk: list = []
            previous = first - 1
            try:
                for event in self.journal_events(first, last):
                    seq = event.get("seq")
                    if not isinstance(seq, int) or not previous < seq <= last:
                        raise RequestError(f"events {first}..{last} unavailable: journal returned seq {seq!r} out of order")
                    previous = seq
                    chunk.append(event)
                    if len(chunk) >= size:
                        yield chunk
                        chunk = []
            except RequestError:
                raise
            except Exception as exc:  # noqa: BLE001 - a journal that cannot be read now is this request's error
                raise RequestError(f"events {first}..{last} unavailable: {exc}") from None
            if chunk:
                yield chunk
        finally:
            self._readers -= 1
