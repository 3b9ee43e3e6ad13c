"""Noise on the line is coalesced by every serial driver (shoed.drivers.noise; docs/network.md: Serial noise).

Real pseudo-terminals. A stretch of noise is one `warning` reading with its
count and its bytes (bounded), reported before the token or frame behind it,
or after a second of noise that goes on; never one reading per rejected
stretch (each would be a journal record with its own fsync).
"""

from __future__ import annotations

import time

import pytest

from firmware_protocol import messages as m
from shoed.drivers import open_driver
from shoed.drivers.noise import KEPT_BYTES
from tests.drivers.fake_shoes import FakeShoe, PtyCable, ShoeRunner, poll_until

BEETEK_NOISE = b"xyz!" * 2500  # 10 kB of printable junk: stretches the Bee-Tek framer rejects one by one


@pytest.fixture
def cable(tmp_path):
    c = PtyCable(str(tmp_path / "tty"))
    yield c
    c.close()


def test_beetek_noise_is_one_reading_before_the_card_behind_it(cable):
    driver = open_driver("beetek", cable.link_path, backoff_initial=0.05, backoff_max=0.2)
    try:
        poll_until(driver, lambda rs: any(r.kind == "link" for r in rs))
        cable.write(b" " + BEETEK_NOISE + b" [Game]<Card:AS> ")
        got = poll_until(driver, lambda rs: any(r.kind == "card" for r in rs))
    finally:
        driver.close()
    rs = [r for r in got if r.kind != "link"]
    assert [(r.kind, r.code) for r in rs] == [("warning", "garbled"), ("card", None)], \
        f"{len(rs)} readings (before: one warning per stretch, 64 for these 10 kB)"
    noise = rs[0]
    assert noise.detail["stretches"] > 1 and noise.detail["length"] == len(BEETEK_NOISE)
    assert noise.raw == BEETEK_NOISE[:KEPT_BYTES] and noise.offset == 1
    assert rs[1].card == "AS"


def test_a_card_like_damaged_token_is_still_a_reading_of_its_own(cable):
    # The dealer enters that card by hand: it is never folded into noise.
    driver = open_driver("beetek", cable.link_path, backoff_initial=0.05, backoff_max=0.2)
    try:
        poll_until(driver, lambda rs: any(r.kind == "link" for r in rs))
        cable.write(b" xyz!xyz! [Game]<Card:Q\x01S> [Game]<Card:2C> ")
        got = poll_until(driver, lambda rs: any(r.kind == "card" for r in rs))
    finally:
        driver.close()
    rs = [(r.kind, r.code) for r in got if r.kind != "link"]
    assert rs == [("warning", "garbled"), ("unreadable", "garbled"), ("card", None)]


def test_shuffler_noise_is_one_reading_before_the_frame_behind_it(cable, tmp_path):
    key = tmp_path / "order.key"
    key.write_text(bytes(range(32)).hex() + "\n")
    runner = ShoeRunner(FakeShoe(), cable).start()
    driver = open_driver("shuffler", cable.link_path, order_key_file=str(key), heartbeat=0.1, silence=0.8,
                         hello_repeat=0.3, backoff_initial=0.05, backoff_max=0.2)
    try:
        poll_until(driver, lambda rs: any(r.kind == "hello" for r in rs))
        with runner.shoe.lock:
            runner.shoe.out += b"\x01\x00" * 5000
        runner.shoe.event(m.CardRead(rank=1, suit=3, confidence=255, mode=m.MODE_GAME))
        got = poll_until(driver, lambda rs: any(r.kind == "card" for r in rs))
    finally:
        driver.close()
        runner.stop()
    noise = [r for r in got if r.kind == "warning" and r.code == "frame_rejected"]
    assert len(noise) == 1 and noise[0].detail["stretches"] == 5000
    assert [r.card for r in got if r.kind == "card"] == ["AS"]
    assert got.index(noise[0]) < next(i for i, r in enumerate(got) if r.kind == "card")


@pytest.mark.parametrize("driver_name, noise, stretches", [
    ("beetek", b" " + b"#junk#" * 100 + b" ", 4),  # before: reported only when a token came
    ("native", b"\x01\x00" * 100, 100),  # before: reported only when the next frame came
])
def test_noise_with_nothing_behind_it_is_reported_after_a_second(cable, driver_name, noise, stretches):
    # Only noise on the line: no shoe to send a frame or token after it.
    driver = open_driver(driver_name, cable.link_path, backoff_initial=0.05, backoff_max=0.2,
                         **({"heartbeat": 0.1, "silence": 5.0, "hello_repeat": 0.3} if driver_name == "native" else {}))
    try:
        driver.poll(0.1)
        cable.write(noise)
        started = time.monotonic()
        got = poll_until(driver, lambda rs: any(r.kind == "warning" for r in rs), timeout=5)
        took = time.monotonic() - started
    finally:
        driver.close()
    warnings = [r for r in got if r.kind == "warning"]
    assert len(warnings) == 1 and warnings[0].detail["stretches"] == stretches
    assert warnings[0].detail["length"] == len(noise.strip(b" "))
    assert 0.9 <= took < 3, f"reported after {took:.2f} s"
