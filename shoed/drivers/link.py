"""The link under a driver: byte transports and the reconnecting poll loop.

A `Transport` moves bytes (a serial port, a USB pair of bulk endpoints); it
raises `LinkDown` when the device went away and `DriverError` when it cannot
be opened. `LinkDriver` owns everything the drivers share about a link that
comes and goes: opening, the poll loop with its deadline, noticing the device
is gone, reopening the same address with exponential back-off, and reporting
`link` readings (`connected`, `lost`, `restored`). A driver adds only what its
protocol does with the bytes (`_on_connect`, `_on_data`, `_on_tick`).
"""

from __future__ import annotations

import errno
import logging
import os
import select
import time
from abc import ABC, abstractmethod

from shoed.backoff import Backoff
from shoed.drivers.base import Driver, DriverError, Reading

log = logging.getLogger(__name__)

# A link up this long (seconds) before it drops was a working one: the next reopen is tried at once.
# One that drops sooner (a device that accepts and closes, a cable that flaps) backs off further.
STEADY = 5.0


class LinkDown(Exception):
    """The device went away mid-stream (unplugged, reset, I/O error); reopen it."""


class Transport(ABC):
    """A byte pipe to one shoe."""

    @abstractmethod
    def open(self) -> None:
        """Open the device; raise DriverError with an actionable message."""

    @abstractmethod
    def close(self) -> None:
        """Release the device; never raises."""

    @abstractmethod
    def read(self, timeout: float) -> bytes:
        """Bytes that arrived, waiting at most `timeout` seconds; b"" when none. Raises LinkDown."""

    @abstractmethod
    def write(self, data: bytes) -> None:
        """Send bytes without waiting long; raises LinkDown."""


# ----- serial ---------------------------------------------------------------


def is_device_path(url: str) -> bool:
    return "://" not in url


def open_error(url: str, exc: BaseException, what: str = "serial") -> DriverError:
    """Turn an OS error from opening `url` into one actionable line."""
    code = getattr(exc, "errno", None)
    if code in (errno.ENOENT, errno.ENODEV, errno.ENXIO):
        return DriverError(
            f"no such device {url}: is the shoe plugged in and powered? "
            "see udev/ for stable names under /dev/serial/by-id"
        )
    if code in (errno.EACCES, errno.EPERM):
        group = _node_group(url) or "dialout"
        return DriverError(
            f"permission denied on {url}: add the daemon's user to group '{group}' "
            f"(usermod -aG {group} USER, then log in again) or install udev/70-shoed.rules"
        )
    if code in (errno.EBUSY, errno.EAGAIN, errno.EWOULDBLOCK):
        return DriverError(
            f"port busy: {url} is opened exclusively by another reader "
            f"(find it with: fuser -v {url}); only one program may read a shoe"
        )
    if code == errno.ECONNREFUSED:
        return DriverError(f"cannot connect to {url}: connection refused; is the remote shoe's server running?")
    return DriverError(f"cannot open {what} port {url}: {exc}")


def _node_group(path: str) -> str | None:
    import grp

    try:
        return grp.getgrgid(os.stat(path).st_gid).gr_name
    except (OSError, KeyError):
        return None


