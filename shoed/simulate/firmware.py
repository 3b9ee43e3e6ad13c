"""The virtual shoe's firmware for the native protocol, as a pure state machine.

It follows firmware_protocol/SPEC.md from the shoe's side: reliable messages
are numbered 1, 2, 3 ... and kept in a queue until a cumulative ack releases
them (§6.1, §6.2); only the oldest 16 (the window) are on the wire, repeated
byte for byte, oldest first, when 200 ms pass without an ack that releases
something (go-back-N); unreliable frames carry the number of the latest
reliable message. After power-on (and whenever a host attaches) the shoe sends
Hello every second until the host's Hello comes, and sends nothing reliable
before it; it answers every host Hello with Hello, a heartbeat and its window
(§8). The gate starts locked and follows the host's Gate; each gate and
set_time is answered with a status (§10). A heartbeat goes out when nothing
else was sent for half a second, and at least once a second in any case (§7).

Time comes in as an argument (seconds, monotonic): no I/O, no clock.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace

from firmware_protocol import messages as m
from firmware_protocol import session

RESEND_AFTER = session.RESEND_MS / 1000
HELLO_EVERY = session.HELLO_REPEAT_MS / 1000
HEARTBEAT_AFTER = 0.5  # SPEC.md §7 asks for a frame at least every second; half that leaves a margin
# A heartbeat at least this often even while busy repeating: a host that lost the
# one after the Hello exchange learns `last` from the next (SPEC.md §6.3).
HEARTBEAT_EVERY = 1.0
LINK_LOSS = session.LINK_LOSS_MS / 1000
LOST_RESEND_EVERY = 1.0  # while the host is silent, the window is repeated at most once a second
WINDOW = session.WINDOW
QUEUE_LIMIT = session.QUEUE_MIN  # the shoe holds cards back (locks its gate) before its queue is full

VENDOR = "shoed"
MODEL = "virtual shoe"
FIRMWARE = "shoed-simulate 1.0"

GATE_LOCKED = "locked"  # SPEC.md §10: a gate is locked at power-on
GATE_OPEN = "open"  # a gate that starts open (for hosts that never unlock it)
GATE_NONE = "none"  # a shoe without a gate: Gate messages change nothing
GATES = (GATE_LOCKED, GATE_OPEN, GATE_NONE)


@dataclass
class _Queued:
    msg: m.Message
    first_sent: float | None = None
    sends: int = 0


class Firmware:
    """One shoe session (one boot number) of the native protocol."""

    def __init__(
        self,
        serial: str,
        boot: int,
        start: float = 0.0,
        gate: str = GATE_LOCKED,
        window: int = WINDOW,
        queue_limit: int = QUEUE_LIMIT,
        minor: int = 0,
        model: str = MODEL,
    ):
        if gate not in GATES:
            raise ValueError(f"gate is one of {', '.join(GATES)}, not {gate!r}")
        self.serial = serial
        self.boot = boot & 0xFFFFFFFF
        self.start = start
        self.has_gate = gate != GATE_NONE
        self.gate_locked = gate == GATE_LOCKED
        self.window = window
        self.queue_limit = queue_limit
        self.minor = minor  # a shoe speaks 1.0; the virtual shuffler 1.1 (SPEC.md §8)
        self.model = model
        self.last_seq = 0  # number of the latest reliable message (SPEC.md §6.1)
        self.queue: deque[_Queued] = deque()
        self.host_hello: m.Hello | None = None  # received on the current attachment
        self.last_hello_sent: float | None = None
        self.last_tx = start
        self.last_heartbeat = start
        self.last_rx: float | None = None  # last valid frame from the host
        self.window_sent_at: float | None = None
        self.released_at: float | None = None
        self.utc_offset_ms: int | None = None
        self.counts = {"resent": 0, "released": 0, "host_frames": 0, "stale_acks": 0}

    # ----- state ---------------------------------------------------------------
    @property
    def unacked(self) -> int:
        return len(self.queue)

    def may_queue(self, pace_zero: bool) -> bool:
        """Room for one more reliable message. As fast as the link allows (pace
        0): only while the window has room; at a dealer's pace: until the queue
        is nearly full (SPEC.md §6.2: the gate locks before it is full)."""
        limit = self.window if pace_zero else self.queue_limit - 2
        return len(self.queue) < limit

    def card_may_pass(self) -> bool:
        return not (self.has_gate and self.gate_locked)

    def host_lost(self, now: float) -> bool:
        return self.last_rx is None or now - self.last_rx >= LINK_LOSS

    def uptime_ms(self, now: float) -> int:
        return int((now - self.start) * 1000) & 0xFFFFFFFF

    # ----- frames out ------------------------------------------------------------
    def _unreliable(self, msg: m.Message, now: float) -> m.Message:
        self.last_tx = now
        return replace(msg, seq=self.last_seq)

    def hello(self, now: float) -> m.Message:
        self.last_hello_sent = now
        return self._unreliable(
            m.Hello(minor=self.minor, vendor=VENDOR, model=self.model, serial=self.serial, firmware=FIRMWARE,
                    boot=self.boot), now
        )

    def heartbeat(self, now: float) -> m.Message:
        self.last_heartbeat = now
        return self._unreliable(m.Heartbeat(uptime_ms=self.uptime_ms(now), unacked=self.unacked), now)

    def status(self, now: float) -> m.Message:
        utc = 0 if self.utc_offset_ms is None else max(0, int(now * 1000) + self.utc_offset_ms)
        return self._unreliable(
            m.Status(
                gate_locked=self.has_gate and self.gate_locked,
                shoe_present=True,
                lid_closed=True,
                unacked=self.unacked,
                utc_ms=utc,
            ),
            now,
        )

    def queue_message(self, msg: m.Message, now: float) -> tuple[m.Message, list[m.Message]]:
        """Number a reliable message and queue it; returns it and what to send now
        (itself, when it falls inside the window and the host has said Hello)."""
        self.last_seq = session.seq_next(self.last_seq)
        msg = replace(msg, seq=self.last_seq)
        item = _Queued(msg)
        self.queue.append(item)
        out = []
        if self.host_hello is not None and len(self.queue) <= self.window:
            out.append(self._send_item(item, now))
        return msg, out

    def _send_item(self, item: _Queued, now: float) -> m.Message:
        if item.first_sent is None:
            item.first_sent = now
        item.sends += 1
        self.last_tx = now
        return item.msg

    def _window(self, now: float) -> list[m.Message]:
        items = list(self.queue)[: self.window]
        out = [self._send_item(item, now) for item in items]
        self.counts["resent"] += sum(1 for item in items if item.sends > 1)
        if items:
            self.window_sent_at = now
        return out

    def attached(self, now: float) -> list[m.Message]:
        """A host opened the link (like DTR rising on a USB shoe): a new Hello
        exchange is due; nothing reliable goes out before the host's Hello."""
        self.host_hello = None
        self.last_rx = None
        return [self.hello(now)]

    def due(self, now: float) -> list[m.Message]:
        """What the shoe sends on its own at `now`: Hello repeats, window repeats, heartbeats."""
        out: list[m.Message] = []
        if self.host_hello is None:
            if self.last_hello_sent is None or now - self.last_hello_sent >= HELLO_EVERY:
                out.append(self.hello(now))
        elif self.queue and now >= self._resend_deadline(now):
            out += self._window(now)
        if (not out and now - self.last_tx >= HEARTBEAT_AFTER) or now - self.last_heartbeat >= HEARTBEAT_EVERY:
            out.append(self.heartbeat(now))
        return out

    def _resend_deadline(self, now: float) -> float:
        oldest = self.queue[0]
        marks = [t for t in (self.window_sent_at, self.released_at, oldest.first_sent) if t is not None]
        if not marks:
            return now  # never sent: send the window now
        every = LOST_RESEND_EVERY if self.host_lost(now) else RESEND_AFTER
        return max(marks) + every

    def next_deadline(self, now: float) -> float:
        """When `due` will next have something to send."""
        deadline = min(self.last_tx + HEARTBEAT_AFTER, self.last_heartbeat + HEARTBEAT_EVERY)
        if self.host_hello is None:
            hello_at = now if self.last_hello_sent is None else self.last_hello_sent + HELLO_EVERY
            deadline = min(deadline, hello_at)
        elif self.queue:
            deadline = min(deadline, self._resend_deadline(now))
        return max(deadline, now)

    # ----- frames in -------------------------------------------------------------
    def on_host(self, msg: m.Message, now: float) -> list[m.Message]:
        """Take one valid frame from the host; returns the shoe's immediate answers."""
        self.counts["host_frames"] += 1
        self.last_rx = now
        if isinstance(msg, m.Hello):
            # SPEC.md §8: answer every host Hello with Hello, a heartbeat, then the window.
            self.host_hello = msg
            return [self.hello(now), self.heartbeat(now)] + self._window(now)
        if isinstance(msg, m.Ack):
            return self.acknowledge(msg.ack, now)
        if isinstance(msg, m.Gate):
            if self.has_gate:
                self.gate_locked = bool(msg.locked)
            return [self.status(now)]
        if isinstance(msg, m.SetTime):
            self.utc_offset_ms = msg.utc_ms - int(now * 1000)
            return [self.status(now)]
        if isinstance(msg, m.StatusRequest):
            return [self.status(now)]
        return []  # heartbeats only keep the link alive

    def acknowledge(self, ack: int, now: float) -> list[m.Message]:
        """Release what a cumulative ack covers (SPEC.md §6.2) and send the
        messages that move into the window."""
        if not self.queue:
            self.counts["stale_acks"] += 1
            return []
        k = session.acked_count(self.queue[0].msg.seq, len(self.queue), ack)
        if k == 0:
            self.counts["stale_acks"] += 1
            return []
        for _ in range(k):
            self.queue.popleft()
        self.counts["released"] += k
        self.released_at = now
        out = []
        if self.host_hello is not None:
            for item in list(self.queue)[: self.window]:
                if item.first_sent is None:
                    out.append(self._send_item(item, now))
        return out
