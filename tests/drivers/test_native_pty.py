"""The native driver end to end over a real pseudo-terminal, against a shoe written from SPEC.md.

Cases cite firmware_protocol/SPEC.md (the protocol) and
docs/standards/table-game-standards.md (what regulators ask: "standards N").
"""

from __future__ import annotations

import dataclasses
import itertools
import random
import time

import pytest

from firmware_protocol import encode
from firmware_protocol import messages as m
from shoed.drivers import open_driver
from shoed.drivers.base import DriverError
from tests.drivers.fake_shoes import FakeShoe, PtyCable, ShoeRunner, SocketCable, poll_until

FAST = {"heartbeat": 0.1, "silence": 0.8, "hello_repeat": 0.3, "gate_repeat": 0.1, "backoff_initial": 0.05,
        "backoff_max": 0.2}


@pytest.fixture
def cable(tmp_path):
    c = PtyCable(str(tmp_path / "shoe"))
    yield c
    c.close()


@pytest.fixture
def rig(cable):
    """A running fake shoe on the cable, and an open native driver on the cable's stable path."""
    runners, drivers = [], []

    def make(shoe: FakeShoe | None = None, **options):
        runner = ShoeRunner(shoe or FakeShoe(), cable).start()
        runners.append(runner)
        driver = open_driver("native", cable.link_path, **{**FAST, **options})
        drivers.append(driver)
        return runner, driver

    yield make
    for d in drivers:
        d.close()
    for r in runners:
        r.stop()


def cards_of(readings):
    return [r.card for r in readings if r.kind == "card"]


def card(text: str, mode: int = m.MODE_GAME) -> m.CardRead:
    return m.CardRead(rank="A23456789TJQK".index(text[0]) + 1, suit="CDHS".index(text[1]), confidence=255, mode=mode)


def journal_and_ack(driver, readings, journal):
    """What the daemon does: record each reliable reading, then acknowledge it."""
    for r in readings:
        if r.shoe_seq is not None:
            journal.append(r)
            driver.acknowledge(r)


def test_hello_then_cards_in_order_and_acknowledged(rig):
    # SPEC.md §8: Hello exchange; §6.3: take, record, acknowledge; §1 "every card counts exactly once".
    runner, driver = rig()
    readings = poll_until(driver, lambda rs: any(r.kind == "hello" for r in rs))
    link = [r for r in readings if r.kind == "link"]
    assert link[0].link == "connected"
    hello = next(r for r in readings if r.kind == "hello")
    assert hello.detail["vendor"] == "Test Shoes" and hello.detail["boot"] == 0x5EED1234
    assert hello.detail["negotiated"] == "1.0" and hello.source == f"native:{runner.cable.link_path}"
    for text in ("7H", "KD", "4C"):
        runner.shoe.event(card(text))
    runner.shoe.event(m.Button(button=m.BUTTON_CONFIRM))
    journal: list = []
    got = poll_until(driver, lambda rs: len([r for r in rs if r.shoe_seq is not None]) >= 4)
    journal_and_ack(driver, got, journal)
    assert cards_of(journal) == ["7H", "KD", "4C"]
    assert [r.shoe_seq for r in journal] == [1, 2, 3, 4]
    assert journal[3].kind == "button" and journal[3].button == "confirm"
    assert journal[0].confidence == 1.0 and journal[0].mode == "game" and journal[0].detail["boot"] == 0x5EED1234
    # The raw bytes are the frame as received, and sit at the reported offset of the stream.
    assert journal[0].raw == encode(dataclasses.replace(card("7H"), seq=1))
    # The shoe's queue empties once the acks arrive.
    deadline = time.monotonic() + 5
    while runner.shoe.queue and time.monotonic() < deadline:
        driver.poll(0.05)
    assert runner.shoe.queue == []
    # The host said Hello and set the shoe's clock (SPEC.md §10).
    kinds = [type(x).__name__ for x in runner.shoe.host_messages]
    assert "Hello" in kinds and "SetTime" in kinds and "Ack" in kinds
    assert abs(runner.shoe.utc_ms - time.time() * 1000) < 60_000


