"""An emulated USB shoe: a pyusb backend whose only devices are FakeShoes.

`ShoeUsbBackend` implements pyusb's backend interface (usb.backend.IBackend)
in memory: device, configuration, interface and two bulk endpoint
descriptors, string descriptors (so `serial_number` works), claiming, and bulk
transfers that carry real protocol frames to and from a FakeShoe. Passed as
`backend=` to pyusb, it lets pyusb's own core (find, descriptors, claim,
read, write, timeouts, errors) run unchanged under the driver. The shoe's
timers (heartbeat, go-back-N repeat) run inside `bulk_read`, as firmware
would run them between transfers. Unplugging removes the device from the
enumeration and fails every transfer with ENODEV, as libusb does. A stalled
endpoint (`stall`) fails every transfer on it with EPIPE until the host clears
its halt (`clear_halt`), as a real device does (USB 2.0 §9.4.5). A device can
refuse to give its serial number (`serial_stalls`: its string descriptor
request stalls).
"""

from __future__ import annotations

import errno
import time
from types import SimpleNamespace

import usb.backend
import usb.core

from tests.drivers.fake_shoes import FakeShoe

EP_IN = 0x81
EP_OUT = 0x01
PACKET = 64


class EmulatedDevice:
    """One shoe on the bus: its descriptors and the FakeShoe behind them."""

    def __init__(self, shoe: FakeShoe, vid: int, pid: int, serial: str, address: int) -> None:
        self.shoe = shoe
        self.vid, self.pid, self.serial = vid, pid, serial
        self.address = address
        self.plugged = True
        self.configuration = 0  # unconfigured until the host sets it
        self.claimed_by: object | None = None
        self.last_beat = 0.0
        self.pending = bytearray()  # shoe output not yet read by the host
        self.deny_open = False  # True: opening fails with EACCES (no udev rule)
        self.halted: set[int] = set()  # endpoints that stall (EPIPE) until the host clears their halt
        self.serial_stalls = False  # True: the serial number's string descriptor request stalls

    @property
    def strings(self) -> dict[int, str]:
        return {1: "Test Shoes", 2: "T-1 card reader", 3: self.serial}


class Handle:
    def __init__(self, device: EmulatedDevice) -> None:
        self.device = device


def _gone() -> usb.core.USBError:
    return usb.core.USBError("No such device (it may have been disconnected)", -4, errno.ENODEV)


