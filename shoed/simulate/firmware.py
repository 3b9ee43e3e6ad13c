"""The virtual shoe's firmware for the native protocol, as a pure state machine.

It keeps every reliable message until the host acknowledges it (cumulative
ACK, sequence numbers compared modulo 2**16) and repeats it unchanged, with the
same seq, every `resend_after` seconds; it holds new reliable messages back
while `window` of them wait for an acknowledgement; it answers the host's Hello
with its own and a StatusRequest with a Status; it locks and unlocks the card
gate on the host's Gate; it sends a Heartbeat when nothing else was sent for
`heartbeat_after` seconds. Time comes in as an argument (seconds, monotonic),
so the machine does no I/O and reads no clock; the shoe's loop feeds it.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, replace

from firmware_protocol import messages as m

SEQ_MOD = 1 << 16
RESEND_AFTER = 0.2  # seconds without an ACK before a reliable message is sent again
WINDOW = 16  # reliable messages in flight before the shoe holds the next one back
HEARTBEAT_AFTER = 0.5  # seconds of silence before a heartbeat (the host gives up after 3 s)

VENDOR = "shoed"
MODEL = "virtual shoe"
FIRMWARE = "shoed-simulate 1.0"


def seq_le(a: int, b: int) -> bool:
    """a comes at or before b, modulo 2**16 (a window of half the sequence space)."""
    return (b - a) % SEQ_MOD < SEQ_MOD // 2


@dataclass
class _InFlight:
    msg: m.Message
    last_sent: float
    sends: int = 1


class Firmware:
    """One shoe's protocol state from power on."""

    def __init__(
        self,
        serial: str,
        boot: int,
        window: int = WINDOW,
        resend_after: float = RESEND_AFTER,
        heartbeat_after: float = HEARTBEAT_AFTER,
        start: float = 0.0,
    ):
        self.serial = serial
        self.boot = boot & 0xFFFFFFFF
        self.window = window
        self.resend_after = resend_after
        self.heartbeat_after = heartbeat_after
        self.start = start
        self.next_seq = 0
        self.in_flight: OrderedDict[int, _InFlight] = OrderedDict()
        self.gate_locked = False
        self.last_tx = start
        self.utc_offset_ms: int | None = None  # host's clock minus ours, after a SetTime
        self.host_hello: m.Hello | None = None
        self.counts = {"resent": 0, "acked": 0, "host_frames": 0, "status": 0}

    # ----- sequence numbers ----------------------------------------------------
    def _take_seq(self) -> int:
        seq = self.next_seq
        self.next_seq = (seq + 1) % SEQ_MOD
        return seq

    def _stamp(self, msg: m.Message) -> m.Message:
        """Every frame carries the sender's sequence number; unreliable messages
        take one as well, so the host sees the shoe's stream in order."""
        return replace(msg, seq=self._take_seq())

    # ----- what the shoe sends -------------------------------------------------
    @property
    def unacked(self) -> int:
        return len(self.in_flight)

    def can_send(self) -> bool:
        """Room in the window for another reliable message."""
        return len(self.in_flight) < self.window

    def send(self, msg: m.Message, now: float) -> m.Message:
        """Number a message for sending; a reliable one is kept until acknowledged."""
        msg = self._stamp(msg)
        if msg.RELIABLE:
            self.in_flight[msg.seq] = _InFlight(msg, now)
        self.last_tx = now
        return msg

    def hello(self, now: float) -> m.Message:
        return self.send(
            m.Hello(vendor=VENDOR, model=MODEL, serial=self.serial, firmware=FIRMWARE, boot=self.boot), now
        )

    def on_connect(self, now: float) -> list[m.Message]:
        """The host opened the port: Hello, then everything not yet acknowledged, unchanged."""
        out = [self.hello(now)]
        out += self._resend(now, force=True)
        return out

    def due(self, now: float) -> list[m.Message]:
        """Repeats of unacknowledged messages, and a heartbeat when idle."""
        out = self._resend(now)
        if not out and now - self.last_tx >= self.heartbeat_after:
            out.append(self.send(m.Heartbeat(uptime_ms=self.uptime_ms(now), unacked=self.unacked), now))
        return out

    def _resend(self, now: float, force: bool = False) -> list[m.Message]:
        out = []
        for item in self.in_flight.values():
            if force or now - item.last_sent >= self.resend_after:
                item.last_sent = now
                item.sends += 1
                out.append(item.msg)
                self.counts["resent"] += 1
        if out:
            self.last_tx = now
        return out

    def next_deadline(self, now: float) -> float:
        """When `due` will next have something to send."""
        deadline = self.last_tx + self.heartbeat_after
        if self.in_flight:
            oldest = min(item.last_sent for item in self.in_flight.values())
            deadline = min(deadline, oldest + self.resend_after)
        return max(deadline, now)

    def uptime_ms(self, now: float) -> int:
        return int((now - self.start) * 1000) & 0xFFFFFFFF

    # ----- what the host sends -------------------------------------------------
    def on_host(self, msg: m.Message, now: float) -> list[m.Message]:
        """Take one message from the host; returns the shoe's immediate answers."""
        self.counts["host_frames"] += 1
        if isinstance(msg, m.Ack):
            self.acknowledge(msg.ack)
            return []
        if isinstance(msg, m.Hello):
            self.host_hello = msg
            return [self.hello(now)]
        if isinstance(msg, m.Gate):
            self.gate_locked = bool(msg.locked)
            return []
        if isinstance(msg, m.StatusRequest):
            self.counts["status"] += 1
            utc = 0 if self.utc_offset_ms is None else int(now * 1000) + self.utc_offset_ms
            status = m.Status(
                gate_locked=self.gate_locked, shoe_present=True, lid_closed=True, unacked=self.unacked, utc_ms=utc
            )
            return [self.send(status, now)]
        if isinstance(msg, m.SetTime):
            self.utc_offset_ms = msg.utc_ms - int(now * 1000)
            return []
        return []  # heartbeats keep the link alive; anything else is ignored

    def acknowledge(self, ack: int) -> int:
        """Drop every message in flight with seq at or before `ack`; how many went."""
        gone = [seq for seq in self.in_flight if seq_le(seq, ack % SEQ_MOD)]
        for seq in gone:
            del self.in_flight[seq]
        self.counts["acked"] += len(gone)
        return len(gone)
