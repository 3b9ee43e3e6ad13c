"""Camera fallback end to end: the daemon reads a virtual shoe through the native driver,
with a camera (a video of the deal, read by the real recognizer) as its second reader.
The shoe is unplugged mid-shoe and never comes back: the camera takes over, announced as a
device event, and every card of the shoe is published exactly once.
"""

from __future__ import annotations

import json
import time

import pytest

pytest.importorskip("cv2", reason="the camera fallback needs OpenCV (the test extra installs it)")

from shoed.rules.ruleset import load_ruleset  # noqa: E402
from shoed.simulate.dealer import DealSetup, deal  # noqa: E402
from harness.processes import Daemon, Simulator  # noqa: E402
from tests.test_daemon import Collector, client, draw_order  # noqa: E402

ROI = (440, 160, 400, 400)
SEED, CUT = 4, 282  # a short shoe: 30 cards before the cut card


def test_camera_takes_over_when_the_shoe_is_unplugged(base):
    from vision_lab.synth import write_deal_video

    truth = [e for e in deal(DealSetup(load_ruleset("punto-banco"), seed=SEED, shoes=1, cut_from_end=CUT))
             if e.kind == "card"]
    game = [e.card for e in truth if e.recipient in ("player", "banker")]
    unplug_at = next(e.number for e in truth if e.recipient in ("player", "banker") and e.coup == 3) + 1
    # The camera over the shoe's exit sees every card that leaves it, burn cards too.
    write_deal_video(str(base / "deal.avi"), [e.card for e in truth], seed=1, roi=ROI)
    sim = Simulator(base, "--cut", str(CUT), "--disconnect-at", str(unplug_at), "--reconnect-after", "600",
                    seed=SEED, pace=0.05, shoes=1)
    config = base / "shoed.toml"
    config.write_text(
        f'[[sources]]\ndriver = "native"\nurl = "{sim.link}"\n\n'
        f'[[sources]]\ndriver = "camera"\nurl = "{base / "deal.avi"}"\nroi = {list(ROI)}\nrealtime = false\n'
    )
    try:
        d = Daemon(base, "--config", str(config))
        try:
            watcher = Collector(client(d))
            deadline = time.monotonic() + 150
            dealt: list[str] = []
            while len(dealt) < len(game):
                assert time.monotonic() < deadline, f"{len(dealt)} of {len(game)} cards published"
                watcher.poll(0.2)
                dealt = [c for e in watcher.events if e["kind"] == "coup.result"
                         for c in draw_order(e)]
            kinds = [e["kind"] for e in watcher.events]
            watcher.client.close()
        finally:
            assert d.stop() == 0
    finally:
        sim.stop()
    assert dealt == game, "every card of the shoe published exactly once, in order"
    assert "device.lost" in kinds and "device.fallback" in kinds
    cards = [e for e in watcher.events if e["kind"] == "card"]
    assert {e["source"].split(":")[0] for e in cards} == {"native", "camera"}  # who read each card
    assert not [e for e in watcher.events if e["kind"] == "misdeal"]
    records = [json.loads(x) for f in sorted((base / "journal").glob("*.jsonl")) for x in f.read_text().splitlines()]
    journaled = [c for r in records if r.get("kind") == "step" for e in r["events"] if e["kind"] == "coup.result"
                 for c in draw_order(e)]
    assert journaled == game
