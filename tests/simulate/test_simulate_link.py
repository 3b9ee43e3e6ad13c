"""The virtual shoe end to end on real pseudo-terminals and a real TCP socket.

The test acts as the host (tests/simulate/simhost.py, SPEC.md §6.3 and §8):
every reliable message must arrive exactly once and in the order the shoe made
it, despite lost, repeated and corrupted frames, garbage and unplugs. Shoes are
kept short (cut card far from the end) and dealt at pace 0 so the tests are quick.
"""

from __future__ import annotations

import os
import time

import pytest

import firmware_protocol as fp
from shoed.rules.cards import parse_card
from shoed.simulate import FaultPlan, SimulatorError, VirtualShoe
from shoed.simulate.wire import native_message
from tests.simulate.simhost import TOKEN, NativeHost, read_beetek

SHORT = 250  # cut card 250 cards from the end of a 312-card shoe: ~60 cards dealt


def expected(truth):
    """The messages the shoe must have delivered, in order (seq aside)."""
    return [native_message(e) for e in truth]


def same(messages, truth):
    exp = expected(truth)
    if len(messages) != len(exp):
        return False
    return all(
        type(a) is type(b) and {**a.__dict__, "seq": 0} == {**b.__dict__, "seq": 0} for a, b in zip(messages, exp)
    )


@pytest.fixture
def shoes():
    started = []

    def make(**kw):
        kw.setdefault("seed", 1)
        kw.setdefault("cut_from_end", SHORT)
        shoe = VirtualShoe(**kw)
        started.append(shoe)
        return shoe

    yield make
    for shoe in started:
        shoe.stop()


def deliver(shoe, host, timeout=30.0):
    assert host.run_until(lambda: shoe.done, timeout), "the shoe did not finish"
    return host


def test_native_clean_run_delivers_every_event_once(shoes):
    shoe = shoes()
    host = NativeHost(shoe.start())
    deliver(shoe, host)
    truth = shoe.truth
    assert truth[0].kind == "shoe_inserted" and truth[-1].kind == "shoe_removed"
    assert same(host.taken, truth)
    assert [m.seq for m in host.taken] == list(range(1, len(truth) + 1))
    assert host.hellos[0].vendor == "shoed" and host.hellos[0].model == "virtual shoe"
    assert host.hellos[0].boot == shoe.boot
    assert host.rejected == 0


def test_native_recovers_lost_repeated_and_corrupted_frames(shoes):
    plan = FaultPlan(lose=0.05, repeat=0.05, ber=1e-3, garbage=0.05)
    shoe = shoes(faults=plan, seed=3, cut_from_end=270)
    host = deliver(shoe, NativeHost(shoe.start()), timeout=60)
    stats = shoe.link_stats
    assert stats.lost and stats.repeated and stats.corrupted_frames and stats.garbage_bytes
    assert host.rejected > 0 and host.duplicates > 0 and host.gaps > 0
    # every card arrived exactly once, in order
    assert same(host.taken, shoe.truth)
    cards = [fp.card_text(m) for m in host.taken if isinstance(m, fp.CardRead)]
    assert cards == [e.card for e in shoe.truth if e.kind == "card"]


def test_nothing_is_dealt_before_a_host_listens_at_pace_zero(shoes):
    shoe = shoes()
    shoe.start()
    time.sleep(0.3)
    assert shoe.truth == []  # as fast as the link allows: nobody listening allows nothing


def test_the_gate_holds_cards_back(shoes):
    # SPEC.md §10: a gate starts locked; Gate(locked=False) lets cards out.
    shoe = shoes()
    host = NativeHost(shoe.start(), unlock=False)
    host.open()
    host.run_until(lambda: False, 0.5)
    assert [m.NAME for m in host.taken] == ["shoe_inserted", "button"]  # then the burn card waits
    host.send(fp.StatusRequest())
    assert host.run_until(lambda: host.statuses, 2.0) and host.statuses[-1].gate_locked is True
    host.send(fp.Gate(locked=False))
    assert host.run_until(lambda: any(isinstance(m, fp.CardRead) for m in host.taken), 2.0)
    # lock again mid-shoe: the cards stop, buttons still come
    host.send(fp.Gate(locked=True))
    host.run_until(lambda: host.statuses and host.statuses[-1].gate_locked, 2.0)
    host.run_until(lambda: False, 0.3)  # let what was already past the gate arrive
    held = len([m for m in host.taken if isinstance(m, fp.CardRead)])
    host.run_until(lambda: False, 0.5)
    assert len([m for m in host.taken if isinstance(m, fp.CardRead)]) == held
    host.send(fp.Gate(locked=False))
    deliver(shoe, host)
    assert same(host.taken, shoe.truth)


