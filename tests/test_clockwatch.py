"""The daemon's watch on its clocks (shoed/daemon/clockwatch.py): steps of the wall clock against the
monotonic clock, and turns of the loop too far apart. The daemon end to end (SIGSTOP):
tests/reliability/test_stream_integrity.py."""

from __future__ import annotations

import pytest

from shoed.daemon.clockwatch import ClockWatch

S = 1_000_000_000
MONO, UTC = 5_000 * S, 1_790_000_000 * S
TURN = 5_000_000  # the loop's 5 ms


@pytest.mark.parametrize("step", [-3600 * S, 86_400 * S, -365 * 86_400 * S, 1_100_000_000, -1_100_000_000],
                         ids=["-1h", "+1d", "-1y", "+1.1s", "-1.1s"])
def test_a_wall_clock_step_of_more_than_a_second_is_reported_once(step):
    watch = ClockWatch()
    assert watch.check(MONO, UTC) == []
    assert watch.check(MONO + TURN, UTC + TURN) == []
    (seen,) = watch.check(MONO + 2 * TURN, UTC + 2 * TURN + step)
    assert seen == {"kind": "clock", "what": "step", "step_ns": step, "utc_before_ns": UTC + 2 * TURN}
    assert watch.check(MONO + 3 * TURN, UTC + 3 * TURN + step) == [], "the new time is the reference"


def test_slewing_is_never_a_step():
    """NTP slews at most 500 ppm: a day of it, a turn at a time, says nothing."""
    watch = ClockWatch()
    mono, utc = MONO, UTC
    for _ in range(20_000):
        assert watch.check(mono, utc) == []
        mono += TURN * 100
        utc += TURN * 100 + TURN * 100 * 500 // 1_000_000


def test_a_loop_not_run_for_longer_than_the_limit_is_a_stall():
    watch = ClockWatch(stall_limit=2.0)
    watch.check(MONO, UTC)
    assert watch.check(MONO + 2 * S, UTC + 2 * S) == []
    (seen,) = watch.check(MONO + 12 * S, UTC + 12 * S)  # SIGSTOP for 10 s: both clocks ran on
    assert seen == {"kind": "clock", "what": "stall", "stalled_ns": 10 * S, "limit_ns": 2 * S}
