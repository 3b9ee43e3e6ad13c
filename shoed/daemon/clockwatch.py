"""The daemon's watch on its own clocks: a stepped wall clock, a loop that was not run.

The table controller reads no clock; every input brings its time as data. So
when the wall clock steps (an operator's `date -s`, a bad NTP server, a dead
RTC battery after a power cut) event times jump with nothing to say why, and a
process that was frozen (SIGSTOP, a hypervisor pause, swap) leaves no trace.
`ClockWatch` is given both clocks once per turn of the daemon's loop and says
what it saw as `clock` inputs, which the daemon feeds to the controller like
any other input: journaled, published, replayed as recorded.

- A step: the wall clock moved against the monotonic clock by more than
  `step_limit` seconds between two turns (slewing NTP moves it by
  microseconds per turn and is never reported).
- A stall: two turns further apart than `stall_limit` seconds on the
  monotonic clock (half the systemd watchdog interval: the daemon was not
  scheduled for that long, and would have been killed at twice that).
"""

from __future__ import annotations

NS = 1_000_000_000
STEP_LIMIT = 1.0  # seconds of wall clock against the monotonic clock
STALL_LIMIT = 5.0  # seconds: half the unit's WatchdogSec=10s, when no watchdog is set


class ClockWatch:
    def __init__(self, step_limit: float = STEP_LIMIT, stall_limit: float = STALL_LIMIT) -> None:
        self.step_limit_ns = int(step_limit * NS)
        self.stall_limit_ns = int(stall_limit * NS)
        self._mono: int | None = None
        self._utc: int | None = None

    def check(self, mono_ns: int, utc_ns: int) -> list[dict]:
        """The `clock` inputs for what happened since the last call (none on the first)."""
        out: list[dict] = []
        if self._mono is not None and self._utc is not None:
            gap = mono_ns - self._mono
            if gap > self.stall_limit_ns:
                out.append({"kind": "clock", "what": "stall", "stalled_ns": gap, "limit_ns": self.stall_limit_ns})
            expected = self._utc + gap  # where the wall clock would be had it run with the monotonic one
            step = utc_ns - expected
            if abs(step) > self.step_limit_ns:
                out.append({"kind": "clock", "what": "step", "step_ns": step, "utc_before_ns": expected})
        self._mono, self._utc = mono_ns, utc_ns
        return out
