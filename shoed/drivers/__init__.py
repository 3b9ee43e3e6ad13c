"""Registry of shoe drivers: a name and a URL give a `Driver`.

Each driver lives in its own module and is imported only when it is used, so
a machine without pyusb still runs a serial shoe; a missing optional library
is a `DriverError` naming the package to install.

| name         | shoe                                   | URL examples                                         |
|--------------|----------------------------------------|------------------------------------------------------|
| `native`     | shoed firmware protocol over serial    | /dev/ttyACM0, /dev/serial/by-id/..., socket://h:p    |
| `native-usb` | shoed firmware protocol over USB bulk  | usb://1d50:6150, usb://1d50:6150/SERIAL              |
| `beetek`     | Bee-Tek ASCII reader, 9600 8N1         | /dev/ttyUSB0, /dev/serial/by-id/...                  |
| `camera`     | camera over the shoe's exit (OpenCV)   | 0, /dev/video0, a video file, a folder, rtsp://...   |
| `shuffler`   | card-reading shuffler, protocol 1.1    | /dev/ttyACM1, socket://h:p, usb://1d50:6151          |

Adding a driver: write `shoed/drivers/<name>.py` with a `Driver` subclass and,
if it has its own wire format, a `decode_capture(data)` for `shoed decode`;
then add a line to `_REGISTRY`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from shoed.drivers.base import Driver, DriverError, Reading

__all__ = ["Driver", "DriverError", "Reading", "capture_decoder", "describe", "driver_class", "driver_names", "open_driver"]


@dataclass(frozen=True)
class _Entry:
    module: str
    cls: str
    requires: tuple[tuple[str, str], ...] = ()  # (module to import, what to install)
    capture: str = ""  # module holding decode_capture(), for `shoed decode`
    summary: str = ""


_REGISTRY: dict[str, _Entry] = {
    "native": _Entry(
        "shoed.drivers.native", "NativeDriver",
        (("serial", "pyserial: pip install pyserial"),),
        "shoed.drivers.native", "shoed firmware protocol over a serial port or any pyserial URL",
    ),
    "native-usb": _Entry(
        "shoed.drivers.native_usb", "NativeUsbDriver",
        (("usb", "pyusb: pip install 'shoed[usb]'"),),
        "shoed.drivers.native", "shoed firmware protocol over USB bulk endpoints (pyusb)",
    ),
    "beetek": _Entry(
        "shoed.drivers.beetek", "BeeTekDriver",
        (("serial", "pyserial: pip install pyserial"),),
        "shoed.drivers.beetek", "Bee-Tek card-reading shoe, ASCII at 9600 8N1",
    ),
    "camera": _Entry(
        "shoed.drivers.camera", "CameraDriver",
        (("cv2", "OpenCV: pip install 'shoed[camera]'"), ("numpy", "numpy: pip install numpy")),
        "", "a camera over the shoe's exit (OpenCV card recognition), the fallback reader",
    ),
    "shuffler": _Entry(
        "shoed.drivers.shuffler", "ShufflerDriver",
        (("serial", "pyserial: pip install pyserial"),),
        "shoed.drivers.native", "card-reading shuffler (shoed protocol 1.1) on any pyserial URL or usb://VID:PID",
    ),
}


def driver_names() -> list[str]:
    """The registered driver names, in a stable order."""
    return list(_REGISTRY)


def describe() -> dict[str, str]:
    """Name -> one-line summary, for help texts."""
    return {name: entry.summary for name, entry in _REGISTRY.items()}


def _entry(name: str) -> _Entry:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise DriverError(f"unknown driver {name!r}: choose one of {', '.join(_REGISTRY)}") from None


def driver_class(name: str) -> type[Driver]:
    """The Driver subclass registered as `name`, importing its module now."""
    entry = _entry(name)
    for module, install in entry.requires:
        try:
            importlib.import_module(module)
        except ImportError:
            raise DriverError(f"the {name} driver needs {install}") from None
    return getattr(importlib.import_module(entry.module), entry.cls)


def open_driver(name: str, url: str, **options) -> Driver:
    """Build the driver `name` for `url` and open it (raises DriverError)."""
    driver = driver_class(name)(url, **options)
    driver.open()
    return driver


def capture_decoder(name: str):
    """`decode_capture(data: bytes) -> list[dict]` for the wire format of driver `name`."""
    entry = _entry(name)
    if not entry.capture:
        raise DriverError(f"the {name} driver reads no byte stream: there is no capture to decode")
    return importlib.import_module(entry.capture).decode_capture
