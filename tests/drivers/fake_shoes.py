"""Test shoes for the driver tests: a shoe's protocol end, a real pseudo-terminal, a runner thread.

`FakeShoe` is the shoe side of firmware_protocol/SPEC.md written small for
tests (queue, window of 16, go-back-N after 200 ms, Hello exchange, status
answers); it is independent of the driver under test. `PtyCable` is a real
pseudo-terminal whose slave is reached through a symlink (like
/dev/serial/by-id), so unplugging (closing the master) and replugging (a new
pty, the symlink repointed) look to the driver like a USB shoe coming and
going. `ShoeRunner` pumps bytes between them in a thread, as firmware would.
"""

from __future__ import annotations

import dataclasses
import os
import select
import socket
import threading
import time
import tty

from firmware_protocol import Decoder, Rejected, encode
from firmware_protocol import messages as m
from firmware_protocol import session as rules


class FakeShoe:
    """The shoe's side of the protocol, from SPEC.md §6.2 and §8."""

    def __init__(self, boot: int = 0x5EED1234, window: int = rules.WINDOW, gate: bool = True, minor: int = 0) -> None:
        self.boot = boot
        self.minor = minor  # 0: a 1.0 shoe; 1: a 1.1 card-reading shuffler
        self.window = window
        self.has_gate = gate
        self.count = 0  # seq of the last reliable message made
        self.queue: list[m.Message] = []  # unacknowledged, oldest first
        self.sent_upto = 0  # how many of the queue's messages were sent since the window was last (re)sent
        self.decoder = Decoder()
        self.out = bytearray()
        self.host_messages: list[m.Message] = []
        self.host_rejects: list[Rejected] = []
        self.got_host_hello = False
        self.gate_locked = True  # SPEC.md §10: a gate starts locked
        self.utc_ms = 0
        self.last_progress = time.monotonic()
        self.lock = threading.RLock()

    # -- the shoe's own events

    def power_on(self) -> None:
        with self.lock:
            self.out += b"\x00"
            self._emit(self._hello())

    def event(self, msg: m.Message) -> m.Message:
        """A card read, a button pressed...: numbered now, queued, sent when the window allows."""
        with self.lock:
            self.count = rules.seq_next(self.count)
            msg = dataclasses.replace(msg, seq=self.count)
            self.queue.append(msg)
            self._send_window_news()
            return msg

    def heartbeat(self) -> None:
        with self.lock:
            self._emit(m.Heartbeat(seq=self.count, uptime_ms=0, unacked=len(self.queue)))

    def resend_if_due(self, now: float, after: float = rules.RESEND_MS / 1000) -> None:
        with self.lock:
            if self.queue and self.got_host_hello and now - self.last_progress >= after:
                self.resend_window()

    def resend_window(self) -> None:
        with self.lock:
            self.sent_upto = 0
            self._send_window_news()
            self.last_progress = time.monotonic()

    def new_link(self) -> None:
        """A replug: a partial frame in either direction is gone; the window goes again after the host's Hello."""
        with self.lock:
            self.decoder = Decoder()
            self.out.clear()
            self.got_host_hello = False
            self.sent_upto = 0
            self.out += b"\x00"
            self._emit(self._hello())

    # -- what the host sends

    def from_host(self, data: bytes) -> None:
        with self.lock:
            for _, item in self.decoder.feed(data):
                if isinstance(item, Rejected):
                    self.host_rejects.append(item)
                    continue
                self.host_messages.append(item)
                if isinstance(item, m.Hello):
                    self.got_host_hello = True
                    self._emit(self._hello())
                    self.heartbeat()
                    self.resend_window()
                elif isinstance(item, m.Ack):
                    self._ack(item.ack)
                elif isinstance(item, m.Gate):
                    if self.has_gate:
                        self.gate_locked = item.locked
                    self._status()
                elif isinstance(item, m.SetTime):
                    self.utc_ms = item.utc_ms
                    self._status()
                elif isinstance(item, m.StatusRequest):
                    self._status()

    def take_output(self) -> bytes:
        with self.lock:
            data = bytes(self.out)
            self.out.clear()
            return data

    # -- internals

    def _hello(self) -> m.Hello:
        return m.Hello(seq=self.count, minor=self.minor, vendor="Test Shoes", model="T-1", serial="T0001", firmware="9.9", boot=self.boot)

    def _emit(self, msg: m.Message) -> None:
        self.out += encode(msg)

    def _status(self) -> None:
        self._emit(m.Status(seq=self.count, gate_locked=self.has_gate and self.gate_locked, unacked=len(self.queue),
                            utc_ms=self.utc_ms))

    def _ack(self, ack: int) -> None:
        if not self.queue:
            return
        k = rules.acked_count(self.queue[0].seq, len(self.queue), ack)
        if k:
            del self.queue[:k]
            self.sent_upto = max(0, self.sent_upto - k)
            self.last_progress = time.monotonic()
            self._send_window_news()

    def _send_window_news(self) -> None:
        if not self.got_host_hello:
            return  # SPEC.md §8: until the host's Hello, only Hello and heartbeat
        limit = min(self.window, len(self.queue))
        while self.sent_upto < limit:
            self._emit(self.queue[self.sent_upto])
            self.sent_upto += 1


