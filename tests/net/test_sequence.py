"""The Clone pattern's sequencing verdicts (shoed.net.sequence).

ZeroMQ guide, Clone pattern; table-game-standards items 12, 16 and 17:
updates at or below what is known are dropped, a jump is a gap to fill from
the journal, never skipped silently.
"""

from __future__ import annotations

import pytest

from shoed.net import sequence as sq

# (last applied, incoming event seq, action, fill range)
EVENTS = [
    (10, 11, "apply", None),
    (10, 10, "drop", None),  # duplicate
    (10, 3, "drop", None),  # already in the snapshot
    (10, 12, "fill", (11, 11)),  # one lost
    (10, 500, "fill", (11, 499)),
    (0, 1, "apply", None),
]


@pytest.mark.parametrize(("last", "seq", "action", "missing"), EVENTS)
def test_judge_event(last, seq, action, missing):
    verdict = sq.judge_event(last, seq)
    assert verdict.action == action
    if missing:
        assert (verdict.first, verdict.last) == missing


# (last applied, heartbeat seq, action, fill range)
HEARTBEATS = [
    (10, 10, "none", None),  # all caught up
    (10, None, "none", None),  # publisher has published nothing yet
    (10, 12, "fill", (11, 12)),  # the tail was lost
    (10, 4, "reset", None),  # the table's sequence went back: new journal
]


@pytest.mark.parametrize(("last", "seq", "action", "missing"), HEARTBEATS)
def test_judge_heartbeat(last, seq, action, missing):
    verdict = sq.judge_heartbeat(last, seq)
    assert verdict.action == action
    if missing:
        assert (verdict.first, verdict.last) == missing


@pytest.mark.parametrize(("last", "seq", "action"), [(7, 7, "none"), (7, 9, "fill"), (7, 2, "reset")])
def test_judge_snapshot_after_reconnect(last, seq, action):
    assert sq.judge_snapshot(last, seq).action == action


@pytest.mark.parametrize(("first", "last", "seqs", "ok"), [
    (3, 5, [3, 4, 5], True),
    (3, 5, [3, 5], False),
    (3, 5, [3, 4, 4, 5], False),
    (3, 5, [4, 3, 5], False),
    (3, 5, [3, 4, 5, 6], False),
])
def test_covers(first, last, seqs, ok):
    assert sq.covers(first, last, seqs) is ok


def test_windows_split_a_range_into_requests():
    assert list(sq.windows(1, 10, 4)) == [(1, 4), (5, 8), (9, 10)]
    assert list(sq.windows(5, 5, 4)) == [(5, 5)]
    assert next(sq.windows(1, 10**12, 10_000)) == (1, 10_000)  # a hostile range costs nothing until asked
    with pytest.raises(ValueError):
        sq.windows(1, 2, 0)
