"""A replay reads a step's line without parsing its events (shoed.journal.chain.check_step_line):
it must accept exactly the lines the full check accepts, and read the same record from them."""

from __future__ import annotations

from pathlib import Path

import pytest

from shoed.journal import chain as ch
from shoed.table.events import canonical

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "journals"
SECRET = b"table secret"


def corpus_file() -> bytes:
    """A shoe file of the corpus with misdeals (dealt, corrected, voided)."""
    files = sorted((CORPUS / "macau-faults").glob("*.jsonl"))
    return max((f.read_bytes() for f in files), key=len)


def resealed(data: bytes, secret: bytes) -> bytes:
    """The same records sealed again with an HMAC secret, as a keyed journal holds them."""
    out, prev = [], ch.GENESIS
    for number, line in enumerate(data.splitlines(), start=1):
        record = {k: v for k, v in ch._decoder.decode(line).items() if k not in ch.RESERVED}
        if number == 1:
            record["alg"] = ch.ALG_HMAC
        sealed, text = ch.seal(record, number, prev, secret)
        out.append(text)
        prev = sealed["hash"]
    return b"".join(out)


def verdicts(data: bytes, secret: bytes | None, steps: bool) -> list:
    """What reading the file says, record by record: the record as plain values, or the fault."""
    out = []
    for item in ch.chain(data, prev=None, secret=secret, steps=steps):
        if isinstance(item, ch.Bad):
            out.append(("bad", item.line, item.reason))
        elif isinstance(item, ch.StepLine):
            out.append(("step", item.jseq, item.hash, item.prev, item.input, ch._decoder.decode(item.events)))
        elif item.get("kind") == "step":
            out.append(("step", item["jseq"], item["hash"], item["prev"], item["input"], item["events"]))
        else:
            out.append(("record", item))
    return out


@pytest.mark.parametrize("secret", [None, SECRET], ids=["sha256", "hmac"])
def test_an_intact_file_reads_the_same_either_way(secret):
    data = corpus_file() if secret is None else resealed(corpus_file(), secret)
    fast = list(ch.chain(data, prev=None, secret=secret, steps=True))
    steps = [item for item in fast if isinstance(item, ch.StepLine)]
    assert len(steps) > 100 and not any(isinstance(item, ch.Bad) for item in fast)
    assert verdicts(data, secret, True) == verdicts(data, secret, False)
    for item in steps:  # the events' bytes are the canonical form of the recorded events
        assert bytes(item.events) == canonical(ch._decoder.decode(item.events))


@pytest.mark.parametrize("secret", [None, SECRET], ids=["sha256", "hmac"])
def test_a_changed_byte_is_found_wherever_it_is(secret):
    """Every byte of a few step lines changed in turn (the events, the hash member, the input,
    the links): the fast reading finds the same fault, at the same line, as the full check."""
    data = corpus_file() if secret is None else resealed(corpus_file(), secret)
    lines = data.split(b"\n")
    chosen = [n for n, line in enumerate(lines) if line.startswith(b'{"events":[{')][3:6]
    assert chosen
    tried = 0
    for n in chosen:
        start = sum(len(line) + 1 for line in lines[:n])
        for offset in range(0, len(lines[n]), 3):
            for new in (b"0", b" ", b"}"):
                if data[start + offset:start + offset + 1] == new:
                    continue
                changed = data[:start + offset] + new + data[start + offset + 1:]
                assert verdicts(changed, secret, True) == verdicts(changed, secret, False), (n, offset, new)
                tried += 1
    assert tried > 300


def test_a_hash_member_inside_the_input_does_not_fool_the_cut():
    """A line whose input holds a `hash` member of its own: the cut is made where the parse puts the
    record's member (right after the events), so the line proves, as the full check says."""
    data = corpus_file()
    first = data.split(b"\n")[:2]
    header = ch._decoder.decode(first[0])
    record = {"kind": "step", "input": {"hash": "0" * 64, "kind": "warning"}, "events": []}
    sealed, text = ch.seal(record, 2, header["hash"], None)
    body = first[0] + b"\n" + text
    assert verdicts(body, None, True) == verdicts(body, None, False)
    assert isinstance(list(ch.chain(body, prev=None, secret=None, steps=True))[1], ch.StepLine)
