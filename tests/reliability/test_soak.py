"""Soak: the daemon and its virtual shoe deal shoe after shoe flat out.

`shoed run --sim-pace 0 --sim-shoes N` (the embedded virtual shoe, read
through the real native driver on a pty), with a display connected
throughout. After every shoe the daemon's resident memory (VmRSS) is sampled.
At the end:

- every shoe closed with a balanced reconciliation (each card accounted for as
  dealt, burned, discarded or left in the shoe);
- `seq` runs without a gap or repeat, in the journal and at the display;
- the journal verifies;
- memory does not grow: the slope of VmRSS per shoe is printed, and bounded
  once the daemon's in-memory catch-up window (5,000 events, about 8 shoes)
  is full.

CI deals 3 shoes (the memory check is then only a ceiling); SHOED_SOAK=1 deals
1,000 (about 10 minutes) and checks the slope over the second half.
"""

from __future__ import annotations

import time

import pytest

from harness.processes import Daemon
from harness.records import LONG, Display, iter_journal_events, verify_journal

SHOES = 1000 if LONG else 3


def slope(points: list[tuple[int, int]]) -> float:
    """Least-squares slope of (x, y)."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else 0.0


@pytest.mark.soak
@pytest.mark.timeout(3600 if LONG else 300)
def test_soak_shoe_after_shoe(base):
    rss: list[tuple[int, int]] = []  # (shoes closed, VmRSS kB)
    with Daemon(base, "--sim-pace", "0", "--sim-shoes", str(SHOES), "--sim-seed", "41") as daemon:
        display = Display(daemon)
        try:
            deadline = time.monotonic() + 90 * SHOES
            closed = 0
            while closed < SHOES:
                assert time.monotonic() < deadline, f"{closed} of {SHOES} shoes in the time allowed"
                for event in display.poll(0.2):
                    if event["kind"] == "shoe.closed":
                        closed += 1
                        rss.append((closed, daemon.rss_kb()[0]))
            hwm = daemon.rss_kb()[1]
            assert daemon.stop() == 0
        finally:
            display.close()
    closed_events = []
    expected_seq = 1
    for event in iter_journal_events(base / "journal"):  # streamed: 1,000 shoes are 400 MB
        assert event["seq"] == expected_seq, f"seq {event['seq']} where {expected_seq} was due"
        expected_seq += 1
        if event["kind"] == "shoe.closed":
            closed_events.append(event)
    assert len(closed_events) == SHOES
    assert all(e["reconciliation"]["balanced"] for e in closed_events)
    assert all(e["reconciliation"]["unaccounted"] == 0 for e in closed_events)
    got = [e["seq"] for e in display.events]
    assert got == list(range(got[0], got[0] + len(got))) and len(display.snapshots) == 1
    assert verify_journal(base / "journal")["exit"] == 0
    per_shoe = slope(rss) if len(rss) > 1 else 0.0
    print(f"\nsoak: {SHOES} shoes; VmRSS after shoe 1 {rss[0][1]} kB, after the last {rss[-1][1]} kB, "
          f"slope {per_shoe:.1f} kB/shoe, VmHWM {hwm} kB")
    assert hwm < 150_000, "resident memory stays modest"
    if LONG:
        late = rss[len(rss) // 2:]
        assert slope(late) < 5.0, f"memory grows by {slope(late):.1f} kB per shoe once the catch-up window is full"
