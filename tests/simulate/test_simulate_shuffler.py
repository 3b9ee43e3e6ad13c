"""The virtual card-reading shuffler and the `shuffler` driver on real pseudo-terminals.

The shuffler reports each shoe in protocol 1.1 (shuffle started, a deck check
per deck, the order in acknowledged chunks, completed with the digest,
meters); the driver turns that into readings, every chunk exactly once even
when the link is lost mid-order; the virtual shoe deals exactly the shoe that
was shuffled, as the dealer cut it.
"""

from __future__ import annotations

import select
import subprocess
import sys
import time

import pytest

from firmware_protocol import messages as m
from shoed.drivers import open_driver
from shoed.drivers.base import DriverError
from shoed.rules.shuffle import chunk_context, digest_mac, is_weak, longest_surviving_run, unseal_cards
from shoed.simulate import DealSetup, deal
from shoed.simulate.shoe import SimulatorError
from shoed.simulate.shuffler import ShufflerFaults, VirtualShuffler, shuffle_run


def faults(*names: str, shoe: int = 1) -> ShufflerFaults:
    return ShufflerFaults(frozenset(names), shoe)


KEY = bytes(range(7, 39))


def key_file(folder) -> str:
    path = folder / "order.key"
    path.write_text(KEY.hex() + "\n")
    return str(path)


def opened(reading) -> list[str]:
    """An order chunk reading's cards, opened with the key (they leave the driver sealed)."""
    d = reading.detail
    return unseal_cards(KEY, d["sealed"], chunk_context(d["boot"], d["shuffle"], d["position"]))


def read_until_done(device, driver, timeout: float = 30.0) -> list:
    readings = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not device.done:
        for reading in driver.poll(0.05):
            readings.append(reading)
            driver.acknowledge(reading)  # as the daemon does once the reading is journaled
    return readings


@pytest.fixture
def shuffler_on_pty(tmp_path):
    opened = []

    def start(run):
        device = VirtualShuffler(run, link=str(tmp_path / "shuffler"))
        driver = open_driver("shuffler", device.start(), order_key_file=key_file(tmp_path))
        opened.append((device, driver))
        return device, driver

    yield start
    for device, driver in opened:
        driver.close()
        device.stop()


def order_from(readings, shoe_number: int | None = None) -> list[str]:
    cards: list[str] = []
    for r in readings:
        if r.kind == "order_chunk":
            assert r.detail["position"] == len(cards) or r.detail["position"] == 0
            if r.detail["position"] == 0:
                cards = []
            assert "cards" not in r.detail and r.raw == b""  # the order never leaves the driver in plain text
            cards += opened(r)
    return cards


def test_the_driver_reads_a_whole_shuffle_from_the_virtual_shuffler(shuffler_on_pty):
    run = shuffle_run(seed=11, decks=8, shoes=1)
    device, driver = shuffler_on_pty(run)
    readings = read_until_done(device, driver)
    assert device.done
    hello = next(r for r in readings if r.kind == "hello")
    assert hello.detail["negotiated"] == "1.1" and hello.source.startswith("shuffler:")
    kinds = [r.kind for r in readings if r.shoe_seq is not None]
    assert kinds == ["shuffle_started"] + ["deck_check"] * 8 + ["order_chunk"] * 7 + ["shuffle_completed", "meters"]
    assert [r.shoe_seq for r in readings if r.shoe_seq is not None] == list(range(1, len(kinds) + 1))
    order = order_from(readings)
    assert tuple(order) == run.shoes[0].order and len(order) == 416
    done = next(r for r in readings if r.kind == "shuffle_completed")
    # The order's digest leaves the driver keyed only (a plain SHA-256 of the order tests guessed orders).
    assert "digest" not in done.detail and done.raw == b""
    assert done.detail["digest_hmac"] == digest_mac(KEY, m.order_digest(order)) and done.detail["cards"] == 416
    checks = [r for r in readings if r.kind == "deck_check"]
    assert all(c.detail["present"] == 52 and not c.detail["missing"] for c in checks)