def test_an_open_gate_shoe_deals_without_unlocking(shoes):
    shoe = shoes(gate="open")
    host = deliver(shoe, NativeHost(shoe.start(), unlock=False))
    assert same(host.taken, shoe.truth)


def test_unplug_and_replug_through_the_symlink(shoes, tmp_path):
    link = str(tmp_path / "shoe-by-id")
    shoe = shoes(link=link, faults=FaultPlan(disconnect_at=(5, 30), reconnect_after=0.2))
    address = shoe.start()
    assert address == link and os.path.realpath(link) == shoe.slave_path
    host = deliver(shoe, NativeHost(address), timeout=60)
    assert host.reopens >= 2
    assert shoe.link_stats.disconnects == 2
    assert os.path.realpath(link) == shoe.slave_path  # repointed at the pty of the last replug
    assert [e["link"] for e in shoe.wire_log if e["kind"] == "link"] == ["unplugged", "replugged"] * 2
    assert len(host.hellos) >= 3 and len({h.boot for h in host.hellos}) == 1  # same session throughout
    assert same(host.taken, shoe.truth)


def test_unplug_every_few_tenths_of_a_second(shoes, tmp_path):
    link = str(tmp_path / "shoe-by-id")
    shoe = shoes(link=link, pace=0.01, gate="open", faults=FaultPlan(disconnect_every=0.3, reconnect_after=0.1))
    host = deliver(shoe, NativeHost(shoe.start()), timeout=60)
    assert shoe.link_stats.disconnects >= 2 and host.reopens >= 2
    assert same(host.taken, shoe.truth)


def test_socket_unplug_drops_the_client_and_listens_again(shoes):
    import socket

    shoe = shoes(listen="socket://127.0.0.1:0", protocol="beetek", faults=FaultPlan(disconnect_at=(4,)))
    host, port = shoe.start()[len("socket://") :].rsplit(":", 1)
    data = bytearray()
    with socket.create_connection((host, int(port)), timeout=5) as conn:
        while chunk := conn.recv(4096):  # ends when the shoe is unplugged
            data += chunk
    assert len(TOKEN.findall(bytes(data))) == 4
    deadline = time.monotonic() + 10
    while True:  # refused while unplugged, then served again on the same port
        try:
            conn = socket.create_connection((host, int(port)), timeout=5)
            break
        except OSError:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    with conn:
        conn.settimeout(0.3)
        while time.monotonic() < deadline + 20:
            try:
                chunk = conn.recv(4096)
            except TimeoutError:
                if shoe.done:  # done, and 0.3 s without a byte: all read
                    break
                continue
            assert chunk, "the shoe hung up on the second connection"
            data += chunk
    assert shoe.link_stats.disconnects == 1
    assert len(TOKEN.findall(bytes(data))) == sum(1 for e in shoe.truth if e.is_card)


def test_beetek_tokens_follow_the_truth(shoes):
    shoe = shoes(protocol="beetek", faults=FaultPlan(unreadable_at=(3, 20)))
    path = shoe.start()
    data = read_beetek(path, lambda: shoe.done, timeout=20)
    tokens = TOKEN.findall(data)
    cards = [e for e in shoe.truth if e.is_card]
    assert len(tokens) == len(cards)
    for (mode, body), e in zip(tokens, cards):
        assert mode == (b"Manual Burn Cards" if e.mode == "burn" else b"Game")
        if e.kind == "unreadable":
            assert body == b"Game"
        else:
            assert body.startswith(b"Card:") and parse_card(body[5:].decode()) == parse_card(e.card)
    assert b"<Card:10" in data or not any(parse_card(e.card).rank == 10 for e in cards if e.kind == "card")


def test_a_slow_beetek_host_gets_every_token_before_the_shoe_is_done(shoes):
    """A Bee-Tek shoe acknowledges nothing, and closing a pty discards what the host has not read
    yet: `shoed simulate` stops once the shoe is done, so the shoe is done only once the host
    has read every token (a slow reader lost the last cards)."""
    import select
    import tty

    shoe = shoes(protocol="beetek", pace=0.0, cut_from_end=14)  # a whole shoe: some 300 tokens, ~9 KB
    path = shoe.start()
    fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    tty.setraw(fd)
    data = bytearray()
    stopped = False
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if shoe.done and not stopped:
                shoe.stop()  # as the command line does: done, so the pty is closed
                stopped = True
            if select.select([fd], [], [], 0.05)[0]:
                try:
                    chunk = os.read(fd, 256)  # a slow host: 256 bytes at a time
                except OSError:
                    break  # the shoe closed its end
                if not chunk:
                    break
                data += chunk
                time.sleep(0.02)
            elif shoe.done:
                break
    finally:
        os.close(fd)
    assert shoe.done
    assert len(TOKEN.findall(data)) == len([e for e in shoe.truth if e.is_card]) > 250