class SerialTransport(Transport):
    """Any pyserial URL: a device path (opened exclusively), loop://, socket://, rfc2217://."""

    def __init__(self, url: str, baudrate: int = 115200, **serial_options) -> None:
        self.url = url
        self.baudrate = baudrate
        self.serial_options = serial_options
        self.port = None
        self._fd: int | None = None  # set for local ports: writes go straight to the non-blocking fd

    def open(self) -> None:
        import serial

        kwargs = dict(self.serial_options)
        kwargs.setdefault("baudrate", self.baudrate)
        if is_device_path(self.url):
            # Two readers on one shoe would each see half the cards.
            kwargs.setdefault("exclusive", True)
        try:
            port = serial.serial_for_url(self.url, do_not_open=True, timeout=0, write_timeout=0.05, **kwargs)
            port.open()
        except serial.SerialException as exc:
            raise open_error(self.url, exc) from None
        except (OSError, ValueError, OverflowError) as exc:  # OverflowError: a speed the port cannot hold
            raise open_error(self.url, exc) from None
        self.port = port
        self._fd = None
        try:
            from serial.serialposix import Serial as PosixSerial

            if type(port) is PosixSerial:
                self._fd = port.fileno()
        except ImportError:  # not POSIX: pyserial's own write with its short timeout
            pass

    def close(self) -> None:
        port, self.port, self._fd = self.port, None, None
        if port is not None:
            try:
                port.close()
            except (OSError, ValueError, ImportError) as exc:  # the device is gone; closing what is left must not fail
                log.debug("%s: closing: %s", self.url, exc)

    def read(self, timeout: float) -> bytes:
        import serial

        port = self.port
        if port is None:
            raise LinkDown("port closed")
        timeout = max(0.0, timeout)
        if self._fd is not None:
            return self._read_fd(timeout)
        try:
            # URL ports (socket://, rfc2217://): wait for one byte, then take what is there without waiting
            # (their in_waiting is not a byte count everywhere).
            port.timeout = timeout
            data = port.read(1)
            if data:
                port.timeout = 0
                data += port.read(65536)
            return data
        except (serial.SerialException, OSError) as exc:
            raise LinkDown(str(exc)) from None

    def _read_fd(self, timeout: float) -> bytes:
        # A local port: select and read the fd directly, without re-setting termios on every read.
        fd = self._fd
        if fd is None:
            raise LinkDown("the port is closed")
        try:
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                return b""
            data = os.read(fd, 65536)
        except BlockingIOError:
            return b""
        except OSError as exc:
            raise LinkDown(f"the device went away ({os.strerror(exc.errno) if exc.errno else exc})") from None
        if not data:
            # What Linux shows for an unplugged USB serial device (or a second reader): always ready, no data.
            raise LinkDown("device reports readiness to read but returned no data (unplugged?)")
        return data

    def write(self, data: bytes) -> None:
        import serial

        if self.port is None:
            raise LinkDown("port closed")
        try:
            if self._fd is not None:
                # The fd is non-blocking: a shoe that stopped draining its input is a dead link,
                # found here at once rather than by a write that blocks the poll loop.
                view = memoryview(data)
                while view:
                    n = os.write(self._fd, view)
                    view = view[n:]
            else:
                self.port.write(data)
        except BlockingIOError:
            raise LinkDown("the shoe stopped taking data (output buffer full)") from None
        except (serial.SerialException, OSError) as exc:
            raise LinkDown(str(exc)) from None


# ----- the reconnecting driver ---------------------------------------------

# The reconnect back-off's first and longest waits, in seconds, when a source gives none.
BACKOFF_INITIAL = 0.1
BACKOFF_MAX = 2.0


def backoff_problem(initial: float, most: float) -> str | None:
    """What is wrong with a reconnect back-off, in words, or None: the first wait above 0 and at
    most the longest. The one check of it, the driver's and the configuration's (`config check`)."""
    if not 0 < initial <= most:
        return f"backoff_initial ({initial}) must be above 0 and at most backoff_max ({most})"
    return None


