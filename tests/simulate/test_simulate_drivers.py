"""The daemon's own shoe drivers read the virtual shoe, every card exactly once.

This is what the virtual shoe is for: the native driver (shoed.drivers) over a
real pty behind a by-id style symlink, with lost, repeated and corrupted frames,
garbage and two unplugs, must report the dealt cards exactly once and in order;
the Bee-Tek driver must report every token, unreadable reads included.
"""

from __future__ import annotations

import time

import pytest

from shoed.drivers import open_driver
from shoed.simulate import FaultPlan, VirtualShoe


def read_all(shoe: VirtualShoe, driver, timeout: float, linger: float = 0.0) -> list:
    readings = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for reading in driver.poll(0.05):
            readings.append(reading)
            driver.acknowledge(reading)  # as the daemon does once the reading is journaled
        if shoe.done:
            break
    end = time.monotonic() + linger
    while time.monotonic() < end:
        readings.extend(driver.poll(0.05))
    return readings


@pytest.fixture
def running():
    opened = []

    def start(protocol: str, tmp_path, **kw):
        shoe = VirtualShoe(protocol=protocol, link=str(tmp_path / "shoe"), cut_from_end=250, **kw)
        driver = open_driver(protocol, shoe.start())
        opened.append((shoe, driver))
        driver.open()
        driver.set_gate(False)
        return shoe, driver

    yield start
    for shoe, driver in opened:
        driver.close()
        shoe.stop()


def test_native_driver_counts_every_card_once(running, tmp_path):
    plan = FaultPlan(lose=0.03, repeat=0.03, ber=5e-4, garbage=0.03, disconnect_at=(10, 40), reconnect_after=0.3)
    shoe, driver = running("native", tmp_path, seed=4, faults=plan)
    readings = read_all(shoe, driver, timeout=60)
    assert shoe.done
    cards = [(r.card, r.mode) for r in readings if r.kind == "card"]
    assert cards == [(e.card, e.mode) for e in shoe.truth if e.kind == "card"]
    buttons = [r.button for r in readings if r.kind == "button"]
    assert buttons == [e.button for e in shoe.truth if e.kind == "button"]
    links = [r.link for r in readings if r.kind == "link"]
    assert links.count("lost") == 2 and links.count("restored") == 2
    assert shoe.link_stats.disconnects == 2


def test_beetek_driver_reads_every_token(running, tmp_path):
    shoe, driver = running("beetek", tmp_path, seed=5, faults=FaultPlan(unreadable_at=(5, 30)))
    readings = read_all(shoe, driver, timeout=30, linger=0.5)
    got = [(r.kind, r.card, r.mode) for r in readings if r.kind in ("card", "unreadable")]
    want = [(e.kind, e.card if e.kind == "card" else None, e.mode) for e in shoe.truth if e.is_card]
    assert got == want
