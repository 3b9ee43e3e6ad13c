"""The host's side of the shoed shoe protocol (firmware_protocol/SPEC.md), without I/O.

`NativeSession` is the protocol logic the `native` and `native-usb` drivers
share: bytes in, Readings out, bytes to send back. It reads no clock (every
call is given the time) and touches no device, so the same inputs always give
the same outputs and the rules below are tested without a link.

What it does, with the SPEC sections it follows:
- Frames are found by `firmware_protocol.Decoder` (§4); a rejected stretch is a
  `warning` (code `frame_rejected`), never a card. An intact frame with an
  impossible payload is a firmware fault (§6.3: the card stream is stuck): an
  `alarm` with code `firmware_fault`, said once until the stream moves again.
- Hello (§8): sent when a link opens and every second until the shoe answers;
  a shoe Hello is answered when its boot is new, or when it comes a second or
  more after our last Hello (the shoe repeats its Hello until it has ours).
  Then SetTime (hourly too), the gate's state when the daemon set one, and an
  ack for the last durable message.
- Reliable messages (§6.3) are taken exactly once: nothing before the shoe's
  Hello on this link; with no record of the shoe's session, nothing until a
  heartbeat or status gives `last = seq - unacked`; then only `last + 1`. A
  duplicate is dropped and the last *durable* seq is acknowledged again; a
  gap is dropped unacknowledged (the shoe goes back, go-back-N) and reported
  once as a `warning` with code `seq_gap`. When the same seq stays missing for
  `STUCK_AFTER` seconds (a frame the host never takes, repeated), the card
  stream is stuck: an `alarm` `firmware_fault`, once for that seq.
- The shoe's numbering is checked against ours (§6.3): every heartbeat and
  status (the shoe's oldest unacknowledged seq, `seq - unacked + 1`, must not
  be after `last + 1`, nor its `seq` before our durable one), and every
  duplicate (a seq neither taken nor acknowledged by us in this boot is not a
  repeat). A contradiction is an `alarm` `firmware_fault`, said once; from
  then on nothing of that boot is taken or acknowledged (a card is never
  acknowledged away unread) until the shoe starts a new session.
- Acks are sent only from `acknowledge`, which the daemon calls after the
  reading is journaled; they are cumulative, so one ack may cover several.
- A new boot number means the shoe restarted (§6.4): the `hello` reading says
  `restarted` and how many messages the old session still held unacknowledged.
  A Hello that names another vendor, model or serial on the same link is
  reported too (the table decides whether that holds the coup).
- A repeat is compared with the bytes taken under its seq: a different frame
  under a seq already taken is a `forged_frame` reading (someone else wrote on
  the line, or the shoe is broken), never dropped as a plain duplicate.
- A card read with a confidence below the floor (`confidence_floor`, default
  `DEFAULT_CONFIDENCE_FLOOR`) is an `unreadable` reading with code
  `low_confidence`: the dealer enters it by hand; it is never dealt as read.
- A plain shoe's draw (1.1, §5.22) is a `draw` reading with its mode and what
  saw the card leave (`code` `sensor`, `button` or `vendor_N`), taken and
  acknowledged like a card.
- Heartbeats (§7): one whenever nothing was sent for `heartbeat` seconds;
  the link counts as silent after `silence` seconds without a valid frame.
- Gate (§10): repeated every 200 ms until a status shows the state asked for;
  a shoe that answers `gate_locked = 0` to a lock has no gate (said once).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from firmware_protocol import Decoder, Rejected, encode
from firmware_protocol.codec import cobs_decode
from firmware_protocol import messages as m
from firmware_protocol import session as rules
from shoed.drivers.base import Reading
from shoed.drivers.noise import NoiseCoalescer
from shoed.net.wire import one_line

# Framing-level rejections: noise on the line, reported together (shoed.drivers.noise). An intact frame
# of another version, of an unknown type or with an impossible payload is the shoe's doing: said apart.
NOISE_KINDS = frozenset({"garbage", "overflow", "cobs", "short", "long", "crc"})

NS = 1_000_000_000

UNREADABLE_CODES = {
    m.UNREADABLE_NO_INDEX: "no_index",
    m.UNREADABLE_LOW_CONFIDENCE: "low_confidence",
    m.UNREADABLE_DOUBLE_FEED: "double_feed",
}
TAMPER_SOURCES = {m.TAMPER_LID: "lid", m.TAMPER_CASE: "case"}
MODES = {m.MODE_GAME: "game", m.MODE_BURN: "burn"}
# A card-reading shuffler's messages (SPEC.md §5.15 - §5.21): taken by the `shuffler` driver only, which seals
# the order; on any other driver's link they are an unknown type, refused without their bytes.
SHUFFLER_MESSAGES = (m.ShuffleStarted, m.DeckCheck, m.OrderChunk, m.ShuffleCompleted, m.ShufflerError, m.Meters)
SHUFFLER_TYPES = frozenset(cls.TYPE for cls in SHUFFLER_MESSAGES)


# A shoe is taken to have no gate after this many locks answered "unlocked" in a row.
GATELESS_AFTER = 3
# Below this confidence (0..1; the wire's 0..255 / 255) a card is unreadable, entered by hand.
# SPEC.md §5.3 leaves low values to the host; a shoe never sends a guess at 255. Half: a reader
# less sure than a coin toss has not read the card.
DEFAULT_CONFIDENCE_FLOOR = 0.5
# Frames remembered per boot to compare repeats with (more than the shoe's window, SPEC.md §6.3).
TAKEN_KEPT = 1024
# Impossible frames said (each a `firmware_fault`) before a message is taken again: more are counted only.
FAULTS_SAID = 16
# The same seq missing this long (seconds; ten of the shoe's resend periods, SPEC.md §7) while frames arrive:
# the card stream is stuck on a frame the host never takes (SPEC.md §6.3), a firmware fault.
STUCK_AFTER = 10 * rules.RESEND_MS / 1000


@dataclass
class Timing:
    """Protocol timing in seconds (SPEC.md §7, §10); tests shorten them."""

    heartbeat: float = 0.5  # send something at least this often (the SPEC asks for 1 s; half leaves room)
    silence: float = rules.LINK_LOSS_MS / 1000
    hello_repeat: float = rules.HELLO_REPEAT_MS / 1000
    gate_repeat: float = 0.2
    set_time_every: float = 3600.0


@dataclass
class SessionStats:
    """Counts shown to the operator (SPEC.md §9): rejected stretches by kind, duplicates, gaps."""

    rejected: dict[str, int] = field(default_factory=dict)
    duplicates: int = 0
    gaps: int = 0
    taken: int = 0
    acks_sent: int = 0


class NativeSession:
    """Protocol state for one shoe, across links (reconnects) and shoe sessions (boots)."""

    def __init__(self, source: str, host_hello: m.Hello, timing: Timing | None = None,
                 confidence_floor: float = DEFAULT_CONFIDENCE_FLOOR, shuffler: bool = False) -> None:
        if not 0.0 <= confidence_floor <= 1.0:
            raise ValueError(f"confidence_floor must be between 0 and 1, not {confidence_floor!r}")
        self.confidence_floor = confidence_floor
        self.shuffler = shuffler  # the shuffler driver's session: the shuffler's messages are taken
        self.source = source
        self.host_hello = host_hello
        self.timing = timing or Timing()
        self.stats = SessionStats()
        # The shoe's session and where we are in it (kept across links).
        self.boot: int | None = None
        self.last: int | None = None  # last reliable seq taken (delivered) in this boot
        self.durable: int | None = None  # last reliable seq the daemon acknowledged in this boot
        self.acked: int | None = None  # last seq the host itself acknowledged (or journaled before) in this boot
        # Why the shoe's numbering contradicts ours in this boot (SPEC.md §6.3): nothing more is taken nor acked.
        self.distrusted: str | None = None
        self._missing: tuple[int, int] | None = None  # (seq, since ns) the stream waits for, while frames arrive
        self._stuck_said: int | None = None  # the seq a stuck stream was said for
        self.old_unacked: int | None = None  # unacked count last seen, for a restart report
        self.taken: dict[int, bytes] = {}  # seq -> the frame taken under it, in this boot
        self.identity: tuple | None = None  # (vendor, model, serial) of the shoe's last Hello
        self._forged_said: set[int] = set()  # seqs a forged frame was reported under (within `taken`)
        self.gate_wanted: bool | None = None
        self.gateless = False
        self.status: m.Status | None = None
        self.version: tuple[int, int] | None = None
        # This link.
        self._decoder = Decoder()
        self._base = 0
        self._out = bytearray()
        self._hello_seen = False
        self._incompatible = False
        self._exchanged_boot: int | None = None
        self._last_rx = 0
        self._last_tx = 0
        self._last_hello_tx: int | None = None
        self._last_time_tx: int | None = None
        self._gate_tx: int | None = None
        self._gap_for: int | None = None
        self._fault_said: set[int | None] = set()  # seqs of impossible frames said since a message was taken
        self._said: set[str] = set()
        self._awaiting: list = []  # requests whose status answer is due, oldest first
        # Locks answered "unlocked" in a row. One such answer can be a status that
        # answered an earlier request (answers lost on the line, or sent before a
        # daemon restart); only a shoe that keeps answering a lock so has no gate.
        self._unlocked_answers = 0
        self._rx = bytearray()  # received bytes the decoder has not consumed yet, for exact raw frames
        self._noise = NoiseCoalescer()
        self._started: int | None = None

    # ----- inputs

    def link_up(self, offset: int, now_ns: int, utc_ns: int) -> list[Reading]:
        """A new link (port opened) at stream `offset`: fresh framing, greet the shoe."""
        self._decoder = Decoder()
        self._base = offset
        self._out.clear()
        self._hello_seen = False
        self._incompatible = False
        self._exchanged_boot = None
        self._last_rx = now_ns
        self._gate_tx = None
        self._gap_for = None
        self._missing = None  # a stuck stream is timed on one link: a link loss is no firmware fault
        self._fault_said.clear()
        self._said.clear()
        self._awaiting.clear()
        self._rx = bytearray()
        if self._started is None:
            self._started = now_ns
        self._send_hello(now_ns)
        return []

    def restore(self, seq: int | None, boot: int | None, raw: bytes | None = None) -> None:
        """The journal's last durable reliable message (daemon restart): repeats of it are dropped,
        and compared with its bytes (`raw`) where the journal kept them."""
        self.boot = boot
        self.last = self.durable = self.acked = seq if boot is not None else None
        self.taken = {seq: raw} if raw and seq is not None and boot is not None else {}
        self.distrusted = None
        self._missing = self._stuck_said = None

    def receive(self, data: bytes, now_ns: int, utc_ns: int) -> tuple[list[Reading], bool]:
        """Bytes from the shoe: (readings, whether a valid frame arrived)."""
        out: list[Reading] = []
        alive = False
        rx_start = self._decoder.offset
        self._rx += data
        for link_offset, item in self._decoder.feed(data):
            offset = self._base + link_offset
            if isinstance(item, Rejected) and item.kind in NOISE_KINDS:
                self.stats.rejected[item.kind] = self.stats.rejected.get(item.kind, 0) + 1
                self._noise.note(item.kind, item.raw, item.length, item.reason, offset, now_ns, utc_ns)
                continue
            if self._noise.pending is not None:  # the noise before this frame is reported before it
                out += self._noise_readings()
            reading: Reading | list[Reading] | None
            if isinstance(item, Rejected):
                alive = True  # version, type, payload: it passed the CRC, the shoe is there (§7)
                reading = self._rejected(item, offset, now_ns, utc_ns)
            else:
                alive = True
                start = link_offset - rx_start
                raw = bytes(self._rx[start:self._rx.index(0, start) + 1])
                reading = self._message(item, raw, offset, now_ns, utc_ns)
            if isinstance(reading, list):
                out += reading
            elif reading is not None:
                out.append(reading)
        del self._rx[:self._decoder.offset - rx_start]
        if self._noise.due(now_ns):  # noise that goes on: one report per interval
            out += self._noise_readings()
        if alive:
            self._last_rx = now_ns
        return out, alive

    def _noise_readings(self) -> list[Reading]:
        """The noise held, as its one reading (none held: nothing)."""
        return self._noise.readings(self.source, "frame_rejected")

    def tick(self, now_ns: int, utc_ns: int) -> None:
        """Timed sends: Hello until answered, gate until obeyed, hourly time, heartbeat when idle."""
        t = self.timing
        if not self._hello_seen and self._since(self._last_hello_tx, now_ns) >= t.hello_repeat:
            self._send_hello(now_ns)
        if self._hello_seen and not self._incompatible:
            if self._gate_pending() and self._since(self._gate_tx, now_ns) >= t.gate_repeat:
                self._send_gate(now_ns)
            if self._since(self._last_time_tx, now_ns) >= t.set_time_every:
                self._send_time(now_ns, utc_ns)
        if now_ns - self._last_tx >= t.heartbeat * NS:
            uptime_ms = (now_ns - self._started) // 1_000_000 if self._started is not None else 0
            self._send(m.Heartbeat(uptime_ms=uptime_ms % (1 << 32), unacked=0), now_ns)

    def acknowledge(self, reading: Reading, now_ns: int) -> None:
        """The daemon journaled `reading`: acknowledge it (and every earlier one) to the shoe."""
        seq = reading.shoe_seq
        if seq is None or reading.detail.get("boot") != self.boot:
            return  # not reliable, or from a session the shoe has since left
        if self.durable is not None and not rules.seq_after(seq, self.durable):
            return  # already covered by an earlier ack
        self.durable = self.acked = seq
        if self._hello_seen:
            self._send_ack(now_ns)

    def set_gate(self, locked: bool, now_ns: int) -> None:
        self.gate_wanted = locked
        self._gate_tx = None
        if self._hello_seen and not self._incompatible and not self.gateless:
            self._send_gate(now_ns)

    # ----- outputs

    def outgoing(self) -> bytes:
        """Frames to write to the shoe now (taken: the session forgets them)."""
        data = bytes(self._out)
        self._out.clear()
        return data

    def silent(self, now_ns: int) -> bool:
        return now_ns - self._last_rx >= self.timing.silence * NS

    def next_due(self, now_ns: int) -> int:
        """Monotonic ns of the next timed action (send or silence check)."""
        t = self.timing
        due = [self._last_tx + int(t.heartbeat * NS), self._last_rx + int(t.silence * NS)]
        if not self._hello_seen:
            due.append((self._last_hello_tx or now_ns) + int(t.hello_repeat * NS))
        elif self._gate_pending():
            due.append((self._gate_tx or now_ns) + int(t.gate_repeat * NS))
        if (noise_due := self._noise.due_ns()) is not None:
            due.append(noise_due)
        return min(due)

    def noise_due(self, now_ns: int) -> list[Reading]:
        """The noise held for `interval` with no frame behind it, as its one reading (else nothing)."""
        return self._noise_readings() if self._noise.due(now_ns) else []

    # ----- internals

    @staticmethod
    def _since(then: int | None, now_ns: int) -> float:
        return float("inf") if then is None else (now_ns - then) / NS

    def _send(self, msg: m.Message, now_ns: int) -> None:
        # The host has no reliable messages in 1.0: its seq is always 0 (SPEC.md §6.1).
        self._out += encode(msg)
        self._last_tx = now_ns

    def _send_hello(self, now_ns: int) -> None:
        self._send(self.host_hello, now_ns)
        self._last_hello_tx = now_ns

    def _send_time(self, now_ns: int, utc_ns: int) -> None:
        self._send(m.SetTime(utc_ms=utc_ns // 1_000_000), now_ns)
        self._last_time_tx = now_ns
        self._expect_status("set_time")

    def _send_gate(self, now_ns: int) -> None:
        locked = self.gate_wanted
        if locked is None:  # the daemon has asked nothing of the gate yet
            return
        self._send(m.Gate(locked=locked), now_ns)
        self._gate_tx = now_ns
        self._expect_status(("gate", locked))

    def _expect_status(self, what) -> None:
        self._awaiting.append(what)
        del self._awaiting[:-16]  # answers lost on the line must not pile up

    def _send_ack(self, now_ns: int) -> None:
        # Only what the host itself journaled in this boot: never a `last` learned from a heartbeat, which
        # a shoe with a wrong count would take as releasing messages never read.
        if self.acked is None:  # nothing journaled in this boot: nothing to acknowledge
            return
        if self.distrusted is not None:
            return  # the shoe's numbering is not ours: an ack could release a card never read (§6.3)
        self._send(m.Ack(ack=self.acked), now_ns)
        self.stats.acks_sent += 1

    def _gate_pending(self) -> bool:
        if self.gate_wanted is None or self.gateless:
            return False
        return self.status is None or self.status.gate_locked != self.gate_wanted

    def _reading(self, kind: str, raw: bytes, offset: int, now_ns: int, utc_ns: int, **fields) -> Reading:
        return Reading(kind=kind, source=self.source, raw=raw, offset=offset, mono_ns=now_ns, utc_ns=utc_ns, **fields)

    def _once(self, key: str) -> bool:
        if key in self._said:
            return False
        self._said.add(key)
        return True

    def _rejected(self, item: Rejected, offset: int, now_ns: int, utc_ns: int) -> Reading | None:
        self.stats.rejected[item.kind] = self.stats.rejected.get(item.kind, 0) + 1
        detail = {"reject": item.kind, "length": item.length}
        kind = frame_header(item.raw)[0]
        if not self.shuffler and item.kind in ("payload", "type") and kind in SHUFFLER_TYPES:
            return self._not_a_shuffler(f"type 0x{kind:02x}", offset, now_ns, utc_ns)
        if item.kind == "payload":
            # The shoe will repeat this frame and everything behind it waits (§6.3): a fault for the table,
            # said once a seq until a message is taken (a frame's repeats, or frames that alternate, say
            # nothing more: the alarm is raised already).
            seq = frame_header(item.raw)[1]
            if seq in self._fault_said or len(self._fault_said) >= FAULTS_SAID:
                return None
            self._fault_said.add(seq)
            return self._reading("alarm", item.raw, offset, now_ns, utc_ns, code="firmware_fault",
                                 text=f"the shoe sent an impossible message: {item.reason}", detail=detail)
        if item.kind == "version":
            if not self._once("version"):
                return None
            return self._reading("alarm", item.raw, offset, now_ns, utc_ns, code="incompatible_protocol",
                                 text=item.reason, detail=detail)
        if item.kind == "type":
            stuck = self._waiting_on(frame_header(item.raw)[1], item.raw, offset, now_ns, utc_ns)
            if not self._once(f"type:{frame_header(item.raw)[0]}"):
                return stuck  # once a type in a session (a frame's seq and bytes vary at will)
            if stuck is not None:
                return stuck
        return self._reading("warning", item.raw, offset, now_ns, utc_ns, code="frame_rejected", text=item.reason,
                             detail=detail)

    def _message(self, msg: m.Message, raw: bytes, offset: int, now_ns: int,
                 utc_ns: int) -> Reading | list[Reading] | None:
        if isinstance(msg, m.Hello):
            return self._hello(msg, raw, offset, now_ns, utc_ns)
        if isinstance(msg, (m.Heartbeat, m.Status)):
            fault = None
            if self._hello_seen:
                self.old_unacked = msg.unacked
                if self._incompatible or self.distrusted is not None:
                    pass
                elif self.last is None and msg.unacked <= rules.UNACKED_MAX:
                    # No record of this session: where the shoe stands tells us where to start (§6.3).
                    self.last = self.durable = rules.last_taken_from(msg.seq, msg.unacked)
                elif (why := rules.numbering_fault(self.last, self.durable, msg.seq, msg.unacked)) is not None:
                    fault = self._distrust(f"{msg.NAME} seq {msg.seq} unacked {msg.unacked}: {why}", raw, offset,
                                           now_ns, utc_ns, seq=msg.seq, unacked=msg.unacked)
            status = self._status(msg, raw, offset, now_ns, utc_ns) if isinstance(msg, m.Status) else None
            return [r for r in (fault, status) if r is not None]
        if not self.shuffler and isinstance(msg, SHUFFLER_MESSAGES):
            self.stats.rejected["type"] = self.stats.rejected.get("type", 0) + 1
            return self._not_a_shuffler(msg.NAME, offset, now_ns, utc_ns)
        if self.version is not None and msg.MINOR > self.version[1]:
            # Newer than the version agreed in Hello (SPEC.md §8): an unknown type here, never taken.
            self.stats.rejected["type"] = self.stats.rejected.get("type", 0) + 1
            stuck = self._waiting_on(msg.seq, raw, offset, now_ns, utc_ns) if msg.RELIABLE else None
            if self._once(f"newer:{msg.NAME}") and stuck is None:
                return self._reading("warning", raw, offset, now_ns, utc_ns, code="frame_rejected",
                                     text=f"a {msg.NAME} message (protocol 1.{msg.MINOR}) in a session agreed at "
                                     f"{self.version[0]}.{self.version[1]}: ignored", detail={"reject": "type"})
            return stuck
        if not msg.RELIABLE:
            if self._once(f"unexpected:{msg.NAME}"):
                return self._reading("warning", raw, offset, now_ns, utc_ns, code="unexpected_message",
                                     text=f"the shoe sent a {msg.NAME} message, which only a host sends")
            return None
        return self._reliable(msg, raw, offset, now_ns, utc_ns)

    def _not_a_shuffler(self, name: str, offset: int, now_ns: int, utc_ns: int) -> Reading | None:
        """A card-reading shuffler's message on another driver's link: an unknown type for this device, never
        taken nor acknowledged, said once a type, and without its bytes (a chunk of the order, or its digest,
        would be journaled in plain: only the `shuffler` driver seals them)."""
        if not self._once(f"not_shuffler:{name}"):
            return None
        return self._reading("warning", b"", offset, now_ns, utc_ns, code="frame_rejected",
                             text=f"a card-reading shuffler's message ({name}) on a {self.source.split(':')[0]} link: "
                             "not taken; a shuffler is configured with driver = \"shuffler\" and its order_key_file",
                             detail={"reject": "type"})

    def _hello(self, msg: m.Hello, raw: bytes, offset: int, now_ns: int, utc_ns: int) -> Reading | None:
        if _hello_says(msg) == _hello_says(self.host_hello):
            # The host's own Hello come back: a line that echoes what the host sends (an RS-485 adapter
            # in echo mode, a loop-back fault). Never the shoe's: it would bind the session to the
            # host's boot and reset what guards against taking a repeat twice.
            if self._once("line_echo"):
                return self._reading("warning", raw, offset, now_ns, utc_ns, code="line_echo",
                                     text="the line echoes what the host sends (its own hello came back): "
                                     "check the adapter (RS-485 echo, a loop-back)")
            return None
        first_here = not self._hello_seen
        new_boot = msg.boot != self.boot
        ours_is_old = self._since(self._last_hello_tx, now_ns) >= self.timing.hello_repeat
        if msg.boot != self._exchanged_boot:
            # A boot we have not exchanged Hellos with on this link. Soon after our own Hello it is
            # the shoe's answer; otherwise (a restart, an unsolicited Hello) it needs ours.
            answer = self._exchanged_boot is not None or ours_is_old
        else:
            answer = ours_is_old  # the shoe repeats its Hello: it never got ours
        self._hello_seen = True
        self._exchanged_boot = msg.boot
        if answer:
            self._send_hello(now_ns)
        version = rules.negotiate(self.host_hello, msg)
        detail = {
            "vendor": msg.vendor, "model": msg.model, "serial": msg.serial, "firmware": msg.firmware,
            "version": f"{msg.major}.{msg.minor}", "boot": msg.boot,
        }
        identity = (msg.vendor, msg.model, msg.serial)
        other_shoe = self.identity is not None and identity != self.identity
        self.identity = identity
        if new_boot or other_shoe:
            # A new session: the shoe restarted, or another shoe (with the same boot number, an
            # unseeded one's) is on the link: the seqs taken were another session's.
            if new_boot and self.boot is not None:
                # The shoe restarted: what its old session held unacknowledged is gone (§6.4).
                detail["restarted"] = True
                detail["lost_unacked"] = self.old_unacked
            self.boot = msg.boot
            self.last = self.durable = self.acked = None
            self.distrusted = None
            self._missing = self._stuck_said = None
            self.taken.clear()
            self._forged_said.clear()
            self.old_unacked = None
            self.status = None
            self.gateless = False
        if version is None:
            self._incompatible = True
            if not self._once("incompatible"):
                return None
            return self._reading(
                "alarm", raw, offset, now_ns, utc_ns, code="incompatible_protocol",
                text=f"the shoe speaks protocol {msg.major}.{msg.minor}, shoed speaks "
                f"{self.host_hello.major}.{self.host_hello.minor}: nothing is taken from it", detail=detail)
        self._incompatible = False
        self.version = version
        detail["negotiated"] = f"{version[0]}.{version[1]}"
        if not (first_here or new_boot or other_shoe):
            return None
        self._send_time(now_ns, utc_ns)
        if self.gate_wanted is not None and not self.gateless:
            self._send_gate(now_ns)
        self._send_ack(now_ns)  # makes the shoe deliver what it queued meanwhile (§7)
        return self._reading("hello", raw, offset, now_ns, utc_ns, detail=detail)

    def _status(self, msg: m.Status, raw: bytes, offset: int, now_ns: int, utc_ns: int) -> Reading | None:
        self.status = msg
        # The shoe answers set_time, gate and status_request in order, each with a status (§10).
        answers = self._awaiting.pop(0) if self._awaiting else None
        if msg.gate_locked:
            self._unlocked_answers = 0
        elif answers == ("gate", True) and self.gate_wanted and not self.gateless:
            self._unlocked_answers += 1
        if self._unlocked_answers >= GATELESS_AFTER and not self.gateless:
            # A shoe without a gate answers a lock with gate_locked = 0 (§10).
            self.gateless = True
            return self._reading("warning", raw, offset, now_ns, utc_ns, code="no_gate",
                                 text="the shoe has no card gate: set_gate is ignored")
        return None

    def _reliable(self, msg: m.Message, raw: bytes, offset: int, now_ns: int, utc_ns: int) -> Reading | None:
        if not self._hello_seen or self._incompatible or self.last is None:
            return None  # nothing is taken before we know the session and where it stands (§6.3)
        if self.distrusted is not None:
            return None  # the shoe's numbering contradicts ours: nothing of this boot is taken (§6.3)
        verdict = rules.classify(self.last, msg.seq)
        if verdict == rules.DUPLICATE:
            self.stats.duplicates += 1
            first = self.taken.get(msg.seq)
            if first is None and (self.acked is None or rules.seq_after(msg.seq, self.acked)):
                # Neither taken nor acknowledged by us in this boot: not a repeat. The shoe's numbering is
                # off (or the heartbeat we started from was): dropping it would lose it, acking after it too.
                return self._distrust(f"{msg.NAME} seq {msg.seq} is behind seq {self.last}, but the host never "
                                      "took nor acknowledged it", raw, offset, now_ns, utc_ns, seq=msg.seq)
            if first is not None and first != raw and msg.seq not in self._forged_said:
                # Not a repeat: another frame under a seq already taken. One of the two was not the shoe's.
                # Said once a seq (the table is held at the first): more frames under it are counted only.
                self._forged_said.add(msg.seq)
                if len(self._forged_said) > TAKEN_KEPT:
                    self._forged_said.discard(next(iter(self._forged_said)))
                return self._reading("forged_frame", raw, offset, now_ns, utc_ns, code="forged_frame",
                                     text=f"a different frame under shoe seq {msg.seq}, already taken",
                                     detail={"seq": msg.seq, "boot": self.boot, "taken": first.hex()})
            self._send_ack(now_ns)  # our earlier ack may have been lost
            return None
        if verdict == rules.GAP:
            self.stats.gaps += 1
            expected = rules.seq_next(self.last)
            stuck = self._waiting_on(expected, raw, offset, now_ns, utc_ns)
            if self._gap_for == expected:
                return stuck
            self._gap_for = expected
            return self._reading("warning", raw, offset, now_ns, utc_ns, code="seq_gap",
                                 text=f"seq {msg.seq} arrived while {expected} was due: the shoe will repeat from it",
                                 detail={"expected": expected, "got": msg.seq, "boot": self.boot})
        self.last = msg.seq
        self._gap_for = None
        self._missing = None
        self._fault_said.clear()
        self.stats.taken += 1
        self.taken[msg.seq] = raw
        if len(self.taken) > TAKEN_KEPT:
            del self.taken[next(iter(self.taken))]
        return self._reading(**self._fields(msg), raw=raw, offset=offset, now_ns=now_ns, utc_ns=utc_ns)

    def _distrust(self, why: str, raw: bytes, offset: int, now_ns: int, utc_ns: int, **detail) -> Reading | None:
        """The shoe's numbering contradicts the host's (SPEC.md §6.3): take and acknowledge nothing more of
        this boot (an ack could release a card never read), and say so once."""
        self.distrusted = why
        if not self._once("numbering"):
            return None
        return self._reading("alarm", raw, offset, now_ns, utc_ns, code="firmware_fault",
                             text=f"the shoe's numbering contradicts the host's ({why}): nothing more is taken "
                             "from this shoe session until the shoe restarts (a boot number reused, or a firmware "
                             "fault)",
                             detail={"boot": self.boot, "last": self.last, "durable": self.durable, **detail})

    def _waiting_on(self, seq: int | None, raw: bytes, offset: int, now_ns: int, utc_ns: int) -> Reading | None:
        """A frame arrived while `seq` (the next one due, else ignored) is missing: once it has been missing for
        STUCK_AFTER, the card stream is stuck on a frame the host never takes (§6.3), said once for that seq."""
        if self.last is None or seq != rules.seq_next(self.last) or self.distrusted is not None:
            return None
        if seq in self._fault_said:
            return None  # an impossible frame under this seq: its firmware_fault is raised already
        if self._missing is None or self._missing[0] != seq:
            self._missing = (seq, now_ns)
            return None
        if now_ns - self._missing[1] < STUCK_AFTER * NS or self._stuck_said == seq:
            return None
        self._stuck_said = seq
        return self._reading("alarm", raw, offset, now_ns, utc_ns, code="firmware_fault",
                             text=f"card stream stuck: seq {seq} has been missing for "
                             f"{(now_ns - self._missing[1]) / NS:.1f} s while the shoe repeats a frame the host "
                             "never takes; no card behind it is taken",
                             detail={"expected": seq, "boot": self.boot})

    def _fields(self, msg: m.Message) -> dict:
        base = {"shoe_seq": msg.seq, "detail": {"boot": self.boot}}
        if isinstance(msg, m.CardRead) and msg.confidence / 255 < self.confidence_floor:
            # Below the floor the card was not read: never dealt on a guess, entered by hand.
            return {**base, "kind": "unreadable", "mode": MODES[msg.mode], "code": "low_confidence",
                    "confidence": msg.confidence / 255}
        if isinstance(msg, m.CardRead):
            return {**base, "kind": "card", "card": m.card_text(msg), "mode": MODES[msg.mode],
                    "confidence": msg.confidence / 255, "faced": msg.faced}
        if isinstance(msg, m.Unreadable):
            return {**base, "kind": "unreadable", "mode": MODES[msg.mode],
                    "code": UNREADABLE_CODES.get(msg.reason, f"vendor_{msg.reason}")}
        if isinstance(msg, m.Draw):
            # A plain shoe's card out, without its identity (SPEC.md §5.22): the table takes it from the order.
            return {**base, "kind": "draw", "mode": MODES[msg.mode],
                    "code": m.DRAW_TRIGGERS.get(msg.trigger, f"vendor_{msg.trigger}")}
        if isinstance(msg, m.Button):
            return {**base, "kind": "button", "button": m.BUTTON_NAMES[msg.button]}
        if isinstance(msg, m.Tamper):
            return {**base, "kind": "tamper", "code": TAMPER_SOURCES.get(msg.source, f"sensor_{msg.source}"),
                    "detail": {"boot": self.boot, "active": msg.active}}
        if isinstance(msg, m.Alarm):
            # The shoe's own words, on one printable line: they reach logs and surveillance's screens
            # (an ESC would drive a terminal); the frame itself is kept as it came (`raw`).
            return {**base, "kind": "alarm", "code": str(msg.code), "text": one_line(msg.text)}
        if msg.MINOR >= 1:
            # A shuffler's report (SPEC.md §5.15): its fields as they came, in the reading's detail.
            return {**base, "kind": msg.NAME, "detail": {"boot": self.boot, **shuffler_detail(msg)}}
        return {**base, "kind": msg.NAME}  # cut_card, shoe_removed, shoe_inserted


def shuffler_detail(msg: m.Message) -> dict:
    """The fields of a shuffler message (protocol 1.1) as JSON-ready values: card lists as lists of texts."""
    out = {}
    for name in msg.__dataclass_fields__:
        if name != "seq":
            value = getattr(msg, name)
            out[name] = list(value) if isinstance(value, tuple) else value
    if isinstance(msg, m.ShufflerError):
        out["text"] = one_line(msg.text)  # one printable line, as an alarm's text
        out["fault_name"] = m.SHUFFLER_FAULT_NAMES.get(msg.fault, f"vendor_{msg.fault}")
    return out


def frame_header(raw: bytes) -> tuple[int | None, int | None]:
    """The (type, seq) a frame's bytes say, each where its stuffing can be undone and the bytes
    reach it (None otherwise): what a rejected frame, or any stretch of a link, claims to be."""
    content = cobs_decode(raw[:-1] if raw.endswith(b"\0") else raw)
    if content is None:
        return None, None
    return (content[1] if len(content) >= 2 else None,
            int.from_bytes(content[2:4], "little") if len(content) >= 4 else None)


def _hello_says(hello: m.Hello) -> tuple:
    """What a Hello says of its sender (its seq aside)."""
    return (hello.major, hello.minor, hello.vendor, hello.model, hello.serial, hello.firmware, hello.boot)
