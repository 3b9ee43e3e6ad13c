"""The subscriber side of the Clone pattern, for table displays, surveillance and tests.

`TableClient` subscribes to a table's events first, then asks the snapshot
endpoint for the current state, and from there delivers every later event
exactly once and in seq order:

- updates at or below the snapshot's seq are dropped (already in the state);
- a jump in seq (lost at a high-water mark, or while reconnecting) is filled
  by asking the snapshot endpoint for the missing range from the journal;
- heartbeats repeat the publisher's last seq, so losses at the tail are found
  too; more than `heartbeat_timeout` seconds of silence means the daemon or
  the link is gone: the client reconnects and catches up from where it was;
- when the missing events cannot be had (journal rotated, endpoint down) the
  client never carries on silently: it delivers a fresh snapshot instead.

What `poll()` returns is a list of dicts: the daemon's events, and snapshots
shaped `{"table", "kind": "snapshot", "seq", "state", "reason"}` with reason
"initial", "gap" (missing events could not be fetched) or "reset" (the
table's sequence went backwards: a new journal). A display replaces its state
on a snapshot and applies events on top.

A client that resumes (a witness after its own restart) passes `last_seq`,
the last event it already holds: it then takes no initial snapshot, and the
first heartbeat's seq says what to fetch. With `heartbeats=True` heartbeats
are delivered too, after whatever they caused to be fetched. With
`watch_resets=True` (the witness) an event older than the last one delivered
makes the client ask for a snapshot at once (at most once a second): a daemon
restarted on an older journal deals on from a lower seq, and its events would
otherwise be dropped as repeats until its seq passed the old one.

What the snapshot endpoint answers is checked to be the client's table: a
reply or a fetched event of another table (endpoints swapped in a list) is a
fetch error, never taken as this table's. A poll takes at most `DRAIN_MAX`
messages (or `DRAIN_BYTES`) off the socket, so one flooding table neither
grows the client's memory nor keeps a caller serving several tables from the
others.

The client subscribes to all of the table's events and filters by `topics`
itself: with a server-side filter it could not tell a lost event from one it
did not ask for.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from itertools import count

import zmq

from shoed.net import sequence, wire
from shoed.net.sockets import Closing
from shoed.net.curve import ClientCurve
from shoed.net.limits import MAX_EVENT_BYTES, MAX_REPLY_BYTES

HEARTBEAT_TIMEOUT = 3.0
REQUEST_TIMEOUT = 2.0
CREDIT = 4  # catch-up replies allowed ahead: one more is granted for each taken (the guide's file transfer)
REPLIES_QUEUED = 64  # replies held unread (a catch-up has CREDIT in flight)
DRAIN_MAX = 1000  # messages taken off the SUB socket in one poll
DRAIN_BYTES = 16 * 1024 * 1024  # bytes of payload taken off the SUB socket in one poll
RESET_CHECK_S = 1.0  # with watch_resets: at most one snapshot a second asked because of an old event

log = logging.getLogger("shoed.net.client")


class FetchError(Exception):
    """The snapshot endpoint did not give what was asked (error reply, timeout, holes)."""


class WrongTable(FetchError):
    """The snapshot endpoint answered for another table."""


class SnapshotClient:
    """Requests to a snapshot endpoint over a DEALER socket, each with a timeout.

    After a timeout the socket is replaced, so a late reply cannot be taken
    for the answer to a later request.
    """

    def __init__(
        self,
        context: zmq.Context,
        endpoint: str,
        curve: ClientCurve | None = None,
        *,
        timeout: float = REQUEST_TIMEOUT,
        table: str | None = None,
    ) -> None:
        self.context = context
        self.endpoint = endpoint
        self.table = table  # when given, every reply and fetched event must be this table's
        self.curve = curve
        self.timeout = timeout
        self._ids = count(1)
        self._socket: zmq.Socket | None = None

    def _connect(self) -> zmq.Socket:
        if self._socket is None:
            sock = self.context.socket(zmq.DEALER)
            try:
                sock.linger = 0
                sock.maxmsgsize = MAX_REPLY_BYTES
                sock.rcvhwm = REPLIES_QUEUED
                if self.curve is not None:
                    self.curve.apply(sock)
                sock.connect(self.endpoint)
            except BaseException:
                sock.close(0)  # a socket left open holds context.term() for ever
                raise
            self._socket = sock
        return self._socket

    def reset(self) -> None:
        if self._socket is not None:
            self._socket.close(0)
            self._socket = None

    def _grant(self, n: int) -> None:
        """Allow the endpoint `n` more replies (a request sent with "credit")."""
        if self._socket is not None:
            try:
                self._socket.send(wire.encode({"op": "credit", "n": n}), flags=zmq.NOBLOCK)
            except zmq.Again:  # the request's own timeout reports an endpoint that reads nothing
                pass

    def _request(self, request: dict) -> Iterable[dict]:
        """Send a request and yield its replies; each must come within the timeout, which other
        messages (late answers to an abandoned request, or a peer's noise) do not put off."""
        request_id = f"r{next(self._ids)}"
        sock = self._connect()
        try:
            sock.send(wire.encode({**request, "id": request_id}), flags=zmq.NOBLOCK)
        except zmq.Again:
            self.reset()
            raise FetchError(f"cannot queue a request to {self.endpoint}") from None
        deadline = time.monotonic() + self.timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not sock.poll(max(1, int(left * 1000))):
                self.reset()
                raise FetchError(f"no reply from {self.endpoint} within {self.timeout:g} s")
            try:
                reply = wire.decode(sock.recv())
            except wire.WireError as exc:
                self.reset()
                raise FetchError(f"bad reply from {self.endpoint}: {exc}") from None
            if not isinstance(reply, dict) or reply.get("id") not in (request_id, None):
                continue  # a late answer to an abandoned request
            if not reply.get("ok"):
                raise FetchError(f"{self.endpoint}: {reply.get('error', 'request refused')}")
            yield reply
            deadline = time.monotonic() + self.timeout

    def snapshot(self) -> tuple[int, dict]:
        """(seq, state) of the table now."""
        for reply in self._request({"op": "snapshot"}):
            seq = reply.get("seq")
            if not isinstance(seq, int) or isinstance(seq, bool) or not isinstance(reply.get("state"), dict):
                raise FetchError("snapshot reply without seq or state")
            self._check_table(reply.get("table"))
            return seq, reply["state"]
        raise FetchError("no snapshot")  # pragma: no cover - _request yields or raises

    def events(self, first: int, last: int) -> list[dict]:
        """The events first..last, checked to be all there, in order."""
        got: list[dict] = []
        for reply in self._request({"op": "events", "from": first, "to": last, "credit": CREDIT}):
            if reply.get("done"):
                if reply.get("count") != len(got):
                    raise FetchError(f"events {first}..{last}: {len(got)} received, {reply.get('count')} sent")
                break
            chunk = reply.get("events")
            if not isinstance(chunk, list) or not all(isinstance(e, dict) for e in chunk):
                raise FetchError("events reply without a list of events")
            if len(got) + len(chunk) > last - first + 1:
                raise FetchError(f"events {first}..{last}: more events sent than asked for")
            for event in chunk:
                self._check_table(event.get("table"))
                try:
                    wire.topic_for(event.get("table", ""), event.get("kind"))
                except wire.WireError as exc:
                    raise FetchError(f"events {first}..{last}: {exc}") from None
            got.extend(chunk)
            self._grant(1)
        seqs: list[object] = [e.get("seq") for e in got]
        if not sequence.covers(first, last, seqs):
            raise FetchError(f"events {first}..{last} incomplete in the journal")
        return got

    def _check_table(self, table: object) -> None:
        if self.table is not None and table != self.table:
            self.reset()
            shown = wire.one_line(str(table))[:64]
            raise WrongTable(f"{self.endpoint} answers for table {shown!r}, not {self.table!r}")

    def close(self) -> None:
        self.reset()


class TableClient(Closing):
    """Snapshot plus every later event of one table, exactly once, in order.

    Single-threaded: call `poll()` from one thread. `topics` are topic groups
    to deliver ("" for all, or e.g. ("card", "coup")); snapshots are always
    delivered.
    """

    def __init__(
        self,
        events_endpoint: str,
        snapshot_endpoint: str,
        table_id: str,
        topics: Iterable[str] = ("",),
        curve: ClientCurve | None = None,
        *,
        context: zmq.Context | None = None,
        heartbeat_timeout: float = HEARTBEAT_TIMEOUT,
        request_timeout: float = REQUEST_TIMEOUT,
        max_range: int = 10_000,
        rcvhwm: int = 10_000,
        sub_options: Mapping[int, int] | None = None,
        clock: Callable[[], float] = time.monotonic,
        last_seq: int | None = None,
        heartbeats: bool = False,
        watch_resets: bool = False,
    ) -> None:
        self.table_id = wire.check_table_id(table_id)
        self.heartbeats = heartbeats
        self.watch_resets = watch_resets
        self._reset_checked = float("-inf")
        self._fetch_said = ""  # the last failure to fetch logged as a warning: said once until it changes
        self.events_endpoint = events_endpoint
        self.curve = curve
        self.heartbeat_timeout = heartbeat_timeout
        self.max_range = max_range
        self.rcvhwm = rcvhwm
        self.sub_options = dict(sub_options or {})  # e.g. {zmq.RCVBUF: 65536} on a small display
        self._prefixes = tuple(f"{table_id}.{t}" for t in topics)
        self._own_context = context is None
        self.context = context or zmq.Context()
        self._clock = clock
        self.last_seq: int | None = last_seq
        self.stats = {
            "events": 0, "duplicates": 0, "gaps": 0, "filled": 0, "snapshots": 0,
            "reconnects": 0, "malformed": 0, "heartbeats": 0,
        }
        self._requests = SnapshotClient(self.context, snapshot_endpoint, curve, timeout=request_timeout,
                                        table=self.table_id)
        self._sub = self._subscribe()
        self._last_heard = self._clock()

    # -- sockets -----------------------------------------------------------

    def _subscribe(self) -> zmq.Socket:
        """A SUB socket connected to the table's events."""
        sub = self.context.socket(zmq.SUB)
        try:
            sub.linger = 0
            sub.rcvhwm = self.rcvhwm
            sub.maxmsgsize = MAX_EVENT_BYTES
            for option, value in self.sub_options.items():
                sub.setsockopt(option, value)
            if self.curve is not None:
                self.curve.apply(sub)
            # Everything of this table, heartbeats included; topics are filtered
            # here so that a lost event is never mistaken for a filtered one.
            sub.setsockopt(zmq.SUBSCRIBE, f"{self.table_id}.".encode())
            sub.connect(self.events_endpoint)
        except BaseException:
            sub.close(0)  # a socket left open holds context.term() for ever
            raise
        return sub

    def _reconnect(self) -> None:
        self.stats["reconnects"] += 1
        self._sub.close(0)
        self._requests.reset()
        self._sub = self._subscribe()
        self._last_heard = self._clock()

    def _held(self) -> int:
        """The seq of the last event delivered: asked only once the client holds a state."""
        if self.last_seq is None:
            raise RuntimeError(f"the client of {self.table_id} holds no state yet")
        return self.last_seq

    # -- delivery ------------------------------------------------------------

    def poll(self, timeout: float = 0.0) -> list[dict]:
        """Wait up to `timeout` seconds for news; return what is ready, in order."""
        deadline = self._clock() + max(0.0, timeout)
        out: list[dict] = []
        while True:
            if self.last_seq is None:
                self._initial(out)
            else:
                self._drain(out)
                self._check_silence(out)
            now = self._clock()
            if out or now >= deadline:
                return out
            wait = deadline - now
            if self.last_seq is None:
                time.sleep(min(wait, 0.05))  # the endpoint said no; do not spin
            else:
                silence_left = self._last_heard + self.heartbeat_timeout - now
                self._sub.poll(max(1, int(1000 * min(wait, max(silence_left, 0.0)))))

    def _fetch_failed(self, what: str, exc: FetchError) -> None:
        """A fetch that failed: another table's answer is a warning, said once until the text changes."""
        if isinstance(exc, WrongTable):
            if str(exc) != self._fetch_said:
                self._fetch_said = str(exc)
                log.warning("%s of %s refused: %s", what, self.table_id, exc)
        else:
            log.info("%s of %s failed: %s", what, self.table_id, exc)

    def _initial(self, out: list[dict]) -> None:
        try:
            seq, state = self._requests.snapshot()
        except FetchError as exc:
            self._fetch_failed("initial snapshot", exc)
            return
        self._deliver_snapshot(out, seq, state, "initial")
        self._drain(out)

    def _drain(self, out: list[dict]) -> None:
        """Take the messages waiting on the SUB socket, without blocking: DRAIN_MAX or DRAIN_BYTES at most."""
        taken = size = 0
        while taken < DRAIN_MAX and size < DRAIN_BYTES:
            try:
                topic, payload = self._sub.recv_multipart(flags=zmq.NOBLOCK)
            except zmq.Again:
                return
            except ValueError:  # not two frames
                self.stats["malformed"] += 1
                taken += 1
                continue
            taken += 1
            size += len(payload)
            self._last_heard = self._clock()
            try:
                event = wire.decode_event(topic, payload, self.table_id)
            except wire.WireError as exc:
                self.stats["malformed"] += 1
                log.warning("dropped malformed message on %s: %s", topic[:64], exc)
                continue
            if event["kind"] == wire.HEARTBEAT:
                self.stats["heartbeats"] += 1
                self._catch_up(out, sequence.judge_heartbeat(self._held(), event.get("seq")))
                if self.heartbeats:
                    out.append(event)
                continue
            verdict = sequence.judge_event(self._held(), event["seq"])
            if verdict.action == "fill":
                self._catch_up(out, verdict)
                verdict = sequence.judge_event(self._held(), event["seq"])
                if verdict.action == "fill":
                    # The snapshot taken instead is older than this event; the
                    # next heartbeat finds the rest.
                    continue
            if verdict.action == "drop" and self.watch_resets and event["seq"] < self._held():
                self._check_reset(out)
                verdict = sequence.judge_event(self._held(), event["seq"])
                if verdict.action == "fill":
                    continue  # the snapshot taken is older than this event; the next heartbeat finds the rest
            if verdict.action == "drop":
                self.stats["duplicates"] += 1
            else:
                self._deliver(out, event)

    def _check_reset(self, out: list[dict]) -> None:
        """An event older than the last delivered: a repeat, or a table whose seq went back (a daemon
        started on an older journal). A snapshot tells which, at most once every RESET_CHECK_S."""
        now = self._clock()
        if now - self._reset_checked < RESET_CHECK_S:
            return
        self._reset_checked = now
        try:
            seq, state = self._requests.snapshot()
        except FetchError as exc:
            self._fetch_failed("snapshot", exc)
            return
        if sequence.judge_snapshot(self._held(), seq).action == "reset":
            self._deliver_snapshot(out, seq, state, "reset")

    def _check_silence(self, out: list[dict]) -> None:
        if self._clock() - self._last_heard <= self.heartbeat_timeout:
            return
        log.warning("no heartbeat from %s for %g s: reconnecting", self.events_endpoint, self.heartbeat_timeout)
        self._reconnect()
        try:
            seq, state = self._requests.snapshot()
        except FetchError as exc:
            self._fetch_failed("snapshot", exc)
            self._last_heard = self._clock()  # try again after another timeout
            return
        verdict = sequence.judge_snapshot(self._held(), seq)
        if verdict.action == "fill":
            self._fill(out, verdict, (seq, state))
        elif verdict.action == "reset":
            self._deliver_snapshot(out, seq, state, "reset")
        self._last_heard = self._clock()

    def _catch_up(self, out: list[dict], verdict: sequence.Verdict) -> None:
        if verdict.action == "fill":
            self._fill(out, verdict)
        elif verdict.action == "reset":
            self._resync(out, "reset")

    def _fill(self, out: list[dict], verdict: sequence.Verdict, snapshot: tuple[int, dict] | None = None) -> None:
        """Fetch the verdict's first..last from the journal; if that fails, `snapshot` (the one just
        taken) or a fresh one."""
        first, last = verdict.first, verdict.last
        if first is None or last is None:
            raise ValueError(f"a {verdict.action!r} verdict names no range to fetch")
        self.stats["gaps"] += 1
        try:
            fetched: list[dict] = []
            for a, b in sequence.windows(first, last, self.max_range):
                fetched.extend(self._requests.events(a, b))
        except FetchError as exc:
            log.warning("could not fill events %d..%d of %s: %s", first, last, self.table_id, exc)
            if snapshot is not None:
                self._deliver_snapshot(out, *snapshot, "gap")
            else:
                self._resync(out, "gap")
            return
        self.stats["filled"] += len(fetched)
        for event in fetched:
            self._deliver(out, event)

    def _resync(self, out: list[dict], reason: str) -> None:
        try:
            seq, state = self._requests.snapshot()
        except FetchError as exc:
            log.warning("resync of %s failed: %s", self.table_id, exc)
            return
        self._deliver_snapshot(out, seq, state, reason)

    def _deliver_snapshot(self, out: list[dict], seq: int, state: dict, reason: str) -> None:
        self.stats["snapshots"] += 1
        self.last_seq = seq
        out.append({"table": self.table_id, "kind": wire.SNAPSHOT, "seq": seq, "state": state, "reason": reason})

    def _deliver(self, out: list[dict], event: dict) -> None:
        self.last_seq = event["seq"]
        kind = event.get("kind")
        # The kinds the transport delivers itself (a snapshot) and a display's shell makes
        # (`watch.*`, shoed.display.state) never come from the table: such an "event" is dropped.
        if kind in wire.RESERVED_KINDS or (isinstance(kind, str) and kind.startswith("watch.")):
            self.stats["malformed"] += 1
            log.warning("dropped an event of the reserved kind %r from %s", wire.one_line(str(kind))[:64],
                        self.table_id)
            return
        self.stats["events"] += 1
        try:
            topic = wire.topic_for(self.table_id, event.get("kind"))
        except wire.WireError:
            topic = ""
        if topic.startswith(self._prefixes):
            out.append(event)

    def close(self) -> None:
        self._requests.close()
        self._sub.close(0)
        if self._own_context:
            self.context.term()
