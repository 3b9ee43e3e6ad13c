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

Requests over 64 KiB are answered with an error; over 1 MiB ZeroMQ drops the
sender's connection before the message is read (no reply), so a flood cannot
fill the daemon's memory.

Single-threaded: the daemon polls `sockets()` and calls `handle(socket)`; the
handler runs on the daemon's thread. `send_command()` is the client side.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

import msgspec
import zmq

from shoed.table.events import COMMANDS, CommandRejected
from shoed.net import wire
from shoed.net.sockets import Closing, bind_server
from shoed.net.curve import DEFAULT_DOMAIN, ClientCurve, ServerCurve, user_id
from shoed.net.limits import HANDSHAKE_TIMEOUT, MAX_REPLY_BYTES, RateLimiter

DEFAULT_ENDPOINT = "tcp://127.0.0.1:5558"
MAX_REQUEST_BYTES = 64 * 1024
# Above this ZeroMQ itself drops the connection; between the two the sender
# gets an error reply.
HARD_LIMIT_BYTES = 1024 * 1024

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
    # Last: the duplicate-key pass reads the body again in pure Python (about 4 ms for 64 KiB of small
    # objects, against 0.1 ms for the checks above), so only a request that is otherwise good pays it.
    duplicate = wire.duplicate_key(body)
    if duplicate is not None:  # which one counts is the parser's choice: the request is ambiguous
        raise CommandRejected(f"bad request: the key {duplicate!r} is given twice in one object")
    return request.cmd, msgspec.to_builtins(args), request.id


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
                      "rate_limited": 0, "revoked": 0}
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
            command = Command(
                name=name,
                args=args,
                id=request_id,
                client_key=key,
                client_name=self.curve.client_name(key, self.curve_domain) if key and self.curve else None,
                peer_address=_peer_address(frame),
                client_role=self.curve.client_role(key, self.curve_domain) if key and self.curve else None,
            )
        except CommandRejected as exc:
            self.stats["rejected"] += 1
            return _reply(request_id, ok=False, error=str(exc))
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
) -> dict:
    """Send one command and wait for its reply (a dict with "ok").

    `client_keys` is a ClientCurve, or (public, secret) Z85 keys together with
    `server_public_key`. Raises CommandTimeout when no reply comes within
    `timeout` seconds: the daemon is down, or the handshake was refused
    because this key is not on its allow-list (CURVE gives no other sign).
    The `timeout` bounds the send too: a handshake refused before the request
    leaves the socket with no peer to queue it for.
    """
    if isinstance(client_keys, ClientCurve):
        curve = client_keys
    elif client_keys is not None and server_public_key is not None:
        curve = ClientCurve.of(client_keys[0], client_keys[1], server_public_key)
    else:
        raise TypeError("send_command needs client keys and the server's public key")
    request: dict = {"cmd": cmd, "args": args or {}}
    if request_id is not None:
        request["id"] = request_id
    ctx = context or zmq.Context.instance()
    sock = ctx.socket(zmq.DEALER)
    deadline = time.monotonic() + timeout
    unanswered = CommandTimeout(f"no reply from {endpoint} within {timeout:g} s (daemon down, or key not allowed)")
    try:
        sock.linger = 0
        sock.maxmsgsize = MAX_REPLY_BYTES
        sock.sndtimeo = max(1, int(timeout * 1000))
        curve.apply(sock)
        sock.connect(endpoint)
        try:
            sock.send(wire.encode(request))
        except zmq.Again:
            raise unanswered from None
        if not sock.poll(max(0, int((deadline - time.monotonic()) * 1000))):
            raise unanswered
        reply = wire.decode(sock.recv())
    finally:
        sock.close(0)
    if not isinstance(reply, dict) or "ok" not in reply:
        raise wire.WireError(f"reply from {endpoint} is not a command reply")
    return reply
