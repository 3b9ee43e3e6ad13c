"""A third-party driver, installed as its own package (a real dist-info with a `shoed.drivers` entry point),
used by the daemon as integrators use it: named in the configuration with its own options, its
capabilities honoured (the gate driven, the confirm button taken, auto_confirm for a shoe without
buttons), and a card read through it on a real pseudo-terminal reaching the table and the journal."""

from __future__ import annotations

import json
import os
import select
import time
import tty
from pathlib import Path

import pytest

from harness.processes import Daemon, run_shoed
from harness.records import Display, journal_inputs, journal_records

# The package: a shoe that sends one ASCII line per event and takes `GATE LOCK`/`GATE OPEN` and `ACK`.
DRIVER = '''
import time
import serial
from shoed.drivers.base import Capabilities, Driver, DriverError, Reading

def _reading(raw, offset, source, mono, utc):
    word, _, arg = raw.rstrip(b"\\n").decode("ascii", "replace").partition(" ")
    common = dict(source=source, raw=raw, offset=offset, mono_ns=mono, utc_ns=utc)
    if word == "CARD" and len(arg) == 2:
        return Reading("card", card=arg, **common)
    if word == "BURN" and len(arg) == 2:
        return Reading("card", card=arg, mode="burn", **common)
    if word == "BTN":
        return Reading("button", button=arg, **common)
    if word == "IN":
        return Reading("shoe_inserted", **common)
    if word == "LINK":
        return Reading("link", link=arg, **common)
    return Reading("unreadable", code="garbled", **common)

class LineShoe(Driver):
    name = "lineshoe"
    summary = "a shoe of ASCII lines"
    capabilities = Capabilities(gate=True, buttons=True)
    source_options = frozenset({"baudrate", "greeting"})

    def open(self):
        try:
            self.port = serial.serial_for_url(self.url, baudrate=self.options.get("baudrate", 9600), timeout=0)
        except (serial.SerialException, OSError) as exc:
            raise DriverError(f"no line shoe at {self.url}: {exc}") from None
        self.buf, self.offset = b"", 0
        self.port.write(self.options.get("greeting", "HELLO").encode() + b"\\n")

    def close(self):
        if getattr(self, "port", None) is not None:
            self.port.close()
            self.port = None

    def poll(self, timeout):
        deadline, out = time.monotonic() + timeout, []
        while not out and time.monotonic() < deadline:
            self.buf += self.port.read(4096)
            while b"\\n" in self.buf:
                raw, _, self.buf = self.buf.partition(b"\\n")
                out.append(_reading(raw + b"\\n", self.offset, self.source, time.monotonic_ns(), time.time_ns()))
                self.offset += len(raw) + 1
            if not out:
                time.sleep(0.005)
        return out

    def acknowledge(self, reading):
        self.port.write(b"ACK\\n")

    def set_gate(self, locked):
        self.port.write(b"GATE LOCK\\n" if locked else b"GATE OPEN\\n")

class LineShoeLite(LineShoe):
    name = "lineshoe-lite"
    capabilities = Capabilities(gate=False, buttons=False)

    def set_gate(self, locked):
        Driver.set_gate(self, locked)

class NoCapabilities(LineShoe):
    name = "lineshoe-bare"
    capabilities = None
'''


def install_package(root: Path) -> dict:
    """The package as pip installs it (module + dist-info with its entry points); the environment that finds it."""
    (root / "line_shoe.py").write_text(DRIVER)
    dist = root / "line_shoe-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: line-shoe\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[shoed.drivers]\nlineshoe = line_shoe:LineShoe\nlineshoe-lite = line_shoe:LineShoeLite\n"
        "lineshoe-bare = line_shoe:NoCapabilities\nlineshoe-mk2 = line_shoe:LineShoe\n")
    repo = Path(__file__).resolve().parents[2]
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(repo), str(root)])}


