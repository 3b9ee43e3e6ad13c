"""The `native-usb` driver: the shoed firmware protocol over USB bulk endpoints.

The same frames as the `native` driver, carried by a vendor-specific USB
interface with one bulk IN and one bulk OUT endpoint, reached through pyusb
(libusb). Only the transport differs: the protocol session, duplicate filter,
acknowledgements, heartbeats and reconnects are the `native` driver's.

URL: `usb://VID:PID[/SERIAL]` in hexadecimal, e.g. `usb://1d50:6150` or
`usb://1d50:6150/SH0042` to pick one shoe among several on the same host.
Options: `backend=` a pyusb backend object (default: libusb found by pyusb).

A device with the right VID:PID that cannot give its serial number (wedged, or
not ours to open) is skipped when the URL names a serial; it is named in the
error only when no device matches. A halted (stalled) endpoint is cleared with
ClearFeature(ENDPOINT_HALT) after the interface is claimed, and when a transfer
fails with EPIPE (USB 2.0 §9.4.5: a halted endpoint stalls until cleared).
"""

from __future__ import annotations

import errno
import logging
import math
import re

from shoed.drivers.base import DriverError
from shoed.drivers.link import LinkDown, Transport
from shoed.drivers.native import NativeDriver

log = logging.getLogger(__name__)

_URL = re.compile(r"usb://([0-9a-fA-F]{1,4}):([0-9a-fA-F]{1,4})(?:/(.+))?")

VENDOR_SPECIFIC = 0xFF
READ_SIZE = 4096
WRITE_TIMEOUT_MS = 100


def parse_usb_url(url: str) -> tuple[int, int, str | None]:
    """(vendor id, product id, serial number or None) of a `usb://VID:PID[/SERIAL]` URL."""
    m = _URL.fullmatch(url.strip())
    if not m:
        raise DriverError(f"bad USB address {url!r}: write usb://VID:PID or usb://VID:PID/SERIAL, e.g. usb://1d50:6150")
    return int(m.group(1), 16), int(m.group(2), 16), m.group(3)