def test_every_reading_kind(rig):
    # SPEC.md §5.3 - §5.8: each reliable message becomes one reading.
    runner, driver = rig()
    poll_until(driver, lambda rs: any(r.kind == "hello" for r in rs))
    events = [
        m.CardRead(rank=1, suit=3, confidence=128, faced=True, mode=m.MODE_BURN),
        m.Unreadable(mode=m.MODE_GAME, reason=m.UNREADABLE_DOUBLE_FEED),
        m.Button(button=m.BUTTON_BANKER_DRAW), m.CutCard(), m.ShoeRemoved(), m.ShoeInserted(),
        m.Tamper(source=m.TAMPER_LID, active=True), m.Alarm(code=3, text="E3 Card Not Read"),
    ]
    for e in events:
        runner.shoe.event(e)
    got = poll_until(driver, lambda rs: len([r for r in rs if r.shoe_seq is not None]) >= len(events))
    journal: list = []
    journal_and_ack(driver, got, journal)
    c, u, b, cut, rem, ins, tam, al = journal
    assert (c.kind, c.card, c.mode, c.faced, round(c.confidence, 3)) == ("card", "AS", "burn", True, 0.502)
    assert (u.kind, u.mode, u.code) == ("unreadable", "game", "double_feed")
    assert (b.kind, b.button) == ("button", "banker_draw")
    assert [cut.kind, rem.kind, ins.kind] == ["cut_card", "shoe_removed", "shoe_inserted"]
    assert (tam.kind, tam.code, tam.detail["active"]) == ("tamper", "lid", True)
    assert (al.kind, al.code, al.text) == ("alarm", "3", "E3 Card Not Read")


def test_unplug_and_replug_mid_stream_loses_and_doubles_nothing(rig):
    # standards 7 and 13: link loss detected and recorded, what the shoe reported delivered when it
    # returns; SPEC.md §6: the shoe repeats what was not acknowledged, the host drops repeats.
    rng = random.Random(7)
    runner, driver = rig()
    poll_until(driver, lambda rs: any(r.kind == "hello" for r in rs))
    deck = [a + b for a in "A23456789TJQK" for b in "CDHS"]
    rng.shuffle(deck)
    journal: list = []  # what the daemon recorded, in order
    unacked: list = []  # recorded, acknowledgement not sent yet (a slow journal)
    links: list = []
    dealt = 0

    def take(readings):
        for r in readings:
            if r.kind == "link":
                links.append(r)
            elif r.shoe_seq is not None:
                journal.append(r)
                unacked.append(r)

    def ack_some(n):
        for r in unacked[:n]:
            driver.acknowledge(r)
        del unacked[:n]

    for _ in range(4):
        for text in deck[dealt:dealt + 6]:
            runner.shoe.event(card(text))
        dealt += 6
        take(poll_until(driver, lambda rs: len(cards_of(rs)) >= 2, timeout=10))
        ack_some(rng.randint(0, 2))
        runner.unplug()
        # Cards dealt while the cable is out stay queued in the shoe.
        for text in deck[dealt:dealt + 2]:
            runner.shoe.event(card(text))
        dealt += 2
        take(poll_until(driver, lambda rs: any(r.kind == "link" and r.link == "lost" for r in rs), timeout=10))
        ack_some(1)  # acknowledged while the link is down: sent when it returns
        time.sleep(rng.uniform(0.05, 0.3))
        runner.replug()
        take(poll_until(driver, lambda rs: any(r.kind == "link" and r.link == "restored" for r in rs), timeout=10))
        ack_some(len(unacked))
    take(poll_until(driver, lambda rs: len(journal) + len(cards_of(rs)) >= dealt, timeout=15))
    ack_some(len(unacked))
    take(driver.poll(0.5))  # anything doubled would arrive now
    assert cards_of(journal) == deck[:dealt], "every card exactly once, in the order dealt"
    assert [r.shoe_seq for r in journal] == list(range(1, dealt + 1))
    states = [r.link for r in links]
    assert states == ["lost", "restored"] * 4
    assert driver.stats.duplicates > 0, "the shoe repeated unacknowledged cards and the driver dropped them"
    deadline = time.monotonic() + 5
    while runner.shoe.queue and time.monotonic() < deadline:
        driver.poll(0.05)
    assert runner.shoe.queue == [], "every card acknowledged in the end"


