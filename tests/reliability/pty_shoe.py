"""A scripted shoe on a real pseudo-terminal, for the reliability tests and the latency benchmark.

The virtual shoe's own firmware (`shoed.simulate.firmware.Firmware`: numbered
messages kept until acknowledged, Hello exchange, gate, heartbeats) on the
virtual shoe's own pseudo-terminal link (`shoed.simulate.link.PtyLink`,
reached through a symlink like /dev/serial/by-id). What it sends is not dealt
by a virtual dealer but offered message by message by its owner, so a test can
stop the table exactly where it wants it (a coup open, a card due) and a
benchmark knows the instant each card frame was written.

Single-threaded: the owner calls `service()` (or runs `ShoeThread`). Every
wait has a deadline.
"""

from __future__ import annotations

import select
import threading
import time
from collections.abc import Callable

from firmware_protocol import Decoder, encode
from firmware_protocol import messages as m
from shoed.simulate.firmware import Firmware
from shoed.simulate.link import PtyLink

SETTLE = 0.1  # seconds after the host opens the port before the shoe talks (its input buffer is flushed)


class ShoeTimeout(AssertionError):
    """The shoe waited longer than its deadline (for the host, the gate or an ack)."""


class PtyShoe:
    """A native-protocol shoe on a pty behind `symlink`."""

    def __init__(self, symlink: str, serial: str = "RS-0001", boot: int = 0x0B00_7001, gate: str = "locked") -> None:
        self.link = PtyLink(symlink)
        self.path = self.link.open()
        self.fw = Firmware(serial, boot, start=time.monotonic(), gate=gate)
        self.decoder = Decoder()
        self.attached_at: float | None = None
        self.greeted = False
        self.written_ns: dict[int, int] = {}  # seq -> monotonic ns when its frame was first written
        self.host_messages: list[m.Message] = []
        self.lock = threading.RLock()

    # ----- the loop ------------------------------------------------------------
    def fileno(self) -> int | None:
        return self.link.master

    def service(self, timeout: float = 0.0) -> None:
        """Wait up to `timeout` for the host; answer it; send what is due."""
        with self.lock:
            fds = self.link.read_fds()
        if fds:
            readable = set(select.select(fds, [], [], max(0.0, timeout))[0])
        else:
            time.sleep(max(0.0, min(timeout, 0.01)))
            readable = set()
        with self.lock:
            now = time.monotonic()
            attached = self.link.attached()
            if not attached:
                self.attached_at, self.greeted = None, False
                return
            if self.attached_at is None:
                self.attached_at = now
                self.decoder = Decoder()
            if now - self.attached_at < SETTLE:
                return
            if not self.greeted:
                self.greeted = True
                self._send(self.fw.attached(now))
            data = self.link.service(readable)
            for _, item in self.decoder.feed(data):
                if hasattr(item, "TYPE"):
                    self.host_messages.append(item)
                    self._send(self.fw.on_host(item, now))
            self._send(self.fw.due(now))
            self.link.flush()

    def _send(self, messages: list[m.Message]) -> None:
        if not messages:
            return
        data = b"".join(encode(msg) for msg in messages)
        stamp = time.monotonic_ns()
        for msg in messages:
            if msg.RELIABLE and msg.seq not in self.written_ns:
                self.written_ns[msg.seq] = stamp
        self.link.send(data)
        self.link.flush()

    # ----- what the shoe reports ------------------------------------------------------
    def offer(self, msg: m.Message) -> int:
        """Number a reliable message and send it now if the window allows; returns its seq."""
        with self.lock:
            now = time.monotonic()
            msg, out = self.fw.queue_message(msg, now)
            if self.greeted:
                self._send(out)
            return msg.seq

    def wait(self, predicate: Callable[[], bool], timeout: float, what: str,
             pump: Callable[[float], None] | None = None) -> None:
        """Service the link until `predicate()` holds (pump: the owner's own wait, e.g. on a socket)."""
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() >= deadline:
                raise ShoeTimeout(f"shoe: timed out after {timeout:g} s waiting for {what}")
            if pump is None:
                self.service(0.005)
            else:
                pump(0.005)

    def forge(self, msg: m.Message) -> None:
        """Someone else on the line: write `msg` (its seq as given) made by the reference encoder,
        outside the shoe's firmware, which knows nothing of it."""
        with self.lock:
            self.link.send(encode(msg))
            self.link.flush()

    @property
    def next_seq(self) -> int:
        """The seq the shoe's firmware gives its next reliable message."""
        from firmware_protocol import session

        return session.seq_next(self.fw.last_seq)

    @property
    def host_ready(self) -> bool:
        return self.fw.host_hello is not None

    @property
    def gate_open(self) -> bool:
        return self.fw.card_may_pass()

    @property
    def unacked(self) -> int:
        return self.fw.unacked

    def close(self) -> None:
        with self.lock:
            self.link.close()


class ShoeThread:
    """Runs `PtyShoe.service` in a background thread, for tests that talk to the daemon meanwhile."""

    def __init__(self, shoe: PtyShoe) -> None:
        self.shoe = shoe
        self.stop_event = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="pty-shoe", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            while not self.stop_event.is_set():
                self.shoe.service(0.005)
        except BaseException as exc:  # noqa: BLE001 - reported by the test through .error
            self.error = exc

    def wait(self, predicate: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if self.error is not None:
                raise self.error
            if time.monotonic() >= deadline:
                raise ShoeTimeout(f"shoe: timed out after {timeout:g} s waiting for {what}")
            time.sleep(0.005)

    def stop(self) -> None:
        self.stop_event.set()
        self.thread.join(5)
        self.shoe.close()


def card(text: str, burn: bool = False) -> m.CardRead:
    """A CardRead for "9H", "TD"... (mode burn for burn cards)."""
    from shoed.rules.cards import parse_card

    c = parse_card(text)
    return m.CardRead(rank=c.rank, suit=m.WIRE_SUITS.index(c.suit), confidence=255,
                      mode=m.MODE_BURN if burn else m.MODE_GAME)


def button(name: str) -> m.Button:
    codes = {v: k for k, v in m.BUTTON_NAMES.items()}
    return m.Button(button=codes[name])