class Pty:
    """The shoe's end of a real pseudo-terminal; `path` is what the daemon opens."""

    def __init__(self) -> None:
        self.master, slave = os.openpty()
        tty.setraw(slave)
        self.path = os.ttyname(slave)
        self._slave = slave
        self.heard = b""

    def send(self, *lines: str) -> None:
        for line in lines:
            acks = heard_acks(self.heard) + 1
            os.write(self.master, line.encode() + b"\n")
            self.until(lambda heard, n=acks: heard_acks(heard) >= n, f"the ACK of {line}")

    def until(self, predicate, what: str, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while not predicate(self.heard):
            if time.monotonic() > deadline:
                raise AssertionError(f"the shoe never heard {what}: {self.heard!r}")
            if select.select([self.master], [], [], 0.05)[0]:
                self.heard += os.read(self.master, 4096)

    def close(self) -> None:
        os.close(self.master)
        os.close(self._slave)


def heard_acks(heard: bytes) -> int:
    return heard.count(b"ACK\n")


@pytest.fixture
def package(tmp_path):
    return install_package(tmp_path)


def test_the_command_line_finds_lists_and_checks_a_third_party_driver(base, package, tmp_path):
    proc = run_python(package, "from shoed.drivers import capabilities, describe, driver_names\n"
                               "print(driver_names()[-3:], describe()['lineshoe'], capabilities('lineshoe-lite').auto_confirm)\n"
                               "print(describe()['lineshoe-bare'])")
    listed, broken = proc.strip().splitlines()
    assert listed == "['lineshoe-lite', 'lineshoe-bare', 'lineshoe-mk2'] a shoe of ASCII lines True"
    # One class under a second name: its readings say the name the configuration gave.
    said = run_python(package, "from shoed.drivers import build_driver\n"
                               "print(build_driver('lineshoe-mk2', '/dev/ttyS9').source)")
    assert said.strip() == "lineshoe-mk2:/dev/ttyS9"
    # One broken package does not hide the others: its summary says why it cannot be used.
    assert broken == "unusable: the lineshoe-bare driver (line_shoe.NoCapabilities) declares no Capabilities"
    # The help of the commands that take a driver lists it with its summary.
    for command in ("run", "decode"):
        shown = " ".join(run_in(package, command, "--help").stdout.split())
        assert "lineshoe: a shoe of ASCII lines; lineshoe-lite: a shoe of ASCII lines; lineshoe-bare: unusable" in shown
        assert "native: shoed firmware protocol over a serial port" in shown
    config = tmp_path / "shoed.toml"
    config.write_text("[[sources]]\ndriver = 'lineshoe'\nurl = '/dev/ttyS9'\nbaudrate = 19200\ngreeting = 'HI'\n")
    checked = run_in(package, "config", "check", str(config))
    assert checked.returncode == 0, checked.stderr
    assert json.loads(checked.stdout)["sources"] == [
        {"driver": "lineshoe", "url": "/dev/ttyS9", "baudrate": 19200, "greeting": "HI"}]
    assert json.loads(checked.stdout)["auto_confirm"] is False  # it has buttons
    config.write_text("[[sources]]\ndriver = 'lineshoe-lite'\nurl = '/dev/ttyS9'\n")
    assert json.loads(run_in(package, "config", "check", str(config)).stdout)["auto_confirm"] is True
    # Its options are checked as shoed's own are: an unknown one, or a known one of the wrong kind.
    for text, says in [("colour = 'red'", "unknown setting(s) colour (known: baudrate, driver, greeting, url)"),
                       ("baudrate = 'fast'", "baudrate must be a whole number of baud from 1 to 12000000, not 'fast'")]:
        config.write_text(f"[[sources]]\ndriver = 'lineshoe'\nurl = '/dev/ttyS9'\n{text}\n")
        refused = run_in(package, "config", "check", str(config))
        assert refused.returncode == 2 and says in refused.stderr, refused.stderr
    # A driver that declares no capabilities is refused before anything is made, in the file and on the line.
    config.write_text("[[sources]]\ndriver = 'lineshoe-bare'\nurl = '/dev/ttyS9'\n")
    refused = run_in(package, "config", "check", str(config))
    assert refused.returncode == 2 and "declares no Capabilities" in refused.stderr, refused.stderr
    started = run_in(package, "run", "--source", "lineshoe-bare:/dev/ttyS9", "--journal", str(base / "journal"),
                     "--keys", str(base / "keys"))
    assert started.returncode == 2 and "declares no Capabilities" in started.stderr, started.stderr
    assert not (base / "journal").exists() and not (base / "keys").exists()
    # A name nobody registered lists every driver there is, the third-party ones too.
    unknown = run_in(package, "run", "--source", "sonar:/dev/x", "--journal", str(base / "journal"))
    assert "choose one of native, native-usb, beetek, camera, shuffler, lineshoe, lineshoe-lite, lineshoe-bare, " \
           "lineshoe-mk2, virtual" in unknown.stderr, unknown.stderr


def run_python(env: dict, code: str) -> str:
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def run_in(env: dict, *args: str):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "shoed", *args], env=env, capture_output=True, text=True, timeout=60)


