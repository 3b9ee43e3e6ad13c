"""A minimal host for the virtual shoe's end-to-end tests, following SPEC.md §6.3 and §8.

It opens the shoe's pty path (reopening it after an unplug, as a driver does
through /dev/serial/by-id), sends Hello, unlocks the gate, takes each reliable
message exactly once by the SPEC's rule, and acknowledges what it took. Every
wait has a deadline.
"""

from __future__ import annotations

import errno
import os
import re
import select
import time
import tty

import firmware_protocol as fp
from firmware_protocol import session


class NativeHost:
    def __init__(self, path: str, unlock: bool = True, ack: bool = True):
        self.path = path
        self.unlock = unlock
        self.ack = ack
        self.fd: int | None = None
        self.decoder = fp.Decoder()
        self.boot: int | None = None
        self.last: int | None = None  # last reliable seq taken in this boot
        self.taken: list[fp.Message] = []  # reliable messages, each once, in order
        self.frames: list[fp.Message] = []  # every valid frame received
        self.rejected = 0
        self.duplicates = 0
        self.gaps = 0
        self.reopens = 0
        self.hellos: list[fp.Hello] = []
        self.statuses: list[fp.Status] = []
        self.hello_sent = 0.0
        self.hello_answered = False

    # ----- link ------------------------------------------------------------------
    def open(self, timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.fd = os.open(self.path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
                break
            except OSError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.02)
        tty.setraw(self.fd)
        self.decoder = fp.Decoder()
        self.hello_answered = False
        self.say_hello()
        if self.unlock:
            self.send(fp.Gate(locked=False))

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def say_hello(self) -> None:
        # SPEC.md §8: repeated every second until the shoe's Hello arrives.
        self.hello_sent = time.monotonic()
        self.send(fp.Hello(vendor="shoed-test", model="table 1"))

    def send(self, msg: fp.Message) -> None:
        if self.fd is not None:
            try:
                os.write(self.fd, fp.encode(msg))
            except OSError:
                pass

    # ----- receiving ---------------------------------------------------------------
    def pump(self, timeout: float = 0.05) -> None:
        if self.fd is None:
            try:
                self.open(timeout=0)
            except OSError:  # still unplugged (the link path is gone): try again at the next pump
                time.sleep(timeout)
                return
        if not self.hello_answered and time.monotonic() - self.hello_sent >= 1.0:
            self.say_hello()
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return
        try:
            data = os.read(self.fd, 65536)
        except OSError as exc:
            if exc.errno != errno.EIO:
                raise
            data = b""
        if not data:  # unplugged: reopen the same path later, like a driver behind a by-id symlink
            self.close()
            self.reopens += 1
            return
        for _, item in self.decoder.feed(data):
            if isinstance(item, fp.Rejected):
                self.rejected += 1
            else:
                self.take(item)

    def take(self, msg: fp.Message) -> None:
        self.frames.append(msg)
        if isinstance(msg, fp.Hello):
            self.hellos.append(msg)
            self.hello_answered = True
            if msg.boot != self.boot:
                self.boot, self.last = msg.boot, None
            return
        if isinstance(msg, fp.Status):
            self.statuses.append(msg)
        if isinstance(msg, (fp.Heartbeat, fp.Status)) and self.last is None and self.boot is not None:
            self.last = session.last_taken_from(msg.seq, msg.unacked)
            return
        if not msg.RELIABLE or self.last is None:
            return  # nothing is taken before the Hello and the shoe's first heartbeat (§6.3)
        verdict = session.classify(self.last, msg.seq)
        if verdict == session.TAKE:
            self.taken.append(msg)
            self.last = msg.seq
        elif verdict == session.DUPLICATE:
            self.duplicates += 1
        else:
            self.gaps += 1
            return
        if self.ack:
            self.send(fp.Ack(ack=self.last))

    def run_until(self, predicate, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            self.pump(0.02)
        return predicate()


TOKEN = re.compile(rb" \[([^\]]*)\]<([^>]*)> ")


def read_beetek(path: str, until, timeout: float, quiet: float = 0.3) -> bytes:
    """Read a Bee-Tek stream from `path` until `until()` holds and the line has
    been quiet for `quiet` seconds (what was written is read), or the time is up."""
    fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    tty.setraw(fd)
    data = bytearray()
    deadline = time.monotonic() + timeout
    last_data = time.monotonic()
    try:
        while time.monotonic() < deadline:
            r, _, _ = select.select([fd], [], [], 0.05)
            if r:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break
                if not chunk:  # the shoe's end of the line is gone
                    break
                data += chunk
                last_data = time.monotonic()
            elif until() and time.monotonic() - last_data >= quiet:
                break
    finally:
        os.close(fd)
    return bytes(data)
