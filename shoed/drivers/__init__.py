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

Each entry declares the shoe's capabilities (`Capabilities`: a card gate,
dealer buttons, numbered frames, identities, draws without identities); the
daemon asks the registry, never a driver's name. The native drivers take a
plain shoe's draws (protocol 1.1, SPEC.md §5.22) as `draw` readings:
`signals_draws`.

Adding a driver: copy `shoed/drivers/skeleton.py`, which lists everything a
driver provides. A driver of shoed's own goes into `_REGISTRY`; a third-party
package registers its driver through the `shoed.drivers` entry-point group
(`name = "package.module:DriverClass"`), and the class carries its `summary`
and `capabilities`, as python-can's backends do.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import cast

from shoed.drivers.base import Capabilities, Driver, DriverError, Reading

__all__ = [
    "Capabilities", "Driver", "DriverError", "Reading", "build_driver", "capabilities", "capture_decoder",
    "capture_stream", "describe", "driver_class", "driver_names", "open_driver",
]

ENTRY_POINT_GROUP = "shoed.drivers"
# Names a package cannot take: `virtual` is the daemon's built-in virtual shoe in a [[sources]] table.
RESERVED = frozenset({"virtual"})


@dataclass(frozen=True)
class _Entry:
    module: str
    cls: str
    requires: tuple[tuple[str, str], ...] = ()  # (module to import, what to install)
    capture: str = ""  # module holding decode_stream() and decode_capture(), for `shoed decode`
    summary: str = ""
    capabilities: Capabilities | None = field(default_factory=Capabilities)  # None: declared on the class


_REGISTRY: dict[str, _Entry] = {
    "native": _Entry(
        "shoed.drivers.native", "NativeDriver",
        (("serial", "pyserial: pip install pyserial"),),
        "shoed.drivers.native", "shoed firmware protocol over a serial port or any pyserial URL",
        Capabilities(gate=True, buttons=True, sequenced=True, signals_draws=True, tells_mode=True),
    ),
    "native-usb": _Entry(
        "shoed.drivers.native_usb", "NativeUsbDriver",
        (("usb", "pyusb: pip install 'shoed[usb]'"),),
        "shoed.drivers.native", "shoed firmware protocol over USB bulk endpoints (pyusb)",
        Capabilities(gate=True, buttons=True, sequenced=True, signals_draws=True, tells_mode=True),
    ),
    "beetek": _Entry(
        "shoed.drivers.beetek", "BeeTekDriver",
        (("serial", "pyserial: pip install pyserial"),),
        "shoed.drivers.beetek", "Bee-Tek card-reading shoe, ASCII at 9600 8N1",
        Capabilities(gate=False, buttons=False, sequenced=False, tells_mode=True),
    ),
    "camera": _Entry(
        "shoed.drivers.camera", "CameraDriver",
        (("cv2", "OpenCV: pip install 'shoed[camera]'"), ("numpy", "numpy: pip install numpy")),
        "", "a camera over the shoe's exit (OpenCV card recognition), the fallback reader",
        Capabilities(gate=False, buttons=False, sequenced=False, fallback=True),
    ),
    "shuffler": _Entry(
        "shoed.drivers.shuffler", "ShufflerDriver",
        (("serial", "pyserial: pip install pyserial"),),
        "shoed.drivers.native", "card-reading shuffler (shoed protocol 1.1) on any pyserial URL or usb://VID:PID",
        Capabilities(sequenced=True, deals=False),
    ),
}


@functools.cache
def _registry() -> dict[str, _Entry]:
    """shoed's own drivers, then those third-party packages register (a name of shoed's own wins)."""
    found = dict(_REGISTRY)
    for point in entry_points(group=ENTRY_POINT_GROUP):
        if point.name in found or point.name in RESERVED:
            continue
        # `module:Class`, or `module:Outer.Class`, optionally with `[extras]`: as importlib.metadata reads it.
        found[point.name] = _Entry(point.module, point.attr, capture=point.module, summary="", capabilities=None)
    return found


def driver_names() -> list[str]:
    """The registered driver names, in a stable order: shoed's own, then third-party ones."""
    return list(_registry())


