"""Opening a shoe: one clear, actionable line for each way it fails.

The errors come from real opens where the test machine allows it: a missing
node, a port held exclusively by another reader, and permission denied. Tests
run as root, which bypasses file permissions, so permission denied is
produced in a child process that drops to the `nobody` user before opening a
pty slave only root may open (when not root, the test opens a chmod-000 node
directly). The mapping from errno to message is also checked case by case.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import tty

import pytest

from shoed.drivers import DriverError, open_driver
from shoed.drivers.link import open_error


@pytest.fixture
def pty_slave():
    master, slave = os.openpty()
    tty.setraw(slave)
    name = os.ttyname(slave)
    os.close(slave)
    yield name
    os.close(master)


@pytest.mark.parametrize("name", ["native", "beetek"])
def test_missing_node(tmp_path, name):
    path = str(tmp_path / "ttyACM0")
    with pytest.raises(DriverError) as info:
        open_driver(name, path)
    assert str(info.value).startswith(f"no such device {path}: is the shoe plugged in")
    assert "udev/" in str(info.value)


@pytest.mark.parametrize("name", ["native", "beetek"])
def test_port_busy(pty_slave, name):
    # standards 14: the port is opened exclusively; a second reader is told who to look for.
    first = open_driver(name, pty_slave)
    try:
        with pytest.raises(DriverError, match=rf"^port busy: {pty_slave} is opened exclusively by another reader"):
            open_driver(name, pty_slave)
    finally:
        first.close()
    open_driver(name, pty_slave).close()  # free again once the first reader closed it


def test_permission_denied_names_the_group(pty_slave):
    os.chmod(pty_slave, 0o600 if os.geteuid() == 0 else 0)
    code = (
        # Everything is imported first: as nobody, the Python installation itself may be unreadable.
        "import os, sys, grp, serial, serial.serialposix, shoed.drivers.native\n"
        "from shoed.drivers import open_driver, DriverError\n"
        "if os.geteuid() == 0:\n"
        "    os.setgroups([]); os.setgid(65534); os.setuid(65534)\n"
        "try:\n"
        f"    open_driver('native', {pty_slave!r})\n"
        "except DriverError as exc:\n"
        "    print(exc)\n"
    )
    proc = subprocess.run(check=False, args=[sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd="/")
    assert proc.returncode == 0, proc.stderr
    import grp

    group = grp.getgrgid(os.stat(pty_slave).st_gid).gr_name
    assert proc.stdout.strip() == (
        f"permission denied on {pty_slave}: add the daemon's user to group '{group}' "
        f"(usermod -aG {group} USER, then log in again) or install udev/70-shoed.rules"
    )


@pytest.mark.parametrize(
    "code, start",
    [
        (errno.ENOENT, "no such device /dev/ttyACM0:"),
        (errno.ENODEV, "no such device /dev/ttyACM0:"),
        (errno.ENXIO, "no such device /dev/ttyACM0:"),
        (errno.EACCES, "permission denied on /dev/ttyACM0: add the daemon's user to group 'dialout'"),
        (errno.EPERM, "permission denied on /dev/ttyACM0:"),
        (errno.EBUSY, "port busy: /dev/ttyACM0 is opened exclusively by another reader"),
        (errno.EWOULDBLOCK, "port busy: /dev/ttyACM0"),
        (errno.ECONNREFUSED, "cannot connect to /dev/ttyACM0: connection refused"),
        (errno.EIO, "cannot open serial port /dev/ttyACM0:"),
    ],
)
def test_errno_to_message(code, start):
    # /dev/ttyACM0 does not exist on the test machine, so the group falls back to dialout.
    message = str(open_error("/dev/ttyACM0", OSError(code, os.strerror(code))))
    assert message.startswith(start)
    assert "\n" not in message


@pytest.mark.parametrize("name", ["native", "beetek"])
def test_a_speed_the_port_cannot_hold_is_a_driver_error(pty_slave, name):
    """A baud rate past what the port's settings hold (pyserial raises OverflowError) is one
    line, as any failed open is: never an exception that stops the daemon."""
    with pytest.raises(DriverError) as info:
        open_driver(name, pty_slave, baudrate=2**40)
    assert pty_slave in str(info.value) and "\n" not in str(info.value)


def test_a_device_that_drops_as_soon_as_it_is_opened_is_tried_less_and_less_often():
    # A TCP shoe that accepts and closes at once (a cable that flaps, a device that resets on open):
    # each flap journals a loss and a return, so the reopens back off as for a device that will not open.
    import socket
    import threading
    import time

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    stop = threading.Event()

    def accept_and_close():
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            conn.close()

    threading.Thread(target=accept_and_close, daemon=True).start()
    driver = open_driver("beetek", f"socket://127.0.0.1:{server.getsockname()[1]}", backoff_initial=0.05,
                         backoff_max=0.8)
    lost = []
    try:
        end = time.monotonic() + 4
        while time.monotonic() < end:
            lost += [time.monotonic() for r in driver.poll(0.05) if r.kind == "link" and r.link == "lost"]
    finally:
        driver.close()
        stop.set()
        server.close()
    # 0.05, 0.1, 0.2, 0.4, 0.8, 0.8 ... s apart: a handful in 4 s (it was one each 0.05 s: 60 or more).
    assert 3 <= len(lost) <= 10, lost
    gaps = [b - a for a, b in zip(lost, lost[1:])]
    assert gaps[-1] > 0.5, gaps
