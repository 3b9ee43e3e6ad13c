"""When the live odds are worked out: after the coup's last card is acknowledged, on a
turn of the loop with nothing to do, or else just before the next input.

The daemon runs in this process and its loop is turned by hand (`Daemon.step`), with a
scripted shoe on a real pty (tests/reliability/pty_shoe.py), so what the daemon did
between two turns is known exactly. Worked out at once, the odds (about a millisecond
of CPU) held back the delivery of the coup's last card: in calm runs of
benchmarks/bench_latency.py the p99 of those cards went from 1.0-1.2 ms to 2.3 ms.
"""

from __future__ import annotations

import itertools

import pytest

from harness.records import journal_records
from tests.reliability.pty_shoe import PtyShoe


@pytest.fixture
def table(base):
    from shoed.daemon.config import Config, Source
    from shoed.daemon import Daemon

    shoe = PtyShoe(str(base / "shoe"))
    daemon = Daemon(Config(
        journal_dir=str(base / "journal"), key_dir=str(base / "keys"), events=f"ipc://{base}/events",
        snapshot=f"ipc://{base}/snapshot", commands=f"ipc://{base}/commands",
        sources=(Source("native", str(base / "shoe")),), embedded_default=False))
    daemon.start()

    def turn(_timeout: float = 0.0) -> None:
        daemon.step()
        shoe.service(0)

    shoe.wait(lambda: shoe.host_ready, 10, "the daemon's Hello", pump=turn)
    try:
        yield daemon, shoe, turn
    finally:
        daemon.shutdown()
        shoe.close()


def deal_to_first_result(shoe: PtyShoe, turn) -> list:
    """Deal the virtual dealer's first shoe up to and including the card that completes
    the first coup; the rest of its messages are returned."""
    from shoed.rules.ruleset import load_ruleset
    from shoed.simulate.dealer import DealSetup, deal
    from shoed.simulate.wire import native_message

    events = list(itertools.islice(deal(DealSetup(load_ruleset("punto-banco"), seed=4, shoes=0)), 200))
    completing = next(i for i, e in enumerate(events) if e.kind == "card" and events[i + 1].kind == "button"
                      and events[i + 1].button == "confirm")
    for event in events[:completing + 1]:
        if event.kind in ("card", "unreadable", "cut_card"):
            shoe.wait(lambda: shoe.gate_open, 10, "the gate", pump=turn)
        shoe.offer(native_message(event))
        if event is events[completing]:
            break
        shoe.wait(lambda: shoe.unacked == 0, 10, "an ack", pump=turn)
    return events[completing + 1:]


def steps(directory) -> list[dict]:
    return [r for r in journal_records(directory) if r["kind"] == "step"]


def test_the_coups_last_card_is_acknowledged_before_the_odds_are_worked_out(table, base):
    daemon, shoe, turn = table
    deal_to_first_result(shoe, turn)
    # Turn the daemon's loop until the card is journaled: that turn also acknowledged it.
    for _ in range(2000):
        daemon.step()
        if any(e["kind"] == "coup.result" for e in steps(base / "journal")[-1]["events"]):
            break
    else:
        pytest.fail("the coup's last card was never journaled")
    # Between two turns the daemon does nothing: the ack is on the wire, the odds not yet journaled.
    shoe.wait(lambda: shoe.unacked == 0, 10, "the ack of the coup's last card")
    assert steps(base / "journal")[-1]["input"]["kind"] == "card"
    left = sum(daemon.controller.shoe.remaining_by_rank())
    assert daemon.controller.odds["cards_left"] > left  # still those worked out before the coup
    # The next turn with nothing to do (a heartbeat from the shoe makes a turn busy): now they come.
    card = steps(base / "journal")[-1]
    for _ in range(200):
        daemon.step()
        if steps(base / "journal")[-1] != card:
            break
    after = steps(base / "journal")[-1]
    assert after["input"]["kind"] == "odds" and after["events"][0]["kind"] == "shoe.odds"
    assert daemon.controller.odds["cards_left"] == left


def test_an_input_right_after_the_coup_finds_the_odds_journaled_before_it(table, base):
    from shoed.simulate.wire import native_message

    daemon, shoe, turn = table
    rest = deal_to_first_result(shoe, turn)
    shoe.offer(native_message(rest[0]))  # the dealer confirms at once: card and confirm read in one turn
    shoe.wait(lambda: steps(base / "journal")[-1]["input"].get("button") == "confirm", 10, "the confirm", pump=turn)
    last = steps(base / "journal")[-3:]
    assert [r["input"].get("button") or r["input"]["kind"] for r in last] == ["card", "odds", "confirm"]
    assert any(e["kind"] == "coup.result" for e in last[0]["events"])
    assert [e["kind"] for e in last[2]["events"]][:1] == ["coup.confirmed"]
