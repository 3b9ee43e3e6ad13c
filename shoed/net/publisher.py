"""The XPUB socket that fans a table's events out to one audience (displays or surveillance).

It is an XPUB in manual mode, so that the publisher sees every subscription
and applies only the table's own topics (ZeroMQ cuts a peer whose message
exceeds MAX_INBOUND_BYTES): a subscriber cannot make the daemon apply
thousands of subscriptions. SUB clients need no
change. `view` is the audience's copy of each event (shoed.table.audience).

Each event goes out as `[topic, json]` (see `shoed.net.wire`). Publishing never
blocks the daemon: sends are non-blocking and a subscriber that stops reading
loses messages at its high-water mark, alone. ZeroMQ does not tell a PUB socket
which subscriber dropped what, so losses are found where they can be seen: at
the subscriber, as a jump in `seq`, and filled from the journal through the
snapshot endpoint (table-game-standards items 16 and 17).

The daemon owns the sequence numbers: the publisher only checks that they
increase. When idle it sends a heartbeat that repeats the last published seq
(it invents no number), so subscribers can tell a quiet table from a dead
daemon and find losses at the tail.

Given `journal_head`, every event and every heartbeat also carries the
journal's chain head, `"journal": {"file", "jseq", "hash"}`: on an event, the
journal record that holds it; on a heartbeat, the last record written. A
witness off the box keeps these, so that a journal cut short or replaced
later is found (`shoed witness`, docs/witness.md). The field is added on the
wire only: the journaled event stays as it was.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable

import zmq

from shoed.net import wire
from shoed.net.sockets import Closing, bind_server
from shoed.net.curve import DEFAULT_DOMAIN, ServerCurve
from shoed.net.limits import HANDSHAKE_TIMEOUT, RefusalLog

DEFAULT_ENDPOINT = "tcp://127.0.0.1:5556"
HEARTBEAT_INTERVAL = 1.0
# Subscriptions are seen and applied by the publisher itself (XPUB, manual): the table's own topics
# (`""`, `t1`, `t1.`, `t1.card`, ...) are taken, any other is refused, so ZeroMQ's table of what
# is sent where holds a dozen topics a connection at most. ZeroMQ cuts a peer whose message (a
# subscription is one) exceeds MAX_INBOUND_BYTES before it is read into memory. (It still keeps what a
# connection sent, refused or not, until that connection leaves: docs/network.md, Limits.)
MAX_INBOUND_BYTES = 4096  # not less: a CURVE handshake command (INITIATE) is several hundred bytes
SUBSCRIPTIONS_PER_TURN = 64
RENEW_WAIT = 0.5  # s: how long renew() waits for the closed socket's port to be free

# Plain ints: building flag enums on every send costs more than the send.
_FIRST = int(zmq.NOBLOCK | zmq.SNDMORE)
_LAST = int(zmq.NOBLOCK)

log = logging.getLogger("shoed.net.publisher")


class Publisher(Closing):
    """A bound PUB socket for one table.

    `last_seq` is the seq of the last event the daemon published before (from
    its journal, after a restart), so heartbeats are right from the start.
    `clock` is the monotonic clock used to tell when the socket is idle.
    """

    def __init__(
        self,
        context: zmq.Context,
        endpoint: str,
        table_id: str,
        curve: ServerCurve | None = None,
        *,
        last_seq: int | None = None,
        sndhwm: int = 1000,
        heartbeat_interval: float = HEARTBEAT_INTERVAL,
        curve_domain: str = DEFAULT_DOMAIN,
        clock: Callable[[], float] = time.monotonic,
        journal_head: Callable[[], dict | None] | None = None,
        view: Callable[[dict], dict] | None = None,
    ) -> None:
        self.view = view  # the audience's copy of an event (shoed.table.audience); None: the event as it is
        self.table_id = wire.check_table_id(table_id)
        self.last_seq = last_seq
        self.heartbeat_interval = heartbeat_interval
        self.stats = {"sent": 0, "dropped": 0, "heartbeats": 0}
        self._clock = clock
        self._journal_head = journal_head
        self._last_send = clock()
        self._heartbeat_topic = wire.topic_for(table_id, wire.HEARTBEAT).encode()
        self._known_topics = {b""} | {wire.topic_for(table_id, g).encode() for g in wire.GROUPS} | {
            f"{table_id}".encode(), f"{table_id}.".encode()}
        self.refusals = RefusalLog(log, "subscriptions refused")
        self.curve = curve
        # A socket bound to an endpoint, or left unbound (None: renew() binds it with retries).
        self._socket_at = functools.partial(
            bind_server, context, zmq.XPUB, curve=curve, curve_domain=curve_domain,
            xpub_manual=1, maxmsgsize=MAX_INBOUND_BYTES, rcvhwm=1000, sndhwm=sndhwm,
            linger=0,  # never hold the daemon's shutdown for a slow display
            handshake_ivl=round(HANDSHAKE_TIMEOUT * 1000),
            # TCP keepalive, not ZMTP heartbeats, finds a vanished display's
            # connection: ZMTP heartbeats towards a subscriber whose queue is
            # full trip libzmq 4.3 assertions (zeromq/libzmq#3937, #4364, #4767).
            tcp_keepalive=1, tcp_keepalive_idle=30, tcp_keepalive_intvl=10, tcp_keepalive_cnt=3,
        )
        sock = self._socket_at(endpoint)
        self.socket = sock
        self.endpoint = sock.getsockopt_string(zmq.LAST_ENDPOINT)
        self.unbound_since: float | None = None  # renewed, and its endpoint not bound again yet
        self._last_bind_try = 0.0

    def renew(self) -> bool:
        """A new socket at the same endpoint in place of this one: every subscriber connects, and is
        authenticated, again. ZAP checks a key at the handshake only, so this is how a key removed
        from the allow-list is cut off from a stream it already receives. Subscribers fill what is
        published meanwhile from the catch-up endpoint, as after any reconnection. False if the
        endpoint could not be bound again within RENEW_WAIT: it is then tried again each second
        (maybe_heartbeat), and what is published meanwhile reaches no one."""
        self.socket.close(0)
        self.socket = self._socket_at(None)
        self.unbound_since = self._clock()
        return self._bind_again(RENEW_WAIT)

    def _bind_again(self, wait: float) -> bool:
        deadline = time.monotonic() + wait
        while True:
            self._last_bind_try = self._clock()
            try:
                self.socket.bind(self.endpoint)
            except zmq.ZMQError as exc:
                # The closed socket's port is freed by ZeroMQ's I/O thread, a moment later.
                if exc.errno == zmq.EADDRINUSE and time.monotonic() < deadline:
                    time.sleep(0.005)
                    continue
                log.error("cannot bind %s again (%s): retrying each second", self.endpoint, exc)
                return False
            self.unbound_since = None
            return True

    def publish(self, event: dict) -> bool:
        """Send one event; False if ZeroMQ could not queue it (counted as dropped).

        Raises `wire.WireError` for an event of another table, without a kind
        or whose seq does not increase: those are bugs, not network trouble.
        """
        seq = wire.check_event(event, self.table_id)
        if event["kind"] in wire.RESERVED_KINDS:
            raise wire.WireError(f"kind {event['kind']!r} is reserved for the transport")
        if self.last_seq is not None and seq <= self.last_seq:
            raise wire.WireError(f"seq {seq} published after {self.last_seq}: seq must increase")
        if self.view is not None:
            event = self.view(event)
        topic = wire.topic_for(self.table_id, event["kind"]).encode()
        head = self._journal_head() if self._journal_head is not None else None
        payload = wire.encode(event if head is None else {**event, "journal": head})
        self.last_seq = seq
        return self._send(topic, payload, "sent")

    def serve_subscriptions(self) -> int:
        """Take the subscriptions waiting (at most SUBSCRIPTIONS_PER_TURN): apply the table's own
        topics, refuse the others (counted, one log line per interval). Never blocks."""
        sock = self.socket
        n = 0
        while n < SUBSCRIPTIONS_PER_TURN:
            try:
                msg = sock.recv(zmq.NOBLOCK)
            except zmq.Again:
                break
            n += 1
            if not msg or msg[0] not in (0, 1):
                continue
            topic = msg[1:]
            if topic not in self._known_topics:
                if msg[0] == 1:
                    self.refusals.refused("not this table's topic", topic[:32].hex())
                continue  # (an unsubscription of a topic refused: nothing to take back)
            # An unsubscription is also sent for each subscription of a subscriber that left.
            sock.setsockopt(zmq.SUBSCRIBE if msg[0] == 1 else zmq.UNSUBSCRIBE, topic)
        return n

    def maybe_heartbeat(self, now: float | None = None) -> bool:
        """Send a heartbeat if nothing went out for `heartbeat_interval`; True if sent.

        The daemon calls this from its loop on every turn; `now` is its
        monotonic time (read from the clock if not given).
        """
        now = self._clock() if now is None else now
        if self.unbound_since is not None and now - self._last_bind_try >= 1.0:
            self._bind_again(0.0)
        self.serve_subscriptions()
        if now - self._last_send < self.heartbeat_interval:
            return False
        return self.heartbeat(now)

    def heartbeat(self, now: float | None = None) -> bool:
        """Send a heartbeat now: `{"table", "kind": "heartbeat", "interval"[, "seq"][, "journal"]}`
        (after taking the subscriptions waiting: a heartbeat is what a new subscriber waits for)."""
        self.serve_subscriptions()
        beat: dict = {"table": self.table_id, "kind": wire.HEARTBEAT, "interval": self.heartbeat_interval}
        if self.last_seq is not None:
            beat["seq"] = self.last_seq
        head = self._journal_head() if self._journal_head is not None else None
        if head is not None:
            beat["journal"] = head
        sent = self._send(self._heartbeat_topic, wire.encode(beat), "heartbeats")
        self._last_send = self._clock() if now is None else now
        return sent

    def _send(self, topic: bytes, payload: bytes, counter: str) -> bool:
        # Subscriptions are taken on the loop's turns (maybe_heartbeat) and before a heartbeat, never in
        # front of an event: a flood of them must not stand between a card and its publication.
        try:
            # A multipart message is queued whole or not at all.
            self.socket.send(topic, _FIRST)
            self.socket.send(payload, _LAST)
        except zmq.Again:
            self.stats["dropped"] += 1
            return False
        self.stats[counter] += 1
        self._last_send = self._clock()
        return True

    def close(self) -> None:
        self.socket.close(0)