class PtyCable:
    """A real pseudo-terminal behind a stable symlink; unplug closes it, replug makes a new one."""

    def __init__(self, link_path: str) -> None:
        self.link_path = link_path
        self.master: int | None = None
        self.slave_name = ""
        self.replug()

    def replug(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)  # before the driver opens it: no echo, no line editing
        self.slave_name = os.ttyname(slave)
        os.close(slave)
        os.set_blocking(master, False)
        tmp = self.link_path + ".new"
        if os.path.lexists(tmp):
            os.unlink(tmp)
        os.symlink(self.slave_name, tmp)
        os.replace(tmp, self.link_path)
        self.master = master

    def unplug(self) -> None:
        """Close the pty and remove the symlink, as udev removes /dev/serial/by-id links on unplug
        (a stale link could point at a pty number the system has since given to someone else)."""
        if self.master is not None:
            os.close(self.master)
            self.master = None
        if os.path.lexists(self.link_path):
            os.unlink(self.link_path)

    @property
    def plugged(self) -> bool:
        return self.master is not None

    def wait_drained(self, timeout: float = 5.0) -> None:
        """Wait until the driver's side of the pty has nothing left to read (TIOCINQ on the slave)."""
        import fcntl
        import struct
        import termios

        fd = os.open(self.slave_name, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        try:
            deadline = time.monotonic() + timeout
            empty_twice = 0
            while empty_twice < 2:
                waiting = struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]
                empty_twice = empty_twice + 1 if waiting == 0 else 0
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the driver left {waiting} bytes unread in the pty")
                time.sleep(0.02)
        finally:
            os.close(fd)

    def write(self, data: bytes) -> None:
        """Write all of `data` (the test's side never drops bytes); no-op while unplugged."""
        view = memoryview(data)
        deadline = time.monotonic() + 5
        while view and self.master is not None:
            try:
                n = os.write(self.master, view)
                view = view[n:]
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError("the driver stopped reading the pty") from None
                select.select([], [self.master], [], 0.05)
            except OSError:  # nobody has the slave open yet
                return

    def read(self, timeout: float) -> bytes:
        if self.master is None:
            time.sleep(timeout)
            return b""
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return b""
        try:
            return os.read(self.master, 65536)
        except (BlockingIOError, OSError):  # EIO: no reader on the slave side right now
            return b""

    def close(self) -> None:
        self.unplug()
        for path in (self.link_path, self.link_path + ".new"):
            if os.path.lexists(path):
                os.unlink(path)


class SocketCable:
    """A shoe served over TCP (pyserial's socket:// URL), one host at a time; unplug stops listening."""

    def __init__(self) -> None:
        self.listener: socket.socket | None = None
        self.client: socket.socket | None = None
        self.port = 0
        self.replug()

    @property
    def url(self) -> str:
        return f"socket://127.0.0.1:{self.port}"

    def replug(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(1)
        self.port = listener.getsockname()[1]
        self.listener = listener

    def unplug(self) -> None:
        for sock in (self.client, self.listener):
            if sock is not None:
                sock.close()
        self.client = self.listener = None

    @property
    def plugged(self) -> bool:
        return self.client is not None

    def read(self, timeout: float) -> bytes:
        if self.listener is None:
            time.sleep(timeout)
            return b""
        if self.client is None:
            ready, _, _ = select.select([self.listener], [], [], timeout)
            if ready:
                self.client, _ = self.listener.accept()
            return b""
        ready, _, _ = select.select([self.client], [], [], timeout)
        if not ready:
            return b""
        try:
            data = self.client.recv(65536)
        except OSError:
            data = b""
        if not data:  # the host closed its end
            self.client.close()
            self.client = None
        return data

    def write(self, data: bytes) -> None:
        if self.client is not None:
            try:
                self.client.sendall(data)
            except OSError:
                self.client.close()
                self.client = None

    def close(self) -> None:
        self.unplug()


class ShoeRunner:
    """Runs a FakeShoe on a PtyCable in a thread: reads the host, writes the shoe's frames,
    heartbeats, repeats its window (SPEC.md §6.2, §7)."""

    def __init__(self, shoe: FakeShoe, cable: PtyCable, heartbeat: float = 0.2, resend: float = 0.2,
                 send_heartbeats: bool = True) -> None:
        self.shoe = shoe
        self.cable = cable
        self.heartbeat = heartbeat
        self.resend = resend
        self.send_heartbeats = send_heartbeats
        self.silent = False  # True: the shoe says nothing (a hung firmware)
        self.host_bytes = bytearray()
        self.host_times: list[float] = []  # when bytes from the host arrived
        self._stop = threading.Event()
        self._cable_lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> ShoeRunner:
        self.shoe.power_on()
        self._thread.start()
        return self

    def unplug(self) -> None:
        with self._cable_lock:
            self.cable.unplug()

    def replug(self) -> None:
        with self._cable_lock:
            self.cable.replug()
            self.shoe.new_link()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        assert not self._thread.is_alive(), "the shoe runner did not stop"

    def _run(self) -> None:
        last_beat = 0.0
        while not self._stop.is_set():
            with self._cable_lock:
                data = self.cable.read(0.01)
                if data:
                    self.host_bytes += data
                    self.host_times.append(time.monotonic())
                    self.shoe.from_host(data)
                now = time.monotonic()
                if self.send_heartbeats and not self.silent and now - last_beat >= self.heartbeat:
                    self.shoe.heartbeat()
                    last_beat = now
                if not self.silent:
                    self.shoe.resend_if_due(now, self.resend)
                out = self.shoe.take_output()
                if out and not self.silent and self.cable.plugged:
                    self.cable.write(out)


def poll_until(driver, predicate, timeout: float = 10.0, step: float = 0.05) -> list:
    """Poll `driver` until `predicate(all readings so far)` holds; return the readings."""
    readings: list = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        readings += driver.poll(step)
        if predicate(readings):
            return readings
    raise AssertionError(f"condition not met within {timeout} s; readings: {[r.to_json() for r in readings]}")