def joined(display: Display) -> Display:
    """A display that has its snapshot: every later event is in `display.events`."""
    deadline = time.monotonic() + 10
    while not display.snapshots and time.monotonic() < deadline:
        display.poll(0.05)
    assert display.snapshots, "no snapshot"
    return display


COUP_1 = ("CARD TS", "CARD 3C", "CARD KS", "CARD 3D", "CARD 5H")  # banker wins 6 to 5, the coup complete


def test_a_shoe_with_a_gate_and_buttons_deals_through_a_third_party_driver(base, package, tmp_path):
    shoe = Pty()
    config = tmp_path / "shoed.toml"
    config.write_text(f"ruleset = 'macau-statutory'\n[[sources]]\ndriver = 'lineshoe'\nurl = '{shoe.path}'\n"
                      "greeting = 'HELLO LINE SHOE'\n")
    try:
        with Daemon(base, "--config", str(config), env=package) as daemon:
            display = joined(Display(daemon))
            try:
                shoe.until(lambda h: b"HELLO LINE SHOE\n" in h, "its greeting (an option of its own)")
                shoe.until(lambda h: h.endswith(b"GATE LOCK\n"), "the gate locked while no card is due")
                shoe.send("IN")
                shoe.until(lambda h: h.endswith(b"GATE OPEN\n"), "the gate opened for the burn")
                shoe.send("BURN 2S", "BURN 5D", "BURN 6C", *COUP_1)
                shoe.until(lambda h: h.endswith(b"GATE LOCK\n"), "the gate locked once the coup is complete")
                display.until(lambda ev: any(e["kind"] == "coup.result" for e in ev), 10, "the result")
                shoe.send("CARD 9H")  # a card before the confirm: the table must not open coup 2 by itself
                display.until(lambda ev: any(e["kind"] == "misdeal" for e in ev), 10, "the extra card's misdeal")
                assert not any(e["kind"] == "coup.opened" and e["coup"] == 2 for e in display.events)
                cards = [e for e in display.events if e["kind"] == "card"]
                # The extra card is shown without its identity (the display audience: it may still be dealt).
                assert [c["card"] for c in cards] == ["TS", "3C", "KS", "3D", "5H", None]
                assert {c["source"] for c in cards} == {f"lineshoe:{shoe.path}"}
                result = next(e for e in display.events if e["kind"] == "coup.result")
                assert result["winner"] == "banker" and (result["player_total"], result["banker_total"]) == (5, 6)
            finally:
                display.close()
    finally:
        shoe.close()
    inputs = journal_inputs(daemon.journal)
    power = next(i for i in inputs if i["kind"] == "power")
    assert power["auto_confirm"] is False and power["sources"] == [f"lineshoe:{shoe.path}"]
    first = next(i for i in inputs if i["kind"] == "card" and i["mode"] == "game")
    assert first["card"] == "TS" and bytes.fromhex(first["raw"]) == b"CARD TS\n" and first["offset"] == 27
    assert run_shoed("journal", "verify", str(daemon.journal)).returncode == 0
    assert any(r.get("kind") == "step" for r in journal_records(daemon.journal))


