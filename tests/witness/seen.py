"""A witness database as if the witness had received every record's head and every event of a journal
live (for the comparison tests and benchmarks/bench_witness.py)."""

from __future__ import annotations

import json
from pathlib import Path

from shoed.witness.store import Head, SeenEvent, SeenHead, WitnessStore


def saw_everything(journal: Path, url: str, table: str = "t1", utc: str = "2026-01-01T00:00:00.000Z") -> None:
    events, heads = [], []
    for path in sorted(journal.glob("*.jsonl")):
        number = int(path.name.split("-")[1])
        for line in path.read_text().splitlines():
            record = json.loads(line)
            head = Head(number, record["jseq"], record["hash"])
            heads.append(SeenHead(table, head, None, "event", utc))
            events += [SeenEvent(table, e["seq"], e["kind"], e, head, "live", utc) for e in record.get("events", [])]
    with WitnessStore(url) as store:
        store.record(events, heads)