def test_cards_made_while_the_daemon_was_away_arrive_after_a_daemon_restart(rig, cable):
    # SPEC.md §6.3: "after its own restart [the host] reads last back from its records, so repeats that
    # arrive after a host restart are still dropped"; standards 2: never lost or counted twice.
    runner, first = rig()
    poll_until(first, lambda rs: any(r.kind == "hello" for r in rs))
    for text in ("2C", "3C", "4C"):
        runner.shoe.event(card(text))
    got = poll_until(first, lambda rs: len(cards_of(rs)) >= 3)
    journal = [r for r in got if r.kind == "card"]
    first.acknowledge(journal[0])  # 3C and 4C journaled, but the daemon died before acknowledging them
    first.close()
    runner.shoe.event(card("5C"))
    second = open_driver("native", cable.link_path, **FAST)
    try:
        second.set_last_seq(journal[-1].shoe_seq, journal[-1].detail["boot"])
        got = poll_until(second, lambda rs: len(cards_of(rs)) >= 1)
        got += second.poll(0.5)  # anything doubled would arrive now
        assert cards_of(got) == ["5C"]
        assert second.stats.duplicates >= 2
    finally:
        second.close()


def test_a_restarted_shoe_is_reported(rig, cable):
    # SPEC.md §6.4: a new boot number means the shoe restarted and its numbering starts again.
    runner, driver = rig()
    poll_until(driver, lambda rs: any(r.kind == "hello" for r in rs))
    runner.shoe.event(card("9D"))
    got = poll_until(driver, lambda rs: len(cards_of(rs)) >= 1)
    driver.acknowledge(next(r for r in got if r.kind == "card"))
    runner.shoe.event(card("8D"))  # never acknowledged: lost with the shoe's RAM
    poll_until(driver, lambda rs: len(cards_of(rs)) >= 1)
    runner.unplug()
    poll_until(driver, lambda rs: any(r.link == "lost" for r in rs))
    runner.stop()  # the shoe powers off ...
    new_shoe = FakeShoe(boot=0xB00B)  # ... and comes back with a new session
    runner2 = ShoeRunner(new_shoe, cable)
    cable.replug()
    runner2.start()
    try:
        got = poll_until(driver, lambda rs: any(r.kind == "hello" for r in rs))
        hello = next(r for r in got if r.kind == "hello")
        assert hello.detail["restarted"] is True and hello.detail["boot"] == 0xB00B
        new_shoe.event(card("QS"))
        got = poll_until(driver, lambda rs: len(cards_of(rs)) >= 1)
        qs = next(r for r in got if r.kind == "card")
        assert (qs.card, qs.shoe_seq, qs.detail["boot"]) == ("QS", 1, 0xB00B)
    finally:
        runner2.stop()


