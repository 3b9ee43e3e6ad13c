"""The virtual shoe: a dealer, a shoe's firmware and a cable, run in a background thread.

The thin shell around the pure parts: the virtual dealer (dealer.py) decides
what happens at the table, the firmware (firmware.py) keeps the native
protocol's promises, the noise (faults.py) spoils the bytes as the plan says,
and the link (link.py) carries them on a real pseudo-terminal or TCP socket.
This module only keeps time and moves bytes between them.

    shoe = VirtualShoe(ruleset="punto-banco", protocol="native", seed=1, pace=0.0)
                                 # plain=True: a shoe that reads no card, each card out a draw
    path = shoe.start()          # open `path` with the daemon's driver
    shoe.wait_done(timeout=30)   # every event sent (native: and acknowledged)
    truth = shoe.truth           # what was really dealt, in order
    shoe.stop()
"""

from __future__ import annotations

import json
import os
import random
import secrets
import select
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Self

from shoed.files import is_stream
from shoed.rules.ruleset import Ruleset, load_ruleset, with_decks
from shoed.simulate.dealer import (
    BUTTON,
    CARD,
    CUT_CARD,
    EXTRA,
    SHOE_REMOVED,
    UNREADABLE,
    DealSetup,
    ShoeEvent,
    deal,
)
from shoed.simulate.faults import FaultPlan, LinkNoise, LinkStats
from shoed.simulate.link import Link, open_link

if TYPE_CHECKING:
    from firmware_protocol import Message
    from shoed.simulate.firmware import Firmware

PROTOCOLS = ("native", "beetek")
PLAIN_MODEL = "virtual plain shoe"  # the model a plain shoe says in its Hello
# Seconds the shoe waits after a host attaches before it talks: the host's
# serial library clears its input buffer when it opens the port.
SETTLE = 0.1
# Longest sleep of the loop: how soon it notices a host attaching or a stop().
TICK = 0.02
# Output kept for a slow reader before the dealer waits for it.
LOW_WATER = 4096
# The link entries a shoe made without `keep_truth` keeps in memory (the truth file has them all).
WIRE_LOG_KEPT = 1000




class SimulatorError(RuntimeError):
    """The virtual shoe cannot run as asked (the message says why)."""


@dataclass(slots=True)
class _Running:
    """What start() opens, whole: the link, the pipe that wakes the loop, and the loop's thread."""

    link: Link
    wake_r: int
    wake_w: int
    thread: threading.Thread
    closed: bool = False


