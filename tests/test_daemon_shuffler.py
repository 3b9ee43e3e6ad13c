"""The real daemon with the virtual shuffler and the virtual shoe on real ptys: a whole shuffled shoe dealt,
kill -9 in the middle of it, the order recovered from the sealed journal, every card checked against it,
the commitment checked at the close, and the order nowhere in the journal in plain text before then."""

from __future__ import annotations

import json
import os
import time

from shoed.rules.shuffle import reveal_matches
from tests.daemon_runner import Daemon, Simulator, run_shoed
from tests.test_daemon_restart import records_of


def journal_text(journal) -> str:
    return "\n".join(p.read_text() for p in sorted(journal.glob("*.jsonl")))


def test_a_shuffled_shoe_survives_kill_9_and_its_reveal_matches_the_commitment(base):
    key = base / "order.key"
    key.write_text(os.urandom(32).hex() + "\n")
    sim = Simulator(base, "--shuffler", "--shuffler-link", str(base / "shuffler"), seed=9, pace=0.01, shoes=1)
    config = base / "shoed.toml"
    config.write_text(
        f'[[sources]]\ndriver = "native"\nurl = "{sim.link}"\n\n'
        f'[[sources]]\ndriver = "shuffler"\nurl = "{base / "shuffler"}"\norder_key_file = "{key}"\n'
    )
    journal = base / "journal"
    try:
        daemon = Daemon(base, "--config", str(config), journal=journal)
        deadline = time.monotonic() + 60
        while journal_text(journal).count('"coup.result"') < 8 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert journal_text(journal).count('"coup.result"') >= 8, "the shoe was not dealt"
        daemon.kill()  # mid-shoe
        daemon = Daemon(base, "--config", str(config), journal=journal)
        assert sim.wait_done(90) == 0
        time.sleep(0.3)
        daemon.stop()
    finally:
        sim.stop()
    records = records_of(journal)
    events = [e for r in records if r["kind"] == "step" for e in r["events"]]
    alarms = {e["alarm"] for e in events if e["kind"] == "alarm" and e.get("active")}
    assert not alarms & {"sequence_mismatch", "shoe_unverified", "shuffle_order_invalid", "deck_incomplete",
                         "integrity"}, alarms
    opened = next(e for e in events if e["kind"] == "shoe.opened")
    closed = next(e for e in events if e["kind"] == "shoe.closed")
    reveal = closed["reveal"]
    assert reveal_matches(opened["commitment"], reveal["order"], bytes.fromhex(reveal["salt"]))
    dealt = [e["card"] for e in events if e["kind"] in ("card", "shoe.burn") and e.get("card")]
    order = reveal["order"]
    assert len(dealt) > 250
    assert any((order[i:] + order[:i])[: len(dealt)] == dealt for i in range(len(order)))
    verified = run_shoed("journal", "verify", str(journal), "--json", check=True)
    assert json.loads(verified.stdout)["commitments"] == {"checked": 1, "mismatched": []}
    # Before the close, no record holds a run of the order in plain text.
    closing = next(i for i, r in enumerate(records) if r["kind"] == "step"
                   and any(e["kind"] == "shoe.closed" for e in r["events"]))
    earlier = json.dumps(records[:closing])
    for start in range(0, len(order) - 6, 50):
        assert json.dumps(order[start:start + 6])[1:-1] not in earlier
