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


def test_capabilities_are_declared_on_the_registry():
    from shoed.drivers import capabilities

    native, beetek, camera = capabilities("native"), capabilities("beetek"), capabilities("camera")
    assert native.gate and native.buttons and native.sequenced and not native.auto_confirm
    assert capabilities("native-usb") == native
    # A shoe without buttons: a card after a finished coup opens the next one.
    assert not beetek.buttons and not beetek.gate and beetek.auto_confirm
    # A camera only stands in for a shoe: it never confirms coups on its own.
    assert camera.fallback and not camera.auto_confirm
    # A shuffler deals no card: it is no reader of the table's and confirms nothing.
    shuffler = capabilities("shuffler")
    assert not shuffler.deals and not shuffler.auto_confirm and shuffler.sequenced and native.deals
    # The native drivers take a plain shoe's draws (protocol 1.1); a shuffler, a Bee-Tek and a camera send none.
    assert native.signals_draws and capabilities("native-usb").signals_draws
    assert not (shuffler.signals_draws or beetek.signals_draws or camera.signals_draws)
    assert native.to_json()["signals_draws"] is True
    # The native drivers and a Bee-Tek say each card's mode (burn or game); a camera and a shuffler do not.
    assert native.tells_mode and capabilities("native-usb").tells_mode and beetek.tells_mode
    assert not (camera.tells_mode or shuffler.tells_mode) and native.to_json()["tells_mode"] is True
    with pytest.raises(DriverError, match="unknown driver"):
        capabilities("bogus")


def test_the_skeleton_lists_every_method_of_the_interface():
    import inspect

    from shoed.drivers import skeleton
    from shoed.drivers.base import Driver

    interface = {name for name, member in vars(Driver).items()
                 if inspect.isfunction(member) and not name.startswith("_") and name != "source"}
    assert interface <= set(vars(skeleton.SkeletonDriver)), interface - set(vars(skeleton.SkeletonDriver))
    assert skeleton.SkeletonDriver.capabilities is not None and callable(skeleton.decode_capture)
    assert "skeleton" not in driver_names()


def test_a_third_party_driver_registers_through_an_entry_point(tmp_path):
    """A package installed beside shoed (a real dist-info on the path) brings its own driver."""
    dist = tmp_path / "acme_shoe-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-shoe\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[shoed.drivers]\nacme = acme_shoe:AcmeDriver\nnative = acme_shoe:AcmeDriver\n"
                                           "acme-nested = acme_shoe:Models.Mk2 [usb]\nvirtual = acme_shoe:AcmeDriver\n")
    (tmp_path / "acme_shoe.py").write_text(
        "from shoed.drivers.base import Capabilities, Driver\n"
        "class AcmeDriver(Driver):\n"
        "    name = 'acme'\n"
        "    summary = 'the Acme shoe'\n"
        "    capabilities = Capabilities(gate=True, buttons=False)\n"
        "    def open(self): pass\n"
        "    def close(self): pass\n"
        "    def poll(self, timeout): return []\n"
        "def decode_capture(data): return [{'bytes': len(data)}]\n"
        "class Models:\n"
        "    class Mk2(AcmeDriver):\n"
        "        name = 'acme-nested'\n"
    )
    proc = run_python(
        f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n"
        "from shoed.drivers import capabilities, capture_decoder, describe, driver_class, driver_names\n"
        "names = driver_names()\n"
        "assert names[:4] == ['native', 'native-usb', 'beetek', 'camera'] and names[-2:] == ['acme', 'acme-nested'], names\n"
        "assert driver_class('acme-nested').__qualname__ == 'Models.Mk2'  # a dotted attribute, extras after it\n"
        "assert driver_class('native').__module__ == 'shoed.drivers.native'  # shoed's own name wins\n"
        "assert 'virtual' not in names  # the built-in virtual shoe's name in a configuration\n"
        "assert describe()['acme'] == 'the Acme shoe'\n"
        "caps = capabilities('acme'); assert caps.gate and caps.auto_confirm\n"
        "assert capture_decoder('acme')(b'abc') == [{'bytes': 3}]\n"
        "print(driver_class('acme').__name__)\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "AcmeDriver"


def test_a_broken_third_party_driver_is_one_clear_error(tmp_path):
    dist = tmp_path / "bad_shoe-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: bad-shoe\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[shoed.drivers]\nbad = bad_shoe:Missing\nodd = json:dumps\n")
    proc = run_python(
        f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n"
        "from shoed.drivers import driver_class, DriverError\n"
        "for name in ('bad', 'odd'):\n"
        "    try:\n"
        "        driver_class(name)\n"
        "    except DriverError as exc:\n"
        "        print(exc)\n"
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[0].startswith("the bad driver cannot be loaded from bad_shoe:Missing: No module named 'bad_shoe'")
    assert lines[1] == "the odd driver (json:dumps) is not a shoed Driver"
