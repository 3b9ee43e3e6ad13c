"""Limits on what one network peer may cost the table: a rate per key, and counted refusals.

- `RateLimiter`: a token bucket per key (a client's CURVE key, or its address on
  an endpoint without keys): `rate` requests a second on average, `burst` at once.
  The number of keys kept is bounded; the stalest go first.
- `RefusalLog`: refusals (a CURVE handshake with a key not on the allow-list)
  counted and logged as one summary line per interval, never one line each:
  a flood of refused handshakes must not become a flood of log lines.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable

# A connection that has not finished ZeroMQ's handshake (greeting, CURVE) after this long is
# dropped: an idle TCP connection costs the daemon a descriptor for 5 s, not libzmq's 30.
HANDSHAKE_TIMEOUT = 5.0  # seconds

# What a client (a display, the witness, `shoed command`) takes from a table in one message. A
# table's events are under 2 KB and a reply (a snapshot, a slice of catch-up events) well under a
# megabyte: a peer that sends more is refused by libzmq, which drops the message and the
# connection, before it costs the client the memory.
MAX_EVENT_BYTES = 1 << 20
MAX_REPLY_BYTES = 16 << 20


class RateLimiter:
    def __init__(self, rate: float = 20.0, burst: float = 40.0, max_keys: int = 4096,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.burst, self.max_keys = rate, burst, max_keys
        self._clock = clock
        self._buckets: OrderedDict = OrderedDict()  # key -> (tokens, time)
        self.refused = 0

    def allow(self, key) -> bool:
        now = self._clock()
        tokens, then = self._buckets.pop(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - then) * self.rate)
        ok = tokens >= 1.0
        if ok:
            tokens -= 1.0
        else:
            self.refused += 1
        self._buckets[key] = (tokens, now)
        while len(self._buckets) > self.max_keys:
            self._buckets.popitem(last=False)
        return ok


class RefusalLog:
    """Count refusals by reason; log one summary line per `interval` seconds while they come."""

    def __init__(self, log: logging.Logger, what: str, interval: float = 10.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.log, self.what, self.interval = log, what, interval
        self._clock = clock
        self._lock = threading.Lock()
        self._counts: Counter = Counter()
        self._last: str | None = None
        self._since = clock()
        self.total = 0

    def refused(self, reason: str, detail: str | None = None) -> None:
        with self._lock:
            self._counts[reason] += 1
            self.total += 1
            self._last = detail
            now = self._clock()
            if now - self._since < self.interval and self.total > 1:
                return
            counts, last, self._counts, self._since = dict(self._counts), self._last, Counter(), now
        self.log.warning("%s: %d in the last %.0f s (%s); last: %s", self.what, sum(counts.values()),
                         self.interval, ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), last)