def test_missing_and_foreign_cards_and_a_jam_are_reported_with_deck_and_card(shuffler_on_pty):
    run = shuffle_run(seed=12, decks=6, shoes=1, faults=faults("missing-card", "foreign-card", "jam"))
    (deck_missing, card_missing), = run.shoes[0].missing
    (deck_foreign, card_foreign), = run.shoes[0].foreign
    device, driver = shuffler_on_pty(run)
    readings = read_until_done(device, driver)
    checks = {r.detail["deck"]: r.detail for r in readings if r.kind == "deck_check"}
    assert checks[deck_missing]["missing"] == [card_missing]
    assert checks[deck_foreign]["foreign"] == [card_foreign]
    assert sum(len(c["missing"]) + len(c["foreign"]) for c in checks.values()) == 2
    errors = [r for r in readings if r.kind == "shuffler_error"]
    assert [(e.detail["fault_name"], e.detail["active"]) for e in errors] == [("jam", True), ("jam", False)]
    order = order_from(readings)
    assert len(order) == 6 * 52 and card_foreign in order


def test_the_link_lost_mid_order_loses_and_doubles_no_chunk(shuffler_on_pty):
    run = shuffle_run(seed=13, decks=8, shoes=1, faults=faults("lose-link"))
    device, driver = shuffler_on_pty(run)
    readings = read_until_done(device, driver, timeout=40)
    assert device.done and device.link_stats.disconnects == 1
    links = [r.link for r in readings if r.kind == "link"]
    assert "lost" in links and links[-1] == "restored"
    chunks = [r.detail["position"] for r in readings if r.kind == "order_chunk"]
    assert chunks == list(range(0, 416, 64))
    assert tuple(order_from(readings)) == run.shoes[0].order


def test_a_weak_shuffle_keeps_runs_of_the_shoe_before_and_is_flagged():
    run = shuffle_run(seed=14, decks=8, shoes=3, faults=faults("weak-shuffle", shoe=2))
    first, weak, fair = run.shoes
    assert weak.weak and sorted(weak.order) == sorted(first.order)
    assert is_weak(longest_surviving_run(first.dealt[:402], weak.order), 8)
    assert not is_weak(longest_surviving_run(weak.dealt[:402], fair.order), 8)


def test_the_virtual_shoe_deals_the_shoe_that_was_shuffled_as_the_dealer_cut_it():
    from shoed.rules.ruleset import load_ruleset

    run = shuffle_run(seed=15, decks=8, shoes=2, faults=faults("missing-card", shoe=2))
    setup = DealSetup(load_ruleset("punto-banco"), seed=15, shoes=2, orders=run.dealt_orders)
    for number, shuffled in enumerate(run.shoes, 1):
        dealt = [e.card for e in deal(setup) if e.kind == "card" and e.shoe == number]
        assert tuple(dealt) == shuffled.dealt[: len(dealt)] and len(dealt) > 300
        assert shuffled.dealt == shuffled.order[shuffled.cut:] + shuffled.order[: shuffled.cut]


def test_same_seed_same_run_and_bad_plans_are_refused():
    assert shuffle_run(3, 8, 2).events == shuffle_run(3, 8, 2).events
    assert shuffle_run(3, 8, 1).shoes[0].order != shuffle_run(4, 8, 1).shoes[0].order
    with pytest.raises(SimulatorError, match="shoe 2 or later"):
        faults("weak-shuffle")
    with pytest.raises(SimulatorError, match="unknown shuffler fault"):
        faults("fire")


