"""systemd's notify protocol in a few lines: READY, STOPPING, WATCHDOG, STATUS.

`Type=notify` units wait for READY=1; `WatchdogSec=` restarts a daemon that
stops sending WATCHDOG=1. No C extension: a datagram to $NOTIFY_SOCKET.
"""

from __future__ import annotations

import os
import socket


class Notifier:
    def __init__(self, address: str | None = None) -> None:
        self.address = address if address is not None else os.environ.get("NOTIFY_SOCKET")
        usec = os.environ.get("WATCHDOG_USEC")
        pid = os.environ.get("WATCHDOG_PID")
        watchdog_on = usec is not None and (pid is None or pid == str(os.getpid()))
        # Ping at half the watchdog period, as sd_watchdog_enabled(3) advises.
        self.watchdog_interval = int(usec) / 2e6 if watchdog_on and usec is not None and usec.isdigit() else None
        self._sock = None
        if self.address:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)

    @property
    def enabled(self) -> bool:
        return self._sock is not None

    def send(self, text: str) -> bool:
        if self._sock is None or not self.address:
            return False
        address = self.address
        if address.startswith("@"):  # abstract namespace
            address = "\0" + address[1:]
        try:
            self._sock.sendto(text.encode(), address)
            return True
        except OSError:
            return False

    def ready(self, status: str = "") -> bool:
        return self.send("READY=1" + (f"\nSTATUS={status}" if status else ""))

    def stopping(self) -> bool:
        return self.send("STOPPING=1")

    def watchdog(self) -> bool:
        return self.send("WATCHDOG=1")

    def status(self, text: str) -> bool:
        return self.send(f"STATUS={text}")

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
