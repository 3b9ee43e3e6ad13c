"""The native-usb driver over pyusb, with an emulated shoe on an in-memory USB bus.

SPEC.md §2, "USB vendor class": one interface of class 0xFF with one bulk IN
and one bulk OUT endpoint; packet boundaries carry no meaning. pyusb's own
core runs unchanged on top of the emulated backend (tests/drivers/usb_shoe.py).
"""

from __future__ import annotations

import time

import pytest

from firmware_protocol import messages as m
from shoed.drivers import DriverError, open_driver
from shoed.drivers.native_usb import parse_usb_url
from tests.drivers.fake_shoes import FakeShoe, poll_until
from tests.drivers.usb_shoe import ShoeUsbBackend

FAST = {"heartbeat": 0.1, "silence": 0.8, "hello_repeat": 0.3, "gate_repeat": 0.1, "backoff_initial": 0.05,
        "backoff_max": 0.2}


def card(text: str) -> m.CardRead:
    return m.CardRead(rank="A23456789TJQK".index(text[0]) + 1, suit="CDHS".index(text[1]), confidence=255)


@pytest.fixture
def bus():
    return ShoeUsbBackend()


@pytest.fixture
def drivers():
    opened = []
    yield opened
    for d in opened:
        d.close()


def open_usb(bus, drivers, url="usb://1d50:6150", **options):
    d = open_driver("native-usb", url, backend=bus, **{**FAST, **options})
    drivers.append(d)
    return d


def acknowledge_all(driver, shoe, readings) -> None:
    """Acknowledge the readings; the acks must reach the shoe over the bulk OUT endpoint."""
    for r in readings:
        driver.acknowledge(r)
    deadline = time.monotonic() + 5
    while shoe.queue and time.monotonic() < deadline:
        driver.poll(0.05)
    assert shoe.queue == [], "the acks went out over the bulk OUT endpoint"


def test_found_by_vendor_and_product_and_reads_cards(bus, drivers):
    shoe = FakeShoe()
    bus.plug(shoe)
    driver = open_usb(bus, drivers)
    got = poll_until(driver, lambda rs: any(r.kind == "hello" for r in rs))
    assert [r.link for r in got if r.kind == "link"] == ["connected"]
    hello = next(r for r in got if r.kind == "hello")
    assert hello.source == "native-usb:usb://1d50:6150" and hello.detail["serial"] == "T0001"
    for text in ("AH", "TS", "QD"):
        shoe.event(card(text))
    got = poll_until(driver, lambda rs: len([r for r in rs if r.kind == "card"]) >= 3)
    cards = [r for r in got if r.kind == "card"]
    assert [r.card for r in cards] == ["AH", "TS", "QD"]
    acknowledge_all(driver, shoe, cards)


def test_the_serial_number_picks_one_shoe_among_several(bus, drivers):
    a, b = FakeShoe(boot=1), FakeShoe(boot=2)
    bus.plug(a, serial="SH-A")
    bus.plug(b, serial="SH-B")
    driver = open_usb(bus, drivers, "usb://1d50:6150/SH-B")
    got = poll_until(driver, lambda rs: any(r.kind == "hello" for r in rs))
    assert next(r for r in got if r.kind == "hello").detail["boot"] == 2
    with pytest.raises(DriverError, match=r"no such device usb://1d50:6150/SH-C: .* with serial number SH-C"):
        open_usb(bus, drivers, "usb://1d50:6150/SH-C")


def test_unplug_and_replug_loses_and_doubles_nothing(bus, drivers):
    # standards 7 and 13; SPEC.md §6: unacknowledged messages are repeated after the link returns.
    shoe = FakeShoe()
    device = bus.plug(shoe)
    driver = open_usb(bus, drivers)
    poll_until(driver, lambda rs: any(r.kind == "hello" for r in rs))
    dealt = ["2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS", "JS"]
    journal, links = [], []
    for text in dealt[:5]:
        shoe.event(card(text))
    got = poll_until(driver, lambda rs: len([r for r in rs if r.kind == "card"]) >= 5)
    journal += [r for r in got if r.kind == "card"]
    driver.acknowledge(journal[1])  # 2S and 3S acknowledged; 4S..6S recorded but not yet
    bus.unplug(device)
    for text in dealt[5:8]:
        shoe.event(card(text))  # read while the cable is out
    got = poll_until(driver, lambda rs: any(r.link == "lost" for r in rs), timeout=5)
    links += [r.link for r in got if r.kind == "link"]
    assert "No such device" in next(r for r in got if r.link == "lost").text
    time.sleep(0.2)
    device = bus.replug(device)
    got = poll_until(driver, lambda rs: len([r for r in rs if r.kind == "card"]) >= 3, timeout=10)
    links += [r.link for r in got if r.kind == "link"]
    journal += [r for r in got if r.kind == "card"]
    for text in dealt[8:]:
        shoe.event(card(text))
    got = poll_until(driver, lambda rs: len([r for r in rs if r.kind == "card"]) >= 2)
    journal += [r for r in got if r.kind == "card"]
    for r in journal:
        driver.acknowledge(r)
    journal += [r for r in driver.poll(0.5) if r.kind == "card"]
    assert [r.card for r in journal] == dealt, "every card exactly once, in order"
    assert links == ["lost", "restored"]
    assert driver.stats.duplicates >= 3, "4S..6S came again after the replug and were dropped"
    assert shoe.queue == []