def test_shoed_simulate_runs_a_shuffler_beside_the_shoe(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "shoed", "simulate", "--shuffler", "--pace", "0", "--seed", "5",
         "--shuffler-faults", "missing-card", "--shuffler-link", str(tmp_path / "shuffler")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert select.select([proc.stdout], [], [], 20)[0], "shoed simulate printed nothing within 20 s"
        # Both addresses are printed at once, before anything else (the second may already be buffered).
        lines = [proc.stdout.readline().strip(), proc.stdout.readline().strip()]
        assert len(lines) == 2 and lines[1] == str(tmp_path / "shuffler")
        shoe_driver = open_driver("native", lines[0])
        shuffler_driver = open_driver("shuffler", lines[1], order_key_file=key_file(tmp_path))
        shoe_driver.set_gate(False)
        shuffle, cards = [], []
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            for driver, into in ((shoe_driver, cards), (shuffler_driver, shuffle)):
                for reading in driver.poll(0.02):
                    into.append(reading)
                    driver.acknowledge(reading)
        shoe_driver.close()
        shuffler_driver.close()
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    order = order_from(shuffle)
    assert len(order) == 6 * 52 - 1  # punto-banco's six decks, one card missing
    dealt = [r.card for r in cards if r.kind == "card"]
    assert len(dealt) > 250
    assert any((order[i:] + order[:i])[: len(dealt)] == dealt for i in range(len(order)))  # a rotation: the cut
    assert sum(len(r.detail["missing"]) for r in shuffle if r.kind == "deck_check") == 1


def test_the_shuffler_driver_needs_a_readable_order_key(tmp_path):
    with pytest.raises(DriverError, match="order_key_file"):
        open_driver("shuffler", "loop://")
    with pytest.raises(DriverError, match="cannot read the order key file"):
        open_driver("shuffler", "loop://", order_key_file=str(tmp_path / "none"))
    bad = tmp_path / "bad.key"
    bad.write_text("1234")
    with pytest.raises(DriverError, match="64 hex digits"):
        open_driver("shuffler", "loop://", order_key_file=str(bad))


@pytest.mark.parametrize("fault", ["switch-card", "remove-card", "insert-card", "swap-cards"])
def test_a_shoe_tampered_at_the_table_differs_from_the_order_at_one_place(fault):
    (shoe,) = shuffle_run(seed=16, decks=6, shoes=1, faults=faults(fault)).shoes
    kind, position, card = shoe.tamper
    cut = list(shoe.order[shoe.cut:] + shoe.order[: shoe.cut])
    dealt = list(shoe.dealt)
    assert kind == fault and 30 <= position < 200 and dealt[:position] == cut[:position]
    if fault == "switch-card":
        assert dealt[position] == card != cut[position] and dealt[position + 1:] == cut[position + 1:]
    elif fault == "remove-card":
        assert dealt == cut[:position] + cut[position + 1:]
    elif fault == "swap-cards":
        assert dealt[position:position + 2] == [card, cut[position]] == cut[position:position + 2][::-1]
        assert card != cut[position] and dealt[position + 2:] == cut[position + 2:]
    else:
        assert dealt == cut[:position] + [card] + cut[position:]


def test_a_virtual_plain_shoe_sends_a_draw_for_each_card_of_the_shuffled_shoe(tmp_path):
    """A plain shoe reads no card (SPEC.md §5.22): it says 1.1 in its Hello and the native driver takes one
    `draw` reading per card out, game and burn as dealt, each once and in order, and no card at all."""
    from shoed.simulate import VirtualShoe

    run = shuffle_run(seed=13, decks=6, shoes=1)
    shoe = VirtualShoe(seed=13, pace=0.0, decks=6, orders=run.dealt_orders, plain=True, gate="open",
                       link=str(tmp_path / "plain"))
    driver = open_driver("native", shoe.start())
    try:
        readings = read_until_done(shoe, driver)
    finally:
        driver.close()
        shoe.stop()
    assert shoe.done
    hello = next(r for r in readings if r.kind == "hello")
    assert hello.detail["negotiated"] == "1.1" and hello.detail["model"] == "virtual plain shoe"
    dealt = [e for e in shoe.truth if e.is_card]
    draws = [r for r in readings if r.kind == "draw"]
    assert not [r for r in readings if r.kind in ("card", "unreadable")]
    assert [r.mode for r in draws] == [e.mode for e in dealt] and len(draws) > 300
    assert all(r.code == "sensor" and r.card is None for r in draws)
    assert [e.card for e in dealt] == list(run.shoes[0].dealt[:len(dealt)])  # the shoe it shuffled, as cut
    sequenced = [r.shoe_seq for r in readings if r.shoe_seq is not None]
    assert sequenced == list(range(1, len(sequenced) + 1))  # every reliable message once, in order


def test_a_plain_shoe_speaks_the_native_protocol_only(tmp_path):
    from shoed.simulate import VirtualShoe

    with pytest.raises(SimulatorError, match="plain shoe speaks the native protocol"):
        VirtualShoe(protocol="beetek", plain=True)
    proc = subprocess.run([sys.executable, "-m", "shoed", "simulate", "--plain", "--protocol", "beetek"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "--plain" in proc.stderr