def test_noise_on_the_line_is_rejected_never_a_card(rig):
    # SPEC.md §4 and §9; standards 11: resynchronise after garbage, a flipped bit is rejected.
    runner, driver = rig()
    poll_until(driver, lambda rs: any(r.kind == "hello" for r in rs))
    with runner.shoe.lock:
        runner.shoe.out += b"\x13\x37garbage\x00"
        bad = bytearray(encode(m.CardRead(seq=1, rank=13, suit=3)))
        bad[5] ^= 0x04  # one flipped bit inside a card frame
        runner.shoe.out += bad
    runner.shoe.event(card("KS"))
    got = poll_until(driver, lambda rs: len(cards_of(rs)) >= 1)
    got += driver.poll(0.4)  # the shoe's repeats must not double it
    warnings = [r for r in got if r.kind == "warning" and r.code == "frame_rejected"]
    # Both stretches are reported, together (shoed.drivers.noise), before the card behind them.
    assert sum(r.detail["stretches"] for r in warnings) >= 2 and all(r.card is None for r in warnings)
    assert cards_of(got) == ["KS"]


def test_a_gap_is_reported_and_the_repeat_fills_it(rig):
    # SPEC.md §6.3: a gap is dropped unacknowledged, the shoe goes back; standards 12: gaps are logged.
    runner, driver = rig()
    poll_until(driver, lambda rs: any(r.kind == "hello" for r in rs))
    with runner.shoe.lock:
        first = runner.shoe.event(card("6H"))
        second = runner.shoe.event(card("7H"))
        # Pretend the first frame was lost on the wire: take it out of what is about to be written.
        runner.shoe.out[:] = bytes(runner.shoe.out).replace(encode(first), b"")
    got = poll_until(driver, lambda rs: len(cards_of(rs)) >= 2)
    gaps = [r for r in got if r.kind == "warning" and r.code == "seq_gap"]
    assert len(gaps) == 1 and gaps[0].detail == {"expected": 1, "got": 2, "boot": 0x5EED1234}
    assert cards_of(got) == ["6H", "7H"] and second.seq == 2


def test_silence_is_a_lost_link_and_frames_restore_it(rig):
    # SPEC.md §7: no valid frame for the silence time -> link lost; frames return -> restored.
    runner, driver = rig()
    poll_until(driver, lambda rs: any(r.kind == "hello" for r in rs))
    runner.silent = True
    t0 = time.monotonic()
    got = poll_until(driver, lambda rs: any(r.link == "lost" for r in rs), timeout=5)
    assert 0.6 < time.monotonic() - t0 < 3.0
    assert "no valid frame" in next(r for r in got if r.link == "lost").text
    runner.silent = False
    poll_until(driver, lambda rs: any(r.link == "restored" for r in rs), timeout=5)


def test_the_driver_sends_heartbeats_when_idle(rig):
    # SPEC.md §7: each side sends at least one frame per second.
    runner, driver = rig(heartbeat=None, silence=3.0)  # the driver's own timing: heartbeat 0.5 s
    poll_until(driver, lambda rs: any(r.kind == "hello" for r in rs))
    start = len(runner.host_times)
    end = time.monotonic() + 2.2
    while time.monotonic() < end:
        driver.poll(0.1)
    times = runner.host_times[start:]
    assert len(times) >= 3
    assert max(b - a for a, b in itertools.pairwise(times)) < 1.0


def test_gate_is_sent_until_the_shoe_obeys(rig):
    # SPEC.md §10: the host repeats its gate message until a status shows the state asked for.
    runner, driver = rig()
    poll_until(driver, lambda rs: any(r.kind == "hello" for r in rs))
    driver.set_gate(False)
    deadline = time.monotonic() + 5
    while runner.shoe.gate_locked and time.monotonic() < deadline:
        driver.poll(0.05)
    assert runner.shoe.gate_locked is False
    driver.poll(0.3)
    gates = [x for x in runner.shoe.host_messages if isinstance(x, m.Gate)]
    driver.poll(0.5)
    assert len([x for x in runner.shoe.host_messages if isinstance(x, m.Gate)]) == len(gates), "no more repeats"