class UsbTransport(Transport):
    """A shoe's vendor-specific interface: bulk IN for frames from it, bulk OUT for frames to it."""

    def __init__(self, url: str, backend=None) -> None:
        self.url = url
        self.vid, self.pid, self.serial = parse_usb_url(url)
        self.backend = backend
        self.dev = None
        self.ep_in = None
        self.ep_out = None
        self.interface = None

    @property
    def ids(self) -> str:
        return f"{self.vid:04x}:{self.pid:04x}"

    def _error(self, exc: BaseException, doing: str) -> DriverError:
        code = getattr(exc, "errno", None)
        where = f"USB device {self.ids}"
        if self.dev is not None and getattr(self.dev, "bus", None) is not None:
            where += f" (bus {self.dev.bus}, address {self.dev.address})"
        if code in (errno.EACCES, errno.EPERM):
            return DriverError(
                f"permission denied on {where}: install udev/70-shoed.rules (it gives the shoe to group "
                "'plugdev') and add the daemon's user to plugdev (usermod -aG plugdev USER)"
            )
        if code == errno.EBUSY:
            return DriverError(
                f"port busy: another program has claimed the shoe's interface on {where}; only one program may read a shoe"
            )
        if code in (errno.ENODEV, errno.ENOENT):
            return self._missing()
        return DriverError(f"cannot {doing} {where}: {exc}")

    def _missing(self) -> DriverError:
        which = f" with serial number {self.serial}" if self.serial else ""
        return DriverError(
            f"no such device {self.url}: no USB device {self.ids}{which}; is the shoe plugged in? "
            f"(lsusb should list {self.ids}; see udev/)"
        )

    def open(self) -> None:
        import usb.core
        import usb.util

        self.close()
        try:
            candidates = list(usb.core.find(find_all=True, idVendor=self.vid, idProduct=self.pid, backend=self.backend))
        except usb.core.NoBackendError:
            raise DriverError("the native-usb driver needs libusb: install it (apt install libusb-1.0-0)") from None
        except usb.core.USBError as exc:
            raise self._error(exc, "list") from None
        dev = None
        unreadable: list[str] = []  # devices skipped: they could not give their serial number
        for candidate in candidates:
            if self.serial is None:
                dev = candidate
                break
            try:
                if candidate.serial_number == self.serial:
                    dev = candidate
                    break
            except (usb.core.USBError, ValueError) as exc:  # a wedged sibling, or one not ours to open
                self.dev = candidate
                unreadable.append(str(self._error(exc, "read the serial number of")))
                self.dev = None
        if dev is None:
            if unreadable:
                raise DriverError(
                    f"no such device {self.url}: no USB device {self.ids} with serial number {self.serial} among "
                    f"those that gave theirs; {len(unreadable)} did not: " + "; ".join(unreadable[:3]))
            raise self._missing()
        self.dev = dev
        try:
            try:
                cfg = dev.get_active_configuration()
            except usb.core.USBError:
                dev.set_configuration()
                cfg = dev.get_active_configuration()
            intf, ep_in, ep_out = self._bulk_pair(cfg)
            try:
                if dev.is_kernel_driver_active(intf.bInterfaceNumber):
                    dev.detach_kernel_driver(intf.bInterfaceNumber)
            except NotImplementedError:  # backends without kernel drivers (and other OSes)
                pass
            usb.util.claim_interface(dev, intf.bInterfaceNumber)
        except usb.core.USBError as exc:
            error = self._error(exc, "open")
            self.close()
            raise error from None
        self.interface, self.ep_in, self.ep_out = intf.bInterfaceNumber, ep_in, ep_out
        for ep in (ep_in, ep_out):
            # A halted endpoint stays halted across a release and a claim: only ClearFeature(ENDPOINT_HALT)
            # un-halts it (USB 2.0 §9.4.5). Harmless on one that is not halted.
            self._clear_halt(ep)

    def _clear_halt(self, ep) -> None:
        import usb.core

        try:
            if self.dev is not None:
                self.dev.clear_halt(ep)
        except usb.core.USBError as exc:  # the device is gone or wedged: the transfer will say so
            log.debug("%s: clearing the halt of endpoint 0x%02x: %s", self.url, ep, exc)

    def _bulk_pair(self, cfg):
        import usb.util

        def bulk(intf, direction):
            return usb.util.find_descriptor(
                intf,
                custom_match=lambda e: usb.util.endpoint_type(e.bmAttributes) == usb.util.ENDPOINT_TYPE_BULK
                and usb.util.endpoint_direction(e.bEndpointAddress) == direction,
            )

        interfaces = sorted(cfg, key=lambda i: i.bInterfaceClass != VENDOR_SPECIFIC)  # vendor-specific first
        for intf in interfaces:
            ep_in, ep_out = bulk(intf, usb.util.ENDPOINT_IN), bulk(intf, usb.util.ENDPOINT_OUT)
            if ep_in is not None and ep_out is not None:
                return intf, ep_in.bEndpointAddress, ep_out.bEndpointAddress
        raise DriverError(f"USB device {self.ids} has no interface with a bulk IN and a bulk OUT endpoint: is it a shoe?")

    def close(self) -> None:
        dev, self.dev = self.dev, None
        self.ep_in = self.ep_out = self.interface = None
        if dev is not None:
            import usb.util

            try:
                usb.util.dispose_resources(dev)
            except (usb.core.USBError, OSError, ValueError) as exc:  # the device is gone; releasing must not fail
                log.debug("%s: releasing: %s", self.url, exc)

    def read(self, timeout: float) -> bytes:
        import usb.core

        if self.dev is None:
            raise LinkDown("device closed")
        # pyusb reads 0 ms as "wait forever": never ask for less than 1 ms.
        ms = max(1, math.ceil(timeout * 1000))
        try:
            return bytes(self.dev.read(self.ep_in, READ_SIZE, ms))
        except usb.core.USBTimeoutError:
            return b""
        except usb.core.USBError as exc:
            if getattr(exc, "errno", None) == errno.EPIPE:  # a stall: clear it, or every read stalls again
                self._clear_halt(self.ep_in)
            raise LinkDown(f"USB read failed: {exc}") from None

    def write(self, data: bytes) -> None:
        import usb.core

        if self.dev is None:
            raise LinkDown("device closed")
        try:
            written = self.dev.write(self.ep_out, data, WRITE_TIMEOUT_MS)
        except usb.core.USBError as exc:  # a timeout too: a shoe that takes nothing for 100 ms is gone
            if getattr(exc, "errno", None) == errno.EPIPE:  # a stall: clear it, or every write stalls again
                self._clear_halt(self.ep_out)
            raise LinkDown(f"USB write failed: {exc}") from None
        if written != len(data):
            raise LinkDown(f"USB write took {written} of {len(data)} bytes")


class NativeUsbDriver(NativeDriver):
    """The native protocol over USB bulk endpoints."""

    name = "native-usb"

    def __init__(self, url: str, *, backend=None, **options) -> None:
        self.backend = backend
        parse_usb_url(url)  # a bad address is an error now, not at the first reconnect
        super().__init__(url, **options)

    def _make_transport(self) -> Transport:
        return UsbTransport(self.url, backend=self.backend)
