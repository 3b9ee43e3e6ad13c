"""The Clone pattern's bookkeeping: what a subscriber does with each sequence number.

A subscriber that has applied everything up to `last` looks at each incoming
sequence number and decides: apply it, drop it (already seen), or fetch the
missing range first. A heartbeat repeats the publisher's last seq, so a gap at
the tail (the last events lost, nothing after them) is found within one
heartbeat; a heartbeat *below* `last` means the table's sequence went back
(a new journal) and only a fresh snapshot can say where things stand.

Pure functions: the client in `shoed.net.client` does the I/O.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

Action = Literal["apply", "drop", "fill", "reset", "none"]


@dataclass(frozen=True, slots=True)
class Verdict:
    action: Action
    # For "fill": the inclusive seq range to fetch before going on.
    first: int | None = None
    last: int | None = None


APPLY = Verdict("apply")
DROP = Verdict("drop")
RESET = Verdict("reset")
NONE = Verdict("none")


def judge_event(last: int, seq: int) -> Verdict:
    """An event `seq` arrives after everything up to `last` was applied."""
    if seq <= last:
        return DROP
    if seq == last + 1:
        return APPLY
    return Verdict("fill", last + 1, seq - 1)


def judge_heartbeat(last: int, seq: int | None) -> Verdict:
    """A heartbeat saying the publisher's last published event is `seq`."""
    if seq is None or seq == last:
        return NONE
    if seq > last:
        return Verdict("fill", last + 1, seq)
    return RESET


def judge_snapshot(last: int, seq: int) -> Verdict:
    """After a reconnect, a fresh snapshot ends at `seq`: fill up to it, or reset."""
    if seq == last:
        return NONE
    if seq > last:
        return Verdict("fill", last + 1, seq)
    return RESET


def covers(first: int, last: int, seqs: list[object]) -> bool:
    """Do the fetched events fill first..last exactly, in order, once each?"""
    return seqs == list(range(first, last + 1))


def windows(first: int, last: int, size: int) -> Iterator[tuple[int, int]]:
    """Split first..last into requests of at most `size` events, one at a time: a range a hostile
    heartbeat names (a seq of 10**12) costs the first request, which fails, not a list of them."""
    if size < 1:
        raise ValueError("window size must be at least 1")
    return ((a, min(a + size - 1, last)) for a in range(first, last + 1, size))
