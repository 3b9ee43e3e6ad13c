"""Per-key rate limits and summarised refusals (shoed.net.limits), on a clock given as data."""

from __future__ import annotations

import logging

from shoed.net.limits import RateLimiter, RefusalLog


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_key_gets_its_burst_then_its_rate_and_other_keys_are_not_affected():
    clock = Clock()
    limiter = RateLimiter(rate=10, burst=5, clock=clock)
    assert [limiter.allow("a") for _ in range(7)] == [True] * 5 + [False] * 2
    assert limiter.allow("b"), "another key has its own bucket"
    clock.now = 0.1  # one token back
    assert limiter.allow("a") and not limiter.allow("a")
    clock.now = 100.0
    assert sum(limiter.allow("a") for _ in range(10)) == 5, "never more than the burst"
    assert limiter.refused == 2 + 1 + 5


def test_the_keys_kept_are_bounded():
    limiter = RateLimiter(max_keys=3, clock=Clock())
    for key in range(100):
        limiter.allow(key)
    assert len(limiter._buckets) == 3


def test_refusals_are_one_line_per_interval(caplog):
    clock = Clock()
    refusals = RefusalLog(logging.getLogger("test.refusals"), "clients refused", interval=10, clock=clock)
    with caplog.at_level(logging.WARNING, logger="test.refusals"):
        for i in range(1000):
            clock.now = i * 0.01  # 1,000 refusals over 10 s
            refusals.refused("domain shoed", f"key{i}")
        clock.now = 10.5
        refusals.refused("domain shoed", "last")
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2 and refusals.total == 1001
    assert "clients refused: 1000 in the last 10 s (domain shoed 1000); last: last" == lines[1]