def test_missing_device(bus):
    with pytest.raises(DriverError, match=r"^no such device usb://1d50:6150: no USB device 1d50:6150; is the shoe"):
        open_driver("native-usb", "usb://1d50:6150", backend=bus)


def test_permission_denied(bus):
    device = bus.plug(FakeShoe())
    device.deny_open = True
    with pytest.raises(DriverError, match=r"^permission denied on USB device 1d50:6150 \(bus 1, address 1\): install udev/70-shoed.rules .*plugdev"):
        open_driver("native-usb", "usb://1d50:6150", backend=bus)


def test_a_second_reader_is_refused(bus, drivers):
    bus.plug(FakeShoe())
    open_usb(bus, drivers)
    with pytest.raises(DriverError, match=r"^port busy: another program has claimed the shoe's interface"):
        open_usb(bus, drivers)


@pytest.mark.parametrize(
    "url, parsed",
    [("usb://1d50:6150", (0x1D50, 0x6150, None)), ("usb://1D50:6150/SH0042", (0x1D50, 0x6150, "SH0042"))],
)
def test_usb_addresses(url, parsed):
    assert parse_usb_url(url) == parsed


@pytest.mark.parametrize("url", ["usb://", "usb://1d50", "usb://xyz:6150", "/dev/ttyACM0", "usb://12345:1"])
def test_bad_usb_addresses(url):
    with pytest.raises(DriverError, match="bad USB address"):
        open_driver("native-usb", url, backend=ShoeUsbBackend())


def test_every_poll_returns_within_its_timeout(bus, drivers):
    shoe = FakeShoe()
    device = bus.plug(shoe)
    driver = open_usb(bus, drivers)
    poll_until(driver, lambda rs: any(r.kind == "hello" for r in rs))
    worst = 0.0
    for phase in ("plugged", "unplugged"):
        if phase == "unplugged":
            bus.unplug(device)
        for _ in range(8):
            t0 = time.monotonic()
            driver.poll(0.1)
            worst = max(worst, time.monotonic() - t0 - 0.1)
    t0 = time.monotonic()
    driver.poll(0)
    worst = max(worst, time.monotonic() - t0)
    assert worst < 0.3  # pyusb waits forever on a 0 ms timeout; the driver never asks for one


def test_a_shuffler_on_usb_bulk_endpoints(bus, drivers, tmp_path):
    """The shuffler driver takes the native-usb transport for a usb:// URL (SPEC.md §2, §5.15)."""
    shuffler = FakeShoe(minor=1)
    bus.plug(shuffler)
    key = tmp_path / "order.key"
    key.write_text(bytes(range(32)).hex())
    driver = open_driver("shuffler", "usb://1d50:6150", backend=bus, order_key_file=str(key), **FAST)
    drivers.append(driver)
    got = poll_until(driver, lambda rs: any(r.kind == "hello" for r in rs))
    hello = next(r for r in got if r.kind == "hello")
    assert hello.source == "shuffler:usb://1d50:6150" and hello.detail["negotiated"] == "1.1"
    shuffler.event(m.ShuffleStarted(shuffle=9, decks=1))
    shuffler.event(m.OrderChunk(shuffle=9, position=0, cards=("AH", "TS")))
    got = poll_until(driver, lambda rs: any(r.kind == "order_chunk" for r in rs))
    assert [r.kind for r in got if r.shoe_seq] == ["shuffle_started", "order_chunk"]
    assert got[-1].detail["count"] == 2 and "cards" not in got[-1].detail  # sealed
    with pytest.raises(DriverError, match="bad USB address"):
        open_driver("shuffler", "usb://nonsense", backend=bus, order_key_file=str(key))


