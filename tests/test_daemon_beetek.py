"""A Bee-Tek shoe through the real daemon: a real pseudo-terminal, real files.

A Bee-Tek shoe sends no "shoe inserted": its first card opens the shoe (auto_confirm)
and is dealt in the same step. The shoe's journal file then starts with the table as it
was before that card, so the daemon deals on, and the journal verifies and replays.
"""

from __future__ import annotations

import json
import signal
import time

from harness.processes import Daemon, Simulator, run_shoed


def _records(journal) -> list[tuple[str, dict]]:
    out = []
    for path in sorted(journal.glob("*.jsonl")):
        out += [(path.name, json.loads(line)) for line in path.read_text().splitlines()]
    return out


def test_a_beetek_shoe_opened_by_its_first_card_is_dealt_journaled_and_replayed(base):
    with Simulator(base, "--protocol", "beetek", seed=5, pace=0.0) as sim:  # pace 0: it deals once the daemon reads
        d = Daemon(base, "--source", f"beetek:{sim.link}")
        try:
            assert sim.wait_done(30) == 0
            truth = [t["card"] for t in sim.truth() if t["kind"] == "card"]

            def dealt() -> list[str]:
                return [e["card"] for _, r in _records(d.journal) for e in r.get("events", ())
                        if e["kind"] in ("card", "shoe.burn")]

            deadline = time.monotonic() + 30
            while len(dealt()) < len(truth) and d.proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
            assert d.proc.poll() is None, f"the daemon stopped: {d.lines[-5:]}"
            assert dealt() == truth  # every card once, in order: the burn, then the coups
        finally:
            assert d.stop(signal.SIGTERM) == 0
    records = _records(d.journal)
    opened = [i for i, (_, r) in enumerate(records)
              if any(e["kind"] == "shoe.opened" for e in r.get("events", ()))]
    assert len(opened) == 1
    name, step = records[opened[0]]
    assert step["input"]["kind"] == "card"  # no shoe_inserted: the first card opened the shoe
    # Its file: the header, the table before the card (no shoe yet), then the card's step.
    head = [r["kind"] for n, r in records if n == name][:3]
    assert head == ["journal_file", "checkpoint", "step"]
    checkpoint = next(r for n, r in records if n == name and r["kind"] == "checkpoint")
    assert checkpoint["auto_confirm"] is True and checkpoint["state"]["shoe"] is None
    assert run_shoed("journal", "verify", str(d.journal)).returncode == 0
    for jobs in ("1", "2"):
        replay = run_shoed("replay", str(d.journal), "--jobs", jobs, "--json")
        assert replay.returncode == 0, replay.stdout + replay.stderr
        assert json.loads(replay.stdout)["identical"] is True
    # A restart rebuilds the table from that file and runs on.
    again = Daemon(base, "--source", f"beetek:{base / 'gone'}")
    ready = again.wait_for(lambda line: line.get("event") == "ready", 5, "ready")
    assert again.stop(signal.SIGTERM) == 0
    assert ready["seq"] > max(e["seq"] for _, r in records for e in r.get("events", ()))
    assert run_shoed("replay", str(d.journal)).returncode == 0
