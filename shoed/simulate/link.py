"""The virtual shoe's end of the cable: a pseudo-terminal or a TCP socket.

Both links are non-blocking and driven by the shoe's loop with select. They
report whether a host is attached (a reader has the pty open, or a TCP client
is connected) because a USB shoe sees the same thing (the host opens the port),
and they can be unplugged and plugged back in:

- `PtyLink`: a pseudo-terminal in raw mode; the host opens the slave path
  (printed, and optionally kept behind a symlink, like /dev/serial/by-id, so a
  reader reopens the same path after a replug). Unplugging closes the pty and
  removes the symlink; plugging in creates a new pty and repoints the symlink.
- `SocketLink`: a TCP server at socket://HOST:PORT serving one client at a time,
  which pyserial's `socket://` URL reads. Unplugging drops the client and stops
  listening; plugging in listens again on the same port.

Bytes written while no host is attached are dropped, as on a real line.
"""

from __future__ import annotations

import errno
import fcntl
import os
import select
import socket
import struct
import termios
import tty
from urllib.parse import urlsplit

# Bytes kept for a slow reader before the link starts dropping them.
MAX_PENDING = 1 << 20


class LinkError(OSError):
    """The link cannot be set up (bad URL, port in use, symlink path not writable)."""


class Link:
    """Common part: an output buffer written as the far end takes it."""

    def __init__(self) -> None:
        self.pending = bytearray()
        self.dropped = 0
        self.plugged = False

    # ----- provided by each link ------------------------------------------------
    @property
    def address(self) -> str:
        """What the host opens: a path or a socket:// URL."""
        raise NotImplementedError

    def open(self) -> str:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def unplug(self) -> None:
        raise NotImplementedError

    def replug(self) -> None:
        raise NotImplementedError

    def read_fds(self) -> list[int]:
        """Descriptors to wait on for the host's bytes (or its arrival)."""
        raise NotImplementedError

    def write_fd(self) -> int | None:
        """The descriptor to wait on while bytes are pending, else None."""
        raise NotImplementedError

    def attached(self) -> bool:
        """A host has the link open."""
        raise NotImplementedError

    def service(self, readable: set[int]) -> bytes:
        """Read what the host sent (accepting a new host where that applies)."""
        raise NotImplementedError

    def _write(self, data: bytes) -> int:
        raise NotImplementedError

    def send(self, data: bytes) -> None:
        """Queue bytes for the host; dropped when none is attached."""
        if not data:
            return
        if not self.attached() or len(self.pending) + len(data) > MAX_PENDING:
            self.dropped += len(data)
            return
        self.pending += data

    def flush(self) -> None:
        """Write what the far end takes now, without blocking."""
        while self.pending:
            if not self.attached():
                self.dropped += len(self.pending)
                self.pending.clear()
                return
            try:
                n = self._write(bytes(self.pending[:65536]))
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                self.dropped += len(self.pending)
                self.pending.clear()
                self._lost()
                return
            if n <= 0:
                return
            del self.pending[:n]

    def _lost(self) -> None:
        """The far end went away while writing."""

    def unread(self) -> int:
        """Bytes written that the host has not read yet (0 where the link cannot tell)."""
        return 0