class VirtualShoe:
    """A shoe that deals by the ruleset and speaks `native` or `beetek` on a real link."""

    def __init__(
        self,
        ruleset: str | Ruleset = "punto-banco",
        protocol: str = "native",
        seed: int | None = None,
        pace: float = 0.0,
        faults: FaultPlan | None = None,
        shoes: int = 1,
        link: str | None = None,
        listen: str | None = None,
        decks: int | None = None,
        cut_from_end: int | None = None,
        serial: str | None = None,
        truth_file: str | Path | IO[str] | None = None,
        settle: float = SETTLE,
        gate: str = "locked",
        orders: tuple[tuple[str, ...], ...] = (),
        ready=None,
        plain: bool = False,
        may_remove=None,
        resume: dict | None = None,
        keep_truth: bool = True,
    ):
        if protocol not in PROTOCOLS:
            raise SimulatorError(f"protocol is one of {', '.join(PROTOCOLS)}, not {protocol!r}")
        if plain and protocol != "native":
            raise SimulatorError("a plain shoe speaks the native protocol 1.1 (its draws are 1.1 messages)")
        from shoed.simulate.firmware import GATES

        if gate not in GATES:
            raise SimulatorError(f"gate is one of {', '.join(GATES)}, not {gate!r}")
        if not isinstance(pace, (int, float)) or pace < 0:
            raise SimulatorError(f"pace is a number of seconds between cards (0 or more), not {pace!r}")
        rules = load_ruleset(ruleset) if isinstance(ruleset, (str, Path)) else ruleset
        if decks is not None:
            rules = with_decks(rules, decks)
        self.seed = secrets.randbits(32) if seed is None else int(seed)
        self.faults = faults or FaultPlan()
        self.setup = DealSetup(rules, seed=self.seed, shoes=shoes, cut_from_end=cut_from_end, faults=self.faults,
                               orders=tuple(orders), resume=resume)
        self.protocol = protocol
        self.pace = float(pace)
        self.settle = settle
        self.gate = gate
        self.plain = bool(plain)  # reads no card: each card out is a draw (protocol 1.1)
        self.boot = secrets.randbits(32)  # drawn at every start, like a power-on: never from the seed
        self.serial = serial or f"VS-{self.seed & 0xFFFFFFFF:08X}"
        self._link_path = link
        self.ready = ready  # a callable: nothing is dealt until it returns True (the shuffler has handed over)
        # A callable of the shoe's number: a shoe that ended at its last coup is not taken out until it
        # returns True (the table has finished the shoe: its last coup confirmed, every misdeal put right).
        self.may_remove = may_remove
        self._listen = listen
        self._truth_target = truth_file
        # Every event in memory (`truth`, `wire_log`) only where asked: a shoe that deals without end
        # (`shoed simulate --shoes 0`, the daemon's embedded shoe) writes them to its truth file and
        # keeps the counts and the last few link entries.
        self.keep_truth = keep_truth
        self._truth: list[ShoeEvent] = []
        self.wire_log: deque[dict] = deque(maxlen=None if keep_truth else WIRE_LOG_KEPT)  # link faults and plug events
        self.events_out = 0  # events put out so far
        self.cards_out = 0  # of them, cards (read or not)
        self.last_out: ShoeEvent | None = None
        self._last_game_coup: int | None = None  # the coup of the last game card out
        # Called in the shoe's thread with each event as it goes out (the follower's dealer reads
        # the cards it holds from them).
        self.listeners: list[Callable[[ShoeEvent], None]] = []
        self.link_stats = LinkStats()
        self.error: BaseException | None = None
        self.address: str | None = None
        self._running: _Running | None = None  # from start() on
        self._stop = threading.Event()
        self._done = threading.Event()
        self._truth_io: IO[str] | None = None
        self._own_truth_io = False
        self.firmware: Firmware | None = None  # the native shoe's, once its loop runs
        self._loop: _Loop | None = None
        self.holding = threading.Event()  # the dealer waits for the table (a misdeal being corrected)
        # Set where a follower watches the table (follow.py): after each confirm the dealer deals no card
        # until the table has answered it (coup.confirmed; a refused confirm holds the deal until it is put right).
        self.confirm_waits = False
        self.answer_due = threading.Event()  # a confirm was pressed: the table's answer is awaited
        self._deal_lock = threading.Lock()  # the script of the deal: the loop's, or abandon_coup's

    # ----- public API ----------------------------------------------------------
    @property
    def truth(self) -> list[ShoeEvent]:
        """Every event the shoe has put out so far, in order (a shoe made with `keep_truth`)."""
        if not self.keep_truth:
            raise SimulatorError("this virtual shoe keeps no truth in memory (its truth file has every event)")
        return list(self._truth)

    @property
    def slave_path(self) -> str | None:
        """The current pty slave (changes at every replug); None for a socket."""
        return getattr(self._running.link, "slave_path", None) if self._running is not None else None

    def start(self) -> str:
        """Open the link and start dealing in a background thread; returns the
        path (the symlink when one was asked for) or socket:// URL to open."""
        if self._running is not None:
            raise SimulatorError("this virtual shoe is already running")
        if self.protocol == "native":
            import firmware_protocol  # noqa: F401  (fail here, not in the thread)
        if isinstance(self._truth_target, (str, Path)):
            # Open for the shoe's whole run; stop() closes it. A new file: one already there (an earlier
            # run's truth, a journal file) is never truncated; a pipe or a device is written as it is.
            mode = "a" if is_stream(self._truth_target) else "x"
            self._truth_io = open(self._truth_target, mode, encoding="utf-8")  # noqa: SIM115
            self._own_truth_io = True
        elif self._truth_target is not None:
            self._truth_io = self._truth_target
        link = open_link(self._listen, self._link_path)
        try:
            opened = link.open()
        except BaseException:
            if self._own_truth_io and self._truth_io is not None:
                self._truth_io.close()
            self._truth_io = None
            raise
        self.address = address = link.address or opened
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_r, False)
        thread = threading.Thread(target=self._main, args=(link, wake_r), name="virtual-shoe", daemon=True)
        self._running = _Running(link, wake_r, wake_w, thread)
        thread.start()
        return address

    def wait_done(self, timeout: float) -> bool:
        """Wait until every event is out (native: and acknowledged by the host).
        True when done; False on timeout. Raises SimulatorError if the shoe failed."""
        deadline = time.monotonic() + timeout
        while not self._done.wait(min(0.05, max(0.0, deadline - time.monotonic()))):
            if self.error is not None:
                raise SimulatorError(f"the virtual shoe stopped: {self.error}") from self.error
            if time.monotonic() >= deadline or (self._running is not None and not self._running.thread.is_alive()):
                break
        if self.error is not None:
            raise SimulatorError(f"the virtual shoe stopped: {self.error}") from self.error
        return self._done.is_set()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def take_confirm(self) -> bool:
        """The dealer confirms at the table instead of with the shoe's button: True when the
        coup's confirm was still to come from the shoe (it is not sent now)."""
        with self._deal_lock:
            loop = self._loop
            if loop is None:
                return False
            event = loop.pending
            if event is None or event.kind != BUTTON or event.button != "confirm" or event.fault is not None:
                return False
            loop.pending = loop._next()
            return True

    def abandon_coup(self) -> bool:
        """The table voided the coup being dealt: the dealer deals no more of it (its cards go to
        the discards with the void). True when the coup's own confirm was still to come, so the
        dealer owes the table the confirm of the void; False when it is already on its way."""
        with self._deal_lock:
            loop = self._loop
            return loop.abandon_coup() if loop is not None else False

    def stop(self, timeout: float = 5.0) -> None:
        """Stop dealing and close the link (prompt: the loop wakes at once)."""
        self._stop.set()
        running = self._running
        if running is not None and not running.closed:
            try:
                os.write(running.wake_w, b"x")
            except OSError:
                pass
            running.thread.join(timeout)
            running.link.close()
            os.close(running.wake_r)
            os.close(running.wake_w)
            running.closed = True
        truth, self._truth_io = self._truth_io, None
        if truth is not None and self._own_truth_io:
            try:
                truth.close()
            except OSError as exc:  # what was left to write: reported already if the shoe stopped on it
                if self.error is None:
                    raise SimulatorError(f"cannot write the truth to {self._truth_target}: {exc.strerror or exc}") from None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # ----- what this device sends (the virtual shuffler overrides these) -------
    def _events(self):
        return deal(self.setup)

    def _firmware_options(self) -> dict:
        return {"minor": 1, "model": PLAIN_MODEL} if self.plain else {}

    def _native_message(self, event):
        from shoed.simulate.wire import native_message

        return native_message(event, plain=self.plain)

    # ----- the loop ------------------------------------------------------------
    def _main(self, link: Link, wake_r: int) -> None:
        try:
            loop = _Loop(self, link, wake_r)
            with self._deal_lock:
                self._loop = loop
            loop.run()
        except Exception as exc:  # noqa: BLE001 - any failure of the thread is reported by wait_done() and .error
            self.error = exc

    def _record(self, event: ShoeEvent) -> None:
        self.events_out += 1
        self.last_out = event
        if event.is_card:
            self.cards_out += 1
            if event.mode == "game":
                self._last_game_coup = event.coup_number
        if self.keep_truth:
            self._truth.append(event)
        self._write_truth(event.to_json())
        for listener in self.listeners:
            listener(event)

    def _record_wire(self, entry: dict) -> None:
        self.wire_log.append(entry)
        self._write_truth(entry)

    def _write_truth(self, obj: dict) -> None:
        if self._truth_io is not None:
            try:
                self._truth_io.write(json.dumps(obj, separators=(",", ":")) + "\n")
                self._truth_io.flush()
            except OSError as exc:
                raise SimulatorError(f"cannot write the truth to {self._truth_target}: {exc.strerror or exc}") from None


