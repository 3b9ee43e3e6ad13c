"""Dealing faults at a dealer's pace through the real daemon and a gated shoe.

Macau statutory rules (docs/rules/macau-statutory-rules.txt) Art. X: a coup closed while a
card is still due is corrected by dealing the missing card. With a card gate
(firmware_protocol/SPEC.md §10) that card must be let through: a gate held
locked while the misdeal is pending would stop the table for good (found by
this test: at a dealer's pace the shoe waited for the gate, the table for the
card). The virtual shoe confirms one coup in three too early, for a whole shoe.
"""

from __future__ import annotations

from harness.processes import Daemon, Simulator
from harness.records import draw_order, journal_events, journal_inputs, truth_cards


def test_missing_card_is_dealt_through_the_gate_at_a_dealers_pace(base):
    with (Simulator(base, "--missing-card", "0.3", seed=5, pace=0.01) as sim,
          Daemon(base, "--source", sim.source) as daemon):
        assert sim.wait_done(60) == 0, f"the table stopped: {sim.summary}"
        assert daemon.stop() == 0
    truth = sim.truth()
    early = [t for t in truth if t.get("fault") == "missing_card"]
    events = journal_events(base / "journal")
    misdeals = [e["misdeal"] for e in events if e["kind"] == "misdeal"]
    assert len(early) >= 10 and [m["kind"] for m in misdeals] == ["missing_card"] * len(early)
    assert not [e for e in events if e["kind"] == "coup.void"], "each coup was put right, none voided"
    assert [i["card"] for i in journal_inputs(base / "journal") if i["kind"] == "card"] == truth_cards(truth)
    dealt = [c for e in events if e["kind"] == "coup.result" for c in draw_order(e)]
    assert dealt == truth_cards(truth, ("player", "banker"))
    assert [e["reconciliation"]["balanced"] for e in events if e["kind"] == "shoe.closed"] == [True]