class PtyLink(Link):
    """A pseudo-terminal; the host reads and writes its slave side."""

    def __init__(self, symlink: str | None = None):
        super().__init__()
        self.symlink = symlink
        self.master: int | None = None
        self.slave_path: str | None = None
        self._poll: select.poll | None = None

    @property
    def address(self) -> str:
        return self.symlink or self.slave_path or ""

    def open(self) -> str:
        if self.symlink and os.path.lexists(self.symlink) and not os.path.islink(self.symlink):
            # Never replace a device node or file: only our own kind of link is repointed.
            raise LinkError(f"{self.symlink} exists and is not a symlink; refusing to replace it")
        self._create()
        return self.slave_path or ""

    def _create(self) -> None:
        master, slave = os.openpty()
        try:
            # Raw: the line discipline must not echo, translate or buffer lines.
            tty.setraw(slave)
            self.slave_path = os.ttyname(slave)
        finally:
            # Not kept open: the master then sees POLLHUP exactly while no host has the slave open.
            os.close(slave)
        os.set_blocking(master, False)
        self.master = master
        self._poll = select.poll()
        self._poll.register(master, select.POLLIN | select.POLLHUP)
        self.plugged = True
        if self.symlink:
            tmp = f"{self.symlink}.{os.getpid()}.tmp"
            try:
                if os.path.lexists(tmp):
                    os.unlink(tmp)
                os.symlink(self.slave_path, tmp)
                os.replace(tmp, self.symlink)
            except OSError as exc:
                self.close()
                raise LinkError(f"cannot point {self.symlink} at {self.slave_path}: {exc.strerror}") from None

    def close(self) -> None:
        # The symlink goes first: a host that sees the line drop and reopens the
        # path at once must not reach the old pty's number, which may be reused.
        if self.symlink and os.path.islink(self.symlink):
            try:
                os.unlink(self.symlink)
            except OSError:
                pass
        if self.master is not None:
            os.close(self.master)
            self.master = None
        self._poll = None
        self.plugged = False
        self.pending.clear()

    def unplug(self) -> None:
        self.close()

    def replug(self) -> None:
        if not self.plugged:
            self._create()

    def read_fds(self) -> list[int]:
        # Without a host the master reads EIO at once: select would spin on it.
        return [self.master] if self.master is not None and self.attached() else []

    def write_fd(self) -> int | None:
        return self.master if (self.pending and self.master is not None) else None

    def attached(self) -> bool:
        if self._poll is None:
            return False
        for _, mask in self._poll.poll(0):
            if mask & select.POLLHUP:
                return False
        return True

    def service(self, readable: set[int]) -> bytes:
        if self.master is None or self.master not in readable:
            return b""
        try:
            return os.read(self.master, 4096)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError as exc:
            if exc.errno == errno.EIO:  # no host has the slave open
                return b""
            raise

    def _write(self, data: bytes) -> int:
        if self.master is None:
            raise OSError(errno.EIO, "the shoe's line is not open")
        return os.write(self.master, data)

    def unread(self) -> int:
        """What waits in the pty for the host to read (FIONREAD on the slave side): closing the pty
        before the host has read it would lose it, as pulling the cable would."""
        if self.master is None or self.slave_path is None or not self.attached():
            return 0
        try:
            fd = os.open(self.slave_path, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
        except OSError:
            return 0
        try:
            return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]
        except OSError:
            return 0
        finally:
            os.close(fd)


class SocketLink(Link):
    """A TCP server at socket://HOST:PORT, one client at a time."""

    def __init__(self, url: str):
        super().__init__()
        parts = urlsplit(url)
        if parts.scheme != "socket" or not parts.hostname:
            raise LinkError(f"listen on a socket://HOST:PORT URL, not {url!r}")
        try:
            port = parts.port
        except ValueError:
            port = None
        if port is None:
            raise LinkError(f"listen on a socket://HOST:PORT URL with a port number, not {url!r}")
        self.host, self.port = parts.hostname, port
        self.server: socket.socket | None = None
        self.client: socket.socket | None = None

    @property
    def address(self) -> str:
        return f"socket://{self.host}:{self.port}"

    def open(self) -> str:
        self._listen()
        return self.address

    def _listen(self) -> None:
        try:
            infos = socket.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM)
            family, _, _, _, addr = infos[0]
            server = socket.socket(family, socket.SOCK_STREAM)
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            server.bind(addr)
        except OSError as exc:
            if "server" in locals():
                server.close()
            raise LinkError(f"cannot listen on {self.address}: {exc.strerror or exc}") from None
        server.listen(1)
        server.setblocking(False)
        self.port = server.getsockname()[1]  # port 0 asks the system for a free one
        self.server = server
        self.plugged = True

    def close(self) -> None:
        # Stop listening first: a host that sees its connection end and dials
        # again at once must be refused, not queued on a socket about to close.
        if self.server is not None:
            self.server.close()
            self.server = None
        self._drop_client()
        self.plugged = False

    def _drop_client(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
        self.pending.clear()

    def _lost(self) -> None:
        self._drop_client()

    def unplug(self) -> None:
        self.close()

    def replug(self) -> None:
        if not self.plugged:
            self._listen()

    def read_fds(self) -> list[int]:
        if self.client is not None:
            return [self.client.fileno()]
        return [self.server.fileno()] if self.server is not None else []

    def write_fd(self) -> int | None:
        return self.client.fileno() if (self.pending and self.client is not None) else None

    def attached(self) -> bool:
        return self.client is not None

    def service(self, readable: set[int]) -> bytes:
        if self.client is None:
            if self.server is not None and self.server.fileno() in readable:
                try:
                    client, _ = self.server.accept()
                except (BlockingIOError, InterruptedError):
                    return b""
                client.setblocking(False)
                client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self.client = client
            return b""
        if self.client.fileno() not in readable:
            return b""
        try:
            data = self.client.recv(4096)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError:
            data = b""
        if not data:  # the host hung up
            self._drop_client()
        return data

    def _write(self, data: bytes) -> int:
        if self.client is None:
            raise OSError(errno.ENOTCONN, "no host is connected")
        return self.client.send(data)


def open_link(listen: str | None, symlink: str | None) -> Link:
    """A pty (default) or, given a socket:// URL, a TCP server."""
    if listen:
        if symlink:
            raise LinkError("--link names a pty's symlink; it does not go with --listen")
        return SocketLink(listen)
    return PtyLink(symlink)
