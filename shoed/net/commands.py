"""The command endpoint: the dealer console and the pit tell the daemon what to do.

A ROUTER socket with CURVE security; every client must be on the allow-list
(`shoed.net.curve.ServerCurve`) or its handshake fails and it gets nothing
back. A request is one JSON object:

    {"cmd": NAME, "args": {...}, "id": optional string or int}

Here the request is checked for shape only: well-formed JSON, a known command,
arguments of the right names and types (the schema's command table,
`shoed.table.events.COMMANDS`). The controller checks meaning (is there a coup to confirm? is that the card just dealt?).
Each accepted request reaches the daemon's handler as a `Command`, which
carries the public key and allow-list name of the client that sent it, so the
journal records who did what. Replies:

    {"ok": true, "id": ..., "cmd": NAME, ...fields the daemon adds}
    {"ok": false, "id": ..., "error": "..."}

A request over 4 KiB is refused before it is parsed (the longest valid one,
a 200-character reason and a 128-character id written as JSON escapes, is
3,985 bytes), so a malformed body costs microseconds. A single frame over
1 MiB makes ZeroMQ drop the sender's connection before it is read (no reply).
That bounds a frame, not a message: libzmq holds every frame of a multipart
message until its last one has come, so an allowed key can still make the
daemon hold a large multipart message for a moment (docs/network.md, Memory).

A key of a read-only role (`shoed.net.curve.READ_ONLY_ROLES`: a display
board's) may ask only for read-only commands (`status`); anything else is
refused here, before the table sees it.

A request with an `id` that its key sent before (the last 64 ids of each of
the last 256 keys) is not run again: it gets the first request's reply again,
with `"repeat": true` (a console that retries after a lost reply must not
deal a second card). The same id with another request is refused.

Single-threaded: the daemon polls `sockets()` and calls `handle(socket)`; the
handler runs on the daemon's thread. `send_command()` is the client side.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

import msgspec
import zmq

from shoed.table.events import COMMANDS, CommandRejected
from shoed.net import wire
from shoed.net.sockets import Closing, bind_server
from shoed.net.curve import DEFAULT_DOMAIN, READ_ONLY_ROLES, ClientCurve, ServerCurve, user_id
from shoed.net.limits import HANDSHAKE_TIMEOUT, MAX_REPLY_BYTES, RateLimiter

DEFAULT_ENDPOINT = "tcp://127.0.0.1:5558"
# Larger requests are refused before any parsing: the longest valid request (`void` with a reason of
# 200 characters outside the BMP and an id of 128, each written as \\u escapes) is 3,985 bytes.
MAX_REQUEST_BYTES = 4 * 1024
# Above this ZeroMQ itself drops the connection (per frame); between the two the sender
# gets an error reply.
HARD_LIMIT_BYTES = 1024 * 1024
# Replies kept for requests sent again with the same id: per key, and how many keys.
REPEAT_IDS_PER_KEY = 64
REPEAT_KEYS = 256

log = logging.getLogger("shoed.net.commands")

RequestId = Annotated[str, msgspec.Meta(max_length=128)] | int | None


class Request(msgspec.Struct, forbid_unknown_fields=True):
    cmd: Annotated[str, msgspec.Meta(max_length=64)]
    args: dict = {}
    id: RequestId = None


_request_decoder = msgspec.json.Decoder(Request)


@dataclass(frozen=True)
class Command:
    """An accepted request, as the daemon's handler receives it."""

    name: str
    args: dict  # validated, only the fields the client sent
    id: str | int | None
    client_key: str | None  # the sender's CURVE public key, Z85 (40 characters); None only on an insecure endpoint
    client_name: str | None  # its allow-list file stem, e.g. "pit-boss-2"
    peer_address: str | None  # the peer's IP address, for the record
    client_role: str | None = None  # its role on the allow-list (dealer, pit, surveillance); None: no key

    def to_json(self) -> dict:
        out = {"cmd": self.name, "args": self.args}
        for key in ("id", "client_key", "client_name", "peer_address", "client_role"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


class CommandTimeout(TimeoutError):
    """No reply from the command endpoint within the timeout (down, or this key is not allowed)."""


class CurveMismatch(CommandTimeout):
    """The command endpoint and this client disagree on CURVE (one has keys, the other none): their
    handshake fails at once and no reply can ever come, so this is said without waiting out the timeout."""


def parse_request(body: bytes) -> tuple[str, dict, str | int | None]:
    """(command, validated args, id) of a request body; CommandRejected if it is not one.

    Pure: the shape checks without any socket, so they can be tested case by case.
    """
    if len(body) > MAX_REQUEST_BYTES:
        raise CommandRejected(f"request too large: {len(body)} bytes, at most {MAX_REQUEST_BYTES}")
    try:
        request = _request_decoder.decode(body)
    except msgspec.ValidationError as exc:
        raise CommandRejected(f"bad request: {exc}") from None
    except msgspec.DecodeError as exc:
        raise CommandRejected(f"request is not JSON: {exc}") from None
    except (RecursionError, UnicodeDecodeError) as exc:  # msgspec lets these out: nesting, bad UTF-8 in a key
        raise CommandRejected(f"request is not JSON: {type(exc).__name__}") from None
    spec = COMMANDS.get(request.cmd)
    if spec is None:
        raise CommandRejected(f"unknown command {request.cmd!r}; known: {', '.join(sorted(COMMANDS))}")
    try:
        args = msgspec.convert(request.args, spec.args)
    except msgspec.ValidationError as exc:
        raise CommandRejected(f"bad arguments for {request.cmd}: {exc}") from None
    # Last: the duplicate-key pass reads the body again in pure Python (the slowest check, though bounded
    # by MAX_REQUEST_BYTES), so only a request that is otherwise good pays it.
    duplicate = wire.duplicate_key(body)
    if duplicate is not None:  # which one counts is the parser's choice: the request is ambiguous
        raise CommandRejected(f"bad request: the key {duplicate!r} is given twice in one object")
    return request.cmd, msgspec.to_builtins(args), request.id


class RepeatCache:
    """The replies to the last requests of each key that carried an id: `REPEAT_IDS_PER_KEY` ids for
    each of the `REPEAT_KEYS` keys heard from last (the oldest dropped first), so a request sent again
    (same key, same id) gets its first reply instead of running twice."""

    def __init__(self, per_key: int = REPEAT_IDS_PER_KEY, keys: int = REPEAT_KEYS) -> None:
        self.per_key = per_key
        self.keys = keys
        self._replies: OrderedDict[str, OrderedDict[str | int, tuple[bytes, dict]]] = OrderedDict()

    @staticmethod
    def _id(request_id: str | int) -> str | int:
        return request_id if isinstance(request_id, str) else f"\0int:{request_id}"  # 7 and "7" are two ids

    def get(self, key: str, request_id: str | int, digest: bytes) -> dict | None:
        """The reply given to this key's earlier request with this id, marked `repeat`; CommandRejected
        when that id came with another request."""
        seen = self._replies.get(key)
        if seen is None:
            return None
        self._replies.move_to_end(key)
        kept = seen.get(self._id(request_id))
        if kept is None:
            return None
        first, reply = kept
        if first != digest:
            raise CommandRejected(f"the id {request_id!r} was sent before with another request from this key; "
                                  "nothing was done (give each request an id of its own)")
        return {**reply, "repeat": True}

    def put(self, key: str, request_id: str | int, digest: bytes, reply: dict) -> None:
        seen = self._replies.get(key)
        if seen is None:
            seen = self._replies[key] = OrderedDict()
            while len(self._replies) > self.keys:
                self._replies.popitem(last=False)
        self._replies.move_to_end(key)
        seen[self._id(request_id)] = (digest, reply)
        while len(seen) > self.per_key:
            seen.popitem(last=False)

    def __len__(self) -> int:
        return sum(len(seen) for seen in self._replies.values())


class CommandServer(Closing):
    """The CURVE-secured ROUTER socket that hands commands to the daemon.

    `handler(command)` returns the reply's fields as a dict (`{"ok": False,
    "error": ...}` to refuse; "ok" is true if absent) or None for a bare
    `{"ok": true}`, or raises CommandRejected. The reply also carries the
    request's `id` and `cmd`.

    `curve=None` is refused unless `insecure=True` (a lab bench with no keys):
    then commands carry no client key.
    """

    def __init__(
        self,
        context: zmq.Context,
        endpoint: str,
        handler: Callable[[Command], dict | None],
        curve: ServerCurve | None = None,
        *,
        insecure: bool = False,
        curve_domain: str = DEFAULT_DOMAIN,
        max_per_handle: int = 16,
        rate_limit: RateLimiter | None = None,
    ) -> None:
        self.rate_limit = rate_limit or RateLimiter()  # per client key (per address without keys)
        if curve is None and not insecure:
            raise TypeError("the command endpoint needs a ServerCurve (or insecure=True on a lab bench)")
        if curve is not None and not isinstance(curve, ServerCurve):
            raise TypeError(f"curve must be a ServerCurve, not {type(curve).__name__}")
        self.curve = curve
        self.curve_domain = curve_domain
        self.handler = handler
        self.max_per_handle = max_per_handle
        self.stats = {"requests": 0, "accepted": 0, "rejected": 0, "handler_errors": 0, "send_failures": 0,
                      "rate_limited": 0, "revoked": 0, "repeats": 0, "read_only_refused": 0}
        self.repeats = RepeatCache()
        sock = bind_server(context, zmq.ROUTER, endpoint, curve, curve_domain, maxmsgsize=HARD_LIMIT_BYTES, linger=0,
                           router_mandatory=1, handshake_ivl=round(HANDSHAKE_TIMEOUT * 1000))
        self.socket = sock
        self.endpoint = sock.getsockopt_string(zmq.LAST_ENDPOINT)
        if curve is None:
            log.warning("command endpoint %s takes commands WITHOUT authentication", self.endpoint)

    def sockets(self) -> list[zmq.Socket]:
        return [self.socket]

    def handle(self, socket: zmq.Socket | None = None) -> int:
        """Serve the requests waiting (at most `max_per_handle`); never blocks, never raises."""
        served = 0
        while served < self.max_per_handle:
            try:
                frames = self.socket.recv_multipart(flags=zmq.NOBLOCK, copy=False)
            except zmq.Again:
                break
            served += 1
            self.stats["requests"] += 1
            envelope, body = wire.split_envelope(frames)
            reply = self._serve(body if isinstance(body, zmq.Frame) else None, frames[-1])
            self._send([f.bytes for f in envelope], reply)
        return served

    def _serve(self, frame: zmq.Frame | None, last: zmq.Frame) -> dict:
        """The reply to one request. Every request counts against its sender's rate before it is read
        (`last`: any frame of the message, for the sender's key or address): a malformed one costs the
        card loop's thread as much as a good one, so a flood of them is refused as cheaply."""
        request_id = None
        if not self.rate_limit.allow(user_id(last) or _peer_address(last)):
            self.stats["rate_limited"] += 1
            small = frame is not None and len(frame.bytes) <= MAX_REQUEST_BYTES
            return _reply(wire.salvage_id(frame.bytes) if small and frame is not None else None, ok=False, error=f"rate limited: at most {self.rate_limit.rate:g} commands "
                          "a second from one key; try again")
        try:
            if frame is None:
                raise CommandRejected("a request is one JSON frame")
            body = frame.bytes
            request_id = wire.salvage_id(body) if len(body) <= MAX_REQUEST_BYTES else None
            key = user_id(frame)
            if key is None and self.curve is not None:
                # Cannot happen on a CURVE socket; refuse rather than journal "nobody".
                raise CommandRejected("no authenticated client key on this connection")
            if key is not None and self.curve is not None and not self.curve.allowed(key, self.curve_domain):
                # ZAP checks a key at the handshake only: a connection made before its key was removed
                # (and the allow-list reloaded) stays up, so every request is checked against the list in force.
                self.stats["revoked"] += 1
                raise CommandRejected("this key is not on the allow-list (removed); nothing was done")
            name, args, request_id = parse_request(body)
            role = self.curve.client_role(key, self.curve_domain) if key and self.curve else None
            client = self.curve.client_name(key, self.curve_domain) if key and self.curve else None
            if role in READ_ONLY_ROLES and not COMMANDS[name].read_only:
                self.stats["read_only_refused"] += 1
                readable = ", ".join(c.name for c in COMMANDS.values() if c.read_only)
                raise CommandRejected(f"{name} changes the table, and {client or 'this key'} has the {role} role "
                                      f"(read-only: {readable}); nothing was done")
            digest = b""
            if key is not None and request_id is not None and not COMMANDS[name].read_only:
                digest = hashlib.blake2b(body, digest_size=16).digest()
                repeated = self.repeats.get(key, request_id, digest)
                if repeated is not None:
                    self.stats["repeats"] += 1
                    return repeated
            command = Command(
                name=name,
                args=args,
                id=request_id,
                client_key=key,
                client_name=client,
                peer_address=_peer_address(frame),
                client_role=role,
            )
        except CommandRejected as exc:
            self.stats["rejected"] += 1
            return _reply(request_id, ok=False, error=str(exc))
        reply = self._run(command)
        if digest and key is not None and request_id is not None:
            # Whatever the table answered, a repeat is answered alike: the request ran once.
            self.repeats.put(key, request_id, digest, reply)
        return reply

    def _run(self, command: Command) -> dict:
        """The reply of the daemon's handler to an accepted request."""
        name, request_id = command.name, command.id
        try:
            result = self.handler(command)
        except CommandRejected as exc:
            self.stats["rejected"] += 1
            return _reply(request_id, ok=False, error=str(exc))
        except Exception as exc:
            # A bug in the daemon's handling must not take the endpoint down
            # with it; the console sees the failure, the log the traceback.
            self.stats["handler_errors"] += 1
            log.exception("command handler failed on %s", command.to_json())
            return _reply(request_id, ok=False, error=f"internal error handling {name}: {type(exc).__name__}")
        if result is None:
            result = {}
        if not isinstance(result, dict):
            log.error("command handler returned %s for %s", type(result).__name__, name)
            self.stats["handler_errors"] += 1
            return _reply(request_id, ok=False, error=f"internal error handling {name}: bad reply")
        ok = result.get("ok", True) is True
        self.stats["accepted" if ok else "rejected"] += 1
        return _reply(request_id, **{**result, "ok": ok, "cmd": name})

    def _send(self, envelope: list[bytes], reply: dict) -> None:
        try:
            payload = wire.encode(reply)
        except TypeError:
            log.error("command result not JSON-serialisable: %r", reply)
            payload = wire.encode(_reply(reply.get("id"), ok=False, error="internal error: result not JSON"))
        try:
            self.socket.send_multipart([*envelope, payload], flags=zmq.NOBLOCK)
        except zmq.ZMQError as exc:
            self.stats["send_failures"] += 1
            log.info("command reply not delivered: %s", exc)

    def close(self) -> None:
        self.socket.close(0)


def _reply(request_id, **fields) -> dict:
    if isinstance(fields.get("error"), str):
        fields["error"] = wire.one_line(fields["error"])
    reply = {"ok": fields.pop("ok")}
    fields.pop("id", None)
    if request_id is not None:
        reply["id"] = request_id
    reply.update(fields)
    return reply


def _peer_address(frame: zmq.Frame) -> str | None:
    try:
        address = frame.get("Peer-Address")
    except zmq.ZMQError:
        return None
    return address if isinstance(address, str) else None


def send_command(
    endpoint: str,
    cmd: str,
    args: dict | None = None,
    client_keys: ClientCurve | tuple[bytes | str, bytes | str] | None = None,
    server_public_key: bytes | str | None = None,
    timeout: float = 2.0,
    *,
    request_id: str | int | None = None,
    context: zmq.Context | None = None,
    insecure: bool = False,
) -> dict:
    """Send one command and wait for its reply (a dict with "ok").

    `client_keys` is a ClientCurve, or (public, secret) Z85 keys together with
    `server_public_key`. Without keys the request is refused unless
    `insecure=True`: a plain socket without CURVE, for a lab bench's endpoint
    that takes no keys (`CommandServer(insecure=True)`, `curve_commands = false`).
    Raises CommandTimeout when no reply comes within
    `timeout` seconds: the daemon is down, or the handshake was refused
    because this key is not on its allow-list (CURVE gives no other sign).
    The `timeout` bounds the send too: a handshake refused before the request
    leaves the socket with no peer to queue it for. CurveMismatch (a
    CommandTimeout) as soon as the handshake fails because one side has CURVE
    and the other none. ValueError for an endpoint that is not one
    (shoed.daemon.config.endpoint_problem).
    """
    curve: ClientCurve | None
    if insecure:
        if client_keys is not None or server_public_key is not None:
            raise TypeError("send_command takes no keys with insecure=True")
        curve = None
    elif isinstance(client_keys, ClientCurve):
        curve = client_keys
    elif client_keys is not None and server_public_key is not None:
        curve = ClientCurve.of(client_keys[0], client_keys[1], server_public_key)
    else:
        raise TypeError("send_command needs client keys and the server's public key (or insecure=True "
                        "for an endpoint without CURVE)")
    from shoed.daemon.config import endpoint_problem

    problem = endpoint_problem(endpoint, bind=False)
    if problem is not None:  # checked before a socket is made: ZeroMQ's own refusal names no endpoint
        raise ValueError(f"endpoint {endpoint!r}: {problem}")
    request: dict = {"cmd": cmd, "args": args or {}}
    if request_id is not None:
        request["id"] = request_id
    ctx = context or zmq.Context.instance()
    sock = ctx.socket(zmq.DEALER)
    deadline = time.monotonic() + timeout
    if curve is None:
        unanswered = CommandTimeout(f"no reply from {endpoint} within {timeout:g} s (daemon down)")
        mismatch = CurveMismatch(f"{endpoint} takes commands with CURVE keys only, and this client sends without")
    else:
        unanswered = CommandTimeout(f"no reply from {endpoint} within {timeout:g} s (daemon down, key not "
                                    "allowed, or an endpoint without CURVE)")
        mismatch = CurveMismatch(f"{endpoint} takes commands without CURVE (a lab bench), and this client "
                                 "sends with keys")
    monitor = None
    try:
        sock.linger = 0
        sock.maxmsgsize = MAX_REPLY_BYTES
        # A send waits for a peer, which a handshake that keeps failing (and reconnecting) may never leave in
        # place: it is tried in short turns, the monitor looked at between them, until the deadline.
        sock.sndtimeo = max(1, min(SEND_TURN_MS, int(timeout * 1000)))
        if curve is not None:
            curve.apply(sock)
        # A handshake between a CURVE side and a plain one fails at once, and silently but for this event.
        monitor = sock.get_monitor_socket(zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL)
        sock.connect(endpoint)
        body = wire.encode(request)
        while True:
            try:
                sock.send(body)
                break
            except zmq.Again:
                if _mismatched(monitor):
                    raise mismatch from None
                if time.monotonic() >= deadline:
                    raise unanswered from None
        poller = zmq.Poller()
        poller.register(sock, zmq.POLLIN)
        poller.register(monitor, zmq.POLLIN)
        while True:
            left = deadline - time.monotonic()
            ready = dict(poller.poll(max(0, int(left * 1000)))) if left > 0 else {}
            if sock in ready:
                break
            if monitor in ready and _mismatched(monitor):
                raise mismatch
            if not ready:
                raise unanswered
        reply = wire.decode(sock.recv())
    finally:
        if monitor is not None:
            sock.disable_monitor()
            monitor.close(0)
        sock.close(0)
    if not isinstance(reply, dict) or "ok" not in reply:
        raise wire.WireError(f"reply from {endpoint} is not a command reply")
    return reply


SEND_TURN_MS = 100  # a command's send is tried in turns this long (send_command)


def _mismatched(monitor: zmq.Socket) -> bool:
    """Whether the client's monitor has reported a handshake that failed for a mechanism mismatch
    (reads every event waiting)."""
    from zmq.utils.monitor import recv_monitor_message

    found = False
    while monitor.poll(0):
        event = recv_monitor_message(monitor)
        found = found or event.get("value") == zmq.PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH
    return found