def test_a_shoe_without_buttons_gets_auto_confirm_from_its_capabilities(base, package, tmp_path):
    shoe = Pty()
    try:
        with Daemon(base, "--source", f"lineshoe-lite:{shoe.path}", "--ruleset", "macau-statutory",
                    env=package) as daemon:
            display = joined(Display(daemon))
            try:
                shoe.until(lambda h: b"HELLO\n" in h, "its greeting")
                # Its burn cards as plain cards (mode game, the default): a driver that does not declare
                # tells_mode is not taken at its word, so the burn goes by the shoe's phase.
                shoe.send("CARD 2S", "CARD 5D", "CARD 6C", *COUP_1, "CARD 9H")
                # coup.opened and the card that opened it are two messages: wait for the second
                display.until(lambda ev: any(e["kind"] == "card" and e["coup"] == 2 for e in ev), 10,
                              "coup 2's first card")
                assert any(e["kind"] == "coup.opened" and e["coup"] == 2 for e in display.events)
                card = [e for e in display.events if e["kind"] == "card"][-1]
                assert (card["card"], card["coup"], card["recipient"]) == ("9H", 2, "player")
            finally:
                display.close()
    finally:
        shoe.close()
    assert b"GATE" not in shoe.heard  # no gate: set_gate is never sent to it
    inputs = journal_inputs(daemon.journal)
    power = next(i for i in inputs if i["kind"] == "power")
    assert power["auto_confirm"] is True and power["mode_told"] == []
    burned = [e["card"] for r in journal_records(daemon.journal) if r.get("kind") == "step"
              for e in r["events"] if e["kind"] == "shoe.burn"]
    assert burned == ["2S", "5D", "6C"]


def test_a_driver_that_raises_when_its_shoe_is_unplugged_does_not_stop_the_table(base, package, tmp_path):
    """The line shoe's driver lets pyserial's error out of poll() when the shoe goes (it does not
    reopen its own link, as the interface asks): the daemon runs on, the link is lost on record, and
    the driver is reopened and dealing again once the shoe is back at the same address."""
    link = tmp_path / "shoe"
    first = Pty()
    link.symlink_to(first.path)
    second = None
    try:
        with Daemon(base, "--source", f"lineshoe-lite:{link}", "--ruleset", "macau-statutory",
                    env=package) as daemon:
            display = joined(Display(daemon))
            try:
                first.until(lambda h: b"HELLO\n" in h, "its greeting")
                first.send("BURN 2S", "BURN 5D", "BURN 6C", "CARD TS")
                os.close(first.master)  # unplugged: the daemon's reads of the tty fail
                display.until(lambda ev: any(e["kind"] == "device.lost" for e in ev), 10, "the link lost")
                second = Pty()
                link.unlink()
                link.symlink_to(second.path)  # plugged in again, at the same address
                second.until(lambda h: b"HELLO\n" in h, "the greeting of the reopened driver")
                second.send("LINK connected", "CARD 3C")  # the driver's own news of its link: one reopening, one record
                display.until(lambda ev: any(e["kind"] == "card" and e["card"] == "3C" for e in ev), 10,
                              "the card after the replug")
                assert daemon.proc.poll() is None
                kinds = [e["kind"] for e in display.events if e["kind"].startswith("device.")]
                assert kinds[-2:] == ["device.lost", "device.restored"], kinds
                card = next(e for e in display.events if e["kind"] == "card" and e["card"] == "3C")
                assert (card["coup"], card["recipient"]) == (1, "banker")
            finally:
                display.close()
        assert daemon.proc.returncode == 0
    finally:
        os.close(first._slave)
        if second is not None:
            second.close()
    assert any(line.get("event") == "the shoe's driver failed: closing it and reopening it" for line in daemon.lines)
    assert run_shoed("replay", str(daemon.journal)).returncode == 0