def test_socket_listen_serves_pyserial(shoes):
    import serial

    shoe = shoes(listen="socket://127.0.0.1:0", protocol="beetek")
    url = shoe.start()
    assert url.startswith("socket://127.0.0.1:") and not url.endswith(":0")
    port = serial.serial_for_url(url, timeout=0.3)
    data = bytearray()
    deadline = time.monotonic() + 20
    try:
        while time.monotonic() < deadline:
            chunk = port.read(4096)
            data += chunk
            if shoe.done and not chunk:  # done, and 0.3 s without a byte: all read
                break
    finally:
        port.close()
    assert len(TOKEN.findall(bytes(data))) == sum(1 for e in shoe.truth if e.is_card)


def test_pace_spaces_the_cards(shoes):
    # The gate (locked at power-on) keeps the cards back until this host is there to time them.
    shoe = shoes(pace=0.05, cut_from_end=300)
    host = NativeHost(shoe.start())
    seen = []

    def cards_arrived():
        for m in host.taken[len(seen) :]:
            seen.append((m, time.monotonic()))
        return shoe.done

    assert host.run_until(cards_arrived, 20)
    times = [t for m, t in seen if isinstance(m, fp.CardRead)]
    assert len(times) >= 8
    # never faster than the dealer's pace (a lower bound only; the machine may be slower)
    assert times[-1] - times[0] >= 0.05 * (len(times) - 1) * 0.9


def test_stop_is_prompt_and_nothing_blocks(shoes):
    shoe = shoes(pace=1.5)
    shoe.start()
    t = time.monotonic()
    shoe.stop()
    assert time.monotonic() - t < 1.0
    assert shoe.wait_done(0.1) is False


def test_truth_file_is_json_lines(shoes, tmp_path):
    import json

    target = tmp_path / "truth.jsonl"
    shoe = shoes(truth_file=target, faults=FaultPlan(lose=0.1))
    deliver(shoe, NativeHost(shoe.start()), timeout=60)
    shoe.stop()
    lines = [json.loads(line) for line in target.read_text().splitlines()]
    events = [x for x in lines if x["kind"] not in ("wire", "link")]
    assert events == [e.to_json() for e in shoe.truth]
    assert any(x["kind"] == "wire" and "lost" in x["faults"] for x in lines)


def test_a_shoe_without_keep_truth_holds_no_event_in_memory(shoes, tmp_path):
    # `shoed simulate --shoes 0` and the daemon's embedded shoe deal for weeks: the truth file has
    # every event, the memory the counts, the last event and a bounded tail of link entries.
    import json

    from shoed.simulate.shoe import WIRE_LOG_KEPT

    target = tmp_path / "truth.jsonl"
    seen = []
    shoe = shoes(truth_file=target, shoes=3, keep_truth=False, faults=FaultPlan(lose=0.2))
    shoe.listeners.append(seen.append)
    deliver(shoe, NativeHost(shoe.start()), timeout=90)
    shoe.stop()
    lines = [json.loads(line) for line in target.read_text().splitlines()]
    events = [x for x in lines if x["kind"] not in ("wire", "link")]
    assert shoe._truth == [] and shoe.wire_log.maxlen == WIRE_LOG_KEPT
    assert [e.to_json() for e in seen] == events
    assert shoe.events_out == len(events) and shoe.last_out is seen[-1]
    assert shoe.cards_out == sum(1 for x in events if x["kind"] in ("card", "unreadable")) > 100
    assert len(shoe.wire_log) == min(WIRE_LOG_KEPT, len(lines) - len(events))
    with pytest.raises(SimulatorError, match="keeps no truth in memory"):
        _ = shoe.truth


def test_bad_arguments_are_clear():
    with pytest.raises(SimulatorError, match="protocol"):
        VirtualShoe(protocol="rs485")
    with pytest.raises(SimulatorError, match="pace"):
        VirtualShoe(pace=-1)
    from shoed.rules.ruleset import RulesetError

    with pytest.raises(RulesetError, match="6 to 6 decks"):
        VirtualShoe(ruleset="punto-banco", decks=8)