class _Native:
    """The native protocol's side of the loop: the shoe's firmware, and the decoder of what the host sends."""

    def __init__(self, shoe: VirtualShoe, now: float):
        from firmware_protocol import Decoder, encode
        from shoed.simulate.firmware import Firmware

        self.encode = encode
        self.new_decoder = Decoder
        self.decoder = Decoder()
        self.fw = Firmware(shoe.serial, shoe.boot, start=now, gate=shoe.gate, **shoe._firmware_options())


class _Loop:
    """The shoe's main loop; lives in the background thread."""

    def __init__(self, shoe: VirtualShoe, link: Link, wake_r: int):
        self.shoe = shoe
        self.link = link
        self.wake_r = wake_r
        self.plan = shoe.faults
        self.noise = LinkNoise(self.plan, random.Random(f"shoed-simulate:{shoe.seed}:link"), shoe.link_stats)
        self.events = shoe._events()
        self.held: deque[ShoeEvent] = deque()  # kept back by abandon_coup
        self.pending: ShoeEvent | None = next(self.events, None)
        self.now = time.monotonic()
        self.next_card_at = self.now
        self.attached_since: float | None = None
        self.greeting: list[Message] | None = None
        self.replug_at: float | None = None
        # Set: the link is to be unplugged once what was already on its way is written, by then at the latest.
        self.unplug_by: float | None = None
        self.disconnect_at = set(self.plan.disconnect_at)
        every = self.plan.disconnect_every
        self.next_disconnect = self.now + every if every else None
        self.native: _Native | None = None  # None: the Bee-Tek shoe, which takes nothing from the host
        if shoe.protocol == "native":
            self.native = _Native(shoe, self.now)
            shoe.firmware = self.native.fw

    def run(self) -> None:
        shoe = self.shoe
        while not shoe._stop.is_set():
            self.now = time.monotonic()
            self.plug_schedule()
            self.watch_host()
            readable = self.wait()
            if shoe._stop.is_set():
                return
            self.now = time.monotonic()
            self.watch_host()
            self.take_host_input(readable)
            with shoe._deal_lock:
                self.release_events()
            if self.native is not None and self.ready():
                self.write_all(self.native, self.native.fw.due(self.now))
            self.link.flush()
            shoe.link_stats.dropped_bytes = self.link.dropped
            self.check_done()

    # ----- plugging ------------------------------------------------------------
    def plug_schedule(self) -> None:
        now = self.now
        if self.replug_at is not None and now >= self.replug_at:
            self.link.replug()
            self.replug_at = None
            self.shoe._record_wire({"kind": "link", "link": "replugged", "address": self.link.address})
        every = self.plan.disconnect_every
        if self.next_disconnect is not None and every is not None and now >= self.next_disconnect:
            self.next_disconnect = now + every
            if self.replug_at is None:
                self.unplug_by = now + 1.0
        if self.unplug_by is not None and (not self.link.pending or now >= self.unplug_by):
            # Unplugged once what was already on its way is written (or after a second at most).
            self.unplug_by = None
            self.link.unplug()
            self.shoe.link_stats.disconnects += 1
            self.replug_at = now + self.plan.reconnect_after
            after = self.shoe.last_out.n if self.shoe.last_out is not None else None
            self.shoe._record_wire({"kind": "link", "link": "unplugged", "after": after})

    def watch_host(self) -> None:
        attached = self.link.plugged and self.link.attached()
        if not attached:
            self.attached_since = None
            self.greeting = None
            return
        native = self.native
        if self.attached_since is None:
            self.attached_since = self.now
            if native is not None:
                # Like a USB shoe that sees DTR rise: a new Hello exchange (SPEC.md §2, §8).
                self.greeting = native.fw.attached(self.now)
                native.decoder = native.new_decoder()
        if native is not None and self.greeting is not None and self.ready():
            if native.fw.host_hello is None:  # the host may have spoken first
                self.write_all(native, self.greeting)
            self.greeting = None

    def ready(self) -> bool:
        """A host is attached and settled: the shoe may talk."""
        return self.attached_since is not None and self.now - self.attached_since >= self.shoe.settle

    def wait(self) -> set[int]:
        link = self.link
        rfds = [self.wake_r]
        if link.plugged:
            rfds += link.read_fds()
        wfds = [fd for fd in [link.write_fd()] if fd is not None]
        timeout = TICK
        if self.native is not None and self.ready():
            timeout = min(timeout, self.native.fw.next_deadline(self.now) - self.now)
        if self.pending is not None and self.pace_wait() > 0:
            timeout = min(timeout, self.pace_wait())
        r, _, _ = select.select(rfds, wfds, [], max(0.0, timeout))
        if self.wake_r in r:
            try:
                os.read(self.wake_r, 64)
            except OSError:
                pass
        return set(r)

    def pace_wait(self) -> float:
        if self.pending is not None and self.pending.kind in (CARD, UNREADABLE):
            return self.next_card_at - self.now
        return 0.0

    # ----- from the host -------------------------------------------------------
    def take_host_input(self, readable: set[int]) -> None:
        if self.attached_since is None and self.link.attached():
            return  # a host just arrived: its session starts at the next turn of the loop
        data = self.link.service(readable)
        native = self.native
        if not data or native is None:
            return  # the Bee-Tek shoe takes nothing from the host
        from firmware_protocol import Message

        for _, item in native.decoder.feed(data):
            if isinstance(item, Message):  # not a Rejected stretch
                self.write_all(native, native.fw.on_host(item, self.now))

    # ----- to the host ---------------------------------------------------------
    def write_all(self, native: _Native, messages: Iterable[Message]) -> None:
        for msg in messages:
            self.write_frame(native.encode(msg), getattr(msg, "NAME", ""), msg.seq, None)

    def write_frame(self, frame: bytes, name: str, seq: int | None, n: int | None) -> None:
        data, applied = self.noise.apply(frame)
        if applied:
            entry: dict[str, object] = {"kind": "wire", "message": name, "faults": applied}
            if seq is not None:
                entry["seq"] = seq
            if n is not None:
                entry["n"] = n
            self.shoe._record_wire(entry)
        before = self.link.dropped
        self.link.send(data)
        if self.link.dropped > before:
            dropped: dict[str, object] = {"kind": "wire", "message": name, "faults": ["dropped"]}
            if n is not None:
                dropped["n"] = n
            self.shoe._record_wire(dropped)

    def may_release(self, event: ShoeEvent) -> bool:
        if self.unplug_by is not None or (self.shoe.ready is not None and not self.shoe.ready()):
            return False
        link_free = len(self.link.pending) < LOW_WATER
        if self.shoe.pace == 0 and not (self.ready() and link_free):
            return False  # as fast as the link allows: nobody listening allows nothing
        if not link_free:
            return False
        if event.kind in (CARD, UNREADABLE) and self.now < self.next_card_at:
            return False
        if event.kind in (CARD, UNREADABLE) and (self.shoe.holding.is_set() or self.shoe.answer_due.is_set()):
            return False  # the dealer waits until the table has the misdeal corrected, or the confirm answered
        if event.kind == SHOE_REMOVED and event.last and self.shoe.may_remove is not None \
                and not self.shoe.may_remove(event.shoe):
            return False  # the dealer takes the shoe out once the table has finished it
        if self.native is not None:
            if event.kind in (CARD, UNREADABLE, CUT_CARD) and not self.native.fw.card_may_pass():
                return False  # the gate holds the next card back
            if not self.native.fw.may_queue(self.shoe.pace == 0):
                return False  # window (pace 0) or queue (dealer's pace) full: hold the cards back
        return True

    def release_events(self) -> None:
        from shoed.simulate.wire import beetek_token

        native = self.native
        while self.pending is not None and not self.shoe._stop.is_set():
            event = self.pending
            if native is not None and isinstance(event, ShoeEvent) and event.recipient == EXTRA \
                    and not native.fw.card_may_pass():
                # A careful dealer cannot draw a card past the locked gate: the extra card stays in.
                self.pending = self._next()
                continue
            if not self.may_release(event):
                return
            self.shoe._record(event)
            if native is not None:
                _, now_out = native.fw.queue_message(self.shoe._native_message(event), self.now)
                if self.attached_since is not None:  # (sent only after the host's Hello)
                    for out in now_out:
                        self.write_frame(native.encode(out), out.NAME, out.seq, event.n)
            else:
                token = beetek_token(event)
                if token is not None:
                    self.write_frame(token, event.kind, None, event.n)
            if self.shoe.confirm_waits and event.kind == BUTTON and event.button == "confirm":
                self.shoe.answer_due.set()
            if getattr(event, "unplug_after", False):
                self.unplug_by = self.now + 1.0  # the virtual shuffler's lost link, mid-order
            if event.kind in (CARD, UNREADABLE):
                self.next_card_at = self.now + self.shoe.pace
                if event.number in self.disconnect_at:
                    self.disconnect_at.discard(event.number)
                    self.unplug_by = self.now + 1.0
            self.pending = self._next()
            if self.shoe.pace and event.kind in (CARD, UNREADABLE):
                return  # one card per pace interval

    def _next(self) -> ShoeEvent | None:
        return self.held.popleft() if self.held else next(self.events, None)

    def abandon_coup(self) -> bool:
        """Drop the cards and buttons still to come of the coup being dealt, up to and with its
        confirm; what is not the dealer's (the cut card, the shoe's own events) still comes."""
        number = self.shoe._last_game_coup
        if number is None or self.pending is None or self.pending.coup_number != number:
            return False
        kept: list[ShoeEvent] = []
        event: ShoeEvent | None = self.pending
        while event is not None:
            if event.coup_number != number:
                kept.append(event)  # the next coup's, or the shoe's: not dropped
                break
            if event.kind == BUTTON and event.button == "confirm" and event.fault is None:
                break  # the coup's own confirm: the dealer confirms the void instead
            if not (event.is_card or event.kind == BUTTON):
                kept.append(event)
            event = self._next()
        self.held.extendleft(reversed(kept))
        self.pending = self._next()
        return True

    def check_done(self) -> None:
        if self.pending is not None or self.shoe._done.is_set():
            return
        if self.native is not None and self.native.fw.unacked:
            return
        if self.link.pending or self.link.unread():
            return  # a Bee-Tek host reads at its own pace: the last cards are dealt once it has them
        self.shoe._done.set()
