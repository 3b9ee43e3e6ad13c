"""A pause of the reading process does not turn what waits on the line into a fault.

decision (shoed/drivers/link.py `poll`): the drivers judge a link by the clock (a Bee-Tek
token's tail gone stale after 0.5 s, a native shoe silent for `silence`). After a pause of
the daemon (a loaded host, a paused VM, SIGSTOP: `table.stall`) the clock has moved on while
the shoe's bytes wait in the port's buffer: they are read before the clock judges, so a
Bee-Tek card cut in two by a read is still the card, never `unreadable`, and a native shoe
that kept talking is not called lost. Real pseudo-terminals.
"""

from __future__ import annotations

import time

from shoed.drivers import open_driver
from tests.drivers.fake_shoes import FakeShoe, PtyCable, ShoeRunner, poll_until


def test_a_beetek_card_cut_by_a_read_survives_a_pause_of_the_reader(tmp_path):
    cable = PtyCable(str(tmp_path / "ttyUSB0"))
    driver = open_driver("beetek", cable.link_path, backoff_initial=0.05, backoff_max=0.2)
    try:
        poll_until(driver, lambda rs: any(r.kind == "link" for r in rs))
        cable.write(b" [Game]<Card:4")
        got = driver.poll(0.2)  # the driver holds the first half of the token
        assert [r for r in got if r.kind != "link"] == []
        time.sleep(0.05)
        cable.write(b"S> ")  # the rest arrives at once, while the reader is paused
        time.sleep(0.8)  # longer than the stale tail's 0.5 s
        got = poll_until(driver, lambda rs: any(r.kind in ("card", "unreadable") for r in rs), timeout=3)
        assert [(r.kind, r.card, r.code) for r in got if r.kind != "link"] == [("card", "4S", None)]
    finally:
        driver.close()
        cable.close()


def test_a_native_shoe_that_kept_talking_is_not_lost_by_a_paused_reader(tmp_path):
    cable = PtyCable(str(tmp_path / "shoe"))
    runner = ShoeRunner(FakeShoe(), cable).start()
    driver = open_driver("native", cable.link_path, heartbeat=0.1, silence=0.5, hello_repeat=0.3,
                         gate_repeat=0.1, backoff_initial=0.05, backoff_max=0.2)
    try:
        got = poll_until(driver, lambda rs: any(r.kind == "hello" for r in rs))
        time.sleep(1.0)  # paused for twice `silence`; the shoe's heartbeats wait in the buffer
        got = []
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline:
            got += driver.poll(0.05)
        assert not [r for r in got if r.kind == "link" and r.link == "lost"], [r.to_json() for r in got]
    finally:
        driver.close()
        runner.stop()
        cable.close()
