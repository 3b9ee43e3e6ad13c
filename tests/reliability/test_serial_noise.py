"""Noise on the serial line is coalesced (shoed.drivers.noise; docs/network.md: Serial noise).

10 kB of `01 00` (5,000 rejected stretches) arrive on the real pseudo-terminal
of a scripted native shoe, then a good card. Before, each stretch became a
journal record with its own fsync and a published warning (3.75 MB of journal;
the card behind them waited 3.3 s). Now the stretches are one record, with
their count and their bytes (bounded), and the card is taken right after.
"""

from __future__ import annotations

import time

from harness.records import journal_inputs
from tests.reliability.pty_shoe import button, card
from tests.reliability.test_command_endpoint import Table, table_msg

NOISE = b"\x01\x00" * 5000
KEPT_BYTES = 4096  # shoed.drivers.noise.KEPT_BYTES: the bytes of noise kept for the record


def test_ten_kilobytes_of_noise_are_one_record_and_the_card_behind_is_taken_at_once():
    table = Table()
    try:
        table.report(table_msg("shoe_inserted"))
        table.report(button("burn_start"))
        before = len(journal_inputs(table.daemon.journal))
        with table.shoe.lock:
            table.shoe.link.send(NOISE)
            table.shoe.link.flush()
        start = time.monotonic()
        table.report(card("AS", burn=True))
        took = time.monotonic() - start
        inputs = journal_inputs(table.daemon.journal)[before:]
        table.alive()
    finally:
        table.close()
    noise = [i for i in inputs if i["kind"] == "warning" and i.get("code") == "frame_rejected"]
    assert 1 <= len(noise) <= 2, f"{len(noise)} records for one stretch of noise"
    assert sum(i["detail"]["stretches"] for i in noise) == 5000
    assert sum(i["detail"]["length"] for i in noise) == len(NOISE)
    kept = bytes.fromhex(noise[0]["raw"])
    assert len(kept) == min(KEPT_BYTES, len(NOISE)) and kept == NOISE[:len(kept)], "the bytes are kept, bounded"
    assert [i["card"] for i in inputs if i["kind"] == "card"] == ["AS"]
    assert took < 1.0, f"the card behind the noise took {took:.3f} s (before: 3.3 s)"