def test_a_plain_shoes_draws_come_over_usb_once_each_in_order(bus, drivers):
    """A plain shoe (SPEC.md §5.22: it sees a card leave, not its face) on the USB bulk endpoints: each
    `draw` is one reading of kind draw with its shoe seq, mode and trigger, in order; acknowledged, the
    shoe stops repeating it."""
    shoe = FakeShoe(minor=1)
    bus.plug(shoe)
    driver = open_usb(bus, drivers)
    got = poll_until(driver, lambda rs: any(r.kind == "hello" for r in rs))
    assert next(r for r in got if r.kind == "hello").detail["negotiated"] == "1.1"
    shoe.event(m.Draw(seq=0, mode=m.MODE_BURN, trigger=m.DRAW_BUTTON))
    for _ in range(3):
        shoe.event(m.Draw(seq=0))
    got = poll_until(driver, lambda rs: len([r for r in rs if r.kind == "draw"]) >= 4)
    draws = [r for r in got if r.kind == "draw"]
    assert [(r.mode, r.code, r.card) for r in draws] == [("burn", "button", None)] + [("game", "sensor", None)] * 3
    first = draws[0].shoe_seq
    assert [r.shoe_seq for r in draws] == list(range(first, first + 4))  # once each, in order
    acknowledge_all(driver, shoe, draws)
    assert not [r for r in driver.poll(0.5) if r.kind == "draw"], "an acknowledged draw is not read again"


@pytest.mark.parametrize("ep", [0x81, 0x01], ids=["IN", "OUT"])
def test_a_stalled_endpoint_is_cleared_and_the_shoe_read_again(bus, drivers, ep):
    # USB 2.0 §9.4.5: a halted endpoint stalls (EPIPE) every transfer until ClearFeature(ENDPOINT_HALT);
    # releasing and claiming the interface again does not clear it. The driver clears it on EPIPE and
    # after each claim, and the shoe's cards come again, once each.
    shoe = FakeShoe()
    device = bus.plug(shoe)
    driver = open_usb(bus, drivers)
    poll_until(driver, lambda rs: any(r.kind == "hello" for r in rs))
    bus.clear_halts.clear()
    bus.stall(device, ep)
    shoe.event(card("2H"))
    got = poll_until(driver, lambda rs: any(r.kind == "card" for r in rs), timeout=6)
    cards = [r for r in got if r.kind == "card"]
    assert [r.card for r in cards] == ["2H"]
    acknowledge_all(driver, shoe, cards)  # the ack goes out over the OUT endpoint: the shoe releases 2H
    assert bus.stalled_transfers >= 1, "the stall was met"
    assert ep in bus.clear_halts and not device.halted
    assert bus.stalled_transfers <= 3, "cleared at the first stall, not retried against a halted endpoint"
    cards += [r for r in driver.poll(0.3) if r.kind == "card"]
    assert [r.card for r in cards] == ["2H"], "read once"


def test_both_endpoints_are_cleared_when_the_interface_is_claimed(bus, drivers):
    bus.plug(FakeShoe())
    open_usb(bus, drivers)
    assert sorted(bus.clear_halts) == [0x01, 0x81]


@pytest.mark.parametrize("how", ["stall", "eacces"])
def test_a_sibling_that_cannot_give_its_serial_is_skipped(bus, drivers, how):
    # Two shoes with the same VID:PID, the URL names B; A, enumerated first, cannot give its serial
    # number (its string request stalls, or it is not ours to open): B is opened all the same.
    a = bus.plug(FakeShoe(boot=1), serial="SH-A")
    bus.plug(FakeShoe(boot=2), serial="SH-B")
    if how == "stall":
        a.serial_stalls = True
    else:
        a.deny_open = True
    driver = open_usb(bus, drivers, "usb://1d50:6150/SH-B")
    got = poll_until(driver, lambda rs: any(r.kind == "hello" for r in rs))
    assert next(r for r in got if r.kind == "hello").detail["boot"] == 2
    # No device matches: the error names the serial wanted, and the device that did not give its own.
    with pytest.raises(DriverError, match=r"no such device usb://1d50:6150/SH-C: no USB device 1d50:6150 with serial "
                                          r"number SH-C .*1 did not: .*bus 1, address 1"):
        open_usb(bus, drivers, "usb://1d50:6150/SH-C")
