"""The real daemon at a table whose shoe reads no card: the virtual shuffler on a real pty hands over its
order, the dealer's console signals each card with the `draw` command over the real ZeroMQ command endpoint,
and each card takes its identity from the aligned order (`source: shuffler`), across a kill -9 mid-shoe;
the commitment checks at the close, and before it no record holds the order in plain text."""

from __future__ import annotations

import json
import time

import pytest

from harness.processes import Daemon, run_shoed
from shoed.rules.ruleset import load_ruleset
from shoed.rules.shuffle import reveal_matches
from shoed.simulate import DealSetup, deal
from shoed.simulate.shuffler import shuffle_run
from tests.test_daemon_restart import records_of
from tests.test_daemon_shuffler import order_key, shuffled_table, wait_in_journal
from tests.test_simulate_follows import dealer_keys

SEED = 41
CUT = 123  # where this test's dealer cuts the shuffled shoe
COUPS = 24  # dealt before the shoe is closed (half of them after the kill)


class Dealer:
    """The dealer at the console: a command for each card drawn, each confirm; enters by hand what the
    table asks for (the exposed card, and the first cards until the cut is found)."""

    def __init__(self, daemon: Daemon, base) -> None:
        from shoed.net.curve import ClientCurve

        self.daemon = daemon
        self.keys = ClientCurve.from_files(base / "dealer" / "dealer.key_secret", base / "keys" / "server.key")
        self.entered = 0
        self.aligned = False  # a card of a coup was identified without the dealer: the cut is found

    def send(self, cmd: str, **args) -> dict:
        from shoed.net.commands import send_command

        while True:
            reply = send_command(self.daemon.commands, cmd, args, self.keys, timeout=10)
            if "rate limited" not in str(reply.get("error")):
                break
            time.sleep(0.05)  # a console is allowed 20 commands a second
        assert reply["ok"], (cmd, args, reply)
        return reply

    def draw(self, card: str, mode: str) -> None:
        self.send("draw", mode=mode)
        if self.aligned:
            return
        status = self.send("status")["status"]
        if any(p["kind"] == "unreadable_card" for p in status["pending_misdeals"]):
            self.send("enter_card", card=card)
            self.entered += 1
        elif mode == "game":
            self.aligned = True


def test_a_plain_shoe_deals_the_shuffled_order_card_by_card_across_kill_9(base):
    key = order_key(base)
    (base / "dealer").mkdir()
    dealer_keys(base)
    sim, config = shuffled_table(base, key, seed=SEED, shoe=False)
    journal = base / "journal"
    (shoe,) = shuffle_run(SEED, decks=6, shoes=1).shoes
    out = shoe.order[CUT:] + shoe.order[:CUT]
    plan = DealSetup(load_ruleset("punto-banco"), seed=SEED, shoes=1, orders=(out,))
    drawn: list[str] = []
    daemon = Daemon(base, "--config", str(config), journal=journal)
    try:
        deadline = time.monotonic() + 60
        wait_in_journal(journal, '"shuffle.completed"', deadline)
        dealer = Dealer(daemon, base)
        dealer.send("open_shoe")  # a plain shoe signals no magazine: the console opens it
        coups = 0
        for e in deal(plan):
            if e.kind == "card":
                dealer.draw(e.card, e.mode)
                drawn.append(e.card)
            elif e.kind == "button" and e.button == "confirm":
                coups += 1
                if coups == COUPS // 2:
                    daemon.kill()  # mid-shoe: the order comes back from the sealed journal
                    daemon = Daemon(base, "--config", str(config), journal=journal)
                    dealer.daemon = daemon
                if coups == COUPS:
                    break
                dealer.send("confirm")
        dealer.send("close_shoe")
        daemon.stop()
    finally:
        daemon.stop()
        sim.stop()
    records = records_of(journal)
    events = [e for r in records if r["kind"] == "step" for e in r["events"]]
    cards = [e for e in events if e["kind"] == "shoe.burn" or (e["kind"] == "card" and e["recipient"] != "unreadable")]
    assert len(cards) == len(drawn) > 2 * COUPS
    known = [e["card"] for e in cards]
    # Each card known is the card that came out; all but the few the dealer entered and the face-down
    # burns before the cut was found come from the order, signalled by the dealer's console.
    assert all(k in (None, card) for k, card in zip(known, drawn, strict=True))
    from_order = [e for e in cards if e.get("source") == "shuffler"]
    assert 2 <= dealer.entered <= 6 and len(from_order) == len(drawn) - dealer.entered - known.count(None)
    assert all(e["drawn_by"] == "command:dealer" for e in from_order)
    restarted = next(e["seq"] for e in events if e["kind"] == "table.started" and e["seq"] > from_order[0]["seq"])
    assert any(e["seq"] > restarted for e in from_order)  # after the kill -9 too
    alarms = {e["alarm"] for e in events if e["kind"] == "alarm" and e.get("active")}
    assert not alarms & {"sequence_mismatch", "shoe_unverified", "integrity"}, alarms
    opened = next(e for e in events if e["kind"] == "shoe.opened")
    closed = next(e for e in events if e["kind"] == "shoe.closed")
    assert tuple(closed["reveal"]["order"]) == shoe.order
    assert reveal_matches(opened["commitment"], closed["reveal"]["order"], bytes.fromhex(closed["reveal"]["salt"]))
    verified = run_shoed("journal", "verify", str(journal), "--json", check=True)
    assert json.loads(verified.stdout)["commitments"] == {"checked": 1, "mismatched": []}
    replayed = run_shoed("replay", str(journal), "--order-key-file", str(key), "--json", "--jobs", "1")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    # Before the close, no record holds a run of the order in plain text beyond the cards drawn by then.
    closing = next(i for i, r in enumerate(records) if r["kind"] == "step"
                   and any(e["kind"] == "shoe.closed" for e in r["events"]))
    earlier = json.dumps(records[:closing])
    undealt = list(out[len(drawn):])
    for start in range(0, len(undealt) - 4, 20):
        assert json.dumps(undealt[start:start + 4])[1:-1] not in earlier



