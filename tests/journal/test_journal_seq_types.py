"""Every event the table journals has its seq, a non-negative int: `verify` holds each event's seq
to follow the one before it, so an event without one, or with a seq of another type, is a fault,
never an event left out of the check (a journal sealed again around such an event verified, and
`shoed report` wrote its seq into a page as it was)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import msgspec
import pytest

from shoed.journal import verify

CORPUS = Path(__file__).parents[1] / "corpus" / "journals" / "punto-banco"
canonical = msgspec.json.Encoder(order="sorted").encode


def resealed_with(tmp_path: Path, extra: dict) -> Path:
    """The corpus journal, `extra` put before the last file's first shoe.burn, the chain sealed again."""
    dest = tmp_path / "journal"
    dest.mkdir()
    files = sorted(CORPUS.glob("*.jsonl"))
    prev, done = "0" * 64, False
    for path in files:
        out = []
        for line in path.read_bytes().splitlines():
            rec = msgspec.json.decode(line)
            rec.pop("hash")
            rec["prev"] = prev
            if path == files[-1] and not done and rec.get("kind") == "step" and any(
                    e.get("kind") == "shoe.burn" for e in rec["events"]):
                first = rec["events"][0]
                rec["events"].insert(0, {k: first[k] for k in ("table", "shoe", "coup", "mono_ns", "utc")} | extra)
                done = True
            rec["hash"] = prev = hashlib.sha256(canonical(rec)).hexdigest()
            out.append(canonical(rec))
        (dest / path.name).write_bytes(b"\n".join(out) + b"\n")
    assert done
    return dest


@pytest.mark.parametrize("seq", ["<script>alert(1)</script>", None, -1, True, 1.5, [1], {"n": 1}])
def test_an_event_whose_seq_is_not_a_non_negative_int_is_a_fault(tmp_path, seq):
    extra = {"kind": "table.note"} | ({} if seq is None else {"seq": seq})
    report = verify(resealed_with(tmp_path, extra))
    assert not report.ok and "not a non-negative int" in report.first_bad.reason, report.first_bad
    assert "<script>" not in report.first_bad.reason  # the fault names the type, not the text


def test_the_corpus_journal_sealed_again_as_it_was_verifies(tmp_path):
    dest = tmp_path / "journal"
    dest.mkdir()
    prev = "0" * 64
    for path in sorted(CORPUS.glob("*.jsonl")):
        out = []
        for line in path.read_bytes().splitlines():
            rec = msgspec.json.decode(line)
            rec.pop("hash")
            rec["prev"] = prev
            rec["hash"] = prev = hashlib.sha256(canonical(rec)).hexdigest()
            out.append(canonical(rec))
        (dest / path.name).write_bytes(b"\n".join(out) + b"\n")
    assert verify(dest).ok
