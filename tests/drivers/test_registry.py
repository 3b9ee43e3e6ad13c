"""The driver registry: names, lazy imports, clear errors for what is missing.

python-can's lesson (STYLE.md): backends registered by name and imported
lazily, so a missing optional library breaks only the backend that needs it.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from shoed.drivers import DriverError, capture_decoder, describe, driver_class, driver_names, open_driver


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(check=False, args=[sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_the_registered_drivers():
    assert driver_names() == ["native", "native-usb", "beetek", "camera", "shuffler"]
    assert set(describe()) == set(driver_names())
    for name in driver_names():
        assert driver_class(name).name == name
    for name in ["native", "native-usb", "beetek"]:
        assert callable(capture_decoder(name))
    with pytest.raises(DriverError, match="no capture"):
        capture_decoder("camera")


def test_an_unknown_driver_names_the_known_ones():
    with pytest.raises(DriverError, match=r"unknown driver 'bogus': choose one of native, native-usb, beetek, camera"):
        open_driver("bogus", "/dev/null")


def test_drivers_are_imported_only_when_used():
    proc = run_python(
        "import sys, shoed.drivers as d\n"
        "assert not [m for m in sys.modules if m.startswith(('usb', 'serial', 'shoed.drivers.native'))], sys.modules\n"
        "d.driver_class('beetek')\n"
        "assert 'usb' not in sys.modules and 'shoed.drivers.native_usb' not in sys.modules\n"
        "print('ok')\n"
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_a_missing_pyusb_names_the_package_and_serial_shoes_still_work():
    # Python's own way to make a module absent: None in sys.modules makes its import fail.
    proc = run_python(
        "import sys\n"
        "sys.modules['usb'] = None\n"
        "from shoed.drivers import driver_class, DriverError\n"
        "driver_class('native'); driver_class('beetek')\n"
        "try:\n"
        "    driver_class('native-usb')\n"
        "except DriverError as exc:\n"
        "    print(exc)\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "the native-usb driver needs pyusb: pip install 'shoed[usb]'"


def test_a_missing_pyserial_names_the_package():
    proc = run_python(
        "import sys\n"
        "sys.modules['serial'] = None\n"
        "from shoed.drivers import open_driver, DriverError\n"
        "try:\n"
        "    open_driver('beetek', '/dev/ttyUSB0')\n"
        "except DriverError as exc:\n"
        "    print(exc)\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "the beetek driver needs pyserial: pip install pyserial"
