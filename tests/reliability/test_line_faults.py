"""Line noise, bit flips and unplugs between a native shoe and the real daemon.

The guarantee under test (firmware_protocol/SPEC.md §6; table-game-standards
items 13 and 19): every card the shoe sent is counted exactly once and in
order. The virtual shoe runs in its own process on a real pseudo-terminal and
writes its ground truth (`--truth`); the daemon reads it through the `native`
driver and journals every input. At the end the journal's cards are compared
with the truth card by card.

CI runs one shoe of each; SHOED_SOAK=1 runs three shoes under noise and
unplugs after 60 cards instead of 20.
"""

from __future__ import annotations

import pytest

from harness.processes import Daemon, Simulator
from harness.records import (
    LONG,
    draw_order,
    journal_events,
    journal_inputs,
    replay_journal,
    truth_cards,
    verify_journal,
)


def deal_through(base, sim_options: list[str], seed: int, shoes: int, timeout: float, pace: float = 0.0):
    """Run a shoe (or several) through the daemon; return (truth, journal events, inputs)."""
    with (Simulator(base, *sim_options, seed=seed, pace=pace, shoes=shoes) as sim,
          Daemon(base, "--source", sim.source) as daemon):
        assert sim.wait_done(timeout) == 0, sim.summary
        code = daemon.stop()
        assert code == 0, daemon.lines[-10:]
    return sim, sim.truth(), journal_events(daemon.journal), journal_inputs(daemon.journal)


def check_every_card_once_in_order(truth: list[dict], events: list[dict], inputs: list[dict]) -> None:
    sent = truth_cards(truth)
    taken = [i["card"] for i in inputs if i["kind"] == "card"]
    assert taken == sent, "the journal's card readings must be the shoe's cards, each once, in order"
    dealt = [c for e in events if e["kind"] == "coup.result" for c in draw_order(e)]
    assert dealt == truth_cards(truth, ("player", "banker"))
    burned = [e["card"] for e in events if e["kind"] == "shoe.burn"]
    assert burned == truth_cards(truth, ("burn",))
    assert not [e for e in events if e["kind"] in ("misdeal", "coup.void")]
    closed = [e for e in events if e["kind"] == "shoe.closed"]
    assert closed and all(e["reconciliation"]["balanced"] for e in closed)


@pytest.mark.timeout(1200 if LONG else 300)
def test_bit_errors_and_line_noise_for_a_whole_shoe(base):
    """BER 1e-3 (about one card frame in nine damaged) and random garbage before 5% of
    the frames, for a whole shoe: each damaged frame is rejected by its CRC, never
    guessed; the shoe repeats it; the daemon takes each card once."""
    shoes = 3 if LONG else 1
    sim, truth, events, inputs = deal_through(
        base, ["--ber", "1e-3", "--garbage", "0.05"], seed=11, shoes=shoes, timeout=120 * shoes)
    noise = [t for t in truth if t.get("kind") == "wire"]
    assert len([t for t in noise if "bit_flip" in t.get("faults", [])]) >= 10, "the line really was noisy"
    rejected = [e for e in events if e["kind"] == "device.warning" and e.get("code") == "frame_rejected"]
    assert rejected, "damaged frames were seen and reported"
    check_every_card_once_in_order(truth, events, inputs)
    assert verify_journal(base / "journal")["exit"] == 0


@pytest.mark.timeout(1200 if LONG else 300)
def test_unplug_and_replug_twenty_times_mid_coup(base):
    """The cable is pulled after 20 cards that each leave their coup unfinished (the
    second or third card of a coup) and put back 0.2 s later: no card lost or doubled,
    and the coup in progress resumes where it was (no void, no misdeal)."""
    from shoed.rules.ruleset import load_ruleset
    from shoed.simulate.dealer import DealSetup, deal

    seed = 12
    shoes = 3 if LONG else 1
    setup = DealSetup(load_ruleset("punto-banco"), seed=seed, shoes=shoes)
    by_coup: dict[tuple[int, int], list[int]] = {}
    for e in deal(setup):
        if e.kind == "card" and e.recipient in ("player", "banker"):
            by_coup.setdefault((e.shoe, e.coup), []).append(e.number)
    # The 2nd or 3rd card of a coup never completes it (a coup has at least four).
    candidates = [numbers[1 + (c % 2)] for (_, c), numbers in sorted(by_coup.items())]
    count = 60 if LONG else 20
    at = candidates[:: max(1, len(candidates) // count)][:count]
    assert len(at) == count
    sim, truth, events, inputs = deal_through(
        base, ["--disconnect-at", ",".join(map(str, at)), "--reconnect-after", "0.2"], seed=seed, shoes=shoes,
        timeout=180 * shoes)
    unplugs = [t for t in truth if t.get("kind") == "link" and t.get("link") == "unplugged"]
    assert len(unplugs) == count
    lost = [e for e in events if e["kind"] == "device.lost"]
    restored = [e for e in events if e["kind"] == "device.restored"]
    assert len(lost) >= count and len(restored) >= count
    check_every_card_once_in_order(truth, events, inputs)
    # Each unplug fell inside a coup, and that coup went on to its result after the replug.
    results = {(e["shoe"], e["coup"]) for e in events if e["kind"] == "coup.result"}
    shoe_ids = [e["shoe"] for e in events if e["kind"] == "shoe.opened"]
    for unplug in unplugs:
        card = next(t for t in truth if t.get("number") == unplug["after"])
        assert (shoe_ids[card["shoe"] - 1], card["coup"]) in results
    assert replay_journal(base / "journal")["identical"] is True