class ShoeUsbBackend(usb.backend.IBackend):
    """pyusb backend over emulated shoes (see module docstring)."""

    def __init__(self, heartbeat: float = 0.1, resend: float = 0.2) -> None:
        super().__init__()
        self.devices: list[EmulatedDevice] = []
        self.heartbeat = heartbeat
        self.resend = resend
        self._next_address = 1
        self.bulk_reads = 0
        self.clear_halts: list[int] = []  # endpoints the host cleared, in order
        self.stalled_transfers = 0

    # -- the test's hands

    def plug(self, shoe: FakeShoe, vid: int = 0x1D50, pid: int = 0x6150, serial: str = "T0001") -> EmulatedDevice:
        device = EmulatedDevice(shoe, vid, pid, serial, self._next_address)
        self._next_address += 1
        self.devices.append(device)
        shoe.power_on()
        return device

    def stall(self, device: EmulatedDevice, ep: int) -> None:
        """The endpoint halts (a STALL handshake): every transfer on it fails with EPIPE until cleared."""
        device.halted.add(ep)

    def unplug(self, device: EmulatedDevice) -> None:
        device.plugged = False
        self.devices.remove(device)

    def replug(self, device: EmulatedDevice) -> EmulatedDevice:
        """The same shoe back on the bus: a new device (new address), its queue kept."""
        new = EmulatedDevice(device.shoe, device.vid, device.pid, device.serial, self._next_address)
        self._next_address += 1
        self.devices.append(new)
        new.shoe.new_link()
        return new

    # -- enumeration and descriptors

    def enumerate_devices(self):
        return iter(list(self.devices))

    def get_parent(self, dev):
        return None

    def get_device_descriptor(self, dev: EmulatedDevice):
        return SimpleNamespace(
            bLength=18, bDescriptorType=1, bcdUSB=0x0200, bDeviceClass=0, bDeviceSubClass=0, bDeviceProtocol=0,
            bMaxPacketSize0=64, idVendor=dev.vid, idProduct=dev.pid, bcdDevice=0x0100, iManufacturer=1,
            iProduct=2, iSerialNumber=3, bNumConfigurations=1, address=dev.address, bus=1, port_number=1,
            port_numbers=(1,), speed=3,
        )

    def get_configuration_descriptor(self, dev, config):
        if config != 0:
            raise IndexError("configuration index out of range")
        return SimpleNamespace(
            bLength=9, bDescriptorType=2, wTotalLength=32, bNumInterfaces=1, bConfigurationValue=1,
            iConfiguration=0, bmAttributes=0x80, bMaxPower=50, extra_descriptors=[],
        )

    def get_interface_descriptor(self, dev, intf, alt, config):
        if intf != 0 or alt != 0 or config != 0:
            raise IndexError("interface index out of range")
        return SimpleNamespace(
            bLength=9, bDescriptorType=4, bInterfaceNumber=0, bAlternateSetting=0, bNumEndpoints=2,
            bInterfaceClass=0xFF, bInterfaceSubClass=0, bInterfaceProtocol=0, iInterface=0, extra_descriptors=[],
        )

    def get_endpoint_descriptor(self, dev, ep, intf, alt, config):
        if ep not in (0, 1) or intf != 0 or alt != 0 or config != 0:
            raise IndexError("endpoint index out of range")
        return SimpleNamespace(
            bLength=7, bDescriptorType=5, bEndpointAddress=(EP_IN, EP_OUT)[ep], bmAttributes=0x02,
            wMaxPacketSize=PACKET, bInterval=0, bRefresh=0, bSynchAddress=0, extra_descriptors=[],
        )

    # -- handles

    def open_device(self, dev: EmulatedDevice) -> Handle:
        if not dev.plugged:
            raise _gone()
        if dev.deny_open:
            raise usb.core.USBError("Access denied (insufficient permissions)", -3, errno.EACCES)
        return Handle(dev)

    def close_device(self, handle: Handle) -> None:
        if handle.device.claimed_by is handle:
            handle.device.claimed_by = None

    def set_configuration(self, handle: Handle, config_value: int) -> None:
        self._check(handle)
        handle.device.configuration = config_value

    def get_configuration(self, handle: Handle) -> int:
        self._check(handle)
        return handle.device.configuration

    def set_interface_altsetting(self, handle, intf, altsetting):
        self._check(handle)

    def claim_interface(self, handle: Handle, intf: int) -> None:
        self._check(handle)
        owner = handle.device.claimed_by
        if owner is not None and owner is not handle:
            raise usb.core.USBError("Resource busy", -6, errno.EBUSY)
        handle.device.claimed_by = handle

    def release_interface(self, handle: Handle, intf: int) -> None:
        if handle.device.claimed_by is handle:
            handle.device.claimed_by = None

    def is_kernel_driver_active(self, handle, intf):
        return False

    def detach_kernel_driver(self, handle, intf):
        pass

    def clear_halt(self, handle, ep):
        self._check(handle)
        self.clear_halts.append(ep)
        handle.device.halted.discard(ep)

    def ctrl_transfer(self, handle, bmRequestType, bRequest, wValue, wIndex, data, timeout):
        self._check(handle)
        if bmRequestType == 0x80 and bRequest == 0x06 and wValue >> 8 == 3:  # GET_DESCRIPTOR, string
            index = wValue & 0xFF
            if handle.device.serial_stalls:
                raise usb.core.USBError("Pipe error", -9, errno.EPIPE)
            if index == 0:
                body = (0x0409).to_bytes(2, "little")  # English (US)
            else:
                body = handle.device.strings.get(index, "").encode("utf-16-le")
            desc = bytes((2 + len(body), 3)) + body
            n = min(len(desc), len(data))
            data[:n] = type(data)(data.typecode, desc[:n])
            return n
        raise usb.core.USBError("Pipe error (request not supported)", -9, errno.EPIPE)

    # -- bulk transfers

    def bulk_write(self, handle: Handle, ep: int, intf: int, data, timeout: int) -> int:
        self._check(handle)
        assert ep == EP_OUT
        self._halt(handle, ep)
        handle.device.shoe.from_host(bytes(data))
        return len(data)

    def bulk_read(self, handle: Handle, ep: int, intf: int, buff, timeout: int) -> int:
        assert ep == EP_IN and timeout > 0, "a zero timeout would make pyusb wait forever"
        self.bulk_reads += 1
        deadline = time.monotonic() + timeout / 1000
        while True:
            self._check(handle)
            self._halt(handle, ep)
            dev = handle.device
            self._firmware_timers(dev)
            dev.pending += dev.shoe.take_output()
            if dev.pending:
                n = min(len(buff), len(dev.pending))
                buff[:n] = type(buff)(buff.typecode, bytes(dev.pending[:n]))
                del dev.pending[:n]
                return n
            left = deadline - time.monotonic()
            if left <= 0:
                raise usb.core.USBTimeoutError("Operation timed out", -7, errno.ETIMEDOUT)
            time.sleep(min(left, 0.005))

    def _firmware_timers(self, dev: EmulatedDevice) -> None:
        now = time.monotonic()
        if now - dev.last_beat >= self.heartbeat:
            dev.shoe.heartbeat()
            dev.last_beat = now
        dev.shoe.resend_if_due(now, self.resend)

    def _halt(self, handle: Handle, ep: int) -> None:
        if ep in handle.device.halted:
            self.stalled_transfers += 1
            raise usb.core.USBError("Pipe error", -9, errno.EPIPE)

    def _check(self, handle: Handle) -> None:
        if not handle.device.plugged:
            raise _gone()