def test_a_camera_over_a_plain_shoe_catches_a_card_switched_at_the_table_at_its_place(base):
    """The shoe dealt is not the shoe shuffled at one card, which a plain shoe cannot see: the camera over its
    exit (a video of the deal, read by the real recognizer) reads each card after its draw, and the one that
    is not the order's raises `alarm sequence_mismatch` at its place, from the camera, with the coup held."""
    cv2 = pytest.importorskip("cv2", reason="the camera needs OpenCV (the test extra installs it)")
    import numpy as np

    from vision_lab.synth import DealPlan, deal_frames

    roi, switched_at, cards_seen = (440, 160, 400, 400), 10, 13
    key = order_key(base)
    (base / "dealer").mkdir()
    dealer_keys(base)
    (shoe,) = shuffle_run(SEED, decks=6, shoes=1).shoes
    cut = next(c for c in range(len(shoe.order)) if shoe.order[c].startswith("A"))  # one card burned: a short video
    out = shoe.order[cut:] + shoe.order[:cut]
    seen = list(out[:cards_seen])
    seen[switched_at] = next(c for c in ("AS", "KD", "7C") if c not in out[switched_at - 1:switched_at + 2])
    # The video: the empty table until the shoe is open and dealing (six seconds; the daemon starts, takes
    # the shuffle and the console opens the shoe in about one), then each card out.
    video = base / "deal.avi"
    size = (960, 600)
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 30.0, size)
    frames = deal_frames(seen, np.random.default_rng(2), size=size, roi=roi, plan=DealPlan(empty=4, slide=4, rest=8))
    for n, (frame, _) in enumerate(frames):
        for _ in range(180 if n == 0 else 1):
            writer.write(frame)
    writer.release()
    camera = f'[[sources]]\ndriver = "camera"\nurl = "{video}"\nroi = {list(roi)}\nrealtime = true\n'
    sim, config = shuffled_table(base, key, seed=SEED, shoe=False, more_sources=camera)
    journal = base / "journal"
    plan = DealSetup(load_ruleset("punto-banco"), seed=SEED, shoes=1, orders=(out,))
    daemon = Daemon(base, "--config", str(config), journal=journal)
    try:
        deadline = time.monotonic() + 60
        wait_in_journal(journal, '"shuffle.completed"', deadline)
        dealer = Dealer(daemon, base)
        dealer.send("open_shoe")
        drawn = 0
        for e in deal(plan):
            if e.kind == "card":
                if drawn == cards_seen:
                    break
                dealer.draw(e.card, e.mode)
                drawn += 1
            elif e.kind == "button" and e.button == "confirm":
                dealer.send("confirm")
        wait_in_journal(journal, '"sequence_mismatch"', deadline + 60)
        time.sleep(0.5)
        daemon.stop()
    finally:
        daemon.stop()
        sim.stop()
    events = [e for r in records_of(journal) if r["kind"] == "step" for e in r["events"]]
    (found,) = [e for e in events if e["kind"] == "alarm" and e["alarm"] == "sequence_mismatch"]
    assert (found["position"], found["expected"], found["got"]) == (switched_at, out[switched_at], seen[switched_at])
    assert found["source"].startswith("camera:")
    held = [e for e in events if e["kind"] == "misdeal" and e["misdeal"]["kind"] == "sequence_mismatch"]
    assert held and held[0]["seq"] == found["seq"] + 1
    # The camera dealt nothing: every card before the switch came from the order or the dealer's hand.
    assert not any(e["kind"] in ("card", "shoe.burn") and str(e.get("source")).startswith("camera:") for e in events)
