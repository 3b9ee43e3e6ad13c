"""`shoed simulate` with every dealing fault runs whole shoes to a balanced close, unattended,
against `shoed run`: the virtual dealer follows the table (shoed/simulate/follow.py) as a
careful dealer does, with a gated shoe and with a shoe without a gate.

Before, an extra card held behind the locked gate deadlocked the table after a few coups
(the dealer's confirm queued behind it), and without a gate every later card became an
extra card, because the refused confirm was never pressed again.

Races that stalled it in some runs (most under load, where the follower reads the table
hundreds of milliseconds late), each closed in the product:
- the display's stream does not carry an alarm's text, and the follower pressed confirm again
  only for a `confirm_refused` whose text named a misdeal: it now keeps the open misdeals from
  the `misdeal` and `misdeal.corrected` events and confirms once none is open;
- the shoe dealt before the follower had looked at the table, and took the shoe out while the
  last coup still waited for its corrected confirm: it now deals once the follower has the
  snapshot, and comes out once the table has published `shoe.finished`;
- the shoe's own confirm, sent before the follower saw a void, confirmed the void, and the
  follower's confirm then closed the next coup: a confirm now names its coup (`coup`);
- without a gate, the next coup's cards went out while the table still refused the coup's
  confirm (each became an extra card): after a confirm the shoe now waits for the table's answer.
"""

from __future__ import annotations

import pytest

from harness.processes import Daemon, Simulator
from harness.records import journal_events
from tests.test_misdeal_endings import ended


def dealer_keys(base, role: str = "dealer"):
    from shoed.net.curve import create_key_pair, with_role

    keys = base / "keys"
    (keys / "clients").mkdir(parents=True)
    create_key_pair(keys, "server")
    public, secret, _ = create_key_pair(base / "dealer", "dealer")
    (keys / "clients" / "dealer.key").write_text(with_role(public.read_text(), role))
    return ["--key", str(secret), "--server-key", str(keys / "server.key")]


@pytest.mark.parametrize("gate", ["locked", "none"])
def test_every_dealing_fault_ends_in_a_balanced_close_unattended(base, gate):
    (base / "dealer").mkdir()
    follow = ["--follow", f"ipc://{base}/events,ipc://{base}/snapshot,ipc://{base}/commands", *dealer_keys(base)]
    faults = ["--extra-card", "0.3", "--unreadable", "0.03", "--missing-card", "0.2", "--foreign-card", "0.004",
              "--gate", gate]
    with (Simulator(base, *faults, *follow, seed=12, pace=0.08) as sim,
          Daemon(base, "--source", sim.source, "--stall-after", "5") as daemon):
        assert sim.wait_done(120) == 0, f"the table stopped: {sim.summary}"
        assert daemon.stop() == 0
    events = journal_events(base / "journal")
    closed = [e["reconciliation"] for e in events if e["kind"] == "shoe.closed"]
    rec = closed[0]
    assert len(closed) == 1 and rec["unaccounted"] == 0 and sum(rec["categories"].values()) == rec["capacity"]
    # Balanced unless a card from another deck came in: that one is for surveillance (`excess`).
    assert rec["balanced"] is (not rec["excess"]), rec
    misdeals = [e["misdeal"] for e in events if e["kind"] == "misdeal"]
    kinds = {m["kind"] for m in misdeals}
    assert {"missing_card", "unreadable_card"} <= kinds
    if gate == "none":
        assert "extra_card" in kinds
    assert sorted(ended(events)) == sorted(m["id"] for m in misdeals)
    results = [e for e in events if e["kind"] == "coup.result"]
    assert len(results) >= 40
    assert not [e for e in events if e["kind"] == "alarm" and e["alarm"] == "stalled"]