class LinkDriver(Driver):
    """A driver over a transport that may go away: poll loop, back-off, link readings.

    Two states are kept apart: the transport (is the port open?) and the link
    as reported to the daemon (`connected` the first time it is up, `lost`,
    `restored`). A driver whose shoe talks back (native) reports the link up
    when the first valid frame arrives; one whose shoe only talks (Bee-Tek)
    when the port opens.
    """

    def __init__(
        self,
        url: str,
        *,
        backoff_initial: float = BACKOFF_INITIAL,
        backoff_max: float = BACKOFF_MAX,
        transport: Transport | None = None,
        **options,
    ) -> None:
        super().__init__(url, **options)
        problem = backoff_problem(backoff_initial, backoff_max)
        if problem is not None:
            raise DriverError(problem)
        self.transport = transport if transport is not None else self._make_transport()
        self.connected = False  # the transport is open
        self.link: str | None = None  # None (never up yet), "up" or "down", as reported
        self._opened = False
        self._backoff = Backoff(backoff_initial, backoff_max)
        self._up_at = 0.0  # when the transport last opened (monotonic)
        self._next_attempt = 0.0
        self._offset = 0  # bytes received since open, across reconnects
        self._queue: list[Reading] = []
        self._last_open_error = ""

    # -- what a driver provides

    @abstractmethod
    def _make_transport(self) -> Transport: ...

    def _on_connect(self, mono_ns: int, utc_ns: int) -> list[Reading]:
        """The transport (re)opened: reset framing, greet the shoe."""
        return []

    def _on_drop(self, mono_ns: int, utc_ns: int) -> list[Reading]:
        """The transport went away: what the driver held of the last bytes, reported before the loss."""
        return []

    @abstractmethod
    def _on_data(self, data: bytes, offset: int, mono_ns: int, utc_ns: int) -> list[Reading]:
        """Bytes received at `offset` of the stream."""

    def _on_tick(self, mono_ns: int, utc_ns: int) -> list[Reading]:
        """Periodic work (heartbeats, silence, stale tails); `_drop_transport` gives the link up."""
        return []

    def _next_tick(self) -> float | None:
        """Monotonic seconds when `_on_tick` is next due; None for never."""
        return None

    # -- Driver

    def open(self) -> None:
        if self._opened:
            return
        self.transport.open()  # raises DriverError: the first open is the daemon's to judge
        self._opened = True
        self._transport_up()

    def close(self) -> None:
        self._opened = False
        self.connected = False
        self.transport.close()

    def poll(self, timeout: float) -> list[Reading]:
        if not self._opened:
            raise DriverError(f"{self.source}: poll() before open()")
        deadline = time.monotonic() + max(0.0, timeout)
        out, self._queue = self._queue, []
        while True:
            now = time.monotonic()
            if self.connected:
                tick = self._next_tick()
                if tick is not None and now >= tick:
                    # What already waits on the line is taken before the clock judges it: after a pause of
                    # this process (a loaded host, a stop) the shoe's bytes are there, and a token's rest
                    # or a frame would otherwise be called late (a card cut in two, a link called silent).
                    out += self._take_waiting()
                    if self.connected:
                        out += self._on_tick(time.monotonic_ns(), time.time_ns())
            if not self.connected and now >= self._next_attempt:
                self._reopen()
            out += self._queue
            self._queue = []
            remaining = deadline - time.monotonic()
            if self.connected:
                tick = self._next_tick()
                wait = remaining if tick is None else min(remaining, tick - time.monotonic())
                # Once something is in hand, only collect what is already waiting.
                wait = 0.0 if out else max(0.0, wait)
                try:
                    data = self.transport.read(wait)
                except LinkDown as exc:
                    self._drop_transport(str(exc))
                    data = b""
                if data:
                    offset = self._offset
                    self._offset += len(data)
                    out += self._on_data(data, offset, time.monotonic_ns(), time.time_ns())
                out += self._queue
                self._queue = []
            elif not out and remaining > 0:
                time.sleep(max(0.0, min(remaining, self._next_attempt - time.monotonic())))
            if out or time.monotonic() >= deadline:
                return out

    def _take_waiting(self) -> list[Reading]:
        """The bytes waiting on the transport now, without waiting for more."""
        try:
            data = self.transport.read(0.0)
        except LinkDown as exc:
            self._drop_transport(str(exc))
            return []
        if not data:
            return []
        offset = self._offset
        self._offset += len(data)
        return self._on_data(data, offset, time.monotonic_ns(), time.time_ns())

    # -- link bookkeeping

    def _send(self, data: bytes) -> None:
        """Write to the shoe; a failed write drops the transport (the poll loop reopens it)."""
        if not data or not self.connected:
            return
        try:
            self.transport.write(data)
        except LinkDown as exc:
            self._drop_transport(str(exc))

    def _link_reading(self, state: str, text: str | None = None) -> Reading:
        return Reading(
            kind="link", source=self.source, raw=b"", offset=self._offset,
            mono_ns=time.monotonic_ns(), utc_ns=time.time_ns(), link=state, text=text,
        )

    def _link_up(self) -> None:
        """The shoe is heard: report `connected` (first time) or `restored`."""
        if self.link == "up":
            return
        state = "connected" if self.link is None else "restored"
        self.link = "up"
        if state == "restored":
            log.warning("%s: link restored", self.source)
        self._queue.append(self._link_reading(state))

    def _link_down(self, reason: str) -> None:
        if self.link == "down":
            return
        self.link = "down"
        log.warning("%s: link lost: %s", self.source, reason)
        self._queue.append(self._link_reading("lost", reason))

    def _drop_transport(self, reason: str) -> None:
        """The device went away (or fell silent): close it, report the loss, reopen after a back-off."""
        if not self.connected:
            return
        self.connected = False
        self.transport.close()
        self._queue += self._on_drop(time.monotonic_ns(), time.time_ns())
        self._link_down(reason)
        if time.monotonic() - self._up_at >= STEADY:
            self._backoff.succeeded()  # it had been up a while: the first try waits the least
        # (A device that drops as soon as it is opened is tried less and less often, as one that
        # will not open: each flap journals its loss and return.)
        self._next_attempt = time.monotonic() + self._backoff.failed()

    def _transport_up(self) -> None:
        self.connected = True
        self._up_at = time.monotonic()
        self._last_open_error = ""
        self._queue += self._on_connect(time.monotonic_ns(), time.time_ns())

    def _reopen(self) -> None:
        try:
            self.transport.open()
        except DriverError as exc:
            if str(exc) != self._last_open_error:  # say each distinct reason once, not every attempt
                self._last_open_error = str(exc)
                log.warning("%s: reopening: %s", self.source, exc)
            self._next_attempt = time.monotonic() + self._backoff.failed()
            return
        self._transport_up()