def test_a_shoe_without_a_gate_is_said_once(rig):
    # SPEC.md §10: "A shoe without a gate answers with gate_locked = 0, and the host treats it as gateless."
    _, driver = rig(FakeShoe(gate=False))
    poll_until(driver, lambda rs: any(r.kind == "hello" for r in rs))
    driver.set_gate(True)
    got = poll_until(driver, lambda rs: any(r.code == "no_gate" for r in rs))
    got += driver.poll(0.5)
    assert len([r for r in got if r.code == "no_gate"]) == 1


def test_every_poll_returns_within_its_timeout(rig, cable):
    # The daemon's loop must never hang on the shoe: connected, unplugged, and with the node gone.
    runner, driver = rig()
    poll_until(driver, lambda rs: any(r.kind == "hello" for r in rs))
    worst = 0.0

    def timed(timeout):
        nonlocal worst
        t0 = time.monotonic()
        driver.poll(timeout)
        worst = max(worst, time.monotonic() - t0 - timeout)

    for _ in range(5):
        timed(0.1)
    runner.unplug()
    for _ in range(10):
        timed(0.1)
    cable.close()  # the symlink too: the node is gone
    for _ in range(10):
        timed(0.1)
    timed(0.0)
    # A read or write that blocks would overrun by seconds; the margin is for scheduler jitter
    # on a loaded two-core test machine.
    assert worst < 0.3, f"a poll overran its timeout by {worst:.3f} s"


def test_missing_node_is_a_clear_error(tmp_path):
    with pytest.raises(DriverError, match=r"no such device .*ttyACM9.*plugged in"):
        open_driver("native", str(tmp_path / "ttyACM9"))


def test_a_second_reader_is_refused(rig, cable):
    # standards 14: the port is opened exclusively.
    rig()
    with pytest.raises(DriverError, match="port busy"):
        open_driver("native", cable.link_path)


def test_a_shoe_served_over_tcp_with_a_socket_url():
    # pyserial URLs (STYLE.md): socket://host:port stands in for /dev/ttyACM0 with no special code.
    cable = SocketCable()
    runner = ShoeRunner(FakeShoe(), cable).start()
    driver = open_driver("native", cable.url, **FAST)
    try:
        poll_until(driver, lambda rs: any(r.kind == "hello" for r in rs))
        for text in ("AC", "2C"):
            runner.shoe.event(card(text))
        got = poll_until(driver, lambda rs: len(cards_of(rs)) >= 2)
        for r in got:
            driver.acknowledge(r)
        runner.unplug()
        runner.shoe.event(card("3C"))
        got = poll_until(driver, lambda rs: any(r.link == "lost" for r in rs), timeout=5)
        runner.replug()
        got += poll_until(driver, lambda rs: len(cards_of(rs)) >= 1, timeout=10)
        assert cards_of(got) == ["3C"] and [r.link for r in got if r.kind == "link"] == ["lost", "restored"]
    finally:
        driver.close()
        runner.stop()
        cable.close()


def test_the_confidence_floor_is_a_source_option(rig):
    # SPEC.md §5.3 leaves low confidence to the host: `confidence_floor` in the source's options
    # (docs/stream-integrity.md). Below it the card is unreadable, entered by hand, never dealt.
    runner, driver = rig(confidence_floor=0.95)
    poll_until(driver, lambda rs: any(r.kind == "hello" for r in rs))
    runner.shoe.event(m.CardRead(rank=7, suit=2, confidence=230, mode=m.MODE_GAME))  # 0.90
    runner.shoe.event(m.CardRead(rank=8, suit=2, confidence=245, mode=m.MODE_GAME))  # 0.96
    got = poll_until(driver, lambda rs: len([r for r in rs if r.shoe_seq is not None]) >= 2)
    low, sure = [r for r in got if r.shoe_seq is not None]
    assert (low.kind, low.code, low.card) == ("unreadable", "low_confidence", None)
    assert (sure.kind, sure.card) == ("card", "8H")
    with pytest.raises(ValueError, match="confidence_floor"):
        open_driver("native", "/dev/null", confidence_floor=1.5)