def describe() -> dict[str, str]:
    """Name -> one-line summary, for help texts; a third-party driver that cannot be used says why
    (one broken package must not hide the others)."""
    return {name: entry.summary or _third_party_summary(name) for name, entry in _registry().items()}


def _third_party_summary(name: str) -> str:
    try:
        return _third_party(name).summary or "(no summary)"
    except DriverError as exc:
        return f"unusable: {exc}"


def capabilities(name: str) -> Capabilities:
    """What the shoe behind driver `name` can do (without opening it)."""
    entry = _entry(name)
    if entry.capabilities is not None:
        return entry.capabilities
    return cast(Capabilities, _third_party(name).capabilities)  # _third_party refuses a class without them


def _entry(name: str) -> _Entry:
    try:
        return _registry()[name]
    except KeyError:
        raise DriverError(f"unknown driver {name!r}: choose one of {', '.join(_registry())}") from None


def _third_party(name: str) -> type[Driver]:
    """A third-party driver's class: its summary and capabilities live on it."""
    cls = driver_class(name)
    if not isinstance(getattr(cls, "capabilities", None), Capabilities):
        raise DriverError(f"the {name} driver ({cls.__module__}.{cls.__qualname__}) declares no Capabilities")
    return cls


def driver_class(name: str) -> type[Driver]:
    """The Driver subclass registered as `name`, importing its module now."""
    entry = _entry(name)
    for module, install in entry.requires:
        try:
            importlib.import_module(module)
        except ImportError:
            raise DriverError(f"the {name} driver needs {install}") from None
    try:
        cls = functools.reduce(getattr, entry.cls.split("."), importlib.import_module(entry.module))
    except (ImportError, AttributeError) as exc:
        raise DriverError(f"the {name} driver cannot be loaded from {entry.module}:{entry.cls}: {exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, Driver)):
        raise DriverError(f"the {name} driver ({entry.module}:{entry.cls}) is not a shoed Driver")
    return cls


def build_driver(name: str, url: str, **options) -> Driver:
    """The driver `name` for `url`, not opened yet. Its readings' source says the name it was built
    under: a package's class registered under two names, or one that kept the skeleton's `name`,
    still labels the journal with the name the configuration gave."""
    driver = driver_class(name)(url, **options)
    if driver.name != name:
        driver.name = name
    return driver


def open_driver(name: str, url: str, **options) -> Driver:
    """Build the driver `name` for `url` and open it (raises DriverError)."""
    driver = build_driver(name, url, **options)
    driver.open()
    return driver


# A capture decoded whole (a driver with `decode_capture` and no `decode_stream`) is read to this many bytes at most
WHOLE_CAPTURE_MAX = 256 << 20


def capture_decoder(name: str) -> Callable[[bytes], list[dict]]:
    """`decode_capture(data: bytes) -> list[dict]` for the wire format of driver `name`."""
    return cast(Callable[[bytes], list[dict]], _capture_function(name, "decode_capture"))


def capture_stream(name: str) -> Callable[[Iterable[bytes]], Iterable[dict]]:
    """`decode(chunks) -> dicts` for the wire format of driver `name`: its capture module's
    `decode_stream`, which decodes the chunks as they come; for a driver whose module has only
    `decode_capture`, the chunks joined (WHOLE_CAPTURE_MAX bytes at most: DriverError past them)
    and decoded whole."""
    streaming = _capture_function(name, "decode_stream", required=False)
    if streaming is not None:
        return cast(Callable[[Iterable[bytes]], Iterable[dict]], streaming)
    decode_capture = capture_decoder(name)

    def whole(chunks: Iterable[bytes]) -> list[dict]:
        data = bytearray()
        for chunk in chunks:
            data += chunk
            if len(data) > WHOLE_CAPTURE_MAX:
                raise DriverError(f"the {name} driver decodes a whole capture at once (it has no decode_stream): "
                                  f"give it one of {WHOLE_CAPTURE_MAX >> 20} MB at most")
        return decode_capture(bytes(data))

    return whole


def _capture_function(name: str, function: str, required: bool = True):
    entry = _entry(name)
    found = getattr(importlib.import_module(entry.capture), function, None) if entry.capture else None
    if found is None and required:
        raise DriverError(f"the {name} driver reads no byte stream: there is no capture to decode")
    return found
