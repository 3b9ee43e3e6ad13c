"""Catch-up from the journal: a display that was away longer than the daemon's memory of events.

table-game-standards item 17 (late joiners) and the Clone pattern: a display
that missed events asks the snapshot endpoint for the range, and events older
than the daemon's in-memory window come from the journal. The daemon reads
only the files that hold the range (each file's checkpoint says the seq it
starts from) instead of the whole journal: on a journal of 1,000 shoes the
whole read took 8 s, during which the daemon's single loop acknowledged no
card (benchmarks/bench_latency.py; docs/test-labs.md).

Here a journal of three shoes is written as the daemon writes it, and every
range asked (inside a file, across file boundaries, at the very start and past
the end) must give exactly what a full scan of the journal gives.
"""

from __future__ import annotations

import pytest

from harness.processes import remove_dir, short_dir
from harness.records import journal_events, write_journal


@pytest.fixture(scope="module")
def journal():
    base = short_dir()
    write_journal(base / "journal", shoes=3, seed=5, odds=False)
    yield base / "journal"
    remove_dir(base)


def test_events_from_the_journal_match_a_full_scan(journal):
    from shoed.daemon.config import Config
    from shoed.daemon import Daemon

    daemon = Daemon(Config(journal_dir=str(journal), embedded_default=False))
    assert not daemon.recent  # nothing in memory: everything comes from the files
    everything = journal_events(journal)
    last = everything[-1]["seq"]
    starts = [e["seq"] for e in everything if e["kind"] == "shoe.opened"]
    ranges = [(1, 1), (1, 40), (1, last), (last - 5, last), (last - 5, last + 50), (last + 1, last + 9)]
    for s in starts:  # across each file boundary (a shoe's file starts right after shoe.opened)
        ranges += [(s - 3, s + 3), (s, s), (s + 1, s + 200)]
    for first, end in ranges:
        expected = [e for e in everything if first <= e["seq"] <= end]
        assert list(daemon.journal_events(first, end)) == expected, (first, end)
