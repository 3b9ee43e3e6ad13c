"""The real daemon at a table whose shoe reads no card, the draws coming over the wire: the virtual shuffler
and the virtual plain shoe (`shoed simulate --plain --shuffler`) on real ptys, both read by the daemon's own
drivers (`shuffler`, and `native` taking the plain shoe's protocol 1.1 draws). The dealer enters only what the
table asks for (the exposed card and the first cards, until the cut is found); every other card of the whole
shoe takes its identity from the aligned order (`source: shuffler`, `drawn_by` the plain shoe), each the card
that really came out, also when the line loses, repeats and garbles frames; the commitment checks at the
close and the replay equals the record."""

from __future__ import annotations

import json
import re
import time

import pytest

from harness.processes import Daemon, Simulator, run_shoed
from shoed.rules.shuffle import reveal_matches
from tests.test_daemon_plain_shoe import Dealer
from tests.test_daemon_restart import records_of
from tests.test_daemon_shuffler import journal_text, order_key, shuffled_table
from tests.test_simulate_follows import dealer_keys

SEED = 47


def _steps(journal) -> list[dict]:
    """The journal's steps so far (a record being written is left for the next look)."""
    out = []
    for path in sorted(journal.glob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                break
            if record.get("kind") == "step":
                out.append(record)
    return out


class TableDealer(Dealer):
    """Enters each card the table could not identify, as the dealer holding it reads it out: the card
    that left the shoe at that draw (the shoe's ground truth), and confirms again a confirm refused while
    such a card was open."""

    def __init__(self, daemon, base, sim: Simulator) -> None:
        super().__init__(daemon, base)
        self.sim = sim
        self.answered: set[int] = set()
        self.confirmed_again: set[int] = set()

    def follow(self, journal) -> None:
        cards = [e["card"] for e in self.sim.truth() if e["kind"] in ("card", "unreadable")]
        draws = 0
        owed = None
        for step in _steps(journal):
            position = None
            if step["input"]["kind"] == "draw":
                position, draws = draws, draws + 1
            for event in step["events"]:
                if event["kind"] == "misdeal" and event["misdeal"]["kind"] == "unreadable_card":
                    entry = event["misdeal"]["id"]
                    if entry not in self.answered and position is not None and position < len(cards):
                        self.send("enter_card", misdeal=entry, card=cards[position])
                        self.answered.add(entry)
                        self.entered += 1
                elif event["kind"] == "alarm" and event["alarm"] == "confirm_refused":
                    owed = event["seq"]
                elif event["kind"] in ("coup.confirmed", "coup.opened"):
                    owed = None
        if owed is not None and owed not in self.confirmed_again:
            status = self.send("status")["status"]
            if not status["pending_misdeals"]:
                self.confirmed_again.add(owed)
                self.send("confirm")


NOISE = ("--lose", "0.05", "--repeat", "0.05", "--garbage", "0.02")


@pytest.mark.parametrize(("noise", "kill_after"), [((), None), (NOISE, None), ((), 12)],
                         ids=["clean", "frames-lost-repeated-garbled", "kill-9-mid-shoe"])
def test_a_plain_shoe_on_the_wire_deals_a_whole_shuffled_shoe_from_the_order(base, noise, kill_after):
    """Over a clean line, over one that loses, repeats and garbles frames, and across a kill -9 of the
    daemon mid-shoe (the draws the shoe still held unacknowledged repeated, those journaled dropped): each
    draw counts once."""
    key = order_key(base)
    (base / "dealer").mkdir()
    dealer_keys(base)
    sim, config = shuffled_table(base, key, seed=SEED, sim_args=("--plain", *noise))
    journal = base / "journal"
    daemon = Daemon(base, "--config", str(config), journal=journal)
    try:
        dealer = TableDealer(daemon, base, sim)
        deadline = time.monotonic() + 150
        killed = False
        while sim.proc.poll() is None and time.monotonic() < deadline:
            dealer.follow(journal)
            if kill_after and not killed and journal_text(journal).count('"coup.result"') >= kill_after:
                daemon.kill()  # mid-shoe: the order comes back from the sealed journal, the draws are not doubled
                killed = True
                daemon = Daemon(base, "--config", str(config), journal=journal)
                dealer.daemon = daemon
            time.sleep(0.1)
        assert sim.wait_done(5) == 0
        summary = sim.summary  # read before stop() closes its file: the line's own count of lost frames
        time.sleep(0.3)
        daemon.stop()
    finally:
        daemon.stop()
        sim.stop()
    truth = [e for e in sim.truth() if e["kind"] in ("card", "unreadable")]
    records = records_of(journal)
    steps = [r for r in records if r["kind"] == "step"]
    events = [e for r in steps for e in r["events"]]
    # Every card out came as one draw over the wire, taken once: none lost, none doubled, no card read.
    inputs = [r["input"] for r in steps]
    draws = [i for i in inputs if i["kind"] == "draw"]
    assert len(draws) == len(truth) > 250
    assert [i["mode"] for i in draws] == [e["mode"] for e in truth]
    assert all(i["source"] == sim.source and i["code"] == "sensor" for i in draws)
    assert not [i for i in inputs if i["kind"] in ("card", "unreadable")]
    if noise:
        lost = int(re.search(r"(\d+) lost", summary).group(1))
        assert lost > 5, summary
    # Each card the table knows is the card that came out; all but the few the dealer entered (and the
    # face-down burns before the cut was found) are the order's, drawn by the plain shoe.
    dealt = [e for e in events if e["kind"] == "shoe.burn" or (e["kind"] == "card" and e["recipient"] != "unreadable")]
    assert len(dealt) == len(truth)
    assert all(e["card"] in (None, t["card"]) for e, t in zip(dealt, truth, strict=True))
    from_order = [e for e in dealt if e.get("source") == "shuffler"]
    assert all(e["drawn_by"] == sim.source for e in from_order)
    assert 2 <= dealer.entered <= 8, dealer.entered
    assert len(from_order) >= len(truth) - dealer.entered - 4
    alarms = {e["alarm"] for e in events if e["kind"] == "alarm" and e.get("active")}
    assert not alarms & {"sequence_mismatch", "shoe_unverified", "shuffle_order_invalid", "integrity"}, alarms
    assert sum(e["kind"] == "coup.result" for e in events) > 40  # the whole shoe
    if kill_after:
        restarted = next(e["seq"] for e in events if e["kind"] == "table.started" and e["seq"] > from_order[0]["seq"])
        assert any(e["seq"] > restarted for e in from_order)  # dealt from the order after the kill -9 too
    opened = next(e for e in events if e["kind"] == "shoe.opened")
    closed = next(e for e in events if e["kind"] == "shoe.closed")
    assert reveal_matches(opened["commitment"], closed["reveal"]["order"], bytes.fromhex(closed["reveal"]["salt"]))
    verified = run_shoed("journal", "verify", str(journal), "--json", check=True)
    assert json.loads(verified.stdout)["commitments"] == {"checked": 1, "mismatched": []}
    replayed = run_shoed("replay", str(journal), "--order-key-file", str(key), "--json", "--jobs", "1")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert '"draw"' in journal_text(journal)


def test_the_virtual_dealer_following_the_table_enters_what_a_plain_shoe_leaves_unidentified(base):
    """`shoed simulate --plain --shuffler --follow`: no one at the console; the virtual dealer watches the
    table's events, counts the draws, and enters each card the table asks for (the one that came out at that
    draw); a whole shoe is then dealt from the order, unattended."""
    key = order_key(base)
    (base / "dealer").mkdir()
    follow = ["--follow", f"ipc://{base}/events,ipc://{base}/snapshot,ipc://{base}/commands", *dealer_keys(base)]
    sim, config = shuffled_table(base, key, seed=SEED, sim_args=("--plain", *follow))
    journal = base / "journal"
    daemon = Daemon(base, "--config", str(config), journal=journal)
    try:
        assert sim.wait_done(150) == 0
        time.sleep(0.3)
        daemon.stop()
    finally:
        daemon.stop()
        sim.stop()
    truth = [e for e in sim.truth() if e["kind"] in ("card", "unreadable")]
    events = [e for r in records_of(journal) if r["kind"] == "step" for e in r["events"]]
    entered = [e for e in events if e["kind"] == "misdeal.corrected" and e["correction"] == "enter_card"]
    assert 2 <= len(entered) <= 8
    dealt = [e for e in events if e["kind"] == "shoe.burn" or (e["kind"] == "card" and e["recipient"] != "unreadable")]
    assert [e["card"] for e in dealt if e["card"] is not None] == [
        t["card"] for e, t in zip(dealt, truth, strict=True) if e["card"] is not None]
    assert sum(e.get("source") == "shuffler" for e in dealt) >= len(truth) - len(entered) - 4
    alarms = {e["alarm"] for e in events if e["kind"] == "alarm" and e.get("active")}
    assert not alarms & {"sequence_mismatch", "shoe_unverified", "integrity"}, alarms
    assert any(e["kind"] == "shoe.closed" for e in events)
